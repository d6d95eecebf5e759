#!/usr/bin/env python3
"""Gatehouse's admin API from Python (docs/ADMIN-API.md), with requests only:
an access token for an admin client (client_credentials), then a
confidential machine client for a backend and an invited user, each printed
as it was made. The client's secret is shown once, here; the user chooses a
password from the invitation mail.

    python3 docs/examples/admin_api.py ISSUER CLIENT_ID CLIENT_SECRET CA_FILE

CLIENT_ID is a client granted gatehouse:admin (`ssoctl client add
provisioning --grant client_credentials --scope gatehouse:admin
--secret-stdin`); CA_FILE the CA that signed the issuer's certificate
(var/tls/ca.pem on a development machine). The names get a random suffix,
so the script can run again. api:serverA is the demo's API: name one of
yours.
"""
import secrets
import sys

import requests


def call(http, method, url, body, ca_file):
    """One admin API call; a refusal (a problem document) ends the script."""
    # verify on each request: a Session's own verify loses to REQUESTS_CA_BUNDLE.
    response = http.request(method, url, json=body, verify=ca_file, timeout=30)
    if response.status_code >= 400:
        problem = response.json() if response.headers.get("Content-Type", "").startswith("application/problem+json") else {}
        sys.exit(f"{method} {url}: {response.status_code} {problem.get('detail', response.text)}")
    return response.json()


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: admin_api.py ISSUER CLIENT_ID CLIENT_SECRET CA_FILE")
    issuer, client_id, client_secret, ca_file = sys.argv[1:]
    issuer = issuer.rstrip("/")
    http = requests.Session()

    # 1. An access token for the admin API.
    answer = http.post(issuer + "/token", data={"grant_type": "client_credentials", "scope": "gatehouse:admin"},
                       auth=(client_id, client_secret), verify=ca_file, timeout=30)
    if answer.status_code != 200:
        sys.exit(f"POST {issuer}/token: {answer.status_code} {answer.text}")
    http.headers["Authorization"] = "Bearer " + answer.json()["access_token"]
    suffix = secrets.token_hex(3)

    # 2. A confidential machine client; Gatehouse makes its secret and shows it once.
    client = call(http, "POST", issuer + "/admin/v1/clients", {
        "client_id": f"reports-{suffix}", "name": "Nightly reports", "grant_types": ["client_credentials"],
        "scopes": ["api:serverA"], "token_endpoint_auth_method": "client_secret_basic"}, ca_file)
    print(f"created client {client['client_id']} ({client['type']}, scopes {' '.join(client['scopes'])}); "
          f"its secret, shown once: {client['client_secret']}")

    # 3. A user, invited: the mail carries a link to choose a password.
    user = call(http, "POST", issuer + "/admin/v1/users", {
        "email": f"grace-{suffix}@example.com", "name": "Grace Hopper", "invite": True, "roles": ["user", "reports"]}, ca_file)
    print(f"created user {user['email']} (id {user['id']}, roles {','.join(user['roles'])}); the invitation mail is queued")


if __name__ == "__main__":
    main()
