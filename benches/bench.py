#!/usr/bin/env python3
"""The per-request cost of the product against its ceiling, in one run.

Usage: bench.py BIN CEILING_BIN

For each backend (BENCH_BACKENDS, default "sqlite postgres"; PostgreSQL only when
BENCH_PG_ADMIN_URL answers), a fresh database is migrated, seeded and given
BENCH_PAYABLES (100000) payables and BENCH_TRANSACTIONS (100000) posted transactions in
Acme's checking account over 2026. The release server runs pinned to CPU 0. Its exact
answers to the benchmark requests (benches/tools_list.lua: the owner's tools/list;
benches/tools_call.lua: tools/call finance_payables_list, limit 25, 6 fields;
benches/cash_flow.lua: the cash flow of 2026 by day; benches/suggest.lua: the
reconciliation suggestions of 37 days, about 10,000 unreconciled transactions, the
oldest 200 looked at; benches/reports_aging.lua: the aging of every pending payable by
person; benches/income_statement.lua: March 2026 against February on the competence
basis; benches/find_search.lua: a find-mode search, summary of 8) are captured, and for
each one the ceiling (benches/ceiling: bare hyper answering those
bytes) runs pinned to CPU 0 too. wrk, pinned to CPU 1, then loads product and ceiling in
turn at each concurrency of BENCH_CONNECTIONS ("1 8 64") for BENCH_DURATION (10s),
BENCH_ROUNDS (2) times interleaved. CPU per request is the server process's
utime + stime (/proc/PID/stat) over the run divided by the requests wrk completed;
the figures are the medians of the rounds. On PostgreSQL the database's CPU per request
is measured the same way over every `postgres` process of the machine (so run it on a
database server nothing else uses), its transactions per request from
pg_stat_database (read after the backends' counts are flushed, 11 s after each run),
its statements per request from pg_stat_statements (when the server preloads it), and
the round trips per request from the TCP segments carrying data the server sent to it
(`ss -ti`). The list also runs with 64 clients of one user and 64 clients of 64 users
(USERS, members of the demo workspace). Prints Markdown tables, the last one PostgreSQL's
product + database CPU over SQLite's product CPU, request by request.
Before the load, the owner's tools/list bytes (wire and model-visible) on /mcp and in find
mode, and a few summary searches' bytes, are printed (first backend only).
BENCH_ONLY ("finance_payables_list|aging") keeps the requests whose label holds one of
its words (all by default).
Loopback only; everything it starts stops by itself. Needs wrk, taskset, sqlite3, psql, ss.
"""
import http.client
import json
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

OWNER = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01"
WS = "2b93f876-769a-4bdc-b23e-304957f313b4"
# The users of the run "64 clients of 64 users": one rate-limit counter each.
USERS = [str(uuid.UUID(int=0xB0 << 120 | i)) for i in range(64)]
HERE = os.path.dirname(os.path.abspath(__file__))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def env(name, default):
    return os.environ.get(name) or default


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{what} did not listen on {port}")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def database_cpu_seconds():
    """The CPU of every PostgreSQL process on the machine (the postmaster, its workers
    and the backends serving the product's connections): what the database spends."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        if text.split(" (", 1)[1].startswith("postgres)"):
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
    return total


def rss_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def lua_request(script):
    """The method, headers and body a wrk script sends (the scripts are the one source)."""
    text = open(os.path.join(HERE, script)).read()
    headers = dict(re.findall(r'wrk\.headers\["([^"]+)"\] = "([^"]*)"', text))
    headers = {k: v for k, v in headers.items() if k != "Authorization"}
    body = "".join(re.findall(r"'([^']*)'", text.split("wrk.body =", 1)[1].split("\n\n", 1)[0]))
    return headers, body.encode()


def capture(port, script, token):
    headers, body = lua_request(script)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/", body=body, headers=dict(headers, Authorization=f"Bearer {token}"))
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    if response.status != 200 or b'"isError":true' in payload:
        raise RuntimeError(f"{script}: {response.status} {payload[:300]!r}")
    head = f"HTTP/1.1 {response.status} {response.reason}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in response.getheaders())
    return head.encode() + b"\r\n" + payload, len(payload)


def wrk(port, script, connections, duration, token, tokens=None):
    """A wrk run; with `tokens`, its requests take them in turn (one user each). A
    request waits up to 30 s for its answer (wrk's own default, 2 s, is shorter than 64
    cash-flow requests queued on one core take), so a slow answer is a latency, never
    an error."""
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{duration}", "--timeout", "30s", "--latency",
         "-s", os.path.join(HERE, script), f"http://127.0.0.1:{port}/"],
        capture_output=True, text=True, timeout=300, check=True,
        env=dict(os.environ, KFIN_BENCH_TOKEN=token, KFIN_BENCH_TOKENS=" ".join(tokens or [])),
    ).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT"))
    values = dict(kv.split("=") for kv in line.split()[1:])
    if values["errors"] != "0":
        raise RuntimeError(f"wrk counted errors: {line}")
    return values


def transactions(url):
    """The transactions PostgreSQL has counted for the database at `url` (commits and
    rollbacks), after the idle backends have flushed their counts (within 10 s)."""
    time.sleep(11)
    out = subprocess.run(["psql", "-Atq", url, "-c",
                          "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return int(out.strip())


def statements(url):
    """The statements PostgreSQL has run for the database at `url` (pg_stat_statements'
    calls, the counting query's own included), or None when the extension is not loaded
    (`shared_preload_libraries`)."""
    out = subprocess.run(["psql", "-Atq", url, "-c",
                          "SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements "
                          "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"],
                         capture_output=True, text=True, timeout=60)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def segments_to_database(pid, port):
    """TCP segments carrying data that process `pid` has sent to PostgreSQL (port `port`)
    on its open connections (`ss -ti`'s data_segs_out): one per message it flushed, so
    one per round trip — statements and the pool's checks alike."""
    out = subprocess.run(["ss", "-tinpH", "state", "established", f"( dport = :{port} )"],
                         capture_output=True, text=True, timeout=30).stdout
    total, mine = 0, False
    for line in out.splitlines():
        if line and not line[0].isspace():
            mine = f"pid={pid}," in line
        elif mine:
            found = re.search(r"data_segs_out:(\d+)", line)
            total += int(found.group(1)) if found else 0
    return total


def measure(pid, port, script, connections, duration, token, database=None, tokens=None):
    """One load run: the server's CPU per request and, with `database` (its URL), the
    database's CPU, transactions, statements and round trips per request (the counting
    queries' own are taken out)."""
    xacts_before = transactions(database) if database else 0
    statements_before = statements(database) if database else None
    db_port = int(re.search(r":(\d+)/", database).group(1)) if database else 0
    segments_before = segments_to_database(pid, db_port) if database else 0
    before, db_before = cpu_seconds(pid), database_cpu_seconds() if database else 0.0
    values = wrk(port, script, connections, duration, token, tokens)
    spent = cpu_seconds(pid) - before
    db_spent = database_cpu_seconds() - db_before if database else 0.0
    segments = segments_to_database(pid, db_port) - segments_before if database else 0
    requests = int(values["requests"])
    xacts = (transactions(database) - xacts_before - 1) if database else 0
    statements_after = statements(database) if database else None
    ran = (statements_after - statements_before - 1) if statements_before is not None and statements_after else None
    return {"cpu_us": spent * 1e6 / requests, "db_us": db_spent * 1e6 / requests, "rps": float(values["rps"]),
            "p50": float(values["p50_ms"]), "p99": float(values["p99_ms"]), "xacts": xacts / requests,
            "statements": ran / requests if ran is not None else None, "round_trips": segments / requests}


def post_json(port, path, token, method, params, version="2026-07-28"):
    """A JSON-RPC request to the server; answers the HTTP body's bytes and its JSON."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}", "MCP-Protocol-Version": version}
    if version == "2026-07-28":
        headers["Mcp-Method"] = method
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        params = dict(params, _meta={"io.modelcontextprotocol/protocolVersion": version,
                                     "io.modelcontextprotocol/clientCapabilities": {}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", path, body=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
                 headers=headers)
    payload = conn.getresponse().read()
    conn.close()
    return payload, json.loads(payload)


def model_visible(tools):
    """What a model is shown of a list: each tool's compact {name, description, inputSchema}."""
    return sum(len(json.dumps({"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]},
                              separators=(",", ":"), ensure_ascii=False).encode()) for t in tools)


def catalogue_bytes(port, token):
    """The owner's tools/list on / and in find mode (wire and model-visible bytes, both
    eras), and a summary search's answer (its text content, what a model reads)."""
    rows = []
    for path in ("/mcp", "/mcp/find", "/mcp/find/readonly"):
        for version in ("2026-07-28", "2025-06-18"):
            wire, answer = post_json(port, path, token, "tools/list", {}, version)
            tools = answer["result"]["tools"]
            rows.append((f"tools/list {path} ({version})", len(tools), len(wire), model_visible(tools)))
    for query in ("contas a pagar vencidas", "overdue receivables", "delete"):
        wire, answer = post_json(port, "/mcp/find", token, "tools/call",
                                 {"name": "finance_tools_search", "arguments": {"query": query}})
        text = answer["result"]["content"][0]["text"]
        rows.append((f"finance_tools_search summary \"{query}\"", len(json.loads(text)["tools"]), len(wire),
                     len(text.encode())))
    print("| request (owner) | tools | wire bytes | model-visible bytes |")
    print("|---|---|---|---|")
    for label, count, wire, visible in rows:
        print(f"| {label} | {count} | {wire:,} | {visible:,} |")
    print()


class Backend:
    def __init__(self, name, work):
        self.name, self.work, self.pg_db = name, work, None
        admin = env("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/test")
        if name == "sqlite":
            self.file = os.path.join(work, "bench.db")
            self.url = f"sqlite:{self.file}"
        else:
            self.admin = admin
            self.pg_db = "kfin_bench_" + secrets.token_hex(6)
            subprocess.run(["psql", "-q", admin, "-c", f"CREATE DATABASE {self.pg_db}"], check=True, capture_output=True, timeout=60)
            self.url = admin.rsplit("/", 1)[0] + "/" + self.pg_db

    def fill(self, binary, payables, transactions):
        for command in ("migrate", "seed"):
            subprocess.run([binary, command, "--database-url", self.url], check=True, capture_output=True, timeout=300)
        # USERS more members of the demo workspace (the `finance` role), for the run of
        # one user each.
        values = ", ".join(f"('{u}', 'bench-{i}@example.com', 'Bench {i}', '2026-01-01T00:00:00Z')" for i, u in enumerate(USERS))
        members = ", ".join(f"('{WS}', '{u}', 'finance', '2026-01-01T00:00:00Z')" for u in USERS)
        sql = (f"INSERT INTO users (id, email, name, created_at) VALUES {values};\n"
               f"INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES {members};\n")
        if self.name == "sqlite":
            subprocess.run(["sqlite3", self.file], input=sql, text=True, check=True, capture_output=True, timeout=60)
        else:
            # Statements per request come from pg_stat_statements where the server loads it.
            sql += "CREATE EXTENSION IF NOT EXISTS pg_stat_statements;\n"
            subprocess.run(["psql", "-q", self.url, "-v", "ON_ERROR_STOP=1"], input=sql, text=True, check=True, capture_output=True, timeout=60)
        if self.name == "sqlite":
            sql = f"CREATE TEMP TABLE bench_params AS SELECT {payables} AS n;\n" + open(os.path.join(HERE, "payables_seed_sqlite.sql")).read()
            subprocess.run(["sqlite3", self.file], input=sql, text=True, check=True, capture_output=True, timeout=1800)
            sql = f"CREATE TEMP TABLE bench_tx AS SELECT {transactions} AS n;\n" + open(os.path.join(HERE, "transactions_seed_sqlite.sql")).read()
            subprocess.run(["sqlite3", self.file], input=sql, text=True, check=True, capture_output=True, timeout=1800)
        else:
            subprocess.run(["psql", "-q", self.url, "-v", "ON_ERROR_STOP=1", "-v", f"n={payables}", "-f", os.path.join(HERE, "payables_seed_pg.sql")],
                           check=True, capture_output=True, timeout=1800)
            subprocess.run(["psql", "-q", self.url, "-v", "ON_ERROR_STOP=1", "-v", f"n={transactions}", "-f", os.path.join(HERE, "transactions_seed_pg.sql")],
                           check=True, capture_output=True, timeout=1800)
            # The bulk fill rewrote each report total row thousands of times in one
            # transaction (its triggers); autovacuum clears such dead versions soon after a
            # bulk write, so the bench starts from there, as a running database would be.
            vacuum = "VACUUM report_open_bills, report_bill_competence, report_ledger_cash, report_ledger_competence, cash_flow_days"
            subprocess.run(["psql", "-q", self.url, "-c", vacuum], check=True, capture_output=True, timeout=600)

    def drop(self):
        if self.pg_db:
            subprocess.run(["psql", "-q", self.admin, "-c", f"DROP DATABASE IF EXISTS {self.pg_db} WITH (FORCE)"], capture_output=True, timeout=60)


def pg_answers():
    admin = env("BENCH_PG_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/test")
    return subprocess.run(["psql", "-qAt", admin, "-c", "select 1"], capture_output=True, timeout=10).returncode == 0


def spawn(argv, extra_env=None):
    return subprocess.Popen(["timeout", "3600", "taskset", "-c", "0", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, **(extra_env or {})))


def stop(procs):
    """Ends what `spawn` started: terminated, killed after 10 s."""
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


def leaf_pid(proc):
    """The pid of the server itself under `timeout taskset …` (taskset execs; timeout forks)."""
    out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else proc.pid


def main():
    binary, ceiling = sys.argv[1:3]
    duration = env("BENCH_DURATION", "10s")
    rounds = int(env("BENCH_ROUNDS", "2"))
    connections = [int(c) for c in env("BENCH_CONNECTIONS", "1 8 64").split()]
    payables = int(env("BENCH_PAYABLES", "100000"))
    transactions = int(env("BENCH_TRANSACTIONS", "100000"))
    backends = env("BENCH_BACKENDS", "sqlite postgres").split()
    rows = []
    for name in backends:
        if name == "postgres" and not pg_answers():
            print("*** PostgreSQL does not answer: its rows are skipped ***", file=sys.stderr)
            continue
        work = tempfile.mkdtemp(prefix="kfin-bench-")
        backend = Backend(name, work)
        procs = []
        try:
            backend.fill(binary, payables, transactions)
            port = free_port()
            server_env = {"KFIN_JWT_SECRET": "bench-secret-not-for-production", "KFIN_PUBLIC_URL": f"http://127.0.0.1:{port}",
                          "KFIN_RATE_LIMIT_READS": "1000000000", "KFIN_RATE_LIMIT_WRITES": "1000000000", "KFIN_LOG": "off"}
            server = spawn([binary, "serve", "--addr", f"127.0.0.1:{port}", "--database-url", backend.url], server_env)
            procs.append(server)
            wait_port(port, server, "server")
            server_pid = leaf_pid(server)
            token = subprocess.run([binary, "token", "--user", OWNER], capture_output=True, text=True, check=True,
                                   env=dict(os.environ, **server_env)).stdout.strip()
            rss_start = rss_kib(server_pid, "VmRSS")
            if name == backends[0]:
                catalogue_bytes(port, token)
            users = [subprocess.run([binary, "token", "--user", u], capture_output=True, text=True, check=True,
                                    env=dict(os.environ, **server_env)).stdout.strip() for u in USERS]
            # (label, script, tokens taken in turn, connections when not BENCH_CONNECTIONS)
            requests = (("tools/list (owner)", "tools_list.lua", None, None),
                        ("tools/call finance_payables_list", "tools_call.lua", None, None),
                        ("tools/call finance_payables_list, 64 clients of one user", "tools_call.lua", None, [64]),
                        ("tools/call finance_payables_list, 64 clients of 64 users", "tools_call.lua", users, [64]),
                        ("tools/call finance_cash_flow_get (366 days)", "cash_flow.lua", None, None),
                        ("tools/call finance_reconciliations_suggest", "suggest.lua", None, None),
                        ("tools/call finance_reports_aging (100,000 pending, by person)", "reports_aging.lua", None, None),
                        ("tools/call finance_reports_income_statement (a month against the one before)", "income_statement.lua", None, None),
                        ("tools/call finance_tools_search (find mode, summary of 8)", "find_search.lua", None, None),
                        ("tools/call finance_payables_send_to_bank, the question (confirm)", "confirm_ask.lua", None, None))
            only = env("BENCH_ONLY", "")
            for label, script, tokens, fixed in [r for r in requests if not only or any(w in r[0] for w in only.split("|"))]:
                raw, size = capture(port, script, token)
                answer = os.path.join(work, script + ".http")
                open(answer, "wb").write(raw)
                cport = free_port()
                ceiling_proc = spawn([ceiling, f"127.0.0.1:{cport}", answer])
                procs.append(ceiling_proc)
                wait_port(cport, ceiling_proc, "ceiling")
                ceiling_pid = leaf_pid(ceiling_proc)
                for c in fixed or connections:
                    product, bare = [], []
                    for _ in range(rounds):
                        product.append(measure(server_pid, port, script, c, duration, token, backend.url if name == "postgres" else None, tokens))
                        bare.append(measure(ceiling_pid, cport, script, c, duration, token))
                    med = lambda runs, key: statistics.median(r[key] for r in runs)
                    counted = [r["statements"] for r in product if r["statements"] is not None]
                    rows.append((name, label, size, c, med(product, "cpu_us"), med(bare, "cpu_us"), med(product, "rps"), med(bare, "rps"),
                                 med(product, "p50"), med(product, "p99"), med(product, "db_us"), med(product, "xacts"),
                                 statistics.median(counted) if counted else None, med(product, "round_trips")))
                    print(f"  {name} {label} c={c}: {rows[-1][4]:.0f} µs vs {rows[-1][5]:.1f} µs", file=sys.stderr)
                ceiling_proc.terminate()
            rows_rss = (rss_start, rss_kib(server_pid, "VmHWM"))
            print(f"{name}: RSS after start {rows_rss[0] / 1024:.1f} MiB, peak {rows_rss[1] / 1024:.1f} MiB")
        finally:
            stop(procs)
            backend.drop()
            subprocess.run(["rm", "-rf", work])
    print()
    print("| backend | request | answer bytes | connections | product CPU/req µs | database CPU/req µs | database transactions / statements / round trips per req | ceiling CPU/req µs | product ÷ ceiling | product req/s | ceiling req/s | product p50 ms | product p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, label, size, c, pcpu, ccpu, prps, crps, p50, p99, dbcpu, xacts, ran, trips) in rows:
        if name == "postgres":
            database = f"{dbcpu:,.0f}"
            per = f"{xacts:.2f} / {'—' if ran is None else f'{ran:.2f}'} / {trips:.2f}"
        else:
            database, per = "—", "—"
        print(f"| {name} | {label} | {size:,} | {c} | {pcpu:,.0f} | {database} | {per} | {ccpu:,.1f} | **{pcpu / ccpu:.1f}×** | {prps:,.0f} | {crps:,.0f} | {p50:.2f} | {p99:.2f} |")
    # What production pays against the embedded database, request by request: PostgreSQL's
    # product and database CPU over SQLite's product CPU, and the throughputs.
    lite = {(r[1], r[3]): r for r in rows if r[0] == "sqlite"}
    pg = [r for r in rows if r[0] == "postgres" and (r[1], r[3]) in lite]
    if pg:
        print()
        print("| request | connections | PostgreSQL total CPU/req ÷ SQLite's | PostgreSQL req/s ÷ SQLite's |")
        print("|---|---|---|---|")
        for r in pg:
            other = lite[(r[1], r[3])]
            print(f"| {r[1]} | {r[3]} | **{(r[4] + r[10]) / other[4]:.2f}×** ({r[4]:,.0f} + {r[10]:,.0f} µs ÷ {other[4]:,.0f}) | {r[6] / other[6]:.2f} |")


if __name__ == "__main__":
    main()
