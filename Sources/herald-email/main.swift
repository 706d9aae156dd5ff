import Foundation
import HeraldRuntime
import HeraldEmail

// herald-email [--config PATH]: consumes the email queue until SIGTERM/SIGINT.
Bootstrap.concurrencyOnEventLoops()
let code = await WorkerApp.main(EmailWorker.self, configPath: WorkerArguments.configPath())
exit(code.rawValue)
