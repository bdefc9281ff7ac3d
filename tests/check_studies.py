#!/usr/bin/env python3
"""tests/check_studies.py SYMPHONY EXPERIMENTS_DIR - every sweep study in
experiments/ still configures: for each distinct model set and cluster of a
study's grid (the keys that decide whether a configuration is accepted: zoo,
models, GPUs, cluster, memory, partition, prefix models, queries), its first
point runs for a fifth of a simulated second. A key the simulator no longer
accepts, or a model set the memory check refuses (what broke five studies
once, unseen until `scripts/reproduce all`), fails here with the study, the
point and the simulator's message. Studies of other run kinds (plan, sim,
loadcurve, split, urgency) build their configurations in scripts/reproduce.py
and are not covered."""
import glob
import itertools
import json
import os
import subprocess
import sys
import tempfile

DECIDING = ("zoo", "models", "gpus", "num_models", "gpus_per_model", "cluster", "memory_check", "partition",
            "prefix_models", "prefix_batching", "queries")


def points(grid):
    base, axes = grid.get("base", {}), grid.get("axes", {})
    if not isinstance(base, dict):
        return  # a base file: resolved by the sweep itself
    keys = list(axes)
    for combo in itertools.product(*[axes[k] for k in keys]):
        cfg = dict(base)
        for k, v in zip(keys, combo):
            if k.startswith("@"):
                cfg.update({a: b for a, b in v.items() if a != "label"})
            else:
                cfg[k] = v
        yield combo, cfg


def main():
    symphony, exp_dir = sys.argv[1], sys.argv[2]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "point.json")
        for f in sorted(glob.glob(os.path.join(exp_dir, "*.json"))):
            with open(f) as fh:
                study = json.load(fh)
            grid = study.get("grid") if isinstance(study, dict) else None
            if not isinstance(grid, dict):
                continue
            seen = set()
            for combo, cfg in points(grid):
                key = json.dumps({k: cfg.get(k) for k in DECIDING}, sort_keys=True)
                if key in seen:
                    continue
                seen.add(key)
                cfg.update(duration_s=0.2, warmup_s=0, replications=1)
                with open(path, "w") as fh:
                    json.dump(cfg, fh)
                r = subprocess.run([symphony, "sim", path, "--quiet"], capture_output=True, text=True, timeout=120)
                checked += 1
                if r.returncode != 0:
                    failures.append("%s: point %s: %s" % (os.path.basename(f), json.dumps(combo)[:200],
                                                          r.stderr.strip()[:400]))
    for x in failures:
        print("check_studies: " + x)
    print("check_studies: %d configurations of the sweep studies checked, %d refused" % (checked, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
