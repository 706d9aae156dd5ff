// swift-tools-version:6.1
import PackageDescription

// The generator of /v1's Swift types and routes, pinned. Built only by scripts/generate-openapi.sh
// (and make test's check that the committed code is current), never by the product's build.
let package = Package(
    name: "openapi-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),
        // What reads the document, pinned too (Package.resolved stays out of git): another
        // version could read it differently, and the check would fail with no change to it.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit", exact: "6.4.0", traits: []),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
    ],
    targets: []
)
