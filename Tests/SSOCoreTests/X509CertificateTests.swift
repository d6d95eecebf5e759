import Foundation
import XCTest
@testable import SSOCore

/// Known answers: two self-signed fixtures made with Python's cryptography,
/// one whose dates are UTCTime, one with a GeneralizedTime notAfter (years
/// from 2050 on must use it, RFC 5280 §4.1.2.5).
final class X509CertificateTests: XCTestCase {
    /// notBefore 2024-01-01T00:00:00Z, notAfter 2034-01-01T12:30:15Z, CN=fixture-utctime.
    static let utcTime = """
        -----BEGIN CERTIFICATE-----
        MIIBMzCB2qADAgECAhQMPB5kI4H974uLBQ+XQ3PuFuDlYzAKBggqhkjOPQQDAjAa
        MRgwFgYDVQQDDA9maXh0dXJlLXV0Y3RpbWUwHhcNMjQwMTAxMDAwMDAwWhcNMzQw
        MTAxMTIzMDE1WjAaMRgwFgYDVQQDDA9maXh0dXJlLXV0Y3RpbWUwWTATBgcqhkjO
        PQIBBggqhkjOPQMBBwNCAAQLaMEA54MYn5cc5sSoPRx1DG8DK/EiX9MOuNp/ckeb
        FYjOGgNnoapxBCtpWaPuvOTj9Mf+c0nwEW4ii9SCnpWxMAoGCCqGSM49BAMCA0gA
        MEUCIQDYMThDfGFI2gNrbs+/L1hj2Q27TaSMwINHQGBpBvQtDQIgFUfGF1xeyVpj
        7K7PNp+M/3+0dS6S8vikUD3Klb27p7M=
        -----END CERTIFICATE-----

        """

    /// notBefore 2024-01-01T00:00:00Z, notAfter 2051-06-01T00:00:00Z (GeneralizedTime).
    static let generalizedTime = """
        -----BEGIN CERTIFICATE-----
        MIIBPjCB5KADAgECAhRXZYzGxJR06aVauBog4aWPwyUm2jAKBggqhkjOPQQDAjAe
        MRwwGgYDVQQDDBNmaXh0dXJlLWdlbmVyYWxpemVkMCAXDTI0MDEwMTAwMDAwMFoY
        DzIwNTEwNjAxMDAwMDAwWjAeMRwwGgYDVQQDDBNmaXh0dXJlLWdlbmVyYWxpemVk
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEC2jBAOeDGJ+XHObEqD0cdQxvAyvx
        Il/TDrjaf3JHmxWIzhoDZ6GqcQQraVmj7rzk4/TH/nNJ8BFuIovUgp6VsTAKBggq
        hkjOPQQDAgNJADBGAiEAsO5rNmk9E12NhISVZLgr2i7Q9ORfUhU8bOnIIhkslAsC
        IQDRPy14ABZjriwHMpV+HiIHIyJSy0UqiCDFHd8WL/QiIw==
        -----END CERTIFICATE-----

        """

    func testDatesAndSubjectOfAUTCTimeCertificate() throws {
        let certificates = try X509Certificate.certificates(pem: Array(Self.utcTime.utf8))
        XCTAssertEqual(certificates.count, 1)
        XCTAssertEqual(try certificates[0].notBefore, 1_704_067_200)
        XCTAssertEqual(try certificates[0].notAfter, 2_019_731_415)
        XCTAssertEqual(certificates[0].subject, "/CN=fixture-utctime")
    }

    func testGeneralizedTimeAfter2050() throws {
        let certificate = try XCTUnwrap(X509Certificate.certificates(pem: Array(Self.generalizedTime.utf8)).first)
        XCTAssertEqual(try certificate.notAfter, 2_569_190_400)
    }

    /// A chain file: every certificate, in order; a key block between them is skipped.
    func testEveryCertificateOfAChainFile() throws {
        let key = String(decoding: try RSAKey.generate().privateKeyPEM(), as: UTF8.self)
        let chain = Self.utcTime + key + Self.generalizedTime
        let certificates = try X509Certificate.certificates(pem: Array(chain.utf8))
        XCTAssertEqual(try certificates.map { try $0.notAfter }, [2_019_731_415, 2_569_190_400])
        XCTAssertEqual(OpenSSLError.drainErrorQueue(), "", "the end-of-file marker is not left in the error queue")
    }

    func testNoCertificateIsAnError() throws {
        XCTAssertThrowsError(try X509Certificate.certificates(pem: Array("not a certificate".utf8)))
        XCTAssertThrowsError(try X509Certificate.certificates(pem: []))
        let truncated = String(Self.utcTime.dropLast(60))
        XCTAssertThrowsError(try X509Certificate.certificates(pem: Array(truncated.utf8)))
        XCTAssertThrowsError(try X509Certificate.certificates(pemFile: "/nonexistent/cert.pem"))
    }

    /// Another implementation agrees: `openssl x509 -enddate` on a fresh certificate.
    func testNotAfterMatchesTheOpenSSLCommandLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-x509-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path
        XCTAssertEqual(try run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                "-keyout", directory.appendingPathComponent("key.pem").path, "-out", certificate,
                                "-days", "397", "-subj", "/CN=localhost"]).status, 0)
        let printed = try run(["x509", "-in", certificate, "-noout", "-enddate"]).output   // notAfter=Feb  3 04:05:06 2027 GMT
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        let text = printed.replacingOccurrences(of: "notAfter=", with: "").split(separator: " ", omittingEmptySubsequences: true)
            .joined(separator: " ")
        let expected = try XCTUnwrap(formatter.date(from: text), "cannot parse \(printed)")
        let loaded = try XCTUnwrap(X509Certificate.certificates(pemFile: certificate).first)
        XCTAssertEqual(try loaded.notAfter, Int64(expected.timeIntervalSince1970))
        XCTAssertEqual(loaded.subject, "/CN=localhost")
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
