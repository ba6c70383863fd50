#!/usr/bin/env python3
"""The plot of bench/RESULTS.md's "Against RocksDB" (bench/results/rocksdb_e2e.png).

Usage: plot_e2e.py <rocksdb_e2e.json> <out.png>

Reads the JSON written by `rocksdb_e2e_bench --json=...` and draws one bar
chart per measure (filter bytes/key, data-block reads per absent Get, absent
and present Get latency, cold absent Gets/s, write throughput), one bar per
contender: LevelDB ones in blue, RocksDB ones in orange.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    rows = data["results"]
    names = [r["name"].replace(" + ", "\n+ ").replace("rocksdb ", "rocksdb\n")
             .replace("leveldb built-in", "leveldb\nbuilt-in") for r in rows]
    colors = ["tab:orange" if r["name"].startswith("rocksdb") else "tab:blue" for r in rows]

    def val(r, key):
        v = r.get(key)
        return float("nan") if v is None else v

    panels = [
        ("filter bytes per key\n(LevelDB: with offset array, est.)",
         "filter_block_bytes_per_key", False, "{:.3f}"),
        ("data-block reads per absent Get", "reads_per_absent_get", True, "{:.4f}"),
        ("absent Get p50 (us, page cache)", "absent_p50_us", False, "{:.2f}"),
        ("absent Get p99 (us, page cache)", "absent_p99_us", False, "{:.2f}"),
        ("present Get p50 (us, page cache)", "present_p50_us", False, "{:.2f}"),
        ("cold absent Gets/s\n(table files dropped from page cache)",
         "cold_absent_gets_per_s", True, "{:.0f}"),
        ("fill, thousand keys/s\n(incl. final full compaction)",
         "fill_and_compact_keys_per_s", False, "{:.0f}"),
    ]
    fig, axes = plt.subplots(2, 4, figsize=(20, 9))
    for ax, (title, key, log, label) in zip(axes.flat, panels):
        values = [val(r, key) for r in rows]
        if key == "fill_and_compact_keys_per_s":
            values = [v / 1e3 for v in values]
        bars = ax.bar(range(len(rows)), values, color=colors)
        if log:
            ax.set_yscale("log")
            positive = [v for v in values if v == v and v > 0]
            if positive:
                ax.set_ylim(bottom=min(positive) / 3)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(names, fontsize=7)
        for b, v in zip(bars, values):
            if v == v:  # not NaN
                ax.annotate(label.format(v), (b.get_x() + b.get_width() / 2, v),
                            ha="center", va="bottom", fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    axes.flat[-1].axis("off")
    axes.flat[-1].text(
        0.0, 0.5,
        f"{data['keys']:,} keys, {data['value_size']}-byte values,\n"
        f"{data['bits_per_key']} bits/key, one thread,\n"
        f"LevelDB 1.23 + blockbloom (blue)\nvs RocksDB {data['rocksdb']} (orange).\n"
        f"Block cache off in both engines.\n"
        f"Cold: median of {data['cold_runs']} runs of {data['cold_ms']} ms.",
        fontsize=10, va="center")
    fig.suptitle("LevelDB + blockbloom against RocksDB (bench/rocksdb_e2e_bench.cc)")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)


if __name__ == "__main__":
    main()
