/// The issuer's whole state as one backend hands it to another (`ssoctl
/// migrate`, SQLite to PostgreSQL): every table of its schema, row by row,
/// from one consistent snapshot, and the private signing keys it keeps
/// outside its tables.
///
/// Generic on purpose: the target copies every table and column the source
/// lists and refuses when the two schemas differ, so a table or column
/// added by a later migration is either copied or named in the refusal,
/// never dropped in silence.
public protocol IssuerStateSource {
    /// Where the state is, for people (a file path).
    var location: String { get }
    /// Every table that holds the issuer's state (never the schema's
    /// bookkeeping, `IssuerStateTables.bookkeeping`), columns in order.
    func tables() throws -> [IssuerTableShape]
    /// Calls `body` with every row of `table` in the order the rows were
    /// inserted (which tie-breaks such as the signing keys' depend on),
    /// each as the values of `table.columns`, in that order.
    func forEachRow(of table: IssuerTableShape, _ body: ([TransferValue]) throws -> Void) throws
    func rowCount(of table: String) throws -> Int
    /// The private signing key of `kid` (PEM), nil when it has none (retired).
    func privateKeyPEM(kid: String) throws -> [UInt8]?
    /// Runs `body` inside one read snapshot: what it reads is one moment's
    /// state, whatever another process commits meanwhile.
    func withSnapshot<T>(_ body: () throws -> T) throws -> T
}

/// One table as a backend describes it.
public struct IssuerTableShape: Equatable, Sendable {
    public let name: String
    public let columns: [String]

    public init(name: String, columns: [String]) {
        self.name = name
        self.columns = columns
    }
}

/// One column's value on its way between backends: the types the issuer's
/// schema uses on both (numbers and 0/1 flags, text, bytes).
public enum TransferValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case text(String)
    case bytes([UInt8])

    public var int: Int64? { if case .integer(let value) = self { value } else { nil } }
    public var string: String? { if case .text(let value) = self { value } else { nil } }
    public var byteArray: [UInt8]? { if case .bytes(let value) = self { value } else { nil } }
}

public enum IssuerStateTables {
    /// Tables every backend keeps for its schema's sake, not the issuer's
    /// state: the migration versions (each backend numbers its own) and the
    /// settings change counter (seeded by the schema, meaningful only in the
    /// database whose changes it counts). Never copied; rows in them do not
    /// make a database hold state.
    public static let bookkeeping: Set<String> = ["schema_migrations", "issuer_changes"]
}
