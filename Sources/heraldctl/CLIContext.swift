import AMQP
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldWorkers
import Logging
import PostgresNIO

/// The configuration and connections a subcommand needs, opened on demand and closed after.
struct CLIContext {
    let configuration: HeraldConfiguration
    let source: ConfigSource
    let logger: Logger
    var topology: HeraldTopology { HeraldTopology(configuration.amqp, configuration.runner) }

    static func load(_ options: GlobalOptions) throws -> CLIContext {
        do {
            let (configuration, source) = try HeraldConfiguration.loadAll(path: options.config)
            var logger = Logger(label: "heraldctl")
            logger.logLevel = .error
            return CLIContext(configuration: configuration, source: source, logger: logger)
        } catch {
            throw CLIExit.fail("\(error)", code: .configuration)
        }
    }

    /// Runs `body` with a running PostgresClient.
    func withDatabase<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = try Database.makeClient(configuration.database, logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await client.run(); return nil }
            defer { group.cancelAll() }
            do {
                let result = try await body(client)
                return result
            } catch {
                if DatabaseAvailability.isUnavailable(error) {
                    throw CLIExit.fail("database unreachable (\(configuration.database.url.redactingPassword))", code: .unavailable)
                }
                throw error
            }
        }
    }

    /// Runs `body` with a connected AMQP connection.
    func withBroker<T: Sendable>(_ body: @Sendable (AMQPConnection) async throws -> T) async throws -> T {
        let connection = AMQPConnection(configuration: try configuration.amqp.connectionConfiguration(name: "heraldctl"), logger: logger)
        connection.start()
        do {
            try await connection.waitUntilConnected(timeout: .seconds(10))
        } catch {
            await connection.close()
            throw CLIExit.fail("broker unreachable (\(error))", code: .unavailable)
        }
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }
}

extension String {
    /// `scheme://user:secret@host` → `scheme://user:***@host`, for every URL of a list
    /// (`amqp.url`'s nodes) and whatever the host part holds (`database.url`'s several hosts).
    var redactingPassword: String {
        replacing(/(?<head>[A-Za-z][A-Za-z0-9+.-]*:\/\/[^:\/@,]*):(?:(?!,[A-Za-z][A-Za-z0-9+.-]*:\/\/).)*@/) { "\($0.output.head):***@" }
    }
}
