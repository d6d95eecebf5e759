import FoundationEssentials
import Glibc

/// Whether the responder pools behind nginx answer: each pool slot is a
/// unix socket named ENDPOINT-N.sock in one folder (Scripts/run's `run/`,
/// or systemd's /run/gatehouse), and a slot whose process is gone refuses
/// connections.
public enum ResponderSockets {
    public enum SlotState: Equatable, Sendable {
        /// Accepted a connection, or its backlog is full (its process is
        /// there, busy).
        case answering
        case refusing(errno: Int32)
    }

    /// Each pool (ENDPOINT) in `directory` with the states of its slots.
    public static func probe(directory: String) -> [String: [SlotState]] {
        var pools: [String: [SlotState]] = [:]
        for name in DirectoryNames.of(directory) {
            guard let endpoint = endpoint(ofSocket: name) else { continue }
            pools[endpoint, default: []].append(state(of: directory + "/" + name))
        }
        return pools
    }

    /// "token-1.sock" → "token"; nil for any other name.
    static func endpoint(ofSocket name: String) -> String? {
        guard name.hasSuffix(".sock") else { return nil }
        let slot = name.dropLast(5)
        guard let dash = slot.lastIndex(of: "-"), dash != slot.startIndex,
              !slot[slot.index(after: dash)...].isEmpty, slot[slot.index(after: dash)...].allSatisfy(\.isASCII),
              slot[slot.index(after: dash)...].allSatisfy(\.isNumber) else { return nil }
        return String(slot[..<dash])
    }

    /// Connects without blocking and closes at once. libfcgi's accept loop
    /// reads end-of-file from such a connection and goes back to accepting
    /// (FCGX_Accept_r drops a connection closed before its first record).
    static func state(of path: String) -> SlotState {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .refusing(errno: errno) }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return .refusing(errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // EAGAIN: a unix socket's backlog is full, so its process is alive.
        return result == 0 || errno == EAGAIN || errno == EINPROGRESS ? .answering : .refusing(errno: errno)
    }
}
