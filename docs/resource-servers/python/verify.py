#!/usr/bin/env python3
"""Offline validation of a Gatehouse access token (RFC 9068 §4, RFC 8725),
for a resource server written in Python. Needs PyJWT >= 2.10.1 and cryptography.

An HTTP handler calls `authenticate(request.headers.get("Authorization"), ...)`
with one `Policy` and one `KeySet` made at start. Run as a program it checks
one token and prints the claims (exit 0) or the refusal (exit 1) as JSON:

    verify.py --issuer https://localhost:8443 --audience https://localhost:8444 \
        --scope api:serverA --ca-file var/tls/ca.pem [--jwks-cache FILE] TOKEN
"""
import argparse
import json
import os
import ssl
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass

import jwt

LEEWAY = 60  # seconds of clock skew tolerated on exp, nbf and iat
MAXIMUM_AGE = 3600  # a key set older than this is fetched again
UNKNOWN_KID_INTERVAL = 30  # at most one refetch for an unknown kid per this many seconds
RETRY_INTERVAL = 30  # after a failed refresh, serve the held keys this long before trying again
# The issuer's algorithms, each with the one kind of key (kty, crv) that signs with it:
# RFC 7518 §3.3 RS256 with RSA, §3.4 ES256 with P-256, RFC 8037 §3.1 EdDSA with Ed25519.
ALGORITHMS = {("RSA", None): "RS256", ("EC", "P-256"): "ES256", ("OKP", "Ed25519"): "EdDSA"}


@dataclass
class Policy:
    issuer: str  # e.g. https://localhost:8443
    audience: str  # this API's origin, e.g. https://localhost:8444
    scope: str  # e.g. api:serverA


class Refusal(Exception):
    """A refused request: 401, or 403 for a good token not meant for this API."""

    def __init__(self, error, description):
        super().__init__(description)
        self.error, self.description = error, description
        self.status = 403 if error in ("invalid_audience", "insufficient_scope") else 401

    def challenge(self, policy):
        """The WWW-Authenticate value (RFC 6750 §3)."""
        # RFC 6750 §3.1: "If the request lacks any authentication information
        # ... the resource server SHOULD NOT include an error code".
        if self.error == "missing_token":
            return f'Bearer realm="{policy.audience}"'
        # RFC 6750 §3.1: insufficient_scope "MAY include the "scope" attribute
        # with the scope necessary to access the protected resource."
        if self.error == "insufficient_scope":
            return f'Bearer realm="{policy.audience}", error="insufficient_scope", scope="{policy.scope}"'
        return f'Bearer realm="{policy.audience}", error="invalid_token", error_description="{self.description}"'


class KeysUnavailable(Exception):
    """No key set could be fetched yet: answer 503 with Retry-After, not 401."""


class KeySet:
    """The issuer's signing keys by kid, found through discovery, cached, and
    refetched on an unknown kid at most once per UNKNOWN_KID_INTERVAL. With a
    `path`, the cache survives restarts (and the program's separate runs).
    Safe to share between the threads of a server."""

    def __init__(self, issuer, ca_file=None, path=None):
        self.issuer, self.path = issuer, path
        self.lock = threading.Lock()
        self.tls = ssl.create_default_context(cafile=ca_file)  # trusts only ca_file when given
        self.state = {"jwks_uri": None, "fetched_at": None, "refetched_at": None, "keys": []}
        if path and os.path.exists(path):
            with open(path) as file:
                self.state = json.load(file)

    def key(self, kid, now):
        with self.lock:
            return self.locked_key(kid, now)

    def locked_key(self, kid, now):
        state = self.state
        if state["fetched_at"] is None or now - state["fetched_at"] >= MAXIMUM_AGE:
            self.fetch(now, "no key set yet" if state["fetched_at"] is None else "key set is stale")
        elif not self.find(kid):
            # RFC 7517 §4.5: the kid is used "to choose among a set of keys
            # within a JWK Set during key rollover": a new kid may be a new key.
            last = state["refetched_at"]
            if last is None or now - last >= UNKNOWN_KID_INTERVAL:
                state["refetched_at"] = now
                self.fetch(now, f"unknown kid {kid}")
            else:
                log(f"unknown kid {kid}: refetched {now - last} s ago, not again yet")
        return self.find(kid)

    def find(self, kid):
        """(algorithm, key) for kid, or None."""
        for jwk in self.state["keys"]:
            # RFC 9068 §4: "The resource server MUST use the keys provided by the
            # authorization server." Only signing keys of the issuer's algorithms
            # qualify, and an "alg" member (RFC 7517 §4.4) must fit the key.
            alg = ALGORITHMS.get((jwk.get("kty"), jwk.get("crv")))
            if jwk.get("kid") == kid and alg and jwk.get("use", "sig") == "sig" and jwk.get("alg", alg) == alg:
                return alg, jwt.PyJWK(jwk, algorithm=alg).key
        return None

    def fetch(self, now, reason):
        try:
            if self.state["jwks_uri"] is None:
                document = self.get(self.issuer + "/.well-known/openid-configuration")
                # OpenID Connect Discovery 1.0 §4.3: "The issuer value returned MUST be
                # identical to the Issuer URL that was used as the prefix".
                if document.get("issuer") != self.issuer:
                    raise ValueError(f"discovery names issuer {document.get('issuer')!r}")
                self.state["jwks_uri"] = document["jwks_uri"]
            keys = self.get(self.state["jwks_uri"])["keys"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            if not self.state["keys"]:
                raise KeysUnavailable(f"cannot fetch the issuer's keys: {error}") from error
            log(f"JWKS fetch failed ({error}); keeping the keys held")
            self.state["fetched_at"] = max(self.state["fetched_at"], now - MAXIMUM_AGE + RETRY_INTERVAL)
            return
        self.state.update(keys=keys, fetched_at=now)
        log(f"fetched {len(keys)} keys from {self.state['jwks_uri']} ({reason})")
        if self.path:
            with open(self.path + ".tmp", "w") as file:
                json.dump(self.state, file)
            os.replace(self.path + ".tmp", self.path)

    def get(self, url):
        # no-cache (RFC 9111 §5.2.1.4): past the issuer's 2-second copy, so a
        # refetch for a kid just rotated in finds it.
        request = urllib.request.Request(url, headers={"Cache-Control": "no-cache"})
        with urllib.request.urlopen(request, context=self.tls, timeout=5) as response:
            return json.load(response)


def authenticate(authorization, policy, keys, now=None):
    """The verified claims of a request's Authorization header, or a Refusal.
    The checks run in a fixed order: header, key, signature, then claims."""
    now = int(time.time()) if now is None else now
    token = bearer_token(authorization)
    header = unverified_header(token)
    check_algorithm(header)
    check_type(header)
    check_critical(header)
    alg, key = signing_key(header, keys, now)
    claims = verified_claims(token, alg, key, policy, now)
    check_scope(claims, policy)
    check_not_bound(claims)
    return claims


def bearer_token(authorization):
    # RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token (the scheme is case-insensitive).
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        raise Refusal("missing_token", "an access token is required (Authorization: Bearer)")
    if not token.strip():
        raise Refusal("malformed_token", "the Authorization header is not a valid Bearer credential")
    return token.strip()


def unverified_header(token):
    try:
        return jwt.get_unverified_header(token)
    except jwt.DecodeError:
        raise Refusal("malformed_token", "the access token is not a well-formed JWT") from None
    except jwt.InvalidTokenError:  # PyJWT itself refuses a crit it does not support
        raise Refusal("malformed_token", "the access token uses unsupported critical header parameters") from None


def check_algorithm(header):
    # RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
    # set of algorithms and MUST NOT use any other algorithms". RFC 9068 §4:
    # "The resource server MUST reject any JWT in which the value of "alg" is "none"."
    if header.get("alg") not in ALGORITHMS.values():
        raise Refusal("invalid_signature", "the access token is not signed with RS256, ES256 or EdDSA")


def check_type(header):
    # RFC 9068 §4: "Resource servers MUST verify that the "typ" header value is
    # "at+jwt" or "application/at+jwt" and reject tokens carrying any other value."
    if str(header.get("typ", "")).lower() not in ("at+jwt", "application/at+jwt"):
        raise Refusal("malformed_token", "the token is not a JWT access token (typ at+jwt)")


def check_critical(header):
    # RFC 7515 §4.1.11: "If any of the listed extension Header Parameters are
    # not understood and supported by the recipient, then the JWS is invalid."
    if "crit" in header:
        raise Refusal("malformed_token", "the access token uses unsupported critical header parameters")


def signing_key(header, keys, now):
    # RFC 7515 §4.1.4: "The "kid" (key ID) Header Parameter is a hint
    # indicating which key was used to secure the JWS."
    found = keys.key(header["kid"], now) if isinstance(header.get("kid"), str) else None
    if found is None:
        raise Refusal("unknown_signing_key", "the access token is signed with a key the issuer does not publish")
    # RFC 8725 §3.1: a key is used with its own algorithm only: an RSA key
    # never verifies an ES256 token, whatever the token's alg says.
    alg, key = found
    if alg != header["alg"]:
        raise Refusal("invalid_signature", "the access token signature does not verify")
    return alg, key


def verified_claims(token, alg, key, policy, now):
    try:
        return jwt.decode(
            token, key,
            # RFC 8725 §3.1: only the algorithm of the key the kid names.
            # PyJWT takes ES256 signatures as R || S (RFC 7518 §3.4).
            algorithms=[alg],
            # RFC 9068 §4: "The issuer identifier for the authorization server
            # ... MUST exactly match the value of the "iss" claim."
            issuer=policy.issuer,
            # RFC 9068 §4: "The resource server MUST validate that the "aud"
            # claim contains a resource indicator value corresponding to an
            # identifier the resource server expects for itself."
            audience=policy.audience,
            # RFC 9068 §4: "The current time MUST be before the time represented
            # by the "exp" claim. Implementers MAY provide for some small leeway".
            # PyJWT holds nbf and iat to the same leeway.
            leeway=LEEWAY,
            # RFC 9068 §2.2: iss, exp, aud, sub and iat are REQUIRED.
            options={"require": ["iss", "sub", "aud", "exp", "iat"]})
    # RFC 7515 §5.2: "If any of the listed steps fails, then the signature or
    # MAC cannot be validated."
    except jwt.InvalidSignatureError:
        raise Refusal("invalid_signature", "the access token signature does not verify") from None
    except jwt.ExpiredSignatureError:
        raise Refusal("token_expired", "the access token has expired") from None
    except jwt.ImmatureSignatureError:
        raise Refusal("token_expired", "the access token is not valid yet") from None
    except jwt.InvalidIssuerError:
        raise Refusal("invalid_issuer", f"the access token was not issued by {policy.issuer}") from None
    except jwt.InvalidAudienceError:
        raise Refusal("invalid_audience", f"the access token is not meant for {policy.audience}") from None
    except jwt.InvalidTokenError:
        raise Refusal("malformed_token", "the access token claims are missing or of the wrong type") from None


def check_scope(claims, policy):
    # RFC 9068 §2.2.3: the scope claim is "a space-separated list of scopes".
    # RFC 6750 §3.1 insufficient_scope: "The request requires higher privileges
    # than provided by the access token."
    if policy.scope not in str(claims.get("scope", "")).split(" "):
        raise Refusal("insufficient_scope", f"the access token does not grant {policy.scope}")


def check_not_bound(claims):
    # RFC 9449 §7.2: "such a protected resource MUST reject a DPoP-bound access
    # token received as a bearer token". This program takes Bearer tokens only.
    if "cnf" in claims:
        raise Refusal("token_requires_dpop", "the access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof")


def log(message):
    print(f"jwks: {message}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description="Validate a Gatehouse access token offline.")
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--audience", required=True, help="this API's origin")
    parser.add_argument("--scope", required=True, help="the scope this API requires")
    parser.add_argument("--ca-file", help="PEM of the CA to trust for the issuer (default: the system's)")
    parser.add_argument("--jwks-cache", help="file that keeps the key set between runs")
    parser.add_argument("token")
    arguments = parser.parse_args()
    policy = Policy(arguments.issuer, arguments.audience, arguments.scope)
    keys = KeySet(arguments.issuer, arguments.ca_file, arguments.jwks_cache)
    try:
        claims = authenticate("Bearer " + arguments.token, policy, keys)
    except Refusal as refusal:
        print(json.dumps({"status": refusal.status, "error": refusal.error, "error_description": refusal.description,
                          "www_authenticate": refusal.challenge(policy)}))
        return 1
    except KeysUnavailable as error:
        print(json.dumps({"status": 503, "error": "temporarily_unavailable", "error_description": str(error)}))
        return 2
    print(json.dumps(claims))
    return 0


if __name__ == "__main__":
    sys.exit(main())
