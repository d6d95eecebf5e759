import COpenSSL
import FoundationEssentials
import Glibc

/// One X.509 certificate held as an OpenSSL `X509`, freed with this object.
/// Only what `ssoctl doctor` needs: validity dates and the subject.
public final class X509Certificate {
    private let handle: OpaquePointer

    /// A certificate file that cannot be read at all.
    public struct FileError: Error, CustomStringConvertible {
        public let description: String
    }

    private init(taking handle: OpaquePointer) { self.handle = handle }

    deinit { X509_free(handle) }

    /// Every certificate in PEM text, in file order (a chain file holds
    /// several). Throws when there is none; other PEM blocks are skipped.
    public static func certificates(pem: [UInt8]) throws -> [X509Certificate] {
        let bio = try MemoryBIO(copying: pem)
        var found: [X509Certificate] = []
        while let certificate = PEM_read_bio_X509(bio.handle, nil, nil, nil) {
            found.append(X509Certificate(taking: certificate))
        }
        // The loop always ends on "no start line": not an error once
        // something was read, and it must not linger in the queue.
        guard !found.isEmpty else { throw OpenSSLError("PEM_read_bio_X509") }
        _ = OpenSSLError.drainErrorQueue()
        return found
    }

    /// The certificates in a PEM file.
    public static func certificates(pemFile path: String) throws -> [X509Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else { throw FileError(description: "cannot read \(path)") }
        return try certificates(pem: Array(data))
    }

    /// The end of the validity period, in seconds since the epoch.
    public var notAfter: Int64 { get throws { try Self.seconds(X509_get0_notAfter(handle), "notAfter") } }

    /// The start of the validity period, in seconds since the epoch.
    public var notBefore: Int64 { get throws { try Self.seconds(X509_get0_notBefore(handle), "notBefore") } }

    /// The subject in OpenSSL's one-line form (`/CN=localhost`).
    public var subject: String {
        guard let name = X509_get_subject_name(handle), let line = X509_NAME_oneline(name, nil, 0) else { return "" }
        defer { gatehouse_openssl_free(line) }
        return String(cString: line)
    }

    /// ASN1_TIME (UTCTime or GeneralizedTime, always UTC in a certificate)
    /// to an absolute instant, so callers compare it with their own clock
    /// rather than the one ASN1_TIME_diff would read.
    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?, _ field: String) throws -> Int64 {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { throw OpenSSLError("ASN1_TIME_to_tm (\(field))") }
        return Int64(timegm(&parts))
    }
}
