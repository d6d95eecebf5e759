import FoundationEssentials

public struct ConfigError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Everything a responder or ssoctl needs to know about its deployment.
///
/// Read once at process start from `$GATEHOUSE_HOME/gatehouse.conf`
/// (`KEY=value` lines, written by Scripts/run) and then the environment,
/// which wins. See README "Configuration" for every key.
public struct GatehouseConfig: Sendable {
    public var home: String
    public var issuer: String
    public var apiAOrigin: String
    public var apiBOrigin: String
    public var appLinksOrigin: String
    public var accessTokenLifetime: Int
    public var idTokenLifetime: Int
    public var refreshTokenLifetime: Int
    public var authorizationCodeLifetime: Int
    public var ssoSessionLifetime: Int
    /// Seconds a rotated refresh token may be presented again and get the
    /// same successor back (a reply lost on a mobile network).
    public var refreshGracePeriod: Int
    /// `GATEHOUSE_DPOP_NONCE`: the token endpoint asks for a server nonce
    /// in every DPoP proof (RFC 9449 §8); `off` accepts proofs without one.
    public var dpopNonceRequired: Bool
    /// Seconds between `ssoctl keys rotate` publishing a key and its signing:
    /// longer than `jwksMaximumAge`, so every resource server has refreshed
    /// its JWKS and knows the key before the first token it signs arrives.
    public var keyActivationDelay: Int
    /// Seconds a resource server keeps a fetched JWKS before refreshing it.
    public var jwksMaximumAge: Int
    /// `GATEHOUSE_REQUIRE_PAR`: every client must push its authorization
    /// requests first (RFC 9126 §4: PAR "the only means for a client to pass
    /// authorization request data", globally); discovery then says
    /// `require_pushed_authorization_requests: true` (§5).
    public var requirePushedAuthorizationRequests: Bool
    /// `GATEHOUSE_DATABASE_URL`: a libpq connection URI selecting
    /// PostgreSQL for the issuer's state; nil: SQLite in the home.
    public var databaseURL: String?
    /// `GATEHOUSE_API_DPOP_NONCE`: api-a and api-b require a nonce of
    /// their own in every DPoP proof (RFC 9449 §9). Off by default.
    public var apiDPoPNonces: Bool
    public var appleTeamID: String
    public var iosBundleID: String
    public var androidPackage: String
    public var androidCertificateFingerprints: [String]
    /// `GATEHOUSE_PAGES_DIR`: where `ssoctl pages` writes the site for each
    /// language and the catalogues the responders read.
    public var pagesDirectory: String
    /// Product name, logo, colours, default language (README "Branding and languages").
    public var brand: BrandSettings
    /// `GATEHOUSE_SIGNUP`: closed (the default), invite or open.
    public var signup: SignupMode
    /// `GATEHOUSE_MAIL_FROM`: the From address of the issuer's mail; nil:
    /// `no-reply@` the issuer's host.
    public var mailFrom: String?
    /// `GATEHOUSE_ADMIN_API`: the admin API under `ISSUER/admin/v1/` (on
    /// unless set off; it answers only tokens of clients granted its scopes).
    public var adminAPI: Bool

    /// The issuer's SQLite file (the default storage backend).
    public var databasePath: String { home + "/gatehouse.sqlite" }
    /// The demo APIs' own data: never the issuer's file, whatever the
    /// issuer's backend, so they share no table with it.
    public var resourceServerDatabasePath: String { home + "/resource-servers.sqlite" }
    public var keysDirectory: String { home + "/keys" }
    /// The deployment's master key (32 bytes, 0600): with PostgreSQL, what
    /// every node shares to seal and open the signing keys and the data
    /// sealed at rest; created by the first node's `ssoctl setup`.
    public var masterKeyPath: String { keysDirectory + "/master.key" }
    /// The AES-256-GCM key that seals a rotated refresh token's successor
    /// during its grace window.
    public var refreshSealingKeyPath: String { keysDirectory + "/refresh-seal.key" }
    /// How long a superseded signing key stays published: the longest token
    /// lifetime it may have signed, plus a minute of clock leeway.
    public var signingKeyRetention: Int { max(accessTokenLifetime, idTokenLifetime) + 60 }

    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> GatehouseConfig {
        let home = environment["GATEHOUSE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "var"
        var values = (try? readConfFile(home + "/gatehouse.conf")) ?? [:]
        for (key, value) in environment where key.hasPrefix("GATEHOUSE_") { values[key] = value }
        return try GatehouseConfig(home: home, values: values)
    }

    public init(home: String, values: [String: String]) throws {
        func integer(_ key: String, _ fallback: Int, _ range: ClosedRange<Int>) throws -> Int {
            guard let text = values[key], !text.isEmpty else { return fallback }
            guard let number = Int(text), range.contains(number) else { throw ConfigError("\(key) must be an integer in \(range)") }
            return number
        }
        let basePort = try integer("GATEHOUSE_BASE_PORT", 8443, 1...65532)
        func origin(_ key: String, _ port: Int) throws -> String {
            let value = values[key] ?? "https://localhost:\(port)"
            guard let url = URL(string: value), url.scheme == "https", url.host != nil, url.path.isEmpty, url.query == nil else {
                throw ConfigError("\(key) must be an https origin without path, got \(value)")
            }
            return value
        }
        self.home = home
        issuer = try origin("GATEHOUSE_ISSUER", basePort)
        apiAOrigin = try origin("GATEHOUSE_API_A_ORIGIN", basePort + 1)
        apiBOrigin = try origin("GATEHOUSE_API_B_ORIGIN", basePort + 2)
        appLinksOrigin = try origin("GATEHOUSE_APP_LINKS_ORIGIN", basePort + 3)
        accessTokenLifetime = try integer("GATEHOUSE_ACCESS_TOKEN_TTL", 900, 60...86_400)
        idTokenLifetime = try integer("GATEHOUSE_ID_TOKEN_TTL", 3600, 60...86_400)
        refreshTokenLifetime = try integer("GATEHOUSE_REFRESH_TOKEN_TTL", 86_400, 60...31_536_000)
        authorizationCodeLifetime = try integer("GATEHOUSE_CODE_TTL", 60, 10...600)
        ssoSessionLifetime = try integer("GATEHOUSE_SSO_SESSION_TTL", 30 * 86_400, 300...31_536_000)
        refreshGracePeriod = try integer("GATEHOUSE_REFRESH_GRACE", 10, 0...300)
        switch values["GATEHOUSE_DPOP_NONCE"] ?? "required" {
        case "required", "": dpopNonceRequired = true
        case "off": dpopNonceRequired = false
        case let other: throw ConfigError("GATEHOUSE_DPOP_NONCE must be required or off, got \(other.prefix(32))")
        }
        jwksMaximumAge = try integer("GATEHOUSE_JWKS_MAX_AGE", 3600, 1...86_400)
        keyActivationDelay = try integer("GATEHOUSE_KEY_ACTIVATION_DELAY", jwksMaximumAge + 300, 0...604_800)
        requirePushedAuthorizationRequests = try Self.flag("GATEHOUSE_REQUIRE_PAR", values["GATEHOUSE_REQUIRE_PAR"])
        databaseURL = try Self.databaseURL(values["GATEHOUSE_DATABASE_URL"])
        apiDPoPNonces = try Self.flag("GATEHOUSE_API_DPOP_NONCE", values["GATEHOUSE_API_DPOP_NONCE"])
        appleTeamID = values["GATEHOUSE_APPLE_TEAM_ID"] ?? "ABCDE12345"
        iosBundleID = values["GATEHOUSE_IOS_BUNDLE_ID"] ?? "com.example.gatehouse.demo"
        androidPackage = values["GATEHOUSE_ANDROID_PACKAGE"] ?? "com.example.gatehouse.demo"
        androidCertificateFingerprints = (values["GATEHOUSE_ANDROID_CERT_SHA256"]
            ?? "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5")
            .split(separator: ",").map { $0.trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
        pagesDirectory = values["GATEHOUSE_PAGES_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/pages"
        brand = try BrandSettings(values: values)
        signup = try SignupMode.parse(values["GATEHOUSE_SIGNUP"])
        mailFrom = values["GATEHOUSE_MAIL_FROM"].flatMap { $0.isEmpty ? nil : $0 }
        adminAPI = try Self.flag("GATEHOUSE_ADMIN_API", values["GATEHOUSE_ADMIN_API"].flatMap { $0.isEmpty ? nil : $0 } ?? "on")
    }

    /// The message catalogues `ssoctl pages` wrote.
    public var messagesDirectory: String { pagesDirectory + "/messages" }

    /// On or off; empty or unset means off. Anything else is refused rather
    /// than read as off: a typo must not quietly drop a security setting.
    static func flag(_ key: String, _ value: String?) throws -> Bool {
        switch value?.lowercased() {
        case nil, "", "0", "false", "no", "off": return false
        case "1", "true", "yes", "on": return true
        default: throw ConfigError("\(key) must be 1, true, yes or on (or 0, false, no, off)")
        }
    }

    /// A libpq URI (`postgresql://` or `postgres://`); empty means unset.
    static func databaseURL(_ value: String?) throws -> String? {
        guard let value, !value.isEmpty else { return nil }
        guard value.hasPrefix("postgresql://") || value.hasPrefix("postgres://"),
              value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ConfigError("GATEHOUSE_DATABASE_URL must be a postgresql:// connection URI")
        }
        return value
    }

    static func readConfFile(_ path: String) throws -> [String: String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var values: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingASCIIWhitespace()
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            values[String(trimmed[..<equals])] = String(trimmed[trimmed.index(after: equals)...])
        }
        return values
    }
}
