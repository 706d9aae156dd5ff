import Foundation
import HeraldPhone
import HeraldRuntime

// herald-sms [--config PATH]: consumes the sms queue until SIGTERM/SIGINT.
Bootstrap.concurrencyOnEventLoops()
let code = await WorkerApp.main(PhoneWorker.self, configPath: WorkerArguments.configPath())
exit(code.rawValue)
