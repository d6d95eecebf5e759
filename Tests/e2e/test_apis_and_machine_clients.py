"""A team's own APIs (ssoctl api), RFC 8707 resource indicators, machine
clients (client_credentials) and client administration, through ssoctl and
HTTP against the running stack: every change takes effect without a restart."""
import base64
import json
import time
import secrets

import pytest

from oidc_flow import App, query

ORDERS = "https://orders.example.test"
SECRET = "machine-secret-" + secrets.token_hex(12)
STANDARD_SCOPES = ["openid", "profile", "email", "offline_access", "device_sso"]


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def header(jwt):
    part = jwt.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def ok(result):
    assert result.returncode == 0, result.stderr
    return result


def refused(stack, *args, names, input=None):
    """exit 1, a message that names the bad value, and no change at all."""
    before = stack.database_dump()
    result = stack.ssoctl(*args, input=input)
    assert result.returncode == 1, (args, result.stdout, result.stderr)
    assert result.stderr.startswith("ssoctl: error: "), result.stderr
    assert names in result.stderr, result.stderr
    assert stack.database_dump() == before
    return result


def discovery_scopes(stack, http):
    return http.get(stack.issuer + "/.well-known/openid-configuration").json()["scopes_supported"]


def client_credentials(stack, http, client_id, secret, **form):
    return http.post(stack.issuer + "/token", data={"grant_type": "client_credentials", **form}, auth=(client_id, secret))


@pytest.fixture()
def orders_api(stack):
    ok(stack.ssoctl("api", "add", ORDERS, "--scope", "orders:read", "--scope", "orders:write", "--name", "Orders"))
    yield ORDERS
    stack.ssoctl("api", "remove", ORDERS)


def sign_in(stack, http, client_id, scope, redirect_uri="com.team.app:/cb", **extra):
    app = App(stack, http, client_id=client_id, redirect_uri=redirect_uri, scope=scope)
    return app, app.exchange(app.sign_in(**extra))


def within_seconds(read, condition, seconds=4):
    """The first value read that meets `condition`, read again for up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if condition(value):
            return value
        assert time.monotonic() < deadline, value
        time.sleep(0.1)


def add_team_app(stack, client_id, *extra):
    ok(stack.ssoctl("client", "add", client_id, "--redirect-uri", "com.team.app:/cb", "--scope", "openid", "--scope", "offline_access",
                    "--scope", "api:serverA", "--scope", "api:serverB", *extra))


def test_demo_apis_are_registered_on_first_start(stack):
    apis = json.loads(ok(stack.ssoctl("api", "list", "--json")).stdout)
    demo = {api["audience"]: api["scopes"] for api in apis if api["audience"] in (stack.api_a, stack.api_b)}
    assert demo == {stack.api_a: ["api:serverA"], stack.api_b: ["api:serverB"]}


def test_an_api_is_added_listed_in_discovery_and_removed_without_a_restart(stack, http):
    assert "orders:read" not in discovery_scopes(stack, http)
    ok(stack.ssoctl("api", "add", ORDERS, "--scope", "orders:read", "--name", "Orders"))
    try:
        listed = [api for api in json.loads(ok(stack.ssoctl("api", "list", "--json")).stdout) if api["audience"] == ORDERS]
        assert listed == [{"audience": ORDERS, "name": "Orders", "scopes": ["orders:read"]}]
        assert ORDERS in ok(stack.ssoctl("api", "list")).stdout
        # nginx serves discovery from a copy at most 2 s old.
        scopes = within_seconds(lambda: discovery_scopes(stack, http), lambda scopes: "orders:read" in scopes)
        assert scopes[:5] == STANDARD_SCOPES and "orders:read" in scopes and "api:serverA" in scopes
    finally:
        ok(stack.ssoctl("api", "remove", ORDERS))
    within_seconds(lambda: discovery_scopes(stack, http), lambda scopes: "orders:read" not in scopes)
    assert ORDERS not in ok(stack.ssoctl("api", "list")).stdout


@pytest.mark.parametrize("args,names", [
    (["api", "add", "not a uri", "--scope", "x:read"], '"not a uri"'),
    (["api", "add", "https://api.example.test#part", "--scope", "x:read"], "https://api.example.test#part"),
    (["api", "add", "https://api.example.test/?tenant=1", "--scope", "x:read"], "https://api.example.test/?tenant=1"),
    (["api", "add", "https://api.example.test"], "--scope"),
    (["api", "add", "https://api.example.test", "--scope", "openid"], "openid"),
    (["api", "add", "https://api.example.test", "--scope", "api:serverA"], "api:serverA"),
    (["api", "add", "https://api.example.test", "--scope", "bad\"scope"], 'bad\\"scope'),
    (["api", "remove", "https://nothing.example.test"], "https://nothing.example.test"),
])
def test_api_refusals_name_the_value_and_change_nothing(stack, args, names):
    refused(stack, *args, names=names)


def test_registering_an_existing_audience_is_refused(stack):
    refused(stack, "api", "add", stack.api_a, "--scope", "other:scope", names=stack.api_a)


def test_the_access_token_names_every_api_that_owns_a_granted_scope(stack, http, orders_api):
    ok(stack.ssoctl("client", "add", "orders-app", "--redirect-uri", "com.team.app:/cb", "--scope", "openid", "--scope", "orders:read",
                    "--scope", "api:serverA"))
    _, response = sign_in(stack, http, "orders-app", "openid orders:read api:serverA")
    assert response.status_code == 200, response.text
    access = claims(response.json()["access_token"])
    assert sorted(access["aud"]) == sorted([orders_api, stack.api_a])
    assert access["scope"] == "openid orders:read api:serverA"


def test_resource_at_the_token_endpoint_narrows_the_access_token(stack, http):
    add_team_app(stack, "narrow-at-token")
    app = App(stack, http, client_id="narrow-at-token", redirect_uri="com.team.app:/cb", scope="openid offline_access api:serverA api:serverB")
    code = app.sign_in()
    unregistered = app.exchange(code, resource="https://unregistered.example.test")
    assert unregistered.status_code == 400 and unregistered.json()["error"] == "invalid_target", unregistered.text
    # The refusal rolled the redemption back: the same code still works.
    response = app.exchange(code, resource=stack.api_a)
    assert response.status_code == 200, response.text
    body = response.json()
    access = claims(body["access_token"])
    assert access["aud"] == [stack.api_a]
    assert access["scope"] == body["scope"] == "openid offline_access api:serverA"
    bearer = {"Authorization": "Bearer " + body["access_token"]}
    assert http.get(stack.api_a + "/api/data", headers=bearer).status_code == 200
    other = http.get(stack.api_b + "/api/records", headers=bearer)
    assert other.status_code == 403 and other.json()["error"] == "invalid_audience"
    # The refresh token keeps the whole grant: without resource, both APIs again.
    refreshed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": body["refresh_token"],
                                                         "client_id": "narrow-at-token"}).json()
    assert sorted(claims(refreshed["access_token"])["aud"]) == sorted([stack.api_a, stack.api_b])
    narrowed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"],
                                                        "client_id": "narrow-at-token", "resource": stack.api_b}).json()
    assert claims(narrowed["access_token"])["aud"] == [stack.api_b]


def test_resource_at_authorize_narrows_the_whole_grant(stack, http):
    add_team_app(stack, "narrow-at-authorize")
    app, response = sign_in(stack, http, "narrow-at-authorize", "openid offline_access api:serverA api:serverB", resource=stack.api_b)
    body = response.json()
    assert claims(body["access_token"])["aud"] == [stack.api_b]
    assert body["scope"] == "openid offline_access api:serverB"
    refreshed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": body["refresh_token"],
                                                         "client_id": "narrow-at-authorize"})
    assert claims(refreshed.json()["access_token"])["aud"] == [stack.api_b]
    wider = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": refreshed.json()["refresh_token"],
                                                     "client_id": "narrow-at-authorize", "resource": stack.api_a})
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_target"


@pytest.mark.parametrize("extra,error", [
    ({"resource": "https://unregistered.example.test"}, "invalid_target"),
    ({"resource": "relative/path"}, "invalid_target"),
    ({"scope": "openid no-such:scope"}, "invalid_scope"),
])
def test_authorize_sends_target_and_scope_errors_back_to_the_app(stack, http, extra, error):
    app = App(stack, http)
    response = app.authorize(**extra)
    assert response.status_code in (302, 303), response.text
    parameters = query(response.headers["Location"])
    assert response.headers["Location"].startswith(app.redirect_uri)
    assert parameters["error"] == error and parameters["state"] == app.state


def test_a_machine_client_gets_its_own_access_token(stack, http):
    ok(stack.ssoctl("client", "add", "report-job", "--grant", "client_credentials", "--scope", "api:serverA", "--secret-stdin",
                    input=SECRET + "\n"))
    stored = stack.query("SELECT secret_hash FROM clients WHERE client_id = ?", "report-job")[0][0]
    assert SECRET not in stored and stored.startswith("$scrypt$"), "the secret is kept only as a hash"
    response = client_credentials(stack, http, "report-job", SECRET)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer" and body["scope"] == "api:serverA"
    assert "refresh_token" not in body and "id_token" not in body
    token = body["access_token"]
    assert header(token)["typ"] == "at+jwt" and header(token)["alg"] == "RS256"
    access = claims(token)
    assert access["sub"] == access["client_id"] == "report-job"
    assert access["aud"] == [stack.api_a]
    assert "sid" not in access and "email" not in access
    data = http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + token})
    assert data.status_code == 200 and data.json()["user"] == "report-job"
    userinfo = http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + token})
    assert userinfo.status_code == 403 and 'error="insufficient_scope"' in userinfo.headers["WWW-Authenticate"]
    introspected = http.post(stack.issuer + "/introspect", data={"token": token}, auth=("report-job", SECRET)).json()
    assert introspected["active"] is True and introspected["sub"] == "report-job" and "username" not in introspected


def test_client_credentials_refusals(stack, http):
    ok(stack.ssoctl("client", "add", "web-backend", "--redirect-uri", "https://backend.example.test/cb", "--scope", "openid",
                    "--scope", "api:serverA", "--secret-stdin", input=SECRET + "\n"))
    ok(stack.ssoctl("client", "add", "cc-refusals", "--grant", "client_credentials", "--scope", "api:serverA", "--secret-stdin",
                    input=SECRET + "\n"))
    public = http.post(stack.issuer + "/token", data={"grant_type": "client_credentials", "client_id": "mobile-app-001"})
    assert public.status_code == 400 and public.json()["error"] == "unauthorized_client"
    without_grant = client_credentials(stack, http, "web-backend", SECRET)
    assert without_grant.status_code == 400 and without_grant.json()["error"] == "unauthorized_client"
    wrong_secret = client_credentials(stack, http, "cc-refusals", SECRET + "x")
    assert wrong_secret.status_code == 401 and wrong_secret.json()["error"] == "invalid_client"
    for scope, said in [("openid", "openid"), ("api:serverB", "api:serverB"), ("nothing:here", "nothing:here")]:
        response = client_credentials(stack, http, "cc-refusals", SECRET, scope=scope)
        assert response.status_code == 400 and response.json()["error"] == "invalid_scope", response.text
        assert said in response.json()["error_description"]
    target = client_credentials(stack, http, "cc-refusals", SECRET, resource=stack.api_b)
    assert target.status_code == 400 and target.json()["error"] == "invalid_target"
    # A machine client signs no user in.
    sign_in_attempt = App(stack, http, client_id="cc-refusals", redirect_uri="https://backend.example.test/cb").authorize()
    assert sign_in_attempt.status_code == 400


def test_a_replaced_secret_stops_working_at_once(stack, http):
    ok(stack.ssoctl("client", "add", "rotating-job", "--grant", "client_credentials", "--scope", "api:serverB", "--secret-stdin",
                    input=SECRET + "\n"))
    assert client_credentials(stack, http, "rotating-job", SECRET).status_code == 200
    new_secret = "replacement-" + secrets.token_hex(12)
    ok(stack.ssoctl("client", "secret", "rotating-job", "--secret-stdin", input=new_secret + "\n"))
    assert client_credentials(stack, http, "rotating-job", SECRET).status_code == 401
    assert client_credentials(stack, http, "rotating-job", new_secret).status_code == 200
    refused(stack, "client", "secret", "mobile-app-001", "--secret-stdin", input=new_secret + "\n", names="mobile-app-001")
    refused(stack, "client", "secret", "rotating-job", "--secret-stdin", input="short\n", names="16 characters")


def test_client_update_takes_effect_without_a_restart(stack, http):
    add_team_app(stack, "updated-app")
    app = App(stack, http, client_id="updated-app", redirect_uri="com.team.app:/other", scope="openid")
    assert app.authorize().status_code == 400, "not registered yet: an error page, no redirect"
    ok(stack.ssoctl("client", "update", "updated-app", "--add-redirect-uri", "com.team.app:/other"))
    assert app.authorize().status_code == 303
    # Remove a scope: the refresh token no longer carries it, nor may it be asked for.
    _, response = sign_in(stack, http, "updated-app", "openid offline_access api:serverA api:serverB")
    refresh_token = response.json()["refresh_token"]
    ok(stack.ssoctl("client", "update", "updated-app", "--remove-scope", "api:serverB"))
    refreshed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                                         "client_id": "updated-app"})
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["scope"] == "openid offline_access api:serverA"
    assert claims(refreshed.json()["access_token"])["aud"] == [stack.api_a]
    asked = App(stack, http, client_id="updated-app", redirect_uri="com.team.app:/cb", scope="openid api:serverB").authorize()
    assert query(asked.headers["Location"])["error"] == "invalid_scope"
    listed = [c for c in json.loads(ok(stack.ssoctl("client", "list", "--json")).stdout) if c["client_id"] == "updated-app"][0]
    assert listed["redirect_uris"] == ["com.team.app:/cb", "com.team.app:/other"]
    assert listed["scopes"] == ["openid", "offline_access", "api:serverA"]
    assert "secret_hash" not in json.dumps(listed)


@pytest.mark.parametrize("args,names", [
    (["client", "update", "mobile-app-001", "--remove-redirect-uri", "myapp:never-registered"], "myapp:never-registered"),
    (["client", "update", "mobile-app-001", "--add-scope", "no-such:scope"], "no-such:scope"),
    (["client", "update", "mobile-app-001", "--access-token-ttl", "999999999"], "999999999"),
    (["client", "update", "mobile-app-001", "--add-grant", "password"], "password"),
    (["client", "update", "mobile-app-001", "--add-grant", "client_credentials"], "client_credentials"),
    (["client", "update", "mobile-app-001"], "nothing to change"),
    (["client", "update", "no-such-client", "--require-dpop"], "no-such-client"),
    (["client", "update", "bad\u0001id", "--require-dpop"], "bad\\u{01}id"),
    (["client", "add", "ttl-app", "--redirect-uri", "com.team.app:/cb", "--refresh-token-ttl", "0"], "0"),
    (["client", "add", "unknown-scope-app", "--redirect-uri", "com.team.app:/cb", "--scope", "nope:read"], "nope:read"),
    (["client", "add", "machine-public", "--grant", "client_credentials", "--scope", "api:serverA"], "confidential"),
    (["client", "add", "ios-app", "--redirect-uri", "com.team.app:/cb", "--ios-app-id", "com.team.app"], "com.team.app"),
    (["client", "add", "android-app", "--redirect-uri", "com.team.app:/cb", "--android-package", "com.team.app"], "--android-cert-fingerprint"),
    (["client", "delete", "no-such-client"], "no-such-client"),
])
def test_client_refusals_name_the_value_and_change_nothing(stack, args, names):
    refused(stack, *args, names=names)


def test_per_client_token_lifetimes(stack, http):
    add_team_app(stack, "short-lived", "--access-token-ttl", "120", "--refresh-token-ttl", "600")
    _, response = sign_in(stack, http, "short-lived", "openid offline_access api:serverA")
    body = response.json()
    assert body["expires_in"] == 120
    access = claims(body["access_token"])
    assert access["exp"] - access["iat"] == 120
    (created, expires), = stack.query("SELECT created_at, expires_at FROM refresh_tokens WHERE client_id = ?", "short-lived")
    assert expires - created == 600
    ok(stack.ssoctl("client", "update", "short-lived", "--access-token-ttl", "0"))
    refreshed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": body["refresh_token"],
                                                         "client_id": "short-lived"}).json()
    assert refreshed["expires_in"] > 120, "0 returns to the issuer's lifetime"


def test_a_deleted_clients_tokens_stop_working_at_once(stack, http):
    add_team_app(stack, "deleted-app")
    _, response = sign_in(stack, http, "deleted-app", "openid offline_access api:serverA")
    body = response.json()
    bearer = {"Authorization": "Bearer " + body["access_token"]}
    assert http.get(stack.issuer + "/userinfo", headers=bearer).status_code == 200
    ok(stack.ssoctl("client", "delete", "deleted-app"))
    assert stack.query("SELECT count(*) FROM refresh_tokens WHERE client_id = ?", "deleted-app")[0][0] == 0
    assert http.get(stack.issuer + "/userinfo", headers=bearer).status_code == 401
    refresh = {"grant_type": "refresh_token", "refresh_token": body["refresh_token"], "client_id": "deleted-app"}
    assert http.post(stack.issuer + "/token", data=refresh).json()["error"] == "invalid_client"
    # The same id registered again is another client: the old tokens stay dead.
    add_team_app(stack, "deleted-app")
    assert http.post(stack.issuer + "/token", data=refresh).json()["error"] == "invalid_grant"
    # Review R4: the access token too, at userinfo, although the id is registered again.
    assert http.get(stack.issuer + "/userinfo", headers=bearer).status_code == 401


def test_a_machine_token_of_a_deleted_client_stays_dead_when_the_id_is_registered_again(stack, http):
    """Review R4: tokens are tied to the registration they were issued
    under, not only to the client id: a client deleted (its secret leaked,
    say) and registered again under the same id does not bring its old
    tokens back at /introspect or /userinfo; the new registration's work."""
    def register():
        ok(stack.ssoctl("client", "add", "reborn-job", "--grant", "client_credentials", "--scope", "api:serverA", "--secret-stdin",
                        input=SECRET + "\n"))

    def active(token):
        return http.post(stack.issuer + "/introspect", data={"token": token}, auth=("reborn-job", SECRET)).json()["active"]

    register()
    old = client_credentials(stack, http, "reborn-job", SECRET).json()["access_token"]
    assert active(old) is True
    ok(stack.ssoctl("client", "delete", "reborn-job"))
    register()
    new = client_credentials(stack, http, "reborn-job", SECRET).json()["access_token"]
    assert active(old) is False and active(new) is True
    assert claims(old)["client_registration"] != claims(new)["client_registration"]


def test_require_dpop_and_require_par_are_enforced(stack, http):
    add_team_app(stack, "strict-app")
    app = App(stack, http, client_id="strict-app", redirect_uri="com.team.app:/cb", scope="openid")
    code = app.sign_in()
    ok(stack.ssoctl("client", "update", "strict-app", "--require-dpop"))
    response = app.exchange(code)
    assert response.status_code == 400 and response.json()["error"] == "invalid_dpop_proof"
    ok(stack.ssoctl("client", "update", "strict-app", "--no-require-dpop"))
    assert app.exchange(code).status_code == 200, "the refusal spent nothing"
    ok(stack.ssoctl("client", "update", "strict-app", "--require-par"))
    pushed_only = App(stack, http, client_id="strict-app", redirect_uri="com.team.app:/cb", scope="openid").authorize()
    assert query(pushed_only.headers["Location"])["error"] == "invalid_request"
    listed = [c for c in json.loads(ok(stack.ssoctl("client", "list", "--json")).stdout) if c["client_id"] == "strict-app"][0]
    assert listed["require_par"] is True and listed["require_dpop"] is False


def test_the_association_files_list_every_app(stack, http):
    fingerprint = ":".join(["AB"] * 32)
    ok(stack.ssoctl("client", "add", "linked-app", "--redirect-uri", "com.linked.app:/cb", "--ios-app-id", "ABCDE12345.com.linked.app",
                    "--android-package", "com.linked.app", "--android-cert-fingerprint", fingerprint.lower()))
    apple = http.get(stack.app_links + "/.well-known/apple-app-site-association").json()
    app_ids = apple["applinks"]["details"][0]["appIDs"]
    assert len(app_ids) >= 2 and "ABCDE12345.com.linked.app" in app_ids
    assert "ABCDE12345.com.linked.app" in apple["webcredentials"]["apps"]
    android = http.get(stack.app_links + "/.well-known/assetlinks.json").json()
    linked = [s["target"] for s in android if s["target"]["package_name"] == "com.linked.app"]
    assert linked == [{"namespace": "android_app", "package_name": "com.linked.app", "sha256_cert_fingerprints": [fingerprint]}]
    assert len(android) >= 2, "the deployment's own app stays listed"
    ok(stack.ssoctl("client", "delete", "linked-app"))
    assert "ABCDE12345.com.linked.app" not in http.get(stack.app_links + "/.well-known/apple-app-site-association").text
    assert "com.linked.app" not in http.get(stack.app_links + "/.well-known/assetlinks.json").text


def test_removing_an_api_takes_its_scopes_from_clients(stack, http):
    ok(stack.ssoctl("api", "add", "https://billing.example.test", "--scope", "billing:read"))
    ok(stack.ssoctl("client", "add", "billing-app", "--redirect-uri", "com.team.app:/cb", "--scope", "openid", "--scope", "billing:read"))
    removed = ok(stack.ssoctl("api", "remove", "https://billing.example.test"))
    assert "billing-app" in removed.stdout
    listed = [c for c in json.loads(ok(stack.ssoctl("client", "list", "--json")).stdout) if c["client_id"] == "billing-app"][0]
    assert listed["scopes"] == ["openid"]
    asked = App(stack, http, client_id="billing-app", redirect_uri="com.team.app:/cb", scope="openid billing:read").authorize()
    assert query(asked.headers["Location"])["error"] == "invalid_scope"
