#!/usr/bin/python3
"""libblockbloom_preload.so under programs blockbloom did not compile.

Debian's python3-plyvel (a C++ extension linking libleveldb.so.1d) and
LevelDB's C API called through ctypes write and read real databases under
LD_PRELOAD. Every answer is checked against a dict of what was written, the
filters' formats are read back with `blockbloom inspect DBDIR`, and the
environment switches of the preload (docs/PRELOAD.md) are checked one by one.

  preload_test.py PRELOAD_SO BLOCKBLOOM_CLI CASE
  CASE: plyvel | config | c_api

Exit status 77 (skipped) if plyvel is missing, unless BLOCKBLOOM_REQUIRE_PLYVEL
is set (the test command sets it: there a missing plyvel is a failure).
"""

import ctypes
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ORACLE_KEYS = 20000
BLOOM_BITS = 10


def workload(seed, count):
    """The writes of one run, deterministic: (key, value or None for delete).
    Every key starts with the byte `seed`, so a later seed's keys sort after
    an earlier one's and a compaction of one run's range leaves the other
    runs' tables alone."""
    rng = random.Random(seed)
    ops = []
    for i in range(count):
        shape = i % 4
        if shape == 0:
            key = b"user:%08d" % rng.randrange(10**8)
        elif shape == 1:
            key = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
        elif shape == 2:
            key = bytes(rng.randrange(128, 256) for _ in range(rng.randrange(1, 40)))
        else:
            key = b"seq-%d" % i
        key = bytes([seed]) + key
        ops.append((key, b"v%d-" % i + bytes([65 + i % 26]) * rng.randrange(0, 120)))
    # Deletes and overwrites of keys written before.
    for _ in range(count // 10):
        key = ops[rng.randrange(count)][0]
        ops.append((key, None if rng.random() < 0.5 else b"again-" + key))
    return ops


def oracle_of(ops, oracle=None):
    oracle = {} if oracle is None else oracle
    for key, value in ops:
        if value is None:
            oracle.pop(key, None)
        else:
            oracle[key] = value
    return oracle


def absent_keys(oracle, seed, count):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        key = b"absent:%d" % rng.randrange(10**9) if len(out) % 2 else bytes(
            rng.randrange(256) for _ in range(rng.randrange(1, 12)))
        if key not in oracle:
            out.append(key)
    return out


# ---- what the child processes run (under LD_PRELOAD or not) ----

def child_write_plyvel(dbdir, seed, count):
    import plyvel
    db = plyvel.DB(dbdir, create_if_missing=True, bloom_filter_bits=BLOOM_BITS)
    ops = workload(seed, count)
    for start in range(0, len(ops), 1000):
        with db.write_batch() as batch:
            for key, value in ops[start:start + 1000]:
                if value is None:
                    batch.delete(key)
                else:
                    batch.put(key, value)
    db.compact_range(start=bytes([seed]), stop=bytes([seed + 1]))
    db.close()


def child_check_plyvel(dbdir, seeds_counts):
    """Exits 1 on any answer that differs from the oracle."""
    import plyvel
    oracle = {}
    for seed, count in seeds_counts:
        oracle_of(workload(seed, count), oracle)
    db = plyvel.DB(dbdir, bloom_filter_bits=BLOOM_BITS)
    wrong = 0
    for key, value in oracle.items():
        wrong += db.get(key) != value
    for key in absent_keys(oracle, 5, 5000):
        wrong += db.get(key) is not None
    wrong += dict(db.iterator()) != oracle
    db.close()
    print("checked %d keys, %d wrong" % (len(oracle), wrong))
    sys.exit(1 if wrong else 0)


def child_write_c_api(dbdir, seed, count):
    """Writes through LevelDB's C API with leveldb_filterpolicy_create_bloom."""
    lib = ctypes.CDLL("libleveldb.so.1d")
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    lib.leveldb_filterpolicy_create_bloom.restype = vp
    lib.leveldb_filterpolicy_create_bloom.argtypes = [ctypes.c_int]
    lib.leveldb_filterpolicy_destroy.argtypes = [vp]
    lib.leveldb_options_create.restype = vp
    lib.leveldb_options_destroy.argtypes = [vp]
    lib.leveldb_options_set_create_if_missing.argtypes = [vp, ctypes.c_ubyte]
    lib.leveldb_options_set_filter_policy.argtypes = [vp, vp]
    lib.leveldb_writeoptions_create.restype = vp
    lib.leveldb_writeoptions_destroy.argtypes = [vp]
    lib.leveldb_open.restype = vp
    lib.leveldb_open.argtypes = [vp, cp, ctypes.POINTER(cp)]
    lib.leveldb_put.argtypes = [vp, vp, cp, sz, cp, sz, ctypes.POINTER(cp)]
    lib.leveldb_delete.argtypes = [vp, vp, cp, sz, ctypes.POINTER(cp)]
    lib.leveldb_compact_range.argtypes = [vp, cp, sz, cp, sz]
    lib.leveldb_close.argtypes = [vp]

    policy = lib.leveldb_filterpolicy_create_bloom(BLOOM_BITS)
    options = lib.leveldb_options_create()
    lib.leveldb_options_set_create_if_missing(options, 1)
    lib.leveldb_options_set_filter_policy(options, policy)
    err = cp()
    db = lib.leveldb_open(options, dbdir.encode(), ctypes.byref(err))
    if err.value is not None:
        sys.exit("leveldb_open: %s" % err.value.decode())
    wopts = lib.leveldb_writeoptions_create()
    for key, value in workload(seed, count):
        if value is None:
            lib.leveldb_delete(db, wopts, key, len(key), ctypes.byref(err))
        else:
            lib.leveldb_put(db, wopts, key, len(key), value, len(value), ctypes.byref(err))
        if err.value is not None:
            sys.exit("leveldb_put/delete: %s" % err.value.decode())
    lib.leveldb_compact_range(db, bytes([seed]), 1, bytes([seed + 1]), 1)
    lib.leveldb_close(db)
    lib.leveldb_writeoptions_destroy(wopts)
    lib.leveldb_options_destroy(options)
    lib.leveldb_filterpolicy_destroy(policy)


# ---- the parent: runs children, reads their filters ----

class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


class Harness:
    def __init__(self, preload, cli, scratch):
        self.preload = preload
        self.cli = cli
        self.scratch = scratch

    def run(self, preload, args, env=None):
        """Runs this script as a child; returns its stderr."""
        child_env = {k: v for k, v in os.environ.items()
                     if not k.startswith("BLOCKBLOOM_PRELOAD") and k != "LD_PRELOAD"}
        if preload:
            child_env["LD_PRELOAD"] = self.preload
        child_env.update(env or {})
        result = subprocess.run([sys.executable, os.path.abspath(__file__), "child"] +
                                [str(a) for a in args],
                                env=child_env, capture_output=True, text=True)
        if result.returncode != 0:
            raise Failure("child %s (preload=%s, env=%s) exited %d:\n%s%s" %
                          (args, preload, env, result.returncode, result.stdout, result.stderr))
        return result.stderr

    def inspect(self, dbdir):
        """[(policy name, format column, bits/key)] per table, from blockbloom inspect."""
        out = subprocess.run([self.cli, "inspect", dbdir], capture_output=True, text=True)
        expect(out.returncode == 0, "blockbloom inspect %s: %s" % (dbdir, out.stderr))
        row = re.compile(r"^(\S+\.(?:ldb|sst))\s+(\S+)\s+\d+\s+\d+\s+\d+\s+(\S+)\s+(.+?)\s{2,}\S")
        tables = [(m.group(2), m.group(4), float(m.group(3)))
                  for m in map(row.match, out.stdout.splitlines()) if m]
        expect(tables, "blockbloom inspect shows no table:\n" + out.stdout)
        return tables

    def dbdir(self, name):
        path = os.path.join(self.scratch, name)
        shutil.rmtree(path, ignore_errors=True)
        return path


BUILTIN_NAME = "leveldb.BuiltinBloomFilter2"
REPORT = "blockbloom-preload: leveldb::NewBloomFilterPolicy(10) -> "


def case_plyvel(h):
    db = h.dbdir("plyvel")
    stderr = h.run(True, ["write", db, 1, ORACLE_KEYS], {"BLOCKBLOOM_PRELOAD_REPORT": "1"})
    expect(REPORT + "blockbloom migrating blocked, 10 bits/key" in stderr, "no such report line; stderr:\n" + stderr)
    tables = h.inspect(db)
    for policy, fmt, _ in tables:
        expect(policy == BUILTIN_NAME, "policy name %s" % policy)
        expect(fmt.startswith("blockbloom blocked v2") and "built-in" not in fmt, fmt)
    # Read back with the preload and with stock LevelDB (which reads the
    # blocked filters as "may match"): every answer as the dict says.
    h.run(True, ["check", db, 1, ORACLE_KEYS])
    h.run(False, ["check", db, 1, ORACLE_KEYS])
    # More writes without the preload: built-in filters next to blockbloom's.
    # The preload then reads both kinds (LevelDB's through blockbloom's own
    # reader: it never calls back into itself).
    h.run(False, ["write", db, 2, ORACLE_KEYS // 4])
    formats = " | ".join(fmt for _, fmt, _ in h.inspect(db))
    expect("leveldb built-in" in formats and "blockbloom blocked" in formats, formats)
    h.run(True, ["check", db, 1, ORACLE_KEYS, 2, ORACLE_KEYS // 4])
    h.run(False, ["check", db, 1, ORACLE_KEYS, 2, ORACLE_KEYS // 4])


def case_config(h):
    # Without BLOCKBLOOM_PRELOAD_REPORT the preload says nothing.
    db = h.dbdir("quiet")
    stderr = h.run(True, ["write", db, 3, 2000])
    expect("blockbloom-preload" not in stderr, "no such report line; stderr:\n" + stderr)
    expect(all(f.startswith("blockbloom blocked") for _, f, _ in h.inspect(db)), "quiet")
    # The off switch: LevelDB's own filters.
    for off in ("off", "0"):
        db = h.dbdir("off")
        stderr = h.run(True, ["write", db, 3, 2000],
                       {"BLOCKBLOOM_PRELOAD": off, "BLOCKBLOOM_PRELOAD_REPORT": "1"})
        expect(REPORT + "LevelDB's built-in (BLOCKBLOOM_PRELOAD=%s)" % off in stderr, "no such report line; stderr:\n" + stderr)
        for _, fmt, _ in h.inspect(db):
            expect(fmt.startswith("leveldb built-in"), fmt)
    # The compact migrating policy.
    db = h.dbdir("compact")
    stderr = h.run(True, ["write", db, 3, 2000],
                   {"BLOCKBLOOM_PRELOAD_POLICY": "compact", "BLOCKBLOOM_PRELOAD_REPORT": "1"})
    expect(REPORT + "blockbloom migrating compact, 10 bits/key" in stderr, "no such report line; stderr:\n" + stderr)
    for policy, fmt, _ in h.inspect(db):
        expect(policy == BUILTIN_NAME and fmt.startswith("blockbloom compact"), fmt)
    h.run(True, ["check", db, 3, 2000])
    h.run(False, ["check", db, 3, 2000])
    # A bits/key override: the program asks for 10, the filters get 20.
    db = h.dbdir("bits")
    stderr = h.run(True, ["write", db, 3, 2000],
                   {"BLOCKBLOOM_PRELOAD_BITS_PER_KEY": "20", "BLOCKBLOOM_PRELOAD_REPORT": "1"})
    expect(REPORT + "blockbloom migrating blocked, 20 bits/key (BLOCKBLOOM_PRELOAD_BITS_PER_KEY)"
           in stderr, "no such report line; stderr:\n" + stderr)
    for _, fmt, bits in h.inspect(db):
        expect(fmt.startswith("blockbloom blocked") and 19 <= bits <= 22, "%s %s" % (fmt, bits))
    h.run(True, ["check", db, 3, 2000])
    # Values not understood: LevelDB's own filters, and a line on stderr even
    # without BLOCKBLOOM_PRELOAD_REPORT.
    # Every variable is checked, also beside BLOCKBLOOM_PRELOAD=off; numbers
    # are plain decimals (no hex, spaces or exponents).
    for env, said in ((("BLOCKBLOOM_PRELOAD_POLICY", "bogus"), "is not blocked or compact"),
                      (("BLOCKBLOOM_PRELOAD_BITS_PER_KEY", "ten"), "is not a number in [1, 64]"),
                      (("BLOCKBLOOM_PRELOAD_BITS_PER_KEY", "0.5"), "is not a number in [1, 64]"),
                      (("BLOCKBLOOM_PRELOAD_BITS_PER_KEY", "0x10"), "is not a number in [1, 64]"),
                      (("BLOCKBLOOM_PRELOAD_BITS_PER_KEY", " 12"), "is not a number in [1, 64]"),
                      (("BLOCKBLOOM_PRELOAD_REPORT", "yes"), "is not 1 or 0"),
                      (("BLOCKBLOOM_PRELOAD", "maybe"), "is not on, 1, off or 0")):
        for off in (False, True):
            variables = dict([env])
            if off and env[0] != "BLOCKBLOOM_PRELOAD":
                variables["BLOCKBLOOM_PRELOAD"] = "off"
            db = h.dbdir("bad")
            stderr = h.run(True, ["write", db, 3, 2000], variables)
            expect("blockbloom-preload: %s=%s %s: using LevelDB's built-in filter" %
                   (env[0], env[1], said) in stderr, "%s: no such report line; stderr:\n%s" %
                   (variables, stderr))
            for _, fmt, _ in h.inspect(db):
                expect(fmt.startswith("leveldb built-in"), "%s: %s" % (variables, fmt))


def case_c_api(h):
    # libleveldb's leveldb_filterpolicy_create_bloom calls NewBloomFilterPolicy
    # through its PLT (an interposable call): the preload covers C callers.
    db = h.dbdir("c_api")
    stderr = h.run(True, ["write_c", db, 4, 5000], {"BLOCKBLOOM_PRELOAD_REPORT": "1"})
    expect(REPORT + "blockbloom migrating blocked, 10 bits/key" in stderr, "no such report line; stderr:\n" + stderr)
    for policy, fmt, _ in h.inspect(db):
        expect(policy == BUILTIN_NAME and fmt.startswith("blockbloom blocked"), fmt)
    h.run(True, ["check", db, 4, 5000])
    h.run(False, ["check", db, 4, 5000])
    # And without the preload, the C API gives LevelDB's own filters.
    db = h.dbdir("c_api_stock")
    h.run(False, ["write_c", db, 4, 5000])
    for _, fmt, _ in h.inspect(db):
        expect(fmt.startswith("leveldb built-in"), fmt)


def main(argv):
    if len(argv) >= 2 and argv[1] == "child":
        what, dbdir, numbers = argv[2], argv[3], [int(a) for a in argv[4:]]
        if what == "write":
            child_write_plyvel(dbdir, *numbers)
        elif what == "write_c":
            child_write_c_api(dbdir, *numbers)
        elif what == "check":
            child_check_plyvel(dbdir, list(zip(numbers[::2], numbers[1::2])))
        return 0
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import plyvel  # noqa: F401
    except ImportError:
        if os.environ.get("BLOCKBLOOM_REQUIRE_PLYVEL"):
            print("python3-plyvel is missing (scripts/deps.sh installs it)", file=sys.stderr)
            return 1
        print("skipped: python3-plyvel is not installed", file=sys.stderr)
        return 77
    cases = {"plyvel": case_plyvel, "config": case_config, "c_api": case_c_api}
    scratch = tempfile.mkdtemp(prefix="blockbloom_preload_")
    try:
        cases[argv[3]](Harness(os.path.abspath(argv[1]), argv[2], scratch))
    except Failure as f:
        print("FAILED: %s" % f, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("ok: %s" % argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
