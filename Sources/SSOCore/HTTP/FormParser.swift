/// Limits that keep a form from costing more than its worth to parse.
public struct FormLimits: Sendable {
    public var maximumBytes: Int
    public var maximumParameters: Int
    public var maximumValueBytes: Int
    public init(maximumBytes: Int, maximumParameters: Int, maximumValueBytes: Int) {
        self.maximumBytes = maximumBytes
        self.maximumParameters = maximumParameters
        self.maximumValueBytes = maximumValueBytes
    }
    public static let standard = FormLimits(maximumBytes: 64 * 1024, maximumParameters: 64, maximumValueBytes: 8 * 1024)
}

public struct FormError: Error, CustomStringConvertible {
    public enum Code: String, Sendable {
        case tooLarge, tooManyParameters, badEncoding, repeatedParameter, unsupportedMediaType, controlCharacter
    }
    public let code: Code
    public let detail: String
    /// The parameter at fault, when there is one (repeated, control character).
    public let parameter: String?
    public init(_ code: Code, detail: String, parameter: String? = nil) {
        self.code = code
        self.detail = detail
        self.parameter = parameter
    }
    public var description: String { "\(code.rawValue): \(detail)" }
}

/// Decoded parameters. OAuth forbids repeating a parameter (RFC 6749 §3.1:
/// "Request and response parameters MUST NOT be included more than once"),
/// so `single` refuses repeats instead of silently picking one.
public struct FormParameters: Sendable {
    public private(set) var pairs: [(name: String, value: String)] = []

    public init(pairs: [(name: String, value: String)] = []) { self.pairs = pairs }

    public func values(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

    /// The one value of `name`, `nil` when absent or empty (RFC 6749 §3.1:
    /// "Parameters sent without a value MUST be treated as if they were
    /// omitted from the request"); throws when repeated, and when the value
    /// holds a control character.
    ///
    /// No protocol parameter (identifiers, URIs, scopes, codes, tokens,
    /// state, email addresses) has any use for a control character, and one
    /// byte of them once split an account in two: `alice@example.com%00x`
    /// had a lock counter of its own while a C API that stops at NUL found
    /// alice. So they are refused here, before any lookup or counter sees
    /// the value, rather than by each caller.
    public func single(_ name: String) throws -> String? {
        guard let value = try singleAllowingControlCharacters(name) else { return nil }
        if let offset = Self.firstControlCharacter(in: value) {
            throw FormError(.controlCharacter, detail: "\(name) has a control character at byte \(offset)", parameter: name)
        }
        return value
    }

    /// `single` for the one kind of value that is not an identifier and is
    /// never compared as text: a password, hashed as the bytes typed.
    public func singleAllowingControlCharacters(_ name: String) throws -> String? {
        var found: String?
        for pair in pairs where pair.name == name && !pair.value.isEmpty {
            if found != nil { throw FormError(.repeatedParameter, detail: name, parameter: name) }
            found = pair.value
        }
        return found
    }

    /// The byte offset of the first C0 control, DEL or C1 control (Unicode
    /// general category Cc), if any.
    public static func firstControlCharacter(in value: String) -> Int? {
        var offset = 0
        for scalar in value.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return offset }
            offset += UTF8.width(scalar)
        }
        return nil
    }

    public var names: [String] { pairs.map(\.name) }

    /// Why `single` would refuse the first of `names` it refuses (repeated,
    /// or a control character), nil when it refuses none: for a handler
    /// that answers a malformed field its own way before reading any.
    public func fieldError(_ names: [String]) -> FormError? {
        for name in names {
            do { _ = try single(name) } catch let error as FormError { return error } catch {}
        }
        return nil
    }
}

/// application/x-www-form-urlencoded (WHATWG URL §5.1), strict: a malformed
/// percent escape or invalid UTF-8 is an error, not a replacement character.
public enum FormParser {
    public static func parse(_ bytes: [UInt8], limits: FormLimits = .standard) throws -> FormParameters {
        guard bytes.count <= limits.maximumBytes else { throw FormError(.tooLarge, detail: "\(bytes.count) bytes") }
        var pairs: [(name: String, value: String)] = []
        for field in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            guard pairs.count < limits.maximumParameters else { throw FormError(.tooManyParameters, detail: "over \(limits.maximumParameters)") }
            let separator = field.firstIndex(of: UInt8(ascii: "="))
            let rawName = separator.map { field[field.startIndex..<$0] } ?? field[...]
            let rawValue = separator.map { field[field.index(after: $0)...] } ?? []
            guard rawValue.count <= limits.maximumValueBytes * 3 else { throw FormError(.tooLarge, detail: "value too long") }
            let name = try decode(rawName)
            let value = try decode(rawValue)
            guard value.utf8.count <= limits.maximumValueBytes, name.utf8.count <= 256 else {
                throw FormError(.tooLarge, detail: "value too long")
            }
            pairs.append((name, value))
        }
        return FormParameters(pairs: pairs)
    }

    public static func decode(_ raw: ArraySlice<UInt8>) throws -> String {
        var output = [UInt8]()
        output.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            let byte = raw[index]
            switch byte {
            case UInt8(ascii: "+"):
                output.append(UInt8(ascii: " "))
                index += 1
            case UInt8(ascii: "%"):
                guard index + 2 < raw.endIndex,
                      let high = hexValue(raw[index + 1]), let low = hexValue(raw[index + 2]) else {
                    throw FormError(.badEncoding, detail: "bad percent escape")
                }
                output.append(high << 4 | low)
                index += 3
            default:
                output.append(byte)
                index += 1
            }
        }
        guard let text = String(validating: output, as: UTF8.self) else { throw FormError(.badEncoding, detail: "invalid UTF-8") }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Percent-encodes for a query component: everything but RFC 3986
    /// unreserved characters, so CR, LF, `&`, `#` and quotes never survive raw.
    public static func encodeComponent(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                output.unicodeScalars.append("%")
                output.unicodeScalars.append(hex[Int(byte >> 4)])
                output.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return output
    }

    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { encodeComponent($0.0) + "=" + encodeComponent($0.1) }.joined(separator: "&")
    }
}
