import Foundation

/// Runs a program (doctor's `nginx -t`) with a time limit; returns its exit
/// status and its combined output. Not a shell: the arguments go to exec as
/// they are. Here, not in the library, because Process needs the Foundation
/// module the responders do without.
enum ExternalCommand {
    @Sendable
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
