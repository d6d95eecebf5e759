import IssuerStorage
import SSOCore

/// The issuer's security events, each counted for `/metrics` and, where it
/// concerns an account, a session or an administrator, written to the
/// audit log. One call per event, so a counter and the audit lines it
/// summarizes can never disagree. Event names (the audit line's `event`):
///
/// | event | when |
/// | --- | --- |
/// | `login_success` | a sign-in completed (after TOTP, if enrolled) |
/// | `login_failure` | a sign-in refused; `reason` is a LoginResult |
/// | `account_locked` | a failure locked the account |
/// | `account_unlocked` | an administrator cleared the lock |
/// | `logout` | RP-initiated logout ended a session |
/// | `refresh_reuse_detected` | a spent refresh token came back; its family is revoked |
/// | `token_exchange` | Native SSO gave an app tokens for another app's sign-in |
/// | `admin_change` | an ssoctl command changed users, clients, APIs, keys or sessions |
/// | `client_registered`, `client_registration_updated`, `client_registration_deleted` | dynamic registration (RFC 7591, RFC 7592) |
/// | `passkey_added`, `passkey_renamed`, `passkey_removed` | the user changed their passkeys on /account |
/// | `password_changed`, `password_change_refused` | the user changed their password on /account, or gave a wrong current one |
/// | `totp_enrolled`, `totp_removed` | the user set up or removed TOTP (an authenticator app) on /account |
/// | `recovery_code_used` | a recovery code took a TOTP code's place at sign-in; `reason` says how many are left |
/// | `recovery_codes_renewed` | the user made a new set of recovery codes on /account |
/// | `account_deleted` | the user erased their own account on /account |
/// | `session_ended`, `signed_out_everywhere` | the user signed out one of their sessions, or all of them, on /account |
/// | `signup`, `email_verified`, `password_reset_requested`, `password_reset`, `invitation_sent`, `invitation_accepted` | the getting-in journeys (GettingInEvents.swift) |
public enum SecurityEvents {
    /// A client registered, changed or deleted its own registration
    /// (never a token or a secret).
    public static func clientRegistration(_ event: String, client: String, ip: String) {
        AuditLog.record(AuditEvent(event: event, client: client, ip: ip))
    }

    public static func signIn(_ result: LoginResult, user: User?, client: String?, ip: String, sid: String? = nil) {
        Metrics.count(.logins, result.rawValue)
        AuditLog.record(AuditEvent(event: result == .success ? "login_success" : "login_failure", user: user?.email, client: client,
                                   ip: ip, reason: result == .success ? nil : result.rawValue, sid: sid))
    }

    /// A return from an upstream provider: a sign-in through it, an
    /// account made from it, or why it was refused (never its tokens or codes).
    /// The provider's name is the event's `target`.
    public static func federatedSignIn(_ result: FederationResult, provider: String?, user: String?, client: String?, ip: String,
                                       sid: String? = nil) {
        Metrics.count(.federatedSignIns, result.rawValue)
        let succeeded = [.success, .created, .linkOffered].contains(result)
        AuditLog.record(AuditEvent(event: succeeded ? "federated_login" : "federated_login_failure", user: user, client: client, ip: ip,
                                   reason: result == .success ? nil : result.rawValue, sid: sid, target: provider))
    }

    /// An upstream account linked to a local one, or unlinked from it.
    public static func providerLinked(user: String, provider: String, ip: String, sid: String?) {
        AuditLog.record(AuditEvent(event: "provider_linked", user: user, ip: ip, sid: sid, target: provider))
    }

    public static func providerUnlinked(user: String, provider: String, ip: String, sid: String?) {
        AuditLog.record(AuditEvent(event: "provider_unlinked", user: user, ip: ip, sid: sid, target: provider))
    }

    public static func accountLocked(user: User, client: String?, ip: String) {
        Metrics.count(.accountLocks)
        AuditLog.record(AuditEvent(event: "account_locked", user: user.email, client: client, ip: ip))
    }

    public static func logout(user: String?, client: String?, ip: String, sid: String) {
        Metrics.count(.logouts)
        AuditLog.record(AuditEvent(event: "logout", user: user, client: client, ip: ip, sid: sid))
    }

    public static func refreshReuseDetected(user: String?, client: String, ip: String, familyID: String) {
        Metrics.count(.refreshReuseDetected)
        AuditLog.record(AuditEvent(event: "refresh_reuse_detected", user: user, client: client, ip: ip, target: "family " + familyID))
    }

    /// A retry within the grace window got the same successor (no audit
    /// line: nothing was granted that had not been).
    public static func refreshGraceRetry() {
        Metrics.count(.refreshGraceRetries)
    }

    /// `client` got tokens for `user`'s sign-in in `fromClient`.
    public static func tokenExchange(user: String?, client: String, fromClient: String?, ip: String, sid: String) {
        AuditLog.record(AuditEvent(event: "token_exchange", user: user, client: client, ip: ip, sid: sid,
                                   target: fromClient.map { "from client " + $0 }))
    }

    /// A token response at `/token`; `grantType` as the request named it.
    public static func tokensIssued(grantType: String) {
        let label = grantType == TokenExchangeRequest.grantType ? "token_exchange" : grantType
        Metrics.count(.tokensIssued, label)
    }

    /// A refused DPoP proof at one of the issuer's endpoints.
    public static func dpopProofRejected(_ reason: DPoPError.Reason) {
        Metrics.count(.dpopProofsRejected, reason.metricLabel)
    }

    /// `command` (e.g. "user add") acted on `target` (an email, a client_id,
    /// an audience, a kid or a sid); `actor` is the operating-system user.
    /// `ip`: the caller's address, for a change made through the admin API
    /// (`actor` is then the calling client's id).
    public static func adminChange(_ command: String, target: String?, actor: String, user: String? = nil, client: String? = nil,
                                   ip: String? = nil) {
        AuditLog.record(AuditEvent(event: "admin_change", user: user, client: client, ip: ip, reason: command, actor: actor, target: target))
    }

    /// The signed-in user added a passkey on /account (`reason`: its name).
    public static func passkeyAdded(user: String, ip: String, sid: String, name: String) {
        AuditLog.record(AuditEvent(event: "passkey_added", user: user, ip: ip, reason: name, sid: sid))
    }

    /// The user renamed a passkey on /account (`reason`: the new name).
    public static func passkeyRenamed(user: String, ip: String, sid: String, name: String) {
        AuditLog.record(AuditEvent(event: "passkey_renamed", user: user, ip: ip, reason: name, sid: sid))
    }

    public static func passkeyRemoved(user: String, ip: String, sid: String) {
        AuditLog.record(AuditEvent(event: "passkey_removed", user: user, ip: ip, sid: sid))
    }

    /// The signed-in user changed their password on /account (their other
    /// sign-ins ended).
    public static func passwordChanged(user: String, ip: String, sid: String) {
        AuditLog.record(AuditEvent(event: "password_changed", user: user, ip: ip, sid: sid))
    }

    /// A password change on /account with a wrong current password: counted
    /// as a failed sign-in (it goes through the same throttle).
    public static func passwordChangeRefused(user: String, ip: String, sid: String) {
        Metrics.count(.logins, LoginResult.wrongPassword.rawValue)
        AuditLog.record(AuditEvent(event: "password_change_refused", user: user, ip: ip, reason: LoginResult.wrongPassword.rawValue, sid: sid))
    }

    /// The signed-in user confirmed a TOTP enrolment on /account (replacing any earlier one).
    public static func totpEnrolled(user: String, ip: String, sid: String) {
        AuditLog.record(AuditEvent(event: "totp_enrolled", user: user, ip: ip, sid: sid))
    }

    /// A recovery code signed `user` in (the success itself is `login_success`
    /// too); `reason` says how many are left, so a monitor can warn at 0.
    public static func recoveryCodeUsed(user: String, client: String?, ip: String, left: Int) {
        AuditLog.record(AuditEvent(event: "recovery_code_used", user: user, client: client, ip: ip, reason: "\(left) left"))
    }

    /// The signed-in user made a new set of recovery codes on /account (with their current password).
    public static func recoveryCodesRenewed(user: String, ip: String, sid: String) {
        AuditLog.record(AuditEvent(event: "recovery_codes_renewed", user: user, ip: ip, sid: sid))
    }

    /// The signed-in user erased their own account on /account.
    public static func accountDeleted(user: String, ip: String, sid: String) {
        AuditLog.record(AuditEvent(event: "account_deleted", user: user, ip: ip, sid: sid))
    }

    /// The signed-in user removed their TOTP enrolment on /account (with their current password).
    public static func totpRemoved(user: String, ip: String, sid: String) {
        AuditLog.record(AuditEvent(event: "totp_removed", user: user, ip: ip, sid: sid))
    }

    /// The signed-in user (in session `sid`) ended their session `endedSID` on /account.
    public static func sessionEnded(user: String, ip: String, sid: String, endedSID: String) {
        AuditLog.record(AuditEvent(event: "session_ended", user: user, ip: ip, sid: sid, target: "session " + endedSID))
    }

    /// The signed-in user (in session `sid`) ended every session of theirs
    /// on /account ("Sign out everywhere"); `ended`: how many were live.
    public static func signedOutEverywhere(user: String, ip: String, sid: String, ended: Int) {
        AuditLog.record(AuditEvent(event: "signed_out_everywhere", user: user, ip: ip, sid: sid, target: "\(ended) sessions"))
    }

    public static func accountUnlocked(user: String, actor: String) {
        AuditLog.record(AuditEvent(event: "account_unlocked", user: user, reason: "user unlock", actor: actor))
    }
}
