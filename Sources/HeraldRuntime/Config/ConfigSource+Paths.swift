import Foundation

extension ConfigSource {
    /// Where relative paths of the file (and defaults) are resolved: the configuration
    /// file's directory, or without a file `Config` under the working directory (where
    /// `Config/herald.yaml` would have been found).
    public var configurationDirectory: String {
        fileDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Config").path
    }

    /// A path-valued key, made absolute so a worker finds it wherever it was started: a
    /// relative path from the environment (`HERALD_…`) against the working directory, as a
    /// shell would; from the file, or `default` (relative to the configuration directory),
    /// against ``configurationDirectory``. An empty value stays empty.
    public func path(_ key: String, default value: String) throws -> String {
        let text = try string(key, default: value)
        guard !text.isEmpty else { return text }
        let name = Self.environmentName(for: key)
        let fromEnvironment = environment[name] != nil || environment[name + "_FILE"] != nil
        let base = fromEnvironment ? FileManager.default.currentDirectoryPath : configurationDirectory
        return Self.resolve(text, against: base)
    }

    /// `path` if absolute, else `base/path`, with `.` and `..` folded.
    static func resolve(_ path: String, against base: String) -> String {
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: base).appendingPathComponent(path)
        return url.standardizedFileURL.path
    }
}
