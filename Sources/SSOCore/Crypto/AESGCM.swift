import COpenSSL

/// AES-256-GCM through OpenSSL EVP, for the few secrets the issuer must read
/// back rather than compare by hash (TOTP seeds). Sealed form:
/// `nonce (12 bytes) || ciphertext || tag (16 bytes)`.
public enum AESGCM {
    public static let keyByteCount = 32
    static let nonceByteCount = 12
    static let tagByteCount = 16

    public struct OpenFailure: Error, CustomStringConvertible {
        public var description: String { "sealed data failed authentication (wrong key, wrong context, or altered)" }
    }

    /// A fresh random 96-bit nonce per seal (NIST SP 800-38D §8.2.2); keys
    /// seal few messages, far below the 2^32 limit of random nonces.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], authenticating aad: [UInt8]) throws -> [UInt8] {
        precondition(key.count == keyByteCount, "AES-256 takes a 32-byte key")
        let nonce = SecureRandom.bytes(nonceByteCount)
        let context = try CipherContext()
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: Int32 = 0
        var total = 0
        guard EVP_EncryptInit_ex(context.handle, EVP_aes_256_gcm(), nil, key, nonce) == 1,
              aad.isEmpty || EVP_EncryptUpdate(context.handle, nil, &length, aad, Int32(aad.count)) == 1,
              EVP_EncryptUpdate(context.handle, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1
        else { throw OpenSSLError("AES-GCM seal") }
        total = Int(length)
        let finished = ciphertext.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(context.handle, buffer.baseAddress! + total, &length)
        }
        guard finished == 1 else { throw OpenSSLError("AES-GCM seal") }
        total += Int(length)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag) == 1 else {
            throw OpenSSLError("AES-GCM tag")
        }
        return nonce + ciphertext.prefix(total) + tag
    }

    /// Opens what `seal` produced with the same key and `aad`; anything
    /// else (another key, another context, one flipped bit) throws.
    public static func open(_ sealed: [UInt8], key: [UInt8], authenticating aad: [UInt8]) throws -> [UInt8] {
        precondition(key.count == keyByteCount, "AES-256 takes a 32-byte key")
        guard sealed.count >= nonceByteCount + tagByteCount else { throw OpenFailure() }
        let nonce = Array(sealed.prefix(nonceByteCount))
        let ciphertext = Array(sealed.dropFirst(nonceByteCount).dropLast(tagByteCount))
        var tag = Array(sealed.suffix(tagByteCount))
        let context = try CipherContext()
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var length: Int32 = 0
        guard EVP_DecryptInit_ex(context.handle, EVP_aes_256_gcm(), nil, key, nonce) == 1,
              aad.isEmpty || EVP_DecryptUpdate(context.handle, nil, &length, aad, Int32(aad.count)) == 1,
              EVP_DecryptUpdate(context.handle, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1,
              EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &tag) == 1
        else {
            _ = OpenSSLError.drainErrorQueue()
            throw OpenFailure()
        }
        let total = Int(length)
        // The tag is checked here; on failure no plaintext is returned.
        let verified = plaintext.withUnsafeMutableBufferPointer { buffer in
            EVP_DecryptFinal_ex(context.handle, buffer.baseAddress! + total, &length)
        }
        guard verified == 1 else {
            _ = OpenSSLError.drainErrorQueue()
            throw OpenFailure()
        }
        return Array(plaintext.prefix(total + Int(length)))
    }
}

/// One EVP_CIPHER_CTX, freed with this object.
private final class CipherContext {
    let handle: OpaquePointer

    init() throws {
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSLError("EVP_CIPHER_CTX_new") }
        handle = context
    }

    deinit { EVP_CIPHER_CTX_free(handle) }
}
