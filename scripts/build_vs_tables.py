#!/usr/bin/env python3
"""The compact build's tables of bench/RESULTS.md from one BM_BuildVs run.

    build/release/bench/compact_bench --benchmark_filter=BM_BuildVs \\
        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \\
        --benchmark_out=vs.json --benchmark_out_format=json
    python3 scripts/build_vs_tables.py vs.json

Prints two Markdown tables (bits/key down, keys across), every figure the
median of the run's repetitions: compact over blocked, with how many cells are
at most 2x and 3x; then each cell as "compact ns/key: compact over the
built-in / blocked over the built-in", with how many compact and blocked cells
at 1-8 keys are within 1.5x of the built-in. The three policies of a cell are
timed interleaved in one benchmark, so each ratio divides figures of one run.
"""
import json
import re
import sys


def main():
    with open(sys.argv[1]) as f:
        runs = json.load(f)["benchmarks"]
    cells = {}
    for r in runs:
        if r.get("aggregate_name") != "median":
            continue
        m = re.match(r"BM_BuildVs/bpk:(\d+)/n:(\d+)", r["name"])
        if m:
            cells[(int(m.group(1)), int(m.group(2)))] = r
    bpks = sorted({b for b, _ in cells})
    keys = sorted({n for _, n in cells})
    header = "| bits/key \\ keys | " + " | ".join(str(n) for n in keys) + " |"
    rule = "|---" * (len(keys) + 1) + "|"
    ratios = [cells[c]["c_over_blocked"] for c in cells]
    print(f"Compact over blocked: {sum(v <= 2 for v in ratios)} of {len(ratios)} cells "
          f"at most 2x, {sum(v <= 3 for v in ratios)} at most 3x\n")
    print(header)
    print(rule)
    for b in bpks:
        row = [f"{cells[(b, n)]['c_over_blocked']:.2f}" if (b, n) in cells else "" for n in keys]
        print(f"| {b} | " + " | ".join(row) + " |")
    tiny = [c for c in cells if c[1] <= 8]
    compact_ok = sum(cells[c]["c_over_builtin"] <= 1.5 for c in tiny)
    blocked_ok = sum(cells[c]["blocked_over_builtin"] <= 1.5 for c in tiny)
    print(f"\ncompact ns/key: compact over built-in / blocked over built-in; at 1-8 keys "
          f"{compact_ok} of {len(tiny)} compact cells and {blocked_ok} of {len(tiny)} "
          f"blocked cells are within 1.5x of the built-in\n")
    print(header)
    print(rule)
    for b in bpks:
        row = []
        for n in keys:
            c = cells.get((b, n))
            row.append(f"{c['compact_ns']:.1f}: {c['c_over_builtin']:.2f} / "
                       f"{c['blocked_over_builtin']:.2f}" if c else "")
        print(f"| {b} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
