import COpenSSL

/// Owns one `SSL_CTX`: TLS 1.2 or later, the peer's certificate verified
/// against the given CA file or the system's trust store.
///
/// Why not URLSession: on Linux it runs on libcurl with the system CA bundle
/// and offers no way to trust another CA (no server-trust challenge reaches
/// the delegate; `URLSessionCertificateAuthorityInfoFile` is read on Android
/// only; libcurl ignores SSL_CERT_FILE). A dev stack's local CA would need
/// root and update-ca-certificates. OpenSSL, already linked, takes a CA file.
final class TLSContext {
    let handle: OpaquePointer

    init(caFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw ToolError("TLS: cannot create a context") }
        handle = context
        // From here on a throw still runs deinit, which frees the context.
        guard gatehouse_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else { throw ToolError("TLS: cannot require TLS 1.2") }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let loaded = caFile.map { SSL_CTX_load_verify_file(context, $0) } ?? SSL_CTX_set_default_verify_paths(context)
        ERR_clear_error()
        guard loaded == 1 else { throw ToolError("cannot load CA certificates from \(caFile ?? "the system's default paths")") }
    }

    deinit { SSL_CTX_free(handle) }
}
