import Foundation
import HeraldCore

// herald-email [--config PATH]: consumes the email queue until SIGTERM/SIGINT.
let code = await WorkerApp.main(kind: .email, configPath: WorkerArguments.configPath()) { configuration, _ in
    try EmailHandler(configuration: configuration)
}
exit(code.rawValue)
