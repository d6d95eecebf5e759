import FoundationEssentials
import Glibc

/// One security event: a JSON object on one line of `log/audit.log`.
/// `user` is the account's email (only when an account is known: an
/// unknown sign-in name is never written, since people type passwords
/// into it); `client` a client_id; `ip` the client address nginx saw.
/// Never a password, token, code, secret or cookie. Every line has every
/// member, `null` where it does not apply (`ip` of a command run on the
/// host), so a log pipeline sees one shape.
public struct AuditEvent: Encodable, Equatable, Sendable {
    public let time: String
    public let event: String
    public var user: String?
    public var client: String?
    public var ip: String?
    /// Why a sign-in failed, or what an admin change changed ("user add").
    public var reason: String?
    /// The sign-in session concerned, when there is one.
    public var sid: String?
    /// Who made an admin change: the operating-system user running ssoctl.
    public var actor: String?
    /// A second subject where the event has one (the email or client an
    /// admin command acted on, a refresh token family).
    public var target: String?

    public init(event: String, user: String? = nil, client: String? = nil, ip: String? = nil, reason: String? = nil,
                sid: String? = nil, actor: String? = nil, target: String? = nil, time: String? = nil) {
        self.time = time ?? RequestLog.timestamp()
        self.event = event
        self.user = user
        self.client = client
        self.ip = ip.flatMap { $0.isEmpty ? nil : $0 }
        self.reason = reason
        self.sid = sid
        self.actor = actor
        self.target = target
    }

    enum CodingKeys: String, CodingKey { case time, event, user, client, ip, reason, sid, actor, target }

    /// The synthesized encoding leaves nil members out; here they are `null`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(time, forKey: .time)
        try container.encode(event, forKey: .event)
        try container.encode(user, forKey: .user)
        try container.encode(client, forKey: .client)
        try container.encode(ip, forKey: .ip)
        try container.encode(reason, forKey: .reason)
        try container.encode(sid, forKey: .sid)
        try container.encode(actor, forKey: .actor)
        try container.encode(target, forKey: .target)
    }
}

/// Where audit events go. A process writes each event with one `write(2)`
/// to a descriptor opened with O_APPEND, so the lines of every responder
/// process and ssoctl never interleave.
///
/// The descriptor: `GATEHOUSE_AUDIT_FD` when the process was handed one
/// (Scripts/run's supervisor opens log/audit.log itself, since log/ is
/// root's alone), else `GATEHOUSE_AUDIT_LOG` or `log/audit.log` in the home,
/// opened here (0600). When neither can be had, events go to standard error
/// (the process's own log) rather than nowhere.
public enum AuditLog {
    /// -1 until `start`: a unit test's events are only `recorded`.
    nonisolated(unsafe) static var descriptor: Int32 = -1
    /// Every event this process recorded, when a test asked for them.
    nonisolated(unsafe) public static var recorded: [AuditEvent]?

    public static func path(home: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["GATEHOUSE_AUDIT_LOG"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/log/audit.log"
    }

    /// Finds or opens the audit log for this process (see the type's comment).
    /// Returns what went wrong, if events will go to standard error.
    @discardableResult
    public static func start(home: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        // Only an open descriptor opened for appending (F_GETFL fails with
        // -1, all bits set, on one that is not open).
        if let text = environment["GATEHOUSE_AUDIT_FD"], let fd = Int32(text), fd > 2, case let flags = fcntl(fd, F_GETFL), flags >= 0,
           flags & O_APPEND != 0 {
            descriptor = fd
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return nil
        }
        let file = path(home: home, environment: environment)
        let fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let reason = "cannot open \(file) (errno \(errno)); audit events go to standard error"
            descriptor = 2
            return reason
        }
        descriptor = fd
        return nil
    }

    public static func record(_ event: AuditEvent) {
        if recorded != nil { recorded!.append(event) }
        guard descriptor >= 0, var bytes = try? JSON.encode(event) else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { _ = Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}
