"""The issuer's PostgreSQL database, for the tests that look at rows (the
SQLite side is the sqlite3 module, in stack.py). Queries are written once,
with SQLite's `?` placeholders; bytes come back as bytes on both."""
import base64
import hashlib
import hmac
import os
import secrets

import psycopg
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def create_database(server_url):
    """A fresh database on the cluster `server_url` names; its URL."""
    name = "e2e_" + secrets.token_hex(6)
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    base, _, _ = server_url.rpartition("/")
    return f"{base}/{name}"


def _postgres(sql):
    return sql.replace("?", "%s")


def _plain(value):
    return bytes(value) if isinstance(value, memoryview) else value


def query(url, sql, parameters=()):
    with psycopg.connect(url) as connection:
        return [tuple(_plain(value) for value in row) for row in connection.execute(_postgres(sql), parameters).fetchall()]


def rows(url, table):
    """Every row of `table` as a dict, column name to value."""
    with psycopg.connect(url) as connection:
        cursor = connection.execute(f"SELECT * FROM {table}")
        names = [column.name for column in cursor.description]
        return [{name: _plain(value) for name, value in zip(names, row)} for row in cursor.fetchall()]


def execute(url, sql, parameters=()):
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(_postgres(sql), parameters)


def dump(url):
    """Every row of every table, sorted: equal before and after means unchanged."""
    lines = []
    with psycopg.connect(url) as connection:
        tables = [row[0] for row in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")]
        for table in tables:
            rows = connection.execute(f"SELECT * FROM {table}").fetchall()
            lines += sorted(f"{table}: {tuple(_plain(value) for value in row)!r}" for row in rows)
    return "\n".join(lines)


def private_key_pem(stack, kid):
    """The issuer's private signing key `kid`, as the backend keeps it: a
    0600 file beside the SQLite database, or, with PostgreSQL, sealed in the
    database under a key derived from keys/master.key. Opened here with
    Python's own HMAC and AES-GCM: an independent check of the sealing."""
    if not stack.database_url:
        with open(os.path.join(stack.home, "keys", kid + ".pem"), "rb") as handle:
            return handle.read()
    with open(os.path.join(stack.home, "keys", "master.key")) as handle:
        master = base64.urlsafe_b64decode(handle.read().strip() + "==")
    # NIST SP 800-108 counter mode, one HMAC-SHA-256 block.
    label = b"gatehouse signing-key v1"
    key = hmac.new(master, b"\x00\x00\x00\x01" + label + b"\x00" + b"\x00\x00\x01\x00", hashlib.sha256).digest()
    sealed = query(stack.database_url, "SELECT private_sealed FROM signing_keys WHERE kid = ?", (kid,))[0][0]
    return AESGCM(key).decrypt(sealed[:12], sealed[12:], kid.encode())
