import IssuerStorage
import SSOCore

/// Changing the address of an account, from `/account` (inside the
/// "confirm it's you" window): the new address gets a link, and only that
/// link, used, moves the account, so an address nobody proved never
/// becomes the one that signs in and receives reset links. The old address
/// is told once the account has moved, with a link that takes it back.
///
/// As with sign-up, the answer never tells whether the new address has an
/// account: it always says a link went there; an address that has one gets
/// a notice instead.
extension GettingIn {
    enum EmailChangeRequest: Equatable {
        /// A link went to the new address (or a notice, or nothing past
        /// its mail limit: the page says the same).
        case sent
        /// Not an address we could write to.
        case invalid
        /// The account's own address (ASCII letters folded, as the lookup).
        case same
    }

    /// `POST /account/email`: a link to `newEmail` (24 h; a newer one voids
    /// older ones) carrying the address it moves the account to.
    func requestEmailChange(user: User, newEmail: String, messages: Messages, ip: String) throws -> EmailChangeRequest {
        guard (try? UserAccounts.validate(email: newEmail)) != nil, (try? MailAddress(newEmail)) != nil else { return .invalid }
        guard EmailKey.of(newEmail) != EmailKey.of(user.email) else { return .same }
        let now = clock()
        try storage.write { tx in
            // Held before the lookup: a sign-up or another change racing for
            // the address waits (MailOutboxStore.holdRecipient).
            try tx.mailOutbox.holdRecipient(newEmail)
            if try tx.users.find(email: newEmail) != nil {
                _ = try mailer.queue(AccountMail(kind: .emailTakenNotice, recipient: newEmail, name: user.name,
                                                 link: settings.issuer + PasswordResetPages.formPath),
                                     messages: messages, now: now, tx)
                SecurityEvents.gettingIn("email_change_requested", user: user.email, ip: ip, reason: "address_taken")
                return
            }
            let token = AccountLinkTokens.make()
            try tx.accountLinks.issue(NewAccountLink(tokenHash: SecretHash.of(token), purpose: .emailChange, userID: user.id, createdAt: now,
                                                     expiresAt: now + AccountLinkTokens.emailChangeLifetime, targetEmail: newEmail),
                                      voidingEarlier: true)
            let queued = try mailer.queue(AccountMail(kind: .emailChange, recipient: newEmail, name: user.name,
                                                      link: mailer.link(Self.emailChangePath, token: token), values: ["email": newEmail]),
                                          messages: messages, now: now, tx)
            SecurityEvents.gettingIn("email_change_requested", user: user.email, ip: ip, reason: queued ? nil : "mail_limit")
        }
        return .sent
    }

    enum EmailChangeOutcome {
        case changed(User, oldEmail: String)
        /// Used, voided, expired or never ours.
        case invalidLink
        /// Another account took the address after the link was sent.
        case taken
    }

    /// The button: in one write unit the link is spent, the account moves
    /// to the new address (verified: the link proved it), the links mailed
    /// to the old address void (a reset link there must not reach the
    /// account any more), and the old address is told, with a link back.
    /// Sessions stay: the person who asked is signed in and moved nothing
    /// of theirs.
    func changeEmail(token: String, messages: Messages, ip: String) throws -> EmailChangeOutcome {
        guard let hash = AccountLinkTokens.hash(token) else { return .invalidLink }
        let now = clock()
        return try storage.write { tx -> EmailChangeOutcome in
            guard let link = try tx.accountLinks.redeem(tokenHash: hash, purpose: .emailChange, now: now), let newEmail = link.targetEmail,
                  let user = try tx.users.find(id: link.userID) else { return .invalidLink }
            try tx.mailOutbox.holdRecipient(newEmail)
            if let holder = try tx.users.find(email: newEmail), holder.id != user.id { return .taken }
            guard let moved = try tx.users.changeEmail(newEmail, userID: user.id) else { return .invalidLink }
            for purpose in [AccountLinkPurpose.verification, .passwordReset, .emailChange, .emailRevert] {
                try tx.accountLinks.voidAll(userID: user.id, purpose: purpose, now: now)
            }
            let revert = AccountLinkTokens.make()
            try tx.accountLinks.issue(NewAccountLink(tokenHash: SecretHash.of(revert), purpose: .emailRevert, userID: user.id, createdAt: now,
                                                     expiresAt: now + AccountLinkTokens.emailRevertLifetime, targetEmail: user.email),
                                      voidingEarlier: true)
            _ = try mailer.queue(AccountMail(kind: .emailChangedNotice, recipient: user.email, name: user.name,
                                             link: mailer.link(Self.emailRevertPath, token: revert), values: ["email": newEmail]),
                                 messages: messages, now: now, tx, limited: false)
            SecurityEvents.gettingIn("email_changed", user: user.email, ip: ip, target: newEmail)
            return .changed(moved, oldEmail: user.email)
        }
    }

    /// A revert link's other half (setPassword's): the account moves back
    /// to the address the link was mailed to, and whatever else a taker
    /// may have added to sign in with goes: passkeys, TOTP and its
    /// recovery codes (the owner enrols them again; a taker's TOTP would
    /// otherwise lock the owner out of the account just recovered).
    /// Returns nil when another account has taken that address since.
    func revertEmail(_ link: AccountLink, of user: User, _ tx: any IssuerWrites, now: Int64, ip: String) throws -> User? {
        guard let oldEmail = link.targetEmail else { return nil }
        try tx.mailOutbox.holdRecipient(oldEmail)
        if let holder = try tx.users.find(email: oldEmail), holder.id != user.id { return nil }
        guard let moved = try tx.users.changeEmail(oldEmail, userID: user.id) else { return nil }
        for purpose in [AccountLinkPurpose.verification, .emailChange, .emailRevert] {
            try tx.accountLinks.voidAll(userID: user.id, purpose: purpose, now: now)
        }
        let passkeys = try tx.passkeys.removeAll(userID: user.id)
        let totp = try tx.totp.remove(userID: user.id)
        SecurityEvents.gettingIn("email_change_reverted", user: user.email, ip: ip,
                                 reason: "removed \(passkeys) passkey(s)" + (totp ? " and TOTP" : ""), target: oldEmail)
        return moved
    }
}
