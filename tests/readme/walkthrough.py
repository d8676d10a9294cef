#!/usr/bin/env python3
"""walkthrough.py: the README's walkthrough, run as a newcomer would run it.

Usage: tests/readme/walkthrough.py [BIN]
  BIN  the kobana-finance-mcp binary (default: $KFIN_BIN, else target/debug/kobana-finance-mcp,
       which the Rust suite builds). Needs bash, curl and Python 3 (standard library only).

Which blocks run: every fenced block of README.md whose info string is `sh`, alone or
followed by words. ```sh no-run is shown to the reader and never run (make run itself,
make test, commands that need an account, a browser or Node); ```sh empty-ok runs and
may answer an empty list. Other fences (plain ```, ```json, ...) are text. Only
README.md's blocks run: the shell examples of docs/ are reference, not a walkthrough.

Each block runs in a fresh `bash --noprofile --norc -euo pipefail` shell, twice:
  1. in order: all the blocks, one after the other, against ONE fresh server on the demo
     data (as a newcomer follows the README from top to bottom);
  2. each one alone: every block against a fresh server with a fresh demo database of
     its own (as a newcomer pastes one block), several at a time.
A fresh server is `BIN serve --addr 127.0.0.1:PORT` on a free port, with a temporary
KFIN_DATA_DIR (its own database and development secret) and no other KFIN_* variable
from the caller's environment; it is ready when GET /health answers 200, and it is
stopped when its pass ends (and, on Linux, when this script dies: PR_SET_PDEATHSIG).

What a block sees, so that it runs as written:
  * `http://127.0.0.1:8080` is replaced by the test server's URL;
  * KFIN_DATA_DIR and KFIN_PUBLIC_URL are exported, so `token` signs with the test
    server's development secret for its URL;
  * a shell function `cargo` runs `cargo run [-q|--quiet] -- ARGS` as `BIN ARGS` (no
    build in the loop); any other cargo command fails the block;
  * a shell function `curl` adds `--fail-with-body`, so an HTTP status of 400 or more
    fails the block (curl exits 22), the answer's body shown.
A block fails when it exits non-zero, when its output holds an error envelope
(`"error":{`, also as escaped text inside an MCP result) or an MCP error result
(`"isError":true`), or when it holds an empty list (`"data":[]`) and is not marked
empty-ok. A failure names the block (its number, heading and README line), its first line and
its output.

Before the blocks, the counts of the documentation are checked (README.md, docs/*.md):
every "N tools" is the catalogue's size (src/mcp/listing.tsv, one line per tool); and
each row of a table with a `tools` column whose URL cell is an MCP path (`/mcp...`) is
what the server lists there to the demo owner on 2026-07-28: the tools, and where the
table has them, the bytes of `tools/list` and the bytes shown to a model (each tool's
name, description and input schema as compact JSON) with their tokens at 4 bytes each;
a row naming `finance_tools_search {ARGUMENTS}` is that search in find mode (its bytes,
and the bytes of its text in "shown to the model").

And every relative link of README.md and docs/*.md names a file of the repository.

Exit status: 0 when everything passed, 1 otherwise. README_TEST_JOBS (4) sets how many
lone blocks run at once; README_TEST_VERBOSE=1 prints every block's output.
"""

from __future__ import annotations

import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
LISTING = os.path.join(ROOT, "src/mcp/listing.tsv")
README_URL = "http://127.0.0.1:8080"
DEMO_OWNER = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01"
BLOCK_SECONDS = 90
ERA = "2026-07-28"

# Put in front of every block (see the docstring).
PRELUDE = r"""
cargo() {
  if [[ ${1:-} != run ]]; then echo "README test: only 'cargo run -- ARGS' is mapped (got: cargo $*)" >&2; return 2; fi
  shift
  while [[ ${1:-} == -q || ${1:-} == --quiet ]]; do shift; done
  if [[ ${1:-} == -- ]]; then shift; fi
  "$KFIN_BIN" "$@"
}
curl() { command curl --fail-with-body "$@"; }
"""

ERROR_MARKS = ('"error":{', '\\"error\\":{', '"isError":true')
EMPTY_MARKS = ('"data":[]', '\\"data\\":[]')


class Block:
    def __init__(self, number: int, line: int, info: str, text: str, heading: str) -> None:
        self.number, self.line, self.info, self.text, self.heading = number, line, info, text, heading

    @property
    def first_line(self) -> str:
        return next((l for l in self.text.splitlines() if l.strip()), "")

    def name(self) -> str:
        return f"block {self.number}, \"{self.heading}\" (README.md line {self.line}: {self.first_line})"


def blocks(path: str) -> list[Block]:
    """The fenced sh blocks of a markdown file, runnable ones only."""
    found, fence, start, body, heading = [], None, 0, [], ""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if fence is None:
            if line.startswith("#"):
                heading = line.lstrip("#").strip()
            m = re.match(r"^(`{3,})\s*(.*)$", stripped)
            if m:
                fence, info, start, body = m.group(1), m.group(2).strip(), number, []
        elif stripped == fence:
            words = info.split()
            if words[:1] == ["sh"] and "no-run" not in words:
                found.append(Block(len(found) + 1, start, info, "\n".join(body) + "\n", heading))
            fence = None
        else:
            body.append(line)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent() -> None:
    """In the child: SIGTERM when this script dies (Linux), so no server outlives it."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Server:
    """`BIN serve` on a free loopback port with a temporary data directory."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="kfin-readme-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("KFIN_")}
        self.env.update(
            KFIN_BIN=binary, KFIN_DATA_DIR=os.path.join(self.dir, "data"), KFIN_PUBLIC_URL=self.url, KFIN_LOG="info"
        )
        self.log_path = os.path.join(self.dir, "server.log")
        self.banner_path = os.path.join(self.dir, "server.out")
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> "Server":
        with open(self.banner_path, "wb") as banner, open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [self.binary, "serve", "--addr", f"127.0.0.1:{self.port}"],
                env=self.env, stdin=subprocess.DEVNULL, stdout=banner, stderr=log, preexec_fn=die_with_parent,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}):\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.1)
        self.__exit__()
        raise RuntimeError(f"the server did not answer /health within 60 s:\n{self.log()}")

    def __exit__(self, *_: object) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log(self) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def run(self, block: Block) -> str | None:
        """Runs one block; None when it passed, else why it failed (with its output)."""
        script = PRELUDE + block.text.replace(README_URL, self.url)
        started = time.monotonic()
        try:
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-euo", "pipefail", "-c", script],
                env=self.env, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=BLOCK_SECONDS,
            )  # fmt: skip
        except subprocess.TimeoutExpired as e:
            return f"did not finish within {BLOCK_SECONDS} s; its output:\n{(e.stdout or b'')!r}"
        output = done.stdout + done.stderr
        seconds = time.monotonic() - started
        why = None
        if done.returncode != 0:
            why = f"exited {done.returncode}"
        elif any(mark in output for mark in ERROR_MARKS):
            why = "answered an error"
        elif "empty-ok" not in block.info.split() and any(mark in output for mark in EMPTY_MARKS):
            why = 'answered an empty list ("data":[]) and is not marked ```sh empty-ok'
        if why is None:
            print(f"  ok   {block.name()} ({seconds:.1f} s)", flush=True)
            if os.environ.get("README_TEST_VERBOSE") == "1":
                print(output, flush=True)
            return None
        shown = output.strip() or "(no output)"
        if len(shown) > 3000:
            shown = shown[:1500] + "\n…\n" + shown[-1500:]
        return f"{why}; its output:\n{shown}"

    def call(self, path: str, token: str, method: str, params: dict) -> bytes:
        """One MCP request on 2026-07-28; the raw answer."""
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": {
            "io.modelcontextprotocol/protocolVersion": ERA, "io.modelcontextprotocol/clientCapabilities": {}}}}  # fmt: skip
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                     "Accept": "application/json", "MCP-Protocol-Version": ERA, "Mcp-Method": method,
                     **({"Mcp-Name": params["name"]} if "name" in params else {})},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.read()

    def token(self) -> str:
        done = subprocess.run(
            [self.binary, "token", "--user", DEMO_OWNER], env=self.env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()


def docs() -> list[str]:
    return [README, *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]


def number(text: str) -> int | None:
    m = re.match(r"^\s*([0-9][0-9,]*)", text)
    return int(m.group(1).replace(",", "")) if m else None


def check_counts(server: Server) -> list[str]:
    """The documentation's tool counts and catalogue sizes against the listing and the server."""
    with open(LISTING, encoding="utf-8") as f:
        catalogue = sum(1 for line in f if line.strip())
    problems = []
    token = server.token()
    views: dict[str, tuple[int, int, int]] = {}

    def view(path: str) -> tuple[int, int, int]:
        if path not in views:
            raw = server.call(path, token, "tools/list", {})
            tools = json.loads(raw)["result"]["tools"]
            shown = sum(
                len(json.dumps({"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]},
                               separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode())
                for t in tools
            )  # fmt: skip
            views[path] = (len(tools), len(raw), shown)
        return views[path]

    def find(arguments: str) -> tuple[int, int, int]:
        """A search in find mode: its results, its bytes, and the bytes of its text."""
        raw = server.call("/mcp/find", token, "tools/call", {"name": "finance_tools_search", "arguments": json.loads(arguments)})
        result = json.loads(raw)["result"]
        return len(result["structuredContent"]["tools"]), len(raw), len(result["content"][0]["text"].encode())

    checked_rows = 0
    for path in docs():
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for n, line in enumerate(lines, 1):
            for m in re.finditer(r"\b([0-9][0-9,]*) tools\b", line):
                if int(m.group(1).replace(",", "")) != catalogue:
                    problems.append(
                        f"{rel}:{n}: says {m.group(0)!r}, the catalogue has {catalogue} (src/mcp/listing.tsv)"
                    )
        header: list[str] | None = None
        for n, line in enumerate(lines, 1):
            if not line.startswith("|"):
                header = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = [c.lower() for c in cells]
                continue
            if set("".join(cells)) <= set("-: ") or "tools" not in header:
                continue
            search = re.search(r"`finance_tools_search (\{[^`]*\})`", cells[0])
            url = next((m.group(1) for c in cells for m in [re.search(r"`(/mcp[^`]*)`", c)] if m), None)
            if search:
                url = f"finance_tools_search {search.group(1)}"
                tools, wire, shown = find(search.group(1))
            elif url is None:
                continue
            else:
                tools, wire, shown = view(url)
            checked_rows += 1
            got = {"tools": tools, "`tools/list` bytes": wire, "shown to the model": shown}
            for column, actual in got.items():
                if column not in header:
                    continue
                cell = cells[header.index(column)]
                said = number(cell)
                if said is None:
                    continue
                if said != actual:
                    problems.append(f"{rel}:{n}: {url} says {column} {said}, the server lists {actual}")
                tokens = re.search(r"≈\s*([0-9.]+)k tokens", cell)
                if tokens and abs(float(tokens.group(1)) - actual / 4000) > 0.051:
                    problems.append(f"{rel}:{n}: {url} says ≈ {tokens.group(1)}k tokens, {actual} bytes are ≈ {actual / 4000:.1f}k")
                tokens = re.search(r"≈\s*([0-9,]+) tokens", cell)
                if tokens and abs(int(tokens.group(1).replace(",", "")) - actual / 4) > 10:
                    problems.append(f"{rel}:{n}: {url} says ≈ {tokens.group(1)} tokens, {actual} bytes are ≈ {actual / 4:.0f}")
    print(f"  ok   counts: catalogue of {catalogue} tools; {checked_rows} table rows of MCP URLs checked" if not problems
          else "  FAIL counts", flush=True)  # fmt: skip
    return problems


def check_links() -> list[str]:
    """Every relative link of README.md and docs/*.md names a file of the repository."""
    problems = []
    for path in docs():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), target.split("#")[0]))
            if not resolved.startswith(ROOT + os.sep) or not os.path.exists(resolved):
                problems.append(f"{os.path.relpath(path, ROOT)}: the link ({target}) names no file of the repository")
    print("  ok   links" if not problems else "  FAIL links", flush=True)
    return problems


def in_order(binary: str, runnable: list[Block]) -> list[str]:
    print(f"== in order: {len(runnable)} blocks against one fresh server", flush=True)
    failures = []
    with Server(binary) as server:
        failures += [f"counts: {p}" for p in check_counts(server)]
        failures += [f"links: {p}" for p in check_links()]
        for block in runnable:
            why = server.run(block)
            if why:
                failures.append(f"in order, {block.name()} {why}")
                print(f"  FAIL {block.name()}", flush=True)
        if failures:
            failures.append(f"(the in-order server's log:)\n{server.log()}")
    return failures


def alone(binary: str, block: Block) -> str | None:
    try:
        with Server(binary) as server:
            why = server.run(block)
            return f"alone, {block.name()} {why}\n(its server's log:)\n{server.log()}" if why else None
    except RuntimeError as e:
        return f"alone, {block.name()}: {e}"


def main() -> int:
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("KFIN_BIN", "target/debug/kobana-finance-mcp")
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        print(f"README test: no binary at {binary} (build it: cargo build)", file=sys.stderr)
        return 1
    runnable = blocks(README)
    if not runnable:
        print("README test: README.md has no ```sh block to run", file=sys.stderr)
        return 1
    started = time.monotonic()
    failures = in_order(binary, runnable)
    first = time.monotonic() - started
    jobs = int(os.environ.get("README_TEST_JOBS", "4"))
    print(f"== each alone: {len(runnable)} blocks, each against its own fresh server ({jobs} at a time)", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for why in pool.map(lambda b: alone(binary, b), runnable):
            if why:
                failures.append(why)
                print(f"  FAIL {why.splitlines()[0]}", flush=True)
    total = time.monotonic() - started
    print(f"== in order {first:.0f} s, each alone {total - first:.0f} s, {total:.0f} s in all")
    if failures:
        print("\nREADME test FAILED:\n", file=sys.stderr)
        for why in failures:
            print(f"--- {why}\n", file=sys.stderr)
        return 1
    print("README test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
