"""Dynamic client registration (RFC 7591) and management (RFC 7592)
through nginx with TLS: an operator makes an initial access token with
`ssoctl client registration-token`; a native app registers itself (RFC
8252 redirect URIs) and signs in; a backend registers a machine client
whose secret requests-oauth2client (PyPI) uses for client_credentials, and
api-a accepts the token; each client reads, updates and deletes its own
registration with its registration access token. Every refusal leaves the
database as it was."""
import json

import pytest
import requests
from requests_oauth2client import ClientSecretBasic, OAuth2Client

from oidc_flow import App


def ok(result):
    assert result.returncode == 0, result.stderr
    return result


def initial_token(stack, *arguments):
    return ok(stack.ssoctl("client", "registration-token", *arguments)).stdout.strip()


def register(stack, http, metadata, token):
    headers = {"Authorization": "Bearer " + token} if token else {}
    return http.post(stack.issuer + "/register", json=metadata, headers=headers)


NATIVE = {"application_type": "native", "token_endpoint_auth_method": "none", "client_name": "Example App",
          "redirect_uris": ["com.example.app:/callback", "http://127.0.0.1/callback"], "scope": "openid profile offline_access",
          "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}


def test_discovery_names_the_registration_endpoint(stack, http):
    document = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert document["registration_endpoint"] == stack.issuer + "/register"


def test_a_native_app_registers_and_signs_in(stack, http):
    created = register(stack, http, NATIVE, initial_token(stack))
    assert created.status_code == 201, created.text
    assert created.headers["Cache-Control"] == "no-store"
    body = created.json()
    assert "client_secret" not in body and body["token_endpoint_auth_method"] == "none"
    app = App(stack, stack.session(), client_id=body["client_id"], redirect_uri="com.example.app:/callback", scope="openid profile")
    tokens = app.exchange(app.sign_in())
    assert tokens.status_code == 200, tokens.text
    listed = json.loads(ok(stack.ssoctl("client", "list", "--json")).stdout)
    assert next(client for client in listed if client["client_id"] == body["client_id"])["name"] == "Example App"


def test_a_machine_client_registers_and_its_secret_works_with_requests_oauth2client(stack, http):
    # A registration gets OpenID scopes and the code flow; the operator adds an API's scope and client_credentials.
    refused = register(stack, http, {"grant_types": ["client_credentials"], "scope": "api:serverA"}, initial_token(stack))
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_client_metadata", refused.text
    created = register(stack, http, {"redirect_uris": ["https://reports.example/cb"], "client_name": "Reports"}, initial_token(stack))
    assert created.status_code == 201, created.text
    body = created.json()
    ok(stack.ssoctl("client", "update", body["client_id"], "--add-grant", "client_credentials", "--add-scope", "api:serverA"))
    assert body["token_endpoint_auth_method"] == "client_secret_basic" and body["client_secret_expires_at"] == 0
    session = requests.Session()
    session.verify = stack.ca
    session.trust_env = False  # the stack's CA, whatever REQUESTS_CA_BUNDLE says
    client = OAuth2Client(stack.issuer + "/token", auth=ClientSecretBasic(body["client_id"], body["client_secret"]), session=session)
    token = client.client_credentials(scope="api:serverA")
    assert http.get(stack.api_a + "/api/data", headers={"Authorization": f"Bearer {token}"}).status_code == 200

    # RFC 7592: read, update, delete with the registration access token.
    configuration = {"Authorization": "Bearer " + body["registration_access_token"]}
    read = http.get(body["registration_client_uri"], headers=configuration)
    assert read.status_code == 200 and read.json()["client_id"] == body["client_id"] and "client_secret" not in read.json()
    changed = {name: value for name, value in read.json().items() if name not in ("registration_access_token", "registration_client_uri")}
    changed["client_name"] = "Reports v2"
    updated = http.put(body["registration_client_uri"], json=changed, headers=configuration)
    assert updated.status_code == 200 and updated.json()["client_name"] == "Reports v2", updated.text
    # The secret survives the update (RFC 7592 §2.2: the server keeps it).
    client.client_credentials(scope="api:serverA")
    assert http.delete(body["registration_client_uri"], headers=configuration).status_code == 204
    gone = http.post(stack.issuer + "/token", data={"grant_type": "client_credentials", "scope": "api:serverA"},
                     auth=(body["client_id"], body["client_secret"]))
    assert gone.status_code == 401 and gone.json()["error"] == "invalid_client"
    assert http.get(body["registration_client_uri"], headers=configuration).status_code == 401


@pytest.mark.parametrize("metadata,error", [
    ({**NATIVE, "redirect_uris": ["myapp:/cb"]}, "invalid_redirect_uri"),
    ({**NATIVE, "redirect_uris": ["http://localhost/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["com.example.app:/cb"]}, "invalid_redirect_uri"),
    ({**NATIVE, "grant_types": ["password"]}, "invalid_client_metadata"),
    ({**NATIVE, "scope": "openid admin"}, "invalid_client_metadata"),
    ({**NATIVE, "scope": "openid api:serverA"}, "invalid_client_metadata"),
    ({**NATIVE, "jwks_uri": "https://127.0.0.1:9/jwks"}, "invalid_client_metadata"),
    ({**NATIVE, "redirect_uris": "com.example.app:/cb"}, "invalid_client_metadata"),
    ({**NATIVE, "software_statement": "eyJhbGciOiJub25lIn0.e30."}, "invalid_software_statement"),
])
def test_refused_metadata_changes_nothing(stack, http, metadata, error):
    token = initial_token(stack)
    before = stack.database_dump()
    refused = register(stack, http, metadata, token)
    assert refused.status_code == 400 and refused.json()["error"] == error, refused.text
    assert stack.database_dump() == before
    assert register(stack, http, NATIVE, token).status_code == 201, "the token was not spent"


def test_tokens_are_required_counted_and_never_stored(stack, http):
    before = stack.database_dump()
    missing = register(stack, http, NATIVE, None)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
    forged = register(stack, http, NATIVE, "x" * 43)
    assert forged.status_code == 401 and forged.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert stack.database_dump() == before
    token = initial_token(stack, "--uses", "2", "--ttl", "600")
    assert register(stack, http, NATIVE, token).status_code == 201
    second = register(stack, http, NATIVE, token)
    assert second.status_code == 201
    assert register(stack, http, NATIVE, token).status_code == 401, "two uses, no third"
    dump = stack.database_dump()
    assert token not in dump and second.json()["registration_access_token"] not in dump
    for arguments in (("--ttl", "10"), ("--uses", "0"), ("--uses", "1001")):
        assert stack.ssoctl("client", "registration-token", *arguments).returncode != 0, arguments
