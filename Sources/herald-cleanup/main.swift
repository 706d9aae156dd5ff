import Foundation
import HeraldCore

// herald-cleanup [--config PATH]: consumes the cleanup queue until SIGTERM/SIGINT.
let code = await WorkerApp.main(kind: .cleanup, configPath: WorkerArguments.configPath()) { configuration, _ in
    DevOutboxHandler<CleanupRunJob>(configuration: configuration.outbox)
}
exit(code.rawValue)
