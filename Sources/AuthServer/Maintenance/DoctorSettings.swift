import IssuerStorage
/// Runs `executable` with `arguments` (no shell); its exit status and its
/// standard output and error together.
public typealias CommandRunner = @Sendable (_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String)

/// The thresholds and paths `ssoctl doctor` is given (its options).
public struct DoctorSettings: Sendable {
    /// The active signing key's age that warns, and that fails. The
    /// configuration has no rotation period, so these stand in for one.
    public var keyAgeWarning: Int64 = 90 * 86_400
    public var keyAgeFailure: Int64 = 180 * 86_400
    /// A certificate expiring within this many seconds warns.
    public var certificateWarning: Int64 = 30 * 86_400
    /// nil: `$GATEHOUSE_HOME/nginx/nginx.conf`, where Scripts/run renders it.
    public var nginxConfigPath: String?
    /// nil: `nginx` on PATH, else in /usr/sbin, /usr/local/sbin, /sbin.
    public var nginxExecutable: String?
    /// Runs a program; returns its exit status and combined output. Given
    /// by the caller (ssoctl: Foundation's Process), because this library
    /// links FoundationEssentials only. nil: nginx is not tested (a warning).
    public var runCommand: CommandRunner?
    /// Empty: every `ssl_certificate` of the nginx config, and the local CA.
    public var certificatePaths: [String] = []
    /// PRAGMA quick_check instead of integrity_check: about ten times faster
    /// on a large database (1 M refresh tokens: 0.6 s against 6 s), but it
    /// does not compare indexes with their tables.
    public var quickIntegrityCheck = false

    public init() {}
}
