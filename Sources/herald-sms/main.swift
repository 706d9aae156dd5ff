import Foundation
import HeraldCore

// herald-sms [--config PATH]: consumes the sms queue until SIGTERM/SIGINT.
let code = await WorkerApp.main(kind: .sms, configPath: WorkerArguments.configPath()) { configuration, _ in
    try SMSHandler(configuration: configuration)
}
exit(code.rawValue)
