import COpenSSL

/// Owns one OpenSSL memory BIO, the buffer PEM reads and writes go through.
final class MemoryBIO {
    let handle: OpaquePointer

    /// An empty BIO to write into.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError("BIO_new") }
        handle = bio
    }

    /// A BIO reading a copy of `bytes` (BIO_new_mem_buf would borrow them).
    init(copying bytes: [UInt8]) throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError("BIO_new") }
        handle = bio
        let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32(bytes.count)) }
        guard written == Int32(bytes.count) else { throw OpenSSLError("BIO_write") }
    }

    deinit { BIO_free(handle) }

    func readAll() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(handle))
        var output = [UInt8](repeating: 0, count: pending)
        let read = output.withUnsafeMutableBytes { BIO_read(handle, $0.baseAddress, Int32(pending)) }
        return Array(output.prefix(max(0, Int(read))))
    }
}
