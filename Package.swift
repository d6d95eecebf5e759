// swift-tools-version:6.0
import PackageDescription

// The package graph enforces the seed's boundary: api-a and api-b link SSOCore
// and ResourceServer only, never AuthServer (the issuer's tables and keys).
let package = Package(
    name: "Gatehouse",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "jwks", targets: ["jwks"]),
        .executable(name: "discovery", targets: ["discovery"]),
        .executable(name: "ssoctl", targets: ["ssoctl"]),
        .executable(name: "hello-fcgi", targets: ["hello-fcgi"]),
        .executable(name: "authorize", targets: ["authorize"]),
        .executable(name: "login", targets: ["login"]),
        .executable(name: "token", targets: ["token"]),
        .executable(name: "userinfo", targets: ["userinfo"]),
        .executable(name: "logout", targets: ["logout"]),
        .executable(name: "revoke", targets: ["revoke"]),
        .executable(name: "introspect", targets: ["introspect"]),
        .executable(name: "par", targets: ["par"]),
        .executable(name: "admin", targets: ["admin"]),
        .executable(name: "ops", targets: ["ops"]),
        .executable(name: "api-a", targets: ["api-a"]),
        .executable(name: "api-b", targets: ["api-b"]),
        .executable(name: "gatehouse-login", targets: ["gatehouse-login"]),
        .executable(name: "gatehouse-mailer", targets: ["gatehouse-mailer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CFastCGI", pkgConfig: "fcgi", providers: [.apt(["libfcgi-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // QR codes for TOTP enrolment on /account, behind AuthServer's QRCodeSVG.
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // SMTP submission for the mail sender, behind SMTPClient.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // libpq-dev for the header only: libpq itself is loaded at the first
        // connection (Sources/CPostgreSQL/libpq_loader.c), so a process on
        // SQLite maps none of it.
        .target(name: "CPostgreSQL", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "SSOCore", dependencies: ["CFastCGI", "COpenSSL"]),
        // libcurl behind one owned handle, apart from SSOCore: libcurl maps
        // some thirty libraries (about 6 MB resident), which only the
        // process that sends mail should pay for. Messages themselves
        // (SSOCore/Mail) need no C library.
        .target(name: "SMTPClient", dependencies: ["CCurl", "SSOCore"]),
        // libcurl for outbound HTTPS, loaded with dlopen only while a
        // transfer runs (Sources/CCurlLoader/curl_loader.c): the resource
        // servers fetch a JWKS once an hour and must stay under 20 MB.
        .target(name: "CCurlLoader", linkerSettings: [.linkedLibrary("dl")]),
        // The one HTTPS client of every process, with the outbound trust rules
        // (https only, verified certificates, no redirects, 10 s).
        .target(name: "OutboundHTTPS", dependencies: ["CCurlLoader", "SSOCore"]),
        // SQLite behind one small owned wrapper (prepared statements, exact
        // byte lengths, busy handler, migrations).
        .target(name: "SQLiteClient", dependencies: ["CSQLite", "SSOCore"]),
        // The issuer's storage boundary: one protocol per aggregate, no SQL.
        .target(name: "IssuerStorage"),
        // Every SQL string the issuer runs lives in a backend target; the
        // issuer's logic (AuthServer) links neither, so it cannot write SQL.
        .target(name: "IssuerStorageSQLite", dependencies: ["IssuerStorage", "SQLiteClient", "SSOCore"]),
        .target(name: "IssuerStoragePostgreSQL", dependencies: ["IssuerStorage", "PostgreSQLClient", "SSOCore"]),
        // The common-password list is compiled in (embedInCode: no Bundle,
        // no file to find at run time); its README says where it is from.
        .target(name: "AuthServer", dependencies: ["SSOCore", "IssuerStorage", "CQRencode"],
                exclude: ["Users/CommonPasswords/README.md"],
                resources: [.embedInCode("Users/CommonPasswords/common-passwords.txt")]),
        // The composition root's helper: the only target that knows both
        // the issuer's logic and the backends.
        .target(name: "IssuerComposition", dependencies: ["AuthServer", "IssuerStorage", "IssuerStorageSQLite", "IssuerStoragePostgreSQL",
                                                         "PostgreSQLClient", "SQLiteClient", "SSOCore", "OutboundHTTPS"]),
        .target(name: "ResourceServer", dependencies: ["SSOCore", "SQLiteClient", "OutboundHTTPS"]),
        // The outbox's sender loop (claim, deliver outside any transaction,
        // record), testable without a network: the only target besides
        // SMTPClient's tests that links libcurl, through SMTPClient. It also
        // hands back-channel logout notices to AuthServer's delivery.
        .target(name: "MailSending", dependencies: ["AuthServer", "IssuerStorage", "SMTPClient", "SSOCore"]),
        // libpq behind one small owned wrapper (prepared statements, binary
        // parameters, bounded waits, reconnect with backoff).
        .target(name: "PostgreSQLClient", dependencies: ["CPostgreSQL", "SSOCore"]),
        .executableTarget(name: "jwks", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "discovery", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "hello-fcgi", dependencies: ["SSOCore"]),
        .executableTarget(name: "authorize", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "login", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "token", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "userinfo", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "logout", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "revoke", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "introspect", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "par", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        .executableTarget(name: "admin", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        // The ops listener: metrics, liveness, readiness (loopback only).
        .executableTarget(name: "ops", dependencies: ["SSOCore", "AuthServer", "IssuerComposition"]),
        // The resource servers: SSOCore and ResourceServer only, never AuthServer.
        .executableTarget(name: "api-a", dependencies: ["SSOCore", "ResourceServer"]),
        .executableTarget(name: "api-b", dependencies: ["SSOCore", "ResourceServer"]),
        // The mail sender process: MailSending over the storage IssuerComposition opens.
        .executableTarget(name: "gatehouse-mailer", dependencies: ["IssuerComposition", "MailSending"]),
        .executableTarget(name: "ssoctl", dependencies: [
            "SSOCore", "AuthServer", "IssuerStorage", "IssuerComposition",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // A native app's side of the sign-in, from a terminal: a client of the
        // issuer, so SSOCore (JOSE, PKCE) and OutboundHTTPS only, never AuthServer.
        .executableTarget(name: "gatehouse-login", dependencies: [
            "SSOCore", "OutboundHTTPS",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "SSOCoreTests", dependencies: ["SSOCore", "SQLiteClient"]),
        .testTarget(name: "AuthServerTests", dependencies: ["AuthServer", "IssuerStorage", "IssuerStorageSQLite", "IssuerComposition",
                                                            "SQLiteClient", "SSOCore"]),
        .testTarget(name: "ResourceServerTests", dependencies: ["ResourceServer", "SSOCore", "SQLiteClient"]),
        .testTarget(name: "SMTPClientTests", dependencies: ["SMTPClient", "SSOCore"]),
        .testTarget(name: "OutboundHTTPSTests", dependencies: ["OutboundHTTPS", "ResourceServer", "SSOCore"]),
        .testTarget(name: "MailSendingTests", dependencies: ["MailSending", "AuthServer", "IssuerStorage", "IssuerStorageSQLite", "SMTPClient",
                                                             "SQLiteClient", "SSOCore"]),
        .testTarget(name: "PostgreSQLClientTests", dependencies: ["PostgreSQLClient", "SSOCore"]),
        // Every storage backend must pass the same suite, races included.
        .testTarget(name: "IssuerStorageConformanceTests", dependencies: [
            "IssuerStorage", "IssuerStorageSQLite", "IssuerStoragePostgreSQL", "PostgreSQLClient", "SQLiteClient",
        ]),
    ],
    swiftLanguageModes: [.v5]
)

// The libFuzzer targets of Tests/Fuzz (Scripts/fuzz) take the executables'
// and tests' place when GATEHOUSE_FUZZ=1: libFuzzer's main, linked into
// every executable by `--sanitize=fuzzer`, calls a target's
// LLVMFuzzerTestOneInput, so in that build no other executable could link,
// and in an ordinary build no fuzz target could. Declared here, so the fuzz
// build and the product build share one package graph.
if Context.environment["GATEHOUSE_FUZZ"] == "1" {
    let fuzzTargets: [(name: String, file: String, dependencies: [Target.Dependency])] = [
        ("form-parser", "FormParserFuzz.swift", ["SSOCore"]),
        ("cookie-parser", "CookieParserFuzz.swift", ["SSOCore"]),
        ("jwt", "JWTFuzz.swift", ["ResourceServer", "SSOCore", "FuzzSigningKey"]),
        ("authorization-request", "AuthorizationRequestFuzz.swift", ["AuthServer", "SSOCore", "FuzzIssuerFixture"]),
        ("token-request", "TokenRequestFuzz.swift", ["AuthServer", "SSOCore", "FuzzIssuerFixture"]),
        ("bearer-header", "BearerHeaderFuzz.swift", ["AuthServer", "ResourceServer", "SSOCore"]),
        ("dpop-proof", "DPoPProofFuzz.swift", ["SSOCore"]),
        ("cbor", "CBORFuzz.swift", ["SSOCore"]),
        ("webauthn", "WebAuthnFuzz.swift", ["SSOCore"]),
    ]
    package.targets += [
        .target(name: "FuzzSigningKey", path: "Tests/Fuzz/Support", exclude: ["FuzzIssuer.swift", "fuzz-key.pem"],
                sources: ["FuzzKey.swift"]),
        // The SQLite backend, as the AuthServer tests build the issuer (not IssuerComposition: no PostgreSQL).
        .target(name: "FuzzIssuerFixture", dependencies: ["AuthServer", "IssuerStorage", "IssuerStorageSQLite", "SSOCore"],
                path: "Tests/Fuzz/Support", exclude: ["FuzzKey.swift", "fuzz-key.pem"], sources: ["FuzzIssuer.swift"]),
    ]
    // Only the modules the fuzz targets import stay: the executables, the
    // tests and what only they need (PostgreSQL, the composition root) go.
    func targetNames(_ dependencies: [Target.Dependency]) -> [String] {
        dependencies.compactMap {
            switch $0 {
            case .byNameItem(let name, _), .targetItem(let name, _): name
            default: nil
            }
        }
    }
    var kept = Set<String>(), pending = fuzzTargets.flatMap { targetNames($0.dependencies) }
    while let name = pending.popLast() {
        guard kept.insert(name).inserted, let target = package.targets.first(where: { $0.name == name }) else { continue }
        pending += targetNames(target.dependencies)
    }
    package.targets.removeAll { !kept.contains($0.name) }
    package.products = []
    for target in fuzzTargets {
        package.targets.append(.executableTarget(name: "fuzz-" + target.name, dependencies: target.dependencies,
                                                 path: "Tests/Fuzz/Targets", exclude: fuzzTargets.map(\.file).filter { $0 != target.file },
                                                 sources: [target.file]))
        package.products.append(.executable(name: "fuzz-" + target.name, targets: ["fuzz-" + target.name]))
    }
}
