#!/usr/bin/env python3
"""The blocked kernel's performance targets, computed from ONE kernel_bench run.

    build/release/bench/kernel_bench --benchmark_min_time=0.2 \
        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        --benchmark_out=kernel.json [--big]
    python3 scripts/kernel_targets.py kernel.json [more.json ...]

Every ratio divides two figures of the same run (medians when the run has
repetitions), so a noisy machine moves both sides together. Prints one line per
target: the figures, the ratio, the bound and whether it is met. Rows whose
benchmarks are not in the file (1 GiB without --big, 128 MiB with --quick) are
skipped. Then the check of the dispatch rule (simd/targets.cc) on a CPU with
AVX-512: each kernel family's target against AVX2, from the per-target rows
(and the compact build's, from a compact_bench run of BM_CompactTargets given
after the kernel_bench run; scripts/kernel_bench.sh passes both); where the
run has a measure timed interleaved too (probe-path/*, build-path/*), that
row counts instead of the plain one. Each target is stated beside its
computation in main(); the bench's names are documented at the top of
bench/kernel_bench.cc.
"""
import json
import statistics
import sys

KIB, MIB, GIB = 1024, 1024 * 1024, 1024 * 1024 * 1024
# simd::kPrefetchMinBytes: the batch probe's in-cache family ends here.
PREFETCH_MIN_BYTES = 256 * KIB
# The per-target rows (target-<name>): the probes' (label, name pattern), the
# sizes and kinds they run at, and the policy build's row and key counts.
PROBE_TARGET_ROWS = (("single probe from a hash", "hash/target-{t}/{kind}/{size}"),
                     ("policy KeyMayMatch", "policy/target-{t}/{kind}/{size}"),
                     ("batch probe", "batch/target-{t}/T2/w64/{kind}/{size}"))
TARGET_SIZES = (16 * KIB, MIB, 128 * MIB, GIB)
KINDS = ("absent", "present")
BUILD_TARGET_ROW = "build/bbpolicy-target-{t}/{n}"
BUILD_TARGET_KEYS = (1, 2, 4, 8, 20, 100, 10_000, 1_000_000, 13_421_773)
AVX512_TARGETS = ("AVX3_DL", "AVX3")


def over_avx2(ns, pattern, t, **where):
    """(time on target t, time on AVX2) of the row `pattern` names, or None
    where the run lacks either."""
    v = ns.get(pattern.format(t=t, **where))
    avx2 = ns.get(pattern.format(t="AVX2", **where))
    return (v, avx2) if v and avx2 else None


def records(path):
    """(name -> the run's JSON record: its median aggregate if the run has
    repetitions, else the run itself; the run's context)."""
    with open(path) as f:
        run = json.load(f)
    runs = run["benchmarks"]
    plain, median = {}, {}
    for r in runs:
        if r.get("run_type") == "aggregate":
            if r.get("aggregate_name") == "median":
                median[r["run_name"]] = r
        else:
            plain.setdefault(r["run_name"], r)
    plain.update(median)
    return plain, run.get("context", {})


# simd::KernelFamily, as the bench's context names each one's target
# ("kernel_targets": "single probe AVX2, batch probe in cache AVX2, out of
# cache AVX3, build AVX3").
FAMILIES = (("single probe", "single probe"), ("batch probe in cache", "batch probe in cache"),
            ("out of cache", "batch probe out of cache"), ("build", "build"))


def dispatched(context):
    """family -> the target its kernels run on in this run: the bench's
    kernel_targets context, or for a run made before it (when every family
    ran on Highway's best target) that target for all; {} if neither."""
    text = context.get("kernel_targets")
    if text:
        out = {}
        for part in text.split(", "):
            for prefix, family in FAMILIES:
                if part.startswith(prefix + " "):
                    out[family] = part[len(prefix) + 1:]
        return out
    best = context.get("highway_best_target")
    return {family: best for _, family in FAMILIES} if best else {}


def ns_per_key(record):
    """The record's ns per key; benchmarks without a per-key counter
    (create/tiny) give CPU ns per call; None for neither."""
    if "ns_per_key" in record:
        return float(record["ns_per_key"])
    if record.get("time_unit") == "ns" and "cpu_time" in record:
        return float(record["cpu_time"])
    return None


# A record's fields that are not its counters.
NOT_COUNTERS = {"iterations", "real_time", "cpu_time", "repetitions", "repetition_index",
                "threads", "family_index", "per_family_instance_index"}


def counters(record):
    """The record's counters, by name."""
    return {k: float(v) for k, v in record.items()
            if isinstance(v, (int, float)) and k not in NOT_COUNTERS}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ns, path_counters, targets = {}, {}, {}
    for path in sys.argv[1:]:  # several runs (one per size): rows of each
        by_name, context = records(path)
        targets = targets or dispatched(context)
        for name, record in by_name.items():
            value = ns_per_key(record)
            if value is not None:
                ns[name] = value
            if name.startswith(("policy-path/", "policy-small-path/", "probe-path/",
                                "build-path/", "BM_CompactTargets/")):
                path_counters[name] = counters(record)
    rows = []

    def row(target, detail, value, bound, lower_is_better=True):
        met = value <= bound if lower_is_better else value >= bound
        rows.append((target, detail, value, bound, met))

    # 1. One probe through the LevelDB policy, in cache: <= 1/4 of LevelDB's.
    #    Beside it, the floor of any blocked policy hashing with XXH3 (virtual
    #    call + XXH3 + one byte of the line) over LevelDB's: the target is out
    #    of reach of every such policy on this machine when that is above 0.25.
    for size in (16 * KIB, MIB):
        for kind in ("absent", "present"):
            ours = ns.get(f"policy/blockbloom/{kind}/{size}")
            theirs = ns.get(f"policy/leveldb/{kind}/{size}")
            floor = ns.get(f"floor/policy-hash-line/{kind}/{size}")
            if ours and theirs:
                note = f"; floor {floor:.2f} ns = {floor / theirs:.3f} of LevelDB's" if floor else ""
                row("policy KeyMayMatch / LevelDB's <= 0.25",
                    f"{size // KIB} KiB {kind}: {ours:.2f} / {theirs:.2f} ns{note}", ours / theirs,
                    0.25)
    # 2. Single probe from a hash, in cache: <= 2.5 ns (best target, dispatched
    #    call; the inlined kernel and FastLocalBloom beside it).
    for size in (16 * KIB, MIB):
        for kind in ("absent", "present"):
            ours = ns.get(f"hash/best/{kind}/{size}")
            if ours is None:
                continue
            side = []
            for other in ("best-inlined", "fastlocal-avx2", "fastlocal-avx2-inlined"):
                v = ns.get(f"hash/{other}/{kind}/{size}")
                if v is not None:
                    side.append(f"{other} {v:.2f}")
            row("single probe from a hash <= 2.5 ns",
                f"{size // KIB} KiB {kind}: {ours:.2f} ns ({', '.join(side)})", ours, 2.5)
    # 3. Out of cache: <= 1.5x one unprefetched load from a random line.
    for size in (128 * MIB, GIB):
        floor = ns.get(f"floor/line/absent/{size}")
        for variant in ("best", "best-inlined"):
            ours = ns.get(f"hash/{variant}/absent/{size}")
            if ours and floor:
                row("single probe / unprefetched-load floor <= 1.5",
                    f"{size // MIB} MiB {variant}: {ours:.2f} / {floor:.2f} ns", ours / floor, 1.5)
    # 4. Batched, out of cache: <= 1.15x the prefetched-line floor with the
    #    best hint (the best floor over hints and windows).
    for size in (128 * MIB, GIB):
        floors = {k: v for k, v in ns.items()
                  if k.startswith("floor/prefetched-") and "hugepages" not in k
                  and k.endswith(f"/absent/{size}")}
        if not floors:
            continue
        best_floor_name = min(floors, key=floors.get)
        best_floor = floors[best_floor_name]
        default = ns.get(f"batch/T2/w64/absent/{size}")
        batches = {k: v for k, v in ns.items()
                   if k.startswith("batch/") and "hugepages" not in k
                   and k.endswith(f"/absent/{size}")}
        label = f"{size // MIB} MiB, best floor {best_floor_name.split('/')[1]}" \
                f"/{best_floor_name.split('/')[2]} {best_floor:.2f} ns"
        if default:
            row("batch / best prefetched floor <= 1.15",
                f"{label}; default T2/w64 {default:.2f}", default / best_floor, 1.15)
        if batches:
            best_batch = min(batches, key=batches.get)
            row("batch / best prefetched floor <= 1.15",
                f"{label}; best batch {'/'.join(best_batch.split('/')[1:3])} "
                f"{batches[best_batch]:.2f}", batches[best_batch] / best_floor, 1.15)
    # 5. Build from keys: >= 3x faster than LevelDB's CreateFilter.
    #    Beside it, LevelDB's over the floor of any blocked build hashing with
    #    XXH3 (zeroed bytes + XXH3 + one OR into the key's line): the most any
    #    such build could reach on this machine.
    for n in (20, 100, 10_000, 1_000_000, 13_421_773):
        theirs = ns.get(f"build/leveldb/{n}")
        floor = ns.get(f"floor/build-hash-line/{n}")
        for variant in ("bbpolicy-best", "class-best"):
            ours = ns.get(f"build/{variant}/{n}")
            if ours and theirs:
                note = f"; floor {floor:.2f} = LevelDB / {theirs / floor:.2f}" if floor else ""
                row("build: LevelDB / ours >= 3",
                    f"{n} keys {variant}: {theirs:.2f} / {ours:.2f} ns/key{note}", theirs / ours,
                    3.0, lower_is_better=False)
    # Beside them, the bar of the best known kernel: faster than RocksDB's
    # FastLocalBloom on the same bits. Probes: ours over the clean-room
    # FastLocalBloom probe, inlined into the same loop and behind one call;
    # builds: FastLocalBloom's build (k byte writes per key, RocksDB's ring of
    # 8 prefetched hashes) over ours, at the blocked sizes. Ours is the class's
    # build (build/class-best), which writes the 512-bit blocks FastLocalBloom's
    # build is checked against, byte for byte; the policy writes a flat filter
    # (a standard Bloom filter, k lines per key) up to about 6.9 million keys
    # at 10 bits/key (plugin/policy/filter_sizing.h), other bits.
    for size in (16 * KIB, MIB, 128 * MIB, GIB):
        for kind in ("absent", "present"):
            for ours_name, theirs_name in (("best-inlined", "fastlocal-avx2-inlined"),
                                           ("best", "fastlocal-avx2")):
                ours = ns.get(f"hash/{ours_name}/{kind}/{size}")
                theirs = ns.get(f"hash/{theirs_name}/{kind}/{size}")
                if ours and theirs:
                    row("probe: ours / FastLocalBloom <= 1",
                        f"{size // KIB} KiB {kind} {ours_name}: {ours:.2f} / {theirs:.2f} ns",
                        ours / theirs, 1.0)
    for n in (10_000, 1_000_000, 13_421_773):
        theirs = ns.get(f"build/fastlocal/{n}")
        ours = ns.get(f"build/class-best/{n}")
        if ours and theirs:
            row("build: FastLocalBloom / ours >= 1",
                f"{n} keys: {theirs:.2f} / {ours:.2f} ns/key", theirs / ours, 1.0,
                lower_is_better=False)
    # 6. Class API per-call cost < 1 us (create/tiny: Create + AddKeys + probe).
    tiny = ns.get("create/tiny/10")
    if tiny is not None:
        row("class API per call < 1000 ns", f"create/tiny/10: {tiny:.0f} ns per call", tiny, 1000)

    # 7. The policy's KeyMayMatch over its floor (LevelDB's virtual call +
    #    XXH3 + one byte of the line) <= 1.4, and its path taken apart: each
    #    piece's cost is the difference of two floor/policy-* rows.
    for size in (16 * KIB, MIB):
        for kind in ("absent", "present"):
            ours = ns.get(f"policy/blockbloom/{kind}/{size}")
            floor = ns.get(f"floor/policy-hash-line/{kind}/{size}")
            if not (ours and floor):
                continue
            pieces = []
            last = 0.0
            for piece in ("call", "hash", "hash-line", "hash-parse-line", "hash-parse-line-count"):
                v = ns.get(f"floor/policy-{piece}/{kind}/{size}")
                if v is not None:
                    pieces.append(f"{piece} {v:.2f} ({v - last:+.2f})")
                    last = v
            if pieces:
                pieces.append(f"probe {ours - last:+.2f}")
            uncounted = ns.get(f"floor/policy-uncounted/{kind}/{size}")
            if uncounted is not None:
                pieces.append(f"policy without counters {uncounted:.2f} "
                              f"(counters {ours - uncounted:+.2f})")
            note = f"; {', '.join(pieces)}" if pieces else ""
            row("policy KeyMayMatch / its floor <= 1.4",
                f"{size // KIB} KiB {kind}: {ours:.2f} / {floor:.2f} ns{note}", ours / floor, 1.4)
    # 8. The same, timed interleaved (policy-path/absent/<bytes>: every piece
    #    on the same keys within microseconds, medians of per-iteration
    #    ratios), the figure to trust on a host whose speed drifts.
    #    At LevelDB's own filter sizes too (policy-small-path/absent/<keys>).
    paths = [(f"policy-path/absent/{size}", f"{size // KIB} KiB") for size in (16 * KIB, MIB)]
    paths += [(f"policy-small-path/absent/{keys}", f"{keys}-key filters") for keys in (20, 100)]
    for name, label in paths:
        c = path_counters.get(name)
        if not c or "policy_over_floor" not in c:
            continue
        pieces = []
        last = 0.0
        for piece in ("call", "hash", "floor", "parse", "uncounted", "policy"):
            v = c.get(f"{piece}_ns")
            if v is not None:
                pieces.append(f"{piece} {v:.2f} ({v - last:+.2f})")
                last = v
        row("policy KeyMayMatch / its floor <= 1.4, interleaved",
            f"{label} absent: {'; '.join(pieces)}; counters "
            f"{c.get('counters_ns', 0.0):.2f} ns, without them "
            f"{c.get('uncounted_over_floor', 0.0):.3f}x the floor; LevelDB's "
            f"{c.get('leveldb_ns', 0.0):.2f} ns",
            c["policy_over_floor"], 1.4)
    # 9. The single probe from a hash against FastLocalBloom's, timed
    #    interleaved (probe-path/<kind>/<bytes>): ours through the filter's
    #    pointer over FastLocalBloom behind one call, and the two kernels
    #    inlined into loops.
    for size in TARGET_SIZES:
        for kind in KINDS:
            c = path_counters.get(f"probe-path/{kind}/{size}")
            if not c or "best_over_fastlocal" not in c:
                continue
            label = f"{size // KIB} KiB {kind}"
            row("single probe from a hash / FastLocalBloom's through a call <= 1, interleaved",
                f"{label}: {c['best_ns']:.2f} / {c['fastlocal_ns']:.2f} ns; one target's "
                f"kernel through a plain pointer "
                + ", ".join(f"{k[len('single_'):-len('_ns')]} {v:.2f}" for k, v in sorted(c.items())
                            if k.startswith("single_") and k.endswith("_ns")),
                c["best_over_fastlocal"], 1.0)
            row("probe inlined: ours / FastLocalBloom <= 1, interleaved",
                f"{label}: {c['best_inlined_ns']:.2f} / {c['fastlocal_inlined_ns']:.2f} ns",
                c["inlined_over_fastlocal_inlined"], 1.0)

    width = max(len(r[0]) for r in rows) if rows else 0
    for target, detail, value, bound, met in rows:
        print(f"{'met   ' if met else 'MISSED'}  {target:<{width}}  {value:8.3f}  ({detail})")
    print(f"{sum(r[4] for r in rows)} of {len(rows)} rows met")

    # Each kernel family on AVX-512 against AVX2 (the rule of
    # simd/targets.h, KernelTarget): time on each target over AVX2's.
    lines = []
    for label, pattern in PROBE_TARGET_ROWS:
        for size in TARGET_SIZES:
            for kind in KINDS:
                for t in AVX512_TARGETS:
                    pair = over_avx2(ns, pattern, t, kind=kind, size=size)
                    if pair:
                        v, avx2 = pair
                        lines.append(f"{label}, {size // KIB} KiB {kind}: {t} {v:.2f} / "
                                     f"AVX2 {avx2:.2f} ns = {v / avx2:.3f}")
    for n in BUILD_TARGET_KEYS:
        for t in AVX512_TARGETS:
            pair = over_avx2(ns, BUILD_TARGET_ROW, t, n=n)
            if pair:
                v, avx2 = pair
                lines.append(f"policy build, {n} keys: {t} {v:.2f} / AVX2 {avx2:.2f} ns/key = "
                             f"{v / avx2:.3f}")
    if lines:
        print("== per target, over AVX2 (below 1: faster than AVX2)")
        for line in lines:
            print(line)

    # The dispatch rule (simd/targets.cc): each family runs on a target
    # measured at least as fast as AVX2 on this machine, or on AVX2. For each
    # family whose target is an AVX-512 one: its time over AVX2's on each of
    # the family's rows, and the family's verdict on the median of those
    # ratios (single rows of one run move by several percent; a run with
    # --benchmark_repetitions=7 is the check).
    # Each check is (detail, ratio, what it measures, timed interleaved); a
    # row timed one after the other gives way to an interleaved row of the
    # same measure where the run has both (the interleaved rows: probe-path/*,
    # build-path/<n>; the compact build's rows alternate their targets in
    # short batches and have no plain counterpart).
    checks = {}

    def check(family, detail, ratio, measure, interleaved):
        checks.setdefault(family, []).append((detail, ratio, measure, interleaved))

    single, policy, batch = PROBE_TARGET_ROWS
    family_rows = (("single probe", "single", single, lambda size: True),
                   ("single probe", "policy", policy, lambda size: True),
                   ("batch probe in cache", "batch", batch, lambda size: size <= PREFETCH_MIN_BYTES),
                   ("batch probe out of cache", "batch", batch,
                    lambda size: size > PREFETCH_MIN_BYTES))
    for family, piece, (label, pattern), applies in family_rows:
        t = targets.get(family)
        if t not in AVX512_TARGETS:
            continue
        for size in filter(applies, TARGET_SIZES):
            for kind in KINDS:
                pair = over_avx2(ns, pattern, t, kind=kind, size=size)
                if pair:
                    v, avx2 = pair
                    check(f"{family} on {t}",
                          f"{label}, {size // KIB} KiB {kind}: {v:.2f} / {avx2:.2f} ns", v / avx2,
                          (piece, size, kind), False)
                # The same measure timed interleaved (probe-path/<kind>/<bytes>).
                c = path_counters.get(f"probe-path/{kind}/{size}", {})
                ratio = c.get(f"{piece}_{t}_over_avx2")
                if ratio is not None:
                    check(f"{family} on {t}",
                          f"{piece} probe interleaved, {size // KIB} KiB {kind}: "
                          f"{c[f'{piece}_{t}_ns']:.2f} / {c[f'{piece}_AVX2_ns']:.2f} ns", ratio,
                          (piece, size, kind), True)
    t = targets.get("build")
    if t in AVX512_TARGETS:
        for n in BUILD_TARGET_KEYS:
            pair = over_avx2(ns, BUILD_TARGET_ROW, t, n=n)
            if pair:
                v, avx2 = pair
                check(f"build on {t}", f"policy build, {n} keys: {v:.2f} / {avx2:.2f} ns/key",
                      v / avx2, ("build", n), False)
            c = path_counters.get(f"build-path/{n}", {})
            ratio = c.get(f"{t}_over_avx2")
            if ratio is not None:
                check(f"build on {t}",
                      f"policy build interleaved, {n} keys: {c[f'{t}_ns']:.2f} / "
                      f"{c['AVX2_ns']:.2f} ns/key", ratio, ("build", n), True)
        # The compact policy's build (compact_bench BM_CompactTargets, every
        # kernel on the best target against every kernel on AVX2).
        for name, c in sorted(path_counters.items()):
            if name.startswith("BM_CompactTargets/") and "best_over_avx2" in c:
                args = name.split("/")[1:3]  # bpk:B, n:N
                check(f"build on {t}",
                      f"compact build, {' '.join(args)}: {c['best_ns']:.2f} / "
                      f"{c['avx2_ns']:.2f} ns/key", c["best_over_avx2"], ("compact", name), True)
    if targets:
        print("== the dispatch rule: " +
              ", ".join(f"{family} {targets.get(family, '?')}" for _, family in FAMILIES))
        if not checks:
            print("nothing to check: no family runs on an AVX-512 target, or the run has no "
                  "per-target rows (target-<name>)")
        for family, family_checks in checks.items():
            timed_interleaved = {m for _, _, m, inter in family_checks if inter}
            decide = [(d, r) for d, r, m, inter in family_checks
                      if inter or m not in timed_interleaved]
            ratios = sorted(r for _, r in decide)
            median = statistics.median(ratios)
            print(f"{'met   ' if median <= 1.0 else 'MISSED'}  {family} / AVX2 <= 1 (median of "
                  f"{len(ratios)} rows)  {median:.3f}  (rows {ratios[0]:.3f}-{ratios[-1]:.3f})")
            for detail, ratio, measure, inter in family_checks:
                dropped = not inter and measure in timed_interleaved
                print(f"          {detail} = {ratio:.3f}"
                      f"{'  (not counted: timed interleaved too)' if dropped else ''}")


if __name__ == "__main__":
    main()
