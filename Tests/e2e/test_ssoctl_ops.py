"""ssoctl doctor and stats against the running stack: a healthy stack passes
every check (nginx -t on the rendered config included); a private key made
readable by others fails it; stats sees a real sign-in."""
import re
import json
import os

from oidc_flow import App


def findings(result):
    """`ok|warn|fail  CHECK  DETAIL` lines as (status, check, detail)."""
    parsed = []
    for line in result.stdout.splitlines():
        status, check, detail = line.split("  ", 2)
        assert status in ("ok", "warn", "fail"), line
        parsed.append((status, check, detail))
    return parsed


def active_kid(stack, alg="RS256"):
    listing = stack.ssoctl("keys", "list")
    assert listing.returncode == 0, listing.stderr
    return next(line.split()[0] for line in listing.stdout.splitlines()[1:] if line.split()[1] == "active" and line.split()[-1] == alg)


def test_doctor_passes_on_the_running_stack(stack):
    result = stack.ssoctl("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"ok  nginx.config  nginx -t accepts {stack.home}/nginx/nginx.conf" in lines
    assert any(re.fullmatch(r"ok  database\.schema  issuer schema version \d+, up to date", line) for line in lines), lines
    kid = active_kid(stack)
    if stack.database_url:
        # The test cluster is initialised with page checksums; its one server is the primary.
        assert "ok  database.integrity  data checksums on (PostgreSQL verifies pages as it reads them)" in lines
        assert "ok  database.role  primary (accepts writes)" in lines
        assert "ok  keys.private-key  sealed in the database, RSA-2048, matches its kid" in lines
        assert not os.path.exists(os.path.join(stack.home, "keys", kid + ".pem")), "no private key file with PostgreSQL"
    else:
        assert "ok  database.integrity  PRAGMA integrity_check: ok" in lines
        assert "ok  database.journal  WAL" in lines
        key = os.path.join(stack.home, "keys", kid + ".pem")
        assert f"ok  keys.private-key  {key}, mode 0600, RSA-2048, matches its kid" in lines
    by_check = {check: (status, detail) for status, check, detail in findings(result)}
    checks = ("config", "database.open", "keys.active", "keys.age", "keys.files", "files.home", "files.keys-dir")
    for check in checks + (() if stack.database_url else ("files.database",)):
        assert by_check[check][0] == "ok", (check, by_check[check])
    # The certificate nginx serves and the local CA, both found without options.
    certificates = [(status, detail) for status, check, detail in findings(result) if check == "tls.certificate"]
    assert [detail.split(":")[0] for _, detail in certificates] == [f"{stack.home}/tls/server.pem", f"{stack.home}/tls/ca.pem"]
    assert all(status == "ok" for status, _ in certificates), certificates
    assert not [line for line in lines if line.startswith("fail")]


def test_doctor_json(stack):
    result = stack.ssoctl("doctor", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    checks = {entry["check"]: entry for entry in report["checks"]}
    detail = ("data checksums on (PostgreSQL verifies pages as it reads them)" if stack.database_url
              else "PRAGMA integrity_check: ok")
    assert checks["database.integrity"] == {"status": "ok", "check": "database.integrity", "detail": detail}
    assert set(entry["status"] for entry in report["checks"]) <= {"ok", "warn"}


def test_doctor_fails_when_a_key_file_is_readable_by_others(stack):
    """The active private key file with SQLite; the master key, which seals
    every private key, with PostgreSQL."""
    name = "master.key" if stack.database_url else active_kid(stack) + ".pem"
    key = os.path.join(stack.home, "keys", name)
    mode = os.stat(key).st_mode & 0o7777
    try:
        os.chmod(key, 0o644)
        result = stack.ssoctl("doctor")
        assert result.returncode == 1, result.stdout + result.stderr
        lines = result.stdout.splitlines()
        if not stack.database_url:
            assert (f"fail  keys.private-key  {key} is mode 0644 (group-readable, other-readable): "
                    "a private key must be its owner's alone; chmod 600 it") in lines
        assert any(line.startswith("fail  keys.files  ") and name + " (0644)" in line for line in lines), lines
        assert json.loads(stack.ssoctl("doctor", "--json").stdout)["ok"] is False
    finally:
        os.chmod(key, mode)
    assert stack.ssoctl("doctor").returncode == 0


def test_doctor_fails_on_a_certificate_that_is_not_one(stack, tmp_path):
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n")
    result = stack.ssoctl("doctor", "--certificate", str(bogus), "--certificate", f"{stack.home}/tls/ca.pem")
    assert result.returncode == 1
    certificates = [(status, detail) for status, check, detail in findings(result) if check == "tls.certificate"]
    assert [status for status, _ in certificates] == ["fail", "ok"], certificates


def test_stats_after_a_real_sign_in(stack, http):
    app = App(stack, http)
    tokens = app.exchange(app.sign_in()).json()
    assert "refresh_token" in tokens, tokens
    result = stack.ssoctl("stats", "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["live_sso_sessions"] >= 1
    assert stats["refresh_tokens"]["live"] >= 1
    assert stats["refresh_tokens"]["stored"] >= stats["refresh_tokens"]["live"]
    assert stats["users"]["total"] >= 1
    assert stats["clients"]["total"] >= 2
    # One active key per algorithm in use (RS256; ES256 and EdDSA once another test made them).
    algorithms = {key["alg"] for key in json.loads(stack.ssoctl("keys", "list", "--json").stdout) if key["state"] == "active"}
    assert "RS256" in algorithms and stats["signing_keys"]["active"] == len(algorithms)
    assert stats["database_bytes"] > 0
    text = stack.ssoctl("stats")
    assert text.returncode == 0, text.stderr
    rows = dict(line.split("  ", 1) for line in text.stdout.splitlines())
    assert int(rows["live SSO sessions"].strip()) >= 1
    assert int(rows["live refresh tokens"].strip().split()[0]) >= 1
