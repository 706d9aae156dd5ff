// swift-tools-version:6.2
import PackageDescription

/// Herald's own targets: Swift 6, and a warning is an error (the project's sources build without
/// one). SwiftPM ignores warning settings of a package built as another's dependency (SE-0480).
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .treatAllWarnings(as: .error)]

/// What a check module may use besides HeraldRuntime and HeraldWire: its store and metrics.
let checkLibraries: [Target.Dependency] = [
    .product(name: "Logging", package: "swift-log"),
    .product(name: "Metrics", package: "swift-metrics"),
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "PostgresNIO", package: "postgres-nio"),
]
/// What a worker module may use besides HeraldRuntime: the libraries its providers and store speak.
let workerLibraries: [Target.Dependency] = [
    .product(name: "Logging", package: "swift-log"),
    .product(name: "Metrics", package: "swift-metrics"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOHTTP1", package: "swift-nio"),
    .product(name: "NIOSSL", package: "swift-nio-ssl"),
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "PostgresNIO", package: "postgres-nio"),
    .product(name: "AsyncHTTPClient", package: "async-http-client"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "Yams", package: "Yams"),
]
/// What herald-api and HeraldClient link of the workers' code: the wire and each worker kind's check module.
let checks: [Target.Dependency] = ["HeraldWire", "HeraldPhoneCheck", "HeraldEmailCheck", "HeraldPushCheck", "HeraldAppleCheck"]
/// What the tools and tests that work across every worker link (never herald-api).
let workers: [Target.Dependency] = ["HeraldWorkers", "HeraldPhone", "HeraldEmail", "HeraldPush", "HeraldCleanup", "HeraldApple"] + checks

let package = Package(
    name: "herald",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AMQP", targets: ["AMQP"]),
        .library(name: "HeraldRuntime", targets: ["HeraldRuntime"]),
        .library(name: "HeraldWire", targets: ["HeraldWire"]),
        .library(name: "HeraldPhone", targets: ["HeraldPhone"]),
        .library(name: "HeraldEmail", targets: ["HeraldEmail"]),
        .library(name: "HeraldPush", targets: ["HeraldPush"]),
        .library(name: "HeraldCleanup", targets: ["HeraldCleanup"]),
        .library(name: "HeraldApple", targets: ["HeraldApple"]),
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
        .library(name: "HeraldWorkers", targets: ["HeraldWorkers"]),
        .library(name: "HeraldAPIStore", targets: ["HeraldAPIStore"]),
        .library(name: "HeraldAPI", targets: ["HeraldAPI"]),
        .executable(name: "herald-sms", targets: ["herald-sms"]),
        .executable(name: "herald-email", targets: ["herald-email"]),
        .executable(name: "herald-push", targets: ["herald-push"]),
        .executable(name: "herald-apple", targets: ["herald-apple"]),
        .executable(name: "herald-cleanup", targets: ["herald-cleanup"]),
        .executable(name: "herald-api", targets: ["herald-api"]),
        .executable(name: "heraldctl", targets: ["heraldctl"]),
        .executable(name: "herald-bench", targets: ["herald-bench"]),
        .executable(name: "herald-chaos", targets: ["herald-chaos"]),
        .executable(name: "herald-peer-swift", targets: ["herald-peer-swift"]),
        .executable(name: "herald-dev-apple", targets: ["herald-dev-apple"]),
        .executable(name: "herald-dev-stubs", targets: ["herald-dev-stubs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // herald-api's HTTP server. No traits: swift-configuration is not needed (Herald reads its own).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // /v1's generated types and routes (scripts/generate-openapi.sh) and their Hummingbird transport.
        // No traits: the runtime on FoundationEssentials, as swift-openapi-hummingbird asks for it.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4", traits: []),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
        // Traces (off by default): the span API, and OpenTelemetry's OTLP/HTTP exporter. Only the
        // OTLPHTTP trait: its OTLPGRPC default would build grpc-swift, which Herald does not use.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // Each module's SQL/ folder (migrations, functions) and Documents/ folder (herald-api's
        // OpenAPI document) embedded in it as text: the files stay files that psql, linters and
        // client generators read, and are in the binary that applies or serves them.
        .executableTarget(name: "embed-files", path: "Sources/embed-files", swiftSettings: strict),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["embed-files"]),
        .systemLibrary(
            name: "CRabbitMQ",
            pkgConfig: "librabbitmq",
            providers: [.apt(["librabbitmq-dev"])]
        ),
        .target(
            name: "AMQP",
            dependencies: ["CRabbitMQ", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // What every worker shares and nothing specific to one kind: wire, runner, ledger, event
        // outbox, database and migrator, configuration, operations, secrets, logging, and the
        // delivery pipeline (provider chain). docs/architecture.md draws the graph.
        .target(
            name: "HeraldRuntime",
            dependencies: [
                "AMQP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        // The wire: the job types of every queue and the values they carry, which herald-api,
        // HeraldClient and the workers share. On HeraldRuntime only: no SQL, no provider.
        .target(name: "HeraldWire", dependencies: ["HeraldRuntime"], swiftSettings: strict),
        // libphonenumber (Debian's libphonenumber-dev, C++) behind a C header: validity, region
        // and type of a phone number. HeraldPhoneCheck imports the C functions only (no C++ interop).
        .target(
            name: "CPhoneNumber",
            linkerSettings: [.linkedLibrary("phonenumber"), .linkedLibrary("protobuf")]
        ),
        // A worker kind's check module: what herald-api and a front API run of it without its worker
        // (the verifiers, the configuration section they read, their statements). On HeraldRuntime
        // and HeraldWire only (scripts/check-structure.py).
        .target(
            name: "HeraldPhoneCheck",
            dependencies: ["HeraldRuntime", "HeraldWire", "CPhoneNumber"] + checkLibraries,
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        .target(name: "HeraldEmailCheck", dependencies: ["HeraldRuntime", "HeraldWire"] + checkLibraries, swiftSettings: strict, plugins: ["EmbedFiles"]),
        .target(name: "HeraldPushCheck", dependencies: ["HeraldRuntime", "HeraldWire"] + checkLibraries, swiftSettings: strict, plugins: ["EmbedFiles"]),
        .target(
            name: "HeraldAppleCheck",
            dependencies: [
                "HeraldRuntime", "HeraldWire", .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ] + checkLibraries,
            swiftSettings: strict
        ),
        // One worker module per worker kind: on HeraldRuntime, HeraldWire and its own kind's
        // check module, never on another worker's or kind's (scripts/check-structure.py).
        .target(name: "HeraldPhone", dependencies: ["HeraldRuntime", "HeraldWire", "HeraldPhoneCheck"] + workerLibraries, swiftSettings: strict, plugins: ["EmbedFiles"]),
        .target(
            name: "HeraldEmail",
            dependencies: ["HeraldRuntime", "HeraldWire", "HeraldEmailCheck", .product(name: "Mustache", package: "swift-mustache")] + workerLibraries,
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "HeraldPush",
            dependencies: ["HeraldRuntime", "HeraldWire", "HeraldPushCheck", .product(name: "JWTKit", package: "jwt-kit")] + workerLibraries,
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        .target(name: "HeraldCleanup", dependencies: ["HeraldRuntime", "HeraldWire"] + workerLibraries, swiftSettings: strict, plugins: ["EmbedFiles"]),
        .target(
            name: "HeraldApple",
            dependencies: ["HeraldRuntime", "HeraldWire", "HeraldAppleCheck", .product(name: "JWTKit", package: "jwt-kit")] + workerLibraries,
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        // Local servers that speak the remote providers' protocols (tests, benchmarks, chaos).
        .target(
            name: "HeraldStubs",
            dependencies: [
                "HeraldRuntime",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        // herald-api's state without its server: API keys, Twilio Verify services and
        // verifications, and their schema group (`api`), for heraldctl and the migrator too.
        .target(
            name: "HeraldAPIStore",
            dependencies: [
                "HeraldRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "HeraldClient",
            dependencies: ["HeraldRuntime", "AMQP", .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "Tracing", package: "swift-distributed-tracing")] + checks,
            swiftSettings: strict
        ),
        // Every worker module, for the programs that work across all of them (heraldctl, the
        // harnesses, the tests): configuration sections, schema groups, job types. Never deployed
        // in herald-api or a front API.
        .target(
            name: "HeraldWorkers",
            dependencies: ["HeraldRuntime", "HeraldAPIStore", "HeraldPhone", "HeraldEmail", "HeraldPush", "HeraldCleanup", "HeraldApple"],
            swiftSettings: strict
        ),
        // herald-api: Herald's HTTP API (/v1) and Twilio Verify v2's, on Hummingbird.
        .target(
            name: "HeraldAPI",
            dependencies: [
                "HeraldRuntime", "HeraldAPIStore", "HeraldClient", "AMQP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ] + workerLibraries + checks,
            swiftSettings: strict,
            plugins: ["EmbedFiles"]
        ),
        .executableTarget(name: "herald-api", dependencies: ["HeraldRuntime", "HeraldAPI"], swiftSettings: strict),
        .executableTarget(name: "herald-sms", dependencies: ["HeraldRuntime", "HeraldPhone"], swiftSettings: strict),
        .executableTarget(name: "herald-email", dependencies: ["HeraldRuntime", "HeraldEmail"], swiftSettings: strict),
        .executableTarget(name: "herald-push", dependencies: ["HeraldRuntime", "HeraldPush"], swiftSettings: strict),
        .executableTarget(name: "herald-apple", dependencies: ["HeraldRuntime", "HeraldApple"], swiftSettings: strict),
        .executableTarget(name: "herald-cleanup", dependencies: ["HeraldRuntime", "HeraldCleanup"], swiftSettings: strict),
        .executableTarget(
            name: "heraldctl",
            dependencies: [
                "HeraldRuntime", "HeraldClient", "HeraldAPIStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + workers,
            swiftSettings: strict,
            // Its statements (SQL/queries/), as HeraldStatement types.
            plugins: ["EmbedFiles"]
        ),
        .executableTarget(
            name: "herald-bench",
            dependencies: [
                "HeraldRuntime", "HeraldClient", "HeraldStubs", "AMQP", "HeraldAPIStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // BENCH_ONLY=api's baseline: a bare Hummingbird route served by herald-bench itself.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ] + workers,
            swiftSettings: strict),
        // The Swift peer (issue 48, make bench): the Go peer's bare SMS job on the libraries herald-sms runs on, and no more.
        .executableTarget(
            name: "herald-peer-swift",
            dependencies: ["AMQP", .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        .executableTarget(
            name: "herald-chaos",
            dependencies: ["HeraldRuntime", "HeraldClient", "HeraldStubs", "AMQP", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "PostgresNIO", package: "postgres-nio")] + workers,
            swiftSettings: strict
        ),
        // make run's local Apple and its demo steps (scripts/run-local.sh); never deployed.
        .executableTarget(
            name: "herald-dev-apple",
            dependencies: ["HeraldRuntime", "HeraldClient", "HeraldStubs", "HeraldWorkers", "HeraldApple", "HeraldAppleCheck", "HeraldWire", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: strict
        ),
        // The WhatsApp and Twilio stand-ins as processes (make run, scripts/test-api.sh); never deployed.
        .executableTarget(name: "herald-dev-stubs", dependencies: ["HeraldStubs"], swiftSettings: strict),
        .testTarget(name: "AMQPTests", dependencies: ["AMQP", "HeraldStubs"], swiftSettings: strict),
        .testTarget(
            name: "HeraldUnitTests",
            dependencies: [
                "HeraldRuntime", "HeraldClient", "AMQP", "HeraldAPI",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ] + workers,
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldIntegrationTests",
            dependencies: [
                "HeraldRuntime", "HeraldClient", "HeraldStubs", "HeraldAPIStore", "AMQP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ] + workers,
            // A database as the old migrator left it, restored with psql by SchemaMigrationTests.
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
    ],
    cxxLanguageStandard: .cxx17
)
