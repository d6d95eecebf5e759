"""The mobile app's side of the flow, as plain HTTP with a cookie jar (no JavaScript)."""
import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

from stack import DEMO_PASSWORD

SCOPE = "openid profile email offline_access api:serverA api:serverB"


def pkce_pair():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def query(location):
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query, keep_blank_values=True).items()}


class App:
    """One app on one device: a browser cookie jar plus PKCE, state and nonce."""

    def __init__(self, stack, http, client_id="mobile-app-001", redirect_uri="myapp:auth/callback", scope=SCOPE):
        self.stack, self.http = stack, http
        self.client_id, self.redirect_uri, self.scope = client_id, redirect_uri, scope
        self.verifier, self.challenge = pkce_pair()
        self.state, self.nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)

    def authorize_url(self, **extra):
        parameters = {"client_id": self.client_id, "redirect_uri": self.redirect_uri, "response_type": "code",
                      "scope": self.scope, "state": self.state, "nonce": self.nonce,
                      "code_challenge": self.challenge, "code_challenge_method": "S256", **extra}
        return self.stack.issuer + "/authorize?" + urlencode({k: v for k, v in parameters.items() if v is not None})

    def authorize(self, **extra):
        return self.http.get(self.authorize_url(**extra), allow_redirects=False)

    def login(self, login_page_location, email="alice@example.com", password=DEMO_PASSWORD):
        req = query(login_page_location)["req"]
        return self.http.post(self.stack.issuer + "/login", data={"req": req, "email": email, "password": password},
                              allow_redirects=False)

    def sign_in(self, **extra):
        """authorize → login page → POST /login → the code from the redirect."""
        first = self.authorize(**extra)
        assert first.status_code == 303, first.text
        assert first.headers["Location"].startswith("/login.html?client_id=")
        second = self.login(first.headers["Location"])
        assert second.status_code == 303, second.text
        return self.code_from(second)

    def code_from(self, response):
        location = response.headers["Location"]
        assert location.startswith(self.redirect_uri.split("?")[0]), location
        parameters = query(location)
        assert parameters["state"] == self.state
        assert parameters["iss"] == self.stack.issuer
        return parameters["code"]

    def exchange(self, code, verifier=None, **overrides):
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
                "client_id": self.client_id, "code_verifier": verifier or self.verifier, **overrides}
        return self.http.post(self.stack.issuer + "/token", data={k: v for k, v in form.items() if v is not None})
