import IssuerStorage
import SSOCore

/// The journeys that let people in on their own (sign-up, verification,
/// password reset, invitations), each one domain operation that owns its
/// write unit: the account change, its link and its mail commit together.
///
/// No answer here tells whether an address has an account: sign-up and the
/// reset request return nothing, and do the same slow work (one scrypt hash
/// for a sign-up, none for a reset request) whichever way they go.
public final class GettingIn {
    let storage: any IssuerStorage
    let hasher: PasswordHasher
    let mailer: AccountMailer
    let clock: Clock

    init(storage: any IssuerStorage, hasher: PasswordHasher, settings: IssuerSettings, clock: @escaping Clock) {
        self.storage = storage
        self.hasher = hasher
        mailer = AccountMailer(settings: settings)
        self.clock = clock
    }

    /// Where each link leads (rows of the login process, GettingInResponder).
    static let verifyPath = "/login/verify"
    static let resetPath = "/login/reset"
    static let invitationPath = "/login/invitation"
    static let emailChangePath = "/login/email-change"
    static let emailRevertPath = "/login/email-revert"

    // MARK: Sign-up

    /// A sign-up's fields, checked: the address one we can write to, the
    /// name and password within the account rules. A refusal names the
    /// field's problem for the form; it says nothing about other accounts.
    struct SignUpForm {
        let email: String
        let name: String
        let password: String

        static func check(email: String, name: String, password: String) -> PageText? {
            do {
                try UserAccounts.validate(email: email)
                _ = try MailAddress(email)
            } catch {
                return PageText("signup.invalid_email")
            }
            guard (try? UserAccounts.validate(name: name)) != nil else { return PageText("signup.invalid_name") }
            if let refusal = PasswordPolicy.refusal(of: password, email: email) { return PageText(refusal.messageKey) }
            return nil
        }
    }

    /// Makes an unverified account and mails its verification link, or,
    /// when the address has an account, mails its owner a notice instead.
    /// `pendingCookieSecret`: the sign-in this browser was in, which
    /// verifying continues.
    ///
    /// A sign-up over an account that is still unverified takes that
    /// account over: this sign-up's password and name replace the earlier
    /// ones and a fresh link voids the earlier links. Otherwise whoever
    /// signed up first with someone else's address would keep a password
    /// in the account its owner then verifies (account pre-hijacking,
    /// Sudhodanan and Paverd, USENIX Security 2022, "classic-federated
    /// merge" and "unexpired session" variants aside): the owner's own
    /// sign-up must win.
    func signUp(_ form: SignUpForm, messages: Messages, pendingCookieSecret: String?, ip: String) throws {
        // Hashed whether or not the address is taken: both ways cost one scrypt.
        let hash = try hasher.hash(password: form.password)
        let now = clock()
        try storage.write { tx in
            // Held before the lookup, as an email change holds it: of a
            // sign-up and a change racing for one address, the second waits
            // and then finds the first's account.
            try tx.mailOutbox.holdRecipient(form.email)
            if let existing = try tx.users.find(email: form.email) {
                if !existing.emailVerified && existing.hasPassword {
                    try tx.users.setPasswordHash(hash, userID: existing.id)
                    let renamed = try tx.users.update(name: form.name, roles: nil, userID: existing.id) ?? existing
                    _ = try sendVerification(to: renamed, pendingCookieSecret: pendingCookieSecret, messages: messages, now: now, tx)
                } else {
                    _ = try mailer.queue(AccountMail(kind: .signUpNotice, recipient: existing.email, name: existing.name,
                                                     link: settings.issuer + PasswordResetPages.formPath),
                                         messages: messages, now: now, tx)
                }
                SecurityEvents.gettingIn("signup", user: existing.email, ip: ip, reason: "existing_account")
                return
            }
            let user = try tx.users.insert(NewUser(subject: SecureRandom.token(byteCount: 16), email: form.email, name: form.name,
                                                   passwordHash: hash, roles: ["user"], createdAt: now, emailVerified: false))
            _ = try sendVerification(to: user, pendingCookieSecret: pendingCookieSecret, messages: messages, now: now, tx)
            SecurityEvents.gettingIn("signup", user: user.email, ip: ip)
        }
    }

    var settings: IssuerSettings { mailer.settings }

    /// A fresh verification link (older ones void) and its mail.
    private func sendVerification(to user: User, pendingCookieSecret: String?, messages: Messages, now: Int64,
                                  _ tx: any IssuerWrites) throws -> Bool {
        let token = AccountLinkTokens.make()
        try tx.accountLinks.issue(NewAccountLink(tokenHash: SecretHash.of(token), purpose: .verification, userID: user.id, createdAt: now,
                                                 expiresAt: now + AccountLinkTokens.verificationLifetime,
                                                 pendingRequest: pendingCookieSecret.map(Self.pendingReference)),
                                  voidingEarlier: true)
        return try mailer.queue(AccountMail(kind: .verification, recipient: user.email, name: user.name,
                                            link: mailer.link(Self.verifyPath, token: token)),
                                messages: messages, now: now, tx)
    }

    /// What a link keeps of the pending sign-in: the hash of its cookie's
    /// secret (the secret itself is never stored), base64url.
    static func pendingReference(_ cookieSecret: String) -> String {
        Base64URL.encode(SecretHash.of(cookieSecret))
    }

    /// "Send the link again", from the page an unverified sign-in gets:
    /// only an unverified account with a password gets one; every address
    /// gets the same page.
    func resendVerification(email: String, messages: Messages, pendingCookieSecret: String?, ip: String) throws {
        guard (try? UserAccounts.validate(email: email)) != nil else { return }
        let now = clock()
        try storage.write { tx in
            guard let user = try tx.users.find(email: email), !user.emailVerified, user.hasPassword, !user.disabled else {
                // The same work as sendVerification, the mail withheld.
                try tx.accountLinks.voidAll(userID: 0, purpose: .verification, now: now)
                try mailer.withhold(AccountMail(kind: .verification, recipient: email, name: "",
                                                link: mailer.link(Self.verifyPath, token: AccountLinkTokens.make())),
                                    reason: "no unverified account", messages: messages, now: now, tx)
                return
            }
            _ = try sendVerification(to: user, pendingCookieSecret: pendingCookieSecret, messages: messages, now: now, tx)
        }
    }

    /// A live link of `purpose` and the account it is for (the page a link
    /// opens comes first: opening it changes nothing); nil for a token that
    /// is used, voided, expired, unknown or not shaped like one of ours.
    func liveLink(token: String, purpose: AccountLinkPurpose) throws -> (link: AccountLink, user: User)? {
        guard let hash = AccountLinkTokens.hash(token),
              let link = try storage.read.accountLinks.live(tokenHash: hash, purpose: purpose, now: clock()),
              let user = try storage.read.users.find(id: link.userID) else { return nil }
        return (link, user)
    }

    /// The button: the link is spent and the address verified, in one
    /// write unit. `continuesSignIn`: the link was made in the sign-in this
    /// browser's pending cookie names (compared as hashes, in constant time).
    func verify(token: String, pendingCookieSecret: String?, ip: String) throws -> (user: User, continuesSignIn: Bool)? {
        guard let hash = AccountLinkTokens.hash(token) else { return nil }
        let now = clock()
        return try storage.write { tx -> (User, Bool)? in
            guard let link = try tx.accountLinks.redeem(tokenHash: hash, purpose: .verification, now: now),
                  let user = try tx.users.find(id: link.userID) else { return nil }
            _ = try tx.users.markEmailVerified(userID: user.id)
            SecurityEvents.gettingIn("email_verified", user: user.email, ip: ip)
            return (try tx.users.find(id: user.id) ?? user, Self.isSignUpBrowser(link, pendingCookieSecret: pendingCookieSecret))
        }
    }

    /// Whether the browser holding `pendingCookieSecret` is the one that
    /// signed up: the link keeps the SHA-256 of that browser's pending
    /// sign-in cookie, compared in constant time.
    static func isSignUpBrowser(_ link: AccountLink, pendingCookieSecret: String?) -> Bool {
        guard let stored = link.pendingRequest, let pendingCookieSecret else { return false }
        return ConstantTime.equals(Array(pendingReference(pendingCookieSecret).utf8), Array(stored.utf8))
    }


    // MARK: Password reset

    /// "Forgot your password?": a known, enabled account gets a link (a
    /// newer one voids older ones); any other address gets nothing. The
    /// caller answers the same page either way.
    func requestPasswordReset(email: String, messages: Messages, ip: String) throws {
        guard (try? UserAccounts.validate(email: email)) != nil else { return }
        let now = clock()
        try storage.write { tx in
            let token = AccountLinkTokens.make()
            guard let user = try tx.users.find(email: email), !user.disabled else {
                // The same work as below, but the mail is withheld.
                try tx.accountLinks.voidAll(userID: 0, purpose: .passwordReset, now: now)
                try mailer.withhold(AccountMail(kind: .passwordReset, recipient: email, name: "", link: mailer.link(Self.resetPath, token: token)),
                                    reason: "no account", messages: messages, now: now, tx)
                SecurityEvents.gettingIn("password_reset_requested", user: nil, ip: ip, reason: "no_account")
                return
            }
            try tx.accountLinks.issue(NewAccountLink(tokenHash: SecretHash.of(token), purpose: .passwordReset, userID: user.id, createdAt: now,
                                                     expiresAt: now + AccountLinkTokens.passwordResetLifetime),
                                      voidingEarlier: true)
            let queued = try mailer.queue(AccountMail(kind: .passwordReset, recipient: user.email, name: user.name,
                                                      link: mailer.link(Self.resetPath, token: token)),
                                          messages: messages, now: now, tx)
            SecurityEvents.gettingIn("password_reset_requested", user: user.email, ip: ip, reason: queued ? nil : "mail_limit")
        }
    }

    enum NewPasswordOutcome {
        case set(User, endedSessions: [String])
        /// Used, voided, expired or never ours.
        case invalidLink
        case refused(PasswordRefusal)
        /// A revert link's address belongs to another account now.
        case addressTaken
    }

    /// The form of a reset link, an invitation, or an email change's "it
    /// wasn't me" link (which also moves the account back: revertEmail):
    /// the new password is set and the link spent in one write unit. A
    /// reset ends every session of the account with its refresh tokens and
    /// device secrets (the same path as an administrator's password
    /// change), clears a lock, voids the other reset links, and keeps TOTP
    /// and passkeys; it signs nobody in. Each link proves the address,
    /// which then counts as verified.
    func setPassword(token: String, purpose: AccountLinkPurpose, password: String, ip: String) throws -> NewPasswordOutcome {
        guard let hash = AccountLinkTokens.hash(token), let (account, email) = try linkedAccountAndAddress(token: token, purpose: purpose) else {
            return .invalidLink
        }
        if let refusal = PasswordPolicy.refusal(of: password, email: email) { return .refused(refusal) }
        let passwordHash = try hasher.hash(password: password)
        let now = clock()
        do {
            return try setPassword(passwordHash, linkHash: hash, purpose: purpose, accountID: account.id, now: now, ip: ip)
        } catch is AddressTaken {
            return .addressTaken
        }
    }

    private func setPassword(_ passwordHash: String, linkHash hash: [UInt8], purpose: AccountLinkPurpose, accountID: Int64, now: Int64,
                             ip: String) throws -> NewPasswordOutcome {
        try storage.write { tx -> NewPasswordOutcome in
            guard let link = try tx.accountLinks.redeem(tokenHash: hash, purpose: purpose, now: now), link.userID == accountID,
                  var user = try tx.users.find(id: link.userID) else { return .invalidLink }
            if purpose == .emailRevert {
                // The address went to another account meanwhile: the link
                // cannot do what it says; roll back (the link stays live).
                guard let moved = try revertEmail(link, of: user, tx, now: now, ip: ip) else { throw AddressTaken() }
                user = moved
            }
            try tx.users.setPasswordHash(passwordHash, userID: user.id)
            if try tx.users.markEmailVerified(userID: user.id) {
                SecurityEvents.gettingIn("email_verified", user: user.email, ip: ip)
            }
            try tx.accountLinks.voidAll(userID: user.id, purpose: .passwordReset, now: now)
            let ended = try SessionBoundCredentials.endEverySession(userID: user.id, tx, now: now, reason: .passwordChanged)
            try tx.pendingAuthorizations.clearMarks(userID: user.id)
            try LoginThrottle.forgetAccount(userID: user.id, tx, now: now)
            SecurityEvents.gettingIn(purpose == .invitation ? "invitation_accepted" : "password_reset", user: user.email, ip: ip)
            return .set(user, endedSessions: ended)
        }
    }

    /// Thrown inside a revert's write unit to roll it back.
    struct AddressTaken: Error {}

    /// The address a live link's page names: the account's, or the one a
    /// revert link restores.
    func linkedAccountAndAddress(token: String, purpose: AccountLinkPurpose) throws -> (User, String)? {
        guard let (link, user) = try liveLink(token: token, purpose: purpose) else { return nil }
        return (user, purpose == .emailRevert ? link.targetEmail ?? user.email : user.email)
    }

    // MARK: Invitations

    /// `ssoctl user invite`: an account without a password (no password
    /// signs in to it) and a mail with a 7-day link to the page that sets
    /// one. Refused, with nothing written, for a taken address, invalid
    /// input, or an address past its mail limit.
    public func invite(email: String, name: String, roles: [String] = ["user"], messages: Messages) throws -> User {
        try UserAccounts.validate(email: email)
        _ = try MailAddress(email)
        try UserAccounts.validate(name: name)
        try UserAccounts.validate(roles: roles)
        let now = clock()
        return try storage.write { tx in
            try tx.serializeAdministrativeChanges()
            try tx.mailOutbox.holdRecipient(email)
            guard try tx.users.find(email: email) == nil else { throw ValidationError.conflict("a user with email \(email) already exists") }
            let user = try tx.users.insert(NewUser(subject: SecureRandom.token(byteCount: 16), email: email, name: name, passwordHash: "",
                                                   roles: roles, createdAt: now, emailVerified: false))
            let token = AccountLinkTokens.make()
            try tx.accountLinks.issue(NewAccountLink(tokenHash: SecretHash.of(token), purpose: .invitation, userID: user.id, createdAt: now,
                                                     expiresAt: now + AccountLinkTokens.invitationLifetime),
                                      voidingEarlier: true)
            guard try mailer.queue(AccountMail(kind: .invitation, recipient: email, name: name, link: mailer.link(Self.invitationPath, token: token)),
                                   messages: messages, now: now, tx) else {
                throw ValidationError("\(email) has had \(AccountMailer.limitPerHour) messages in the last hour; try again later")
            }
            return user
        }
    }
}
