import FoundationEssentials
import SSOCore

/// A request body of the admin API, read strictly: a JSON object in an
/// `application/json` body (PATCH: also `application/merge-patch+json`,
/// RFC 7396), at most `maximumSize` bytes, whose members the operation
/// names in advance. A member it does not know, or one of the wrong type,
/// is refused by name: a typo must never silently do nothing.
struct AdminBody {
    static let maximumSize = 64 * 1024

    let members: [String: JSONValue]

    /// `allowEmpty`: an operation whose body is optional (a new client
    /// secret made for the caller) takes no body as `{}`.
    init(_ request: Request, allowEmpty: Bool = false) throws {
        guard request.body.count <= Self.maximumSize else {
            throw AdminProblem(413, nil, "Content Too Large", "the body is over \(Self.maximumSize) bytes")
        }
        if request.body.isEmpty && allowEmpty && request.header("content-type") == nil {
            members = [:]
            return
        }
        let type = request.header("content-type")?.split(separator: ";").first?.trimmingASCIIWhitespace().lowercased()
        let accepted = request.method == "PATCH" ? ["application/json", "application/merge-patch+json"] : ["application/json"]
        guard let type, accepted.contains(type) else {
            throw AdminProblem(415, nil, "Unsupported Media Type", "the body must be \(accepted.joined(separator: " or "))")
        }
        guard let object = try? JSON.decoder.decode([String: JSONValue].self, from: Data(request.body)) else {
            throw AdminProblem.malformed("the body is not a JSON object")
        }
        // RFC 8259 §4: "The names within an object SHOULD be unique"; the
        // decoder would keep one of two silently, while a proxy or policy in
        // front may have read the other.
        if let name = JSONDuplicateMembers.first(in: request.body) {
            throw AdminProblem.malformed("the member \(name.debugDescription) appears twice in one object")
        }
        members = object
    }

    /// Refuses any member outside `known` (and names the first, in order,
    /// so the answer is the same every time); `readOnly` members are named
    /// as such.
    func allowOnly(_ known: Set<String>, readOnly: Set<String> = []) throws {
        for name in members.keys.sorted() where !known.contains(name) {
            throw readOnly.contains(name) ? AdminProblem.readOnlyMember(name) : AdminProblem.unknownMember(name)
        }
    }

    func has(_ name: String) -> Bool { members[name] != nil }

    /// A value that may be absent (nil) but never null.
    func string(_ name: String) throws -> String? {
        switch members[name] {
        case nil: return nil
        case .string(let value): return value
        default: throw AdminProblem.wrongType(name, expected: "a string")
        }
    }

    /// Absent: nil; `null`: .some(nil), which resets the setting.
    func nullableString(_ name: String) throws -> String?? {
        switch members[name] {
        case nil: return nil
        case .null: return .some(nil)
        case .string(let value): return .some(value)
        default: throw AdminProblem.wrongType(name, expected: "a string or null")
        }
    }

    func bool(_ name: String) throws -> Bool? {
        switch members[name] {
        case nil: return nil
        case .bool(let value): return value
        default: throw AdminProblem.wrongType(name, expected: "true or false")
        }
    }

    func strings(_ name: String) throws -> [String]? {
        switch members[name] {
        case nil: return nil
        case .array(let values):
            return try values.map { value in
                guard case .string(let text) = value else { throw AdminProblem.wrongType(name, expected: "an array of strings") }
                return text
            }
        default: throw AdminProblem.wrongType(name, expected: "an array of strings")
        }
    }

    /// A whole number of seconds; `null` (when allowed) resets it.
    func nullableInteger(_ name: String) throws -> Int?? {
        switch members[name] {
        case nil: return nil
        case .null: return .some(nil)
        case .number(let value):
            guard value.rounded() == value, abs(value) < 1e15 else { throw AdminProblem.wrongType(name, expected: "a whole number or null") }
            return .some(Int(value))
        default: throw AdminProblem.wrongType(name, expected: "a whole number or null")
        }
    }

    /// A JSON object, as its JSON text (a JWK Set).
    func objectText(_ name: String) throws -> String? {
        switch members[name] {
        case nil: return nil
        case .object(let object): return String(decoding: try JSON.encode(object), as: UTF8.self)
        default: throw AdminProblem.wrongType(name, expected: "a JSON object")
        }
    }

    /// A member that must be there.
    func required<Value>(_ name: String, _ read: (String) throws -> Value?) throws -> Value {
        guard let value = try read(name) else {
            throw AdminProblem(400, .invalidValue, "Invalid value", "the body needs \(name.debugDescription)", member: name)
        }
        return value
    }
}

/// Finds a member name given twice in one object, at any depth, of a JSON
/// text already known to be valid (the decoder read it first). Names are
/// compared as Swift strings, as the decoder's dictionary compares them,
/// so two spellings it would merge count as one name given twice.
enum JSONDuplicateMembers {
    static func first(in bytes: [UInt8]) -> String? {
        // One entry per open container: the names seen so far in an
        // object, nil for an array.
        var open: [Set<String>?] = []
        var expectingName = false
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                open.append([])
                expectingName = true
            case UInt8(ascii: "["):
                open.append(nil)
                expectingName = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                open.removeLast()
                expectingName = false
            case UInt8(ascii: ","):
                expectingName = open.last.map { $0 != nil } ?? false
            case UInt8(ascii: "\""):
                let end = endOfString(bytes, from: index)
                if expectingName, let last = open.last, var names = last {
                    let name = (try? JSON.decoder.decode(String.self, from: Data(bytes[index..<end])))
                        ?? String(decoding: bytes[index..<end], as: UTF8.self)
                    if names.contains(name) { return name }
                    names.insert(name)
                    open[open.count - 1] = names
                    expectingName = false
                }
                index = end
                continue
            default: break
            }
            index += 1
        }
        return nil
    }

    /// The index just past the string that opens at `start` (a quote).
    static func endOfString(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start + 1
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
        }
        return min(index + 1, bytes.count)
    }
}
