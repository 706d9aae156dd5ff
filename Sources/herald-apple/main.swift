import Foundation
import HeraldApple
import HeraldRuntime

// herald-apple [--config PATH]: consumes the apple queue until SIGTERM/SIGINT.
Bootstrap.concurrencyOnEventLoops()
let code = await WorkerApp.main(AppleWorker.self, configPath: WorkerArguments.configPath())
exit(code.rawValue)
