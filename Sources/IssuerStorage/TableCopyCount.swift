/// One table's rows counted on both sides of a copy.
public struct TableCopyCount: Equatable, Sendable {
    public let table: String
    public let source: Int
    public let target: Int

    public init(table: String, source: Int, target: Int) {
        self.table = table
        self.source = source
        self.target = target
    }
}
