"""Scripts/bench --scale: fills the stack's database the way a large
deployment looks (100k users, 1M live refresh tokens, 1M expired codes),
directly in SQL so the fill takes seconds, not days of sign-ins; SQLite or,
with GATEHOUSE_DATABASE_URL, PostgreSQL."""
import os
import sqlite3
import subprocess
import time

import psycopg

USERS, REFRESH_TOKENS, EXPIRED_CODES = 100_000, 1_000_000, 1_000_000

# A sequence of n integers without a helper table.
SERIES = "WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < ?)"


def fill_database(stack):
    started = time.monotonic()
    now = int(time.time())
    size = (fill_postgresql if stack.database_url else fill_sqlite)(stack, now)
    return {"seconds": time.monotonic() - started,
            "summary": f"+{USERS // 1000}k users, +{REFRESH_TOKENS // 1_000_000}M refresh tokens, "
                       f"+{EXPIRED_CODES // 1_000_000}M expired codes ({size:.0f} MB)"}


def fill_sqlite(stack, now):
    """The fill in one transaction; the database's size in MB."""
    database = sqlite3.connect(os.path.join(stack.home, "gatehouse.sqlite"), timeout=30, isolation_level=None)
    try:
        database.execute("BEGIN IMMEDIATE")
        password_hash = database.execute("SELECT password_hash FROM users LIMIT 1").fetchone()[0]
        database.execute(f"""{SERIES} INSERT INTO users (subject, email, name, password_hash, created_at)
            SELECT lower(hex(randomblob(16))), 'user' || n || '@scale.example', 'User ' || n, ?, ? FROM series""",
                         (USERS, password_hash, now))
        # Live tokens (unexpired, unused) of other users: the rows the refresh grant must not slow down on.
        database.execute(f"""{SERIES} INSERT INTO refresh_tokens
            (token_hash, family_id, client_id, user_id, sid, scope, auth_time, created_at, expires_at)
            SELECT randomblob(32), lower(hex(randomblob(16))), 'mobile-app-001', 1 + n % ?, lower(hex(randomblob(16))),
                   'openid offline_access', ?, ?, ? FROM series""", (REFRESH_TOKENS, USERS, now, now, now + 86_400))
        # Codes that expired unused an hour ago: what the sweeper must remove.
        database.execute(f"""{SERIES} INSERT INTO authorization_codes
            (code_hash, client_id, redirect_uri, code_challenge, scope, sid, user_id, auth_time, created_at, expires_at)
            SELECT randomblob(32), 'mobile-app-001', 'myapp:auth/callback', 'challenge', 'openid', 'sid', 1 + n % ?,
                   ?, ?, ? FROM series""", (EXPIRED_CODES, USERS, now - 3660, now - 3660, now - 3600))
        database.execute("COMMIT")
        return os.path.getsize(os.path.join(stack.home, "gatehouse.sqlite")) / 1e6
    finally:
        database.close()


def fill_postgresql(stack, now):
    """The same rows with generate_series, then ANALYZE (as autovacuum
    would soon), so the planner sees the tables' real sizes."""
    with psycopg.connect(stack.database_url, autocommit=True) as database:
        with database.transaction():
            password_hash = database.execute("SELECT password_hash FROM users LIMIT 1").fetchone()[0]
            database.execute("""INSERT INTO users (subject, email, email_key, name, password_hash, created_at)
                SELECT md5(random()::text || n), 'user' || n || '@scale.example', 'user' || n || '@scale.example',
                       'User ' || n, %s, %s FROM generate_series(1, %s) AS n""", (password_hash, now, USERS))
            database.execute("""INSERT INTO refresh_tokens
                (token_hash, family_id, client_id, user_id, sid, scope, auth_time, created_at, expires_at)
                SELECT sha256(convert_to(n || random()::text, 'UTF8')), md5(random()::text), 'mobile-app-001', 1 + n %% %s,
                       md5(random()::text), 'openid offline_access', %s, %s, %s FROM generate_series(1, %s) AS n""",
                             (USERS, now, now, now + 86_400, REFRESH_TOKENS))
            database.execute("""INSERT INTO authorization_codes
                (code_hash, client_id, redirect_uri, code_challenge, scope, sid, user_id, auth_time, created_at, expires_at)
                SELECT sha256(convert_to('code' || n || random()::text, 'UTF8')), 'mobile-app-001', 'myapp:auth/callback',
                       'challenge', 'openid', 'sid', 1 + n %% %s, %s, %s, %s FROM generate_series(1, %s) AS n""",
                             (USERS, now - 3660, now - 3660, now - 3600, EXPIRED_CODES))
        database.execute("ANALYZE")
        return database.execute("SELECT pg_database_size(current_database())").fetchone()[0] / 1e6


def sweep(stack):
    """One `ssoctl sweep` (batched deletes) while the stack serves; returns its time and what it removed."""
    started = time.monotonic()
    result = subprocess.run([os.path.join(os.environ["BIN_DIR"], "ssoctl"), "sweep"], env=stack.env,
                            capture_output=True, text=True, timeout=900)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        raise RuntimeError("ssoctl sweep failed: " + result.stderr)
    left = stack.query("SELECT count(*) FROM authorization_codes WHERE used_at IS NULL AND expires_at <= ?",
                       int(time.time()))[0][0]
    return {"seconds": elapsed, "summary": f"expired codes left {left}; {result.stdout.strip().splitlines()[-1][:60]}"}
