"""Scripts/bench's DPoP rows: the refresh grant with a fresh DPoP proof per
request (RFC 9449 §5), against the same grant without, in the same run.
Proofs are signed by Python's `cryptography` before the run, with the
issuer's nonce and an iat a little ahead, so each is valid for the run."""
import os
import tempfile
import time

from dpop_proofs import ProofKey, token_request
from oidc_flow import App

PROOFS_PER_SECOND_PER_THREAD = 2500  # above what one thread's share can reach


def signed_proofs(key, method, url, nonce, count, access_token=None):
    issued_at = int(time.time()) + 50  # the issuer takes proofs up to 60 s ahead
    return [key.proof(method, url, nonce=nonce, access_token=access_token, claims={"iat": issued_at}) for _ in range(count)]


def dpop_refresh(stack, http, seconds, connections, threads, wrk):
    """Independent refresh token families all bound to one key; each reply's
    successor is sent next with the next unused proof."""
    key = ProofKey()
    url = stack.issuer + "/token"
    with tempfile.TemporaryDirectory() as folder:
        nonce = None
        per_thread = connections // threads + 2
        for thread in range(1, threads + 1):
            with open(os.path.join(folder, f"refresh.{thread}"), "w") as tokens:
                for _ in range(per_thread):
                    app = App(stack, http)  # the SSO cookie in `http` skips the login page
                    form = {"grant_type": "authorization_code", "code": app.code_from(app.authorize()), "client_id": app.client_id,
                            "redirect_uri": app.redirect_uri, "code_verifier": app.verifier}
                    response, nonce = token_request(http, stack.issuer, form, key, nonce=nonce)
                    if response.status_code != 200 or response.json()["token_type"] != "DPoP":
                        raise RuntimeError("DPoP code exchange failed: " + response.text)
                    tokens.write(response.json()["refresh_token"] + "\n")
        for thread in range(1, threads + 1):
            with open(os.path.join(folder, f"proofs.{thread}"), "w") as proofs:
                for proof in signed_proofs(key, "POST", url, nonce, PROOFS_PER_SECOND_PER_THREAD * seconds):
                    proofs.write(proof + "\n")
        result = wrk(url, seconds, connections, threads, "dpop-refresh.lua",
                     env={"GATEHOUSE_BENCH_REFRESH": os.path.join(folder, "refresh"), "GATEHOUSE_BENCH_PROOFS": os.path.join(folder, "proofs")})
        if result["failed"] > result["requests"] // 100:
            raise RuntimeError(f"DPoP refresh: {result['failed']} of {result['requests']} requests failed (proofs too few or too old?)")
        return result


def dpop_api_data(stack, http, seconds, connections, threads, wrk, expected_rps):
    """GET /api/data with a DPoP-bound token and a fresh proof per request
    (RFC 9449 §7): enough proofs for `expected_rps` (the bearer rate) and a
    margin, split over the threads."""
    key = ProofKey()
    app = App(stack, http)
    form = {"grant_type": "authorization_code", "code": app.sign_in(), "client_id": app.client_id,
            "redirect_uri": app.redirect_uri, "code_verifier": app.verifier}
    response, _ = token_request(http, stack.issuer, form, key)
    token = response.json()["access_token"]
    url = stack.api_a + "/api/data"
    per_thread = int(expected_rps * seconds * 1.3 / threads) + 1000
    with tempfile.TemporaryDirectory() as folder:
        for thread in range(1, threads + 1):
            with open(os.path.join(folder, f"proofs.{thread}"), "w") as proofs:
                for proof in signed_proofs(key, "GET", url, None, per_thread, access_token=token):
                    proofs.write(proof + "\n")
        result = wrk(url, seconds, connections, threads, "dpop-request.lua",
                     env={"GATEHOUSE_BENCH_TOKEN": token, "GATEHOUSE_BENCH_PROOFS": os.path.join(folder, "proofs")})
        if result["failed"] > result["requests"] // 100:
            raise RuntimeError(f"DPoP /api/data: {result['failed']} of {result['requests']} requests failed")
        return result
