#!/usr/bin/env python3
"""Writes the hand-made seed inputs (seed*) of the oracle fuzz targets into
fuzz/corpus/<target>/. Deterministic (fixed random seed); rerunning rewrites
the same files. Each seed follows the target's op encoding (see the
*_fuzz.cc file), so fuzzing starts from inputs that reach every op.
decoders_bytes' seeds are real encodings: see docs/TESTING.md."""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def key(r, n=None):
    """FuzzInput::Key(): a length byte (0..63) and that many bytes."""
    n = r.randrange(0, 12) if n is None else n
    return [n] + [r.randrange(256) for _ in range(n)]


def write(target, name, b):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(b))


def oracle_ops(r, b, n, weights, repeat):
    # op % 7: 0 insert, 1 repeated insert, 2 erase held, 3 erase ruled-out,
    # 4 query, 5 batch query, 6 full check.
    for _ in range(n):
        op = r.choice(weights)
        b.append(op)
        if op in (0, 3):
            b += key(r)
        elif op == 1:
            b += key(r, 2) + [repeat(r)]
        elif op == 2:
            b += [r.randrange(256), r.randrange(256)]
        elif op == 4:
            b += [1, r.randrange(256), r.randrange(256)] if r.random() < .5 else [0] + key(r)
        elif op == 5:
            b += [2] + key(r) + key(r)
    b.append(6)


def main():
    r = random.Random(3)
    # counting_oracle: shape byte (odd: tiny geometry), then ops.
    for i, hdr in enumerate([[1, 3], [3, 15], [0, 0x40, 0x00, 0x30], [0, 0x10, 0x00, 0x00], [5, 0]]):
        b = list(hdr)
        oracle_ops(r, b, 60, [0, 0, 1, 2, 2, 3, 4, 5, 6], lambda r: r.randrange(40))
        write("counting_oracle", f"seed{i}", b)
    # dleft_oracle: shape byte (odd: 1..32 buckets), then ops.
    for i, hdr in enumerate([[1], [3], [0, 0x40, 0x00, 0x03], [0, 0x08, 0x00, 0x05], [11]]):
        b = list(hdr)
        oracle_ops(r, b, 80, [0, 0, 0, 1, 2, 2, 3, 4, 5, 6], lambda r: 5)
        write("dleft_oracle", f"seed{i}", b)

    # filtered_db: config byte, then ops % 10.
    def pk(r):
        return [r.randrange(192)] if r.random() < .85 else [200] + key(r)
    for i, cfg in enumerate([0x01, 0x00, 0x81, 0x3e, 0x43]):
        b = [cfg]
        for _ in range(120):
            op = r.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 4, 5])
            b.append(op)
            if op in (0, 1):
                b += pk(r) + [r.randrange(256)]
            elif op == 2:
                b += pk(r)
            elif op == 3:
                n = r.randrange(8)
                b.append(n)
                for _ in range(n + 1):
                    b += pk(r)
                    t = r.randrange(2)
                    b.append(t)
                    if t:
                        b.append(r.randrange(256))
            elif op in (4, 5, 6):
                b += pk(r)
        b.append(7)
        write("filtered_db", f"seed{i}", b)

    # variants_oracle: kind byte (standard x2, partitioned, scalable,
    # blocked), shape bytes, ops % 7.
    for kind in range(5):
        for j in range(2):
            shape = [j, r.randrange(256), r.randrange(4), r.randrange(256)]
            if kind == 3:
                shape = [r.randrange(64), 0, 0, 0] if j == 0 else [1, 1, 1, 1]
            b = [kind] + shape
            for _ in range(80):
                op = r.choice([0, 0, 1, 2, 3, 4, 5, 6])
                b.append(op)
                if op in (0, 1, 2):
                    b += key(r)
                elif op == 5:
                    same = r.randrange(2)
                    b += [0, same]
                    if not same:
                        b += [j, r.randrange(256), r.randrange(4), r.randrange(256)]
                    b += [3] + key(r) + key(r) + key(r)
            write("variants_oracle", f"seed{kind}_{j}", b)


if __name__ == "__main__":
    main()
