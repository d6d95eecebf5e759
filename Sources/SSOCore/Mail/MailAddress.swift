/// One mailbox: an addr-spec and an optional display name, both checked
/// here, so a `MailAddress` that exists can be written into a header as it
/// is. Conservative on purpose (what a sign-up form needs, not all of
/// RFC 5322): `local@domain`, ASCII only, a dot-atom local part (no quoted
/// local parts, so no spaces, quotes, angle brackets or commas), and a
/// host name of letters, digits and hyphens. Internationalised domains are
/// refused for now; their punycode (`xn--`) form is accepted.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The addr-spec, as given: `local@domain`.
    public let address: String
    /// nil when none was given (or it was empty).
    public let displayName: String?

    public init(_ address: String, displayName: String? = nil) throws {
        try Self.checkAddrSpec(address)
        if let displayName {
            try MailHeaderText.refuseControls(displayName, as: .invalidDisplayName, field: "display name")
        }
        self.address = address
        self.displayName = displayName?.isEmpty == true ? nil : displayName
    }

    public var description: String { address }

    /// RFC 5321 §4.5.3.1: a local part of at most 64 octets, a path of at
    /// most 256 (so an address of at most 254 between the angle brackets).
    static func checkAddrSpec(_ address: String) throws {
        let bytes = Array(address.utf8)
        guard bytes.count <= 254 else { throw MailMessageError(.invalidAddress, detail: "longer than 254 octets") }
        guard let at = bytes.lastIndex(of: UInt8(ascii: "@")) else {
            throw MailMessageError(.invalidAddress, detail: "no @")
        }
        let local = bytes[..<at], domain = bytes[(at + 1)...]
        guard (1...64).contains(local.count) else { throw MailMessageError(.invalidAddress, detail: "local part of \(local.count) octets") }
        // RFC 5322 §3.4.1 and §3.2.3: local-part = dot-atom, atoms of atext.
        guard local.allSatisfy({ isAtext($0) || $0 == UInt8(ascii: ".") }) else {
            throw MailMessageError(.invalidAddress, detail: "local part has a character outside atext")
        }
        guard local.first != UInt8(ascii: "."), local.last != UInt8(ascii: "."),
              !zip(local, local.dropFirst()).contains(where: { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }) else {
            throw MailMessageError(.invalidAddress, detail: "local part is not a dot-atom")
        }
        do {
            try checkDomain(domain)
        } catch let error as MailMessageError {
            throw MailMessageError(.invalidAddress, detail: "domain: \(error.detail)")
        }
    }

    /// A host name (RFC 1123 §2.1): dot-separated labels of 1 to 63
    /// letters, digits and hyphens, not starting or ending with a hyphen,
    /// at most 253 octets. No address literals (`[192.0.2.1]`), no trailing
    /// dot, no IDN in Unicode form.
    static func checkDomain(_ domain: ArraySlice<UInt8>) throws {
        guard (1...253).contains(domain.count) else { throw MailMessageError(.invalidDomain, detail: "\(domain.count) octets") }
        for label in domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard (1...63).contains(label.count) else { throw MailMessageError(.invalidDomain, detail: "a label of \(label.count) octets") }
            guard label.allSatisfy({ isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }),
                  label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else {
                throw MailMessageError(.invalidDomain, detail: "a label outside letters, digits and inner hyphens")
            }
        }
    }

    static func checkDomain(_ domain: String) throws { try checkDomain(Array(domain.utf8)[...]) }

    static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// RFC 5322 §3.2.3 atext.
    static func isAtext(_ byte: UInt8) -> Bool {
        isLetterOrDigit(byte) || atextSymbols.contains(byte)
    }

    private static let atextSymbols = Set("!#$%&'*+-/=?^_`{|}~".utf8)
}
