"""What nginx serves from www/, in both layouts: dotfiles (.git, .env, ...)
and editor backups (name~, .swp, .bak, #name#) answer 404 on the issuer and
the app-links host, /.well-known/ still works, and the app-links fallback
pages, whose URL holds a code or a state, are never stored (no-store).

The development stack (the session's Scripts/run) serves the checkout's
www/: the files are planted there under unique names and removed after.
The production config (deploy/nginx) runs in a real nginx inside a private
network namespace (`unshare -n`, so it may listen on 443), serving a copy of
www/ with the same files planted."""
import os
import secrets
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from test_deploy_files import rewritten_nginx_config

ROOT = Path(__file__).resolve().parents[2]

# Paths under www/ (relative), planted for the test; each must answer 404.
HIDDEN = [".env", ".git/config", ".git/HEAD", "mobile/.htpasswd", "login.html~", "login.html.swp", ".login.html.swp",
          "login.html.bak", "LOGIN.HTML.BAK", "mobile/postlogin.html.orig", "#login.html#"]
# And on the app-links host (under www/applinks/).
HIDDEN_APP_LINKS = [".env", ".git/config", "callback.html~", "callback.html.swp", "#callback.html#"]


def planted(tag):
    """Issuer and app-links paths, each with the tag so they are ours alone,
    and one ordinary file per host that must be served (proof that nginx can
    read what was planted, so a 404 is the rule's doing)."""
    def tagged(path):
        folder, _, name = path.rpartition("/")
        if name.startswith("#"):
            name = f"#{tag}-{name[1:]}"
        elif name.startswith("."):
            name = f".{tag}{name}"
        else:
            name = f"{tag}-{name}"
        if folder.startswith("."):
            folder = f".{tag}{folder}"
        return f"{folder}/{name}" if folder else name
    return ([tagged(path) for path in HIDDEN], [tagged(path) for path in HIDDEN_APP_LINKS],
            f"{tag}-visible.txt", f"{tag}-visible.txt")


@contextmanager
def files_in(www, tag):
    issuer, app_links, visible, visible_app_links = planted(tag)
    made = [www / path for path in issuer + [visible]] + [www / "applinks" / path for path in app_links + [visible_app_links]]
    try:
        for path in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("secret=do-not-serve\n")
            path.chmod(0o644)
        yield issuer, app_links, visible, visible_app_links
    finally:
        for path in made:
            path.unlink(missing_ok=True)
        for folder in {path.parent for path in made}:
            if folder.name.startswith(f".{tag}"):
                shutil.rmtree(folder, ignore_errors=True)


def url_path(path):
    return "/" + path.replace("#", "%23")


def assert_static_rules(get, issuer_paths, app_links_paths, visible, visible_app_links):
    """`get(host, path)` returns (status, headers) for host "issuer" or "links"."""
    assert get("issuer", url_path(visible))[0] == 200, "nginx serves an ordinary planted file"
    assert get("links", url_path(visible_app_links))[0] == 200
    for path in issuer_paths:
        assert get("issuer", url_path(path))[0] == 404, path
    for path in app_links_paths:
        assert get("links", url_path(path))[0] == 404, path
    # Encoded dots and slashes are decoded before matching.
    assert get("issuer", url_path(issuer_paths[0]).replace("/.", "/%2e", 1))[0] == 404
    # What must keep working.
    assert get("links", "/.well-known/assetlinks.json")[0] == 200
    assert get("links", "/.well-known/apple-app-site-association")[0] == 200
    assert get("issuer", "/css/gatehouse.css")[0] == 200
    assert get("issuer", "/login.html")[0] == 200
    for page in ("/callback?code=c0de&state=s", "/callback.html?code=c0de", "/logout-callback?state=s"):
        status, headers = get("links", page)
        assert status == 200, page
        assert headers.get("cache-control") == "no-store", (page, headers)
        assert headers.get("x-frame-options") == "DENY", (page, headers)
        assert "frame-ancestors 'none'" in headers.get("content-security-policy", ""), (page, headers)


# ---------------------------------------------------------------- Scripts/run

def test_the_dev_stack_serves_no_dotfiles_or_backups_and_never_stores_the_callback_pages(stack, http):
    hosts = {"issuer": stack.issuer, "links": stack.app_links}

    def get(host, path):
        response = http.get(hosts[host] + path, allow_redirects=False)
        return response.status_code, {name.lower(): value for name, value in response.headers.items()}

    # What nginx serves: www/ as `ssoctl pages` rendered it (no Accept-Language: English).
    with files_in(Path(stack.home) / "pages" / "en", "e2e-" + secrets.token_hex(4)) as found:
        assert_static_rules(get, *found)
    assert get("issuer", "/.well-known/openid-configuration")[0] == 200


# ---------------------------------------------------------------- deploy/nginx

def curl_in_a_private_network(tmp_path, config, requests):
    """Starts nginx with `config` in a network namespace of its own and
    fetches each (host name, path) over HTTPS on its port 443."""
    lines = ["set -e", "ip link set lo up", f"nginx -p {tmp_path} -c {config} -e {tmp_path}/log/error.log",
             f"trap 'kill $(cat {tmp_path}/nginx.pid)' EXIT"]
    for name, path in requests:
        lines.append(f"echo '@@ {name} {path}'")
        lines.append(f"curl -sk --max-time 5 --resolve {name}:443:127.0.0.1 -D - -o /dev/null 'https://{name}{path}'")
    result = subprocess.run(["unshare", "--net", "bash", "-c", "\n".join(lines)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    answers = {}
    for block in result.stdout.split("@@ ")[1:]:
        first, *rest = block.splitlines()
        name, path = first.split(" ", 1)
        status = int(rest[0].split()[1])
        headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in rest[1:] if ":" in line}
        answers[(name, path)] = (status, headers)
    return answers


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nginx"),
                    reason="a private network namespace needs root, unshare and nginx")
def test_the_production_config_serves_no_dotfiles_or_backups_and_never_stores_the_callback_pages(tmp_path):
    config = rewritten_nginx_config(tmp_path)
    # Workers as root: pytest's temporary directory is its owner's alone.
    config.write_text("user root root;\n" + config.read_text())
    # /var/lib/gatehouse/pages/en, rendered by rewritten_nginx_config's `ssoctl pages`.
    www = tmp_path / "home" / "pages" / "en"
    association = tmp_path / "home" / "applinks" / ".well-known"
    association.mkdir(parents=True)
    (association / "assetlinks.json").write_text("[]\n")
    (association / "apple-app-site-association").write_text("{}\n")
    names = {"issuer": "sso.example.com", "links": "links.example.com"}
    with files_in(www, "e2e-" + secrets.token_hex(4)) as found:
        issuer_paths, app_links_paths, visible, visible_app_links = found
        wanted = [(names["issuer"], url_path(path)) for path in issuer_paths + [visible]]
        wanted += [(names["links"], url_path(path)) for path in app_links_paths + [visible_app_links]]
        wanted.append((names["issuer"], url_path(issuer_paths[0]).replace("/.", "/%2e", 1)))
        wanted += [(names["links"], "/.well-known/assetlinks.json"), (names["links"], "/.well-known/apple-app-site-association"),
                   (names["issuer"], "/css/gatehouse.css"), (names["issuer"], "/login.html"),
                   (names["links"], "/callback?code=c0de&state=s"), (names["links"], "/callback.html?code=c0de"),
                   (names["links"], "/logout-callback?state=s")]
        answers = curl_in_a_private_network(tmp_path, config, wanted)
        assert_static_rules(lambda host, path: answers[(names[host], path)], *found)
