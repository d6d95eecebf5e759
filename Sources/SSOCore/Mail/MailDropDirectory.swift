import Glibc

/// Where mail goes when no SMTP server is configured
/// (`$GATEHOUSE_HOME/mail/`): each message one RFC 5322 file,
/// `<time>-<message-id>.eml`, mode 0600, written under a temporary name
/// and renamed, so a reader never sees half a message. Writing the same
/// message again (a retry) replaces its file: the name comes from the
/// message's own date and Message-ID.
public struct MailDropDirectory: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        /// Log-safe: a path and errno's text.
        public let description: String
    }

    public let path: String

    public init(path: String) { self.path = path }

    /// Writes `message` and returns the file's path. Creates the directory
    /// (0700) when it is missing.
    @discardableResult
    public func write(_ message: MailMessage) throws -> String {
        try write(message.serialized(), date: message.date, messageID: message.messageID)
    }

    /// Writes a queued message's stored bytes as they are (the sender's
    /// path: a retry writes the same bytes under the same name). `date`
    /// names the file; the outbox passes the time the message was queued.
    @discardableResult
    public func write(_ mail: QueuedMail, date: Int64) throws -> String {
        try write(mail.bytes, date: date, messageID: mail.messageID)
    }

    private func write(_ bytes: [UInt8], date: Int64, messageID: String) throws -> String {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw failure("cannot create \(path)") }
        let file = path + "/" + fileName(date: date, messageID: messageID)
        // A dot name: a reader listing *.eml never picks up a file being written.
        let temporary = path + "/.\(getpid())-\(SecureRandom.token(byteCount: 6)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let error = failure("cannot write \(temporary)")
                close(fd)
                unlink(temporary)
                throw error
            }
            written += count
        }
        guard fsync(fd) == 0 else {
            let error = failure("cannot sync \(temporary)")
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, file) == 0 else {
            let error = failure("cannot rename to \(file)")
            unlink(temporary)
            throw error
        }
        // The rename itself survives a crash only once the directory is synced.
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
        return file
    }

    /// `20261128T100700Z-<id>.eml`, the Message-ID without its angle
    /// brackets and with anything but letters, digits, ".", "-", "_" and
    /// "@" replaced by "_".
    func fileName(for message: MailMessage) -> String {
        fileName(date: message.date, messageID: message.messageID)
    }

    func fileName(date: Int64, messageID: String) -> String {
        let id = messageID.unicodeScalars.dropFirst().dropLast().map { scalar -> Character in
            let allowed = scalar.isASCII && (MailAddress.isLetterOrDigit(UInt8(scalar.value)) || ".-_@".unicodeScalars.contains(scalar))
            return allowed ? Character(scalar) : "_"
        }
        return MailDate.compact(date) + "-" + String(id) + ".eml"
    }

    private func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
