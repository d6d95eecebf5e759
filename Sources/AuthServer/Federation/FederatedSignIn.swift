import FoundationEssentials
import IssuerStorage
import SSOCore

/// A sign-in through an upstream provider, from the login page's control to
/// the callback: the trip out (FederationTrip, stored hashed), the code
/// redeemed at the provider's token endpoint outside any transaction, its
/// ID token verified (UpstreamIDToken), and the account found or made by
/// the linking rules in the write unit that completes the pending request.
public final class FederatedSignIn {
    let storage: any IssuerStorage
    let registry: IdentityProviderRegistry
    let http: any ProviderDocumentFetching
    let keys: ProviderKeys
    let completion: SignInCompletion
    let issuer: String
    let clock: Clock
    /// Apple's client secrets, made once a day per provider row (AppleClientSecret).
    private var appleSecrets: [String: AppleClientSecret] = [:]

    public init(storage: any IssuerStorage, registry: IdentityProviderRegistry, http: any ProviderDocumentFetching,
                completion: SignInCompletion, issuer: String, clock: @escaping Clock) {
        self.storage = storage
        self.registry = registry
        self.http = http
        keys = ProviderKeys(http: http, clock: clock)
        self.completion = completion
        self.issuer = issuer
        self.clock = clock
    }

    var redirectURI: String { IdentityProviderRegistry.redirectURI(issuer: issuer) }

    // MARK: The trip out

    /// Stores the trip for the pending request behind `step` and returns
    /// where to send the browser; nil when there is no such provider.
    public func start(provider name: String, step: LoginStep) throws -> (location: String, trip: FederationTrip)? {
        guard let provider = try registry.find(name: name) else { return nil }
        let pendingHash = SecretHash.of(step.cookieSecret)
        guard let pending = try storage.read.pendingAuthorizations.find(secretHash: pendingHash, now: clock()) else { return nil }
        let trip = FederationTrip.start(formToken: step.formToken)
        let now = clock()
        try storage.write {
            try $0.federatedIdentities.insertRequest(FederationRequest(
                stateHash: SecretHash.of(trip.state), bindingHash: SecretHash.of(trip.binding), provider: provider.name,
                pendingHash: pendingHash, createdAt: now, expiresAt: now + FederationTrip.lifetime))
        }
        let request = pending.request
        let location = ProviderAuthorizationURL.make(
            provider: provider, redirectURI: redirectURI, state: trip.state, nonce: trip.nonce, codeChallenge: trip.codeChallenge,
            loginHint: request.loginHint,
            reauthenticate: pending.replacesSID != nil || request.maxAge != nil || request.prompt.contains("login"))
        return (location, trip)
    }

    // MARK: The way back

    /// What the callback found, for the responder to answer.
    public enum Return {
        /// Signed in (or the completion's own refusal, SignInAnswer's to word).
        case completed(SignInCompletion.Outcome, user: User, amr: [String], result: FederationResult)
        /// The user cancelled at the provider: the app hears `access_denied`.
        case cancelled(AuthorizationRequest, provider: String)
        /// The address is a local account's: its owner signs in to link.
        case proveAccount(email: String, trip: FederationTrip, clientID: String, provider: String)
        /// Refused; the pending request still waits (the login page again)
        /// when `clientID` is given, else it is gone.
        case refused(FederationResult, trip: FederationTrip?, clientID: String?, provider: String?, detail: String)
    }

    /// What the provider sent back (query or form_post) and this browser's cookie.
    public struct Answer {
        let state: String?
        let code: String?
        let error: String?
        /// RFC 9207's `iss`, when the provider sends one.
        let issuer: String?
        /// Apple's first form_post: `user`, JSON with the name (unsigned:
        /// only a display name is taken from it, never an address).
        let appleUser: String?
        let cookie: String?
    }

    public func finish(_ answer: Answer, browser: SignInCompletion.Browser) throws -> Return {
        // RFC 6749 §10.12 and OIDC Core §3.1.2.1 `state`: the answer belongs
        // to a trip this issuer started, in this browser, not used before.
        guard let state = answer.state, FederationTrip.isWellFormed(state: state) else {
            return .refused(.invalidState, trip: nil, clientID: nil, provider: nil, detail: "state missing or malformed")
        }
        guard let request = try storage.write({ try $0.federatedIdentities.takeRequest(stateHash: SecretHash.of(state), now: clock()) })
        else { return .refused(.invalidState, trip: nil, clientID: nil, provider: nil, detail: "unknown, used or expired state") }
        // Taken before the binding is compared: a state tried from another
        // browser (with no cookie, or another one) is spent, so a leaked
        // answer cannot be raced back to any browser.
        guard let trip = FederationTrip.returning(state: state, cookie: answer.cookie),
              ConstantTime.equals(SecretHash.of(trip.binding), request.bindingHash) else {
            return .refused(.invalidState, trip: nil, clientID: nil, provider: request.provider, detail: "the binding cookie is another browser's")
        }
        guard let pending = try storage.read.pendingAuthorizations.find(secretHash: request.pendingHash, now: clock()),
              ConstantTime.equals(SecretHash.of(trip.formToken), pending.formTokenHash) else {
            return .refused(.invalidState, trip: nil, clientID: nil, provider: request.provider, detail: "the pending request is gone")
        }
        let clientID = pending.request.clientID
        func refused(_ result: FederationResult, _ detail: String) -> Return {
            .refused(result, trip: trip, clientID: clientID, provider: request.provider, detail: detail)
        }
        guard let provider = try registry.find(name: request.provider) else { return refused(.providerError, "the provider was removed") }
        // RFC 9207 §2.4: "Clients that support this specification MUST
        // extract the value of the iss parameter from authorization
        // responses they receive if the parameter is present and compare
        // the result to the issuer identifier of the authorization server
        // where the authorization request was sent to", and a client that
        // knows the server sends it "MUST reject authorization responses
        // without the iss parameter". Every provider answers at the one
        // callback, so this is what tells a code from another provider
        // (RFC 9700 §4.4, mix-up) before it is sent to this one's token endpoint.
        if let stated = answer.issuer {
            guard stated.utf8.elementsEqual(provider.issuer.utf8) else {
                return refused(.providerError, "the answer's iss is not the issuer of the provider it was sent to (mix-up)")
            }
        } else if provider.endpoints.sendsIssuer {
            return refused(.providerError, "the provider sends iss in its answers, and this one has none")
        }
        if let error = answer.error {
            // RFC 6749 §4.1.2.1: "access_denied: The resource owner or
            // authorization server denied the request." Apple says
            // `user_cancelled_authorize`.
            guard ["access_denied", "user_cancelled_authorize"].contains(error) else {
                return refused(.providerError, "the provider answered error=\(error.prefix(40))")
            }
            guard let consumed = try storage.write({ try $0.pendingAuthorizations.consume(secretHash: request.pendingHash, now: clock()) }) else {
                return .refused(.invalidState, trip: nil, clientID: nil, provider: provider.name, detail: "the pending request is gone")
            }
            return .cancelled(consumed.request, provider: provider.name)
        }
        guard let code = answer.code, (1...2048).contains(code.utf8.count) else { return refused(.providerError, "no code in the answer") }
        let idToken: String
        do { idToken = try redeem(code: code, provider: provider, trip: trip) } catch {
            return refused(.tokenRefused, "\(error)")
        }
        let identity: UpstreamIdentity
        do {
            identity = try UpstreamIDToken.verify(idToken, provider: provider, nonce: trip.nonce, now: clock()) {
                try self.keys.key(jwksURI: provider.endpoints.jwks, kid: $0)
            }
        } catch {
            return refused(.invalidIDToken, "\(error)")
        }
        return try resolve(identity, provider: provider, request: request, trip: trip, clientID: clientID,
                           appleName: answer.appleUser.flatMap(Self.appleName), browser: browser)
    }

    /// The linking rules, in the write unit that completes the sign-in.
    func resolve(_ identity: UpstreamIdentity, provider: IdentityProvider, request: FederationRequest, trip: FederationTrip,
                 clientID: String, appleName: String?, browser: SignInCompletion.Browser) throws -> Return {
        let now = clock()
        let amr = AuthenticationMethods.federated(provider: provider.name, upstream: identity.amr)
        var result = FederationResult.success
        do {
            let (outcome, user) = try completion.complete(amr: amr, proof: .federated(pendingHash: request.pendingHash), browser: browser) { tx in
                // Two first sign-ins of one upstream account at once (two
                // tabs, two nodes): the second waits here for the first's
                // commit, then finds its link, instead of making the address
                // twice (the users' unique key would refuse it with a 500).
                if let email = identity.verifiedEmail { try tx.mailOutbox.holdRecipient(email) }
                // Later sign-ins match on (issuer, sub) only, never on email.
                if let link = try tx.federatedIdentities.find(issuer: identity.issuer, subject: identity.subject) {
                    guard let user = try tx.users.find(id: link.userID), !user.disabled else { throw Refused.disabled(link.email) }
                    try tx.federatedIdentities.touch(issuer: identity.issuer, subject: identity.subject, at: now)
                    return user
                }
                guard let email = identity.verifiedEmail else { throw Refused.noVerifiedEmail }
                // The address is someone's account here: linking it on the
                // provider's word alone would hand that account to whoever
                // controls the upstream one; its owner must sign in to it.
                if let existing = try tx.users.find(email: email) { throw Refused.proveAccount(existing) }
                let user = try tx.users.insert(NewUser(subject: SecureRandom.token(byteCount: 16), email: email,
                                                       name: identity.name ?? appleName ?? String(email.prefix { $0 != "@" }),
                                                       passwordHash: "", roles: ["user"], createdAt: now, emailVerified: true))
                try tx.federatedIdentities.insert(FederatedIdentity(issuer: identity.issuer, subject: identity.subject, userID: user.id,
                                                                    provider: provider.name, email: email, linkedAt: now, lastUsedAt: now))
                result = .created
                return user
            }
            guard let user else { return .refused(.invalidState, trip: nil, clientID: nil, provider: provider.name, detail: "the pending request is gone") }
            return .completed(outcome, user: user, amr: amr, result: result)
        } catch let refusal as Refused {
            switch refusal {
            case .disabled(let email):
                return .refused(.disabled, trip: trip, clientID: clientID, provider: provider.name, detail: "the linked account \(email) is disabled")
            case .noVerifiedEmail:
                return .refused(.noVerifiedEmail, trip: trip, clientID: clientID, provider: provider.name,
                                detail: "the provider gave no verified address and the account is not linked")
            case .proveAccount(let existing):
                // Nothing is linked yet: the offer waits for the account's own
                // sign-in in this pending request (SignInCompletion.adoptLinkOffer).
                try storage.write { tx in
                    try tx.federatedIdentities.offerLink(stateHash: request.stateHash, FederatedLinkOffer(
                        userID: existing.id, provider: provider.name, issuer: identity.issuer, subject: identity.subject,
                        email: identity.verifiedEmail ?? existing.email))
                }
                return .proveAccount(email: existing.email, trip: trip, clientID: clientID, provider: provider.name)
            }
        }
    }

    enum Refused: Error {
        case disabled(String)
        case noVerifiedEmail
        case proveAccount(User)
    }

    // MARK: The provider's token endpoint

    /// RFC 6749 §4.1.3 with RFC 7636 §4.5: the code, the redirect URI and
    /// the verifier; the client authenticated with `client_secret_basic`
    /// (RFC 6749 §2.3.1: every server MUST support it), Apple's generated
    /// secret in the body as Apple documents. Bounded by the outbound
    /// client's 10 s; never inside a transaction.
    func redeem(code: String, provider: IdentityProvider, trip: FederationTrip) throws -> String {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", trip.codeVerifier)]
        var headers: [(name: String, value: String)] = []
        if provider.preset == .apple {
            fields += [("client_id", provider.clientID), ("client_secret", try appleSecret(provider))]
        } else if let sealed = provider.sealedSecret {
            let secret = String(decoding: try registry.sealer.open(sealed, provider: provider.name, column: .secret), as: UTF8.self)
            // §2.3.1: each part form-encoded before the Basic encoding.
            let credentials = FormParser.encodeComponent(provider.clientID) + ":" + FormParser.encodeComponent(secret)
            headers.append((name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString()))
        } else {
            fields.append(("client_id", provider.clientID))
        }
        let (status, body) = try http.postForm(provider.endpoints.token, fields, headers: headers)
        struct TokenBody: Decodable { let id_token: String?; let error: String? }
        let parsed = try? JSONDecoder().decode(TokenBody.self, from: Data(body))
        guard status == 200, let idToken = parsed?.id_token else {
            throw ProviderRequestError(detail: "the token endpoint answered \(status)" + (parsed?.error.map { " \($0.prefix(40))" } ?? "")
                                    + (status == 200 ? " without an id_token" : ""))
        }
        return idToken
    }

    func appleSecret(_ provider: IdentityProvider) throws -> String {
        let now = clock()
        guard let apple = provider.appleKey else { throw ProviderRequestError(detail: "the Apple provider has no signing key") }
        // Held per row as stored: a provider removed and added again under
        // its name (a new key, a new client id) gets a secret of its own at once.
        let held = Base64URL.encode(SHA256.hash(apple.sealedPrivateKey + Array("\u{0}\(provider.clientID)".utf8)))
        if let secret = appleSecrets[held], !secret.needsRenewal(now: now) { return secret.jwt }
        let pem = try registry.sealer.open(apple.sealedPrivateKey, provider: provider.name, column: .appleKey)
        let made = try AppleClientSecret.make(key: try ES256PrivateKey.privateKey(pem: pem), teamID: apple.teamID, keyID: apple.keyID,
                                              clientID: provider.clientID, now: now)
        appleSecrets[held] = made
        return made.jwt
    }

    /// Apple's `user` (first sign-in only): `{"name": {"firstName", "lastName"}, "email"}`.
    static func appleName(_ json: String) -> String? {
        struct User: Decodable {
            struct Name: Decodable { let firstName: String?; let lastName: String? }
            let name: Name?
        }
        guard json.utf8.count <= 4096, let user = try? JSONDecoder().decode(User.self, from: Data(json.utf8)), let name = user.name else { return nil }
        return UpstreamIDToken.displayName(nil, or: [name.firstName, name.lastName])
    }
}
