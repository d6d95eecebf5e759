import FoundationEssentials

/// Where mail goes and whom it is from (README "Configuration"):
/// `GATEHOUSE_SMTP_URL` (unset: the drop directory `$GATEHOUSE_HOME/mail/`)
/// and `GATEHOUSE_MAIL_FROM` (an address, or `Name <address>`; default
/// `no-reply@` the issuer's host). Read like every other setting: the
/// environment over `$GATEHOUSE_HOME/gatehouse.conf`.
public struct MailSettings: Sendable {
    /// The SMTP server URL, credentials and all: never log it (log
    /// `SMTPServerURL.description` instead). nil: the drop directory.
    public let smtpURL: String?
    public let from: MailAddress
    /// The right-hand side of every Message-ID: the issuer's host.
    public let messageIDDomain: String
    /// `$GATEHOUSE_HOME/mail`.
    public let dropDirectory: String

    public init(smtpURL: String?, from: MailAddress, messageIDDomain: String, dropDirectory: String) {
        self.smtpURL = smtpURL
        self.from = from
        self.messageIDDomain = messageIDDomain
        self.dropDirectory = dropDirectory
    }

    public static func load(_ config: GatehouseConfig, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> MailSettings {
        var values = (try? GatehouseConfig.readConfFile(config.home + "/gatehouse.conf")) ?? [:]
        for (key, value) in environment where key.hasPrefix("GATEHOUSE_") { values[key] = value }
        return try MailSettings(config, values: values)
    }

    public init(_ config: GatehouseConfig, values: [String: String]) throws {
        guard let host = URLComponents(string: config.issuer)?.host, (try? MailAddress.checkDomain(host)) != nil else {
            throw ConfigError("the issuer's host cannot be the domain of a mail address or Message-ID")
        }
        smtpURL = values["GATEHOUSE_SMTP_URL"].flatMap { $0.isEmpty ? nil : $0 }
        messageIDDomain = host
        dropDirectory = config.home + "/mail"
        let fromText = values["GATEHOUSE_MAIL_FROM"].flatMap { $0.isEmpty ? nil : $0 } ?? "no-reply@" + host
        do {
            from = try Self.mailbox(fromText)
        } catch {
            throw ConfigError("GATEHOUSE_MAIL_FROM must be an address or Name <address>: \(error)")
        }
    }

    /// `address` or `Display Name <address>`.
    public static func mailbox(_ text: String) throws -> MailAddress {
        let trimmed = text.trimmingASCIIWhitespace()
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else { return try MailAddress(trimmed) }
        let name = trimmed[..<open].trimmingASCIIWhitespace()
        let unquoted = name.count >= 2 && name.hasPrefix("\"") && name.hasSuffix("\"") ? String(name.dropFirst().dropLast()) : name
        return try MailAddress(String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]),
                               displayName: unquoted.isEmpty ? nil : unquoted)
    }
}
