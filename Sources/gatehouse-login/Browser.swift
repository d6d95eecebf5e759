import Foundation

/// The user's browser, through the desktop's URL opener.
enum Browser {
    /// Opens `url` with xdg-open; when that is impossible, prints it instead
    /// so the sign-in can still go on by hand.
    static func open(_ url: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus == 0 {
                Console.error("Opened the sign-in page in your browser. If nothing appeared, open this URL:")
                Console.error(url)
                return
            }
        } catch {}
        Console.error("Could not run xdg-open; open this URL in a browser to sign in:")
        Console.output(url)
    }
}
