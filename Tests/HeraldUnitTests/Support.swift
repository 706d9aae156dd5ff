import HeraldClient
import HeraldRuntime
import HeraldWorkers

extension HeraldConfiguration {
    /// Every section, the platform's and every channel's, as `heraldctl config check` reads them.
    init(every source: ConfigSource) throws {
        try self.init(source: source, sections: HeraldFleet.sections)
    }
}
