import FoundationEssentials

/// The CA files outbound TLS trusts besides the system store (the
/// contract's "Outbound HTTPS" rule, which mail follows too):
/// `GATEHOUSE_CA_FILE` when set, and, in the development layout, the local
/// CA `$GATEHOUSE_HOME/tls/ca.pem` that Scripts/run makes (a production
/// home has none, so nothing is added there).
public enum TrustedCAFiles {
    public static func of(home: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                          fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> [String] {
        var files: [String] = []
        if let configured = environment["GATEHOUSE_CA_FILE"], !configured.isEmpty { files.append(configured) }
        let local = home + "/tls/ca.pem"
        if fileExists(local), !files.contains(local) { files.append(local) }
        return files
    }
}
