#!/usr/bin/env python3
"""The kernel's out-of-cache ratios, each ratio taken inside one run, medians
over repeated runs.

    scripts/kernel_memory_rounds.py BINARY [NEW_BINARY] [--rounds N] [--size BYTES]

kernel_bench's one-run table (scripts/kernel_targets.py) divides the best
batch row by the best prefetched floor, each the minimum over 20 noisy rows
of one run: the minimum of many noisy floors is biased low, so the ratio is
biased high. Here the 128 MiB rows (or --size) run N times (default 8); in
each run every batch row is divided by the floor row with the same hint and
window (the same prefetch pattern with one load per key instead of a probe),
and every single probe by the unprefetched floor measured beside it. The
medians of those per-run ratios are printed for every configuration, then
the two out-of-cache targets of scripts/kernel_targets.py:

  batch <= 1.15x the prefetched-line floor with the best hint: the hint and
      window whose floor has the lowest median, and the batch with the same
      hint and window; also the library's default (T2, window 64);
  single probe <= 1.5x one unprefetched load from a random line.

With NEW_BINARY the two binaries run alternately, N runs each, and each
figure is printed for both (an A/B of a kernel change).
"""
import argparse
import statistics
import sys

from kernel_ab import run_rows


def run(binary, size):
    pattern = (r"^((batch|floor/prefetched-[A-Z0-9]+(-hugepages)?)/"
               r"|(batch/[A-Z0-9]+-hugepages/)"
               r"|floor/line(-hugepages)?/"
               r"|hash/(best|best-inlined|best-hugepages|fastlocal-avx2-inlined)/absent/)"
               r".*%d$" % size)
    return run_rows(binary, pattern)


def report(binary, runs, size):
    tail = "/absent/%d" % size
    configs = sorted({name[len("batch/"):-len(tail)] for name in runs[0]
                      if name.startswith("batch/") and name.endswith(tail)})

    def med(key_fn):
        vals = [key_fn(r) for r in runs]
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    out = {}
    print("%d runs of %s, %d MiB; medians over the runs" % (len(runs), binary, size >> 20))
    print("%-22s %10s %10s %16s" % ("hint/window", "floor ns", "batch ns", "batch / floor"))
    floor_med = {}
    ratio_med = {}
    for cfg in configs:  # e.g. "T2/w64", "T2-hugepages/w64"
        hint, window = cfg.split("/")
        floor_name = "floor/prefetched-%s/%s%s" % (hint, window, tail)
        batch_name = "batch/%s%s" % (cfg, tail)
        floor_med[cfg] = med(lambda r: r.get(floor_name))
        ratio_med[cfg] = med(lambda r: r[batch_name] / r[floor_name]
                             if batch_name in r and floor_name in r else None)
        if floor_med[cfg] is None or ratio_med[cfg] is None:
            # kernel_bench has prefetched floors only out of cache (over 1 MiB).
            print("%-22s %10s %10.2f %16s" % (cfg, "-", med(lambda r: r.get(batch_name)), "-"))
            continue
        out["batch/floor " + cfg] = ratio_med[cfg]
        print("%-22s %10.2f %10.2f %16.3f" % (cfg, floor_med[cfg],
                                              med(lambda r: r.get(batch_name)), ratio_med[cfg]))
    plain = [c for c in configs
             if "hugepages" not in c and floor_med[c] is not None and ratio_med[c] is not None]
    print("target: batch <= 1.15x the prefetched floor with the best hint")
    if not plain:
        print("  no prefetched floor at this size (kernel_bench has them out of cache only)")
    else:
        best = min(plain, key=lambda c: floor_med[c])
        print("  best floor %s (median %.2f ns): batch / floor %.3f" % (best, floor_med[best],
                                                                        ratio_med[best]))
        if ratio_med.get("T2/w64") is not None:
            print("  the default, T2/w64: batch / floor %.3f" % ratio_med["T2/w64"])
        print("  lowest over every hint and window: %.3f (%s)" %
              min((ratio_med[c], c) for c in plain))
    print("target: single probe <= 1.5x one unprefetched load from a random line")
    for variant, floor in (("best", "line"), ("best-inlined", "line"),
                           ("fastlocal-avx2-inlined", "line"), ("best-hugepages", "line-hugepages")):
        ours = "hash/%s%s" % (variant, tail)
        base = "floor/%s%s" % (floor, tail)
        ratio = med(lambda r: r[ours] / r[base] if ours in r and base in r else None)
        if ratio is not None:
            out["single/floor " + variant] = ratio
            print("  hash/%-24s / floor/%-15s %.3f  (%.2f / %.2f ns)" %
                  (variant, floor, ratio, med(lambda r: r.get(ours)), med(lambda r: r.get(base))))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("new_binary", nargs="?")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--size", type=int, default=128 << 20)
    args = ap.parse_args()
    binaries = [args.binary] + ([args.new_binary] if args.new_binary else [])
    runs = {b: [] for b in binaries}
    for _ in range(args.rounds):
        for b in binaries:
            runs[b].append(run(b, args.size))
    results = [report(b, runs[b], args.size) for b in binaries]
    if len(results) == 2:
        print("A/B, medians of per-run ratios (old -> new)")
        for key in results[0]:
            if key in results[1]:
                print("  %-34s %.3f -> %.3f" % (key, results[0][key], results[1][key]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
