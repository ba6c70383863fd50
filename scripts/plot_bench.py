#!/usr/bin/env python3
"""Plots and tables for blockbloom's benchmark results.

Usage: plot_bench.py <results dir>

Reads filter_bench.json, fpr.json and leveldb_e2e.json (Google Benchmark JSON
written by scripts/run_bench.sh) and writes into the same directory:
  probe_ns_per_key.png   probe ns/key against filter size, with the floors
  build_ns_per_key.png   build ns/key against filter size
  window_sweep.png       batch probe ns/key against prefetch window
  fpr_vs_bits.png        measured FPR against bits/key, with the models
  tables.md              the run's tables, with every ratio and each target
                         stated met/missed

Times are medians over repetitions when the run has them (cpu_time: the
thread's own time, which other processes on a shared machine do not inflate),
divided by the keys each iteration handles.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KIB = 1024
MIB = KIB * 1024
GIB = MIB * 1024


def load(path):
    """name -> (ns per key, counters) from one Google Benchmark JSON file."""
    if not os.path.exists(path):
        return {}, {}
    with open(path) as f:
        data = json.load(f)
    out = {}
    has_median = any(b.get("aggregate_name") == "median" for b in data["benchmarks"])
    for b in data["benchmarks"]:
        if has_median and b.get("aggregate_name") != "median":
            continue
        if b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        name = name.split("/iterations:")[0]
        per = b.get("keys_per_iter", 1.0) or 1.0
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        out[name] = (b["cpu_time"] * scale / per, b)
    return out, data.get("context", {})


def size_label(n):
    if n >= GIB:
        return f"{n // GIB} GiB"
    if n >= MIB:
        return f"{n // MIB} MiB"
    return f"{n // KIB} KiB"


def fmt(x, digits=2):
    if x is None:
        return "–"
    return f"{x:.{digits}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


class Results:
    def __init__(self, runs):
        self.runs = runs

    def ns(self, name):
        r = self.runs.get(name)
        return r[0] if r else None

    def counter(self, name, key):
        r = self.runs.get(name)
        return r[1].get(key) if r else None

    def sizes(self, prefix="probe/"):
        s = set()
        for name in self.runs:
            if name.startswith(prefix):
                s.add(int(name.split("/")[-1]))
        return sorted(s)


def probe_name(contender, mode, keys, size):
    return f"probe/{contender}/{mode}/{keys}/{size}"


def floor_of(mode, size):
    return {
        "single": f"floor/hash/single/present/{size}",
        "batch_keys": f"floor/hash+line/batch_keys/present/{size}",
        "batch_hashes": f"floor/line/batch_hashes/present/{size}",
    }[mode]


PROBES = [
    ("leveldb", "single", "LevelDB built-in, KeyMayMatch"),
    ("bbpolicy", "single", "blockbloom policy, KeyMayMatch"),
    ("blocked", "single", "blockbloom MayContain"),
    ("blocked-best", "batch_keys", "blockbloom MayContainKeys (best target)"),
    ("blocked-best", "batch_hashes", "blockbloom MayContainHashes (best target)"),
    ("blocked-scalar", "batch_hashes", "blockbloom MayContainHashes (scalar target)"),
    ("textbook", "single", "textbook Bloom, one key"),
    ("textbook", "batch_keys", "textbook Bloom, batch"),
    ("hashset", "single", "absl::flat_hash_set, one key"),
]
FLOORS = [
    ("floor/hash/single/present", "floor: XXH3 of the key"),
    ("floor/line/single/present", "floor: one cache line, no prefetch"),
    ("floor/line/batch_hashes/present", "floor: one cache line, prefetched"),
    ("floor/hash+line/batch_keys/present", "floor: hash + line, prefetched"),
]


def probe_tables(r, lines):
    sizes = r.sizes()
    for keys in ("present", "absent"):
        lines.append(f"\n#### Probe, {keys} keys: ns/key (median) and ratio to its floor\n")
        lines.append("Floor of a probe: `single` → hash of the key; `batch_keys` → hash + "
                     "prefetched cache line; `batch_hashes` → prefetched cache line.\n")
        header = "| contender | mode | " + " | ".join(size_label(s) for s in sizes) + " |"
        lines.append(header)
        lines.append("|" + "---|" * (2 + len(sizes)))
        for fname, label in FLOORS:
            cells = [fmt(r.ns(f"{fname}/{s}")) for s in sizes]
            lines.append(f"| {label} | | " + " | ".join(cells) + " |")
        for contender, mode, label in PROBES:
            cells = []
            for s in sizes:
                v = r.ns(probe_name(contender, mode, keys, s))
                f = r.ns(floor_of(mode, s))
                cells.append("–" if v is None else f"{v:.2f} ({ratio(v, f):.1f}×)")
            lines.append(f"| {label} | {mode} | " + " | ".join(cells) + " |")
        if keys == "absent":
            lines.append("\nMeasured FPR (absent keys answered \"may contain\"), same runs:\n")
            lines.append("| filter | " + " | ".join(size_label(s) for s in sizes) + " |")
            lines.append("|" + "---|" * (1 + len(sizes)))
            for contender, mode, label in [("blocked-best", "batch_hashes", "blockbloom"),
                                           ("leveldb", "single", "LevelDB built-in"),
                                           ("textbook", "single", "textbook")]:
                cells = []
                for s in sizes:
                    v = r.counter(probe_name(contender, mode, "absent", s), "positive_rate")
                    cells.append("–" if v is None else f"{100 * v:.3f}%")
                lines.append(f"| {label} | " + " | ".join(cells) + " |")


def build_table(r, lines):
    sizes = r.sizes("build/")
    if not sizes:
        return
    lines.append("\n#### Build: ns/key (median), whole filter from n keys\n")
    lines.append("| contender | " + " | ".join(size_label(s) for s in sizes) + " |")
    lines.append("|" + "---|" * (1 + len(sizes)))
    for c, label in [("leveldb", "LevelDB built-in CreateFilter"),
                     ("bbpolicy-best", "blockbloom CreateFilter (best target)"),
                     ("bbpolicy-scalar", "blockbloom CreateFilter (scalar target)"),
                     ("textbook", "textbook Bloom"),
                     ("hashset", "absl::flat_hash_set insert")]:
        cells = [fmt(r.ns(f"build/{c}/whole/all/{s}")) for s in sizes]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")


def verdict(ok):
    return "**met**" if ok else "**missed**"


def targets_table(r, fpr_runs, lines):
    lines.append("\n#### Targets, ratios from this run\n")
    lines.append("| target | size | keys | measured | ratio | bound | verdict |")
    lines.append("|---|---|---|---|---|---|---|")
    sizes = r.sizes()
    for s in [s for s in sizes if s <= 1 * MIB]:
        for keys in ("present", "absent"):
            ours = r.ns(probe_name("bbpolicy", "single", keys, s))
            theirs = r.ns(probe_name("leveldb", "single", keys, s))
            q = ratio(ours, theirs)
            if q is None:
                continue
            lines.append(f"| in cache, one probe via policy / built-in | {size_label(s)} | {keys} | "
                         f"{ours:.2f} vs {theirs:.2f} ns | {q:.3f} | ≤ 0.25 | {verdict(q <= 0.25)} |")
    for s in [s for s in sizes if s >= 256 * MIB]:
        for keys in ("present", "absent"):
            ours = r.ns(probe_name("blocked-best", "batch_keys", keys, s))
            theirs = r.ns(probe_name("leveldb", "single", keys, s))
            q = ratio(ours, theirs)
            if q is not None:
                lines.append(f"| out of cache, batched keys / built-in | {size_label(s)} | {keys} | "
                             f"{ours:.2f} vs {theirs:.2f} ns | {q:.3f} | ≤ 0.167 | "
                             f"{verdict(q <= 1 / 6)} |")
        for keys in ("present", "absent"):
            for mode in ("batch_hashes", "batch_keys"):
                ours = r.ns(probe_name("blocked-best", mode, keys, s))
                fl = r.ns(floor_of(mode, s))
                q = ratio(ours, fl)
                if q is not None:
                    lines.append(f"| out of cache, {mode} / its cache-line floor | {size_label(s)} | "
                                 f"{keys} | {ours:.2f} vs {fl:.2f} ns | {q:.2f} | ≤ 1.5 | "
                                 f"{verdict(q <= 1.5)} |")
    for s in r.sizes("build/"):
        ours = r.ns(f"build/bbpolicy-best/whole/all/{s}")
        theirs = r.ns(f"build/leveldb/whole/all/{s}")
        q = ratio(theirs, ours)
        if q is not None:
            lines.append(f"| build speed-up, built-in / blockbloom CreateFilter | {size_label(s)} | all | "
                         f"{theirs:.2f} vs {ours:.2f} ns | {q:.2f}× | ≥ 3× | {verdict(q >= 3)} |")
    for s in sizes:
        ours = r.counter(probe_name("blocked-best", "batch_hashes", "absent", s), "positive_rate")
        theirs = r.counter(probe_name("leveldb", "single", "absent", s), "positive_rate")
        if ours is not None:
            t = "–" if theirs is None else f"{100 * theirs:.3f}%"
            lines.append(f"| FPR at 10 bits/key (built-in beside) | {size_label(s)} | absent | "
                         f"{100 * ours:.3f}% (built-in {t}) | – | ≤ 1.0% | {verdict(ours <= 0.01)} |")
    b10 = [(n, b) for n, (_, b) in fpr_runs.items() if n.startswith("fpr/blocked/b10/")]
    for n, b in b10:
        lines.append(f"| FPR at 10 bits/key, FPR run | {int(n.split('/')[-1]):,} keys | absent | "
                     f"{100 * b['fpr']:.3f}% (model {100 * b['model_fpr']:.3f}%) | – | ≤ 1.0% | "
                     f"{verdict(b['fpr'] <= 0.01)} |")


def window_table(r, lines):
    rows = {}
    for name in r.runs:
        if name.startswith("window/"):
            _, who, w, _, size = name.split("/")
            rows.setdefault(int(size), {}).setdefault(int(w[1:]), {})[who] = r.ns(name)
    for size in sorted(rows):
        lines.append(f"\n#### Prefetch window sweep, absent keys, {size_label(size)} filter (ns/key)\n")
        ws = sorted(rows[size])
        lines.append("| | " + " | ".join(f"w={w}" for w in ws) + " |")
        lines.append("|" + "---|" * (1 + len(ws)))
        for who in ("blocked-best", "floor-line"):
            lines.append(f"| {who} | " + " | ".join(fmt(rows[size][w].get(who)) for w in ws) + " |")
        best = min(ws, key=lambda w: rows[size][w].get("blocked-best") or 1e9)
        lines.append(f"\nBest window at {size_label(size)}: {best} "
                     f"({fmt(rows[size][best].get('blocked-best'))} ns/key).")
    return rows


def fpr_table(fpr_runs, lines):
    table = {}
    for name, (_, b) in fpr_runs.items():
        _, who, bits, _, n = name.split("/")
        table.setdefault(who, {})[int(bits[1:])] = b
    if not table:
        return table
    bits = sorted(next(iter(table.values())))
    n = int(next(iter(fpr_runs)).split("/")[-1])
    lines.append(f"\n#### FPR against bits/key, {n:,} keys, {n:,} absent probes: measured (model), %\n")
    lines.append("| structure | " + " | ".join(str(b) for b in bits) + " |")
    lines.append("|" + "---|" * (1 + len(bits)))
    for who in ("blocked", "leveldb", "textbook"):
        if who not in table:
            continue
        cells = [f"{100 * table[who][b]['fpr']:.3g} ({100 * table[who][b]['model_fpr']:.3g})"
                 for b in bits if b in table[who]]
        lines.append(f"| {who} | " + " | ".join(cells) + " |")
    return table


def e2e_table(e2e, lines):
    if not e2e:
        return
    lines.append("\n#### End to end: LevelDB Get (median µs/Get), filter answers and file reads per Get\n")
    lines.append("For readmissing every filter match is a false positive. File reads are "
                 "RandomAccessFile::Read calls (data blocks not in the 8 MiB block cache).\n")
    lines.append("| workload | filter | µs/Get | filter probes/Get | matches/Get | file reads/Get | "
                 "time vs built-in |")
    lines.append("|---|---|---|---|---|---|---|")
    for wl in ("readrandom", "readmissing"):
        names = [n for n in e2e if f"/{wl}/" in n]
        if not names:
            continue
        n = names[0].split("/")[-1]
        base = e2e.get(f"e2e/leveldb/{wl}/{n}")
        for who, label in (("leveldb", "built-in"), ("blockbloom", "blockbloom")):
            r = e2e.get(f"e2e/{who}/{wl}/{n}")
            if not r:
                continue
            c = r[1]
            rel = f"{r[0] / base[0]:.3f}" if base else "–"
            lines.append(f"| {wl} ({int(n):,} keys) | {label} | {r[0] / 1e3:.3f} | "
                         f"{c.get('filter_probes_per_get', 0):.3f} | "
                         f"{c.get('filter_matches_per_get', 0):.4f} | "
                         f"{c.get('reads_per_get', 0):.4f} | {rel} |")


def plot_probes(r, out):
    sizes = r.sizes()
    if not sizes:
        return
    fig, axes = plt.subplots(1, 2, figsize=(15, 7), sharey=True)
    for ax, keys in zip(axes, ("present", "absent")):
        for contender, mode, label in PROBES:
            ys = [r.ns(probe_name(contender, mode, keys, s)) for s in sizes]
            pts = [(s, y) for s, y in zip(sizes, ys) if y is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        for fname, label in FLOORS:
            ys = [r.ns(f"{fname}/{s}") for s in sizes]
            pts = [(s, y) for s, y in zip(sizes, ys) if y is not None]
            if pts:
                style = ["-", "--", ":", "-."][FLOORS.index((fname, label))]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=style, color="black",
                        linewidth=2.2, alpha=0.45, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_label(s) for s in sizes])
        ax.set_xlabel("filter size (10 bits/key, 16-byte keys)")
        ax.set_title(f"probe, {keys} keys")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ns per key (median, lower is better)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=4)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    fig.savefig(os.path.join(out, "probe_ns_per_key.png"), dpi=110)
    plt.close(fig)


def plot_build(r, out):
    sizes = r.sizes("build/")
    if not sizes:
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for c, label in [("leveldb", "LevelDB built-in CreateFilter"),
                     ("bbpolicy-best", "blockbloom CreateFilter (best target)"),
                     ("bbpolicy-scalar", "blockbloom CreateFilter (scalar)"),
                     ("textbook", "textbook Bloom"), ("hashset", "absl::flat_hash_set")]:
        ys = [r.ns(f"build/{c}/whole/all/{s}") for s in sizes]
        ax.plot(sizes, ys, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([size_label(s) for s in sizes])
    ax.set_xlabel("filter size")
    ax.set_ylabel("ns per key (median)")
    ax.set_title("build")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "build_ns_per_key.png"), dpi=110)
    plt.close(fig)


def plot_windows(rows, out):
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for size in sorted(rows):
        ws = sorted(rows[size])
        ax.plot(ws, [rows[size][w].get("blocked-best") for w in ws], marker="o",
                label=f"MayContainHashes, {size_label(size)}")
        ax.plot(ws, [rows[size][w].get("floor-line") for w in ws], linestyle="--",
                label=f"cache-line floor, {size_label(size)}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("prefetch window (keys)")
    ax.set_ylabel("ns per key (median)")
    ax.set_title("batch probe against prefetch window, absent keys")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "window_sweep.png"), dpi=110)
    plt.close(fig)


def plot_fpr(table, out):
    if not table:
        return
    fig, ax = plt.subplots(figsize=(8, 5.5))
    colors = {"blocked": "C0", "leveldb": "C1", "textbook": "C2"}
    labels = {"blocked": "blockbloom (blocked)", "leveldb": "LevelDB built-in",
              "textbook": "textbook Bloom"}
    models = {"blocked": "Putze et al. blocked model", "leveldb": "standard model, LevelDB's k",
              "textbook": "standard model (1-e^{-kn/m})^k"}
    for who, rows in table.items():
        bits = sorted(rows)
        ax.plot(bits, [rows[b]["fpr"] for b in bits], marker="o", linestyle="none",
                color=colors.get(who), label=f"{labels.get(who, who)}, measured")
        ax.plot(bits, [rows[b]["model_fpr"] for b in bits], linestyle="-", alpha=0.6,
                color=colors.get(who), label=models.get(who, who))
    ax.set_yscale("log")
    ax.set_xlabel("bits per key")
    ax.set_ylabel("false-positive rate")
    ax.set_title("FPR against bits/key")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fpr_vs_bits.png"), dpi=110)
    plt.close(fig)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
    runs, context = load(os.path.join(out, "filter_bench.json"))
    fpr_runs, _ = load(os.path.join(out, "fpr.json"))
    e2e, _ = load(os.path.join(out, "leveldb_e2e.json"))
    r = Results(runs)
    lines = ["<!-- generated by scripts/plot_bench.py; do not edit -->"]
    if context:
        lines.append(f"Highway target: best `{context.get('highway_best_target')}`, scalar "
                     f"`{context.get('highway_scalar_target')}`; mode `{context.get('blockbloom_mode')}`; "
                     f"run {context.get('date')}, load average {context.get('load_avg')}.")
    targets_table(r, fpr_runs, lines)
    probe_tables(r, lines)
    build_table(r, lines)
    rows = window_table(r, lines)
    table = fpr_table(fpr_runs, lines)
    e2e_table(e2e, lines)
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    plot_probes(r, out)
    plot_build(r, out)
    plot_windows(rows, out)
    plot_fpr(table, out)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
