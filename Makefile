# The two commands a newcomer needs are `make run` and `make test`.
.PHONY: run demo-reset test bench bench-compare lambda replay build release fmt lint bench-lists bench-tools fuzz load

ARCH ?= arm64
EVENT ?= events/v2/tools-list.json

## Run the server locally on 127.0.0.1:8080 (SQLite in .data/, demo data; prints the URLs, an MCP and an API token).
run:
	cargo run --quiet -- serve

DATA_DIR ?= $(or $(KFIN_DATA_DIR),.data)

## Remove the local demo database (stop the server first): the next `make run` seeds the demo afresh.
## The development secret stays, so tokens minted before still sign in.
demo-reset:
	rm -f $(DATA_DIR)/kobana-finance.db $(DATA_DIR)/kobana-finance.db-wal $(DATA_DIR)/kobana-finance.db-shm
	@echo "demo database removed from $(DATA_DIR)/; make run seeds it again"

## Run every test suite (SQLite; PostgreSQL when one answers; conformance; real clients).
test:
	scripts/test.sh

## Benchmarks: binary size, cold start (serve and Lambda mode), CPU per request and req/s of tools/list and
## tools/call against a bare hyper ceiling at 1/8/64 connections (SQLite; PostgreSQL when one answers), memory.
bench:
	scripts/bench.sh

## Cold starts (serve, Lambda, Lambda with keys from Secrets Manager), sizes and RSS of two release binaries, in pairs.
bench-compare:
	scripts/bench-compare.sh $(BEFORE) $(AFTER)

## Build the Lambda deployable with cargo-lambda (ARCH=arm64 or ARCH=x86_64).
lambda:
	scripts/lambda-build.sh $(ARCH)

## Replay an API Gateway event through the Lambda handler (fixture key, local SQLite).
replay:
	KFIN_JWT_SECRET=kobana-finance-replay-fixtures cargo run --quiet -- replay $(EVENT)

build:
	cargo build

release:
	cargo build --release

## rustfmt's style (rustfmt.toml) on every crate of the repository; `make test` checks it.
fmt:
	cargo fmt --all
	cargo fmt --manifest-path fuzz/Cargo.toml --all
	cargo fmt --manifest-path benches/ceiling/Cargo.toml --all

lint:
	cargo clippy --all-targets -- -D warnings

## Benchmarks: GET /v1/payables latency with 10k and 1M payables, SQLite and PostgreSQL.
bench-lists:
	scripts/bench-lists.sh

## Benchmarks: tools/call finance_payables_list and tools/list with 100k payables, SQLite and PostgreSQL.
bench-tools:
	BENCH_SIZES=100000 scripts/bench-lists.sh

## Fuzzing on the stable toolchain: each target FUZZ_SECONDS (60) seconds; prints executions.
fuzz:
	scripts/fuzz.sh

## Load test: release server on 127.0.0.1 + fresh PostgreSQL, LOAD_CLIENTS (64) for LOAD_SECONDS (60), then integrity checks;
## then the outage run (PostgreSQL restarted, connections terminated twice) on a throw-away cluster.
load:
	scripts/load.sh
