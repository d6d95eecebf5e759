import IssuerStorage
import SSOCore

/// The mails of the getting-in journeys, built from the same catalogue as
/// the pages (`mail.*` keys of www/locales), in the language of the request
/// that caused them: a `text/plain` part and an HTML part saying the same,
/// the one link in both a complete `https://` URL on the issuer's origin.
///
/// Every value from outside (the name, the address) reaches the headers
/// only through MailAddress, which refuses controls, so a CR or LF typed
/// into a form can never start a header of its own; in the HTML part it is
/// escaped, in the text part it is text.
struct AccountMail {
    enum Kind {
        case verification, passwordReset, invitation
        /// A sign-up with an address that already has an account: the
        /// owner is told, and pointed at the password reset, instead of
        /// getting a link that would make a second account.
        case signUpNotice
        /// To the new address: the link that moves the account there.
        case emailChange
        /// To the old address, once the account moved: what happened, and
        /// the link that takes the account back ("it wasn't me").
        case emailChangedNotice
        /// To a new address that already has an account: nothing moved.
        case emailTakenNotice

        var catalogueKey: String {
            switch self {
            case .verification: "verify"
            case .passwordReset: "reset"
            case .invitation: "invitation"
            case .signUpNotice: "notice"
            case .emailChange: "email_change"
            case .emailChangedNotice: "email_changed"
            case .emailTakenNotice: "email_taken"
            }
        }

        var outboxKind: OutboxMessageKind {
            switch self {
            case .verification: .verification
            case .passwordReset: .passwordReset
            case .invitation: .invitation
            case .emailChange: .emailChange
            case .signUpNotice, .emailChangedNotice, .emailTakenNotice: .notice
            }
        }
    }

    let kind: Kind
    let recipient: String
    let name: String
    /// The complete link (`https://issuer/...`).
    let link: String
    /// Values the body's text names (`{email}`: the new address of an
    /// email change); plain text, escaped here for the HTML part.
    var values: [String: String] = [:]

    /// The message, ready to queue.
    func message(messages: Messages, from: String, brandName: String, host: String, now: Int64) throws -> MailMessage {
        let key = "mail." + kind.catalogueKey
        let subject = messages.text(key + ".subject")
        let to: MailAddress
        // A name MailAddress refuses (a control the account rules let
        // through) never reaches a header: the address goes alone.
        if let named = try? MailAddress(recipient, displayName: name) { to = named } else { to = try MailAddress(recipient) }
        let sender = try Self.sender(from, brandName: brandName)
        return try MailMessage(from: sender, to: to, subject: subject, text: text(messages, key), html: html(messages, key),
                               date: now, messageIDDomain: host)
    }

    /// `GATEHOUSE_MAIL_FROM` is `address` or `Name <address>` (read as the
    /// sender reads it, MailSettings.mailbox); a bare address gets the
    /// product's name as its display name.
    static func sender(_ from: String, brandName: String) throws -> MailAddress {
        let mailbox = try MailSettings.mailbox(from)
        guard mailbox.displayName == nil, !from.contains("<") else { return mailbox }
        return (try? MailAddress(mailbox.address, displayName: brandName)) ?? mailbox
    }

    func text(_ messages: Messages, _ key: String) -> String {
        [messages.text("mail.greeting", ["name": name]), messages.text(key + ".body", values), link, messages.text(key + ".after"),
         messages.text("mail.ignore"), "-- \n" + messages.text("brand.name")].joined(separator: "\n\n") + "\n"
    }

    func html(_ messages: Messages, _ key: String) -> String {
        let escape = HTMLEscaping.escape
        return """
            <!doctype html>
            <html lang="\(escape(messages.language))">
            <head><meta charset="utf-8"><title>\(escape(messages.text(key + ".subject")))</title></head>
            <body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1f2328; max-width: 36rem;">
            <p>\(messages.html("mail.greeting", ["name": escape(name)]))</p>
            <p>\(messages.html(key + ".body", values.mapValues(escape)))</p>
            <p><a href="\(escape(link))" style="display: inline-block; padding: 0.6rem 1rem; background: #1f6feb; color: #ffffff; \
            text-decoration: none; border-radius: 6px;">\(messages.html(key + ".button"))</a></p>
            <p style="font-size: 0.875rem;">\(escape(link))</p>
            <p>\(messages.html(key + ".after"))</p>
            <p style="font-size: 0.875rem; color: #59636e;">\(messages.html("mail.ignore"))</p>
            <p style="font-size: 0.875rem; color: #59636e;">\(messages.html("brand.name"))</p>
            </body>
            </html>
            """
    }
}

/// Queues account mail in the caller's write unit, within the per-address
/// limit. The message exists when the change that caused it commits, and
/// never when it rolls back.
struct AccountMailer {
    let settings: IssuerSettings

    /// The contract's "at most 5 messages per address per hour".
    static let limitPerHour = 5

    /// Queues `mail` unless `recipient` has had `limitPerHour` messages in
    /// the last hour; true when queued. Past the limit nothing is sent and
    /// the pages answer the same, so the limit tells nothing either. The
    /// address is held for the rest of the write unit first
    /// (MailOutboxStore.holdRecipient), so two requests racing for one
    /// address count each other's message on both backends.
    ///
    /// `limited: false` is for the one notice that must reach its owner
    /// however many messages went before: "your address was changed". An
    /// attacker holding a session could otherwise spend the old address's
    /// five messages on reset requests first, then move the account
    /// unnoticed. Such notices are bounded anyway: each follows a used link
    /// mailed, within the limit, to another address.
    func queue(_ mail: AccountMail, messages: Messages, now: Int64, _ tx: any IssuerWrites, limited: Bool = true) throws -> Bool {
        try tx.mailOutbox.holdRecipient(mail.recipient)
        guard try !limited || tx.mailOutbox.recentCount(recipient: mail.recipient, since: now - 3600) < Self.limitPerHour else { return false }
        let message = try mail.message(messages: messages, from: settings.mailFrom, brandName: settings.brandName, host: settings.host,
                                       now: now)
        _ = try tx.mailOutbox.enqueue(kind: mail.kind.outboxKind, recipient: mail.recipient, message: message.serialized(), now: now)
        return true
    }

    /// What `queue` does, short of queueing: for an address that gets no
    /// mail (no account, or none that may have one) where a known address
    /// would get one. The address is held and counted, the mail composed
    /// and a withheld row written (MailOutboxStore.withhold), so both
    /// answers cost the same statements, the same composition and a commit
    /// with a row: without it a known address's answer took 9 ms and an
    /// unknown one's 3.5 ms on PostgreSQL (a commit with nothing written
    /// flushes no WAL), which the enumeration test measured.
    func withhold(_ mail: AccountMail, reason: String, messages: Messages, now: Int64, _ tx: any IssuerWrites) throws {
        try tx.mailOutbox.holdRecipient(mail.recipient)
        _ = try tx.mailOutbox.recentCount(recipient: mail.recipient, since: now - 3600)
        _ = try? mail.message(messages: messages, from: settings.mailFrom, brandName: settings.brandName, host: settings.host, now: now)
            .serialized()
        try tx.mailOutbox.withhold(kind: mail.kind.outboxKind, recipient: mail.recipient, reason: reason, now: now)
    }

    /// A link to `path` on the issuer's origin carrying `token`.
    func link(_ path: String, token: String) -> String {
        settings.issuer + path + "?token=" + FormParser.encodeComponent(token)
    }
}
