import Foundation
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
import Testing

/// Relative template directories are found from any working directory: against the
/// configuration file's directory, or the working directory for an environment override.
@Suite struct ConfigPathTests {
    /// A configuration file `dir/conf/herald.yaml` with `text`, removed afterwards.
    private func withFile(_ text: String, _ body: (String, String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-config-\(UUID().uuidString)")
        let conf = directory.appendingPathComponent("conf")
        try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = conf.appendingPathComponent("herald.yaml").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        try body(file, conf.standardizedFileURL.path)
    }

    @Test func aRelativePathInTheFileIsRelativeToTheFilesDirectory() throws {
        try withFile("sms:\n  templates_dir: texts/sms\nemail:\n  templates_dir: ../mail\n") { file, conf in
            let source = try ConfigSource(path: file, environment: [:])
            #expect(try SMSConfiguration(source: source).templatesDirectory == conf + "/texts/sms")
            let parent = URL(fileURLWithPath: conf).deletingLastPathComponent().path
            #expect(try EmailConfiguration(source: source).templatesDirectory == parent + "/mail")
        }
    }

    @Test func theDefaultIsBesideTheFile() throws {
        try withFile("log:\n  level: info\n") { file, conf in
            let source = try ConfigSource(path: file, environment: [:])
            #expect(try SMSConfiguration(source: source).templatesDirectory == conf + "/templates/sms")
            #expect(try EmailConfiguration(source: source).templatesDirectory == conf + "/templates/email")
        }
    }

    @Test func absolutePathsStayAndTheEnvironmentIsRelativeToTheWorkingDirectory() throws {
        try withFile("sms:\n  templates_dir: /srv/texts/sms\n") { file, _ in
            #expect(try SMSConfiguration(source: ConfigSource(path: file, environment: [:])).templatesDirectory == "/srv/texts/sms")
            let overridden = try ConfigSource(path: file, environment: ["HERALD_SMS_TEMPLATES_DIR": "local/sms"])
            let cwd = FileManager.default.currentDirectoryPath
            #expect(try SMSConfiguration(source: overridden).templatesDirectory == URL(fileURLWithPath: cwd).appendingPathComponent("local/sms").standardizedFileURL.path)
        }
    }

    @Test func withoutAFileTheDefaultIsUnderConfigInTheWorkingDirectory() throws {
        let source = ConfigSource(values: [:])
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        #expect(try SMSConfiguration(source: source).templatesDirectory == cwd.appendingPathComponent("Config/templates/sms").standardizedFileURL.path)
    }

    /// The shipped file, loaded by its absolute path: its templates load, whatever the
    /// working directory (the path no longer depends on it).
    @Test func theShippedFilesTemplatesLoadByTheFilesPath() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let source = try ConfigSource(path: root.appendingPathComponent("Config/herald.yaml").path, environment: [:])
        let sms = try SMSConfiguration(source: source)
        #expect(sms.templatesDirectory == root.appendingPathComponent("Config/templates/sms").standardizedFileURL.path)
        _ = try SMSTemplates.load(directory: sms.templatesDirectory, appName: "Herald", webOTPOrigin: "")
        let email = try EmailConfiguration(source: source)
        _ = try EmailTemplates.load(directory: email.templatesDirectory, appName: "Herald")
    }
}
