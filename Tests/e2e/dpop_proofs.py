"""DPoP proofs (RFC 9449 §4.2) made with Python's `cryptography`, an
implementation Gatehouse did not write, and the RFC 7638 thumbprint."""
import base64
import hashlib
import json
import secrets
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class ProofKey:
    """One client key pair: ES256 (P-256), EdDSA (Ed25519) or RS256."""

    def __init__(self, alg="ES256"):
        self.alg = alg
        if alg == "ES256":
            self.private = ec.generate_private_key(ec.SECP256R1())
            numbers = self.private.public_key().public_numbers()
            self.jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
            members = ("crv", "kty", "x", "y")
        elif alg == "EdDSA":
            self.private = ed25519.Ed25519PrivateKey.generate()
            raw = self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            self.jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64(raw)}
            members = ("crv", "kty", "x")
        else:
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            numbers = self.private.public_key().public_numbers()
            self.jwk = {"kty": "RSA", "n": b64(numbers.n.to_bytes(256, "big")), "e": b64(numbers.e.to_bytes(3, "big"))}
            members = ("e", "kty", "n")
        # RFC 7638 §3: the required members, lexicographic order, no white space.
        canonical = json.dumps({name: self.jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
        self.thumbprint = b64(hashlib.sha256(canonical.encode()).digest())

    def sign(self, data):
        if self.alg == "ES256":
            r, s = decode_dss_signature(self.private.sign(data, ec.ECDSA(hashes.SHA256())))
            return r.to_bytes(32, "big") + s.to_bytes(32, "big")
        if self.alg == "EdDSA":
            return self.private.sign(data)
        return self.private.sign(data, padding.PKCS1v15(), hashes.SHA256())

    def proof(self, method, url, nonce=None, access_token=None, header=None, claims=None, corrupt=False):
        """A proof for one request; `header`/`claims` override members (None removes one)."""
        head = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.jwk}
        body = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": int(time.time())}
        if nonce:
            body["nonce"] = nonce
        if access_token:
            body["ath"] = b64(hashlib.sha256(access_token.encode()).digest())
        for target, changes in ((head, header or {}), (body, claims or {})):
            for name, value in changes.items():
                if value is None:
                    target.pop(name, None)
                else:
                    target[name] = value
        signing_input = b64(json.dumps(head).encode()) + "." + b64(json.dumps(body).encode())
        signature = bytearray(self.sign(signing_input.encode()))
        if corrupt:
            signature[3] ^= 1
        return signing_input + "." + b64(bytes(signature))


def token_request(http, issuer, form, key, auth=None, nonce=None, **proof_changes):
    """POST /token with a DPoP proof, answering one use_dpop_nonce (RFC 9449 §8)
    as a client must. Returns the last response and the nonce it carried."""
    url = issuer + "/token"
    response = http.post(url, data=form, auth=auth, headers={"DPoP": key.proof("POST", url, nonce=nonce, **proof_changes)})
    if response.status_code == 400 and response.json().get("error") == "use_dpop_nonce":
        nonce = response.headers["DPoP-Nonce"]
        response = http.post(url, data=form, auth=auth, headers={"DPoP": key.proof("POST", url, nonce=nonce, **proof_changes)})
    return response, response.headers.get("DPoP-Nonce", nonce)
