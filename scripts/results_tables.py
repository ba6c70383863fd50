#!/usr/bin/env python3
"""Print the tables of bench/RESULTS.md from the committed raw results.

    python3 scripts/results_tables.py [TABLE ...] [--dir bench/results]

TABLE is one of: probe, probe-small, build, fpr, fpr-leveldb, tails, leveldb,
filtered-db, rocksdb (default: all of them, in the page's order). Every figure comes from
one file in --dir; each table names the file it reads. Kernel figures are the
medians of the run's repetitions (CPU ns per key, as scripts/kernel_targets.py
reads them); every ratio divides two figures of the same run.

The files, and the command that writes each (see bench/RESULTS.md for the
machines):
  kernel_bench-zen3-avx2-<commit>.json, kernel_bench-zen4-avx512-<commit>.json,
  kernel_bench-xeon-avx512-<commit>.json
      OUT=bench/results/<name>.json bash scripts/kernel_bench.sh [--big]
  fpr.json
      build/release/bench/filter_bench --benchmark_filter='^fpr/' \\
          --benchmark_min_time=0.1 --benchmark_out=bench/results/fpr.json
  tails_10k_probes.txt
      BLOCKBLOOM_TAIL_FULL=1 BLOCKBLOOM_TAIL_PROBES=10000 \\
          build/default/tests/blocked_format_test --gtest_filter='*Tails*'
  rocksdb_e2e.json
      build/release/bench/rocksdb_e2e_bench --cold_runs=5 --cold_ms=500 \\
          --json=bench/results/rocksdb_e2e.json
"""
import argparse
import glob
import json
import os
import re

import kernel_targets  # scripts/kernel_targets.py: medians of one kernel_bench run

KIB, MIB, GIB = 1024, 1024 * 1024, 1024 * 1024 * 1024
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernel_runs(directory):
    """(label, path) of the newest kernel_bench JSON of each machine."""
    runs = []
    for machine, label in (("zen3-avx2", "AMD EPYC Zen 3, AVX2"),
                           ("zen4-avx512", "AMD Zen 4, AVX-512"),
                           ("xeon-avx512", "Intel Xeon model 207, AVX-512")):
        paths = glob.glob(os.path.join(directory, f"kernel_bench-{machine}-*.json"))
        if paths:
            newest = max(paths, key=lambda p: json.load(open(p))["context"]["date"])
            runs.append((label, newest))
    return runs


def load_kernel(path):
    """name -> median ns per key (ns per call for create/tiny)."""
    out = {}
    for name, record in kernel_targets.records(path)[0].items():
        value = kernel_targets.ns_per_key(record)
        if value is not None:
            out[name] = value
    return out


def size_name(size):
    return f"{size // GIB} GiB" if size >= GIB else (
        f"{size // MIB} MiB" if size >= MIB else f"{size // KIB} KiB")


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()


def num(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def source(path, extra=""):
    print(f"From `{os.path.relpath(path, ROOT)}`{extra}:\n")


def machine_line(path):
    ctx = json.load(open(path))["context"]
    return (f" ({ctx['highway_best_target']} target, {ctx['num_cpus']} CPUs, "
            f"load {ctx['load_avg'][0]:.2f} at the start, {ctx['date'][:10]})")


PROBE_ROWS = (
    ("blockbloom policy `KeyMayMatch` (from a key)", "policy/blockbloom"),
    ("LevelDB built-in `KeyMayMatch`", "policy/leveldb"),
    ("`BlockedBloomFilter::MayContain` (from a key)", "key/best"),
    ("`BlockedBloomFilter::MayContainHash`, one call", "hash/best"),
    ("`InlineMayContainHash` (`-march=native` caller)", "hash/inline-api"),
    ("the same probe inlined into the loop", "hash/best-inlined"),
    ("FastLocalBloom (RocksDB's algorithm), one call", "hash/fastlocal-avx2"),
    ("FastLocalBloom, inlined into the loop", "hash/fastlocal-avx2-inlined"),
    ("`MayContainHash`, portable (SCALAR) target", "hash/scalar-target"),
    ("`MayContainHashes` (batch, default T2/w64)", "batch/T2/w64"),
    ("the same, filter on huge pages", "batch/T2-hugepages/w64"),
    ("floor: LevelDB's virtual call + XXH3 + one load", "floor/policy-hash-line"),
    ("floor: XXH3 of the key", "floor/hash"),
    ("floor: one unprefetched load of a random line", "floor/line"),
    ("floor: one load per key, the batch's prefetches", "floor/prefetched-T2/w64"),
)


def probe(directory):
    for label, path in kernel_runs(directory):
        ns = load_kernel(path)
        sizes = [s for s in (16 * KIB, MIB, 128 * MIB, GIB)
                 if f"hash/best/absent/{s}" in ns]
        print(f"**{label}**, ns per key, absent / present keys; from "
              f"`{os.path.relpath(path, ROOT)}`{machine_line(path)}:\n")
        header = ["ns/key"] + [size_name(s) for s in sizes]
        rows = []
        for title, name in PROBE_ROWS:
            cells = []
            for s in sizes:
                a = ns.get(f"{name}/absent/{s}")
                p = ns.get(f"{name}/present/{s}")
                cells.append("-" if a is None and p is None else
                             num(a) if p is None else f"{num(a)} / {num(p)}")
            if any(c != "-" for c in cells):
                rows.append([title] + cells)
        cells = []
        for s in sizes:
            a = ratio(ns.get(f"policy/blockbloom/absent/{s}"), ns.get(f"policy/leveldb/absent/{s}"))
            p = ratio(ns.get(f"policy/blockbloom/present/{s}"), ns.get(f"policy/leveldb/present/{s}"))
            cells.append("-" if a is None else f"{num(a)} / {num(p)}")
        rows.insert(2, ["ratio: policy / LevelDB's"] + cells)
        table(header, rows)


def probe_small(directory):
    header = ["machine", "keys per filter", "blockbloom ns", "LevelDB ns", "ratio",
              "blockbloom ns (present)", "LevelDB ns (present)", "ratio (present)",
              "floor ns"]
    rows = []
    paths = []
    for label, path in kernel_runs(directory):
        ns = load_kernel(path)
        paths.append(os.path.relpath(path, ROOT))
        for n in (20, 100):
            ours_a, theirs_a = ns.get(f"policy-small/blockbloom/absent/{n}"), ns.get(
                f"policy-small/leveldb/absent/{n}")
            ours_p, theirs_p = ns.get(f"policy-small/blockbloom/present/{n}"), ns.get(
                f"policy-small/leveldb/present/{n}")
            floor = ns.get(f"policy-small/floor/absent/{n}")  # "-" in runs older than the row
            rows.append([label, str(n), num(ours_a), num(theirs_a), num(ratio(ours_a, theirs_a)),
                         num(ours_p), num(theirs_p), num(ratio(ours_p, theirs_p)), num(floor)])
    print("From " + " and ".join(f"`{p}`" for p in paths) + ":\n")
    table(header, rows)


BUILD_ROWS = (
    ("LevelDB built-in `CreateFilter`", "build/leveldb"),
    ("blockbloom policy `CreateFilter`", "build/bbpolicy-best"),
    ("the same, portable (SCALAR) target", "build/bbpolicy-scalar"),
    ("`BlockedBloomFilter` from keys", "build/class-best"),
    ("FastLocalBloom's build, same bits", "build/fastlocal"),
    ("floor: XXH3 + one 64-byte OR per key", "floor/build-hash-line"),
)
BUILD_SIZES = (20, 100, 10_000, 1_000_000, 13_421_773)


def build(directory):
    runs = kernel_runs(directory)
    loaded = [load_kernel(p) for _, p in runs]
    print("ns per key, " + " / ".join(label for label, _ in runs) + "; from "
          + " and ".join(f"`{os.path.relpath(p, ROOT)}`" for _, p in runs) + ":\n")
    header = ["ns/key"] + [f"{n:,} keys" for n in BUILD_SIZES]
    rows = []
    for title, name in BUILD_ROWS:
        cells = [" / ".join(num(ns.get(f"{name}/{n}")) for ns in loaded) for n in BUILD_SIZES]
        if any(c.replace("-", "").replace("/", "").strip() for c in cells):
            rows.append([title] + cells)
    rows.insert(2, ["ratio: LevelDB / blockbloom policy"] + [
        " / ".join(num(ratio(ns.get(f"build/leveldb/{n}"), ns.get(f"build/bbpolicy-best/{n}")))
                   for ns in loaded) for n in BUILD_SIZES])
    rows.append(["`Create` + `AddKeys` + one probe, 10 keys (ns per call)"] + [
        " / ".join(num(ns.get("create/tiny/10"), 0) for ns in loaded)] + [""] * (len(BUILD_SIZES) - 1))
    table(header, rows)


def fpr(directory):
    path = os.path.join(directory, "fpr.json")
    runs = json.load(open(path))["benchmarks"]
    by = {}
    for r in runs:
        m = re.match(r"fpr/(\w+)/b(\d+)/", r["name"])
        if m:
            by[(m.group(1), int(m.group(2)))] = (r["fpr"], r.get("model_fpr"))
    source(path, " (1,000,000 keys, 1,000,000 absent probes; measured %, model % in brackets)")
    header = ["bits/key", "blockbloom blocked", "LevelDB built-in", "textbook Bloom (k bits in k lines)"]
    rows = []
    for b in sorted({b for _, b in by}):
        cells = [str(b)]
        for s in ("blocked", "leveldb", "textbook"):
            v = by.get((s, b))
            cells.append("-" if v is None else f"{100 * v[0]:.3g} ({100 * v[1]:.3g})")
        rows.append(cells)
    table(header, rows)


def fpr_leveldb(directory):
    path, d = e2e(directory)
    source(path, f" (LevelDB's filter per 2 KiB of table data, {d['keys']:,} keys, "
                 f"{d['bits_per_key']:g} bits/key; RocksDB's full filters in the same run)")
    header = ["engine + filter", "filter B/key", "FPR: data-block reads per absent Get"]
    table(header, [[r["name"], f"{r['filter_bytes_per_key']:.3f}", f"{100 * r['reads_per_absent_get']:.2f}%"]
                   for r in d["results"] if "FilteredDB" not in r["name"]])


def tails(directory):
    path = os.path.join(directory, "tails_10k_probes.txt")
    pat = re.compile(r"^(\w+)\s+(\d+) \|\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+\|\s+([\d.]+)\s+([\d.]+)"
                     r"\s+\|\s+([\d.]+)\s+([\d.]+)")
    lines = [pat.match(l) for l in open(path)]
    lines = [m for m in lines if m]
    source(path, " (2,000 filters per row at 10 bits/key, 10,000 absent probes each; "
           "bad = a filter whose measured FPR is over 2%)")
    header = ["key shape", "keys", "blockbloom: % bad, mean FPR %", "LevelDB built-in: % bad, mean FPR %"]
    rows = [[m.group(1), m.group(2), f"{m.group(3)}, {m.group(4)}", f"{m.group(6)}, {m.group(7)}"]
            for m in lines if int(m.group(2)) in (10, 20, 60, 120, 400)]
    table(header, rows)
    worse = sum(1 for m in lines if float(m.group(4)) >= float(m.group(7))
                or float(m.group(3)) > float(m.group(6)))
    print(f"Over all {len(lines)} rows of the file (n = 10, 20, ..., 400, three key shapes), "
          f"blockbloom's mean FPR or share of bad filters is worse than LevelDB's in "
          f"{worse or 'none'}.\n")


def e2e(directory):
    path = os.path.join(directory, "rocksdb_e2e.json")
    return path, json.load(open(path))


def leveldb(directory):
    path, d = e2e(directory)
    source(path, f" ({d['keys']:,} keys, {d['value_size']}-byte values, {d['bits_per_key']:g} bits/key, "
                 "block cache off)")
    rows = [r for r in d["results"] if r["name"].startswith("leveldb") and "FilteredDB" not in r["name"]]
    base = rows[0]
    header = ["LevelDB 1.23 with", "filter B/key", "data-block reads per absent Get",
              "absent Get p50 / p99 µs", "present Get p50 / p99 µs", "cold absent Gets/s",
              "cold vs built-in"]
    table(header, [[r["name"].replace("leveldb + ", "blockbloom ").replace("leveldb ", ""),
                    f"{r['filter_bytes_per_key']:.3f}", f"{r['reads_per_absent_get']:.4f}",
                    f"{r['absent_p50_us']:.2f} / {r['absent_p99_us']:.2f}",
                    f"{r['present_p50_us']:.2f} / {r['present_p99_us']:.2f}",
                    f"{r['cold_absent_gets_per_s']:,.0f}",
                    f"{r['cold_absent_gets_per_s'] / base['cold_absent_gets_per_s']:.2f}x"]
                   for r in rows])


def filtered_db(directory):
    path, d = e2e(directory)
    source(path, " (the same run as the LevelDB table)")
    rows = {r["name"]: r for r in d["results"]}
    pair = [rows["leveldb + blocked"], rows["leveldb + FilteredDB"]]
    header = ["LevelDB 1.23 with", "data-block reads per absent Get", "absent Get p50 / p99 µs",
              "present Get p50 / p99 µs", "cold absent Gets/s", "fill k keys/s (with compaction)"]
    table(header, [["blocked filter" if "blocked" in r["name"] else "blocked filter + FilteredDB",
                    f"{r['reads_per_absent_get']:.4f}",
                    f"{r['absent_p50_us']:.2f} / {r['absent_p99_us']:.2f}",
                    f"{r['present_p50_us']:.2f} / {r['present_p99_us']:.2f}",
                    f"{r['cold_absent_gets_per_s']:,.0f}",
                    f"{r['fill_keys_per_s'] / 1000:.0f} ({r['fill_and_compact_keys_per_s'] / 1000:.0f})"]
                   for r in pair])
    a, b = pair
    print(f"FilteredDB / blocked alone: absent p50 {b['absent_p50_us'] / a['absent_p50_us']:.2f}x, "
          f"cold absent Gets/s {b['cold_absent_gets_per_s'] / a['cold_absent_gets_per_s']:.1f}x, "
          f"fill {b['fill_keys_per_s'] / a['fill_keys_per_s']:.2f}x.\n")


def rocksdb(directory):
    path, d = e2e(directory)
    source(path, f" (LevelDB 1.23 and RocksDB {d['rocksdb']}, the same run as the LevelDB table)")
    header = ["engine + filter", "filter B/key (+ LevelDB offset array)", "data-block reads per absent Get",
              "absent p50 / p99 µs", "present p50 / p99 µs", "cold absent Gets/s",
              "fill k keys/s (with compaction)"]
    rows = []
    for r in d["results"]:
        mem = f"{r['filter_bytes_per_key']:.3f}"
        if r["filter_block_bytes_per_key"] != r["filter_bytes_per_key"]:
            mem += f" ({r['filter_block_bytes_per_key']:.3f})"
        rows.append([r["name"], mem, f"{r['reads_per_absent_get']:.4f}",
                     f"{r['absent_p50_us']:.2f} / {r['absent_p99_us']:.2f}",
                     f"{r['present_p50_us']:.2f} / {r['present_p99_us']:.2f}",
                     f"{r['cold_absent_gets_per_s']:,.0f}",
                     f"{r['fill_keys_per_s'] / 1000:.0f} ({r['fill_and_compact_keys_per_s'] / 1000:.0f})"])
    table(header, rows)


TABLES = {"probe": probe, "probe-small": probe_small, "build": build, "fpr": fpr, "fpr-leveldb": fpr_leveldb,
          "tails": tails,
          "leveldb": leveldb, "filtered-db": filtered_db, "rocksdb": rocksdb}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tables", nargs="*", metavar="TABLE", help=", ".join(TABLES))
    parser.add_argument("--dir", default=os.path.join(ROOT, "bench", "results"))
    args = parser.parse_args()
    unknown = [t for t in args.tables if t not in TABLES]
    if unknown:
        parser.error(f"unknown table {unknown[0]!r}; choose from {', '.join(TABLES)}")
    for name in args.tables or TABLES:
        print(f"### {name}\n")
        TABLES[name](os.path.abspath(args.dir))


if __name__ == "__main__":
    main()
