// Command receiver is a back-channel logout receiver for an app's backend
// (OpenID Connect Back-Channel Logout 1.0 §2.5-§2.8), with Go's standard
// library only.
//
// Gatehouse POSTs logout_token when a session the app was issued tokens in
// ends. Each verified token prints one JSON line {"sub": ..., "sid": ...}:
// end that user's or that session's sessions in your app there. A refused
// one prints {"refused": ...} and answers 400.
//
//	receiver -issuer https://localhost:8443 -client-id mobile-app-001 \
//	    -ca-file var/tls/ca.pem -cert server.pem -key server.key -port 9443
package main

import (
	"crypto"
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

const event = "http://schemas.openid.net/event/backchannel-logout"

// LogoutTokens makes §2.6's checks with the issuer's published keys.
type LogoutTokens struct {
	Issuer, ClientID, JWKSURI string
	Client                    *http.Client
	mu                        sync.Mutex
	keys                      map[string]*rsa.PublicKey
	seen                      map[string]int64
}

type claims struct {
	Iss    string                     `json:"iss"`
	Sub    string                     `json:"sub"`
	Aud    json.RawMessage            `json:"aud"`
	Iat    *int64                     `json:"iat"`
	Exp    *int64                     `json:"exp"`
	Jti    string                     `json:"jti"`
	Sid    string                     `json:"sid"`
	Events map[string]json.RawMessage `json:"events"`
	Nonce  *string                    `json:"nonce"`
}

func (t *LogoutTokens) Verify(token string) (*claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a compact JWS")
	}
	var header struct{ Alg, Kid, Typ string }
	if err := decode(parts[0], &header); err != nil {
		return nil, err
	}
	if header.Alg != "RS256" || header.Typ != "logout+jwt" {
		return nil, errors.New("not an RS256 logout token")
	}
	key, err := t.key(header.Kid)
	if err != nil {
		return nil, err
	}
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], signature) != nil {
		return nil, errors.New("bad signature")
	}
	var c claims
	if err := decode(parts[1], &c); err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	switch {
	case c.Iss != t.Issuer:
		return nil, errors.New("wrong iss")
	case !audienceHas(c.Aud, t.ClientID):
		return nil, errors.New("wrong aud")
	case c.Iat == nil || *c.Iat > now+60 || c.Exp == nil || *c.Exp < now-60 || c.Jti == "":
		return nil, errors.New("iat, exp or jti missing or out of time")
	case !strings.HasPrefix(strings.TrimSpace(string(c.Events[event])), "{"):
		return nil, errors.New("no back-channel logout event")
	case c.Nonce != nil:
		return nil, errors.New("a logout token never carries a nonce")
	case c.Sub == "" && c.Sid == "":
		return nil, errors.New("neither sub nor sid")
	}
	t.mu.Lock() // a jti seen before is a replay
	defer t.mu.Unlock()
	for jti, until := range t.seen {
		if until < now {
			delete(t.seen, jti)
		}
	}
	if _, replayed := t.seen[c.Jti]; replayed {
		return nil, errors.New("replayed jti")
	}
	t.seen[c.Jti] = *c.Exp + 60
	return &c, nil
}

// key finds kid in the issuer's JWKS, fetched again for a kid not held.
func (t *LogoutTokens) key(kid string) (*rsa.PublicKey, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if key, ok := t.keys[kid]; ok {
		return key, nil
	}
	var set struct {
		Keys []struct{ Kty, Kid, N, E string }
	}
	if err := fetch(t.Client, t.JWKSURI, &set); err != nil {
		return nil, err
	}
	t.keys = map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		n, errN := base64.RawURLEncoding.DecodeString(k.N)
		e, errE := base64.RawURLEncoding.DecodeString(k.E)
		if k.Kty == "RSA" && errN == nil && errE == nil {
			t.keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		}
	}
	if key, ok := t.keys[kid]; ok {
		return key, nil
	}
	return nil, errors.New("unknown kid")
}

func audienceHas(raw json.RawMessage, clientID string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == clientID
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, audience := range many {
			if audience == clientID {
				return true
			}
		}
	}
	return false
}

func decode(part string, into any) error {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

func fetch(client *http.Client, url string, into any) error {
	reply, err := client.Get(url)
	if err != nil {
		return err
	}
	defer reply.Body.Close()
	if reply.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", url, reply.StatusCode)
	}
	return json.NewDecoder(reply.Body).Decode(into)
}

func main() {
	issuer := flag.String("issuer", "", "the issuer identifier")
	clientID := flag.String("client-id", "", "this app's client id")
	caFile := flag.String("ca-file", "", "trust only this CA for the issuer")
	cert, key := flag.String("cert", "", "TLS certificate"), flag.String("key", "", "TLS key")
	port := flag.Int("port", 9443, "port on 127.0.0.1")
	flag.Parse()
	client := &http.Client{Timeout: 10 * time.Second}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	var discovery struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := fetch(client, *issuer+"/.well-known/openid-configuration", &discovery); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tokens := &LogoutTokens{Issuer: *issuer, ClientID: *clientID, JWKSURI: discovery.JWKSURI, Client: client, seen: map[string]int64{}}
	out := json.NewEncoder(os.Stdout)
	var printing sync.Mutex
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store") // §2.8
		r.Body = http.MaxBytesReader(w, r.Body, 65536)
		if r.Method != http.MethodPost || r.ParseForm() != nil || len(r.PostForm["logout_token"]) != 1 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c, err := tokens.Verify(r.PostForm["logout_token"][0])
		printing.Lock()
		defer printing.Unlock()
		if err != nil {
			out.Encode(map[string]string{"refused": err.Error()})
			w.WriteHeader(http.StatusBadRequest) // §2.8: 400 when the token is refused
			return
		}
		out.Encode(map[string]string{"sub": c.Sub, "sid": c.Sid})
		w.WriteHeader(http.StatusOK) // §2.8: 200 when the logout succeeded
	})
	out.Encode(map[string]int{"listening": *port})
	err := http.ListenAndServeTLS(fmt.Sprintf("127.0.0.1:%d", *port), *cert, *key, nil)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
