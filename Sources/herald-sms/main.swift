import Foundation
import HeraldRuntime
import HeraldSMS

// herald-sms [--config PATH]: consumes the sms queue until SIGTERM/SIGINT.
Bootstrap.concurrencyOnEventLoops()
let code = await WorkerApp.main(SMSChannel.self, configPath: WorkerArguments.configPath())
exit(code.rawValue)
