/// One message, built and serialised once (RFC 5322, MIME per RFC 2045 and
/// RFC 2046): `From`, `To`, `Subject`, `Date`, `Message-ID`, `MIME-Version`,
/// and a `multipart/alternative` body of a `text/plain` part and a
/// `text/html` part, both UTF-8 in quoted-printable.
///
/// Header injection is impossible by construction: every value that came
/// from outside (addresses, display names, the subject) is checked by
/// `MailAddress` or here before anything is written, controls are refused
/// rather than stripped, and non-ASCII text travels only inside RFC 2047
/// encoded-words. The bodies cannot end the headers or a part early either:
/// quoted-printable leaves no bare CR, LF or boundary-like line in them.
///
/// The serialised bytes use CRLF line ends and are what an `.eml` file
/// holds. They are not dot-stuffed: SMTP's transparency (RFC 5321 §4.5.2)
/// is the transport's job, and libcurl does it for SMTP uploads.
public struct MailMessage: Sendable {
    public let from: MailAddress
    public let to: MailAddress
    /// `<random@domain>`, angle brackets included, as in the header.
    public let messageID: String
    /// Seconds since the epoch, as in the `Date` header.
    public let date: Int64
    private let bytes: [UInt8]

    /// - Parameters:
    ///   - subject: any text without controls (CR, LF, NUL, ...); non-ASCII is fine.
    ///   - text: the `text/plain` part; line ends of any kind.
    ///   - html: the `text/html` part, already escaped by its template.
    ///   - date: now, in seconds since the epoch (the caller's clock).
    ///   - messageIDDomain: the right-hand side of the Message-ID, the issuer's host.
    /// - Throws: `MailMessageError` for a subject with controls or a domain
    ///   that is not a host name; `MailAddress` has checked the addresses.
    public init(from: MailAddress, to: MailAddress, subject: String, text: String, html: String,
                date: Int64, messageIDDomain: String) throws {
        try MailHeaderText.refuseControls(subject, as: .invalidSubject, field: "subject")
        try MailAddress.checkDomain(messageIDDomain)
        self.from = from
        self.to = to
        self.date = date
        // RFC 5322 §3.6.4: id-left is a dot-atom-text; base64url is atext.
        messageID = "<" + SecureRandom.token(byteCount: 18) + "@" + messageIDDomain + ">"

        let parts = [("text/plain", QuotedPrintable.encode(text)), ("text/html", QuotedPrintable.encode(html))]
        // RFC 2046 §5.1.1: the boundary must not occur in the encapsulated
        // parts. "=_" cannot occur in quoted-printable ("=" is always
        // followed by hex digits or a line end), so one draw always does;
        // the check keeps that true if the encoding ever changes.
        var boundary: String
        repeat {
            boundary = "=_" + SecureRandom.token(byteCount: 18)
        } while parts.contains { Self.contains($0.1, Array(boundary.utf8)) }

        var head = MailHeaderText.field("Date", [MailDate.rfc5322(date)])
        head += Self.addressField("From", from)
        head += Self.addressField("To", to)
        head += MailHeaderText.field("Subject", MailHeaderText.unstructuredTokens(subject, headerName: "Subject"))
        head += MailHeaderText.field("Message-ID", [messageID])
        head += MailHeaderText.field("MIME-Version", ["1.0"])
        head += MailHeaderText.field("Content-Type", ["multipart/alternative;", "boundary=\"\(boundary)\""])
        var bytes = Array((head + "\r\n").utf8)
        for (type, body) in parts {
            bytes += Array(("--\(boundary)\r\n" + "Content-Type: \(type); charset=utf-8\r\n"
                + "Content-Transfer-Encoding: quoted-printable\r\n\r\n").utf8)
            bytes += body
            bytes += [13, 10]
        }
        bytes += Array("--\(boundary)--\r\n".utf8)
        self.bytes = bytes
    }

    /// The whole message: headers, blank line, body; CRLF line ends.
    public func serialized() -> [UInt8] { bytes }

    /// RFC 5322 §3.4: `name-addr = [display-name] angle-addr`, or the bare
    /// addr-spec when there is no name.
    private static func addressField(_ name: String, _ mailbox: MailAddress) -> String {
        guard let displayName = mailbox.displayName else { return MailHeaderText.field(name, [mailbox.address]) }
        return MailHeaderText.field(name, MailHeaderText.phraseTokens(displayName, headerName: name) + ["<\(mailbox.address)>"])
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}
