#!/usr/bin/env python3
"""The official conformance suite's authorization-server scenarios against the server's
issuer, with a real browser signing in and consenting (tests/support/oauth_browser.py).

Usage: authorization.py NODE CLI ISSUER OUT
  NODE    Node 22; CLI the conformance CLI's dist/index.js
  ISSUER  the server's issuer (its public URL); the server runs on its development
          secret, so the development login is offered
  OUT     the results directory (the CLI's -o)

1. Registers a public client (RFC 7591, POST ISSUER/register) whose redirect URI is
   http://127.0.0.1:PORT/callback, PORT a free loopback port: the suite does no
   registration of its own.
2. Runs `conformance authorization --url ISSUER --client-id ID --resource ISSUER/mcp
   -p PORT -o OUT` with no --scenario, so both scenarios run in order
   (authorization-server-metadata-endpoint, then authorization-code-grant, which reads
   the metadata the first one found). When the CLI prints the authorization URL, the
   browser opens it, signs in as the demo owner on the development login and approves;
   the CLI's callback server gets the response, and the CLI exchanges the code.
3. Every check the CLI wrote (OUT/**/checks.json) must be SUCCESS — a WARNING (such as
   the CIMD advertisement's) or a SKIPPED one fails this run too — and the CLI must
   exit 0. Each check prints a `PASS`/`FAIL` line.
Exit status 0 only if all of that holds. The browser and the CLI stop before this
script exits.
"""

from __future__ import annotations

import json
import pathlib
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

from oauth_browser import Browser  # noqa: E402

RUN_SECONDS = 180
AUTHORIZE_LINE = re.compile(r"^(https?://\S+/authorize\?\S+)$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on 127.0.0.1:{port} (the CLI's callback)") from None
            time.sleep(0.05)


def register(issuer: str, redirect_uri: str) -> str:
    body = json.dumps({"client_name": "MCP conformance suite", "redirect_uris": [redirect_uri]}).encode()
    request = urllib.request.Request(
        f"{issuer}/register", data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["client_id"]


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    node, cli, issuer, out = sys.argv[1:]
    issuer = issuer.rstrip("/")
    port = free_port()
    client_id = register(issuer, f"http://127.0.0.1:{port}/callback")
    print(f"registered client {client_id} for http://127.0.0.1:{port}/callback", flush=True)
    argv = [node, cli, "authorization", "--url", issuer, "--client-id", client_id,
            "--resource", f"{issuer}/mcp", "-p", str(port), "-o", out]  # fmt: skip
    print(f"conformance {' '.join(argv[2:])}", flush=True)
    failures: list[str] = []
    with Browser() as browser:
        proc = subprocess.Popen(argv, cwd=out, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)  # fmt: skip
        urls: list[str] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                print(f"    {line.rstrip()}", flush=True)
                found = AUTHORIZE_LINE.match(line.strip())
                if found:
                    urls.append(found.group(1))
                    try:
                        # The CLI prints the URL as it starts its callback server.
                        wait_listening(port)
                        visit = browser.sign_in_and_approve(found.group(1))
                        print(f"    [browser] signed in, approved, back at {visit.landed.split('?')[0]}", flush=True)
                    except Exception as e:
                        failures.append(f"the browser did not complete the sign-in: {e}")
                        proc.kill()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            status = proc.wait(timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
            failures.append(f"the CLI did not finish within {RUN_SECONDS}s")
        reader.join(timeout=5)
    if len(urls) != 1:
        failures.append(f"the CLI printed {len(urls)} authorization URLs, not one")

    checks = []
    for path in sorted(pathlib.Path(out).rglob("checks.json")):
        for check in json.loads(path.read_text()):
            checks.append((path.parent.name, check))
    # Each scenario's results are in authorization-server-<scenario>-<timestamp>/.
    scenarios = {scenario for scenario, _ in checks}
    for wanted in ("authorization-server-metadata-endpoint", "authorization-code-grant"):
        if not any(s.startswith(f"authorization-server-{wanted}-") for s in scenarios):
            failures.append(f"no result for scenario {wanted} (results: {sorted(scenarios)})")
    bad = 0
    for scenario, check in checks:
        status_of = check.get("status")
        line = f"{scenario}: {check.get('id')}"
        if status_of == "SUCCESS":
            print(f"PASS conformance authorization: {line}", flush=True)
        else:
            print(f"FAIL conformance authorization: {line}: {status_of} {check.get('errorMessage') or ''}", flush=True)
            bad += 1
    if status != 0:
        failures.append(f"the CLI exited {status}")
    for why in failures:
        print(f"FAIL conformance authorization: {why}", flush=True)
    return 1 if failures or bad else 0


if __name__ == "__main__":
    sys.exit(main())
