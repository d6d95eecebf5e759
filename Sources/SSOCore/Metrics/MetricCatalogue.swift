/// Every series a responder process counts, fixed at build time: the
/// layout of a process's counter file (ProcessCounters) and the names the
/// ops listener's `/metrics` renders (MetricsExposition). Label values are
/// closed lists, so the cardinality of the whole exposition is bounded by
/// this file: no user id, client id, path or free text ever becomes a label.
public enum MetricCatalogue {
    /// Status codes counted one by one; any other status is counted as "other".
    public static let statusCodes: [Int] = [200, 201, 204, 301, 302, 303, 304, 400, 401, 403, 404, 405, 409, 413, 415, 429, 500,
                                            502, 503]
    /// Upper bounds (seconds) of `gatehouse_http_request_duration_seconds`;
    /// one more bucket, +Inf, follows.
    public static let durationBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// The label value a labelled family counts an unexpected value under.
    public static let otherLabelValue = "other"

    // Slots: the status codes (+ other), the duration buckets (+ +Inf), the
    // duration sum in nanoseconds, then each counter family's values.
    static let statusBase = 0
    static let durationBase = statusBase + statusCodes.count + 1
    static let durationSumSlot = durationBase + durationBuckets.count + 1
    static let counterBase = durationSumSlot + 1

    /// Where each family's first slot is.
    static let familyBases: [Int] = {
        var bases: [Int] = [], next = counterBase
        for family in CounterFamily.allCases {
            bases.append(next)
            next += family.slotCount
        }
        return bases
    }()

    public static let slotCount: Int = familyBases.last! + CounterFamily.allCases.last!.slotCount

    /// The slot of status `code`.
    static func statusSlot(_ code: Int) -> Int {
        statusBase + (statusCodes.firstIndex(of: code) ?? statusCodes.count)
    }

    /// The slot of a request that took `nanoseconds`.
    static func durationSlot(nanoseconds: UInt64) -> Int {
        let seconds = Double(nanoseconds) / 1e9
        return durationBase + (durationBuckets.firstIndex { seconds <= $0 } ?? durationBuckets.count)
    }

    /// The slot of `family` with label value `value` (the "other" slot for a
    /// value the family does not list).
    static func slot(_ family: CounterFamily, _ value: String) -> Int {
        let base = familyBases[family.rawValue]
        guard family.label != nil else { return base }
        return base + (family.values.firstIndex(of: value) ?? family.values.count)
    }

    /// Changes whenever the layout does: a counter file written by another
    /// build is neither read nor continued (FNV-1a over every series name).
    static let fingerprint: UInt64 = {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var text = statusCodes.map(String.init).joined(separator: ",") + "|" + durationBuckets.map { "\($0)" }.joined(separator: ",")
        for family in CounterFamily.allCases { text += "|" + family.name + ":" + family.values.joined(separator: ",") }
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }()
}

/// The counters beside the request counts, one case per Prometheus family.
/// `perEndpoint` families are rendered with the endpoint of the process that
/// counted (the resource servers' own); the others are summed over every
/// process.
public enum CounterFamily: Int, CaseIterable, Sendable {
    case tokensIssued
    case refreshReuseDetected
    case refreshGraceRetries
    case logins
    case accountLocks
    case logouts
    case dpopProofsRejected
    case jwksFetches
    case accessTokenRefusals
    case mailSent
    case federatedSignIns
    case backchannelLogouts

    public var name: String {
        switch self {
        case .tokensIssued: "gatehouse_tokens_issued_total"
        case .refreshReuseDetected: "gatehouse_refresh_reuse_detected_total"
        case .refreshGraceRetries: "gatehouse_refresh_grace_retries_total"
        case .logins: "gatehouse_logins_total"
        case .accountLocks: "gatehouse_account_locks_total"
        case .logouts: "gatehouse_logouts_total"
        case .dpopProofsRejected: "gatehouse_dpop_proofs_rejected_total"
        case .jwksFetches: "gatehouse_jwks_fetches_total"
        case .accessTokenRefusals: "gatehouse_access_token_refusals_total"
        case .mailSent: "gatehouse_mail_sent_total"
        case .federatedSignIns: "gatehouse_federated_sign_ins_total"
        case .backchannelLogouts: "gatehouse_backchannel_logout_total"
        }
    }

    public var help: String {
        switch self {
        case .tokensIssued: "Token responses issued at /token, by grant type."
        case .refreshReuseDetected: "Spent refresh tokens presented again outside the grace window; each revoked its family."
        case .refreshGraceRetries: "Spent refresh tokens presented again within the grace window and answered with the same successor."
        case .logins: "Sign-in attempts at /login, by result."
        case .accountLocks: "Accounts locked by the login throttle after repeated failures."
        case .logouts: "Sign-in sessions ended by RP-initiated logout."
        case .dpopProofsRejected: "DPoP proofs refused (issuer and resource servers), by reason."
        case .jwksFetches: "JWKS fetches by the resource servers, by result."
        case .accessTokenRefusals: "Access tokens the resource servers refused, by error code."
        case .mailSent: "Delivery attempts of queued mail by the mail sender, by message kind and result (sent, retry, failed)."
        case .federatedSignIns: "Returns from upstream identity providers at /federation/callback, by result."
        case .backchannelLogouts: "Back-channel logout deliveries attempted by the mail sender, by result (sent, retry, failed)."
        }
    }

    /// The label's name, or nil for a family of one unlabelled series.
    /// Two names joined by a comma for a family of two labels, whose values
    /// are then pairs joined the same way ("test,sent").
    public var label: String? {
        switch self {
        case .mailSent: "kind,result"
        case .tokensIssued: "grant"
        case .logins, .federatedSignIns: "result"
        case .dpopProofsRejected, .accessTokenRefusals: "reason"
        case .jwksFetches, .backchannelLogouts: "result"
        case .refreshReuseDetected, .refreshGraceRetries, .accountLocks, .logouts: nil
        }
    }

    /// The label values counted one by one (plus "other" for a labelled family).
    public var values: [String] {
        switch self {
        case .tokensIssued: ["authorization_code", "refresh_token", "token_exchange", "client_credentials"]
        case .logins: LoginResult.allCases.map(\.rawValue)
        case .federatedSignIns: FederationResult.allCases.map(\.rawValue)
        // "nonce": a proof without the server's current nonce (use_dpop_nonce).
        case .dpopProofsRejected: DPoPError.Reason.allCases.map(\.metricLabel) + ["nonce"]
        case .jwksFetches: ["ok", "failed"]
        case .accessTokenRefusals:
            ["missing_token", "malformed_token", "token_expired", "invalid_signature", "unknown_signing_key", "invalid_issuer",
             "invalid_audience", "insufficient_scope", "token_requires_dpop", "token_not_dpop_bound", "invalid_dpop_proof",
             "dpop_key_mismatch", "use_dpop_nonce"]
        case .mailSent: MailMetricLabels.kinds.flatMap { kind in MailMetricLabels.results.map { kind + "," + $0 } }
        case .backchannelLogouts: MailMetricLabels.results
        case .refreshReuseDetected, .refreshGraceRetries, .accountLocks, .logouts: []
        }
    }

    /// The label names of the family (none, one, or two for `mailSent`).
    public var labelNames: [String] { label.map { $0.split(separator: ",").map(String.init) } ?? [] }

    public var perEndpoint: Bool { self == .jwksFetches || self == .accessTokenRefusals }

    var slotCount: Int { label == nil ? 1 : values.count + 1 }
}

/// The label values of `gatehouse_mail_sent_total`: the outbox's message
/// kinds (IssuerStorage's OutboxMessageKind; "other" for a kind this build
/// does not know) and what became of one attempt.
public enum MailMetricLabels {
    public static let kinds = ["verification", "password_reset", "invitation", "email_change", "notice", "test", "other"]
    /// sent: the server took it (or it was written to the drop directory);
    /// retry: a temporary failure, tried again later; failed: given up.
    public static let results = ["sent", "retry", "failed"]

    /// The `mailSent` value of one attempt.
    public static func value(kind: String, result: String) -> String {
        (kinds.contains(kind) ? kind : "other") + "," + result
    }
}

/// How a sign-in attempt ended: the `result` label of
/// `gatehouse_logins_total` and the `reason` of a failed sign-in's audit event.
public enum LoginResult: String, CaseIterable, Sendable {
    case success
    case wrongPassword = "wrong_password"
    case unknownUser = "unknown_user"
    case disabled
    case locked
    case wrongTOTP = "wrong_totp"
    /// A recovery code that is not one of the account's unused ones.
    case wrongRecoveryCode = "wrong_recovery_code"
    /// A passkey assertion that did not verify (unknown credential, wrong
    /// challenge, bad signature, counter not increased).
    case passkeyRefused = "passkey_refused"
    /// A right password for a sign-up whose address is not verified yet.
    case unverifiedEmail = "unverified_email"
}

/// How a return from an upstream identity provider ended: the `result`
/// label of `gatehouse_federated_sign_ins_total` and the `reason` of a
/// refused one's audit event.
public enum FederationResult: String, CaseIterable, Sendable {
    /// Signed in through an existing link.
    case success
    /// A new local account was made from the provider's verified address.
    case created
    /// The address belongs to a local account: its owner was asked to sign
    /// in with it to link the provider.
    case linkOffered = "link_offered"
    /// The user cancelled at the provider (`access_denied`).
    case cancelled
    /// The provider answered the authorization request with another error.
    case providerError = "provider_error"
    /// The callback's state is unknown, spent, expired or not this browser's.
    case invalidState = "invalid_state"
    /// The provider's token endpoint refused the code or could not be reached.
    case tokenRefused = "token_refused"
    /// The ID token failed a check (signature, iss, aud, azp, exp, iat, nonce, hd).
    case invalidIDToken = "invalid_id_token"
    /// No verified address, and no link: nothing was made.
    case noVerifiedEmail = "no_verified_email"
    /// The linked account is disabled.
    case disabled
}
