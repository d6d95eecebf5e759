"""A passkey in software, for the tests that add one at /account and sign
in with it at the login page (WebAuthn Level 3, as a browser's platform
authenticator would answer)."""
import base64
import hashlib
import json
import secrets

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def cbor(value):
    """CTAP2 canonical CBOR of ints, byte and text strings and maps (all a
    "none" attestation and a COSE key need)."""
    def head(major, number):
        if number < 24:
            return bytes([major << 5 | number])
        extra = next(extra for extra, top in ((24, 0xFF), (25, 0xFFFF), (26, 0xFFFFFFFF)) if number <= top)
        return bytes([major << 5 | extra]) + number.to_bytes(1 << (extra - 24), "big")
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        return head(3, len(value.encode())) + value.encode()
    entries = sorted(((cbor(key), cbor(item)) for key, item in value.items()), key=lambda entry: (len(entry[0]), entry[0]))
    return head(5, len(entries)) + b"".join(key + item for key, item in entries)


class SoftAuthenticator:
    """A device-bound passkey in software (WebAuthn Level 3): one ES256 key, a
    discoverable credential, "none" attestation, user present and verified."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = secrets.token_bytes(16)
        self.sign_count = 0
        self.user_handle = b""

    @staticmethod
    def client_data(kind, options, origin):
        return json.dumps({"type": kind, "challenge": options["challenge"], "origin": origin, "crossOrigin": False}).encode()

    def create(self, options, origin):
        """navigator.credentials.create(): the form fields of POST /account/passkeys."""
        self.user_handle = unb64url(options["user"]["id"])
        public = self.key.public_key().public_numbers()
        cose_key = cbor({1: 2, 3: -7, -1: 1, -2: public.x.to_bytes(32, "big"), -3: public.y.to_bytes(32, "big")})
        auth_data = (hashlib.sha256(options["rp"]["id"].encode()).digest() + bytes([0x45]) + self.sign_count.to_bytes(4, "big")
                     + bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id + cose_key)
        return {"clientDataJSON": b64url(self.client_data("webauthn.create", options, origin)),
                "attestationObject": b64url(cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})),
                "transports": "internal"}

    def get(self, options, origin):
        """navigator.credentials.get(): the form fields of POST /login/passkey."""
        self.sign_count += 1
        auth_data = hashlib.sha256(options["rpId"].encode()).digest() + bytes([0x05]) + self.sign_count.to_bytes(4, "big")
        client_data = self.client_data("webauthn.get", options, origin)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": b64url(self.credential_id), "clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                "signature": b64url(signature), "userHandle": b64url(self.user_handle)}
