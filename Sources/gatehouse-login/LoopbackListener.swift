import Foundation
import SSOCore
#if canImport(Glibc)
import Glibc
#endif

/// A listening socket on 127.0.0.1 with a port the kernel picks, for the
/// browser's redirect. RFC 8252 §7.3: "Native apps that are able to open a
/// port on the loopback network interface without needing special
/// permissions ... can use the loopback interface to receive the OAuth
/// redirect"; §8.3: the IP literal, not "localhost", and the loopback
/// interface only, so no other host can reach it.
final class LoopbackListener {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ToolError("cannot open a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(INADDR_LOOPBACK).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw ToolError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            close(fd)
            throw ToolError("cannot read the listening port: \(String(cString: strerror(errno)))")
        }
        descriptor = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }

    /// The next browser connection, or nil when the deadline passes first.
    func accept(before deadline: MonotonicDeadline) throws -> LoopbackConnection? {
        while true {
            let milliseconds = Int32(min(deadline.remainingSeconds * 1000, Double(Int32.max)).rounded(.up))
            guard milliseconds > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw ToolError("waiting for the browser: \(String(cString: strerror(errno)))") }
            if ready == 0 { return nil }
            let client = Glibc.accept(descriptor, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED || errno == EAGAIN { continue }
                throw ToolError("accepting the browser's connection: \(String(cString: strerror(errno)))")
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)  // accept4 needs _GNU_SOURCE, which Glibc's module lacks
            return LoopbackConnection(descriptor: client)
        }
    }
}
