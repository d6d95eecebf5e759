import COpenSSL

/// Owns one `SSL_CTX`: TLS 1.2 or later, the peer's certificate verified
/// against the given CA file or the system's default CA paths.
final class TLSClientContext {
    let handle: OpaquePointer

    init(caFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPSClientError(.tls, detail: "SSL_CTX_new: \(OpenSSLError.drainErrorQueue())")
        }
        handle = context
        // From here on a throw still runs deinit, which frees the context.
        guard gatehouse_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw HTTPSClientError(.tls, detail: "min protocol: \(OpenSSLError.drainErrorQueue())")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let loaded = caFile.map { SSL_CTX_load_verify_file(context, $0) } ?? SSL_CTX_set_default_verify_paths(context)
        guard loaded == 1 else {
            throw HTTPSClientError(.caFile, detail: "cannot load CA \(caFile ?? "default paths"): \(OpenSSLError.drainErrorQueue())")
        }
    }

    deinit { SSL_CTX_free(handle) }
}
