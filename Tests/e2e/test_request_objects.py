"""Request objects (RFC 9101) through nginx with TLS: an app registered
with its public keys and `--require-signed-request-object` signs in with
its whole authorization request as a JWT signed by joserfc (ES256, by
value at /authorize) and by PyJWT (EdDSA, pushed to /par), both PyPI
libraries nobody here wrote. The object's parameters are the request and
the query's are ignored (§6.3); every refusal of §4-§6 and §10.8 is
`invalid_request_object` and changes nothing; a plain request from that
client is refused at /authorize and at /par (§10.5)."""
import json
import secrets
import time
import uuid

import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519
from joserfc import jwt as joserfc_jwt
from joserfc.jwk import ECKey, OKPKey

from oidc_flow import App, query
from test_client_authentication import readable

REDIRECT = "myapp:auth/callback"
EC_KEY = ECKey.generate_key("P-256", parameters={"kid": "app-es256"})
ED_PRIVATE = ed25519.Ed25519PrivateKey.generate()
ED_PUBLIC = OKPKey.import_key(ED_PRIVATE.public_key(), parameters={"kid": "app-eddsa"})


@pytest.fixture(scope="module")
def signing_app(stack, tmp_path_factory):
    """A public app that must sign its requests: its client id."""
    client_id = "jar-" + secrets.token_hex(4)
    keys = {"keys": [EC_KEY.as_dict(private=False), ED_PUBLIC.as_dict(private=False)]}
    path = readable(tmp_path_factory.mktemp("jar"), "jwks.json", json.dumps(keys))
    added = stack.ssoctl("client", "add", client_id, "--redirect-uri", REDIRECT, "--scope", "openid", "--scope", "profile",
                         "--jwks-file", str(path), "--require-signed-request-object")
    assert added.returncode == 0, added.stderr
    return client_id


def claims_for(stack, app, **changes):
    now = int(time.time())
    claims = {"iss": app.client_id, "aud": stack.issuer, "iat": now, "nbf": now, "exp": now + 300, "jti": str(uuid.uuid4()),
              "client_id": app.client_id, "response_type": "code", "redirect_uri": app.redirect_uri, "scope": app.scope,
              "state": app.state, "nonce": app.nonce, "code_challenge": app.challenge, "code_challenge_method": "S256"}
    claims.update(changes)
    return {name: value for name, value in claims.items() if value is not None}


def es256_object(claims, key=EC_KEY, kid="app-es256"):
    return joserfc_jwt.encode({"alg": "ES256", "kid": kid, "typ": "oauth-authz-req+jwt"}, claims, key)


def eddsa_object(claims):
    return pyjwt.encode(claims, ED_PRIVATE, algorithm="EdDSA", headers={"kid": "app-eddsa", "typ": "oauth-authz-req+jwt"})


def by_value(stack, http, app, request, **query_parameters):
    parameters = {"client_id": app.client_id, "request": request, **query_parameters}
    return http.get(stack.issuer + "/authorize", params=parameters, allow_redirects=False)


def finish(stack, http, app, response):
    """The login page the issuer sent the browser to → the code → tokens."""
    assert response.status_code == 303, response.text
    assert response.headers["Location"].startswith("/login.html?client_id=" + app.client_id), response.headers["Location"]
    code = app.code_from(app.login(response.headers["Location"]))
    tokens = app.exchange(code)
    assert tokens.status_code == 200, tokens.text
    return tokens.json()


def id_token_nonce(stack, tokens):
    return pyjwt.decode(tokens["id_token"], options={"verify_signature": False})["nonce"]


def test_discovery_says_request_objects_are_read(stack, http):
    document = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert document["request_parameter_supported"] is True
    assert document["request_uri_parameter_supported"] is False
    assert set(document["request_object_signing_alg_values_supported"]) == {"ES256", "PS256", "RS256", "EdDSA"}


def test_a_signed_object_by_value_is_the_whole_request(stack, http, signing_app):
    app = App(stack, http, client_id=signing_app, redirect_uri=REDIRECT, scope="openid profile")
    request = es256_object(claims_for(stack, app))
    # The query's own state, scope and redirect_uri are ignored (RFC 9101 §6.3).
    response = by_value(stack, http, app, request, state="from-the-query", scope="openid nosuch", redirect_uri="myapp:other")
    tokens = finish(stack, http, app, response)
    assert id_token_nonce(stack, tokens) == app.nonce
    listed = json.loads(stack.ssoctl("client", "list", "--json").stdout)
    assert next(client for client in listed if client["client_id"] == signing_app)["require_signed_request_object"] is True


def test_a_pushed_object_signed_with_eddsa_by_pyjwt(stack, http, signing_app):
    app = App(stack, http, client_id=signing_app, redirect_uri=REDIRECT, scope="openid profile")
    pushed = http.post(stack.issuer + "/par", data={"client_id": signing_app, "request": eddsa_object(claims_for(stack, app)),
                                                    "state": "ignored-body-state"})
    assert pushed.status_code == 201, pushed.text
    response = http.get(stack.issuer + "/authorize", params={"client_id": signing_app, "request_uri": pushed.json()["request_uri"]},
                        allow_redirects=False)
    tokens = finish(stack, http, app, response)
    assert id_token_nonce(stack, tokens) == app.nonce


def refusals(stack, app):
    other = ECKey.generate_key("P-256", parameters={"kid": "app-es256"})
    claims = claims_for(stack, app)
    yield "a key the client did not register", es256_object(claims, key=other)
    yield "alg none", pyjwt.encode(claims, None, algorithm="none")
    yield "HS256 with the client id as the secret", pyjwt.encode(claims, secrets.token_hex(32), algorithm="HS256")
    yield "aud another server", es256_object(claims_for(stack, app, aud="https://elsewhere.example"))
    yield "expired", es256_object(claims_for(stack, app, exp=int(time.time()) - 300))
    yield "exp two hours ahead", es256_object(claims_for(stack, app, exp=int(time.time()) + 7200))
    yield "no exp", es256_object(claims_for(stack, app, exp=None))
    yield "iss another client", es256_object(claims_for(stack, app, iss="mobile-app-001"))
    yield "client_id another client", es256_object(claims_for(stack, app, client_id="mobile-app-001"))
    yield "a nested request_uri", es256_object(claims_for(stack, app, request_uri="https://attacker.example/r"))
    yield "a client assertion's typ", joserfc_jwt.encode({"alg": "ES256", "kid": "app-es256", "typ": "client-authentication+jwt"},
                                                         claims, EC_KEY)


def test_every_refusal_is_invalid_request_object_and_changes_nothing(stack, http, signing_app):
    app = App(stack, http, client_id=signing_app, redirect_uri=REDIRECT, scope="openid profile")
    for name, request in refusals(stack, app):
        before = stack.database_dump()
        response = by_value(stack, http, app, request, redirect_uri=REDIRECT, state="s-" + name.replace(" ", "-"))
        assert response.status_code == 303, (name, response.text)
        answer = query(response.headers["Location"])
        assert answer["error"] == "invalid_request_object", (name, answer)
        assert answer["state"] == "s-" + name.replace(" ", "-") and answer["iss"] == stack.issuer
        pushed = http.post(stack.issuer + "/par", data={"client_id": signing_app, "request": request})
        assert pushed.status_code == 400 and pushed.json()["error"] == "invalid_request_object", (name, pushed.text)
        assert stack.database_dump() == before, name
    # Without a registered redirect_uri beside it, nothing can be trusted: an error page.
    page = by_value(stack, http, app, es256_object(claims_for(stack, app), key=ECKey.generate_key("P-256", parameters={"kid": "app-es256"})))
    assert page.status_code == 400 and "Location" not in page.headers
    assert page.headers["Content-Type"].startswith("text/html")


def test_a_client_that_must_sign_cannot_send_a_plain_request(stack, http, signing_app):
    app = App(stack, http, client_id=signing_app, redirect_uri=REDIRECT, scope="openid profile")
    before = stack.database_dump()
    plain = app.authorize()
    assert plain.status_code == 303 and query(plain.headers["Location"])["error"] == "invalid_request"
    form = query(app.authorize_url())
    pushed = http.post(stack.issuer + "/par", data={**form, "request_object": "verified"})
    assert pushed.status_code == 400 and pushed.json()["error"] == "invalid_request", pushed.text
    assert stack.database_dump() == before
