import Foundation
import HeraldCore

// herald-cleanup [--config PATH]: consumes the cleanup queue until SIGTERM/SIGINT and works
// the cleanup runs it receives (see CleanupHandler).
let code = await WorkerApp.main(kind: .cleanup, configPath: WorkerArguments.configPath()) { configuration, _ in
    CleanupHandler(configuration: configuration)
}
exit(code.rawValue)
