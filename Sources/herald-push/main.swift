import Foundation
import HeraldRuntime
import HeraldPush

// herald-push [--config PATH]: consumes the push queue until SIGTERM/SIGINT.
Bootstrap.concurrencyOnEventLoops()
let code = await WorkerApp.main(PushWorker.self, configPath: WorkerArguments.configPath())
exit(code.rawValue)
