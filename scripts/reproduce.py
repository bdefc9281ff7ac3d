#!/usr/bin/env python3
"""Runs a study (experiments/NAME.json) into results/NAME/, then plots it.

A study file says how its raw results are computed ("run"):

  sweep      a grid ("grid": see `symphony help sweep`): symphony sweep writes
             results/NAME/results.jsonl (resumable: an interrupted study picks
             up where it stopped; a changed grid starts over);
  plan       "cases" (each a name and a config), "target_rate", "policies":
             symphony plan per case -> results/NAME/plan-I.json;
  loadcurve  "cases", "policies", "loads": symphony loadcurve per case ->
             results/NAME/loadcurve-I.json;
  sim        "cases": one symphony sim per case with its timelines ->
             results/NAME/sim-I.json, timeline-I.csv and model-timeline-I.csv.

Every raw file carries the program version, seed and full configuration.
scripts/plot.py NAME then writes results/NAME/NAME.csv and NAME.png (and a
table.txt) from the raw files.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYM = os.path.join(ROOT, "build", "sim", "symphony")


def die(msg):
    sys.exit("reproduce: " + msg)


def run(cmd, what):
    print("  $ " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd)
    if p.returncode != 0:
        die("%s: symphony exited %d" % (what, p.returncode))


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def need(study, key, kind, path):
    v = study.get(key)
    if not isinstance(v, kind) or (isinstance(v, (list, dict)) and not v):
        die("%s: key '%s' must be a non-empty %s" % (path, key, kind.__name__))
    return v


def run_sweep(study, outdir, jobs, path):
    grid = need(study, "grid", dict, path)
    gpath = os.path.join(outdir, "grid.json")
    res = os.path.join(outdir, "results.jsonl")
    old = None
    if os.path.exists(gpath):
        with open(gpath) as f:
            try:
                old = json.load(f)
            except json.JSONDecodeError:
                old = None
    if old != grid and os.path.exists(res):
        print("reproduce: the grid changed since %s was written; starting over" % os.path.relpath(res, ROOT),
              file=sys.stderr)
        os.remove(res)
    write_json(gpath, grid)
    run([SYM, "sweep", gpath, "--out", outdir, "--resume", "-j", str(jobs)], "sweep")


def cases_of(study, path):
    cases = need(study, "cases", list, path)
    for i, c in enumerate(cases):
        if not isinstance(c, dict) or not isinstance(c.get("config"), dict) or not c.get("name"):
            die("%s: cases[%d] needs a \"name\" and a \"config\" object" % (path, i))
    return cases


def run_cases(study, kind, outdir, jobs, path):
    cases = cases_of(study, path)
    for i, c in enumerate(cases):
        cfg = os.path.join(outdir, "case-%d.config.json" % i)
        write_json(cfg, c["config"])
        if kind == "plan":
            rate = study.get("target_rate")
            if not isinstance(rate, (int, float)) or rate <= 0:
                die("%s: key 'target_rate' must be a rate > 0" % path)
            pols = ";".join(need(study, "policies", list, path))
            run([SYM, "plan", cfg, "--target-rate", str(rate), "--policies", pols, "--json",
                 os.path.join(outdir, "plan-%d.json" % i)], c["name"])
        elif kind == "loadcurve":
            cmd = [SYM, "loadcurve", cfg, "--policies", ";".join(need(study, "policies", list, path)),
                   "--jobs", str(jobs), "--json", os.path.join(outdir, "loadcurve-%d.json" % i)]
            if study.get("loads"):
                cmd += ["--loads", ",".join(str(x) for x in study["loads"])]
            run(cmd, c["name"])
        else:
            run([SYM, "sim", cfg, "--quiet", "--json", os.path.join(outdir, "sim-%d.json" % i),
                 "--timeline", os.path.join(outdir, "timeline-%d.csv" % i),
                 "--model-timeline", os.path.join(outdir, "model-timeline-%d.csv" % i)], c["name"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="study name: experiments/NAME.json")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="parallel jobs (default: all cores)")
    ap.add_argument("--plot-only", action="store_true", help="only redraw from the raw results already there")
    a = ap.parse_args()
    path = os.path.join(ROOT, "experiments", a.name + ".json")
    try:
        with open(path) as f:
            study = json.load(f)
    except FileNotFoundError:
        names = sorted(n[:-5] for n in os.listdir(os.path.join(ROOT, "experiments")) if n.endswith(".json"))
        die("no study file %s (studies: %s)" % (os.path.relpath(path, ROOT), ", ".join(names)))
    except json.JSONDecodeError as e:
        die("%s: not valid JSON: %s" % (path, e))
    kind = study.get("run")
    if kind not in ("sweep", "plan", "loadcurve", "sim"):
        die("%s: key 'run' must be sweep, plan, loadcurve or sim" % path)
    if a.j < 1:
        die("-j must be at least 1")
    outdir = os.path.join(ROOT, "results", a.name)
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    if not a.plot_only:
        print("%s: %s" % (a.name, study.get("description", "")), file=sys.stderr)
        if kind == "sweep":
            run_sweep(study, outdir, a.j, path)
        else:
            run_cases(study, kind, outdir, a.j, path)
        print("%s: computed in %.0f s" % (a.name, time.time() - t0), file=sys.stderr)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot.py"), a.name])
    if p.returncode != 0:
        die("plot.py %s failed" % a.name)


if __name__ == "__main__":
    main()
