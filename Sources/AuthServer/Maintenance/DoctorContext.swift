import IssuerStorage
import SSOCore

/// What every check looks at: the configuration (or why it did not load),
/// the database opened read-only (or why it did not open), the settings and
/// the clock. Built once by `Doctor`.
public final class DoctorContext {
    /// The loaded configuration; when it failed to load, the defaults for
    /// the same home, so the file checks still know where to look.
    public let config: GatehouseConfig
    public let configError: String?
    /// Whether GATEHOUSE_HOME was set (unset: `var` under the working directory).
    public let homeIsExplicit: Bool
    /// The issuer storage, opened without changing it; nil when it did not open.
    public let storage: (any IssuerStorage)?
    public let storageError: String?
    public let settings: DoctorSettings
    public let clock: Clock

    public init(config: GatehouseConfig, configError: String? = nil, homeIsExplicit: Bool = true, storage: (any IssuerStorage)?,
                storageError: String? = nil, settings: DoctorSettings = DoctorSettings(), clock: @escaping Clock = systemClock) {
        self.config = config
        self.configError = configError
        self.homeIsExplicit = homeIsExplicit
        self.storage = storage
        self.storageError = storageError
        self.settings = settings
        self.clock = clock
    }

    public var home: String { config.home }

    /// The signing keys as the responders see them (same retention rule).
    var keys: SigningKeys? {
        storage.map { SigningKeys(storage: $0, clock: clock, tokenLifetime: config.signingKeyRetention) }
    }

    var nginxConfigPath: String { settings.nginxConfigPath ?? home + "/nginx/nginx.conf" }

    /// Where Scripts/run writes nginx's and the responders' logs.
    var logDirectory: String { home + "/log" }
}
