#!/usr/bin/env python3
"""Sign the bearer token that the API Gateway event fixtures in events/ carry.

The token is an HS512 JWT for the seeded demo owner, valid until 2100, with the
20 read/write scopes that `kobana-finance-mcp token` grants by default. It is
signed with the FIXTURE-ONLY key `kobana-finance-replay-fixtures` (its UTF-8
bytes are the HMAC key). That key is public and documented: it exists only so
the fixtures can be replayed offline with

    KFIN_JWT_SECRET=kobana-finance-replay-fixtures kobana-finance-mcp replay EVENT.json

It must never be used as a real signing secret.

Standard library only, deterministic: the same inputs always give the same token.

Usage:
    scripts/fixture-token.py                 # print the fixture token
    scripts/fixture-token.py --claims        # print the claims it signs
    scripts/fixture-token.py --key K --sub ID --scope "a b" --aud URL --iss URL
"""

import argparse
import base64
import hashlib
import hmac
import json
import sys

FIXTURE_KEY = "kobana-finance-replay-fixtures"
LOCAL_URL = "http://127.0.0.1:8080"
DEMO_OWNER_ID = "0f5e8a52-3c1d-4b7e-9a26-5d8c4e2b1a01"
FIXTURE_JTI = "5a0f3c6e-2d41-4c8b-9e1a-7b6d5c4f3e21"
ISSUED_AT = 1780000000
EXPIRES_AT = 4102444800  # 2100-01-01T00:00:00Z

RESOURCES = [
    "companies",
    "accounts",
    "transactions",
    "payables",
    "receivables",
    "categories",
    "cost_centers",
    "people",
    "taxes",
    "attachments",
]
# Each read scope followed by its write scope: the default grant of `token`.
ALL_SCOPES = " ".join(
    scope for r in RESOURCES for scope in (f"finance.{r}", f"finance.{r}.write")
)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def compact_json(value) -> bytes:
    # Fixed key order and no whitespace, so the token is byte-for-byte reproducible.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def fixture_claims(
    sub: str = DEMO_OWNER_ID,
    scope: str = ALL_SCOPES,
    iss: str = LOCAL_URL,
    aud: str = LOCAL_URL,
    iat: int = ISSUED_AT,
    exp: int = EXPIRES_AT,
    jti: str = FIXTURE_JTI,
) -> dict:
    return {
        "iss": iss,
        "aud": aud,
        "sub": sub,
        "scope": scope,
        "iat": iat,
        "exp": exp,
        "jti": jti,
    }


def sign_hs512(claims: dict, key: str = FIXTURE_KEY) -> str:
    header = {"alg": "HS512", "typ": "JWT"}
    signing_input = b64url(compact_json(header)) + "." + b64url(compact_json(claims))
    mac = hmac.new(key.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha512)
    return signing_input + "." + b64url(mac.digest())


def fixture_token() -> str:
    return sign_hs512(fixture_claims())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", default=FIXTURE_KEY, help="HMAC key (UTF-8)")
    parser.add_argument("--sub", default=DEMO_OWNER_ID, help="user id")
    parser.add_argument("--scope", default=ALL_SCOPES, help="space-separated scopes")
    parser.add_argument("--iss", default=LOCAL_URL)
    parser.add_argument("--aud", default=LOCAL_URL)
    parser.add_argument("--iat", type=int, default=ISSUED_AT)
    parser.add_argument("--exp", type=int, default=EXPIRES_AT)
    parser.add_argument("--jti", default=FIXTURE_JTI)
    parser.add_argument("--claims", action="store_true", help="print the claims, not the token")
    args = parser.parse_args(argv)

    claims = fixture_claims(args.sub, args.scope, args.iss, args.aud, args.iat, args.exp, args.jti)
    if args.claims:
        print(json.dumps(claims, indent=2))
    else:
        print(sign_hs512(claims, args.key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
