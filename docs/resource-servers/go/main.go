// Command verify validates a Gatehouse access token offline (RFC 9068 §4,
// RFC 8725), as a resource server written in Go would, with the standard
// library only.
//
// An HTTP handler calls Authenticate(r.Header.Get("Authorization"), ...) with
// one Policy and one KeySet made at start (KeySet is safe for concurrent
// use). Run as a program it checks one token and prints the claims (exit 0)
// or the refusal (exit 1) as JSON:
//
//	verify -issuer https://localhost:8443 -audience https://localhost:8444 \
//	    -scope api:serverA -ca-file var/tls/ca.pem [-jwks-cache FILE] TOKEN
package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

const (
	leeway             = 60   // seconds of clock skew tolerated on exp, nbf and iat
	maximumAge         = 3600 // a key set older than this is fetched again
	unknownKidInterval = 30   // at most one refetch for an unknown kid per this many seconds
	retryInterval      = 30   // after a failed refresh, serve the held keys this long before trying again
)

type Policy struct {
	Issuer   string // e.g. https://localhost:8443
	Audience string // this API's origin, e.g. https://localhost:8444
	Scope    string // e.g. api:serverA
}

// Refusal is a refused request: 401, or 403 for a good token not meant for this API.
type Refusal struct {
	Code        string
	Description string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Description }

func (r *Refusal) Status() int {
	if r.Code == "invalid_audience" || r.Code == "insufficient_scope" {
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

// Challenge is the WWW-Authenticate value (RFC 6750 §3).
func (r *Refusal) Challenge(policy Policy) string {
	switch r.Code {
	// RFC 6750 §3.1: "If the request lacks any authentication information
	// ... the resource server SHOULD NOT include an error code".
	case "missing_token":
		return fmt.Sprintf(`Bearer realm="%s"`, policy.Audience)
	// RFC 6750 §3.1: insufficient_scope "MAY include the "scope" attribute
	// with the scope necessary to access the protected resource."
	case "insufficient_scope":
		return fmt.Sprintf(`Bearer realm="%s", error="insufficient_scope", scope="%s"`, policy.Audience, policy.Scope)
	}
	return fmt.Sprintf(`Bearer realm="%s", error="invalid_token", error_description="%s"`, policy.Audience, r.Description)
}

func refuse(code, description string) error { return &Refusal{code, description} }

// ErrKeysUnavailable: no key set could be fetched yet; answer 503 with Retry-After, not 401.
var ErrKeysUnavailable = errors.New("cannot fetch the issuer's keys")

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"` // EC and OKP
	Y   string `json:"y,omitempty"` // EC
	N   string `json:"n,omitempty"` // RSA
	E   string `json:"e,omitempty"` // RSA
}

// algorithms are the issuer's, each with the one kind of key (kty, crv) that
// signs with it: RFC 7518 §3.3 RS256 with RSA, §3.4 ES256 with P-256, RFC 8037
// §3.1 EdDSA with Ed25519.
var algorithms = map[[2]string]string{{"RSA", ""}: "RS256", {"EC", "P-256"}: "ES256", {"OKP", "Ed25519"}: "EdDSA"}

// verificationKey is a published key and the one algorithm it verifies:
// *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey.
type verificationKey struct {
	Alg string
	Key crypto.PublicKey
}

type keySetState struct {
	JWKSURI     string `json:"jwks_uri"`
	FetchedAt   int64  `json:"fetched_at"` // 0: never
	RefetchedAt int64  `json:"refetched_at"`
	Keys        []jwk  `json:"keys"`
}

// KeySet holds the issuer's signing keys by kid, found through discovery,
// cached, and refetched on an unknown kid at most once per
// unknownKidInterval. With a Path, the cache survives restarts (and the
// program's separate runs).
type KeySet struct {
	Issuer string
	Client *http.Client
	Path   string
	mu     sync.Mutex
	state  keySetState
}

func NewKeySet(issuer, caFile, path string) (*KeySet, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	if caFile != "" { // trust only this CA for the issuer
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	keys := &KeySet{Issuer: issuer, Client: client, Path: path}
	if data, err := os.ReadFile(path); path != "" && err == nil {
		if err := json.Unmarshal(data, &keys.state); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	return keys, nil
}

// Key returns the key for kid, or nil when the issuer does not publish it.
func (k *KeySet) Key(kid string, now int64) (*verificationKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.state.FetchedAt == 0 || now-k.state.FetchedAt >= maximumAge {
		reason := "key set is stale"
		if k.state.FetchedAt == 0 {
			reason = "no key set yet"
		}
		if err := k.fetch(now, reason); err != nil {
			return nil, err
		}
	} else if k.find(kid) == nil {
		// RFC 7517 §4.5: the kid is used "to choose among a set of keys
		// within a JWK Set during key rollover": a new kid may be a new key.
		if last := k.state.RefetchedAt; last == 0 || now-last >= unknownKidInterval {
			k.state.RefetchedAt = now
			if err := k.fetch(now, "unknown kid "+kid); err != nil {
				return nil, err
			}
		} else {
			logf("unknown kid %s: refetched %d s ago, not again yet", kid, now-last)
		}
	}
	return k.find(kid), nil
}

func (k *KeySet) find(kid string) *verificationKey {
	for _, key := range k.state.Keys {
		// RFC 9068 §4: "The resource server MUST use the keys provided by the
		// authorization server." Only signing keys of the issuer's algorithms
		// qualify, and an "alg" member (RFC 7517 §4.4) must fit the key.
		alg := algorithms[[2]string{key.Kty, key.Crv}]
		if key.Kid != kid || alg == "" || (key.Use != "" && key.Use != "sig") || (key.Alg != "" && key.Alg != alg) {
			continue
		}
		if public := publicKey(key); public != nil {
			return &verificationKey{alg, public}
		}
	}
	return nil
}

// publicKey decodes a JWK's members (RFC 7518 §6.3.1 RSA, §6.2.1 EC, RFC 8037
// §2 OKP), or returns nil when they do not make a valid key.
func publicKey(key jwk) crypto.PublicKey {
	x, errX := base64.RawURLEncoding.DecodeString(key.X)
	switch key.Kty {
	case "RSA":
		n, errN := base64.RawURLEncoding.DecodeString(key.N)
		e, errE := base64.RawURLEncoding.DecodeString(key.E)
		if errN != nil || errE != nil || len(e) == 0 || len(e) > 4 {
			return nil
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	case "EC":
		// RFC 7518 §6.2.1.2: x and y are "the full size of a coordinate".
		y, errY := base64.RawURLEncoding.DecodeString(key.Y)
		public := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 || !public.Curve.IsOnCurve(public.X, public.Y) {
			return nil
		}
		return public
	case "OKP":
		if errX != nil || len(x) != ed25519.PublicKeySize {
			return nil
		}
		return ed25519.PublicKey(x)
	}
	return nil
}

func (k *KeySet) fetch(now int64, reason string) error {
	if err := k.download(now); err != nil {
		if len(k.state.Keys) == 0 {
			return fmt.Errorf("%w: %v", ErrKeysUnavailable, err)
		}
		logf("JWKS fetch failed (%v); keeping the keys held", err)
		if k.state.FetchedAt < now-maximumAge+retryInterval {
			k.state.FetchedAt = now - maximumAge + retryInterval
		}
		return nil
	}
	logf("fetched %d keys from %s (%s)", len(k.state.Keys), k.state.JWKSURI, reason)
	if k.Path != "" {
		data, _ := json.Marshal(k.state)
		if err := os.WriteFile(k.Path+".tmp", data, 0o644); err == nil {
			os.Rename(k.Path+".tmp", k.Path)
		}
	}
	return nil
}

func (k *KeySet) download(now int64) error {
	if k.state.JWKSURI == "" {
		var document struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := k.getJSON(k.Issuer+"/.well-known/openid-configuration", &document); err != nil {
			return err
		}
		// OpenID Connect Discovery 1.0 §4.3: "The issuer value returned MUST be
		// identical to the Issuer URL that was used as the prefix".
		if document.Issuer != k.Issuer || document.JWKSURI == "" {
			return fmt.Errorf("discovery names issuer %q", document.Issuer)
		}
		k.state.JWKSURI = document.JWKSURI
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := k.getJSON(k.state.JWKSURI, &set); err != nil {
		return err
	}
	k.state.Keys, k.state.FetchedAt = set.Keys, now
	return nil
}

func (k *KeySet) getJSON(url string, into any) error {
	request, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// no-cache (RFC 9111 §5.2.1.4): past the issuer's 2-second copy, so a
	// refetch for a kid just rotated in finds it.
	request.Header.Set("Cache-Control", "no-cache")
	response, err := k.Client.Do(request)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", url, response.StatusCode)
	}
	return json.NewDecoder(response.Body).Decode(into)
}

type header struct {
	Alg  string          `json:"alg"`
	Typ  string          `json:"typ"`
	Kid  *string         `json:"kid"`
	Crit json.RawMessage `json:"crit"`
}

// Claims are the ones checked here; Raw is the whole payload.
type Claims struct {
	Iss   string          `json:"iss"`
	Sub   string          `json:"sub"`
	Aud   audience        `json:"aud"`
	Exp   *float64        `json:"exp"`
	Nbf   *float64        `json:"nbf"`
	Iat   *float64        `json:"iat"`
	Scope string          `json:"scope"`
	Cnf   json.RawMessage `json:"cnf"`
	Raw   json.RawMessage `json:"-"`
}

// audience is RFC 7519 §4.1.3's aud: an array of strings, or one string.
type audience []string

func (a *audience) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*a = audience{one}
		return nil
	}
	return json.Unmarshal(data, (*[]string)(a))
}

// Authenticate returns the verified claims of a request's Authorization
// header, or a *Refusal (or ErrKeysUnavailable). The checks run in a fixed
// order: header, key, signature, then claims.
func Authenticate(authorization string, policy Policy, keys *KeySet, now int64) (*Claims, error) {
	token, err := bearerToken(authorization)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, refuse("malformed_token", "the access token is not a well-formed JWT")
	}
	var head header
	if err := decodeSegment(parts[0], &head); err != nil {
		return nil, err
	}
	for _, check := range []func(header) error{checkAlgorithm, checkType, checkCritical} {
		if err := check(head); err != nil {
			return nil, err
		}
	}
	key, err := signingKey(head, keys, now)
	if err != nil {
		return nil, err
	}
	if err := checkSignature(parts, key); err != nil {
		return nil, err
	}
	var claims Claims
	if err := decodeSegment(parts[1], &claims); err != nil {
		return nil, refuse("malformed_token", "the access token claims are missing or of the wrong type")
	}
	claims.Raw, _ = base64.RawURLEncoding.DecodeString(parts[1])
	for _, check := range []func(*Claims, Policy, int64) error{checkRequired, checkIssuer, checkTimeWindow, checkAudience, checkScope, checkNotBound} {
		if err := check(&claims, policy, now); err != nil {
			return nil, err
		}
	}
	return &claims, nil
}

func bearerToken(authorization string) (string, error) {
	// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token (the scheme is case-insensitive).
	scheme, token, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", refuse("missing_token", "an access token is required (Authorization: Bearer)")
	}
	if token = strings.TrimSpace(token); token == "" {
		return "", refuse("malformed_token", "the Authorization header is not a valid Bearer credential")
	}
	return token, nil
}

// RFC 7519 §7.2: "base64url decode the encoded representation of the JOSE
// Header" ... "Verify that the resulting octet sequence is ... a completely
// valid JSON object".
func decodeSegment(segment string, into any) error {
	data, err := base64.RawURLEncoding.DecodeString(segment)
	if err != nil || json.Unmarshal(data, into) != nil {
		return refuse("malformed_token", "the access token is not a well-formed JWT")
	}
	return nil
}

func checkAlgorithm(h header) error {
	// RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
	// set of algorithms and MUST NOT use any other algorithms". RFC 9068 §4:
	// "The resource server MUST reject any JWT in which the value of "alg" is "none"."
	if h.Alg != "RS256" && h.Alg != "ES256" && h.Alg != "EdDSA" {
		return refuse("invalid_signature", "the access token is not signed with RS256, ES256 or EdDSA")
	}
	return nil
}

func checkType(h header) error {
	// RFC 9068 §4: "Resource servers MUST verify that the "typ" header value is
	// "at+jwt" or "application/at+jwt" and reject tokens carrying any other value."
	if typ := strings.ToLower(h.Typ); typ != "at+jwt" && typ != "application/at+jwt" {
		return refuse("malformed_token", "the token is not a JWT access token (typ at+jwt)")
	}
	return nil
}

func checkCritical(h header) error {
	// RFC 7515 §4.1.11: "If any of the listed extension Header Parameters are
	// not understood and supported by the recipient, then the JWS is invalid."
	if h.Crit != nil {
		return refuse("malformed_token", "the access token uses unsupported critical header parameters")
	}
	return nil
}

func signingKey(h header, keys *KeySet, now int64) (*verificationKey, error) {
	// RFC 7515 §4.1.4: "The "kid" (key ID) Header Parameter is a hint
	// indicating which key was used to secure the JWS."
	if h.Kid == nil {
		return nil, refuse("unknown_signing_key", "the access token names no signing key (kid)")
	}
	key, err := keys.Key(*h.Kid, now)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, refuse("unknown_signing_key", "the access token is signed with a key the issuer does not publish")
	}
	// RFC 8725 §3.1: a key is used with its own algorithm only: an RSA key
	// never verifies an ES256 token, whatever the token's alg says.
	if key.Alg != h.Alg {
		return nil, refuse("invalid_signature", "the access token signature does not verify")
	}
	return key, nil
}

func checkSignature(parts []string, key *verificationKey) error {
	// RFC 7515 §5.2: "Validate the JWS Signature against the JWS Signing Input
	// ... If any of the listed steps fails, then the signature or MAC cannot be validated."
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	input := []byte(parts[0] + "." + parts[1])
	digest := sha256.Sum256(input)
	valid := false
	switch public := key.Key.(type) {
	case *rsa.PublicKey:
		valid = rsa.VerifyPKCS1v15(public, crypto.SHA256, digest[:], signature) == nil
	case *ecdsa.PublicKey:
		// RFC 7518 §3.4: the signature is "the concatenation of the two
		// 32-octet big-endian unsigned integers R and S", not DER.
		valid = len(signature) == 64 && ecdsa.Verify(public, digest[:],
			new(big.Int).SetBytes(signature[:32]), new(big.Int).SetBytes(signature[32:]))
	case ed25519.PublicKey:
		// RFC 8037 §3.1: Ed25519 signs the JWS Signing Input itself, not a hash of it.
		valid = ed25519.Verify(public, input, signature)
	}
	if err != nil || !valid {
		return refuse("invalid_signature", "the access token signature does not verify")
	}
	return nil
}

func checkRequired(c *Claims, _ Policy, _ int64) error {
	// RFC 9068 §2.2: iss, exp, aud, sub and iat are REQUIRED.
	if c.Iss == "" || c.Sub == "" || len(c.Aud) == 0 || c.Exp == nil || c.Iat == nil {
		return refuse("malformed_token", "the access token claims are missing or of the wrong type")
	}
	return nil
}

func checkIssuer(c *Claims, policy Policy, _ int64) error {
	// RFC 9068 §4: "The issuer identifier for the authorization server ...
	// MUST exactly match the value of the "iss" claim."
	if c.Iss != policy.Issuer {
		return refuse("invalid_issuer", "the access token was not issued by "+policy.Issuer)
	}
	return nil
}

func checkTimeWindow(c *Claims, _ Policy, now int64) error {
	// RFC 9068 §4: "The current time MUST be before the time represented by
	// the "exp" claim. Implementers MAY provide for some small leeway".
	if float64(now) >= *c.Exp+leeway {
		return refuse("token_expired", "the access token has expired")
	}
	// RFC 7519 §4.1.5: "the current date/time MUST be after or equal to the
	// not-before date/time listed in the "nbf" claim." An iat in the future likewise.
	if (c.Nbf != nil && float64(now)+leeway < *c.Nbf) || float64(now)+leeway < *c.Iat {
		return refuse("token_expired", "the access token is not valid yet")
	}
	return nil
}

func checkAudience(c *Claims, policy Policy, _ int64) error {
	// RFC 9068 §4: "The resource server MUST validate that the "aud" claim
	// contains a resource indicator value corresponding to an identifier the
	// resource server expects for itself."
	for _, value := range c.Aud {
		if value == policy.Audience {
			return nil
		}
	}
	return refuse("invalid_audience", "the access token is not meant for "+policy.Audience)
}

func checkScope(c *Claims, policy Policy, _ int64) error {
	// RFC 9068 §2.2.3: the scope claim is "a space-separated list of scopes".
	// RFC 6750 §3.1 insufficient_scope: "The request requires higher privileges
	// than provided by the access token."
	for _, scope := range strings.Split(c.Scope, " ") {
		if scope == policy.Scope {
			return nil
		}
	}
	return refuse("insufficient_scope", "the access token does not grant "+policy.Scope)
}

func checkNotBound(c *Claims, _ Policy, _ int64) error {
	// RFC 9449 §7.2: "such a protected resource MUST reject a DPoP-bound access
	// token received as a bearer token". This program takes Bearer tokens only.
	if c.Cnf != nil {
		return refuse("token_requires_dpop", "the access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof")
	}
	return nil
}

func logf(format string, arguments ...any) {
	fmt.Fprintf(os.Stderr, "jwks: "+format+"\n", arguments...)
}

func main() {
	var policy Policy
	flag.StringVar(&policy.Issuer, "issuer", "", "the issuer, e.g. https://localhost:8443")
	flag.StringVar(&policy.Audience, "audience", "", "this API's origin")
	flag.StringVar(&policy.Scope, "scope", "", "the scope this API requires")
	caFile := flag.String("ca-file", "", "PEM of the CA to trust for the issuer (default: the system's)")
	cache := flag.String("jwks-cache", "", "file that keeps the key set between runs")
	flag.Parse()
	if policy.Issuer == "" || policy.Audience == "" || policy.Scope == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	keys, err := NewKeySet(policy.Issuer, *caFile, *cache)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	claims, err := Authenticate("Bearer "+flag.Arg(0), policy, keys, time.Now().Unix())
	var refusal *Refusal
	switch {
	case errors.As(err, &refusal):
		printJSON(map[string]any{"status": refusal.Status(), "error": refusal.Code,
			"error_description": refusal.Description, "www_authenticate": refusal.Challenge(policy)})
		os.Exit(1)
	case err != nil:
		printJSON(map[string]any{"status": 503, "error": "temporarily_unavailable", "error_description": err.Error()})
		os.Exit(2)
	}
	fmt.Println(string(claims.Raw))
}

func printJSON(value any) {
	data, _ := json.Marshal(value)
	fmt.Println(string(data))
}
