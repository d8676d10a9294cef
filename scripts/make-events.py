#!/usr/bin/env python3
"""Write the Lambda event fixtures in events/ and events/expected.json.

Each fixture is one HTTP request to the MCP endpoint, wrapped the way each AWS front
door hands it to the function:

  events/v1/            API Gateway REST API (payload 1.0), stage `prod`
  events/v2/            API Gateway HTTP API (payload 2.0), stage `$default`
  events/function-url/  Lambda Function URL (payload 2.0 shape, its own host and ids)
  events/alb/           Application Load Balancer target group (one fixture)

The output is deterministic (fixed request ids, times and token), so regenerating
changes nothing unless this script changes. Standard library only.

Usage:
    scripts/make-events.py            # (re)write events/
    scripts/make-events.py --check    # exit 1 if events/ differs from what would be written
"""

import argparse
import base64
import calendar
import importlib.util
import json
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"

_spec = importlib.util.spec_from_file_location(
    "fixture_token", Path(__file__).resolve().parent / "fixture-token.py"
)
fixture_token = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixture_token)

TOKEN = fixture_token.fixture_token()

V2026 = "2026-07-28"
V2025 = "2025-06-18"
BODY_CAP = 14680064
OVERSIZED_CONTENT_LENGTH = 20 * 1024 * 1024  # 20971520 > 14680064

ACCOUNT_ID = "123456789012"
REST_API_ID = "abc123"
HTTP_API_ID = "def456"
FURL_ID = "k7m2p9q4r8s1t6v3w5x0y2z4a6b8c1d3"
ALB_TG_ARN = (
    "arn:aws:elasticloadbalancing:us-east-1:123456789012:"
    "targetgroup/kobana-finance-mcp/1a2b3c4d5e6f7a8b"
)
SOURCE_IP = "203.0.113.10"
USER_AGENT = "kobana-finance-fixture/1.0"

# All fixtures claim to arrive at 2026-07-28T12:00:00Z, one second apart.
BASE_EPOCH = calendar.timegm((2026, 7, 28, 12, 0, 0))
ID_NAMESPACE = uuid.UUID("6b1f7c1e-4a53-4f0e-8d7a-2c9e5b3a1f00")

META_2026 = {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fixture", "version": "1.0.0"},
}


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def rpc_2026(method: str, id_: int = 1, **params) -> str:
    return compact(
        {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": META_2026}}
    )


INITIALIZE_2025 = compact(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": V2025,
            "capabilities": {},
            "clientInfo": {"name": "fixture", "version": "1.0.0"},
        },
    }
)


def headers_2026(method: str, name: str = None) -> dict:
    h = {"MCP-Protocol-Version": V2026, "Mcp-Method": method}
    if name is not None:
        h["Mcp-Name"] = name
    return h


# --- The requests -------------------------------------------------------------------
#
# Each request: HTTP method, path, MCP headers (beyond the common ones), body, whether it
# carries the fixture bearer token, and the status the server must answer. `code` is
# the JSON-RPC error code of the answer, documented in events/README.md.

def request(method="POST", path="/", headers=None, body=None, auth=True, status=200,
            code=None, base64_body=False, raw_base64=None, content_length=None, title=""):
    return {
        "method": method,
        "path": path,
        "headers": headers or {},
        "body": body,
        "auth": auth,
        "status": status,
        "code": code,
        "base64_body": base64_body,
        "raw_base64": raw_base64,
        "content_length": content_length,
        "title": title,
    }


TOOLS_LIST_2026 = rpc_2026("tools/list")

REQUESTS = {
    "discover": request(
        headers=headers_2026("server/discover"),
        body=rpc_2026("server/discover"),
        title="2026-07-28 server/discover",
    ),
    "initialize": request(
        path="/mcp",
        body=INITIALIZE_2025,
        title="2025-06-18 initialize (no envelope, no version header) on the /mcp alias",
    ),
    "tools-list": request(
        headers=headers_2026("tools/list"),
        body=TOOLS_LIST_2026,
        title="2026-07-28 tools/list",
    ),
    "tools-call": request(
        path="/mcp",
        headers=headers_2026("tools/call", "finance_workspaces_list"),
        body=rpc_2026("tools/call", name="finance_workspaces_list", arguments={}),
        title="2026-07-28 tools/call finance_workspaces_list on the /mcp alias",
    ),
    "reject-get-405": request(
        method="GET",
        auth=False,
        status=405,
        title="GET on the endpoint: 405 with Allow: POST, before anything else",
    ),
    "reject-too-large-413": request(
        headers=headers_2026("tools/list"),
        body=TOOLS_LIST_2026,
        content_length=OVERSIZED_CONTENT_LENGTH,
        auth=False,
        status=413,
        code=-32600,
        title=f"Content-Length {OVERSIZED_CONTENT_LENGTH} (> {BODY_CAP}) and no token: "
        "413 before authentication",
    ),
    "reject-origin-403": request(
        headers={**headers_2026("tools/list"), "Origin": "https://evil.example.com"},
        body=TOOLS_LIST_2026,
        status=403,
        title="Origin https://evil.example.com, not in the allowlist (valid token)",
    ),
    "reject-no-token-401": request(
        headers=headers_2026("tools/list"),
        body=TOOLS_LIST_2026,
        auth=False,
        status=401,
        title="no Authorization header: 401 with WWW-Authenticate resource_metadata",
    ),
    "reject-parse-400": request(
        headers=headers_2026("tools/list"),
        body='{"jsonrpc":"2.0","id":1,"method":"tools/list",',
        status=400,
        code=-32700,
        title="body is not JSON",
    ),
    "reject-batch-400": request(
        headers=headers_2026("tools/list"),
        body="[" + TOOLS_LIST_2026 + "]",
        status=400,
        code=-32600,
        title="JSON array (batch) body",
    ),
    "reject-header-mismatch-400": request(
        headers=headers_2026("tools/call"),
        body=TOOLS_LIST_2026,
        status=400,
        code=-32020,
        title="2026 tools/list with Mcp-Method: tools/call",
    ),
    "reject-unsupported-version-400": request(
        headers={"MCP-Protocol-Version": "1999-01-01"},
        body=compact({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        status=400,
        code=-32022,
        title="no envelope, MCP-Protocol-Version: 1999-01-01",
    ),
    "reject-unknown-method-404": request(
        headers=headers_2026("nope/nope"),
        body=rpc_2026("nope/nope"),
        status=404,
        code=-32601,
        title="2026-07-28 method nope/nope",
    ),
    "notification-202": request(
        headers={"MCP-Protocol-Version": V2025},
        body=compact({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        status=202,
        title="notifications/initialized: 202, empty body",
    ),
    "base64-body": request(
        headers=headers_2026("tools/list"),
        body=TOOLS_LIST_2026,
        base64_body=True,
        title="2026-07-28 tools/list with a base64-encoded body (isBase64Encoded: true)",
    ),
    "tools-list-view": request(
        path="/mcp/x/payables,receivables",
        headers=headers_2026("tools/list"),
        body=TOOLS_LIST_2026,
        title="2026-07-28 tools/list on the view /mcp/x/payables,receivables: only those tools",
    ),
    "tools-call-outside-view": request(
        path="/mcp/readonly",
        headers=headers_2026("tools/call", "finance_payables_settle"),
        body=rpc_2026("tools/call", name="finance_payables_settle",
                      arguments={"id": "b1110000-0001-4000-8000-000000000001", "payment_date": "2026-12-01"}),
        code=-32602,
        title="2026-07-28 tools/call finance_payables_settle on /mcp/readonly: unknown tool there",
    ),
    "reject-unknown-toolset-400": request(
        path="/mcp/x/wages",
        headers=headers_2026("tools/list"),
        body=TOOLS_LIST_2026,
        status=400,
        code=-32602,
        title="tools/list on /mcp/x/wages: 400 naming the valid toolsets",
    ),
    "malformed-base64": request(
        headers=headers_2026("tools/list"),
        raw_base64="eyJqc29ucnBjIjoiMi4wIiw*not-base64*",
        status=400,
        code=-32700,
        title="isBase64Encoded: true with a body that is not valid base64",
    ),
}

FLAVOURS = ["v1", "v2", "function-url"]
ALB_FIXTURES = ["tools-list"]


# --- Wrapping a request into each event shape -----------------------------------------

def wire_body(req):
    """(event body string or None, isBase64Encoded, byte length of the decoded body)."""
    if req["raw_base64"] is not None:
        return req["raw_base64"], True, len(req["raw_base64"])
    if req["body"] is None:
        return None, False, 0
    raw = req["body"].encode("utf-8")
    if req["base64_body"]:
        return base64.b64encode(raw).decode("ascii"), True, len(raw)
    return req["body"], False, len(raw)


def http_headers(req, host, lowercase):
    """The request's headers as the front door forwards them, in a fixed order."""
    h = {
        "Accept": "application/json, text/event-stream",
        "Host": host,
        "User-Agent": USER_AGENT,
        "X-Forwarded-For": SOURCE_IP,
        "X-Forwarded-Port": "443",
        "X-Forwarded-Proto": "https",
    }
    _, _, length = wire_body(req)
    if req["method"] == "POST":
        h["Content-Type"] = "application/json"
        cl = req["content_length"] if req["content_length"] is not None else length
        h["Content-Length"] = str(cl)
    if req["auth"]:
        h["Authorization"] = "Bearer " + TOKEN
    h.update(req["headers"])
    if lowercase:
        h = {k.lower(): v for k, v in h.items()}
    return h


def ids(flavour, name, index):
    request_id = str(uuid.uuid5(ID_NAMESPACE, f"{flavour}/{name}"))
    epoch = BASE_EPOCH + index
    return request_id, epoch


def clf_time(epoch):
    # API Gateway's requestTime / time: "28/Jul/2026:12:00:03 +0000"
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    t = time.gmtime(epoch)
    return f"{t.tm_mday:02d}/{months[t.tm_mon - 1]}/{t.tm_year}:{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} +0000"


def proxy_of(path):
    return path.lstrip("/") or None


def event_v1(name, req, index):
    """API Gateway REST API, Lambda proxy integration, payload format 1.0."""
    host = f"{REST_API_ID}.execute-api.us-east-1.amazonaws.com"
    headers = http_headers(req, host, lowercase=False)
    body, is_b64, _ = wire_body(req)
    request_id, epoch = ids("v1", name, index)
    proxy = proxy_of(req["path"])
    resource = "/{proxy+}" if proxy else "/"
    return {
        "resource": resource,
        "path": req["path"],
        "httpMethod": req["method"],
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": {"proxy": proxy} if proxy else None,
        "stageVariables": None,
        "requestContext": {
            "resourceId": "a1b2c3" if proxy else "rootid1",
            "resourcePath": resource,
            "httpMethod": req["method"],
            "extendedRequestId": request_id[:8] + "FixtureId=",
            "requestTime": clf_time(epoch),
            "path": "/prod" + req["path"],
            "accountId": ACCOUNT_ID,
            "protocol": "HTTP/1.1",
            "stage": "prod",
            "domainPrefix": REST_API_ID,
            "requestTimeEpoch": epoch * 1000,
            "requestId": request_id,
            "identity": {
                "cognitoIdentityPoolId": None,
                "accountId": None,
                "cognitoIdentityId": None,
                "caller": None,
                "sourceIp": SOURCE_IP,
                "principalOrgId": None,
                "accessKey": None,
                "cognitoAuthenticationType": None,
                "cognitoAuthenticationProvider": None,
                "userArn": None,
                "userAgent": USER_AGENT,
                "user": None,
            },
            "domainName": host,
            "deploymentId": "dep123",
            "apiId": REST_API_ID,
        },
        "body": body,
        "isBase64Encoded": is_b64,
    }


def event_v2_shape(flavour, name, req, index, host, api_id, route_key):
    """Payload format 2.0: HTTP API and Function URL share it."""
    headers = http_headers(req, host, lowercase=True)
    body, is_b64, _ = wire_body(req)
    request_id, epoch = ids(flavour, name, index)
    ev = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": req["path"],
        "rawQueryString": "",
        "headers": headers,
    }
    if flavour == "v2" and proxy_of(req["path"]):
        ev["pathParameters"] = {"proxy": proxy_of(req["path"])}
    ev["requestContext"] = {
        "accountId": ACCOUNT_ID if flavour == "v2" else "anonymous",
        "apiId": api_id,
        "domainName": host,
        "domainPrefix": api_id,
        "http": {
            "method": req["method"],
            "path": req["path"],
            "protocol": "HTTP/1.1",
            "sourceIp": SOURCE_IP,
            "userAgent": USER_AGENT,
        },
        "requestId": request_id,
        "routeKey": route_key,
        "stage": "$default",
        "time": clf_time(epoch),
        "timeEpoch": epoch * 1000,
    }
    if body is not None:
        ev["body"] = body
    ev["isBase64Encoded"] = is_b64
    return ev


def event_v2(name, req, index):
    host = f"{HTTP_API_ID}.execute-api.us-east-1.amazonaws.com"
    route = "ANY /{proxy+}" if proxy_of(req["path"]) else "ANY /"
    return event_v2_shape("v2", name, req, index, host, HTTP_API_ID, route)


def event_function_url(name, req, index):
    host = f"{FURL_ID}.lambda-url.us-east-1.on.aws"
    return event_v2_shape("function-url", name, req, index, host, FURL_ID, "$default")


def event_alb(name, req, index):
    """ALB target group, multi-value headers off."""
    host = "kobana-finance-mcp-1234567890.us-east-1.elb.amazonaws.com"
    headers = http_headers(req, host, lowercase=True)
    body, is_b64, _ = wire_body(req)
    return {
        "requestContext": {"elb": {"targetGroupArn": ALB_TG_ARN}},
        "httpMethod": req["method"],
        "path": req["path"],
        "queryStringParameters": {},
        "headers": headers,
        "body": body if body is not None else "",
        "isBase64Encoded": is_b64,
    }


BUILDERS = {"v1": event_v1, "v2": event_v2, "function-url": event_function_url, "alb": event_alb}


def check_shape(flavour, ev):
    """The fields lambda_http 1.3 needs to pick the right event type, checked here so a
    broken fixture fails at generation rather than as a deserialization error."""
    rc = ev["requestContext"]
    if flavour == "v1":
        assert isinstance(ev["httpMethod"], str) and isinstance(rc["httpMethod"], str)
        assert rc["stage"] == "prod" and ev["path"].startswith("/")
    elif flavour in ("v2", "function-url"):
        # Must not also look like a REST event (tried first): no httpMethod anywhere.
        assert "httpMethod" not in ev and "httpMethod" not in rc
        assert isinstance(rc["http"]["method"], str)
    elif flavour == "alb":
        assert isinstance(ev["httpMethod"], str) and "httpMethod" not in rc
        assert "http" not in rc and "elb" in rc
    for k in ("requestTimeEpoch", "timeEpoch"):
        if k in rc:
            assert isinstance(rc[k], int)


# --- Output ---------------------------------------------------------------------------

def render(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def build_all():
    """{relative path under repo: file text} for every file this script owns."""
    files = {}
    expected = {}
    jobs = [(f, n) for f in FLAVOURS for n in REQUESTS] + [("alb", n) for n in ALB_FIXTURES]
    for index, (flavour, name) in enumerate(jobs):
        req = REQUESTS[name]
        ev = BUILDERS[flavour](name, req, index)
        check_shape(flavour, ev)
        rel = f"events/{flavour}/{name}.json"
        files[rel] = render(ev)
        expected[rel] = req["status"]
    files["events/expected.json"] = render(dict(sorted(expected.items())))
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with events/ instead of writing")
    args = parser.parse_args(argv)

    files = build_all()
    if args.check:
        stale = [rel for rel, text in files.items()
                 if not (ROOT / rel).is_file() or (ROOT / rel).read_text("utf-8") != text]
        owned_dirs = {Path(rel).parent for rel in files}
        extra = [str(p.relative_to(ROOT)) for d in owned_dirs if (ROOT / d).is_dir()
                 for p in sorted((ROOT / d).glob("*.json"))
                 if str(p.relative_to(ROOT)) not in files]
        for rel in stale:
            print(f"out of date: {rel}", file=sys.stderr)
        for rel in extra:
            print(f"not generated: {rel}", file=sys.stderr)
        if stale or extra:
            print("run scripts/make-events.py to regenerate events/", file=sys.stderr)
            return 1
        print(f"events/ up to date ({len(files)} files)")
        return 0

    for rel, text in files.items():
        path = ROOT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files under events/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
