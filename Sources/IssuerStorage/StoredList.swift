/// Space-separated lists (scope, roles, amr) as both backends store them.
public enum StoredList {
    public static func encode(_ values: [String]) -> String { values.joined(separator: " ") }
    public static func decode(_ stored: String) -> [String] { stored.split(separator: " ").map(String.init) }

    /// `amr` as stored; rows from before it was recorded were password sign-ins.
    public static func decodeAMR(_ stored: String) -> [String] {
        let values = decode(stored)
        return values.isEmpty ? ["pwd"] : values
    }
}
