import COpenSSL

/// A C string pointer that stays valid for the life of the process (the
/// OpenSSL parameter builder keeps key names until it copies them).
func staticCString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// A public key of OpenSSL key type `type` ("RSA", "EC") from the
/// parameters `push` puts on a builder (EVP_PKEY_fromdata). Whatever the
/// pushed parameters point to must live until this returns: the builder
/// copies it only when it makes the parameter list.
func makePublicKey(type: StaticString, pushing push: (OpaquePointer) -> Bool) throws -> OpaquePointer {
    guard let builder = OSSL_PARAM_BLD_new() else { throw OpenSSLError("OSSL_PARAM_BLD_new") }
    defer { OSSL_PARAM_BLD_free(builder) }
    guard push(builder), let params = OSSL_PARAM_BLD_to_param(builder) else { throw OpenSSLError("OSSL_PARAM_BLD") }
    defer { OSSL_PARAM_free(params) }
    guard let context = EVP_PKEY_CTX_new_from_name(nil, staticCString(type), nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_from_name") }
    defer { EVP_PKEY_CTX_free(context) }
    var created: OpaquePointer?
    guard EVP_PKEY_fromdata_init(context) == 1,
          EVP_PKEY_fromdata(context, &created, gatehouse_evp_pkey_public_key_selection(), params) == 1,
          let key = created else { throw OpenSSLError("EVP_PKEY_fromdata") }
    return key
}
