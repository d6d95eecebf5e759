/// A message as the outbox holds it: the serialized bytes `MailMessage`
/// made when it was queued, and the envelope read back from them. The
/// sender delivers exactly these bytes, so a retry is the same message
/// (same `Message-ID`, same `Date`) and never a second one built anew.
///
/// Only what the sender needs is read: the `From` address (the envelope's
/// MAIL FROM, as when the message was queued, whatever the configuration
/// says now) and the `Message-ID` (the drop directory's file name). Both
/// are checked again (`MailAddress`, a bracketed id of printable ASCII):
/// the bytes come from the database, and nothing unchecked may reach an
/// SMTP command line.
public struct QueuedMail: Sendable {
    public let bytes: [UInt8]
    public let from: MailAddress
    public let to: MailAddress
    /// `<...>`, angle brackets included, as in the header.
    public let messageID: String

    /// - Parameter recipient: the outbox row's recipient (the envelope's RCPT TO).
    /// - Throws: `MailMessageError` when the bytes have no usable `From` or
    ///   `Message-ID` header, or the recipient is not an address.
    public init(bytes: [UInt8], recipient: String) throws {
        let fields = Self.headerFields(bytes)
        guard let from = fields["from"] else { throw MailMessageError(.invalidAddress, detail: "the queued message has no From header") }
        guard let id = fields["message-id"], id.hasPrefix("<"), id.hasSuffix(">"), id.utf8.count <= 250,
              id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw MailMessageError(.invalidAddress, detail: "the queued message has no usable Message-ID header")
        }
        self.bytes = bytes
        self.from = try MailAddress(Self.addrSpec(from))
        to = try MailAddress(recipient)
        messageID = id
    }

    /// The message `message` makes, as the outbox would hand it back.
    public init(_ message: MailMessage) {
        bytes = message.serialized()
        from = MailAddress.bare(message.from)
        to = MailAddress.bare(message.to)
        messageID = message.messageID
    }

    /// RFC 5322 §2.2: the header section ends at the first empty line;
    /// §2.2.3: a folded field is unfolded by removing each CRLF that is
    /// followed by white space. Names are compared case-insensitively; the
    /// first of a repeated field counts. Values are trimmed.
    static func headerFields(_ bytes: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        var current: (name: String, value: String)?
        func finish() {
            if let field = current, fields[field.name] == nil { fields[field.name] = field.value.trimmingASCIIWhitespace() }
            current = nil
        }
        // Bytes, not Characters: Swift takes CRLF for one Character.
        for raw in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let line = raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw
            if line.isEmpty { break }
            if line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t") {
                current?.value += String(decoding: line, as: UTF8.self)
                continue
            }
            finish()
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            current = (String(decoding: line[..<colon], as: UTF8.self).lowercased(), String(decoding: line[(colon + 1)...], as: UTF8.self))
        }
        finish()
        return fields
    }

    /// RFC 5322 §3.4: `[display-name] <addr-spec>` or a bare addr-spec.
    /// The display name may hold `<` only inside an encoded-word, which
    /// MailMessage writes without angle brackets, so the last `<` starts
    /// the address.
    static func addrSpec(_ value: String) -> String {
        guard let open = value.lastIndex(of: "<"), let close = value[open...].firstIndex(of: ">") else { return value }
        return String(value[value.index(after: open)..<close])
    }
}

extension MailAddress {
    /// The address alone (an envelope has no display names).
    static func bare(_ mailbox: MailAddress) -> MailAddress {
        mailbox.displayName == nil ? mailbox : (try? MailAddress(mailbox.address)) ?? mailbox
    }
}
