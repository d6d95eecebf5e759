import FoundationEssentials
import IssuerStorage
import SSOCore

/// `config`: the configuration loads (GatehouseConfig refuses bad values)
/// and its parts agree with each other.
struct ConfigurationCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        if let error = context.configError { return [DoctorFinding(.fail, "config", error)] }
        let config = context.config
        var problems: [(DoctorFinding.Status, String)] = []
        // OIDC Core §3.1.2.1 / RFC 9207: the issuer identifier is an https URL.
        if URL(string: config.issuer)?.scheme != "https" { problems.append((.fail, "issuer \(config.issuer) is not https")) }
        // The audience of an access token is the resource server's origin:
        // two of them on one origin would accept each other's tokens.
        let origins = [("issuer", config.issuer), ("api-a", config.apiAOrigin), ("api-b", config.apiBOrigin)]
        for (index, first) in origins.enumerated() {
            for second in origins[(index + 1)...] where first.1 == second.1 {
                problems.append((.fail, "\(first.0) and \(second.0) share the origin \(first.1)"))
            }
        }
        if config.keyActivationDelay < config.jwksMaximumAge {
            problems.append((.warn, "GATEHOUSE_KEY_ACTIVATION_DELAY (\(config.keyActivationDelay) s) is shorter than GATEHOUSE_JWKS_MAX_AGE "
                                  + "(\(config.jwksMaximumAge) s): a rotated key may sign before every resource server has fetched it"))
        }
        if config.refreshGracePeriod >= config.refreshTokenLifetime {
            problems.append((.warn, "GATEHOUSE_REFRESH_GRACE is not shorter than GATEHOUSE_REFRESH_TOKEN_TTL"))
        }
        if !context.homeIsExplicit {
            problems.append((.warn, "GATEHOUSE_HOME is not set: using var/ under the working directory"))
        } else if !config.home.hasPrefix("/") {
            problems.append((.warn, "GATEHOUSE_HOME \(config.home) is relative: it depends on the working directory"))
        }
        if !FileManager.default.fileExists(atPath: config.home + "/gatehouse.conf") {
            problems.append((.warn, "no \(config.home)/gatehouse.conf: settings come from the environment and defaults only"))
        }
        guard let worst = problems.map(\.0).max() else {
            return [DoctorFinding(.ok, "config", "issuer \(config.issuer), home \(config.home)")]
        }
        return [DoctorFinding(worst, "config", problems.map(\.1).joined(separator: "; "))]
    }
}
