#!/usr/bin/env python3
"""Runs a study file (experiments/NAME.json) and writes results/NAME/.

A study file names its cases (each a complete experiment config), the
policies to compare and what each point computes ("goodput": the bisection
search of `symphony goodput`). Every (case, policy) point runs the symphony
binary with the case's config and --policy; its full JSON result (config,
seed, version, metrics) is kept in results/NAME/points/, one row per point
goes to results/NAME/results.csv, and the table is printed and written to
results/NAME/table.txt.
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYM = os.path.join(ROOT, "build", "sim", "symphony")


def run_point(study_name, idx, case, policy, outdir):
    cfg_path = os.path.join(outdir, "points", "%03d.config.json" % idx)
    res_path = os.path.join(outdir, "points", "%03d.json" % idx)
    with open(cfg_path, "w") as f:
        json.dump(case["config"], f, indent=1)
    t0 = time.time()
    p = subprocess.run([SYM, "goodput", cfg_path, "--policy", policy, "--quiet", "--json", res_path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s / %s: symphony exited %d: %s" % (case["name"], policy, p.returncode,
                                                                 p.stderr.strip()))
    with open(res_path) as f:
        r = json.load(f)
    return {
        "case": case["name"],
        "policy": policy,
        "goodput_rps": r["goodput_rps"],
        "upper_bound_rps": r["upper_bound_rps"],
        "bad_rate": r["bad_rate"],
        "batch_p50": r["batch_size"]["p50"],
        "batch_mean": r["batch_size"]["mean"],
        "queueing_p99_ms": r["queueing_ms"]["p99"],
        "latency_p99_ms": r["latency_ms"]["p99"],
        "gpu_busy_fraction": r["gpu_busy_fraction"],
        "preempted_gpu_seconds": r.get("preempted_gpu_seconds", 0),
        "seed": r["seed"],
        "version": r["version"],
        "result_file": os.path.relpath(res_path, ROOT),
        "wall_s": time.time() - t0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="study name: experiments/NAME.json")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="points run in parallel (default: all cores)")
    a = ap.parse_args()
    path = os.path.join(ROOT, "experiments", a.name + ".json")
    try:
        with open(path) as f:
            study = json.load(f)
    except FileNotFoundError:
        sys.exit("reproduce: no study file %s" % path)
    except json.JSONDecodeError as e:
        sys.exit("reproduce: %s: not valid JSON: %s" % (path, e))
    for key in ("cases", "policies"):
        if not isinstance(study.get(key), list) or not study[key]:
            sys.exit("reproduce: %s: key '%s' must be a non-empty list" % (path, key))
    if study.get("compute", "goodput") != "goodput":
        sys.exit("reproduce: %s: compute '%s' is not supported (goodput)" % (path, study["compute"]))
    outdir = os.path.join(ROOT, "results", a.name)
    os.makedirs(os.path.join(outdir, "points"), exist_ok=True)
    points = [(c, p) for c in study["cases"] for p in study["policies"]]
    print("%s: %d points (%d cases x %d policies), %d at a time" % (a.name, len(points), len(study["cases"]),
                                                                     len(study["policies"]), a.j), file=sys.stderr)
    rows = [None] * len(points)
    t0 = time.time()
    with cf.ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
        futs = {ex.submit(run_point, a.name, i, c, p, outdir): i for i, (c, p) in enumerate(points)}
        done = 0
        for fut in cf.as_completed(futs):
            i = futs[fut]
            try:
                rows[i] = fut.result()
            except Exception as e:  # report and stop: a half table is no result
                for f in futs:
                    f.cancel()
                sys.exit("reproduce: %s" % e)
            done += 1
            print("  [%d/%d] %-36s %-18s %9.0f req/s  (%.1f s)" % (done, len(points), rows[i]["case"],
                  rows[i]["policy"], rows[i]["goodput_rps"], rows[i]["wall_s"]), file=sys.stderr)
    tmp = os.path.join(outdir, "results.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, os.path.join(outdir, "results.csv"))
    lines = []
    for c in study["cases"]:
        sym_row = next((r for r in rows if r["case"] == c["name"] and r["policy"] == "symphony"), None)
        lines.append("")
        lines.append(c["name"])
        lines.append("%-20s %12s %9s %10s %14s %9s" % ("policy", "goodput r/s", "vs symph", "batch p50",
                                                      "queue p99 ms", "GPU busy"))
        for r in rows:
            if r["case"] != c["name"]:
                continue
            rel = r["goodput_rps"] / sym_row["goodput_rps"] if sym_row and sym_row["goodput_rps"] else 0
            lines.append("%-20s %12.0f %8.2fx %10d %14.2f %8.0f%%" % (r["policy"], r["goodput_rps"], rel,
                         r["batch_p50"], r["queueing_p99_ms"], 100 * r["gpu_busy_fraction"]))
    version = rows[0]["version"]
    head = "%s (symphony %s, seed per case config; %.0f s)" % (a.name, version, time.time() - t0)
    text = head + "\n" + "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(text)
    print(text)
    print("results: %s/results.csv, table.txt, points/" % os.path.relpath(outdir, ROOT), file=sys.stderr)


if __name__ == "__main__":
    main()
