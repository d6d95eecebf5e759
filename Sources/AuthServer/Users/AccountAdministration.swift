import IssuerStorage
import SSOCore

/// Several changes to one account, made together (the admin API's PATCH):
/// each is what one `ssoctl user` command does, under the same rules.
public struct AccountPatch: Equatable, Sendable {
    public var name: String?
    /// The whole list, replacing the stored one.
    public var roles: [String]?
    /// true: `user disable`; false: `user enable`.
    public var disabled: Bool?
    /// `user passwd`.
    public var password: String?
    public var removePasskeys = false
    public var removeTOTP = false

    public init() {}

    public var isEmpty: Bool { self == AccountPatch() }
}

/// What a patch did, for the caller's answer and its audit lines.
public struct AccountPatchResult: Sendable {
    public let user: User
    /// The `ssoctl` commands the patch amounted to, in the order applied
    /// ("user update", "user disable", ...), for the audit log.
    public let commands: [String]
    public let endedSessions: [String]
}

extension AccountChanges {
    /// Applies `patch` to the account whose `sub` is `subject`, in one write
    /// unit: every value is checked before anything is written, so a
    /// refused patch changes nothing. `expecting` sees the account as the
    /// write unit found it, after every other administrative change has
    /// finished (IssuerWrites.serializeAdministrativeChanges), and may
    /// refuse it (a stale `If-Match`).
    ///
    /// A new password or disabling ends every session of the user and
    /// revokes what is bound to them (as `changePassword` and `disable`
    /// do); the other changes leave sessions alone.
    public func administer(subject: String, _ patch: AccountPatch, expecting: (User) throws -> Void = { _ in }) throws -> AccountPatchResult {
        guard !patch.isEmpty else { throw ValidationError("nothing to change: give at least one member") }
        if let name = patch.name { try UserAccounts.validate(name: name) }
        if let roles = patch.roles { try UserAccounts.validate(roles: roles) }
        guard let found = try users.find(subject: subject) else { throw ValidationError.notFound("no user \(subject.debugDescription)") }
        // scrypt is slow: before the write unit, as changePassword does.
        let hash = try patch.password.map { try users.newPasswordHash($0, email: found.email) }
        return try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            guard var user = try tx.users.find(subject: subject), user.id == found.id else {
                throw ValidationError.notFound("no user \(subject.debugDescription)")
            }
            try expecting(user)
            var commands: [String] = []
            var ended: [String] = []
            if patch.name != nil || patch.roles != nil {
                guard let changed = try tx.users.update(name: patch.name, roles: patch.roles, userID: user.id) else {
                    throw ValidationError.notFound("no user \(subject.debugDescription)")
                }
                user = changed
                commands.append("user update")
            }
            if let disabled = patch.disabled, disabled != user.disabled {
                try tx.users.setDisabled(disabled, userID: user.id)
                commands.append(disabled ? "user disable" : "user enable")
                if disabled { ended += try endSignIns(of: user, tx, reason: .userDisabled).endedSessions }
            }
            if let hash {
                try tx.users.setPasswordHash(hash, userID: user.id)
                commands.append("user passwd")
                ended += try endSignIns(of: user, tx, reason: .passwordChanged).endedSessions
            }
            // Audited, as ssoctl audits them, only when something went.
            if patch.removePasskeys, try tx.passkeys.removeAll(userID: user.id) > 0 { commands.append("user passkeys remove") }
            if patch.removeTOTP, try tx.totp.remove(userID: user.id) { commands.append("user totp remove") }
            guard let now = try tx.users.find(id: user.id) else { throw ValidationError.notFound("no user \(subject.debugDescription)") }
            return AccountPatchResult(user: now, commands: commands, endedSessions: ended)
        }
    }
}
