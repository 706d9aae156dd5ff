import Foundation
import PackagePlugin

/// Embeds a module's `SQL/` folder (migrations, functions) in the module as text, so each
/// executable carries its schema without a resource bundle beside it. The files stay `.sql`
/// files a person opens in psql and a linter reads; Swift sees them as `EmbeddedSQL.files`.
@main
struct EmbedSQL: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let root = module.directoryURL.appending(path: "SQL").standardizedFileURL.path(percentEncoded: false)
        let files = module.sourceFiles
            .map { $0.url.standardizedFileURL }
            .filter { $0.pathExtension == "sql" && $0.path(percentEncoded: false).hasPrefix(root.hasSuffix("/") ? root : root + "/") }
            .sorted { $0.path(percentEncoded: false) < $1.path(percentEncoded: false) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSQL.swift")
        return [.buildCommand(
            displayName: "Embedding \(files.count) SQL files of \(module.name)",
            executable: try context.tool(named: "embed-sql").url,
            arguments: [root, output.path(percentEncoded: false)] + files.map { $0.path(percentEncoded: false) },
            inputFiles: files,
            outputFiles: [output])]
    }
}
