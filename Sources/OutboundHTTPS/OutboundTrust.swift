import FoundationEssentials

/// Which certificate authorities an `HTTPSClient` trusts for the peer's
/// certificate: the system's trust store (Debian's ca-certificates, as
/// libcurl finds it), extra PEM files, or both.
public struct OutboundTrust: Sendable, Equatable {
    public var systemStore: Bool
    /// PEM files, read at each request, so a CA that appears or changes
    /// later is picked up without a restart.
    public var caFiles: [String]

    public init(systemStore: Bool, caFiles: [String]) {
        self.systemStore = systemStore
        self.caFiles = caFiles
    }

    /// The system's trust store alone (a deployment with public certificates).
    public static let system = OutboundTrust(systemStore: true, caFiles: [])

    /// One CA file and nothing else, as `curl --cacert` does (gatehouse-login's `--ca-file`).
    public static func only(_ caFile: String) -> OutboundTrust { OutboundTrust(systemStore: false, caFiles: [caFile]) }

    /// The rule for every request a Gatehouse process makes (the issuer's and
    /// the resource servers'): the system's trust store, plus
    /// `GATEHOUSE_CA_FILE` when set, plus the development layout's local CA
    /// (`$GATEHOUSE_HOME/tls/ca.pem`) when it exists. A home holding a copy
    /// of another home's `tls/` so trusts that stack's certificates too.
    public static func gatehouse(home: String, environment: [String: String]) -> OutboundTrust {
        var files: [String] = []
        if let explicit = environment["GATEHOUSE_CA_FILE"], !explicit.isEmpty { files.append(explicit) }
        let local = home + "/tls/ca.pem"
        if FileManager.default.fileExists(atPath: local), !files.contains(local) { files.append(local) }
        return OutboundTrust(systemStore: true, caFiles: files)
    }

    /// The extra CAs as one PEM bundle for CURLOPT_CAINFO_BLOB; nil when
    /// there are none. A file that cannot be read or holds no certificate
    /// is this side's mistake and fails the request before any connection.
    func extraCertificates() throws -> [UInt8]? {
        guard !caFiles.isEmpty else { return nil }
        var bundle: [UInt8] = []
        for file in caFiles {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw HTTPSClientError(.caFile, detail: "cannot read the CA file \(file)")
            }
            let pem = [UInt8](data)
            guard String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                throw HTTPSClientError(.caFile, detail: "\(file) holds no PEM certificate")
            }
            bundle += pem + [10]
        }
        return bundle
    }
}
