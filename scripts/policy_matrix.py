#!/usr/bin/env python3
"""Tables and heat map of the policy workload matrix (bench/policy_matrix_bench.cc).

  python3 scripts/policy_matrix.py bench/results/policy_matrix.json \
      [--md bench/results/policy_matrix.md] [--png bench/results/policy_matrix.png]

Per cell (value size, block size, key shape, bits/key) and policy: data-block
reads per absent Get over the built-in's, both counted over the same Gets,
with a 95% interval. A count of reads is a sum over the filters the Gets
probe: its variance is the binomial one, G p (1 - p), plus the spread of
FPR from filter to filter, G (g - 1) var(p) for g Gets per filter (a
clustered sample). var(p) is a Bloom filter's: its FPR is q^k for the share
q of set bits, and the number of set bits of m has variance
m e^-x (1 - (1 + x) e^-x), x = k n / m; a compact version-2 filter's FPR is
exactly 2^-R (no spread). The interval of the ratio is the delta method's on
log(ours / built-in). With hundreds of cells, one in forty cells where two
filters are equally good lies above 1.96 standard deviations by chance, so a
cell breaks the rule when ours exceeds the built-in by more than z* standard
deviations of the difference, z* the one-sided Bonferroni bound for the
matrix's comparisons at 5% family-wise (about 4.0 for 2,000 comparisons);
cells above 1.96 are listed too. A cell also breaks the rule when the policy
wrote more filter bytes than the built-in + 2% and + 3 bytes per filter.
Exits 1 if any cell breaks it.
"""
import argparse
import json
import math
import sys
from collections import defaultdict

Z = 1.96  # per-cell 95% intervals


def one_sided_z(alpha):
    """z with P(N(0,1) > z) = alpha (bisection on erfc)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(mid / math.sqrt(2)) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def bloom_spread(n, m, k):
    """Model FPR of a Bloom filter of m bits, n keys, k probes, and its sd
    from filter to filter."""
    if n <= 0 or m <= 0:
        return 0.0, 0.0
    x = k * n / m
    q = -math.expm1(-x)
    set_sd = math.sqrt(max(0.0, m * math.exp(-x) * (1 - (1 + x) * math.exp(-x)))) / m
    return q ** k, k * q ** (k - 1) * set_sd


def compact_spare(n):
    return 0.0 if n <= 64 else (0.08 if n <= 16384 else 0.11)


def filter_model(policy, row):
    """(model FPR, its sd across filters) of one filter of this row's average size:
    the layouts of plugin/policy/filter_sizing.h and LevelDB's built-in."""
    b = row["bits_per_key"]
    n = row["filter_keys"] / max(row["filters"], 1)
    m = 8 * max(math.ceil(n * b / 8), 8)
    if policy == "builtin":
        return bloom_spread(n, m, min(30, max(1, int(b * 0.69))))
    k = min(30, max(1, round(math.log(2) * m / n)))
    bloom = bloom_spread(n, m, k)
    if policy == "compact" and n <= 65536:
        r = min(32, math.floor(m / (n * (1 + compact_spare(n)))))
        if r >= 1 and 2.0 ** -r < bloom[0]:
            return 2.0 ** -r, 0.0
    return bloom


def count_variance(policy, row):
    g_total = row["gets"]
    p_model, sd = filter_model(policy, row)
    p = max(row["reads"] / max(g_total, 1), p_model)
    per_filter = g_total / max(row["filters"], 1)
    return g_total * p * (1 - p) + g_total * max(per_filter - 1, 0) * sd * sd


def compare(policy, ours, builtin):
    """(ratio, lo, hi, z): ours/built-in reads, its 95% interval, and the
    difference in standard deviations."""
    a, c = ours["reads"], builtin["reads"]
    va, vc = count_variance(policy, ours), count_variance("builtin", builtin)
    z = (a - c) / math.sqrt(va + vc) if va + vc > 0 else (math.inf if a > c else 0.0)
    if a + c == 0:
        return None, 0.0, math.inf, z
    if c == 0:
        return math.inf, 0.0, math.inf, z
    if a == 0:
        return 0.0, 0.0, Z * math.sqrt(va + vc) / c, z
    r = a / c
    spread = Z * math.sqrt(va / (a * a) + vc / (c * c))
    return r, r * math.exp(-spread), r * math.exp(spread), z


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

    comparisons = sum(1 for c in cells.values() if "builtin" in c for p in policies if p in c)
    z_rule = one_sided_z(0.05 / max(comparisons, 1))
    out = []
    broken = []
    above_95 = []
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
            r, lo, hi, z = compare(p, o, b)
            if z > z_rule:
                broken.append((p, key, "reads", o["reads"], b["reads"]))
            elif z > Z:
                above_95.append((p, key, o["reads"], b["reads"], z))
            if r is not None and (p not in worst or (z, r) > worst[p][:2]):
                worst[p] = (z, r, key, o, b)
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
        "Made by `scripts/policy_matrix.sh` (`policy_matrix_bench "
        f"--data_kib={meta.get('data_kib')} --gets={meta.get('gets')}`, then this table, the rule "
        "check and the heat map [policy_matrix.png](policy_matrix.png) by "
        "`scripts/policy_matrix.py`) on "
        f"{meta.get('machine', 'an unrecorded machine')}, SIMD target {meta.get('simd_target')}"
        + (f", at commit `{meta['commit']}`" if "commit" in meta else "") + ". "
        "Each cell is one real LevelDB database on disk per policy (same keys, values and table "
        "layout; block cache off), "
        f"{meta.get('gets')} distinct absent Gets each. A figure is our reads over the built-in's; "
        "`0/0`: neither read a block; `inf`: the built-in read none and we read some. "
        f"**Bold**: ours above the built-in's by more than z* = {z_rule:.2f} standard deviations, "
        f"the one-sided Bonferroni bound at 5% family-wise for {comparisons} comparisons "
        "(the rule is broken); *italic*: above 1.96 only (by chance in one cell in forty of two "
        "equally good filters). The interval and its model: `scripts/policy_matrix.py`.\n")
    out.append(f"Cells: {len(cells)}; comparisons: {comparisons}; cells breaking the rule: "
               f"**{len(broken)}**; above 1.96 standard deviations only: {len(above_95)}"
               + "".join(f"; {p} at {k[0]} B values, {k[1]} B blocks, {k[2]} keys, {k[3]} bits/key: "
                         f"{a} / {c} reads ({z:+.2f} sd)" for p, k, a, c, z in above_95) + ".\n")
    out.append("| policy | worst cell (value, block, keys, bits/key) | ours / built-in reads | 95% interval | difference in sd | filter bytes / built-in's (all cells) |")
    out.append("|---|---|---|---|---|---|")
    for p in policies:
        acc = bytes_row[p]
        if p in worst:
            z, r, key, o, b = worst[p]
            _, lo2, hi2, _ = compare(p, o, b)
            cell = f"{key[0]} B, {key[1]} B, {key[2]}, {key[3]}"
            out.append(f"| {p} | {cell} | {o['reads']} / {b['reads']} = {fmt_ratio(r, lo2, hi2)} | "
                       f"{lo2:.2f}-{hi2:.2f} | {z:+.2f} | {acc[0] / max(acc[1], 1):.3f} |")
    out.append("")
    out.append("Median of ours / built-in reads over the cells of each bits/key (cells where "
               "either read a block), and filter bytes per key (all cells):\n")
    out.append("| policy | " + " | ".join(f"{b} b/k" for b in bits) + " | bytes/key vs built-in |")
    out.append("|" + "---|" * (2 + len(bits)))
    for p in policies:
        row = [p]
        for b in bits:
            ratios = []
            for key, c in cells.items():
                if key[3] != b or p not in c or "builtin" not in c:
                    continue
                a, base = c[p]["reads"], c["builtin"]["reads"]
                if a + base > 0:
                    ratios.append(a / base if base else math.inf)
            ratios.sort()
            row.append(f"{ratios[len(ratios) // 2]:.2f}" if ratios else "")
        acc = bytes_row[p]
        row.append(f"{acc[0] / max(acc[3], 1):.3f} / {acc[1] / max(acc[3], 1):.3f}")
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    def grid(cell_text):
        """One row per (value, block, keys), one column per bits/key."""
        out.append("| value | block | keys | " + " | ".join(f"{b} b/k" for b in bits) + " |")
        out.append("|" + "---|" * (3 + len(bits)))
        for v in values:
            for bl in blocks:
                for s in shapes:
                    row = [str(v), str(bl), s]
                    row += [cell_text(cells.get((v, bl, s, b), {})) for b in bits]
                    out.append("| " + " | ".join(row) + " |")
        out.append("")

    def ratio_text(p, c):
        o, base = c.get(p), c.get("builtin")
        if o is None or base is None:
            return ""
        r, lo, hi, z = compare(p, o, base)
        text = fmt_ratio(r, lo, hi)
        return f"**{text}**" if z > z_rule else f"*{text}*" if z > Z else text

    for p in policies:
        out.append(f"## {p}\n")
        grid(lambda c, p=p: ratio_text(p, c))
    out.append("## Reads per absent Get, built-in\n")
    grid(lambda c: "" if "builtin" not in c else
         f"{c['builtin']['reads'] / max(c['builtin']['gets'], 1):.4f}")
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
            if ax is axes[0][0]:
                ax.set_yticklabels([f"{v} B values, {bl // 1024} KiB blocks, {s}"
                                    for v, bl, s in rows_keys], fontsize=5)
            else:
                ax.set_yticklabels([])
            ax.set_title(f"{p}: log2(reads / built-in's)")
        fig.colorbar(im, ax=axes[0].tolist(), shrink=0.6, label="log2 ratio (blue: fewer reads)")
        fig.savefig(args.png, dpi=110, bbox_inches="tight")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
