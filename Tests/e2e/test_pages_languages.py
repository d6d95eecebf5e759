"""Languages and branding through the real stack (nginx, SSI, the responders).

The pages come from one message catalogue per language (www/locales/*.json),
rendered by `ssoctl pages`; nginx chooses a language from `?lang=` (which the
issuer sets from `ui_locales`) and then `Accept-Language`; the pages the
responders build choose the same way. Expected texts are read from the
catalogues themselves, so a changed translation does not break these tests
but a page in the wrong language does.
"""
import html
import json
import os
import re
import secrets
import subprocess
from pathlib import Path

import pytest

from oidc_flow import App, query
from stack import Stack
from test_account_security import client, fresh_address, new_user

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "www" / "locales"
EN = json.loads((LOCALES / "en.json").read_text())
DE = json.loads((LOCALES / "de.json").read_text())


def text(catalogue, key, brand="Gatehouse"):
    """A catalogue text as it appears in a page: brand filled in, escaped."""
    return html.escape(catalogue[key].replace("{brand}", brand), quote=True)


def page(http, stack, path, language=None, **params):
    headers = {"Accept-Language": language} if language else {}
    return http.get(stack.issuer + path, params=params, headers=headers, allow_redirects=False, timeout=10)


# --- the static pages -------------------------------------------------------------

@pytest.mark.parametrize("header, expected", [
    ("de", "de"),
    ("de-CH, de;q=0.9, en;q=0.5", "de"),
    ("fr-CH, fr;q=0.9, de;q=0.8, en;q=0.7", "de"),  # French has no pages: the next one the browser names
    ("en-GB,en;q=0.9,de;q=0.8", "en"),
    ("fr, ja", "en"),                               # none: the default
    (None, "en"),
    # RFC 9110 §12.4.2: "A weight of 0 means 'not acceptable'".
    ("de;q=0, en", "en"),
    ("de;q=0", "en"),
    ("de-CH;q=0.000, de;Q=0.0, en;q=0.1", "en"),
    ("de;q=0.001", "de"),
    ("en;q=0", "de"),                               # the default refused: the language that is not
    ("fr, en;q=0.00", "de"),
])
def test_nginx_picks_the_login_page_language_from_accept_language(stack, http, header, expected):
    response = page(http, stack, "/login.html", header, req="x")
    assert response.status_code == 200
    catalogue = DE if expected == "de" else EN
    assert f'<html lang="{expected}">' in response.text
    assert f"<h1>{text(catalogue, 'login.title')}</h1>" in response.text
    assert text(catalogue, "login.footer") in response.text
    assert response.headers["Content-Language"] == expected
    assert "Accept-Language" in response.headers["Vary"]
    # The form posts the page's language back, so /login answers in it.
    assert f'<input type="hidden" name="lang" value="{expected}">' in response.text


def test_lang_in_the_query_wins_over_accept_language_and_an_unknown_one_is_ignored(stack, http):
    assert '<html lang="de">' in page(http, stack, "/login.html", "en", req="x", lang="de").text
    assert '<html lang="en">' in page(http, stack, "/login.html", "en", req="x", lang="xx").text
    assert '<html lang="de">' in page(http, stack, "/login.html", "de", req="x", lang="../en").text
    # Never a path: whatever ?lang= says, nginx serves one of its folders.
    assert page(http, stack, "/login.html", None, req="x", lang="../../etc").status_code == 200


def test_every_page_of_every_language_is_complete(stack, http):
    """No template placeholder and no catalogue key reaches a page."""
    pages = ["/login.html?req=x&error=too_many_attempts&retry_minutes=5", "/login.html?req=x&error=invalid_credentials",
             "/login-otp.html?req=x&error=invalid_code", "/mobile/postlogin.html?code=c&state=s",
             "/mobile/postlogin.html?error=access_denied", "/mobile/postlogout.html?state=s", "/"]
    keys = set(EN) - {"brand.name", "brand.logo"}
    for language, catalogue in (("en", EN), ("de", DE)):
        for path in pages:
            body = http.get(stack.issuer + path, headers={"Accept-Language": language}, timeout=10).text
            assert f'<html lang="{language}">' in body, path
            assert "{{" not in body and "}}" not in body, (language, path)
            leaked = [key for key in keys if re.search(r"[>\s]" + re.escape(key) + r"[<\s]", body)]
            assert not leaked, (language, path, leaked)
        retry = http.get(stack.issuer + pages[0], headers={"Accept-Language": language}, timeout=10).text
        expected = catalogue["login.too_many_attempts"].replace("{when}", catalogue["login.retry_in_minutes"].replace("{minutes}", "5"))
        assert html.escape(expected, quote=True) in retry


def test_the_404_page_is_styled_translated_and_keeps_its_status(stack, http):
    for language, catalogue in (("en", EN), ("de", DE)):
        response = page(http, stack, "/no-such-page", language)
        assert response.status_code == 404
        assert f'<html lang="{language}">' in response.text
        assert f"<h1>{text(catalogue, 'error404.title')}</h1>" in response.text
        assert '<link rel="stylesheet" href="/css/gatehouse.css">' in response.text
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    # Still the JSON 404 on the API hosts: only the issuer's pages are pages.
    assert http.get(stack.api_a + "/no-such-page", timeout=10).json() == {"error": "not_found"}


def test_the_app_links_host_answers_an_unknown_path_with_its_own_404_page(stack, http):
    """Not nginx's default page: the branded one, in the browser's language,
    under the host's CSP (its own style sheet, nothing else)."""
    for language, catalogue in (("en", EN), ("de", DE)):
        response = http.get(stack.app_links + "/no/such/page", headers={"Accept-Language": language}, timeout=10)
        assert response.status_code == 404
        assert "<center>nginx</center>" not in response.text
        assert f'<html lang="{language}">' in response.text
        assert f"<h1>{text(catalogue, 'error404.title')}</h1>" in response.text
        assert f"<title>{text(catalogue, 'error404.title')} · Gatehouse</title>" in response.text
        assert '<link rel="stylesheet" href="/css/applinks.css">' in response.text
        assert response.headers["Content-Security-Policy"].startswith("default-src 'none'; style-src 'self'")
        assert response.headers["Content-Language"] == language and response.headers["Cache-Control"] == "no-store"
        assert response.headers["X-Frame-Options"] == "DENY"
    # The page itself is only nginx's to serve.
    assert http.get(stack.app_links + "/errors/404.html", timeout=10).status_code == 404
    assert http.get(stack.app_links + "/errors/404", timeout=10).status_code == 404
    assert http.get(stack.app_links + "/callback", timeout=10).status_code == 200


def test_the_app_links_fallback_pages_follow_the_browser_language(stack, http):
    response = http.get(stack.app_links + "/callback?code=x", headers={"Accept-Language": "de"}, timeout=10)
    assert response.status_code == 200
    assert f"<h1>{text(DE, 'applinks.callback_heading')}</h1>" in response.text


# --- the issuer's choice: ui_locales, then Accept-Language -------------------------

def test_ui_locales_sends_the_login_page_language_and_the_form_keeps_it(stack):
    http = client(stack, fresh_address())  # failed sign-ins count per address too
    app = App(stack, http)
    first = app.authorize(ui_locales="fr-CA de-AT en", login_hint=None)
    assert first.status_code == 303
    location = first.headers["Location"]
    assert location.startswith("/login.html?client_id=")
    assert query(location)["lang"] == "de"
    login_page = http.get(stack.issuer + location, headers={"Accept-Language": "en"}, timeout=10)
    assert '<html lang="de">' in login_page.text
    # A wrong password from the German page: the error page is German too.
    # (A user of its own: wrong passwords count towards the account's lock.)
    email, _, _ = new_user(stack)
    wrong = http.post(stack.issuer + "/login", allow_redirects=False, timeout=10,
                      data={"req": query(location)["req"], "lang": "de", "email": email, "password": "wrong"})
    assert wrong.status_code == 303
    assert query(wrong.headers["Location"])["lang"] == "de"
    assert query(wrong.headers["Location"])["error"] == "invalid_credentials"
    again = http.get(stack.issuer + wrong.headers["Location"], headers={"Accept-Language": "en"}, timeout=10)
    assert text(DE, "login.wrong_credentials") in again.text


def test_without_ui_locales_the_issuer_adds_no_lang_and_nginx_reads_the_browser(stack, http):
    app = App(stack, http)
    first = app.authorize(login_hint=None)
    assert "lang" not in query(first.headers["Location"])
    assert '<html lang="de">' in http.get(stack.issuer + first.headers["Location"], headers={"Accept-Language": "de"}).text


def test_a_lang_field_that_names_no_language_is_ignored(stack):
    http = client(stack, fresh_address())
    app = App(stack, http)
    first = app.authorize(login_hint=None)
    email, _, _ = new_user(stack)
    for bogus in ("xx", "<script>", "de\u0000", "../de"):
        wrong = http.post(stack.issuer + "/login", allow_redirects=False, timeout=10,
                          data={"req": query(first.headers["Location"])["req"], "lang": bogus, "email": email,
                                "password": "wrong"})
        assert wrong.status_code in (303, 400), wrong.text
        if wrong.status_code == 303:
            assert "lang" not in query(wrong.headers["Location"])


def test_an_authorize_error_page_is_in_the_requested_language(stack, http):
    response = http.get(stack.issuer + "/authorize", params={"client_id": "no-such-client", "ui_locales": "de"},
                        headers={"Accept-Language": "en"}, timeout=10)
    assert response.status_code == 400
    assert '<html lang="de">' in response.text
    assert response.headers.get("Content-Language") == "de"
    english = http.get(stack.issuer + "/authorize", params={"client_id": "no-such-client"}, timeout=10)
    assert '<html lang="en">' in english.text


def test_the_logout_page_follows_ui_locales_then_accept_language(stack, http):
    german = http.get(stack.issuer + "/logout", headers={"Accept-Language": "de"}, timeout=10)
    assert german.status_code == 200
    assert '<html lang="de">' in german.text
    by_parameter = http.get(stack.issuer + "/logout", params={"ui_locales": "de"}, headers={"Accept-Language": "en"}, timeout=10)
    assert '<html lang="de">' in by_parameter.text


@pytest.mark.parametrize("header, expected", [("de;q=0, en", "en"), ("en;q=0", "de"), ("de;q=0", "en")])
def test_a_page_the_issuer_builds_honours_a_zero_weight_as_nginx_does(stack, http, header, expected):
    built = http.get(stack.issuer + "/logout", headers={"Accept-Language": header}, timeout=10)
    assert f'<html lang="{expected}">' in built.text and built.headers["Content-Language"] == expected
    static = page(http, stack, "/login.html", header, req="x")
    assert static.headers["Content-Language"] == expected


def test_the_account_page_follows_accept_language(stack, http):
    german = http.get(stack.issuer + "/account", headers={"Accept-Language": "de-DE,de;q=0.9"}, timeout=10)
    assert german.status_code == 200
    assert '<html lang="de">' in german.text
    assert german.headers.get("Content-Language") == "de"
    english = http.get(stack.issuer + "/account", headers={"Accept-Language": "en"}, timeout=10)
    assert '<html lang="en">' in english.text


# --- branding ------------------------------------------------------------------------

LOGO = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" fill="#0f766e"/></svg>\n'


@pytest.fixture(scope="module")
def branded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("brand")
    logo = folder / "acme.svg"
    logo.write_bytes(LOGO)
    locales = folder / "locales"
    locales.mkdir()
    # The deployment's own text for one key, over the shipped catalogue.
    (locales / "en.json").write_text(json.dumps({"login.footer": "Acme staff only."}))
    running = Stack(extra_env={"GATEHOUSE_BRAND_NAME": "Acme ID", "GATEHOUSE_BRAND_LOGO": str(logo),
                               "GATEHOUSE_BRAND_COLOR": "#0f766e", "GATEHOUSE_LOCALES_DIR": str(locales)}).start()
    yield running
    running.remove()


def test_the_brand_settings_reach_every_page_without_a_code_change(branded):
    http = branded.session()
    login = http.get(branded.issuer + "/login.html?req=x", timeout=10).text
    assert "<title>" + text(EN, "login.title") + " · Acme ID</title>" in login
    assert '<span>Acme ID</span>' in login and "Gatehouse" not in re.sub(r"<!--.*?-->", "", login, flags=re.S)
    assert '<img src="/img/brand-logo.svg"' in login
    assert text(EN, "login.lead", brand="Acme ID") in login
    assert "Acme staff only." in login
    german = http.get(branded.issuer + "/login.html?req=x", headers={"Accept-Language": "de"}, timeout=10).text
    assert text(DE, "login.footer") in german  # the override was English only
    logo = http.get(branded.issuer + "/img/brand-logo.svg", timeout=10)
    assert logo.status_code == 200 and logo.content == LOGO
    css = http.get(branded.issuer + "/css/gatehouse.css", timeout=10).text
    assert "--accent: #0f766e;" in css
    # The pages the responders build carry the brand too.
    for path in ("/account", "/logout", "/authorize?client_id=nobody"):
        built = http.get(branded.issuer + path, timeout=10).text
        assert "<span>Acme ID</span>" in built, path
        assert "Gatehouse" not in built, path
    assert "<span>Acme ID</span>" in http.get(branded.issuer + "/nothing-here", timeout=10).text


def test_a_colour_nobody_could_read_is_refused_with_the_reason(tmp_path):
    result = subprocess.run([os.path.join(os.environ["BIN_DIR"], "ssoctl"), "pages", "--source", str(ROOT / "www")],
                            env={**os.environ, "GATEHOUSE_HOME": str(tmp_path), "GATEHOUSE_BRAND_COLOR": "#ffff66",
                                 "GATEHOUSE_AUDIT_LOG": str(tmp_path / "audit.log")},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "GATEHOUSE_BRAND_COLOR #ffff66 has a contrast of" in result.stderr
    assert not (tmp_path / "pages").exists()


def test_a_deployment_adds_a_language_with_one_file(tmp_path):
    locales = tmp_path / "locales"
    locales.mkdir()
    (locales / "fr.json").write_text(json.dumps({"login.title": "Connexion"}))
    result = subprocess.run([os.path.join(os.environ["BIN_DIR"], "ssoctl"), "pages", "--source", str(ROOT / "www")],
                            env={**os.environ, "GATEHOUSE_HOME": str(tmp_path), "GATEHOUSE_LOCALES_DIR": str(locales),
                                 "GATEHOUSE_AUDIT_LOG": str(tmp_path / "audit.log")},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    french = (tmp_path / "pages" / "fr" / "login.html").read_text()
    assert '<html lang="fr">' in french and "<h1>Connexion</h1>" in french
    # What French lacks shows in the default language, never as a key.
    assert text(EN, "login.footer") in french
    assert "fr fr;" in (tmp_path / "pages" / "languages.conf").read_text()
    assert json.loads((tmp_path / "pages" / "messages" / "fr.json").read_text())["login.title"] == "Connexion"
