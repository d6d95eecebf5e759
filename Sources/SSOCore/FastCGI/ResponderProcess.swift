import CFastCGI
import FoundationEssentials
import Glibc

/// What every responder's main.swift does: load the configuration, map
/// its counters and open the audit log, build the responder once, serve
/// forever; a failure to start is logged and
/// ends the process with status 1 (the supervisor restarts it).
public enum ResponderProcess {
    public static func run(endpoint: String, build: (GatehouseConfig) throws -> Responder) -> Never {
        returnLargeBuffersToTheSystem()
        let responder: Responder
        do {
            let config = try GatehouseConfig.load()
            Metrics.start(endpoint: endpoint, home: config.home)
            if let problem = AuditLog.start(home: config.home) { RequestLog.event(endpoint: endpoint, message: problem) }
            responder = try build(config)
        } catch {
            RequestLog.event(endpoint: endpoint, message: "cannot start: \(error)")
            exit(1)
        }
        FastCGIServer.serve(endpoint: endpoint, responder: responder)
    }

    /// glibc serves a block of 128 KiB or more with mmap, but after the first
    /// such block is freed it raises that threshold to the block's size, so
    /// from then on scrypt's 8 MiB work area (one per password check) comes
    /// from the heap and stays resident for the life of the process. A fixed
    /// threshold keeps every large block an mmap that free() gives back: a
    /// login responder stays ~8 MB smaller, for ~2,000 page faults per hash
    /// (well under 1% of the hash itself).
    static func returnLargeBuffersToTheSystem() {
        _ = gatehouse_set_mmap_threshold(256 * 1024)
    }
}
