/// The folder part of a file path (what NSString's deletingLastPathComponent
/// gave, without Foundation's ICU-bound module): "a/b/c" → "a/b", "c" → ".",
/// "/c" → "/".
public func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
