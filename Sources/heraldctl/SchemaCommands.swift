import AMQP
import ArgumentParser
import Foundation
import HeraldApple
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

struct Topology: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Broker topology.", subcommands: [Declare.self, Show.self, Export.self])

    struct Declare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Declare Herald's exchanges, queues and bindings (idempotent).")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let context = try CLIContext.load(options)
            let topology = context.topology.all
            do {
                try await context.withBroker { try await $0.declare(topology) }
            } catch let error as AMQPError {
                throw CLIExit.fail("declare failed: \(error) (a queue declared before with other arguments must be deleted or migrated by hand)")
            }
            if options.output == .json {
                printJSON(["exchanges": topology.exchanges.count, "queues": topology.queues.count, "bindings": topology.bindings.count])
            } else {
                print("declared \(topology.exchanges.count) exchanges, \(topology.queues.count) queues, \(topology.bindings.count) bindings in namespace '\(context.configuration.amqp.namespace)'")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the topology heraldctl would declare.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let context = try CLIContext.load(options)
            if options.output == .json {
                let amqp = context.configuration.amqp
                printJSON(Export.definitions(context.topology, namespace: amqp.namespace, deliveryLimit: amqp.deliveryLimit, vhost: "/"))
                return
            }
            let topology = context.topology.all
            for exchange in topology.exchanges { print("exchange \(exchange.name) (\(exchange.type))") }
            for queue in topology.queues {
                print("queue \(queue.name) \(queue.arguments.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
            }
            for binding in topology.bindings { print("binding \(binding.exchange) --\(binding.routingKey)--> \(binding.queue)") }
        }
    }
}

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "Configuration.", subcommands: [Check.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Load and validate the configuration; print the effective values, secrets masked.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let context = try CLIContext.load(options)
            let unknown = context.source.unknownKeys()
            let c = context.configuration
            var values: [String: Any] = [
                "amqp.url": c.amqp.url.redactingPassword, "amqp.namespace": c.amqp.namespace,
                "amqp.prefetch": c.amqp.prefetch, "amqp.queue_type": c.amqp.queueType.rawValue,
                "amqp.heartbeat_seconds": c.amqp.heartbeatSeconds, "amqp.delivery_limit": c.amqp.deliveryLimit,
                "amqp.confirm_window": c.amqp.confirmWindow, "amqp.tls.ca_file": c.amqp.tlsCAFile,
                "amqp.tls.verify_peer": c.amqp.tlsVerifyPeer, "amqp.tls.cert_file": c.amqp.tlsCertFile,
                "amqp.tls.key_file": c.amqp.tlsKeyFile, "database.tls": c.database.tls.rawValue,
                "database.tls_ca_file": c.database.tlsCAFile,
                "database.connect_timeout_seconds": c.database.connectTimeoutSeconds,
                "database.operation_timeout_seconds": c.database.operationTimeoutSeconds, "http.enabled": c.http.enabled,
                "database.url": c.database.url.redactingPassword, "database.max_connections": c.database.maxConnections,
                "database.idle_timeout_seconds": c.database.idleTimeoutSeconds, "database.keep_alive_seconds": c.database.keepAliveSeconds,
                "runner.max_attempts": c.runner.maxAttempts, "runner.retry_delays_ms": c.runner.retryDelaysMilliseconds,
                "runner.max_message_bytes": c.runner.maxMessageBytes, "runner.drain_timeout_seconds": c.runner.drainTimeoutSeconds,
                "runner.lease_seconds": c.runner.leaseSeconds, "runner.outcome_batch_size": c.runner.outcomeBatchSize,
                "http.host": c.http.host, "http.port": c.http.port, "log.level": c.log.level.rawValue,
                "log.format": c.log.format.rawValue, "outbox.delay_ms": c.outbox.delayMilliseconds,
                "outbox.directory": c.outbox.directory,
            ].merging(Self.smsValues(c)) { a, _ in a }
            values.merge(c.cleanup.effectiveValues) { current, _ in current }
            values.merge(c.push.effectiveValues) { current, _ in current }
            values.merge(c.email.effectiveValues) { current, _ in current }
            values.merge(c.apple.effectiveValues) { current, _ in current }
            values.merge(c.api.effectiveValues) { current, _ in current }
            // The fraud guard and app verification before SMS (docs/abuse.md), secrets masked.
            values.merge(c.sms.fraudGuard.effectiveValues) { current, _ in current }
            values.merge(c.sms.appVerification.effectiveValues) { current, _ in current }
            // What herald-sms would refuse to start with.
            do {
                _ = try c.secrets.keyRing()
                _ = try SMSTemplates.load(c.sms)
                // What herald-push would refuse to start with: keys that do not parse.
                try c.push.checkCredentials()
                // And what herald-email would refuse to start with.
                _ = try EmailTemplates.load(directory: c.email.templatesDirectory, appName: c.email.appName)
            } catch {
                throw CLIExit.fail("\(error)", code: .configuration)
            }
            if options.output == .json {
                printJSON(["values": values, "unknown_keys": unknown])
            } else {
                for (key, value) in values.sorted(by: { $0.key < $1.key }) { print("\(key) = \(value)") }
            }
            if !unknown.isEmpty {
                throw CLIExit.fail("unknown keys: \(unknown.joined(separator: ", "))", code: .configuration)
            }
        }

        /// `secrets.*` and `sms.*`, every secret masked (set or not, never its value).
        static func smsValues(_ c: HeraldConfiguration) -> [String: Any] {
            func mask(_ value: String) -> String { value.isEmpty ? "" : "***" }
            let s = c.sms
            var values: [String: Any] = [
                "secrets.hmac_keys": (try? c.secrets.keyRing()).map { "*** (active key \($0.activeKeyID))" } ?? mask(c.secrets.hmacKeys),
                "secrets.hmac_active_key": c.secrets.activeKeyID,
                "sms.app_name": s.appName, "sms.code_length": s.codeLength, "sms.code_ttl_seconds": s.codeTTLSeconds,
                "sms.max_attempts": s.maxAttempts, "sms.resend_interval_seconds": s.resendIntervalSeconds,
                "sms.templates_dir": s.templatesDirectory, "sms.webotp_origin": s.webOTPOrigin,
                "sms.android_app_hashes": s.androidAppHashes, "sms.max_segments": s.maxSegments,
                "sms.regions.registration": s.registrations.mapValues { r in
                    ["sender": r.sender ?? "", "entity_id": r.entityID ?? "", "templates": r.templates] as [String: Any]
                },
                "sms.test_numbers": s.testNumbers.keys.sorted().map { "\(Redact.phone($0)):***" },
                "sms.limits.prefix.drop_digits": s.prefixDropDigits,
                "sms.providers": s.providers.map(\.rawValue), "sms.provider_timeout_ms": s.providerTimeoutMilliseconds,
                "sms.twilio.base_url": s.twilio.baseURL, "sms.twilio.account_sid": s.twilio.accountSID,
                "sms.twilio.auth_token": mask(s.twilio.authToken), "sms.twilio.from": s.twilio.from,
                "sms.twilio.messaging_service_sid": s.twilio.messagingServiceSID,
                "sms.kannel.url": s.kannel.url, "sms.kannel.username": s.kannel.username,
                "sms.kannel.password": mask(s.kannel.password), "sms.kannel.from": s.kannel.from,
                "sms.webhook.url": s.webhook.url, "sms.webhook.secret": mask(s.webhook.secret),
                "sms.allow_insecure_transport": s.allowInsecureTransport,
            ]
            // Region, number-type and per-region cap policy, with what it means (docs/abuse.md).
            values.merge(s.numberPolicyValues) { current, _ in current }
            values.merge(s.guessingAndIPValues) { current, _ in current }
            values.merge(s.receipts.effectiveValues) { current, _ in current }
            // The other channels and the fallback between them (docs/whatsapp.md, docs/voice.md, docs/fallback.md).
            for channelValues in [s.whatsapp.effectiveValues, s.voice.effectiveValues, s.fallback.effectiveValues] {
                values.merge(channelValues) { current, _ in current }
            }
            for (name, limit) in [("phone", s.phoneLimit), ("prefix", s.prefixLimit), ("ip", s.ipLimit), ("global", s.globalLimit), ("resend", s.resendLimit)] {
                values["sms.limits.\(name).max"] = limit.max
                values["sms.limits.\(name).window_seconds"] = limit.windowSeconds
            }
            return values
        }
    }
}
