import Foundation
import HeraldAPI
import HeraldRuntime

// herald-api [--config PATH]: serves Herald's HTTP API (/v1) and Twilio Verify v2's until SIGTERM/SIGINT.
Bootstrap.concurrencyOnEventLoops()
let code = await APIApp.main(configPath: WorkerArguments.configPath())
exit(code.rawValue)
