import FoundationEssentials
import IssuerStorage
import SSOCore

/// `ssoctl doctor`: every check, in the order they print. Read-only: the
/// database is opened read-only and nothing is created, so a broken home
/// is described, never repaired or made worse.
public enum Doctor {
    public static let checks: [any DoctorCheck] = [
        ConfigurationCheck(),
        StorageCheck(),
        ActiveSigningKeyCheck(),
        ActivePrivateKeyCheck(),
        SigningKeyAgeCheck(),
        NextSigningKeyCheck(),
        KeyFilesCheck(),
        FilePermissionsCheck.home,
        FilePermissionsCheck.database,
        FilePermissionsCheck.keysDirectory,
        FilePermissionsCheck.logDirectory,
        LogFilesCheck(),
        NginxConfigCheck(),
        CertificateExpiryCheck(),
    ]

    public static func run(_ context: DoctorContext) -> [DoctorFinding] {
        checks.flatMap { $0.findings(context) }
    }

    /// The context for the deployment `environment` describes: the same
    /// configuration rules as every responder (GatehouseConfig.load).
    /// `openStorage` opens the configured backend without creating or
    /// migrating anything (the composition root knows the backends).
    public static func context(environment: [String: String] = ProcessInfo.processInfo.environment,
                               settings: DoctorSettings = DoctorSettings(), clock: @escaping Clock = systemClock,
                               openStorage: (GatehouseConfig) throws -> any IssuerStorage) -> DoctorContext {
        let explicitHome = environment["GATEHOUSE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
        var config: GatehouseConfig
        var configError: String?
        do {
            config = try GatehouseConfig.load(environment: environment)
        } catch {
            configError = "\(error)"
            // Defaults never throw; the paths only depend on the home.
            config = try! GatehouseConfig(home: explicitHome ?? "var", values: [:])
        }
        var storage: (any IssuerStorage)?
        var storageError: String?
        do { storage = try openStorage(config) } catch { storageError = "\(error)" }
        return DoctorContext(config: config, configError: configError, homeIsExplicit: explicitHome != nil, storage: storage,
                             storageError: storageError, settings: settings, clock: clock)
    }
}
