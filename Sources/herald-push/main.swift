import Foundation
import HeraldCore

// herald-push [--config PATH]: consumes the push queue until SIGTERM/SIGINT.
let code = await WorkerApp.main(kind: .push, configPath: WorkerArguments.configPath()) { configuration, _ in
    try PushHandler(configuration: configuration)
}
exit(code.rawValue)
