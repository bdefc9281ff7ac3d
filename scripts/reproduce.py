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
             results/NAME/sim-I.json, timeline-I.csv and model-timeline-I.csv;
  split      "query" (see `symphony help split`): symphony split ->
             results/NAME/split.json;
  urgency    spike traces and one symphony sim per case, policy and seed
             (scripts/urgency-study) -> results/NAME/urgency.json.

Every raw file carries the program version, commit, seed, replications and
full configuration. scripts/plot.py NAME then writes results/NAME/NAME.csv and
NAME.png (and a table.txt) from the raw files.

  reproduce.py NAME [-j N] [--plot-only] [--file STUDY.json] [--out DIR]
  reproduce.py all [-j N]     every study the report uses, then the report
  reproduce.py report [...]   scripts/report.py: docs/reproduction.md

--file runs a copy of a study file from elsewhere (say with fewer seeds or a
shorter duration, to try the plumbing) under the study name NAME, and --out
writes its results to DIR instead of results/NAME/ (so that a trial never
mixes with the real results).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYM = os.path.join(ROOT, "build", "symphony")


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


def study_names():
    """The study files in experiments/ (every NAME.json with a "run" key)."""
    names = []
    for n in sorted(os.listdir(os.path.join(ROOT, "experiments"))):
        if not n.endswith(".json"):
            continue
        try:
            with open(os.path.join(ROOT, "experiments", n)) as f:
                if "run" in json.load(f):
                    names.append(n[:-5])
        except (OSError, ValueError):
            pass
    return names


def run_all(jobs):
    """Every study the report uses (those whose results exist are resumed or redrawn
    by their own rules), then the report."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import report  # noqa: E402 (scripts/report.py: the list of studies it reads)
    for name in report.studies_for_all():
        print("reproduce all: %s" % name, file=sys.stderr)
        p = subprocess.run([sys.executable, os.path.abspath(__file__), name, "-j", str(jobs)])
        if p.returncode != 0:
            die("all: study %s failed" % name)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py")])
    sys.exit(p.returncode)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        os.execv(sys.executable, [sys.executable, os.path.join(ROOT, "scripts", "report.py")] + sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="study name: experiments/NAME.json; 'all'; or 'report'")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="parallel jobs (default: all cores)")
    ap.add_argument("--plot-only", action="store_true", help="only redraw from the raw results already there")
    ap.add_argument("--file", help="the study file to run (default: experiments/NAME.json)")
    ap.add_argument("--out", help="the results directory (default: results/NAME)")
    a = ap.parse_args()
    if a.j < 1:
        die("-j must be at least 1")
    if a.name == "all":
        if a.file or a.out or a.plot_only:
            die("all takes only -j")
        run_all(a.j)
    path = os.path.abspath(a.file) if a.file else os.path.join(ROOT, "experiments", a.name + ".json")
    try:
        with open(path) as f:
            study = json.load(f)
    except FileNotFoundError:
        die("no study file %s (studies: %s)" % (os.path.relpath(path, ROOT), ", ".join(study_names())))
    except json.JSONDecodeError as e:
        die("%s: not valid JSON: %s" % (path, e))
    kind = study.get("run")
    if kind not in ("sweep", "plan", "loadcurve", "sim", "split", "urgency"):
        die("%s: key 'run' must be sweep, plan, loadcurve, sim, split or urgency" % path)
    outdir = os.path.abspath(a.out) if a.out else os.path.join(ROOT, "results", a.name)
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    if not a.plot_only:
        print("%s: %s" % (a.name, study.get("description", "")), file=sys.stderr)
        if kind == "sweep":
            run_sweep(study, outdir, a.j, path)
        elif kind == "urgency":
            run([sys.executable, os.path.join(ROOT, "scripts", "urgency-study"), path, outdir], a.name)
        elif kind == "split":
            q = os.path.join(outdir, "query.json")
            write_json(q, need(study, "query", dict, path))
            run([SYM, "split", q, "--quiet", "--json", os.path.join(outdir, "split.json")], a.name)
        else:
            run_cases(study, kind, outdir, a.j, path)
        print("%s: computed in %.0f s" % (a.name, time.time() - t0), file=sys.stderr)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot.py"), a.name] +
                       (["--dir", outdir] if a.out else []))
    if p.returncode != 0:
        die("plot.py %s failed" % a.name)


if __name__ == "__main__":
    main()
