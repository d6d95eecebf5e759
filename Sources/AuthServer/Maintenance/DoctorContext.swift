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
    public let database: SQLiteDatabase?
    public let databaseError: String?
    public let settings: DoctorSettings
    public let clock: Clock

    public init(config: GatehouseConfig, configError: String? = nil, homeIsExplicit: Bool = true, database: SQLiteDatabase?,
                databaseError: String? = nil, settings: DoctorSettings = DoctorSettings(), clock: @escaping Clock = systemClock) {
        self.config = config
        self.configError = configError
        self.homeIsExplicit = homeIsExplicit
        self.database = database
        self.databaseError = databaseError
        self.settings = settings
        self.clock = clock
    }

    public var home: String { config.home }

    /// The signing keys as the responders see them (same retention rule).
    var keys: SigningKeyStore? {
        database.map { SigningKeyStore(config: config, database: $0, clock: clock) }
    }

    var nginxConfigPath: String { settings.nginxConfigPath ?? home + "/nginx/nginx.conf" }

    /// Where Scripts/run writes nginx's and the responders' logs.
    var logDirectory: String { home + "/log" }
}
