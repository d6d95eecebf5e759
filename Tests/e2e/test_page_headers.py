"""Anti-framing and no-CORS on every HTML page Gatehouse serves, static or
generated (RFC 6819 §4.4.1.9 clickjacking; RFC 9700 §4.16 and §2.6: the
authorization endpoint is not to be called cross-origin, so no CORS headers).
Each page is fetched as a browser would reach it."""
import pytest

from oidc_flow import App


def pages(stack, http):
    app = App(stack, http)
    login_page = app.authorize().headers["Location"]  # /login.html?client_id=...&req=...
    return {
        "login page": stack.issuer + login_page,
        "authorize error page (unknown client)": stack.issuer + "/authorize?client_id=nobody&response_type=code",
        "logout confirmation page (no hint)": stack.issuer + "/logout",
        "logout error page (bad redirect)": stack.issuer + "/logout?post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F",
        "post-login interstitial page": stack.issuer + "/mobile/postlogin.html?code=c&state=s",
        "post-logout page": stack.issuer + "/mobile/postlogout.html?state=s",
        "app-links callback page": stack.app_links + "/callback.html",
        "login page (one-time code step)": stack.issuer + "/login-otp.html",
    }


@pytest.mark.parametrize("name", ["login page", "authorize error page (unknown client)", "logout confirmation page (no hint)",
                                  "logout error page (bad redirect)", "post-login interstitial page", "post-logout page",
                                  "app-links callback page", "login page (one-time code step)"])
def test_every_html_page_refuses_framing_and_sends_no_cors(stack, http, name):
    url = pages(stack, http)[name]
    response = http.get(url, allow_redirects=False, headers={"Origin": "https://evil.example"})
    assert response.status_code in (200, 400), (url, response.status_code)
    assert response.headers["Content-Type"].startswith("text/html"), response.headers
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert not [header for header in response.headers if header.lower().startswith("access-control-")], response.headers


@pytest.mark.parametrize("path", ["/authorize?client_id=mobile-app-001", "/token", "/.well-known/openid-configuration"])
def test_protocol_endpoints_answer_cross_origin_requests_without_cors(stack, http, path):
    response = http.options(stack.issuer + path, headers={"Origin": "https://evil.example",
                                                          "Access-Control-Request-Method": "POST"})
    assert response.status_code < 500
    assert not [header for header in response.headers if header.lower().startswith("access-control-")], response.headers
