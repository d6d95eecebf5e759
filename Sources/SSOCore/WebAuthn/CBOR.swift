/// A minimal CBOR (RFC 8949) decoder for what WebAuthn carries: the
/// attestation object (§6.5), a credential public key (a COSE_Key, RFC 9052
/// §7) and authenticator extension outputs (§6.1).
///
/// Refused on purpose: indefinite lengths, tags, floating-point numbers and
/// the simple values other than false, true and null (undefined included).
/// Authenticators encode in the CTAP2 canonical CBOR encoding form (CTAP 2.1
/// §8), which never uses indefinite lengths, and nothing WebAuthn defines is
/// a tag, a float or `undefined`; accepting them would only widen the input
/// a hostile client can reach us with. Heads that are longer than they need
/// be are accepted (well-formed in RFC 8949 §3, and signed over anyway).
///
/// Hostile input cannot crash it or make it allocate much: every length is
/// checked against the bytes that remain before anything is allocated,
/// nesting is limited (`maximumDepth`) and so is the number of data items
/// (`maximumItems`); integers outside `Int` and duplicate map keys are refused.
public enum CBOR {
    /// A COSE key is one map deep, extension outputs a few; 8 leaves room.
    public static let defaultMaximumDepth = 8
    /// Data items in one decode (map keys count): a COSE key has 10, an
    /// attestation object with `none` 4.
    public static let defaultMaximumItems = 1024

    /// Decodes the one data item `bytes` begins with; `rest` is what follows it.
    public static func decodeItem(_ bytes: ArraySlice<UInt8>, maximumDepth: Int = defaultMaximumDepth,
                                  maximumItems: Int = defaultMaximumItems) throws -> (value: CBORValue, rest: ArraySlice<UInt8>) {
        var reader = CBORReader(bytes: bytes, maximumDepth: maximumDepth, maximumItems: maximumItems)
        let value = try reader.item(depth: 1)
        return (value, bytes[reader.index...])
    }

    /// Decodes `bytes` as exactly one data item: anything after it is refused.
    public static func decode<Bytes: Collection>(_ bytes: Bytes, maximumDepth: Int = defaultMaximumDepth,
                                                 maximumItems: Int = defaultMaximumItems) throws -> CBORValue where Bytes.Element == UInt8 {
        let slice = ArraySlice(bytes)
        let (value, rest) = try decodeItem(slice, maximumDepth: maximumDepth, maximumItems: maximumItems)
        guard rest.isEmpty else { throw CBORError(.trailingBytes, at: rest.startIndex - slice.startIndex) }
        return value
    }
}

/// Why bytes were not decoded; `offset` is where, from the input's start.
public struct CBORError: Error, Equatable, CustomStringConvertible {
    public enum Reason: String, CaseIterable, Sendable {
        case truncated, reservedAdditionalInformation, indefiniteLength, tag, floatingPoint, unsupportedSimpleValue
        case integerOutOfRange, invalidUTF8, unsupportedMapKey, duplicateMapKey, tooDeep, tooManyItems, trailingBytes
    }
    public let reason: Reason
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "CBOR \(reason.rawValue) at byte \(offset)" }
}

/// A decoded data item. Integers are `Int` (RFC 8949 major types 0 and 1
/// both land here; anything beyond `Int` is refused when decoding).
public enum CBORValue: Equatable, Sendable {
    case int(Int)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([CBORMapKey: CBORValue])
    case bool(Bool)
    case null

    public var intValue: Int? { if case .int(let value) = self { value } else { nil } }
    public var bytesValue: [UInt8]? { if case .bytes(let value) = self { value } else { nil } }
    public var textValue: String? { if case .text(let value) = self { value } else { nil } }
    public var arrayValue: [CBORValue]? { if case .array(let value) = self { value } else { nil } }
    public var mapValue: [CBORMapKey: CBORValue]? { if case .map(let value) = self { value } else { nil } }

    /// A map's value for `key`; nil for a missing key or a value that is not a map.
    public subscript(key: CBORMapKey) -> CBORValue? { mapValue?[key] }

    /// Text compares by its UTF-8 bytes, never by Unicode canonical
    /// equivalence (Text/ByteEquality.swift).
    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        switch (lhs, rhs) {
        case let (.int(a), .int(b)): a == b
        case let (.bytes(a), .bytes(b)): a == b
        case let (.text(a), .text(b)): a.bytesEqual(b)
        case let (.array(a), .array(b)): a == b
        case let (.map(a), .map(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case (.null, .null): true
        default: false
        }
    }
}

/// A map key: WebAuthn's maps are keyed by integers (COSE labels) or text
/// (the attestation object, extension identifiers). Text keys are equal
/// and hash by their UTF-8 bytes, so "\u{212A}ty" is not "Kty".
public enum CBORMapKey: Hashable, Sendable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, CustomStringConvertible {
    case int(Int)
    case text(String)

    public init(integerLiteral value: Int) { self = .int(value) }
    public init(stringLiteral value: String) { self = .text(value) }

    public static func == (lhs: CBORMapKey, rhs: CBORMapKey) -> Bool {
        switch (lhs, rhs) {
        case let (.int(a), .int(b)): a == b
        case let (.text(a), .text(b)): a.bytesEqual(b)
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .int(let value):
            hasher.combine(0 as UInt8)
            hasher.combine(value)
        case .text(let value):
            hasher.combine(1 as UInt8)
            for byte in value.utf8 { hasher.combine(byte) }
            hasher.combine(value.utf8.count)
        }
    }

    public var description: String {
        switch self {
        case .int(let value): "\(value)"
        case .text(let value): value.debugDescription
        }
    }

    var value: CBORValue {
        switch self {
        case .int(let value): .int(value)
        case .text(let value): .text(value)
        }
    }
}

/// One pass over the input; `index` is where the next byte is read.
struct CBORReader {
    let bytes: ArraySlice<UInt8>
    let maximumDepth: Int
    let maximumItems: Int
    private(set) var index: Int
    private var items = 0

    init(bytes: ArraySlice<UInt8>, maximumDepth: Int, maximumItems: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.maximumItems = maximumItems
        index = bytes.startIndex
    }

    private var remaining: Int { bytes.endIndex - index }
    private var offset: Int { index - bytes.startIndex }

    private func error(_ reason: CBORError.Reason, at position: Int? = nil) -> CBORError {
        CBORError(reason, at: (position ?? index) - bytes.startIndex)
    }

    private mutating func byte() throws -> UInt8 {
        guard index < bytes.endIndex else { throw error(.truncated) }
        defer { index += 1 }
        return bytes[index]
    }

    /// RFC 8949 §3: the head's argument, in the additional information
    /// (0-23) or the 1, 2, 4 or 8 bytes after it (24-27).
    private mutating func argument(_ info: UInt8, major: UInt8, at start: Int) throws -> UInt64 {
        switch info {
        case 0..<24:
            return UInt64(info)
        case 24...27:
            let count = 1 << Int(info - 24)
            guard remaining >= count else { throw error(.truncated) }
            var value: UInt64 = 0
            for _ in 0..<count { value = value << 8 | UInt64(try byte()) }
            return value
        case 31 where (2...5).contains(major):
            throw error(.indefiniteLength, at: start)
        default:
            // 28-30 are reserved; 31 with major types 0, 1 and 6 is not well-formed.
            throw error(.reservedAdditionalInformation, at: start)
        }
    }

    /// `count` bytes, checked against what remains before anything is copied.
    private mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
        guard count <= UInt64(remaining) else { throw error(.truncated) }
        let end = index + Int(count)
        defer { index = end }
        return bytes[index..<end]
    }

    mutating func item(depth: Int) throws -> CBORValue {
        guard depth <= maximumDepth else { throw error(.tooDeep) }
        items += 1
        guard items <= maximumItems else { throw error(.tooManyItems) }
        let start = index
        let initial = try byte()
        let major = initial >> 5, info = initial & 0x1F
        switch major {
        case 0:
            let value = try argument(info, major: major, at: start)
            guard value <= UInt64(Int.max) else { throw error(.integerOutOfRange, at: start) }
            return .int(Int(value))
        case 1:
            // -1 - n: n up to Int.max gives down to Int.min.
            let value = try argument(info, major: major, at: start)
            guard value <= UInt64(Int.max) else { throw error(.integerOutOfRange, at: start) }
            return .int(-1 - Int(value))
        case 2:
            return .bytes(Array(try take(try argument(info, major: major, at: start))))
        case 3:
            let text = try take(try argument(info, major: major, at: start))
            guard let string = String(validating: text, as: UTF8.self) else { throw error(.invalidUTF8, at: start) }
            return .text(string)
        case 4:
            let count = try argument(info, major: major, at: start)
            // Each element takes a byte at least: a longer count is truncated
            // input, found before a loop or an allocation of that size.
            guard count <= UInt64(remaining) else { throw error(.truncated) }
            var elements: [CBORValue] = []
            for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
            return .array(elements)
        case 5:
            let count = try argument(info, major: major, at: start)
            guard count <= UInt64(remaining / 2) else { throw error(.truncated) }
            var entries: [CBORMapKey: CBORValue] = [:]
            for _ in 0..<count {
                let keyStart = index
                let key: CBORMapKey
                switch try item(depth: depth + 1) {
                case .int(let value): key = .int(value)
                case .text(let value): key = .text(value)
                default: throw error(.unsupportedMapKey, at: keyStart)
                }
                // RFC 8949 §5.6: a map with duplicate keys is not valid.
                guard entries[key] == nil else { throw error(.duplicateMapKey, at: keyStart) }
                entries[key] = try item(depth: depth + 1)
            }
            return .map(entries)
        case 6:
            throw error(.tag, at: start)
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 25, 26, 27: throw error(.floatingPoint, at: start)
            case 28, 29, 30: throw error(.reservedAdditionalInformation, at: start)
            case 31: throw error(.indefiniteLength, at: start)  // a "break" outside an indefinite-length item
            default: throw error(.unsupportedSimpleValue, at: start)  // undefined (23) and the unassigned ones
            }
        }
    }
}

extension CBORValue {
    /// The CTAP2 canonical encoding (CTAP 2.1 §8; RFC 8949 §4.2.3's
    /// length-first ordering): shortest heads, map keys sorted by their
    /// encodings, shorter first, then byte by byte. What the tests and the
    /// fuzz target build inputs with; decoding it gives this value back.
    public var encoded: [UInt8] {
        var output: [UInt8] = []
        encode(into: &output)
        return output
    }

    private func encode(into output: inout [UInt8]) {
        switch self {
        case .int(let value):
            if value >= 0 { Self.head(0, UInt64(value), into: &output) } else { Self.head(1, UInt64(-1 - value), into: &output) }
        case .bytes(let value):
            Self.head(2, UInt64(value.count), into: &output)
            output += value
        case .text(let value):
            Self.head(3, UInt64(value.utf8.count), into: &output)
            output += value.utf8
        case .array(let elements):
            Self.head(4, UInt64(elements.count), into: &output)
            for element in elements { element.encode(into: &output) }
        case .map(let entries):
            Self.head(5, UInt64(entries.count), into: &output)
            let sorted = entries.map { (key: $0.key.value.encoded, value: $0.value) }.sorted { a, b in
                a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
            }
            for entry in sorted {
                output += entry.key
                entry.value.encode(into: &output)
            }
        case .bool(let value):
            output.append(value ? 0xF5 : 0xF4)
        case .null:
            output.append(0xF6)
        }
    }

    private static func head(_ major: UInt8, _ argument: UInt64, into output: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: output.append(type | UInt8(argument))
        case 24...0xFF: output += [type | 24, UInt8(argument)]
        case 0x100...0xFFFF: output += [type | 25] + bigEndian(argument, bytes: 2)
        case 0x1_0000...0xFFFF_FFFF: output += [type | 26] + bigEndian(argument, bytes: 4)
        default: output += [type | 27] + bigEndian(argument, bytes: 8)
        }
    }

    private static func bigEndian(_ value: UInt64, bytes count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
