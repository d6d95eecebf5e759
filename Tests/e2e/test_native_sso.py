"""OpenID Connect Native SSO for Mobile Apps through nginx with TLS: app #1
(mobile-app-001) signs in through the browser with device_sso and a device
id; app #2 (mobile-app-002) exchanges app #1's ID token and the device secret
(current draft) or the device id (seed profile) at /token, calls api-a, and
loses everything when app #1's session is logged out. The seed profile
follows its group's switch (`ssoctl client group`), and an exchange never
grants more than app #1's sign-in did."""
import base64
import hashlib
import json
import time
import uuid

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

import database
from oidc_flow import SCOPE, App

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"
DEVICE_SECRET = "urn:openid:params:token-type:device-secret"
DEVICE_ID = "urn:x-oath:params:oauth:token-type:device-id"


def half_sha256(value):
    """ds_hash / di_hash: base64url of the left-most 128 bits of SHA-256 of the ASCII value."""
    return base64.urlsafe_b64encode(hashlib.sha256(value.encode("ascii")).digest()[:16]).rstrip(b"=").decode()


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def exchange_form(stack, id_token, actor_token, actor_type, **extra):
    return {"grant_type": TOKEN_EXCHANGE, "audience": stack.issuer, "subject_token": id_token, "subject_token_type": ID_TOKEN,
            "actor_token": actor_token, "actor_token_type": actor_type, **extra}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def resigned(stack, token, **changes):
    """The same JWT with some claims changed, signed with the issuer's own key
    (read from the stack's home): a token the issuer did sign, or could have."""
    header, payload, _ = token.split(".")
    kid = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]
    key = serialization.load_pem_private_key(database.private_key_pem(stack, kid), password=None)
    body = header + "." + b64url(json.dumps({**claims(token), **changes}).encode())
    return body + "." + b64url(key.sign(body.encode(), padding.PKCS1v15(), hashes.SHA256()))


def sign_in_app1(stack, http, scope=SCOPE + " device_sso", device_id=None):
    """App #1's browser sign-in and code exchange; the token response."""
    app1 = App(stack, http, scope=scope)
    response = app1.exchange(app1.sign_in(), device_id=device_id)
    assert response.status_code == 200, response.text
    return response.json()


def exchange(stack, id_token, actor_token, actor_type, client_id="mobile-app-002", **extra):
    """App #2 (no browser, no cookies) at /token, client_id in the body."""
    return stack.session().post(stack.issuer + "/token",
                                data=exchange_form(stack, id_token, actor_token, actor_type, client_id=client_id, **extra))


def refresh(stack, tokens, **extra):
    return stack.session().post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": "mobile-app-001",
                                                               "refresh_token": tokens["refresh_token"], **extra})


def assert_error(response, error, mentions=None):
    assert response.status_code == 400 and response.json()["error"] == error, response.text
    assert mentions is None or mentions in response.json()["error_description"], response.text


def test_native_sso_both_profiles_and_logout_ends_them(stack, http):
    # App #1: browser sign-in with device_sso; device_id on the code exchange.
    device_id = str(uuid.uuid4()).upper()
    app1 = App(stack, http, scope=SCOPE + " device_sso")
    response = app1.exchange(app1.sign_in(), device_id=device_id)
    assert response.status_code == 200, response.text
    tokens1 = response.json()
    device_secret = tokens1["device_secret"]
    id_claims = claims(tokens1["id_token"])
    assert id_claims["ds_hash"] == half_sha256(device_secret)
    assert id_claims["di_hash"] == half_sha256(device_id)
    assert id_claims["sid"]

    # App #2, no browser and no cookies: the current draft's profile, with
    # HTTP Basic and an empty password (a public client).
    app2 = stack.session()
    response = app2.post(stack.issuer + "/token", auth=("mobile-app-002", ""),
                         data=exchange_form(stack, tokens1["id_token"], device_secret, DEVICE_SECRET))
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store" and response.headers["Pragma"] == "no-cache"
    tokens2 = response.json()
    assert tokens2["issued_token_type"] == ACCESS_TOKEN and tokens2["token_type"] == "Bearer"
    assert tokens2["expires_in"] > 0 and "device_secret" not in tokens2
    id2 = claims(tokens2["id_token"])
    assert id2["aud"] == "mobile-app-002" and id2["sid"] == id_claims["sid"] and id2["sub"] == id_claims["sub"]
    assert id2["auth_time"] == id_claims["auth_time"]
    api = app2.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + tokens2["access_token"]})
    assert api.status_code == 200, api.text
    assert api.json()["user"] == "alice@example.com"

    # The seed profile: the device id as actor token, client_id in the body.
    response = app2.post(stack.issuer + "/token", data=exchange_form(stack, tokens1["id_token"], device_id, DEVICE_ID,
                                                                    client_id="mobile-app-002", scope="openid api:serverA"))
    assert response.status_code == 200, response.text
    seed = response.json()
    assert seed["scope"] == "openid api:serverA" and "refresh_token" not in seed
    api = app2.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + seed["access_token"]})
    assert api.status_code == 200, api.text

    # A wrong device secret and a wrong audience are refused.
    wrong = app2.post(stack.issuer + "/token", auth=("mobile-app-002", ""),
                      data=exchange_form(stack, tokens1["id_token"], "not-the-secret", DEVICE_SECRET))
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    target = app2.post(stack.issuer + "/token", auth=("mobile-app-002", ""),
                       data=exchange_form(stack, tokens1["id_token"], device_secret, DEVICE_SECRET, audience=stack.api_a))
    assert target.status_code == 400 and target.json()["error"] == "invalid_target"

    # App #1 signs out (its browser's cookie jar): everything of the session ends.
    response = http.get(stack.issuer + "/logout", params={"id_token_hint": tokens1["id_token"],
                                                          "post_logout_redirect_uri": "myapp:auth/logout"},
                        allow_redirects=False)
    assert response.status_code == 303 and response.headers["Location"] == "myapp:auth/logout", response.text
    refreshed = app2.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": "mobile-app-002",
                                                         "refresh_token": tokens2["refresh_token"]})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant", refreshed.text
    for form, auth in [(exchange_form(stack, tokens1["id_token"], device_secret, DEVICE_SECRET), ("mobile-app-002", "")),
                       (exchange_form(stack, tokens1["id_token"], device_id, DEVICE_ID, client_id="mobile-app-002"), None)]:
        again = app2.post(stack.issuer + "/token", data=form, auth=auth)
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant", again.text


def test_discovery_advertises_native_sso(stack, http):
    document = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert document["native_sso_supported"] is True
    assert TOKEN_EXCHANGE in document["grant_types_supported"]
    assert "device_sso" in document["scopes_supported"]


def test_device_id_without_device_sso_has_no_effect(stack, http):
    device_id = str(uuid.uuid4())
    tokens = sign_in_app1(stack, http, scope=SCOPE, device_id=device_id)
    assert "di_hash" not in claims(tokens["id_token"]) and "device_secret" not in tokens
    refreshed = refresh(stack, tokens, device_id=device_id)
    assert refreshed.status_code == 200 and "di_hash" not in claims(refreshed.json()["id_token"]), refreshed.text
    # An ID token of such a sign-in with di_hash, as the issuer made them
    # before this was fixed, buys nothing: no device_sso, nothing to share.
    issued_before_the_fix = resigned(stack, tokens["id_token"], di_hash=half_sha256(device_id))
    assert_error(exchange(stack, issued_before_the_fix, device_id, DEVICE_ID), "invalid_grant")


def test_an_exchange_never_grants_more_than_the_sign_in(stack, http):
    device_id = str(uuid.uuid4())
    tokens = sign_in_app1(stack, http, scope="openid device_sso", device_id=device_id)
    assert "refresh_token" not in tokens
    for actor, actor_type in ((tokens["device_secret"], DEVICE_SECRET), (device_id, DEVICE_ID)):
        assert_error(exchange(stack, tokens["id_token"], actor, actor_type, scope="api:serverA offline_access"),
                     "invalid_scope", mentions="api:serverA")
        granted = exchange(stack, tokens["id_token"], actor, actor_type)
        assert granted.status_code == 200, granted.text
        assert granted.json()["scope"] == "openid" and "refresh_token" not in granted.json()
        api = stack.session().get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + granted.json()["access_token"]})
        assert api.status_code == 403, api.text
        assert_error(exchange(stack, tokens["id_token"], actor, actor_type, scope="openid device_sso"), "invalid_scope",
                     mentions="device_sso cannot be granted")
        assert_error(exchange(stack, tokens["id_token"], actor, actor_type, client_id="mobile-app-001"), "invalid_grant",
                     mentions="its own ID token")


def test_the_seed_profile_follows_the_group_switch_without_a_restart(stack, http):
    shown = stack.ssoctl("client", "group", "demo")
    assert shown.returncode == 0, shown.stderr
    assert "members: mobile-app-001 mobile-app-002" in shown.stdout and "device_id profile: on" in shown.stdout
    device_id = str(uuid.uuid4())
    tokens = sign_in_app1(stack, http, device_id=device_id)
    assert claims(tokens["id_token"])["di_hash"] == half_sha256(device_id)
    switched = stack.ssoctl("client", "group", "demo", "--no-allow-device-id")
    assert switched.returncode == 0 and "device_id profile: off" in switched.stdout, switched.stderr
    try:
        assert_error(exchange(stack, tokens["id_token"], device_id, DEVICE_ID), "invalid_grant", mentions="not switched on")
        assert exchange(stack, tokens["id_token"], tokens["device_secret"], DEVICE_SECRET).status_code == 200
        refreshed = refresh(stack, tokens, device_id=device_id)
        assert refreshed.status_code == 200 and "di_hash" not in claims(refreshed.json()["id_token"]), refreshed.text
        assert "di_hash" not in claims(sign_in_app1(stack, stack.session(), device_id=device_id)["id_token"])
    finally:
        switched = stack.ssoctl("client", "group", "demo", "--allow-device-id")
    assert switched.returncode == 0 and "device_id profile: on" in switched.stdout, switched.stderr
    assert exchange(stack, tokens["id_token"], device_id, DEVICE_ID).status_code == 200

    before = stack.database_dump()
    for args in (["bad name", "--no-allow-device-id"], ["bad name"], [""]):
        refused = stack.ssoctl("client", "group", *args)
        assert refused.returncode == 1 and refused.stderr.startswith("ssoctl: error: "), (args, refused.stderr)
    assert stack.database_dump() == before
    assert stack.ssoctl("client", "group", "--help").returncode == 0


def test_a_group_is_set_up_before_its_first_client(stack):
    """`client group acme --allow-device-id` works before any client is in
    acme; the client that joins later has the seed profile on."""
    shown = stack.ssoctl("client", "group", "early-group")
    assert shown.returncode == 0, shown.stderr
    assert "members: (none yet: clients join with --native-sso-group early-group)" in shown.stdout
    assert "device_id profile: off" in shown.stdout
    switched = stack.ssoctl("client", "group", "early-group", "--allow-device-id")
    assert switched.returncode == 0 and "device_id profile: on" in switched.stdout, switched.stderr
    added = stack.ssoctl("client", "add", "early-app", "--redirect-uri", "com.example.early:/cb", "--scope", "openid",
                         "--scope", "device_sso", "--native-sso-group", "early-group")
    assert added.returncode == 0, added.stderr
    shown = stack.ssoctl("client", "group", "early-group")
    assert "members: early-app" in shown.stdout and "device_id profile: on" in shown.stdout, shown.stdout
    assert "set up before its first client" in " ".join(stack.ssoctl("client", "group", "--help").stdout.split())


def test_the_seed_profile_needs_an_unexpired_id_token(stack, http):
    device_id = str(uuid.uuid4())
    tokens = sign_in_app1(stack, http, device_id=device_id)
    now = int(time.time())
    expired = resigned(stack, tokens["id_token"], iat=now - 7200, exp=now - 3600)
    assert_error(exchange(stack, expired, device_id, DEVICE_ID), "invalid_grant", mentions="expired")
    # The device secret is the proof in the current profile: exp does not matter.
    assert exchange(stack, expired, tokens["device_secret"], DEVICE_SECRET).status_code == 200
