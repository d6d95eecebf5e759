import SSOCore

/// The getting-in journeys' audit events (SecurityEvents' table):
///
/// | event | when |
/// | --- | --- |
/// | `signup` | the sign-up form was sent; `reason: existing_account` when the address had one (its owner was mailed a notice) |
/// | `email_verified` | a verification link's button was pressed, or a reset or invitation link set a password for an unverified address |
/// | `password_reset_requested` | "forgot your password" for an account (`reason: mail_limit` when its hourly mail limit held), or for no account (`reason: no_account`, no user) |
/// | `password_reset` | a reset link set a new password; every session of the account ended |
/// | `invitation_sent`, `invitation_accepted` | `ssoctl user invite` queued the mail; the invitation's link set the password |
/// | `email_change_requested` | `/account` asked to move the account (`user`: its address); `reason: address_taken` when the new address had an account (it was mailed a notice), `mail_limit` when its hourly limit held |
/// | `email_changed` | the new address's link was used: `user` the old address, `target` the new one (the old one was mailed a way back) |
/// | `email_change_reverted` | the old address's "it wasn't me" link set a new password and moved the account back: `user` the address it left, `target` the one restored, `reason` what else went (passkeys, TOTP) |
///
/// Never a link, a token or a password: the user (when known), the client
/// address (`ip`; `null` for ssoctl) and the reason.
extension SecurityEvents {
    static func gettingIn(_ event: String, user: String?, ip: String?, reason: String? = nil, actor: String? = nil, target: String? = nil) {
        AuditLog.record(AuditEvent(event: event, user: user, ip: ip, reason: reason, actor: actor, target: target))
    }

    /// `ssoctl user invite` queued the invitation.
    public static func invitationSent(user: String, actor: String) {
        gettingIn("invitation_sent", user: user, ip: nil, actor: actor)
    }
}
