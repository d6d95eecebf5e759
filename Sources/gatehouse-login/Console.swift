import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered output: the authorize URL must reach a reading pipe at once,
/// not when the process exits.
enum Console {
    /// Standard output: what a script consumes (the URL, an API's body, status).
    /// When the reader has gone (`gatehouse-login call URL | head`), the
    /// process ends as any filter does whose pipe closes: by SIGPIPE, with
    /// no message (FileHandle's write traps on EPIPE instead, with a stack
    /// trace). SIGPIPE is ignored meanwhile (GatehouseLogin.main) so that a
    /// socket's peer hanging up is an error to report, not the end.
    static func output(_ line: String) { outputBytes(Array((line + "\n").utf8)) }

    /// Standard output, as it came (an API's body).
    static func outputBytes(_ bytes: [UInt8]) {
        guard writeAll(bytes, to: STDOUT_FILENO) else {
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
            exit(128 + SIGPIPE)
        }
    }

    /// Standard error: progress and errors for the person at the terminal.
    /// Nothing is left to tell anyone when it is closed.
    static func error(_ line: String) {
        _ = writeAll(Array((line + "\n").utf8), to: STDERR_FILENO)
    }

    /// Every byte, across partial writes and interruptions; false on an
    /// error (EPIPE when the reader has closed its end).
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
