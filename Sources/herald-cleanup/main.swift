import Foundation
import HeraldRuntime
import HeraldCleanup

// herald-cleanup [--config PATH]: consumes the cleanup queue until SIGTERM/SIGINT.
Bootstrap.concurrencyOnEventLoops()
let code = await WorkerApp.main(CleanupWorker.self, configPath: WorkerArguments.configPath())
exit(code.rawValue)
