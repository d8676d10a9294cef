#!/usr/bin/env python3
"""Cold starts of two binaries, paired: run i of the first, then run i of the second,
so what the machine does meanwhile (another build, a CPU's frequency) falls on both.

Usage: paired_cold.py MODE BEFORE_BIN BEFORE_DB AFTER_BIN AFTER_DB ARG [RUNS]

MODE `serve` (benches/cold_start.py; ARG is the token) or `lambda` (benches/lambda_cold.py;
ARG is the event file; BENCH_SECRET_ID as that script reads it). Prints, as JSON, each
binary's median and p90 of the cold start (serve: exec -> first answer; lambda: init,
first invocation, total), the median of the paired differences (after - before) with the
share of pairs where after was slower, and the medians of the resident set after the
first answer and of its peak. Stdlib only.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cold_start  # noqa: E402
import lambda_cold  # noqa: E402


def measure(mode, binary, database_url, arg):
    """One cold start: (figures in ms by name, (rss, peak) in KiB)."""
    if mode == "serve":
        ms, rss = cold_start.one_run(binary, database_url, arg)
        return {"cold_start": ms}, rss
    init, first, rss = lambda_cold.one_run(binary, database_url, arg)
    return {"init": init, "first_invocation": first, "total": init + first}, rss


def main():
    mode, before_bin, before_db, after_bin, after_db, arg = sys.argv[1:7]
    runs = int(sys.argv[7]) if len(sys.argv) > 7 else 60
    if mode == "lambda":
        arg = open(arg, "rb").read()
    sides = {"before": (before_bin, before_db), "after": (after_bin, after_db)}
    for binary, database_url in sides.values():
        measure(mode, binary, database_url, arg)  # page each binary in once
    samples = {"before": [], "after": []}
    for i in range(runs):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for side in order:
            samples[side].append(measure(mode, *sides[side], arg))
    out = {"mode": mode, "pairs": runs}
    for name in samples["before"][0][0]:
        before = [s[0][name] for s in samples["before"]]
        after = [s[0][name] for s in samples["after"]]
        differences = sorted(a - b for a, b in zip(after, before))
        out[name] = {
            "before_median_ms": round(statistics.median(before), 2),
            "after_median_ms": round(statistics.median(after), 2),
            "before_p90_ms": round(sorted(before)[int(0.9 * (runs - 1))], 2),
            "after_p90_ms": round(sorted(after)[int(0.9 * (runs - 1))], 2),
            "paired_difference_median_ms": round(statistics.median(differences), 2),
            "after_slower_share": round(sum(d > 0 for d in differences) / runs, 2),
        }
    for side in ("before", "after"):
        out[f"{side}_rss_kib"] = int(statistics.median(s[1][0] for s in samples[side]))
        out[f"{side}_rss_peak_kib"] = int(statistics.median(s[1][1] for s in samples[side]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
