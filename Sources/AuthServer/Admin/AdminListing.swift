import IssuerStorage
import SSOCore

/// A list request's query: its filters, `limit` (1 to 200, default 50) and
/// `next`, the cursor the previous page gave. Any other parameter is
/// refused (`?emial=` must not quietly list everyone).
struct AdminListQuery {
    static let defaultLimit = 50
    static let maximumLimit = 200

    let filters: [String: String]
    let limit: Int
    /// The sort key the previous page ended at (decoded from the cursor).
    let after: String?

    init(_ parameters: FormParameters, filters names: [String]) throws {
        let known = Set(names + ["limit", "next"])
        if let unknown = parameters.names.first(where: { !known.contains($0) }) {
            throw AdminProblem.invalidQuery("unknown query parameter \(unknown.debugDescription) (this list takes \(known.sorted().joined(separator: ", ")))")
        }
        var filters: [String: String] = [:]
        for name in names {
            if let value = try Self.single(parameters, name) { filters[name] = value }
        }
        self.filters = filters
        if let text = try Self.single(parameters, "limit") {
            guard text.utf8.count <= 3, let value = Int(text), (1...Self.maximumLimit).contains(value) else {
                throw AdminProblem.invalidQuery("limit is a whole number from 1 to \(Self.maximumLimit): \(text.debugDescription)")
            }
            limit = value
        } else {
            limit = Self.defaultLimit
        }
        after = try Self.single(parameters, "next").map(AdminCursor.decode)
    }

    static func single(_ parameters: FormParameters, _ name: String) throws -> String? {
        do { return try parameters.single(name) } catch {
            throw AdminProblem.invalidQuery("\(name) must appear once, without control characters")
        }
    }
}

/// A page's cursor: the sort key of its last item, base64url-encoded and
/// marked, so a caller cannot mistake it for anything but opaque.
enum AdminCursor {
    static let prefix = "c1."

    static func encode(_ key: String) -> String { Base64URL.encode(Array((prefix + key).utf8)) }

    /// A sort key that puts a later time first, then orders by `tiebreak`
    /// (a sid, a kid): a newest-first list as a total, ascending order.
    static func newestFirst(_ time: Int64, _ tiebreak: String) -> String {
        let reversed = String(UInt64(Int64.max - max(time, 0)))
        return String(repeating: "0", count: 20 - reversed.count) + reversed + " " + tiebreak
    }

    static func decode(_ cursor: String) throws -> String {
        guard cursor.utf8.count <= 512, let bytes = Base64URL.decode(cursor), let text = String(validating: bytes, as: UTF8.self),
              text.hasPrefix(prefix) else {
            throw AdminProblem.invalidQuery("next is not a cursor this API gave")
        }
        return String(text.dropFirst(prefix.count))
    }
}

/// One page of a list, and how to answer it: `{"items": [...], "next":
/// cursor-or-null}` plus RFC 8288's `Link: <…>; rel="next"` while more follow.
struct AdminPage<Item: Encodable> {
    let items: [Item]
    /// The sort key of the last item, when more may follow.
    let nextKey: String?

    /// A page of `all` (sorted by `key`, ascending by its bytes) after
    /// `query.after`: keyset paging, so an item added or removed between
    /// pages never shifts one.
    init<Source>(_ all: [Source], key: (Source) -> String, query: AdminListQuery, map: (Source) throws -> Item) rethrows {
        let sorted = all.map { (key($0), $0) }.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        let rest = sorted.drop { entry in query.after.map { !$0.utf8.lexicographicallyPrecedes(entry.0.utf8) } ?? false }
        let page = rest.prefix(query.limit)
        items = try page.map { try map($0.1) }
        nextKey = rest.count > query.limit ? page.last?.0 : nil
    }

    /// A page a store read in order: `fetched` is up to one more than the
    /// limit, so whether another page follows is known without a count.
    init<Source>(fetched: [Source], limit: Int, key: (Source) -> String, map: (Source) throws -> Item) rethrows {
        let page = fetched.prefix(limit)
        items = try page.map(map)
        nextKey = fetched.count > limit ? page.last.map(key) : nil
    }

    struct Body: Encodable {
        let items: [Item]
        let next: String?

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(items, forKey: .items)
            try container.encode(next, forKey: .next)   // null on the last page
        }

        enum Keys: String, CodingKey { case items, next }
    }

    func response(url: String, query: AdminListQuery) throws -> Response {
        let cursor = nextKey.map(AdminCursor.encode)
        var headers: [(String, String)] = []
        if let cursor {
            var pairs = query.filters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            pairs += [("limit", String(query.limit)), ("next", cursor)]
            headers.append(("Link", "<\(url)?\(FormParser.encode(pairs))>; rel=\"next\""))
        }
        return try .json(Body(items: items, next: cursor), headers: headers)
    }
}
