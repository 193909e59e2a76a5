// swift-tools-version:6.2
import PackageDescription

/// Our own targets build in Swift 6 mode with every warning an error; dependencies are left alone.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "offpeak",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Offpeak", targets: ["Offpeak"]),
        .executable(name: "offpeak", targets: ["offpeak"]),
        .executable(name: "offpeak-sim", targets: ["offpeak-sim"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // 4.x: the version Hummingbird's graph already resolves (swift-certificates, swift-nio-extras).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // The dashboard's pages: logic-less templates that escape every value they print.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // Hummingbird's header types, named by the dashboard (`Server-Timing` has no constant there).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The PostgreSQL store's client (no libpq): the wire protocol over SwiftNIO, TLS by NIOSSL.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        .target(
            name: "Offpeak",
            dependencies: [
                "CCurl",
                "CLZ4",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The cache's hot lookup path steps one prepared statement through the C API.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 for cache keys.
                .product(name: "Crypto", package: "swift-crypto"),
                // The PostgreSQL store: its client, the event loops it runs on, its TLS settings.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // `offpeak dashboard`: the local page's server and its templates.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "offpeak",
            dependencies: [
                "Offpeak",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "offpeak-bench",
            dependencies: [
                "Offpeak",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "OffpeakSimKit",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "offpeak-sim",
            dependencies: [
                "OffpeakSimKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "OffpeakTestSupport",
            path: "Tests/OffpeakTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "OffpeakTests",
            dependencies: ["Offpeak", "OffpeakSimKit", "OffpeakTestSupport", "offpeak", "offpeak-sim"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["OffpeakTestSupport", "offpeak", "offpeak-sim"],
            swiftSettings: strict
        ),
    ]
)
