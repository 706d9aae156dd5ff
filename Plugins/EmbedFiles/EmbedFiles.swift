import Foundation
import PackagePlugin

/// Embeds files of a module in the module as text, so each executable carries them without a
/// resource bundle beside it: its `SQL/` folder (migrations, functions) as `EmbeddedSQL.files`,
/// its `Documents/` folder (herald-api's OpenAPI document) as `EmbeddedDocuments.files`. The files
/// stay files a person opens and a linter or a client generator reads.
@main
struct EmbedFiles: BuildToolPlugin {
    /// Each folder the plugin embeds, and the enum that holds its files.
    static let folders: [(folder: String, enumName: String, fileExtension: String?)] = [("SQL", "EmbeddedSQL", "sql"), ("Documents", "EmbeddedDocuments", nil)]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "embed-files").url
        // The module's own Swift dependencies: a statement's `as T` may name a type of one.
        let imports = module.dependencies.compactMap { dependency -> String? in
            guard case .target(let target) = dependency, target is SwiftSourceModuleTarget else { return nil }
            return target.name
        }
        return Self.folders.compactMap { folder, enumName, fileExtension in
            let root = module.directoryURL.appending(path: folder).standardizedFileURL.path(percentEncoded: false)
            let prefix = root.hasSuffix("/") ? root : root + "/"
            let files = module.sourceFiles
                .map { $0.url.standardizedFileURL }
                .filter { $0.path(percentEncoded: false).hasPrefix(prefix) && (fileExtension.map { [$0] } ?? [$0.pathExtension]).contains($0.pathExtension) }
                .sorted { $0.path(percentEncoded: false) < $1.path(percentEncoded: false) }
            guard !files.isEmpty else { return nil }
            let output = context.pluginWorkDirectoryURL.appending(path: "\(enumName).swift")
            return .buildCommand(
                displayName: "Embedding \(files.count) files of \(module.name)/\(folder)",
                executable: tool,
                arguments: [enumName, root, output.path(percentEncoded: false), imports.joined(separator: ",")] + files.map { $0.path(percentEncoded: false) },
                inputFiles: files,
                outputFiles: [output])
        }
    }
}
