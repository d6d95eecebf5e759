import Foundation

/// What every responder's main.swift does: load the configuration, build
/// the responder once, serve forever; a failure to start is logged and
/// ends the process with status 1 (the supervisor restarts it).
public enum ResponderProcess {
    public static func run(endpoint: String, build: (GatehouseConfig) throws -> Responder) -> Never {
        let responder: Responder
        do {
            responder = try build(try GatehouseConfig.load())
        } catch {
            RequestLog.event(endpoint: endpoint, message: "cannot start: \(error)")
            exit(1)
        }
        FastCGIServer.serve(endpoint: endpoint, responder: responder)
    }
}
