"""DPoP-bound access tokens at resource servers A and B (RFC 9449 §7, §9,
§11.1) through nginx and TLS, and straight to each api-a process.

The proofs are made here with joserfc over Python's `cryptography`, an
implementation the project did not write. The tokens are minted here with
the issuer's private key, exactly as the issuer mints them plus
`cnf.jkt` (RFC 9449 §6.1), so this file does not depend on /token."""
import base64
import hashlib
import http.client
import json
import os
import signal
import sqlite3
import ssl
import stat
import sys
import time
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
from joserfc import jws
from joserfc.jwk import ECKey, OKPKey, RSAKey

from stack import ROOT, Stack
from test_resource_servers import b64url, mint

sys.path.insert(0, os.path.join(ROOT, "Scripts", "lib"))
from fcgi_probe import read_answer, request_bytes  # noqa: E402  (Scripts/lib is not a package)

ALGS = 'algs="ES256 EdDSA RS256"'
REPLAYED = "the DPoP proof has been used before: make a new proof (new jti) for every request"


class Phone:
    """A client's DPoP key pair (what an app keeps in the Secure Enclave or
    StrongBox), and the proofs it signs with it."""

    def __init__(self, alg="ES256"):
        self.alg = alg
        self.key = {"ES256": lambda: ECKey.generate_key("P-256"), "EdDSA": lambda: OKPKey.generate_key("Ed25519"),
                    "RS256": lambda: RSAKey.generate_key(2048)}[alg]()
        self.jwk = self.key.as_dict(private=False)

    @property
    def thumbprint(self):
        """RFC 7638 §3: SHA-256 of the required members, sorted, no whitespace."""
        required = {"EC": ("crv", "kty", "x", "y"), "OKP": ("crv", "kty", "x"), "RSA": ("e", "kty", "n")}[self.jwk["kty"]]
        canonical = json.dumps({name: self.jwk[name] for name in required}, separators=(",", ":"), sort_keys=True)
        return b64url(hashlib.sha256(canonical.encode()).digest())

    def proof(self, url, token, method="GET", iat=None, jti=None, nonce=None, header=None, drop=()):
        """A proof of RFC 9449 §4.2 for `method url` and `token` (`ath`);
        `header` changes header members, `drop` removes claims."""
        payload = {"jti": jti or uuid.uuid4().hex, "htm": method, "htu": url,
                   "iat": int(time.time()) if iat is None else iat}
        if token is not None:
            payload["ath"] = b64url(hashlib.sha256(token.encode("ascii")).digest())
        if nonce is not None:
            payload["nonce"] = nonce
        for name in drop:
            payload.pop(name)
        protected = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.jwk, **(header or {})}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # joserfc flags EdDSA as deprecated by RFC 9864; RFC 9449 servers take it
            return jws.serialize_compact(protected, json.dumps(payload).encode(), self.key, algorithms=[self.alg])


def bound_token(stack, phone, **changes):
    return mint(stack, cnf={"jkt": phone.thumbprint}, **changes)


def data_url(stack):
    return stack.api_a + "/api/data"


def get_a(http, stack, token, proof=None, scheme="DPoP"):
    headers = {"Authorization": f"{scheme} {token}"}
    if proof is not None:
        headers["DPoP"] = proof
    return http.get(data_url(stack), headers=headers)


def challenges(response):
    """Every WWW-Authenticate field, one per line as sent (requests would join them)."""
    return response.raw.headers.getlist("WWW-Authenticate")


def dpop_challenge(stack, error, description, origin=None):
    return f'DPoP realm="{origin or stack.api_a}", error="{error}", error_description="{description}", {ALGS}'


def assert_refused(response, status, error, description, challenge):
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.json() == {"error": error, "error_description": description}
    assert challenges(response) == [challenge]


def assert_bad_proof(stack, response, description):
    assert_refused(response, 401, "invalid_dpop_proof", description, dpop_challenge(stack, "invalid_dpop_proof", description))


# --- accepted --------------------------------------------------------------------

def test_joserfc_and_rfc_7638_agree_on_the_thumbprints():
    for alg in ("ES256", "EdDSA", "RS256"):
        phone = Phone(alg)
        assert phone.key.thumbprint() == phone.thumbprint, alg


@pytest.mark.parametrize("alg", ["ES256", "EdDSA", "RS256"])
def test_a_bound_token_with_a_good_proof_reads_both_apis(stack, http, alg):
    phone = Phone(alg)
    token = bound_token(stack, phone)
    response = get_a(http, stack, token, phone.proof(data_url(stack), token))
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    assert "DPoP-Nonce" not in response.headers, "nonces are off by default"
    assert "WWW-Authenticate" not in response.headers
    body = response.json()
    assert body["user"] == "alice@example.com" and body["source"] == "ServerA" and len(body["data"]) == 3

    records = http.get(stack.api_b + "/api/records", headers={
        "Authorization": "DPoP " + token, "DPoP": phone.proof(stack.api_b + "/api/records", token)})
    assert records.status_code == 200, records.text
    assert records.json()["source"] == "ServerB"


def test_proof_jtis_are_kept_as_hashes_in_a_file_of_their_own(stack, http):
    phone = Phone()
    token = bound_token(stack, phone)
    jti = "e2e-jti-" + uuid.uuid4().hex
    assert get_a(http, stack, token, phone.proof(data_url(stack), token, jti=jti)).status_code == 200
    with sqlite3.connect(os.path.join(stack.home, "dpop-proofs.sqlite")) as database:
        rows = database.execute("SELECT proof_hash, expires_at FROM dpop_proof_jtis").fetchall()
    assert rows and all(len(proof_hash) == 32 for proof_hash, _ in rows)
    assert not any(jti.encode() in proof_hash for proof_hash, _ in rows)
    assert max(expires for _, expires in rows) <= int(time.time()) + 180 + 5  # the replay window, no longer


def test_the_replay_cache_belongs_to_the_boot_that_wrote_it(stack, http):
    """The cache commits without syncing, so it records the kernel's boot
    id beside it; API processes that start in another boot (after a crash
    may have torn the file) begin with an empty cache."""
    phone = Phone()
    token = bound_token(stack, phone)
    proof = phone.proof(data_url(stack), token)
    assert get_a(http, stack, token, proof).status_code == 200
    path = os.path.join(stack.home, "dpop-proofs.sqlite")

    def assert_this_boot_recorded():
        with open("/proc/sys/kernel/random/boot_id") as kernel, open(path + ".boot") as recorded:
            assert recorded.read() == kernel.read()
    assert_this_boot_recorded()
    assert stat.S_IMODE(os.stat(path + ".boot").st_mode) == 0o600
    assert_bad_proof(stack, get_a(http, stack, token, proof), REPLAYED)

    # As after a reboot: another boot on record, and every API process new.
    with open(path + ".boot", "w") as handle:
        handle.write("another-boot\n")
    names = sorted(name[:-4] for name in os.listdir(os.path.join(stack.home, "run", "pids"))
                   if name.startswith(("api-a-", "api-b-")) and name.endswith(".pid"))
    old = {name: stack.pid(name) for name in names}
    for pid in old.values():
        os.kill(pid, signal.SIGKILL)

    def restarted(name):
        try:
            return stack.pid(name) != old[name]
        except (FileNotFoundError, ValueError):  # the supervisor is writing it
            return False
    deadline = time.time() + 15
    while not all(restarted(name) for name in names):
        assert time.time() < deadline, "the supervisor did not restart the API processes"
        time.sleep(0.1)
    # Until both APIs answer in a row (401, no token): nginx drops the
    # connections it kept to the killed processes as it meets them.
    for origin, endpoint in ((stack.api_a, "/api/data"), (stack.api_b, "/api/records")):
        answered = 0
        while answered < 10:
            assert time.time() < deadline, "the restarted API processes do not answer"
            answered = answered + 1 if http.get(origin + endpoint).status_code == 401 else 0
    assert get_a(http, stack, token, proof).status_code == 200, "the new boot's cache starts empty"
    assert_this_boot_recorded()
    assert_bad_proof(stack, get_a(http, stack, token, proof), REPLAYED)


# --- the scheme and the binding ------------------------------------------------------

def test_a_bound_token_sent_as_bearer_is_refused(stack, http):
    phone = Phone()
    token = bound_token(stack, phone)
    description = "the access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof"
    for proof in (None, phone.proof(data_url(stack), token)):
        assert_refused(get_a(http, stack, token, proof, scheme="Bearer"), 401, "token_requires_dpop", description,
                       dpop_challenge(stack, "invalid_token", description))


def test_an_unbound_token_under_dpop_is_refused(stack, http):
    phone = Phone()
    token = mint(stack)
    description = "the access token is not bound to a DPoP key: send it as Authorization: Bearer"
    assert_refused(get_a(http, stack, token, phone.proof(data_url(stack), token)), 401, "token_not_dpop_bound",
                   description, dpop_challenge(stack, "invalid_token", description))
    assert get_a(http, stack, token, scheme="Bearer").status_code == 200, "still a good bearer token"


def test_no_token_offers_both_schemes(stack, http):
    for origin, path in ((stack.api_a, "/api/data"), (stack.api_b, "/api/records")):
        response = http.get(origin + path)
        assert response.status_code == 401
        assert response.json()["error"] == "missing_token"
        assert challenges(response) == [f'Bearer realm="{origin}"', f'DPoP realm="{origin}", {ALGS}']


def test_token_failures_under_dpop_are_dpop_challenges(stack, http):
    phone = Phone()
    past = int(time.time()) - 3600
    expired = bound_token(stack, phone, exp=past, iat=past - 600, nbf=past - 600)
    assert_refused(get_a(http, stack, expired, phone.proof(data_url(stack), expired)), 401, "token_expired",
                   "the access token has expired", dpop_challenge(stack, "invalid_token", "the access token has expired"))
    narrow = bound_token(stack, phone, scope="openid api:serverB")
    assert_refused(get_a(http, stack, narrow, phone.proof(data_url(stack), narrow)), 403, "insufficient_scope",
                   "the access token does not grant api:serverA",
                   f'DPoP realm="{stack.api_a}", error="insufficient_scope", scope="api:serverA", {ALGS}')


# --- the proof ------------------------------------------------------------------------

def test_a_missing_proof_is_refused(stack, http):
    phone = Phone()
    token = bound_token(stack, phone)
    assert_bad_proof(stack, get_a(http, stack, token), "a DPoP proof is required in the DPoP header with Authorization: DPoP")


def raw_get(stack, url, headers):
    """One request with header lines exactly as given, repeated names included."""
    parts = urlsplit(url)
    context = ssl.create_default_context(cafile=stack.ca)
    connection = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=10)
    try:
        connection.putrequest("GET", parts.path)
        for name, value in headers:
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.headers.get_all("WWW-Authenticate"), json.loads(response.read())
    finally:
        connection.close()


def test_two_dpop_headers_are_refused_and_spend_nothing(stack, http):
    phone = Phone()
    token = bound_token(stack, phone)
    proof = phone.proof(data_url(stack), token)
    description = "send exactly one DPoP header holding one proof"
    for second in (proof, phone.proof(data_url(stack), token)):
        status, challenge, body = raw_get(stack, data_url(stack), [("Authorization", "DPoP " + token), ("DPoP", proof),
                                                                   ("DPoP", second)])
        assert (status, body) == (401, {"error": "invalid_dpop_proof", "error_description": description})
        assert challenge == [dpop_challenge(stack, "invalid_dpop_proof", description)]
    status, _, _ = raw_get(stack, data_url(stack), [("Authorization", "DPoP " + token), ("DPoP", proof)])
    assert status == 200, "the refused requests did not use up the proof's jti"


def unsigned(phone, url, token, alg):
    header = {"typ": "dpop+jwt", "alg": alg, "jwk": phone.jwk}
    payload = {"jti": uuid.uuid4().hex, "htm": "GET", "htu": url, "iat": int(time.time()),
               "ath": b64url(hashlib.sha256(token.encode()).digest())}
    return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(payload).encode()) + "."


def signed_by_another_key(phone, url, token):
    """The phone's jwk in the header, a stranger's signature."""
    genuine = phone.proof(url, token)
    forged = Phone().proof(url, token)
    return genuine.rsplit(".", 1)[0] + "." + forged.rsplit(".", 1)[1]


BAD_PROOFS = {
    "wrong htm": (lambda stack, phone, token: phone.proof(data_url(stack), token, method="POST"),
                  "the DPoP proof's htm is not the method of this request"),
    "htu of another path": (lambda stack, phone, token: phone.proof(stack.api_a + "/api/records", token),
                            "the DPoP proof's htu is not {uri}"),
    "htu of another port": (lambda stack, phone, token: phone.proof(stack.api_b + "/api/data", token),
                            "the DPoP proof's htu is not {uri}"),
    "no ath": (lambda stack, phone, token: phone.proof(data_url(stack), None),
               "the DPoP proof has no ath (the hash of the access token)"),
    "ath of another token": (lambda stack, phone, token: phone.proof(data_url(stack), mint(stack)),
                             "the DPoP proof's ath is not the hash of this access token"),
    "iat 5 minutes old": (lambda stack, phone, token: phone.proof(data_url(stack), token, iat=int(time.time()) - 300),
                          "the DPoP proof's iat is too old or too far ahead (120 s back, 60 s ahead)"),
    "iat 5 minutes ahead": (lambda stack, phone, token: phone.proof(data_url(stack), token, iat=int(time.time()) + 300),
                            "the DPoP proof's iat is too old or too far ahead (120 s back, 60 s ahead)"),
    "alg none": (lambda stack, phone, token: unsigned(phone, data_url(stack), token, "none"),
                 "the DPoP proof's alg is not one of ES256 EdDSA RS256"),
    "a private key in jwk": (lambda stack, phone, token: phone.proof(data_url(stack), token,
                                                                     header={"jwk": phone.key.as_dict(private=True)}),
                             "the DPoP proof's jwk contains private key members"),
    "typ JWT": (lambda stack, phone, token: phone.proof(data_url(stack), token, header={"typ": "JWT"}),
                "the DPoP proof's typ is not dpop+jwt"),
    "no jti": (lambda stack, phone, token: phone.proof(data_url(stack), token, drop=("jti",)),
               "the DPoP proof is not a compact JWS with typ, alg, jwk, jti, htm, htu and iat"),
    "signature by another key than its jwk": (lambda stack, phone, token: signed_by_another_key(phone, data_url(stack), token),
                                              "the DPoP proof's signature does not verify with its jwk"),
}


@pytest.mark.parametrize("case", BAD_PROOFS, ids=list(BAD_PROOFS))
def test_a_bad_proof_is_refused(stack, http, case):
    make, description = BAD_PROOFS[case]
    phone = Phone()
    token = bound_token(stack, phone)
    assert_bad_proof(stack, get_a(http, stack, token, make(stack, phone, token)), description.format(uri=data_url(stack)))


def test_a_good_proof_by_another_key_than_the_token_is_bound_to(stack, http):
    phone, thief = Phone(), Phone("EdDSA")
    token = bound_token(stack, phone)
    description = "the DPoP proof is not signed with the key the access token is bound to"
    assert_refused(get_a(http, stack, token, thief.proof(data_url(stack), token)), 401, "dpop_key_mismatch", description,
                   dpop_challenge(stack, "invalid_token", description))


# --- replay (§11.1) ----------------------------------------------------------------------

def test_a_proof_sent_many_times_at_once_is_accepted_exactly_once(stack):
    phone = Phone()
    token = bound_token(stack, phone)
    proof = phone.proof(data_url(stack), token)

    def send(_):
        with stack.session() as session:  # one connection each: nginx spreads them over the pool
            return get_a(session, stack, token, proof)

    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(send, range(16)))
    assert sorted(response.status_code for response in responses) == [200] + [401] * 15
    for response in responses:
        if response.status_code == 401:
            assert_bad_proof(stack, response, REPLAYED)


def fastcgi_get(socket_path, host, headers):
    import socket as sockets
    with sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM) as client:
        client.connect(socket_path)
        client.sendall(request_bytes("GET", "/api/data", host, headers))
        answer = read_answer(client, 10)
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(next(line for line in lines if line.lower().startswith("status:")).split()[1])
    return status, json.loads(body)


def test_a_proof_accepted_by_one_api_a_process_is_refused_by_the_other(stack):
    sockets = sorted(name for name in os.listdir(os.path.join(stack.home, "run"))
                     if name.startswith("api-a-") and name.endswith(".sock"))
    assert len(sockets) >= 2, sockets
    phone = Phone()
    token = bound_token(stack, phone)
    headers = {"Authorization": "DPoP " + token, "DPoP": phone.proof(data_url(stack), token)}
    host = urlsplit(stack.api_a).hostname
    first, *others = [os.path.join(stack.home, "run", name) for name in sockets]
    assert fastcgi_get(first, host, headers)[0] == 200
    for other in others:
        assert fastcgi_get(other, host, headers) == (401, {"error": "invalid_dpop_proof", "error_description": REPLAYED})
    fresh = {**headers, "DPoP": phone.proof(data_url(stack), token)}
    assert fastcgi_get(others[0], host, fresh)[0] == 200, "a new proof for the same token is fine"


# --- resource-server nonces (§9), on a stack that requires them ------------------------

@pytest.fixture(scope="module")
def nonce_stack():
    running = Stack(extra_env={"GATEHOUSE_API_DPOP_NONCE": "1", "GATEHOUSE_WORKERS": "3"}).start()
    yield running
    running.remove()


def test_with_nonces_on_the_use_dpop_nonce_round_trip_succeeds(nonce_stack):
    stack, phone = nonce_stack, Phone()
    http = stack.session()
    token = bound_token(stack, phone)

    first = get_a(http, stack, token, phone.proof(data_url(stack), token))
    description = "this resource server requires a nonce in the DPoP proof: use the DPoP-Nonce header's value"
    assert_refused(first, 401, "use_dpop_nonce", description, dpop_challenge(stack, "use_dpop_nonce", description))
    assert len(first.raw.headers.getlist("DPoP-Nonce")) == 1
    nonce = first.headers["DPoP-Nonce"]

    second = get_a(http, stack, token, phone.proof(data_url(stack), token, nonce=nonce))
    assert second.status_code == 200, second.text
    assert second.headers["Cache-Control"] == "no-store"
    assert second.raw.headers.getlist("DPoP-Nonce") == [nonce], "the nonce to use next"
    # Stateless nonces: every process of the pool takes it.
    for _ in range(6):
        assert get_a(http, stack, token, phone.proof(data_url(stack), token, nonce=nonce)).status_code == 200

    from test_openapi import conforms  # both answers, DPoP-Nonce included, as openapi.yaml documents them
    conforms(stack, first)
    conforms(stack, second)


def test_a_nonce_not_handed_out_here_is_refused(nonce_stack):
    stack, phone = nonce_stack, Phone()
    http = stack.session()
    token = bound_token(stack, phone)
    description = "the DPoP proof's nonce is not current: use the DPoP-Nonce header's value"
    nonce_b = http.get(stack.api_b + "/api/records").headers["DPoP-Nonce"]
    for nonce in ("made-up-nonce", nonce_b):
        response = get_a(http, stack, token, phone.proof(data_url(stack), token, nonce=nonce))
        assert_refused(response, 401, "use_dpop_nonce", description, dpop_challenge(stack, "use_dpop_nonce", description))
        assert response.headers["DPoP-Nonce"] not in (nonce, "")


def test_with_nonces_on_bearer_requests_are_unchanged_and_the_key_is_the_apis_own(nonce_stack):
    stack = nonce_stack
    http = stack.session()
    response = http.get(data_url(stack), headers={"Authorization": "Bearer " + mint(stack)})
    assert response.status_code == 200, response.text
    assert "DPoP-Nonce" not in response.headers
    missing = http.get(data_url(stack))
    assert challenges(missing) == [f'Bearer realm="{stack.api_a}"', f'DPoP realm="{stack.api_a}", {ALGS}']
    assert missing.headers["DPoP-Nonce"]
    key_file = os.path.join(stack.home, "api-keys", "dpop-nonce.key")
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    with open(key_file) as handle:
        api_key = handle.read().strip()
    assert len(base64.urlsafe_b64decode(api_key + "==")) == 32
    # The issuer keeps a nonce key of its own (keys/dpop-nonce.key): never the same one.
    with open(os.path.join(stack.home, "keys", "dpop-nonce.key")) as handle:
        assert handle.read().strip() != api_key
