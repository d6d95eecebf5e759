"""A well-known OAuth client library (Authlib) with PKCE signs in, validates the
id_token against the JWKS, and calls both APIs: interoperability, not our own client."""
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import KeySet

from oidc_flow import SCOPE, query
from stack import DEMO_PASSWORD


def test_authlib_pkce_client_signs_in_and_calls_both_apis(stack):
    discovery = stack.session().get(stack.issuer + "/.well-known/openid-configuration").json()
    client = OAuth2Session("mobile-app-001", redirect_uri="myapp:auth/callback", scope=SCOPE, code_challenge_method="S256")
    client.verify = stack.ca
    client.trust_env = False
    verifier = "v" * 20 + "-._~" + "0123456789" * 4
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], code_verifier=verifier, nonce="n-0S6_WzA2Mj")
    assert "code_challenge=" + create_s256_code_challenge(verifier) in url

    browser = stack.session()  # the system browser, with its own cookie jar
    login_page = browser.get(url, allow_redirects=False).headers["Location"]
    callback = browser.post(stack.issuer + "/login", allow_redirects=False,
                            data={"req": query(login_page)["req"], "email": "alice@example.com", "password": DEMO_PASSWORD})
    callback_url = callback.headers["Location"]
    assert query(callback_url)["iss"] == discovery["issuer"]  # RFC 9207, checked by the app

    token = client.fetch_token(discovery["token_endpoint"], authorization_response=callback_url, code_verifier=verifier, state=state)
    keys = KeySet.import_key_set(stack.session().get(discovery["jwks_uri"]).json())
    id_token = jwt.decode(token["id_token"], keys, algorithms=["RS256"])
    jwt.JWTClaimsRegistry(iss={"essential": True, "value": discovery["issuer"]},
                          aud={"essential": True, "value": "mobile-app-001"},
                          nonce={"essential": True, "value": "n-0S6_WzA2Mj"},
                          exp={"essential": True}).validate(id_token.claims)
    assert id_token.claims["email"] == "alice@example.com"

    data = client.get(stack.api_a + "/api/data")
    assert data.status_code == 200 and data.json()["user"] == "alice@example.com"
    records = client.get(stack.api_b + "/api/records")
    assert records.status_code == 200 and records.json()["source"] == "ServerB"
