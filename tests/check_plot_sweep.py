#!/usr/bin/env python3
"""tests/check_plot_sweep.py SYMPHONY SOURCE_ROOT - `scripts/plot.py sweep` plots any sweep:
a small sim sweep (3 axes, one with 3 seeds) is run, plotted with --x/--group/--where and with
subplots, and the CSV's rows are checked against the results lines; every mismatch is refused
(exit 2, nothing written). Needs Debian's /usr/bin/python3 with matplotlib (scripts/setup
installs python3-matplotlib)."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

symphony, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
plot = ["/usr/bin/python3", os.path.join(root, "scripts", "plot.py"), "sweep"]
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL: " + what)


def run(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


tmp = tempfile.mkdtemp(prefix="symphony-plot-")
try:
    grid = {"name": "plot-test", "compute": "sim",
            "base": {"models": [{"name": "m", "alpha_ms": 1.053, "beta_ms": 5.072}], "slo_ms": 25,
                     "duration_s": 2, "warmup_s": 0.5, "rate": 3000},
            "axes": {"gpus": [2, 4, 8], "policy": ["symphony", "eager"], "replications": [1, 3]}}
    with open(os.path.join(tmp, "grid.json"), "w") as f:
        json.dump(grid, f)
    r = run([symphony, "sweep", "grid.json", "--out", "sw", "--quiet", "-j", "2"], tmp)
    check(r.returncode == 0, "the sweep runs: " + r.stderr)
    lines = [json.loads(l) for l in open(os.path.join(tmp, "sw", "results.jsonl"))]
    check(len(lines) == 12, "12 points")

    r = run(plot + ["sw", "--list"], tmp)
    check(r.returncode == 0 and "axis gpus: 2, 4, 8" in r.stdout and "axis policy: symphony, eager" in r.stdout
          and "goodput_served_rps" in r.stdout and "latency_ms.p99" in r.stdout, "--list: " + r.stdout + r.stderr)

    # x = gpus, one line per policy, 3 seeds: the CSV has the lines' means and intervals
    r = run(plot + ["sw", "--grid", "grid.json", "--x", "gpus", "--group", "policy", "--where", "replications=3",
                    "--out", "p1.png"], tmp)
    check(r.returncode == 0, "the plot: " + r.stderr)
    check(os.path.getsize(os.path.join(tmp, "p1.png")) > 1000, "a PNG")
    rows = list(csv.DictReader(open(os.path.join(tmp, "p1.csv"))))
    check(len(rows) == 6, "6 rows (3 GPU counts x 2 policies): %d" % len(rows))
    by_point = {d["point"]: d for d in lines}
    for row in rows:
        d = by_point[int(row["point"])]
        check(d["key"]["replications"] == 3 and str(d["key"]["gpus"]) == row["x"] and d["key"]["policy"] == row["group"],
              "row %s is its point" % row)
        check(abs(float(row["mean"]) - d["goodput_served_rps_mean"]) < 1e-6, "mean of point %s" % row["point"])
        lo, hi = d["goodput_served_rps_ci95"]
        check(abs(float(row["ci_low"]) - lo) < 1e-6 and abs(float(row["ci_high"]) - hi) < 1e-6,
              "interval of point %s" % row["point"])
        check(row["seeds"] == "3" and row["commit"] == d["commit"], "seeds and commit of point %s" % row["point"])
    # the policies differ at 2 GPUs and 3000 r/s (overload): the plot is not of one constant
    check(len({row["mean"] for row in rows}) > 1, "the values differ")

    # no --where: one subplot per value of replications; a nested metric; one seed has no interval
    r = run(plot + ["sw", "--x", "policy", "--metric", "latency_ms.p99", "--out", "p2.png"], tmp)
    check(r.returncode == 0, "subplots: " + r.stderr)
    rows = list(csv.DictReader(open(os.path.join(tmp, "p2.csv"))))
    check(sorted({row["facet"] for row in rows}) == ["gpus=2, replications=1", "gpus=2, replications=3",
                                                     "gpus=4, replications=1", "gpus=4, replications=3",
                                                     "gpus=8, replications=1", "gpus=8, replications=3"],
          "facets: %s" % sorted({row["facet"] for row in rows}))
    # latency_ms is of the first seed's run (metrics_from): no interval even with 3 seeds
    check(all(row["ci_low"] == "" for row in rows), "no interval for a first-seed metric")
    for row in rows:
        check(abs(float(row["mean"]) - by_point[int(row["point"])]["latency_ms"]["p99"]) < 1e-6, "p99 of a point")
    # bad_rate: the mean over the seeds (bad_rate_mean) with its interval, none for one seed
    r = run(plot + ["sw", "--x", "gpus", "--group", "policy", "--metric", "bad_rate", "--out", "p3.png"], tmp)
    check(r.returncode == 0, "bad rate: " + r.stderr)
    rows = list(csv.DictReader(open(os.path.join(tmp, "p3.csv"))))
    check(len(rows) == 12 and all((row["ci_low"] == "") == (row["seeds"] == "1") for row in rows),
          "intervals only with seeds")
    for row in rows:
        d = by_point[int(row["point"])]
        check(abs(float(row["mean"]) - d.get("bad_rate_mean", d["bad_rate"])) < 1e-9, "bad rate of a point")

    # --ratio symphony/eager: per point, the mean of the per-seed ratios of the two policies' lines
    r = run(plot + ["sw", "--x", "gpus", "--where", "replications=3", "--ratio", "symphony/eager", "--out", "pr.png"],
            tmp)
    check(r.returncode == 0, "the ratio plot: " + r.stderr)
    rows = list(csv.DictReader(open(os.path.join(tmp, "pr.csv"))))
    check(len(rows) == 3, "3 ratio rows (one per GPU count): %d" % len(rows))
    for row in rows:
        pair = {d["key"]["policy"]: d for d in lines if str(d["key"]["gpus"]) == row["x"]
                and d["key"]["replications"] == 3}
        want = [a / b for a, b in zip(pair["symphony"]["goodput_served_rps_by_seed"],
                                      pair["eager"]["goodput_served_rps_by_seed"])]
        check(abs(float(row["mean"]) - sum(want) / 3) < 1e-9 and row["ci_low"] != "",
              "the ratio at %s GPUs: %s, want %s" % (row["x"], row["mean"], sum(want) / 3))
    r = run(plot + ["sw", "--x", "gpus", "--ratio", "symphony/fifo", "--out", "px.png"], tmp)
    check(r.returncode == 2 and "fifo is not a value of policy" in r.stderr, "a ratio of a value not there: " + r.stderr)

    # a goodput sweep with seeds: goodput_rps gets its interval, goodput_ci95 (once looked up as
    # goodput_rps_ci95, so goodput never had error bars)
    gp = {"name": "plot-goodput", "compute": "goodput",
          "base": {"models": [{"name": "m", "alpha_ms": 1.053, "beta_ms": 5.072}], "slo_ms": 25,
                   "duration_s": 2, "warmup_s": 0.5},
          "axes": {"gpus": [2, 3], "replications": [3]}}
    with open(os.path.join(tmp, "gp.json"), "w") as f:
        json.dump(gp, f)
    r = run([symphony, "sweep", "gp.json", "--out", "swg", "--quiet", "-j", "2"], tmp)
    check(r.returncode == 0, "the goodput sweep runs: " + r.stderr)
    glines = {d["point"]: d for d in (json.loads(l) for l in open(os.path.join(tmp, "swg", "results.jsonl")))}
    r = run(plot + ["swg", "--x", "gpus", "--out", "pg.pdf"], tmp)
    check(r.returncode == 0, "the goodput plot: " + r.stderr)
    check(open(os.path.join(tmp, "pg.pdf"), "rb").read(5) == b"%PDF-", "a PDF figure")
    r = run(plot + ["swg", "--x", "gpus", "--out", "pg.svg"], tmp)
    svg = open(os.path.join(tmp, "pg.svg"), "rb").read()
    check(r.returncode == 0 and b"<svg" in svg[:4096], "an SVG figure")
    check(b"<!-- goodput (req/s) -->" in svg and b"<!-- GPUs -->" in svg, "axis labels with units in the SVG")
    for row in csv.DictReader(open(os.path.join(tmp, "pg.csv"))):
        d = glines[int(row["point"])]
        lo, hi = d["goodput_ci95"]
        check(row["ci_low"] != "" and abs(float(row["ci_low"]) - lo) < 1e-6 and abs(float(row["ci_high"]) - hi) < 1e-6,
              "goodput's interval in the CSV: %s, the line's %s" % (row, d["goodput_ci95"]))

    # refusals: exit 2, the cause named, nothing written
    bad_grid = dict(grid, axes=dict(grid["axes"], gpus=[2, 4, 16]))
    with open(os.path.join(tmp, "other.json"), "w") as f:
        json.dump(bad_grid, f)
    with open(os.path.join(tmp, "renamed.json"), "w") as f:
        json.dump(dict(grid, name="another"), f)
    other = dict(grid, name="plot-test-2", axes={"gpus": [2], "policy": ["symphony"], "replications": [1]})
    with open(os.path.join(tmp, "grid2.json"), "w") as f:
        json.dump(other, f)
    r = run([symphony, "sweep", "grid2.json", "--out", "sw2", "--quiet"], tmp)
    check(r.returncode == 0, "the second sweep runs")
    with open(os.path.join(tmp, "mixed.jsonl"), "w") as f:
        f.write(open(os.path.join(tmp, "sw", "results.jsonl")).read())
        f.write(open(os.path.join(tmp, "sw2", "results.jsonl")).read())
    with open(os.path.join(tmp, "broken.jsonl"), "w") as f:
        text = open(os.path.join(tmp, "sw", "results.jsonl")).read().splitlines()
        f.write("\n".join(text[:3] + ["{\"point\": 3, oops"] + text[4:]) + "\n")
    open(os.path.join(tmp, "empty.jsonl"), "w").close()
    with open(os.path.join(tmp, "wide.jsonl"), "w") as f:  # 14 values of an axis that is neither x nor group
        for i in range(14):
            f.write(json.dumps(dict(lines[0], point=i, npoints=14, key={"f": i, "x": 1})) + "\n")
    cases = [
        (["sw", "--x", "slo_ms"], "--x slo_ms: not an axis of the grid (axes: gpus, policy, replications)"),
        (["sw", "--x", "gpus", "--group", "bogus"], "--group bogus: not an axis"),
        (["sw", "--x", "gpus", "--metric", "goodput_banana"], "--metric goodput_banana: not a number of the lines"),
        (["sw", "--x", "gpus", "--where", "policy=fifo"], "policy has the values symphony, eager"),
        (["sw", "--x", "gpus", "--where", "nope=1"], "--where nope=1: expected AXIS=LABEL"),
        (["sw", "--grid", "other.json", "--x", "gpus"], "gpus = 8 is not a value of the axis in --grid other.json"),
        (["sw", "--grid", "renamed.json", "--x", "gpus"], "holds grid 'plot-test', --grid renamed.json is 'another'"),
        (["mixed.jsonl", "--x", "gpus"], "lines of different grid_ids"),
        (["broken.jsonl", "--x", "gpus"], "broken.jsonl:4:"),
        (["empty.jsonl", "--x", "gpus"], "no results lines"),
        (["sw"], "give --x AXIS"),
        (["wide.jsonl", "--x", "x"], "14 subplots (one per value of f)"),
        (["sw", "--x", "gpus", "--out", "p4.jpg"], "must end in .png, .pdf or .svg"),
    ]
    before = sorted(os.listdir(tmp)) + sorted(os.listdir(os.path.join(tmp, "sw")))
    for args, want in cases:
        r = run(plot + args, tmp)
        check(r.returncode == 2 and want in r.stderr, "refused %s: exit %d, %s" % (args, r.returncode, r.stderr.strip()))
    after = sorted(os.listdir(tmp)) + sorted(os.listdir(os.path.join(tmp, "sw")))
    check(before == after, "the refusals wrote nothing: %s" % (set(after) - set(before)))
finally:
    shutil.rmtree(tmp)
if fails:
    print("check_plot_sweep: %d failure(s)" % len(fails))
    sys.exit(1)
print("check_plot_sweep: plot.py sweep plots, and refuses what does not match")
