#!/usr/bin/env python3
"""What a person's sign-in through the company's OpenID Connect provider costs the server.

Usage: sign_in.py BIN

A release server on a fresh SQLite database pinned to CPU 0, configured with a provider
this process plays on CPU 1 (discovery, keys, and a token endpoint answering an RS256 ID
token for the sign-in's nonce, signed with an RSA key openssl makes for the run);
one workspace whose owner's invitation the first sign-in claims. Then BENCH_SIGN_INS
(100) whole sign-ins of that person from a registered client, one connection, no session
kept between them:
  GET /authorize (→ the provider, a sign-in row and its cookie),
  GET /oauth/callback (the code's exchange at the provider, the ID token verified, the
      person found by issuer and subject, the session cookie),
  GET /authorize?request=… (the consent page), POST /authorize (the code),
  POST /token (the tokens).
CPU per sign-in is the server process's utime + stime (/proc/PID/stat) over the run
divided by the sign-ins; the provider's own work is not in it. Prints a Markdown table.
Loopback only; everything it starts stops by itself.
"""
import base64
import hashlib
import http.server
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import env, free_port, leaf_pid, spawn, stop, wait_port  # noqa: E402
# benches/token.py, by its path: `token` is also a module of Python's own.
_spec = importlib.util.spec_from_file_location("token_bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "token.py"))
token_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(token_bench)
CALLBACK, Client, exchange_pairs = token_bench.CALLBACK, token_bench.Client, token_bench.exchange_pairs
field, measure, pkce = token_bench.field, token_bench.measure, token_bench.pkce

OWNER_EMAIL = "dona@bench.example"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rsa_numbers(pem):
    """(n, e, d) of an RSA private key, as openssl prints them."""
    text = subprocess.run(["openssl", "rsa", "-in", pem, "-noout", "-text"], capture_output=True, text=True,
                          check=True).stdout
    numbers, name = {}, None
    for line in text.splitlines():
        if not line.startswith(" "):
            name = line.split(":")[0].strip()
            if name == "publicExponent":
                numbers["e"] = int(line.split()[1])
            continue
        numbers[name] = numbers.get(name, "") + line.strip().replace(":", "")
    return int(numbers["modulus"], 16), numbers["e"], int(numbers["privateExponent"], 16)


class Signer:
    """RS256 (RSASSA-PKCS1-v1_5 with SHA-256) with the test key."""

    SHA256_INFO = bytes.fromhex("3031300d060960864801650304020105000420")

    def __init__(self, pem):
        self.n, self.e, self.d = rsa_numbers(pem)
        self.size = (self.n.bit_length() + 7) // 8

    def jwk(self):
        def number(value):
            return b64(value.to_bytes((value.bit_length() + 7) // 8, "big"))

        return {"kty": "RSA", "kid": "bench", "alg": "RS256", "use": "sig", "n": number(self.n), "e": number(self.e)}

    def sign(self, claims):
        header = b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "bench"}).encode())
        body = b64(json.dumps(claims).encode())
        signed = f"{header}.{body}".encode()
        info = self.SHA256_INFO + hashlib.sha256(signed).digest()
        padded = b"\x00\x01" + b"\xff" * (self.size - len(info) - 3) + b"\x00" + info
        signature = pow(int.from_bytes(padded, "big"), self.d, self.n).to_bytes(self.size, "big")
        return f"{header}.{body}.{b64(signature)}"


class Provider:
    """The company's provider: discovery, keys and the code's exchange."""

    def __init__(self, signer, client_id):
        self.signer, self.client_id, self.nonces = signer, client_id, {}
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def answer(self, value):
                body = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path == "/.well-known/openid-configuration":
                    self.answer({"issuer": provider.issuer, "authorization_endpoint": f"{provider.issuer}/authorize",
                                 "token_endpoint": f"{provider.issuer}/token", "jwks_uri": f"{provider.issuer}/jwks",
                                 "response_types_supported": ["code"], "subject_types_supported": ["public"],
                                 "id_token_signing_alg_values_supported": ["RS256"],
                                 "token_endpoint_auth_methods_supported": ["client_secret_basic"]})
                else:
                    self.answer({"keys": [provider.signer.jwk()]})

            def do_POST(self):
                form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                now = int(time.time())
                claims = {"iss": provider.issuer, "sub": "person-1", "aud": provider.client_id, "iat": now,
                          "exp": now + 300, "nonce": provider.nonces.pop(form["code"][0]), "email": OWNER_EMAIL,
                          "email_verified": True, "name": "Dona Bench"}
                self.answer({"access_token": "provider-access", "token_type": "Bearer", "expires_in": 300,
                             "id_token": provider.signer.sign(claims)})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def cookie_of(headers, name):
    for key, value in headers:
        if key.lower() == "set-cookie" and value.startswith(f"{name}="):
            return value.split(";")[0]
    raise AssertionError(f"no {name} cookie in {headers}")


def main():
    binary = sys.argv[1]
    sign_ins = int(env("BENCH_SIGN_INS", "100"))
    os.sched_setaffinity(0, {1})
    work = tempfile.mkdtemp(prefix="kfin-sign-in-bench-")
    procs = []
    try:
        key = os.path.join(work, "provider-key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        provider = Provider(Signer(key), "kfin-bench")
        secret_file = os.path.join(work, "client-secret")
        open(secret_file, "w").write("bench-client-secret")
        port = free_port()
        database = f"sqlite:{work}/kobana-finance.db"
        server_env = {"KFIN_DATA_DIR": work, "KFIN_PUBLIC_URL": f"http://127.0.0.1:{port}", "KFIN_LOG": "off",
                      "KFIN_JWT_SECRET": "bench-secret-not-for-production",
                      "KFIN_RATE_LIMIT_READS": "1000000000", "KFIN_RATE_LIMIT_WRITES": "1000000000",
                      "KFIN_OIDC_ISSUER": provider.issuer, "KFIN_OIDC_CLIENT_ID": "kfin-bench",
                      "KFIN_OIDC_CLIENT_SECRET_FILE": secret_file}
        for name in ("KFIN_DATABASE_URL", "KFIN_SECRET_ID"):
            os.environ.pop(name, None)
        subprocess.run([binary, "workspace", "create", "--name", "Bench", "--owner-email", OWNER_EMAIL,
                        "--database-url", database], env=dict(os.environ, **server_env), check=True,
                       stdout=subprocess.DEVNULL)
        server = spawn([binary, "serve", "--addr", f"127.0.0.1:{port}"], server_env)
        procs.append(server)
        wait_port(port, server, "server")
        pid = leaf_pid(server)
        client = Client(port)
        status, _, body = client.request("POST", "/register", json.dumps({"redirect_uris": [CALLBACK]}),
                                         {"Content-Type": "application/json"})
        assert status == 201, body
        client_id = json.loads(body)["client_id"]
        resource = f"http://127.0.0.1:{port}/mcp"

        def sign_in(number):
            verifier, challenge = pkce()
            path = "/authorize?" + urllib.parse.urlencode({
                "response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "s",
                "code_challenge": challenge, "code_challenge_method": "S256", "resource": resource})
            status, headers, _ = client.request("GET", path)
            assert status in (302, 303), status
            to = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["location"]).query)
            code = f"code-{number}"
            provider.nonces[code] = to["nonce"][0]
            client.conn.request("GET", "/oauth/callback?" + urllib.parse.urlencode({"code": code, "state": to["state"][0]}),
                                headers={"Cookie": headers["set-cookie"].split(";")[0]})
            response = client.conn.getresponse()
            response.read()
            assert response.status in (302, 303), response.status
            session = cookie_of(response.getheaders(), "kfin_session")
            status, _, page = client.request("GET", response.getheader("location"), headers={"Cookie": session})
            assert status == 200, page[:300]
            page = page.decode()
            status, headers, _ = client.form("/authorize", [("request", field(page, "request")),
                                                            ("csrf", field(page, "csrf")), ("decision", "approve")],
                                             session)
            assert status == 302, status
            code_value = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["location"]).query)["code"][0]
            status, _, body = client.form("/token", exchange_pairs(port, client_id, verifier, code_value))
            assert status == 200, body

        sign_in(0)  # the first: discovery and keys fetched, the invitation claimed

        def run():
            for number in range(1, sign_ins + 1):
                sign_in(number)
            return sign_ins

        cpu, rate = measure(pid, run)
        print()
        print(f"| a sign-in through the company's provider ({sign_ins}, one connection, SQLite) | server CPU per sign-in µs | sign-ins/s |")
        print("|---|---|---|")
        print(f"| /authorize → provider → /oauth/callback (code exchange, ID token RS256 verified) → consent → approval → /token (5 requests) | {cpu:,.0f} | {rate:,.0f} |")
    finally:
        stop(procs)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
