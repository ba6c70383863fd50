#!/usr/bin/env python3
"""A/B of two kernel_bench binaries on a noisy machine, by ratios taken
inside each run.

    scripts/kernel_ab.py OLD_BINARY NEW_BINARY [--rounds N] [--sizes 16384,1048576]

Runs the two binaries alternately N times (default 10), each run timing, in
one process and close together, our single-key probe inlined into a loop
(hash/best-inlined), the clean-room FastLocalBloom probe inlined into the
same loop over the same bits (hash/fastlocal-avx2-inlined), our dispatched
probe (hash/best, one call through the resolved pointer per probe) beside
FastLocalBloom behind one direct call (hash/fastlocal-avx2), and our LevelDB
policy beside LevelDB's built-in (policy/*, 16 KiB). The host's noise moves a
whole run up or down, so each run is reduced to its ratios (ours over the
baseline measured with it), and the medians of those ratios over the rounds
are compared between the binaries. Prints every ratio, so the spread is
visible too.

    scripts/kernel_ab.py OLD NEW --build [--rounds N] [--build-sizes 20,100,10000,1000000,13421773]

compares the builds instead: LevelDB's CreateFilter time over ours (the
policy's and the class's) within each run, per key count.

    scripts/kernel_ab.py OLD NEW --policy [--rounds N] [--sizes 16384,1048576]

times only the LevelDB policy rows (policy/blockbloom, policy/leveldb and
floor/policy-hash-line at each size, and policy-small/*: LevelDB's own
filter sizes, 20 and 100 keys) and compares ours / LevelDB's and the floor /
LevelDB's, medians of per-run ratios.

    scripts/kernel_ab.py OLD NEW --rows REGEX [--rounds N]

prints the median ns/key of every row matching the benchmark filter REGEX,
the two binaries alternated (for rows that have no baseline in the run).
"""
import argparse
import re
import statistics
import subprocess
import sys

# kernel_bench's ns_per_key is a Google Benchmark rate counter, printed with
# an SI prefix and "s": "6.12s" is 6.12 ns/key, "950.1ms" is 0.9501 and
# "1.2ks" is 1200.
_NS_PER_KEY = re.compile(r"ns_per_key=([0-9.]+)([kMGTmunp]?)s?(?![0-9A-Za-z.])")
_SI = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "m": 1e-3, "u": 1e-6, "n": 1e-9,
       "p": 1e-12}


def ns_per_key(line):
    """The ns_per_key counter of one benchmark output line, or None."""
    m = _NS_PER_KEY.search(line)
    return float(m.group(1)) * _SI[m.group(2)] if m else None


def run_rows(binary, pattern, *flags):
    """One run of `binary` over the rows matching `pattern`: {row name: ns/key}."""
    out = subprocess.run(
        [binary, "--benchmark_filter=" + pattern, "--benchmark_min_time=0.1", *flags],
        check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        v = ns_per_key(line)
        if v is not None:
            rows[line.split()[0]] = v
    return rows


def run(binary, sizes):
    size_alt = "|".join(sizes)
    pattern = (
        "^(hash/(best|best-inlined|fastlocal-avx2|fastlocal-avx2-inlined)/(absent|present)/(%s)"
        "|policy/(blockbloom|leveldb)/(absent|present)/16384)$" % size_alt
    )
    return run_rows(binary, pattern, "--quick")


def run_build(binary, sizes):
    # Not --quick: it leaves out the 16 MiB build (13421773 keys).
    return run_rows(binary, "^build/(leveldb|bbpolicy-best|class-best)/(%s)$" % "|".join(sizes))


def main_rows(args):
    """Median ns/key of every row matching --rows, each binary alternated."""
    runs = {"old": [], "new": []}
    for _ in range(args.rounds):
        for side, binary in (("old", args.old), ("new", args.new)):
            runs[side].append(run_rows(binary, args.rows))
    print("median ns/key over %d alternated rounds (old -> new)" % args.rounds)
    # Rows of either binary: one that only one binary has (a renamed or new
    # benchmark) is printed for that side alone.
    names = sorted({name for side in runs.values() for rows in side for name in rows})
    for name in names:
        med = {}
        for side in ("old", "new"):
            vals = [r[name] for r in runs[side] if name in r]
            med[side] = statistics.median(vals) if vals else None
        if med["old"] is None or med["new"] is None:
            print("%-44s %8s -> %8s   (only in one binary)" %
                  (name, "-" if med["old"] is None else "%.2f" % med["old"],
                   "-" if med["new"] is None else "%.2f" % med["new"]))
            continue
        print("%-44s %8.2f -> %8.2f   new/old %.3f" % (name, med["old"], med["new"],
                                                      med["new"] / med["old"]))
    return 0


def print_ratios(runs, pairs, width):
    """For each (label, row, base): the medians of row / base over each
    side's runs, old -> new, then every run's ratio. 1 if a row is missing."""
    for label, row, base in pairs:
        med = {}
        spread = {}
        for side in ("old", "new"):
            ratios = [r[row] / r[base] for r in runs[side] if row in r and base in r]
            if not ratios:
                print("%s: rows missing" % label, file=sys.stderr)
                return 1
            med[side] = statistics.median(ratios)
            spread[side] = " ".join("%.2f" % x for x in ratios)
        print("%-*s %.3f -> %.3f   old [%s]  new [%s]"
              % (width, label, med["old"], med["new"], spread["old"], spread["new"]))
    return 0


def main_policy(args):
    """The policy rows only: ours / LevelDB's and the floor / LevelDB's."""
    sizes = args.sizes.split(",")
    pattern = ("^((policy/(blockbloom|leveldb)|floor/policy-hash-line)/(absent|present)/(%s)"
               "|policy-small/.*)$" % "|".join(sizes))
    runs = {"old": [], "new": []}
    for _ in range(args.rounds):
        for side, binary in (("old", args.old), ("new", args.new)):
            runs[side].append(run_rows(binary, pattern))
    print("median of per-run ratios over %d rounds (old -> new), then each run's ratio"
          % args.rounds)
    pairs = [("%s / LevelDB, %s, %s B" % (ours, case, size), "%s/%s/%s" % (ours, case, size),
              "policy/leveldb/%s/%s" % (case, size))
             for size in sizes for case in ("absent", "present")
             for ours in ("policy/blockbloom", "floor/policy-hash-line")]
    pairs += [("small filters / LevelDB, %s, %s keys" % (case, keys),
               "policy-small/blockbloom/%s/%s" % (case, keys),
               "policy-small/leveldb/%s/%s" % (case, keys))
              for keys in ("20", "100") for case in ("absent", "present")]
    return print_ratios(runs, pairs, 44)


def main_build(args):
    sizes = args.build_sizes.split(",")
    runs = {"old": [], "new": []}
    for _ in range(args.rounds):
        for side, binary in (("old", args.old), ("new", args.new)):
            runs[side].append(run_build(binary, sizes))
    print("LevelDB CreateFilter / ours, median of per-run ratios over %d rounds (old -> new)"
          % args.rounds)
    for size in sizes:
        for ours in ("bbpolicy-best", "class-best"):
            med = {}
            spread = {}
            for side in ("old", "new"):
                ratios = [r["build/leveldb/" + size] / r["build/%s/%s" % (ours, size)]
                          for r in runs[side]]
                med[side] = statistics.median(ratios)
                spread[side] = " ".join("%.2f" % x for x in ratios)
            print("%-28s %.3f -> %.3f   old [%s]  new [%s]"
                  % ("%s, %s keys" % (ours, size), med["old"], med["new"], spread["old"],
                     spread["new"]))
    for side in ("old", "new"):
        for size in sizes:
            vals = [r["build/bbpolicy-best/" + size] for r in runs[side]]
            print("%s build/bbpolicy-best/%s: median %.2f ns/key" % (side, size,
                                                                   statistics.median(vals)))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--sizes", default="16384,1048576")
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--build-sizes", default="20,100,10000,1000000,13421773")
    ap.add_argument("--policy", action="store_true")
    ap.add_argument("--rows", help="a benchmark filter: print the median of each row instead")
    args = ap.parse_args()
    if args.rows:
        return main_rows(args)
    if args.build:
        return main_build(args)
    if args.policy:
        return main_policy(args)
    sizes = args.sizes.split(",")
    runs = {"old": [], "new": []}
    for _ in range(args.rounds):
        for side, binary in (("old", args.old), ("new", args.new)):
            runs[side].append(run(binary, sizes))
    pairs = [("ours / FastLocal, %s, %s B" % (case, size),
              "hash/best-inlined/%s/%s" % (case, size),
              "hash/fastlocal-avx2-inlined/%s/%s" % (case, size))
             for size in sizes for case in ("absent", "present")]
    pairs += [("dispatched / FastLocal call, %s, %s B" % (case, size),
               "hash/best/%s/%s" % (case, size), "hash/fastlocal-avx2/%s/%s" % (case, size))
              for size in sizes for case in ("absent", "present")]
    pairs += [("policy ours / LevelDB, %s, 16384 B" % case,
               "policy/blockbloom/%s/16384" % case, "policy/leveldb/%s/16384" % case)
              for case in ("absent", "present")]
    print("median of per-run ratios over %d rounds (old -> new), then each run's ratio"
          % args.rounds)
    if print_ratios(runs, pairs, 40):
        return 1
    for side in ("old", "new"):
        for key in ("hash/best-inlined/absent/16384", "hash/best-inlined/present/16384"):
            vals = [r[key] for r in runs[side] if key in r]
            if vals:
                print("%s %s: median %.2f ns" % (side, key, statistics.median(vals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
