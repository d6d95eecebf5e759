import IssuerStorage
import FoundationEssentials
import Glibc

/// `nginx.config`: `nginx -t` accepts the rendered configuration, the same
/// test Scripts/run makes before starting nginx (same prefix, errors on
/// standard error rather than in the log). Absent nginx or config: a
/// warning (a host may run doctor without the web tier), unless the
/// config was named with --nginx-config.
struct NginxConfigCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        let path = context.nginxConfigPath
        guard FileManager.default.fileExists(atPath: path) else {
            let named = context.settings.nginxConfigPath != nil
            return [DoctorFinding(named ? .fail : .warn, "nginx.config",
                                  "no nginx config at \(path)\(named ? "" : " (Scripts/run renders it there)"); not tested")]
        }
        guard let nginx = context.settings.nginxExecutable ?? Self.find("nginx") else {
            return [DoctorFinding(.warn, "nginx.config", "nginx is not installed; \(path) not tested")]
        }
        guard let run = context.settings.runCommand else {
            return [DoctorFinding(.warn, "nginx.config", "no way to run \(nginx) here; \(path) not tested")]
        }
        let prefix = (path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ".") + "/"
        do {
            let result = try run(nginx, ["-t", "-q", "-p", prefix, "-e", "stderr", "-c", path])
            if result.status == 0 { return [DoctorFinding(.ok, "nginx.config", "nginx -t accepts \(path)")] }
            let lines = result.output.split(whereSeparator: \.isNewline).map(String.init)
            let reason = lines.last { $0.contains("[emerg]") || $0.contains("[alert]") } ?? lines.last ?? "exit status \(result.status)"
            return [DoctorFinding(.fail, "nginx.config", "nginx -t rejects \(path): \(reason)")]
        } catch {
            return [DoctorFinding(.fail, "nginx.config", "cannot run \(nginx): \(error)")]
        }
    }

    /// `name` on PATH, else in the sbin directories a non-root PATH often lacks.
    static func find(_ name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let directories = (environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        return directories.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
    }
}
