import SSOCore

/// Why a new password is refused: a key of the message catalogue the forms
/// show (`password_rule.*`) and a plain sentence for `ssoctl`.
public struct PasswordRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case tooShort = "too_short"
        case tooLong = "too_long"
        case common
        case email
    }

    public let reason: Reason

    /// The catalogue key of the form's message.
    public var messageKey: String { "password_rule." + reason.rawValue }

    public var description: String {
        switch reason {
        case .tooShort: "the password must have at least \(PasswordPolicy.minimumLength) characters"
        case .tooLong: "the password must have at most \(PasswordPolicy.maximumLength) characters"
        case .common: "the password is one of the 10,000 most common passwords; choose another"
        case .email: "the password must not be the account's email address"
        }
    }
}

/// The rules every new password meets, wherever it is set (sign-up,
/// reset, invitation, /account, `ssoctl user add` and `passwd`).
///
/// NIST SP 800-63B §5.1.1.2 (the rules SP 800-63B-4 §3.1.1.2 keeps for
/// passwords): "Verifiers SHALL require subscriber-chosen memorized secrets
/// to be at least 8 characters in length. Verifiers SHOULD permit
/// subscriber-chosen memorized secrets at least 64 characters in length.
/// All printing ASCII [RFC 20] characters as well as the space character
/// SHOULD be acceptable in memorized secrets. Unicode [ISO/ISC 10646]
/// characters SHOULD be accepted as well. […] For purposes of the above
/// length requirements, each Unicode code point SHALL be counted as a
/// single character." And: "When processing requests to establish and
/// change memorized secrets, verifiers SHALL compare the prospective
/// secrets against a list that contains values known to be commonly-used,
/// expected, or compromised."
///
/// So: length in Unicode code points (scalars, not grapheme clusters: an
/// emoji with a skin tone is two), 8 to 256; any character; no composition
/// rules; refused if it is one of the 10,000 most common passwords or the
/// account's email address, both compared case-insensitively (a list of
/// lower-case words also refuses "Password1"'s "PASSWORD" spelling; never
/// weaker than an exact match). 256 code points are at most 1,024 bytes of
/// UTF-8, so one sign-in never hashes more than that.
public enum PasswordPolicy {
    public static let minimumLength = 8
    public static let maximumLength = 256

    /// Nil when `password` may be set for the account `email`.
    public static func refusal(of password: String, email: String) -> PasswordRefusal? {
        let length = password.unicodeScalars.count
        guard length >= minimumLength else { return PasswordRefusal(reason: .tooShort) }
        guard length <= maximumLength else { return PasswordRefusal(reason: .tooLong) }
        let folded = password.lowercased()
        if CommonPasswords.contains(folded) { return PasswordRefusal(reason: .common) }
        if !email.isEmpty, folded == email.lowercased() { return PasswordRefusal(reason: .email) }
        return nil
    }

    public static func check(_ password: String, email: String) throws {
        if let refusal = refusal(of: password, email: email) { throw refusal }
    }
}

/// The shipped list (Users/CommonPasswords/common-passwords.txt, compiled
/// in by SwiftPM), read once into a set.
enum CommonPasswords {
    static let all: Set<String> = {
        let text = String(decoding: PackageResources.common_passwords_txt, as: UTF8.self)
        return Set(text.split(separator: "\n", omittingEmptySubsequences: true).map { String($0).lowercased() })
    }()

    static func contains(_ folded: String) -> Bool { all.contains(folded) }
}
