import AuthServer
import Foundation
import SSOCore
#if canImport(Glibc)
import Glibc
#endif

/// ssoctl's side of the audit log: every command that changes users,
/// clients, APIs, keys or sessions writes one `admin_change` line naming the
/// operating-system user who ran it (SecurityEvents.adminChange). Refused
/// commands exit through `fail` before they get here, so they write nothing.
enum AdminAudit {
    /// Who ran ssoctl, taken before the switch to the home's owner (after it,
    /// every actor would be `gatehouse`).
    nonisolated(unsafe) private(set) static var actor = "unknown"
    /// Why the audit log could not be opened, kept until the first change:
    /// a read-only command has nothing to audit, so it stays quiet.
    nonisolated(unsafe) private static var unopenedReason: String?

    /// Opens the audit log while ssoctl may still be root: in Scripts/run's
    /// layout log/ is root's alone (0700), out of the home owner's reach.
    /// The descriptor (O_CLOEXEC) outlives the switch. A missing log/ is not
    /// made here: made as root, it would be the one thing in the owner's
    /// home that is not the owner's.
    static func start(environment: [String: String] = ProcessInfo.processInfo.environment) {
        actor = invokingUser(environment)
        unopenedReason = AuditLog.start(home: HomeOwner.homePath(environment), environment: environment)
    }

    /// `command`: the command's words ("user add"); `target`: what it acted on.
    /// Never pass a password, secret, TOTP seed or otpauth URI.
    static func changed(_ command: String, target: String?, user: String? = nil, client: String? = nil) {
        warnIfUnaudited()
        SecurityEvents.adminChange(command, target: target, actor: actor, user: user, client: client)
    }

    /// `user unlock` cleared a lock: the account_unlocked event besides its admin_change.
    static func unlocked(user: String) {
        SecurityEvents.accountUnlocked(user: user, actor: actor)
    }

    /// The person behind the command: sudo's caller when root was reached
    /// through sudo (root itself says nothing about who), else the login
    /// name of the real uid.
    static func invokingUser(_ environment: [String: String]) -> String {
        if getuid() == 0, let sudoUser = environment["SUDO_USER"], !sudoUser.isEmpty { return sudoUser }
        let uid = getuid()
        guard let entry = getpwuid(uid) else { return "uid \(uid)" }
        return String(cString: entry.pointee.pw_name)
    }

    /// One warning line, at the first change that goes unaudited; the change
    /// itself goes ahead (its event goes to standard error, AuditLog's fallback).
    private static func warnIfUnaudited() {
        guard let reason = unopenedReason else { return }
        unopenedReason = nil
        FileHandle.standardError.write(Data(("ssoctl: warning: " + reason + "\n").utf8))
    }
}
