#!/usr/bin/env python3
"""Tables and heat map of the policy workload matrix (bench/policy_matrix_bench.cc).

  python3 scripts/policy_matrix.py bench/results/policy_matrix.json \
      [--md bench/results/policy_matrix.md] [--png bench/results/policy_matrix.png]

Per cell (value size, block size, key shape, bits/key) and policy: data-block
reads per absent Get over the built-in's, both counted over the same Gets,
with a 95% interval (Wilson interval of ours / (ours + built-in), the
conditional binomial of two Poisson counts). A cell breaks the rule when the
interval lies above 1.00, or when the policy wrote more filter bytes than the
built-in + 2% and + 3 bytes per filter. Exits 1 if any cell breaks it.
"""
import argparse
import json
import math
import sys
from collections import defaultdict

Z = 1.96


def wilson(k, n):
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + Z * Z / n
    center = (p + Z * Z / (2 * n)) / d
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return max(0.0, center - half), min(1.0, center + half)


def ratio_interval(ours, builtin):
    """Ratio ours/builtin and its 95% interval (None where undefined)."""
    if ours + builtin == 0:
        return None, 0.0, math.inf
    lo, hi = wilson(ours, ours + builtin)
    to_ratio = lambda p: math.inf if p >= 1 else p / (1 - p)
    ratio = math.inf if builtin == 0 else ours / builtin
    return ratio, to_ratio(lo), to_ratio(hi)


def load(path):
    meta, rows = {}, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            d = json.loads(line)
            if "meta" in d:
                meta = d["meta"]
            else:
                rows.append(d)
    return meta, rows


def fmt_ratio(r, lo, hi):
    if r is None:
        return "0/0"
    if r == math.inf:
        return "inf"
    return f"{r:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--md", help="write the tables here (default: stdout)")
    ap.add_argument("--png", help="write the heat map here")
    args = ap.parse_args()
    meta, rows = load(args.json)
    cells = defaultdict(dict)
    for d in rows:
        key = (d["value_size"], d["block_size"], d["shape"], d["bits_per_key"])
        cells[key][d["policy"]] = d
    values = sorted({k[0] for k in cells})
    blocks = sorted({k[1] for k in cells})
    shapes = [s for s in ["sequential", "random", "prefix", "short"] if any(k[2] == s for k in cells)]
    bits = sorted({k[3] for k in cells})
    policies = [p for p in ["blocked", "compact", "filtereddb"] if any(p in c for c in cells.values())]

    out = []
    broken = []
    worst = {}  # policy -> (lower bound, ratio, key)
    bytes_row = defaultdict(lambda: [0, 0, 0, 0])  # policy -> ours, builtin, filters, keys
    for key, c in cells.items():
        b = c.get("builtin")
        if b is None:
            continue
        for p in policies:
            o = c.get(p)
            if o is None:
                continue
            r, lo, hi = ratio_interval(o["reads"], b["reads"])
            if lo > 1.0:
                broken.append((p, key, "reads", o["reads"], b["reads"]))
            if r is not None and (p not in worst or (lo, r) > worst[p][:2]):
                worst[p] = (lo, r, key, o["reads"], b["reads"])
            allowed = max(b["filter_bytes"] * 1.02, b["filter_bytes"] + 3 * b["filters"])
            if o["filter_bytes"] > allowed:
                broken.append((p, key, "bytes", o["filter_bytes"], b["filter_bytes"]))
            acc = bytes_row[p]
            acc[0] += o["filter_bytes"]
            acc[1] += b["filter_bytes"]
            acc[2] += b["filters"]
            acc[3] += b["filter_keys"]

    out.append("# The policy matrix: data-block reads of absent Gets, blockbloom / LevelDB built-in\n")
    out.append(
        f"Made by `build/release/bench/policy_matrix_bench --data_kib={meta.get('data_kib')} "
        f"--gets={meta.get('gets')} --out=bench/results/policy_matrix.json` and "
        "`python3 scripts/policy_matrix.py bench/results/policy_matrix.json --md "
        "bench/results/policy_matrix.md --png bench/results/policy_matrix.png` "
        f"(SIMD target {meta.get('simd_target')}; machine: {meta.get('machine', 'see README')}). "
        "Each cell is one real LevelDB database on disk per policy (same keys, values and table "
        "layout; block cache off), "
        f"{meta.get('gets')} distinct absent Gets each. A figure is our reads over the built-in's; "
        "`0/0`: neither read a block; `inf`: the built-in read none and we read some. "
        "**Bold**: the 95% interval lies above 1.00 (the rule is broken).\n")
    out.append(f"Cells: {len(cells)}; cells breaking the rule: **{len(broken)}**.\n")
    out.append("| policy | worst cell (value, block, keys, bits/key) | ours / built-in reads | 95% interval | filter bytes / built-in's (all cells) |")
    out.append("|---|---|---|---|---|")
    for p in policies:
        acc = bytes_row[p]
        if p in worst:
            lo, r, key, a, c = worst[p]
            _, lo2, hi2 = ratio_interval(a, c)
            cell = f"{key[0]} B, {key[1]} B, {key[2]}, {key[3]}"
            out.append(f"| {p} | {cell} | {a} / {c} = {fmt_ratio(r, lo2, hi2)} | "
                       f"{lo2:.2f}-{hi2:.2f} | {acc[0] / max(acc[1], 1):.3f} |")
    out.append("")
    for p in policies:
        out.append(f"## {p}\n")
        header = "| value | block | keys | " + " | ".join(f"{b} b/k" for b in bits) + " |"
        out.append(header)
        out.append("|" + "---|" * (3 + len(bits)))
        for v in values:
            for bl in blocks:
                for s in shapes:
                    row = [str(v), str(bl), s]
                    for b in bits:
                        c = cells.get((v, bl, s, b), {})
                        o, base = c.get(p), c.get("builtin")
                        if o is None or base is None:
                            row.append("")
                            continue
                        r, lo, hi = ratio_interval(o["reads"], base["reads"])
                        text = fmt_ratio(r, lo, hi)
                        row.append(f"**{text}**" if lo > 1.0 else text)
                    out.append("| " + " | ".join(row) + " |")
        out.append("")
    out.append("## Reads per absent Get, built-in\n")
    out.append("| value | block | keys | " + " | ".join(f"{b} b/k" for b in bits) + " |")
    out.append("|" + "---|" * (3 + len(bits)))
    for v in values:
        for bl in blocks:
            for s in shapes:
                row = [str(v), str(bl), s]
                for b in bits:
                    base = cells.get((v, bl, s, b), {}).get("builtin")
                    row.append("" if base is None else f"{base['reads'] / max(base['gets'], 1):.4f}")
                out.append("| " + " | ".join(row) + " |")
    out.append("")
    text = "\n".join(out) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    for p, key, what, a, c in broken:
        print(f"BROKEN {p} {key} {what}: ours {a}, built-in {c}", file=sys.stderr)
    print(f"{len(cells)} cells, {len(broken)} breaking the rule", file=sys.stderr)

    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
        rows_keys = [(v, bl, s) for v in values for bl in blocks for s in shapes]
        fig, axes = plt.subplots(1, len(policies), figsize=(5 * len(policies), 0.18 * len(rows_keys) + 2),
                                 squeeze=False)
        for ax, p in zip(axes[0], policies):
            grid = np.full((len(rows_keys), len(bits)), np.nan)
            for i, (v, bl, s) in enumerate(rows_keys):
                for j, b in enumerate(bits):
                    c = cells.get((v, bl, s, b), {})
                    o, base = c.get(p), c.get("builtin")
                    if o is None or base is None or o["reads"] + base["reads"] == 0:
                        continue
                    ratio = (o["reads"] + 0.5) / (base["reads"] + 0.5)
                    grid[i, j] = math.log2(ratio)
            im = ax.imshow(grid, aspect="auto", cmap="RdBu_r", vmin=-8, vmax=8, interpolation="nearest")
            ax.set_xticks(range(len(bits)))
            ax.set_xticklabels(bits)
            ax.set_xlabel("bits/key")
            ax.set_yticks(range(len(rows_keys)))
            ax.set_yticklabels([f"{v}B {bl // 1024}K {s}" for v, bl, s in rows_keys], fontsize=5)
            ax.set_title(f"{p}: log2(reads / built-in's)")
        fig.colorbar(im, ax=axes[0].tolist(), shrink=0.6, label="log2 ratio (blue: fewer reads)")
        fig.savefig(args.png, dpi=110, bbox_inches="tight")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
