import Foundation

/// An HTTPS server on 127.0.0.1 for the client's tests: a throwaway CA made
/// with the openssl command, its certificate for DNS:localhost only, and
/// Python's http.server (over OpenSSL too) because it can answer every
/// method, echo a request back and misbehave on cue, which `openssl s_server
/// -WWW` (GET of files only) cannot. nil when openssl or python3 is missing.
final class TLSTestServer {
    let folder: String
    let port: Int
    private let process: Process

    var caFile: String { folder + "/ca.pem" }

    func url(_ path: String) -> String { "https://localhost:\(port)\(path)" }

    init?() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-tls-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        process = Process()
        let made = Self.run("/usr/bin/openssl", in: folder, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
            && Self.run("/usr/bin/openssl", in: folder, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                         "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"])
            && FileManager.default.createFile(atPath: folder + "/ext", contents: Data("subjectAltName=DNS:localhost\n".utf8))
            && Self.run("/usr/bin/openssl", in: folder, ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                                                         "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext"])
        let files: [String: Data] = ["jwks.json": Data("{\"keys\":[]}".utf8), "garbage.json": Data("<html>".utf8),
                                     "big.json": Data(repeating: UInt8(ascii: "x"), count: 4096)]
        for (name, contents) in files { _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: contents) }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // The server prints its port once it listens; EOF means it died.
        guard made, (try? process.run()) != nil,
              let line = String(data: output.fileHandleForReading.availableData, encoding: .utf8),
              let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            if process.isRunning { process.terminate() }
            try? FileManager.default.removeItem(atPath: folder)
            return nil
        }
        self.port = port
    }

    deinit {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A CA of its own in a folder of its own, which signed nothing this
    /// server presents; nil when openssl failed.
    static func makeUnrelatedCA() -> String? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-ca-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = run("/usr/bin/openssl", in: folder, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=Unrelated CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
        return made ? folder + "/ca.pem" : nil
    }

    private static func run(_ executable: String, in folder: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// GET or HEAD of a file in the folder; /echo answers any method with the
    /// request as JSON; /no-content is a 204; /trickle promises 100 bytes
    /// and sends one every 0.2 s; /redirect is a 302 to /jwks.json and
    /// /redirect-file one to file:///etc/passwd; /big-unannounced sends 4 KiB
    /// without a Content-Length (to the end of the connection); /hits counts
    /// the GETs of /jwks.json so far.
    private static let script = """
        import http.server, json, ssl, time

        class Handler(http.server.BaseHTTPRequestHandler):
            def setup(self):
                # The handshake in this request's thread: a client that never
                # finishes one must not stall the accept loop.
                self.request.do_handshake()
                super().setup()

            def log_message(self, *args):
                pass

            def answer(self):
                global hits
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/jwks.json":
                    hits += 1
                if self.path == "/hits":
                    return self.reply(200, str(hits).encode())
                if self.path in ("/redirect", "/redirect-file"):
                    self.send_response(302)
                    target = "/jwks.json" if self.path == "/redirect" else "file:///etc/passwd"
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path == "/big-unannounced":
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.write(b"x" * 4096)
                    return
                if self.path == "/no-content":
                    return self.reply(204, b"")
                if self.path == "/trickle":
                    self.send_response(200)
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    for _ in range(100):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        time.sleep(0.2)
                    return
                if self.path == "/echo":
                    echo = {"method": self.command, "version": self.request_version,
                            "headers": [[name, value] for name, value in self.headers.items()],
                            "body": body.decode("utf-8", "replace")}
                    return self.reply(200, json.dumps(echo).encode())
                try:
                    with open(self.path.lstrip("/"), "rb") as file:
                        return self.reply(200, file.read())
                except OSError:
                    return self.reply(404, b"not found")

            def reply(self, status, body):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if status != 204:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = answer

        hits = 0
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain("server.pem", "server.key")
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
}

/// A listening TCP socket on 127.0.0.1 that never accepts.
final class Listener {
    let descriptor: Int32
    let port: Int

    init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = listen(fd, 8)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
