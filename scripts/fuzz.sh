#!/usr/bin/env bash
# fuzz.sh: `make fuzz` — builds the fuzz targets (fuzz/, a crate of its own) with
# libFuzzer on the STABLE toolchain and runs each for FUZZ_SECONDS (default 60), then
# prints the executions per target. FUZZ_TARGETS picks targets (default: all).
#
# Why this works on stable: libfuzzer-sys compiles libFuzzer itself (C++, with the
# system compiler) and links it as the program's main; the coverage guidance is
# LLVM's SanitizerCoverage pass, which stable rustc runs through the stable
# `-C passes=sancov-module` and `-C llvm-args=-sanitizer-coverage-*` flags. What needs
# nightly is only `-Z sanitizer=address`, which we do without (`cargo fuzz run
# --sanitizer none` is the same build): Rust's own checks (bounds, overflow — on in the
# fuzz profile — and debug assertions) turn memory and arithmetic bugs into panics,
# and a panic is what the fuzzer reports.
#
# New inputs that reach new code go to target/fuzz/corpus/<target>/ (not committed);
# a crash goes to target/fuzz/artifacts/<target>/ and the script exits 1. A crash
# becomes a regression: copy the input to fuzz/regressions/<target>/ (replayed by
# tests/it/fuzz_corpus.rs in `make test`) and fix the code.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"request_pipeline mcp_name request_state cursor money"}
HOST=$(rustc -vV | sed -n 's/^host: //p')
OUT=$ROOT/target/fuzz
export CARGO_TARGET_DIR=$OUT

# --target keeps the instrumentation off build scripts and proc macros (which are not
# linked with libFuzzer).
export RUSTFLAGS="-C passes=sancov-module -C llvm-args=-sanitizer-coverage-level=4 \
-C llvm-args=-sanitizer-coverage-inline-8bit-counters -C llvm-args=-sanitizer-coverage-pc-table \
-C llvm-args=-sanitizer-coverage-trace-compares -C debug-assertions -C overflow-checks"
echo "building the fuzz targets (stable $(rustc --version | cut -d' ' -f2), SanitizerCoverage, libFuzzer)…"
(cd fuzz && cargo build --release --locked --target "$HOST" --bins)

mkdir -p "$OUT/tmp"
export KFIN_FUZZ_TMP=$OUT/tmp
summary=()
crashed=()
for t in $TARGETS; do
  work=$OUT/corpus/$t
  artifacts=$OUT/artifacts/$t
  mkdir -p "$work" "$artifacts"
  log=$OUT/$t.log
  echo "fuzzing $t for ${SECONDS_EACH}s…"
  status=0
  "$OUT/$HOST/release/$t" "$work" "fuzz/corpus/$t" $( [[ -d fuzz/regressions/$t ]] && echo "fuzz/regressions/$t" ) \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  corpus=$(find "$work" -type f | wc -l)
  if [[ $status -ne 0 ]]; then
    crashed+=("$t")
    summary+=("$(printf '%-18s %12s %10s %8s %8s  CRASH (see %s)' "$t" "${runs:-?}" "${rate:-?}" "${cov:-?}" "$corpus" "$log")")
  else
    summary+=("$(printf '%-18s %12s %10s %8s %8s  ok' "$t" "${runs:-?}" "${rate:-?}" "${cov:-?}" "$corpus")")
  fi
done
rm -rf "$OUT/tmp"

echo
printf '%-18s %12s %10s %8s %8s  %s\n' target executions "exec/s" edges corpus result
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
if [[ ${#crashed[@]} -gt 0 ]]; then
  echo "CRASHES in: ${crashed[*]} — inputs in $OUT/artifacts/" >&2
  exit 1
fi
