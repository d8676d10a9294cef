#!/usr/bin/env python3
"""What the authorization server's token endpoint costs, against its ceiling, in one run.

Usage: token.py BIN CEILING_BIN

A release server on a fresh SQLite database (the demo, its generated development
secret: the development login signs people in) pinned to CPU 0, BENCH_TOKEN_CODES (400)
authorization codes prepared for one registered client through the login and consent
forms as a browser posts them, then measured one connection at a time from this process
(pinned to CPU 1):
  * the code exchange: POST /token grant_type=authorization_code with its verifier;
  * the refresh: POST /token grant_type=refresh_token, each with the token the one
    before returned (a rotation each);
  * the whole sign-in of one code (GET /authorize → consent page, POST /authorize → code,
    POST /token), per code, with the session already open.
CPU per request is the server process's utime + stime (/proc/PID/stat) over the run
divided by the requests made. The ceiling (benches/ceiling: bare hyper answering the
product's captured token answer for every request) is loaded with the same requests the
same way; the ratio is the figure that survives a noisy machine. Prints a Markdown table.
Loopback only; everything it starts stops by itself.
"""
import base64
import hashlib
import http.client
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import cpu_seconds, env, free_port, leaf_pid, spawn, stop, wait_port  # noqa: E402

OWNER = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01"
CALLBACK = "http://127.0.0.1:7777/callback"


def field(html, name):
    marker = f'name="{name}" value="'
    start = html.index(marker) + len(marker)
    return html[start:html.index('"', start)]


class Client:
    """One kept-alive connection to the server."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(self, method, path, body=None, headers=None):
        self.conn.request(method, path, body=body, headers=headers or {})
        response = self.conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()

    def form(self, path, pairs, cookie=None):
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if cookie:
            headers["Cookie"] = cookie
        return self.request("POST", path, urllib.parse.urlencode(pairs), headers)


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_path(port, client_id, challenge):
    return "/authorize?" + urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "s",
        "code_challenge": challenge, "code_challenge_method": "S256", "resource": f"http://127.0.0.1:{port}/mcp"})


def code(client, port, client_id, cookie):
    """A code through the consent page, in the open session: (verifier, code)."""
    verifier, challenge = pkce()
    status, _, page = client.request("GET", authorize_path(port, client_id, challenge), headers={"Cookie": cookie})
    assert status == 200, page[:300]
    page = page.decode()
    status, headers, _ = client.form("/authorize", [("request", field(page, "request")), ("csrf", field(page, "csrf")),
                                                    ("decision", "approve")], cookie)
    assert status == 302, status
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["location"]).query)
    return verifier, query["code"][0]


def exchange_pairs(port, client_id, verifier, code_value):
    return [("grant_type", "authorization_code"), ("code", code_value), ("redirect_uri", CALLBACK),
            ("code_verifier", verifier), ("client_id", client_id), ("resource", f"http://127.0.0.1:{port}/mcp")]


def measure(pid, run):
    before, started = cpu_seconds(pid), time.time()
    count = run()
    return (cpu_seconds(pid) - before) / count * 1e6, count / (time.time() - started)


def main():
    binary, ceiling = sys.argv[1:3]
    codes = int(env("BENCH_TOKEN_CODES", "400"))
    os.sched_setaffinity(0, {1})
    work = tempfile.mkdtemp(prefix="kfin-token-bench-")
    procs = []
    try:
        port = free_port()
        server_env = {"KFIN_DATA_DIR": work, "KFIN_PUBLIC_URL": f"http://127.0.0.1:{port}", "KFIN_LOG": "off",
                      "KFIN_RATE_LIMIT_READS": "1000000000", "KFIN_RATE_LIMIT_WRITES": "1000000000"}
        for name in ("KFIN_JWT_SECRET", "KFIN_DATABASE_URL", "KFIN_SECRET_ID"):
            os.environ.pop(name, None)
        server = spawn([binary, "serve", "--addr", f"127.0.0.1:{port}"], server_env)
        procs.append(server)
        wait_port(port, server, "server")
        pid = leaf_pid(server)
        client = Client(port)
        status, _, body = client.request("POST", "/register", json.dumps({"redirect_uris": [CALLBACK]}),
                                         {"Content-Type": "application/json"})
        assert status == 201, body
        client_id = json.loads(body)["client_id"]
        # Sign in once, through the development login.
        _, challenge = pkce()
        status, _, page = client.request("GET", authorize_path(port, client_id, challenge))
        page = page.decode()
        status, headers, _ = client.form("/oauth/login", [("request", field(page, "request")), ("csrf", field(page, "csrf")),
                                                          ("user_id", OWNER)])
        assert status == 302, status
        cookie = headers["set-cookie"].split(";")[0]
        prepared = [code(client, port, client_id, cookie) for _ in range(codes)]

        answers = []

        def exchanges():
            for verifier, code_value in prepared:
                status, headers, body = client.form("/token", exchange_pairs(port, client_id, verifier, code_value))
                assert status == 200, body
                answers.append((headers, body))
            return len(prepared)

        exchange_cpu, exchange_rps = measure(pid, exchanges)
        refresh_token = json.loads(answers[-1][1])["refresh_token"]

        def refreshes():
            nonlocal refresh_token
            for _ in range(codes):
                status, _, body = client.form("/token", [("grant_type", "refresh_token"), ("refresh_token", refresh_token),
                                                         ("client_id", client_id)])
                assert status == 200, body
                refresh_token = json.loads(body)["refresh_token"]
            return codes

        refresh_cpu, refresh_rps = measure(pid, refreshes)

        def sign_ins():
            for _ in range(codes // 4):
                verifier, code_value = code(client, port, client_id, cookie)
                status, _, body = client.form("/token", exchange_pairs(port, client_id, verifier, code_value))
                assert status == 200, body
            return codes // 4

        sign_in_cpu, _ = measure(pid, sign_ins)

        # The ceiling: the product's token answer, for the same requests.
        headers, body = answers[0]
        head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        answer_file = os.path.join(work, "token.http")
        open(answer_file, "wb").write(head.encode() + b"\r\n" + body)
        cport = free_port()
        bare = spawn([ceiling, f"127.0.0.1:{cport}", answer_file])
        procs.append(bare)
        wait_port(cport, bare, "ceiling")
        bare_pid = leaf_pid(bare)
        bare_client = Client(cport)

        def ceiling_run():
            # Enough requests for the clock ticks of /proc/PID/stat to count them.
            rounds = max(1, 8000 // len(prepared))
            for _ in range(rounds):
                for verifier, code_value in prepared:
                    bare_client.form("/token", exchange_pairs(port, client_id, verifier, code_value))
            return rounds * len(prepared)

        ceiling_cpu, ceiling_rps = measure(bare_pid, ceiling_run)
        print()
        print(f"| `/token` ({codes} requests, one connection, SQLite) | product CPU/req µs | ceiling CPU/req µs | product ÷ ceiling | product req/s | ceiling req/s |")
        print("|---|---|---|---|---|---|")
        print(f"| code exchange | {exchange_cpu:,.0f} | {ceiling_cpu:,.1f} | **{exchange_cpu / ceiling_cpu:.1f}×** | {exchange_rps:,.0f} | {ceiling_rps:,.0f} |")
        print(f"| refresh (rotation) | {refresh_cpu:,.0f} | {ceiling_cpu:,.1f} | **{refresh_cpu / ceiling_cpu:.1f}×** | {refresh_rps:,.0f} | {ceiling_rps:,.0f} |")
        print(f"| a sign-in in an open session (consent page, approval, exchange: 3 requests) | {sign_in_cpu:,.0f} per sign-in | — | — | — | — |")
    finally:
        stop(procs)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
