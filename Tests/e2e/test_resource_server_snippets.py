"""The resource-server programs of docs/RESOURCE-SERVERS.md (Python, Go,
Node and Swift), run as written against the live stack with api-a's
audience and scope: each accepts what api-a accepts and refuses what api-a
refuses, with the same status and error. The doc shows each file verbatim."""
import base64
import json
import os
import re
import secrets
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oidc_flow import App
from stack import ROOT
import test_resource_servers
from test_resource_servers import b64url, claims, issuer_key, sign, stranger_key
from test_sample_client import browser_sign_in, loopback

SNIPPETS = Path(ROOT, "docs", "resource-servers")
DOC = Path(ROOT, "docs", "RESOURCE-SERVERS.md")
LANGUAGES = ["python", "go", "node", "swift"]


def active_kid(stack, alg="RS256"):
    """The kid of the active key of `alg`: once ES256 and EdDSA keys exist,
    `ssoctl keys list` has an active key of each algorithm."""
    keys = json.loads(stack.ssoctl("keys", "list", "--json").stdout)
    return next(key["kid"] for key in keys if key["alg"] == alg and key["state"] == "active")


def mint(stack, kid=None, **changes):
    """test_resource_servers.mint, with the active RS256 key by default."""
    return test_resource_servers.mint(stack, kid=kid or active_kid(stack), **changes)


# --- the doc and the files cannot drift ----------------------------------------

def test_the_doc_shows_every_snippet_file_verbatim():
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    files = sorted(path for path in SNIPPETS.rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    assert {path.relative_to(SNIPPETS).as_posix() for path in files} == \
        {"python/verify.py", "go/main.go", "go/go.mod", "node/verify.mjs", "swift/Verify.swift"}
    for path in files:
        assert path.read_text() in blocks, f"{path.relative_to(ROOT)} is not in {DOC.name} as it is"
        assert f"`docs/resource-servers/{path.relative_to(SNIPPETS).as_posix()}`" in DOC.read_text()


# --- building and running the programs -------------------------------------------

def trusted_by_arguments_only():
    """The environment minus every variable that would make a TLS client trust the stack's CA."""
    env = dict(os.environ)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def commands(tmp_path_factory):
    """The command line of each program. Scripts/test installs Go and Node, so they are required, not skipped."""
    built = tmp_path_factory.mktemp("snippets")
    assert shutil.which("go"), "go is missing: Scripts/test installs Debian's golang-go (TEST_PACKAGES)"
    assert shutil.which("node"), "node is missing: Scripts/test installs Debian's nodejs (TEST_PACKAGES)"
    # Offline: the program needs nothing beyond Go's standard library.
    go_env = dict(os.environ, GOPROXY="off", GOTOOLCHAIN="local", CGO_ENABLED="0")
    if "HOME" not in go_env and "GOCACHE" not in go_env:
        go_env["GOCACHE"] = str(built / "go-cache")
    go = subprocess.run(["go", "build", "-o", str(built / "verify-go"), "."], cwd=SNIPPETS / "go", env=go_env,
                        capture_output=True, text=True, timeout=600)
    assert go.returncode == 0, go.stderr
    # The Swift program against the release build's ResourceServer module,
    # as an executable target of the package would link it.
    release = Path(os.environ["BIN_DIR"])
    # Each module's objects as SwiftPM's output file map names them for
    # today's sources: a build folder that outlived a refactor may still hold
    # objects of files since moved.
    objects = []
    for module in ("ResourceServer", "OutboundHTTPS", "SSOCore", "SQLiteClient", "ArgumentParser", "ArgumentParserToolInfo"):
        outputs = json.loads((release / f"{module}.build" / "output-file-map.json").read_text())
        objects += sorted(entry["object"] for source, entry in outputs.items() if source and Path(entry["object"]).exists())
    # A C target has no output file map: one object per file of Sources/CCurlLoader.
    objects += [str(release / "CCurlLoader.build" / (source.name + ".o"))
                for source in Path(ROOT, "Sources", "CCurlLoader").glob("*.c")]
    includes = [flag for module in ("COpenSSL", "CFastCGI", "CSQLite") for flag in ("-I", str(Path(ROOT, "Sources", module)))]
    # CCurlLoader is a C target: its module map is the one SwiftPM wrote.
    includes += ["-I", str(Path(ROOT, "Sources", "CCurlLoader", "include")),
                 "-Xcc", f"-fmodule-map-file={release / 'CCurlLoader.build' / 'module.modulemap'}"]
    swift = subprocess.run(["swiftc", "-O", "-static-stdlib", "-parse-as-library", "-module-name", "verify",
                            "-I", str(release / "Modules"), *includes, str(SNIPPETS / "swift" / "Verify.swift"), *objects,
                            "-lssl", "-lcrypto", "-lfcgi", "-lsqlite3", "-ldl", "-o", str(built / "verify-swift")],
                           capture_output=True, text=True, timeout=600)
    assert swift.returncode == 0, swift.stderr
    return {"python": [sys.executable, str(SNIPPETS / "python" / "verify.py")], "go": [str(built / "verify-go")],
            "node": ["node", str(SNIPPETS / "node" / "verify.mjs")], "swift": [str(built / "verify-swift")]}


class Verifier:
    def __init__(self, language, command, stack, cache):
        self.language, self.command, self.stack, self.cache = language, command, stack, cache

    def run(self, token, scope="api:serverA", ca_file=True):
        """(exit code, the JSON it printed, its log) for one token, as api-a would check it."""
        arguments = ["--issuer", self.stack.issuer, "--audience", self.stack.api_a, "--scope", scope,
                     "--jwks-cache", str(self.cache)] + (["--ca-file", self.stack.ca] if ca_file else [])
        result = subprocess.run([*self.command, *arguments, token], env=trusted_by_arguments_only(),
                                capture_output=True, text=True, timeout=60)
        assert result.stdout.count("\n") == 1, (self.language, result.stdout, result.stderr)
        return result.returncode, json.loads(result.stdout), result.stderr


@pytest.fixture(params=LANGUAGES)
def verifier(request, commands, stack, tmp_path):
    return Verifier(request.param, commands[request.param], stack, tmp_path / "jwks.json")


def signed_in(stack, scope):
    """The token response of a real sign-in of alice with `scope`."""
    app = App(stack, stack.session(), scope=scope)
    response = app.exchange(app.sign_in())
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def for_api_a(stack):
    return signed_in(stack, "openid api:serverA")


def payload(token):
    return json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))


def header_of(token):
    return json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))


def kid_of(token):
    return header_of(token)["kid"]


# --- accepted -------------------------------------------------------------------

def test_a_real_access_token_is_accepted(verifier, stack, for_api_a):
    token = for_api_a["access_token"]
    status, claims_out, _ = verifier.run(token)
    assert status == 0, claims_out
    assert claims_out["sub"] == payload(token)["sub"] and claims_out["email"] == "alice@example.com"
    assert stack.api_a in claims_out["aud"]


def fetches(log):
    return re.findall(r"^jwks: (?:JWKS )?fetched.*$", log, re.M)


@pytest.mark.parametrize("language", ["python", "go", "node", "swift"])
def test_the_key_set_is_fetched_through_discovery_once_and_then_read_from_the_cache(language, commands, stack,
                                                                                    for_api_a, tmp_path):
    verifier = Verifier(language, commands[language], stack, tmp_path / "jwks.json")
    status, _, log = verifier.run(for_api_a["access_token"])
    assert status == 0 and len(fetches(log)) == 1, log
    if language != "swift":  # ResourceServer's JWKSCache logs in words of its own
        assert f"from {stack.issuer}/.well-known/jwks.json (no key set yet)" in log, log
    assert verifier.cache.exists()
    status, _, log = verifier.run(for_api_a["access_token"])
    assert status == 0 and fetches(log) == [], log


def test_a_machine_token_without_email_and_typ_application_at_jwt_is_accepted(verifier, stack):
    # client_credentials: sub is the client's id, no email, no session; aud a single string.
    token = mint(stack, typ="application/at+jwt", sub="billing-service", client_id="billing-service", email=None,
                 sid=None, auth_time=None, roles=None, aud=stack.api_a, scope="api:serverA")
    status, claims_out, _ = verifier.run(token)
    assert status == 0, claims_out
    assert claims_out["sub"] == claims_out["client_id"] == "billing-service"
    assert claims_out.get("email") is None


def test_an_expiry_within_the_leeway_is_accepted(verifier, stack):
    just_past = int(time.time()) - 10
    status, claims_out, _ = verifier.run(mint(stack, exp=just_past, iat=just_past - 600, nbf=just_past - 600))
    assert status == 0, claims_out


def test_without_the_ca_file_the_issuer_is_not_trusted(verifier, for_api_a):
    status, refused, _ = verifier.run(for_api_a["access_token"], ca_file=False)
    assert (status, refused["status"], refused["error"]) == (2, 503, "temporarily_unavailable"), refused
    assert not verifier.cache.exists()


def running_them_commands():
    """The shell block of the doc's "Running them", as it stands."""
    section = DOC.read_text().split("## Running them", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def test_the_docs_commands_check_a_token_from_gatehouse_login_verbatim(stack, tmp_path):
    """The doc's own commands: gatehouse-login's bearer token (--no-dpop), accepted by each program."""
    script = running_them_commands()
    assert "--no-dpop" in script and "status --show-tokens" in script
    # Only what differs on the test stack changes: the binaries' folder, ports, CA, where the Go program goes.
    script = re.sub(r"^B=\$\(swift build [^)]*\)$", f"B={os.environ['BIN_DIR']}", script, flags=re.M)
    for offset in range(3):
        script = script.replace(f"localhost:{8443 + offset}", f"localhost:{stack.base + offset}")
    script = script.replace("var/tls/ca.pem", stack.ca).replace("/tmp/verify-go", str(tmp_path / "verify-go"))
    # gatehouse-login's token file in a folder of the test's; Go offline, as the commands fixture builds it.
    env = dict(trusted_by_arguments_only(), XDG_CONFIG_HOME=str(tmp_path / "config"), GOPROXY="off", GOTOOLCHAIN="local",
               CGO_ENABLED="0")
    process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "gatehouse-login printed no authorize URL"
        authorize_url = process.stdout.readline().strip()  # what a reader opens in the browser
        assert loopback().get(browser_sign_in(stack, authorize_url), timeout=30).status_code == 200
        out, err = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 0, out + err
    verdicts = [json.loads(line) for line in out.splitlines()]
    assert len(verdicts) == 3, out  # Python, Go, Node
    for verdict in verdicts:
        assert verdict["email"] == "alice@example.com" and stack.api_a in verdict["aud"] and "cnf" not in verdict, verdict


# --- refused, as api-a refuses ----------------------------------------------------

def flipped_signature_byte(stack, tokens):
    head, body, signature = tokens["access_token"].split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=="))
    raw[len(raw) // 2] ^= 0x01
    return f"{head}.{body}.{b64url(bytes(raw))}"


def expired(stack, tokens):
    past = int(time.time()) - 3600
    return mint(stack, exp=past, iat=past - 600, nbf=past - 600)


def alg_none(stack, tokens):
    return sign({"alg": "none", "kid": active_kid(stack), "typ": "at+jwt"}, claims(stack), None)


BAD_TOKENS = {
    "flipped signature byte": (flipped_signature_byte, 401, "invalid_signature"),
    "issuer audience only (scope openid)": (lambda stack, tokens: signed_in(stack, "openid")["access_token"],
                                            403, "invalid_audience"),
    "audience api-b only": (lambda stack, tokens: mint(stack, aud=[stack.api_b]), 403, "invalid_audience"),
    "expired an hour ago": (expired, 401, "token_expired"),
    "not valid for an hour": (lambda stack, tokens: mint(stack, nbf=int(time.time()) + 3600), 401, "token_expired"),
    "an ID token (typ JWT)": (lambda stack, tokens: tokens["id_token"], 401, "malformed_token"),
    "alg none": (alg_none, 401, "invalid_signature"),
    "another issuer": (lambda stack, tokens: mint(stack, iss="https://evil.example"), 401, "invalid_issuer"),
    "crit header": (lambda stack, tokens: sign({"alg": "RS256", "kid": active_kid(stack), "typ": "at+jwt", "crit": ["exp"]},
                                               claims(stack), issuer_key(stack, active_kid(stack))), 401, "malformed_token"),
    "no sub": (lambda stack, tokens: mint(stack, sub=None), 401, "malformed_token"),
    "a stranger's key and kid": (lambda stack, tokens: mint(stack, key=stranger_key(), kid="not-published"),
                                 401, "unknown_signing_key"),
    "a stranger's key, the issuer's kid": (lambda stack, tokens: mint(stack, key=stranger_key()),
                                           401, "invalid_signature"),
}


@pytest.mark.parametrize("case", BAD_TOKENS, ids=list(BAD_TOKENS))
def test_a_bad_token_is_refused_as_api_a_refuses_it(verifier, stack, http, for_api_a, case):
    make, expected_status, expected_error = BAD_TOKENS[case]
    token = make(stack, for_api_a)
    at_api_a = http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + token})
    assert (at_api_a.status_code, at_api_a.json()["error"]) == (expected_status, expected_error), at_api_a.text
    status, refused, _ = verifier.run(token)
    assert status == 1, refused
    assert (refused["status"], refused["error"]) == (expected_status, expected_error), refused
    assert refused["www_authenticate"].startswith(f'Bearer realm="{stack.api_a}", error="invalid_token", ')


def test_a_dpop_bound_token_sent_as_bearer_is_refused_as_api_a_refuses_it(verifier, stack, http):
    """RFC 9449 §7.2: a Bearer-only API must not take a token bound to a DPoP key."""
    token = mint(stack, cnf={"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"})
    at_api_a = http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + token})
    assert (at_api_a.status_code, at_api_a.json()["error"]) == (401, "token_requires_dpop"), at_api_a.text
    status, refused, _ = verifier.run(token)
    assert status == 1, refused
    assert (refused["status"], refused["error"], refused["error_description"]) == \
        (401, "token_requires_dpop", at_api_a.json()["error_description"])
    assert 'error="invalid_token"' in refused["www_authenticate"]
    assert verifier.run(mint(stack))[0] == 0, "the same token without cnf is fine"


def test_a_token_without_the_required_scope_is_insufficient_scope(verifier, stack, for_api_a):
    status, refused, _ = verifier.run(for_api_a["access_token"], scope="api:admin")
    assert (status, refused["status"], refused["error"]) == (1, 403, "insufficient_scope"), refused
    assert refused["www_authenticate"] == f'Bearer realm="{stack.api_a}", error="insufficient_scope", scope="api:admin"'


# --- ES256 and EdDSA ---------------------------------------------------------------

MACHINE_SECRET = "snippets-machine-secret-" + secrets.token_hex(8)


@pytest.fixture(scope="module")
def by_algorithm(stack, for_api_a):
    """An access token for api-a signed with each of the issuer's algorithms:
    RS256 from alice's sign-in, ES256 and EdDSA from a machine client
    registered with --id-token-alg (the algorithm's first key made if none is active)."""
    tokens = {"RS256": for_api_a["access_token"]}
    keys = json.loads(stack.ssoctl("keys", "list", "--json").stdout)
    for alg in ("ES256", "EdDSA"):
        if not any(key["alg"] == alg and key["state"] == "active" for key in keys):
            rotated = stack.ssoctl("keys", "rotate", "--alg", alg)
            assert rotated.returncode == 0, rotated.stderr
        client_id = f"snippets-{alg.lower()}-{secrets.token_hex(3)}"
        added = stack.ssoctl("client", "add", client_id, "--grant", "client_credentials", "--scope", "api:serverA",
                             "--id-token-alg", alg, "--secret-stdin", input=MACHINE_SECRET + "\n")
        assert added.returncode == 0, added.stderr
        response = stack.session().post(stack.issuer + "/token", data={"grant_type": "client_credentials"},
                                        auth=(client_id, MACHINE_SECRET))
        assert response.status_code == 200, response.text
        tokens[alg] = response.json()["access_token"]
        assert header_of(tokens[alg])["alg"] == alg and kid_of(tokens[alg]) == active_kid(stack, alg)
    return tokens


def test_es256_and_eddsa_tokens_are_accepted(verifier, stack, http, by_algorithm):
    for alg in ("ES256", "EdDSA"):
        token = by_algorithm[alg]
        assert http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + token}).status_code == 200
        status, claims_out, log = verifier.run(token)
        assert status == 0, (alg, claims_out, log)
        assert claims_out["sub"] == claims_out["client_id"] == payload(token)["sub"]


def relabelled(token, alg):
    """`token` with another alg in its header; kid, claims and signature kept."""
    head, body, signature = token.split(".")
    return ".".join([b64url(json.dumps(dict(header_of(token), alg=alg)).encode()), body, signature])


def rs256_signature_labelled_eddsa(stack, tokens):
    """A good RS256 signature by the issuer's RSA key under "alg": "EdDSA":
    only a verifier that lets the key's type pick the algorithm takes it."""
    kid = active_kid(stack)
    return sign({"alg": "EdDSA", "kid": kid, "typ": "at+jwt"}, claims(stack), issuer_key(stack, kid))


SIGNATURE_DOES_NOT_VERIFY = (401, "invalid_signature", "the access token signature does not verify")
ALG_MISMATCHES = {
    "ES256 relabelled RS256": (lambda stack, tokens: relabelled(tokens["ES256"], "RS256"), SIGNATURE_DOES_NOT_VERIFY),
    "RS256 relabelled ES256": (lambda stack, tokens: relabelled(tokens["RS256"], "ES256"), SIGNATURE_DOES_NOT_VERIFY),
    "EdDSA relabelled ES256": (lambda stack, tokens: relabelled(tokens["EdDSA"], "ES256"), SIGNATURE_DOES_NOT_VERIFY),
    "RS256 signature labelled EdDSA": (rs256_signature_labelled_eddsa, SIGNATURE_DOES_NOT_VERIFY),
    "ES256 relabelled HS256": (lambda stack, tokens: relabelled(tokens["ES256"], "HS256"),
                               (401, "invalid_signature", "the access token is not signed with RS256, ES256 or EdDSA")),
}


@pytest.mark.parametrize("case", ALG_MISMATCHES, ids=list(ALG_MISMATCHES))
def test_an_alg_that_does_not_fit_the_kids_key_is_refused_as_api_a_refuses_it(verifier, stack, http, by_algorithm, case):
    make, expected = ALG_MISMATCHES[case]
    token = make(stack, by_algorithm)
    at_api_a = http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + token})
    assert (at_api_a.status_code, at_api_a.json()["error"], at_api_a.json()["error_description"]) == expected, at_api_a.text
    status, refused, _ = verifier.run(token)
    assert status == 1, refused
    assert (refused["status"], refused["error"], refused["error_description"]) == expected, refused
    assert refused["www_authenticate"] == f'Bearer realm="{stack.api_a}", error="invalid_token", ' \
                                          f'error_description="{expected[2]}"'


# --- key rotation -----------------------------------------------------------------

def test_a_rotated_key_is_fetched_on_its_first_token_and_forged_kids_wait(commands, stack, for_api_a, tmp_path):
    verifiers = [Verifier(language, commands[language], stack, tmp_path / f"{language}.json") for language in LANGUAGES]
    for verifier in verifiers:  # each caches the key set as it is before the rotation
        assert verifier.run(for_api_a["access_token"])[0] == 0, verifier.language
    rotated = stack.ssoctl("keys", "rotate", "--now")
    assert rotated.returncode == 0, rotated.stderr
    new_token = signed_in(stack, "openid api:serverA")["access_token"]
    assert kid_of(new_token) == active_kid(stack) != kid_of(for_api_a["access_token"])
    forged = mint(stack, key=stranger_key(), kid="forged-" + kid_of(new_token))
    for verifier in verifiers:
        status, claims_out, log = verifier.run(new_token)
        assert status == 0, (verifier.language, claims_out, log)
        assert claims_out["sub"] == payload(new_token)["sub"]
        if verifier.language == "swift":  # its rate limit lives in the process, not in the cache file
            continue
        assert f"(unknown kid {kid_of(new_token)})" in log, (verifier.language, log)
        # Right after that refetch, an unknown kid does not make it fetch again.
        status, refused, log = verifier.run(forged)
        assert (status, refused["error"]) == (1, "unknown_signing_key"), (verifier.language, refused)
        assert "not again yet" in log and fetches(log) == [], (verifier.language, log)
