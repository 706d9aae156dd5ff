// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "herald",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AMQP", targets: ["AMQP"]),
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
        .executable(name: "herald-sms", targets: ["herald-sms"]),
        .executable(name: "herald-email", targets: ["herald-email"]),
        .executable(name: "herald-push", targets: ["herald-push"]),
        .executable(name: "herald-cleanup", targets: ["herald-cleanup"]),
        .executable(name: "heraldctl", targets: ["heraldctl"]),
        .executable(name: "herald-bench", targets: ["herald-bench"]),
        .executable(name: "herald-chaos", targets: ["herald-chaos"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
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
        .target(
            name: "HeraldCore",
            dependencies: [
                "AMQP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: strict
        ),
        // Local servers that speak the remote providers' protocols (tests, benchmarks, chaos).
        .target(
            name: "HeraldStubs",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldClient",
            dependencies: ["HeraldCore", "AMQP", .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: strict
        ),
        .executableTarget(name: "herald-sms", dependencies: ["HeraldCore"], swiftSettings: strict),
        .executableTarget(name: "herald-email", dependencies: ["HeraldCore"], swiftSettings: strict),
        .executableTarget(name: "herald-push", dependencies: ["HeraldCore"], swiftSettings: strict),
        .executableTarget(name: "herald-cleanup", dependencies: ["HeraldCore"], swiftSettings: strict),
        .executableTarget(
            name: "heraldctl",
            dependencies: [
                "HeraldCore", "HeraldClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "herald-bench",
            dependencies: [
                "HeraldCore", "HeraldClient", "HeraldStubs", "AMQP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "herald-chaos",
            dependencies: ["HeraldCore", "HeraldClient", "HeraldStubs", "AMQP", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: strict
        ),
        .testTarget(name: "AMQPTests", dependencies: ["AMQP"], swiftSettings: strict),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: [
                "HeraldCore", "HeraldClient", "AMQP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldIntegrationTests",
            dependencies: [
                "HeraldCore", "HeraldClient", "HeraldStubs", "AMQP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
    ]
)
