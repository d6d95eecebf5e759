import FoundationEssentials
import IssuerStorage
import SSOCore

/// `tls.certificate`, one line per file: no certificate in it has expired
/// or is not valid yet (fail), none expires within the warning period
/// (warn). Which files: --certificate, else every `ssl_certificate` of the
/// nginx config and the local CA that clients trust.
struct CertificateExpiryCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        let explicit = context.settings.certificatePaths
        let paths = explicit.isEmpty ? Self.discovered(context) : explicit
        guard !paths.isEmpty else {
            return [DoctorFinding(.warn, "tls.certificate", "no certificate found in the nginx config or \(context.home)/tls; "
                                  + "name one with --certificate")]
        }
        return paths.map { finding(path: $0, context) }
    }

    func finding(path: String, _ context: DoctorContext) -> DoctorFinding {
        let now = context.clock()
        guard FileManager.default.fileExists(atPath: path) else { return DoctorFinding(.fail, "tls.certificate", "\(path) is missing") }
        guard FileManager.default.isReadableFile(atPath: path) else { return DoctorFinding(.fail, "tls.certificate", "\(path) cannot be read") }
        do {
            // The file's line is its worst certificate; among equals, the first.
            var worst: DoctorFinding?
            for certificate in try X509Certificate.certificates(pemFile: path) {
                let finding = try Self.finding(certificate, path: path, now: now, warning: context.settings.certificateWarning)
                if worst == nil || finding.status > worst!.status { worst = finding }
            }
            return worst ?? DoctorFinding(.fail, "tls.certificate", "\(path): no certificate")
        } catch {
            return DoctorFinding(.fail, "tls.certificate", "\(path): \(error)")
        }
    }

    static func finding(_ certificate: X509Certificate, path: String, now: Int64, warning: Int64) throws -> DoctorFinding {
        let notAfter = try certificate.notAfter, notBefore = try certificate.notBefore
        let described = "\(path): \(certificate.subject)"
        if notAfter <= now { return DoctorFinding(.fail, "tls.certificate", "\(described) expired \(DoctorTime.format(notAfter))") }
        if notBefore > now {
            return DoctorFinding(.fail, "tls.certificate", "\(described) is not valid before \(DoctorTime.format(notBefore))")
        }
        let detail = "\(described) expires \(DoctorTime.format(notAfter)) (in \((notAfter - now) / 86_400) days)"
        return DoctorFinding(notAfter - now < warning ? .warn : .ok, "tls.certificate", detail)
    }

    /// The nginx config's `ssl_certificate` files (not `_key`; none built from
    /// variables), then the local CA; without a config, the home's server
    /// certificate. Each once.
    static func discovered(_ context: DoctorContext) -> [String] {
        var paths: [String] = []
        let tls = context.home + "/tls"
        if let text = try? String(contentsOfFile: context.nginxConfigPath, encoding: .utf8) {
            for line in text.split(whereSeparator: \.isNewline) {
                let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard words.count >= 2, words[0] == "ssl_certificate" else { continue }
                let path = String(words[1].hasSuffix(";") ? words[1].dropLast() : words[1])
                if !path.contains("$"), !paths.contains(path) { paths.append(path) }
            }
        } else if FileManager.default.fileExists(atPath: tls + "/server.pem") {
            paths.append(tls + "/server.pem")
        }
        if FileManager.default.fileExists(atPath: tls + "/ca.pem"), !paths.contains(tls + "/ca.pem") { paths.append(tls + "/ca.pem") }
        return paths
    }
}
