import Foundation

/// Unbuffered output: the authorize URL must reach a reading pipe at once,
/// not when the process exits.
enum Console {
    /// Standard output: what a script consumes (the URL, an API's body, status).
    static func output(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Standard error: progress and errors for the person at the terminal.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
