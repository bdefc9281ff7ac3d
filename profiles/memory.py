#!/usr/bin/env python3
"""Fills the memory fields (file_mb, static_mb, dynamic_mb) of the built-in zoos.

Usage: memory.py [--check] ZOO.json...

Where the numbers come from (see profiles/README.md):
  - file_mb: the measured file size for the six models of memory-measured.tsv, else the public
    size in sizes.tsv;
  - static_mb and dynamic_mb: measured where memory-measured.tsv has the model, else a
    least-squares line against the file size fitted on those six models;
  - the same figures for every GPU kind: static memory is the weights plus the framework's
    per-model buffers, which do not depend on the GPU; the measured dynamic memory (1.5 to 6 GB
    for models of 17 to 528 MB) is dominated by the framework's workspace, not by per-sample
    activations, so it is not scaled with the larger batches a faster GPU runs (an estimate:
    see the README there).
With --check, exits 1 and says which field differs when a file is not what this script writes.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def table(name):
    rows = []
    with open(os.path.join(HERE, name)) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rows.append(line.rstrip("\n").split("\t"))
    return rows


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return a, my - a * mx


def figures():
    measured = {r[0]: tuple(float(v) for v in r[1:4]) for r in table("memory-measured.tsv")}
    sizes = {r[0]: float(r[1]) for r in table("sizes.tsv")}
    files = [m[0] for m in measured.values()]
    sa, sb = fit(files, [m[1] for m in measured.values()])
    da, db = fit(files, [m[2] for m in measured.values()])
    out = {}
    for name, size in sizes.items():
        if name in measured:
            out[name] = measured[name]
        else:
            out[name] = (size, round(sa * size + sb), round(da * size + db))
    return out, (sa, sb, da, db)


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    figs, (sa, sb, da, db) = figures()
    bad = 0
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for m in doc["models"]:
            if m["name"] not in figs:
                print(f"{path}: model {m['name']} has no size in sizes.tsv", file=sys.stderr)
                bad = 1
                continue
            fm, st, dy = figs[m["name"]]
            want = {"file_mb": fm, "static_mb": float(st), "dynamic_mb": float(dy)}
            for k, v in want.items():
                if check and m.get(k) != v:
                    print(f"{path}: {m['name']}: {k} is {m.get(k)}, memory.py gives {v}", file=sys.stderr)
                    bad = 1
                m[k] = v
        src = doc["source"].split("; memory: ")[0]
        want_src = src + "; memory: profiles/memory.py (sizes.tsv, memory-measured.tsv)"
        if check and doc["source"] != want_src:
            print(f"{path}: source does not name profiles/memory.py", file=sys.stderr)
            bad = 1
        doc["source"] = want_src
        if not check:
            with open(path, "w") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")
    if not check:
        print(f"static_mb = {sa:.4f} * file_mb + {sb:.1f}; dynamic_mb = {da:.4f} * file_mb + {db:.1f}")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
