import CFastCGI
import Glibc

/// The connections one single-threaded responder serves: its listening
/// socket, and the connections nginx keeps open between requests where a
/// location asks for it (`fastcgi_keep_conn on`; the resource servers').
///
/// Keeping the FastCGI connection saves the connect, accept, shutdown and
/// close of every request, which were most of an API call's kernel time
/// (docs/PERFORMANCE.md). libfcgi alone cannot do it for a single-threaded
/// process: after a kept request it blocks reading that connection, while
/// nginx, holding it idle in one worker's cache, opens another one to the
/// same process from another worker, and every request on the new one waits
/// for nginx's keep-alive timeout. So each kept connection gets an
/// `FCGX_Request` of its own (libfcgi allows several per process), and
/// `next()` waits on all of them and the listening socket at once, handing
/// out whichever has a request, the one served longest ago first.
final class FastCGIConnections {
    /// How many connections one process holds. nginx opens one per request
    /// in flight to this process (a single-threaded one has one in hand and
    /// the rest queued) and keeps a few idle (`keepalive` in the upstream),
    /// so 64 means a drop only beyond 64 requests queued at one process.
    /// Only nginx's close ends a connection below that, so no request can
    /// meet a connection closing under it. Each costs an idle `FCGX_Request`.
    static let capacity = 64

    private let listeningSocket: Int32
    private var handles: [FastCGIRequestHandle]
    private var served = 0
    /// When the listening socket last gave a connection (fairness with the kept ones).
    private var listenerServed = 0
    private var listenerNonBlocking = false

    /// Set by SIGTERM (the supervisor's and systemd's stop) and SIGUSR1
    /// (libfcgi's own "finish and exit"): the loop may be waiting in poll()
    /// on kept connections, not in libfcgi's accept(), so it must see the
    /// request itself. Read once before the handler is installed, so the
    /// handler only stores into an initialised global.
    nonisolated(unsafe) static var stopRequested: sig_atomic_t = 0

    /// Installs the stop handlers: no SA_RESTART, so a wait in poll() or in
    /// libfcgi's accept() ends; libfcgi is told too (FCGX_ShutdownPending
    /// only sets its flag), so its accept() returns instead of retrying.
    static func installStopHandlers() {
        _ = stopRequested
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            FastCGIConnections.stopRequested = 1
            FCGX_ShutdownPending()
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGTERM, &action, nil)
        sigaction(SIGUSR1, &action, nil)
    }

    init(listeningSocket: Int32) {
        self.listeningSocket = listeningSocket
        handles = [FastCGIRequestHandle(listeningSocket: listeningSocket)]
    }

    /// The handle whose `accept()` takes the next request without waiting
    /// on an idle connection: a kept connection with a request, or one free
    /// for the next new connection; nil once the process is asked to stop.
    /// `beforeWaiting` (the request log's flush) runs only if no request
    /// is ready yet, found by the same poll that picks the connection.
    func next(beforeWaiting: (() -> Void)? = nil) -> FastCGIRequestHandle? {
        served += 1
        if Self.stopRequested != 0 { return nil }
        var beforeWaiting = beforeWaiting
        // Nothing ever kept (every responder whose location does not keep
        // connections): libfcgi's own blocking accept, with no poll first
        // unless there is something to do before it waits.
        guard listenerNonBlocking || handles.contains(where: { $0.keptConnection != nil }) else {
            if let work = beforeWaiting {
                var listener = pollfd(fd: listeningSocket, events: Int16(POLLIN), revents: 0)
                if poll(&listener, 1, 0) <= 0 { work() }
            }
            listenerServed = served
            return handles[0]
        }
        // From the first kept connection on, the listening socket is
        // non-blocking and every accept follows a poll: if libfcgi finds a
        // kept connection unusable it falls back to accept(), which must
        // then return (EAGAIN) instead of waiting while the other kept
        // connections bring requests.
        if !listenerNonBlocking {
            _ = fcntl(listeningSocket, F_SETFL, fcntl(listeningSocket, F_GETFL) | O_NONBLOCK)
            listenerNonBlocking = true
        }
        while Self.stopRequested == 0 {
            var entries = pollEntries()
            let found = poll(&entries, nfds_t(entries.count), beforeWaiting == nil ? -1 : 0)
            if found < 0 {
                // EINTR: the loop's condition looks at the stop. Anything
                // else (ENOMEM) is waited out, never spun on.
                if errno != EINTR { usleep(1000) }
                continue
            }
            if found == 0, let work = beforeWaiting {
                work()
                beforeWaiting = nil  // and now wait
                continue
            }
            var ready: [(stamp: Int, handle: FastCGIRequestHandle?)] = []
            for entry in entries where entry.revents != 0 {
                if entry.fd == listeningSocket {
                    ready.append((listenerServed, nil))
                } else if let handle = handles.first(where: { $0.keptConnection == entry.fd }) {
                    // A kept connection nginx closed reads as ready too; libfcgi
                    // would then go on to a blocking accept. Closed here instead.
                    if Self.peerClosed(entry.fd) { handle.dropKeptConnection() } else { ready.append((handle.lastServed, handle)) }
                }
            }
            guard let chosen = ready.min(by: { $0.stamp < $1.stamp }) else { continue }
            if let handle = chosen.handle {
                handle.lastServed = served
                return handle
            }
            listenerServed = served
            let handle = freeHandle()
            handle.lastServed = served
            return handle
        }
        return nil
    }

    /// A handle holding no connection, for `accept()` to take the waiting
    /// one: an unused one, a new one, or (at capacity) the idle kept
    /// connection served longest ago, closed. nginx sees the close and
    /// forgets it; a request it sends there at that instant fails to write
    /// and is retried on the next process (`fastcgi_next_upstream`).
    private func freeHandle() -> FastCGIRequestHandle {
        if let free = handles.first(where: { $0.keptConnection == nil }) { return free }
        if handles.count < Self.capacity {
            handles.append(FastCGIRequestHandle(listeningSocket: listeningSocket))
            return handles[handles.count - 1]
        }
        let oldest = handles.min { $0.lastServed < $1.lastServed }!
        oldest.dropKeptConnection()
        return oldest
    }

    private func pollEntries() -> [pollfd] {
        [pollfd(fd: listeningSocket, events: Int16(POLLIN), revents: 0)]
            + handles.compactMap(\.keptConnection).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    }

    /// End of stream (or an error) on a connection that poll called ready,
    /// looked at without taking a byte.
    static func peerClosed(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }
}
