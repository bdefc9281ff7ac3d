#!/usr/bin/python3
"""Draws the figure and table of a study from its raw results.

usage: /usr/bin/python3 scripts/plot.py NAME [--dir DIR]
       /usr/bin/python3 scripts/plot.py sweep RESULTS [--grid GRID.json] --x AXIS [--metric M]
                                        [--group AXIS] [--where AXIS=LABEL ...] [--out FILE.png] [--list]

NAME is a study (experiments/NAME.json); scripts/reproduce NAME computes its
raw results into results/NAME/ and then runs this script. It reads

  results.jsonl         "sweep" studies: one JSON line per grid point (symphony sweep)
  plan-I.json           "plan" studies (min-gpus): symphony plan, one per case
  loadcurve-I.json      "loadcurve" studies (flat-top): symphony loadcurve, one per case
  sim-I.json + timeline-I.csv   "sim" studies (large-changing): symphony sim, one per case

and writes, beside them (each file atomically: a temporary file, then a rename)

  NAME.csv    one row per point or plotted value, with the symphony version, commit and seeds
  NAME.png    the figure
  table.txt   the key numbers as a text table (also printed); its first line names
              the study, the symphony version, the commit and the seeds.

Every goodput (and GPU count) is the mean over the point's seeds with its 95% interval
(symphony's goodput_ci95, which spans the searches' brackets too: docs/simulator.md,
Replications; "5455 +- 30" in the tables is its half-width), mean,
ci_low and ci_high columns and the number of seeds in the CSV files, error bars in the
figures. A ratio of two policies is the mean of their per-seed ratios (the same seed
gives both the same arrivals) with its interval. Where a paper states a value for
the same quantity (experiments/paper-values.json), the figure draws it as a hollow
black marker labelled "paper". A sweep study without a plot of its own (say
ablation-clockwork) gets a generic one: every point's goodput, grouped by its axes.

--dir DIR reads the raw results from DIR and writes the outputs there instead of
results/NAME/ (to try a study's plot on a stand-in). Run it with Debian's
interpreter (/usr/bin/python3), which has matplotlib. A sweep whose results.jsonl
is still being written is refused, except synthetic-grid, which is plotted from the
points there so far ("N of M points" in its table).

`plot.py sweep RESULTS` plots any sweep (RESULTS: its results.jsonl or directory): --x picks
the axis on the x axis, --group the axis drawn as separate lines, --where AXIS=LABEL keeps one
value of an axis, and every other axis with several values gets its own subplot (at most 12).
--metric is any number of the lines, a dotted path for nested ones (latency_ms.p99,
at_goodput.batch_p50); the default is goodput_rps (goodput sweeps) or goodput_served_rps (sim
sweeps). Error bars are the 95% interval the lines carry (replications), none for one seed.
--list prints the axes, their values and the metrics. It writes FILE.png and FILE.csv (default
sweep-X-METRIC beside RESULTS; one header line: facet, group, x, mean, ci_low, ci_high, seeds,
point, version, commit) and prints the values. Lines of two grids or versions, a line with
other axes, --grid naming another grid (name, axes, values or point count), an unknown axis,
value or metric, and a malformed line are refused (exit 2, naming it, nothing written).
"""
import csv
import io
import json
import math
import os
import re
import sys
import textwrap

try:
    import matplotlib
except ImportError:
    sys.exit("plot.py: matplotlib is missing: run me with /usr/bin/python3 (python3-matplotlib)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studylib import (PAPER_RULE, PM, RULE_NAMES, RULES, SweepError, interp, label_of, mean_ci,  # noqa: E402
                      paired_ratio, paper, pm, policy_name, ratio_summary, read_sweep, request_median_batch,
                      seeds_text, shown, sweep_record)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPI = 150
PALETTE = list(plt.get_cmap("tab10").colors) + ["#000000", "#aec7e8", "#ffbb78", "#98df8a"]
SYMPHONY = "symphony"
# one colour per policy in every figure (others get the colours left)
POLICY_ORDER = [SYMPHONY, "eager", "timeout:30%", "betalambda", "clockwork", "shepherd", "nexus", "urgency", "fcfs",
                "edf", "nexus:frontends=8", "urgency:app=signed"]
# the papers' rule beside look-ahead (symphony) in every figure: symphony's blue, darker (and dashed in line plots)
POLICY_COLOR = {PAPER_RULE: "#0b2e59"}
EAGER = "eager"
PAPER_BASELINES = ["clockwork", "nexus", "shepherd"]  # the systems the later paper measured

# the goodput columns of every sweep point in the CSV files, after the study's own ones
METRICS = ["goodput_rps", "goodput_ci_low", "goodput_ci_high", "seeds", "ratio_to_symphony", "ratio_ci_low",
           "ratio_ci_high", "ratio_to_eager", "ratio_to_eager_ci_low", "ratio_to_eager_ci_high", "upper_bound_rps",
           "bound_rps", "goodput_of_bound", "goodput_of_bound_ci_low", "goodput_of_bound_ci_high", "bad_rate",
           "batch_p50", "batch_request_p50", "batch_mean", "queueing_p99_ms", "latency_p99_ms", "gpu_busy_fraction",
           "worst_model", "worst_model_bad_rate"]
PROV = ["point", "version", "commit", "seed"]  # the provenance columns that end every row


# ---------------------------------------------------------------- helpers

def die(msg):
    sys.exit("plot.py: " + msg)


def rel(path):
    """path relative to the repository (as the messages name it), or absolute outside it."""
    r = os.path.relpath(path, ROOT)
    return os.path.abspath(path) if r.startswith("..") else r


def missing(name, path):
    die("%s not found: run scripts/reproduce %s" % (rel(path), name))


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(data)
    os.replace(tmp, path)


def write_csv(path, header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])
    write_atomic(path, buf.getvalue())


def save_fig(fig, path):
    """Writes the figure whole or not at all, as PNG, PDF or SVG by the name's ending."""
    tmp = path + ".tmp"
    fmt = os.path.splitext(path)[1][1:].lower()
    fig.savefig(tmp, format=fmt if fmt in ("png", "pdf", "svg") else "png", dpi=DPI)
    plt.close(fig)
    os.replace(tmp, path)


def finish(out, name, header, rows, fig, table):
    """Writes NAME.csv, NAME.png and table.txt into out and prints the table."""
    write_csv(os.path.join(out, name + ".csv"), header, rows)
    save_fig(fig, os.path.join(out, name + ".png"))
    write_atomic(os.path.join(out, "table.txt"), table)
    sys.stdout.write(table)
    print("plot.py: wrote %s/{%s.csv,%s.png,table.txt}" % (rel(out), name, name), file=sys.stderr)


def provenance(recs):
    """'symphony 0.1.0 @87af1ed9cdcc, seeds 1-5' from the records' version, commit, seed and
    replications (every distinct value, so that a mix shows)."""
    versions = sorted({str(r.get("version")) for r in recs})
    commits = sorted({str(r.get("commit")) for r in recs if r.get("commit")})
    seeds = sorted({seeds_text(r.get("seed"), r.get("replications")) for r in recs})
    return "symphony %s%s, %s" % (", ".join(versions), " @" + ", @".join(commits) if commits else "", "; ".join(seeds))


def heading(name, recs, extra=""):
    return "%s (%s)%s\nvalues: mean over the seeds %s its 95%% interval (Student t)\n" % (
        name, provenance(recs), extra, PM)


def get(d, *path):
    """d[path[0]][path[1]]..., or None where something is missing."""
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


def fmt(v, spec="%.0f", none="-"):
    return none if v is None or (isinstance(v, float) and math.isnan(v)) else spec % v


def ratio(a, b):
    return a / b if a is not None and b else None


def wrap(s, width=28):
    return "\n".join(textwrap.wrap(s, width)) or s


def colors(policies):
    """{policy: colour}, the same colour for a policy in every figure."""
    cols = {p: PALETTE[i] for i, p in enumerate(POLICY_ORDER)}
    cols.update(POLICY_COLOR)
    free = [c for c in PALETTE if c not in [cols[p] for p in policies if p in cols]]
    for i, p in enumerate(p for p in policies if p not in cols):
        cols[p] = free[i % len(free)] if free else PALETTE[i % len(PALETTE)]
    return cols


def line_style(policy):
    """Symphony is drawn wide underneath, so that policies on top of it stay visible; the papers' rule dashed."""
    if policy == SYMPHONY:
        return dict(linewidth=3.5, alpha=0.55, zorder=1)
    if policy_name(policy) == PAPER_RULE:
        return dict(linewidth=2, linestyle="--", zorder=2)
    return dict(linewidth=1.5, zorder=2)


def study_file(name):
    path = os.path.join(ROOT, "experiments", name + ".json")
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as e:
        die("%s: not valid JSON: %s" % (rel(path), e))


def load_json(name, path):
    if not os.path.exists(path):
        missing(name, path)
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        die("%s: not valid JSON (%s): run scripts/reproduce %s" % (rel(path), e, name))


def case_files(name, out, pattern):
    """The raw files pattern % I for I = 0, 1, ... (as many as the study has cases)."""
    study = study_file(name)
    n = len(study.get("cases", [])) if study else 0
    if n == 0:  # no study file (a stand-in): every file there
        while os.path.exists(os.path.join(out, pattern % n)):
            n += 1
        if n == 0:
            missing(name, os.path.join(out, pattern % 0))
    names = [study["cases"][i].get("name", "case %d" % i) if study else "case %d" % i for i in range(n)]
    return [(names[i], load_json(name, os.path.join(out, pattern % i))) for i in range(n)]


# ---------------------------------------------------------------- intervals and the papers' values

def ci_of(r):
    """[lo, hi] of a record's goodput (None with one seed)."""
    return r.get("ci95")


def gp(r):
    """A record's goodput as the tables print it: '5455 +- 30'."""
    return pm(r["goodput_rps"], ci_of(r))


def yerr(recs, field="goodput_rps", ci="ci95"):
    """matplotlib's [[below], [above]] error bars of the records' intervals (0 where none)."""
    lo, hi = [], []
    for r in recs:
        c, m = (r.get(ci) if r else None), (r.get(field) if r else None)
        lo.append(m - c[0] if c and m is not None else 0)
        hi.append(c[1] - m if c and m is not None else 0)
    return [lo, hi]


def rel_to(r, ref):
    """(ratio, [lo, hi] or None) of record r's goodput to record ref's: the mean of the per-seed
    ratios where both ran the same seeds, else the ratio of the means (no interval)."""
    if r is None or ref is None or r.get("goodput_rps") is None:
        return None, None
    pr = paired_ratio(r["by_seed"], ref["by_seed"]) if r.get("seed") == ref.get("seed") else None
    if pr:
        return pr[0], pr[1]
    return ratio(r["goodput_rps"], ref.get("goodput_rps")), None


def paper_value(vid):
    """The paper's number for value id vid (None where the paper states none)."""
    v = paper(vid)
    return v.get("value") if v else None


def paper_text(*ids, pct=False):
    """'1.35 to 2.02, later Figure 7a; ...': the papers' values (experiments/paper-values.json) for a table."""
    out = []
    for vid, where in ids:
        v, e = paper_value(vid), paper(vid) or {}
        if v is None:
            continue
        f = (lambda x: "%g%%" % (100 * x)) if pct else (lambda x: "%g" % x)
        pre = "more than " if e.get("relation") == ">" else ""
        out.append("%s%s, %s" % (pre, "%s to %s" % (f(v[0]), f(v[1])) if isinstance(v, list) else f(v), where))
    return "; ".join(out) or "-"


def paper_mark(ax, x, y, text=None, marker="D", size=8, **kw):
    """A hollow black marker at the paper's value; the first on an axis is labelled 'paper'
    (or text) in its legend."""
    if y is None:
        return
    first = not getattr(ax, "_paper_marked", False)
    ax._paper_marked = True
    ax.plot([x], [y], linestyle="none", marker=marker, markersize=size, markerfacecolor="none",
            markeredgecolor="black", markeredgewidth=1.5, zorder=6, label=(text or "paper") if first else None, **kw)


def paper_range(ax, x, lo, hi, text=None, width=0.35):
    """The paper's [lo, hi] at x: a hollow bracket (two ticks joined by a dashed line)."""
    first = not getattr(ax, "_paper_marked", False)
    ax._paper_marked = True
    ax.plot([x - width / 2, x + width / 2], [lo, lo], color="black", linewidth=1.5, zorder=6,
            label=(text or "paper") if first else None)
    ax.plot([x - width / 2, x + width / 2], [hi, hi], color="black", linewidth=1.5, zorder=6)
    ax.plot([x, x], [lo, hi], color="black", linewidth=1, linestyle="--", zorder=6)


# ---------------------------------------------------------------- sweeps

def point_record(d):
    """The slim record of a sweep line (studylib.sweep_record) plus its request-weighted median batch."""
    r = sweep_record(d)
    r["batch_request_p50"] = request_median_batch(r.get("batch_hist"))
    return r


def load_sweep(name, out, record=point_record, partial=False):
    """Streams results.jsonl: (records sorted by point, npoints). A line cut short at the
    end (being written) is skipped; without partial, missing points are an error."""
    path = os.path.join(out, "results.jsonl")
    if not os.path.exists(path):
        missing(name, path)
    try:
        recs, npoints, skipped = read_sweep(path, record)
    except SweepError as e:
        die("%s: run scripts/reproduce %s" % (e, name))
    if skipped:
        print("plot.py: %s: skipped a line cut short (still being written?)" % rel(path), file=sys.stderr)
    if not recs:
        die("%s has no results yet: run scripts/reproduce %s" % (rel(path), name))
    if len(recs) < npoints and not partial:
        die("%s has %d of %d points: run scripts/reproduce %s (it resumes)" % (rel(path), len(recs), npoints, name))
    return recs, npoints


def axis_values(recs, axis):
    """The labels of an axis in grid order."""
    seen = []
    for r in recs:
        v = label_of(r["key"].get(axis))
        if v not in seen:
            seen.append(v)
    return seen


def by_key(recs, *axes):
    """{(label of axes[0], label of axes[1], ...): record}."""
    return {tuple(label_of(r["key"].get(a)) for a in axes): r for r in recs}


def of_bound(r):
    """(mean, [lo, hi]) of a record's per-seed goodputs over its multi-model bound (bound_rps)."""
    b = r.get("bound_rps") if r else None
    return mean_ci([x / b for x in r["by_seed"]]) if b else (None, None)


def metric_row(r, sym, eager=None):
    """The METRICS columns of a record, sym: symphony's record at the same point (or None), eager: eager's."""
    c = ci_of(r)
    rt, rci = rel_to(r, sym)
    et, eci = rel_to(r, eager)
    ob, obci = of_bound(r)
    return [r["goodput_rps"], c[0] if c else None, c[1] if c else None, len(r["by_seed"]), rt,
            rci[0] if rci else None, rci[1] if rci else None, et, eci[0] if eci else None, eci[1] if eci else None,
            r["upper_bound_rps"], r.get("bound_rps"), ob, obci[0] if obci else None, obci[1] if obci else None,
            r["bad_rate"], r["batch_p50"], r.get("batch_request_p50"), r["batch_mean"], r["queueing_p99_ms"],
            r["latency_p99_ms"], r["gpu_busy_fraction"], r.get("worst_model"), r.get("worst_model_bad_rate")]


def prov_row(r):
    return [r["point"], r["version"], r.get("commit"), r["seed"]]


def policy_block(title, rows, ref=None):
    """Text block: a case's goodput (mean +- 95%), ratio to symphony (or to the policy ref) and to eager, the
    goodput over the multi-model bound, batch p50 (per batch and per request), queueing p99, GPU busy per policy
    (the last four: the first seed's run at its goodput)."""
    ref = ref if ref and any(p == ref for p, _ in rows) else SYMPHONY
    sym = next((r for p, r in rows if p == ref), None)
    eager = next((r for p, r in rows if p == EAGER), None)
    w = max([20] + [len(p) for p, _ in rows])
    lines = [title, "  %-*s %16s %15s %15s %13s %6s %11s %13s %9s" % (
        w, "policy", "goodput r/s", "vs " + ref[:12], "vs eager", "of bound", "seeds", "batch p50", "queue p99 ms",
        "GPU busy")]
    for p, r in rows:
        rt, rci = rel_to(r, sym)
        et, eci = rel_to(r, eager)
        ob, obci = of_bound(r)
        lines.append("  %-*s %16s %15s %15s %13s %6d %11s %13s %9s" % (
            w, p, gp(r), pm(rt, rci, "%.2f") + "x" if rt is not None else "-",
            pm(et, eci, "%.2f") + "x" if et is not None else "-", pm(ob, obci, "%.3f"), len(r["by_seed"]),
            "%s/%s" % (fmt(r["batch_p50"], "%g"), fmt(r.get("batch_request_p50"), "%g")),
            fmt(r["queueing_p99_ms"], "%.2f"),
            fmt(r["gpu_busy_fraction"] * 100 if r["gpu_busy_fraction"] is not None else None, "%.0f%%")))
    return "\n".join(lines) + "\n"


BLOCK_NOTE = ("(symphony is look-ahead deferral, symphony:lookahead=off the papers' rule; of bound: goodput over the "
              "multi-model bound (bound_rps), per seed; batch p50: per batch / per request; batch, queueing and GPU "
              "busy are of the first seed's run at its own goodput)\n")


def policy_bars(ax, policies, recs, sym=None, cols=None):
    """Bars of the records' goodputs per policy with their 95% intervals, each labelled with its
    ratio to sym (symphony's record)."""
    x = np.arange(len(policies))
    vals = [r["goodput_rps"] if r and r["goodput_rps"] is not None else 0 for r in recs]
    ax.bar(x, vals, color=[cols[p] for p in policies] if cols else None, edgecolor="black", linewidth=0.4,
           yerr=yerr(recs), capsize=3, error_kw=dict(linewidth=0.9))
    ax.set_xticks(x)
    ax.set_xticklabels([shown(p) for p in policies], rotation=45, ha="right", fontsize=8)
    top = max(vals) if vals and max(vals) > 0 else 1
    if sym:
        for xi, r, v in zip(x, recs, vals):
            rt, _ = rel_to(r, sym)
            if rt is not None:
                ax.text(xi, v + top * 0.03, "%.2f" % rt, ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, top * 1.15)
    ax.grid(axis="y", alpha=0.3)
    return x


def sweep_table_rows(recs, case_axis, series="series"):
    """(case, [(policy, record)]) in grid order."""
    cases = axis_values(recs, case_axis)
    pols = []
    for r in recs:
        if r[series] not in pols:
            pols.append(r[series])
    idx = {(label_of(r["key"].get(case_axis)), r[series]): r for r in recs}
    return [(c, [(p, idx[(c, p)]) for p in pols if (c, p) in idx]) for c in cases], pols


# Table 2 / Table 4 / Figure 1 of the papers: {model label: {policy: value id}}
TABLE2_GOODPUT = {
    "ResNet50": {SYMPHONY: ["dbs-t2-r50-symphony", "co-t4-r50-symphony"],
                 "clockwork": ["dbs-t2-r50-clockwork", "co-t4-r50-clockwork"],
                 "nexus": ["dbs-t2-r50-nexus", "co-t4-r50-nexus"], "shepherd": ["dbs-t2-r50-shepherd"]},
    "InceptionResNetV2": {SYMPHONY: ["dbs-t2-irv2-symphony", "co-t4-irv2-symphony"],
                          "clockwork": ["dbs-t2-irv2-clockwork", "co-t4-irv2-clockwork"],
                          "nexus": ["dbs-t2-irv2-nexus", "co-t4-irv2-nexus"], "shepherd": ["dbs-t2-irv2-shepherd"]},
}
FIG1_BATCH = {"ResNet50": {SYMPHONY: "dbs-f1-r50-symphony", "clockwork": "dbs-f1-r50-clockwork",
                           "nexus": "dbs-f1-r50-nexus", "shepherd": "dbs-f1-r50-shepherd"},
              "InceptionResNetV2": {SYMPHONY: "dbs-f1-irv2-symphony", "clockwork": "dbs-f1-irv2-clockwork",
                                    "nexus": "dbs-f1-irv2-nexus", "shepherd": "dbs-f1-irv2-shepherd"}}


def table2_model(case_label):
    """'ResNet50' or 'InceptionResNetV2' where a case label names one of the Table 2 models."""
    for m in TABLE2_GOODPUT:
        if m in case_label:
            return m
    return None


def paper_policy(p):
    """The policy whose paper values a policy is set against: the papers' Symphony is both symphony (look-ahead,
    ours) and the papers' rule it implements."""
    return SYMPHONY if policy_name(p) == PAPER_RULE else p


def mark_table2(ax, model, policies, x):
    """Table 2 (later paper, diamond) and Table 4 (earlier paper, square) goodputs over the bars."""
    for xi, p in zip(x, policies):
        ids = TABLE2_GOODPUT.get(model, {}).get(paper_policy(p), [])
        for vid, mk, lab in zip(ids, ("D", "s"), ("paper: Table 2 (later)", "paper: Table 4 (earlier)")):
            v = paper_value(vid)
            if v is None:
                continue
            first = not getattr(ax, "_mk_" + mk, False)
            setattr(ax, "_mk_" + mk, True)
            ax.plot([xi], [v], linestyle="none", marker=mk, markersize=8 if mk == "D" else 7,
                    markerfacecolor="none", markeredgecolor="black", markeredgewidth=1.5, zorder=6,
                    label=lab if first else None)


# ---------------------------------------------------------------- studies

def plot_compare_policies(name, out):
    recs, _ = load_sweep(name, out)
    groups, pols = sweep_table_rows(recs, "@case")
    cols = colors(pols)
    rows, table = [], heading(name, recs) + BLOCK_NOTE
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 5.2), constrained_layout=True, squeeze=False)
    for ax, (case, prs) in zip(axes[0], groups):
        sym = next((r for p, r in prs if p == SYMPHONY), None)
        eager = next((r for p, r in prs if p == EAGER), None)
        for p, r in prs:
            rows.append([case, p] + metric_row(r, sym, eager) + prov_row(r))
        table += "\n" + policy_block(case, prs)
        ps = [p for p, _ in prs]
        x = policy_bars(ax, ps, [r for _, r in prs], sym, cols)
        model = table2_model(case)
        if model:  # the Table 2 cases: the papers' measured goodputs
            mark_table2(ax, model, ps, x)
            ax.legend(loc="upper right", fontsize=7)
        ax.set_title(wrap(case, 40), fontsize=10)
        ax.set_ylabel("goodput (r/s, every model <= 1% late or dropped)")
    fig.suptitle("Goodput per policy (numbers: ratio to symphony; bars: 95%% intervals) - %s" % provenance(recs),
                 fontsize=11)
    finish(out, name, ["case", "policy"] + METRICS + PROV, rows, fig, table)


def analytic_batches(alpha, beta, slo, n):
    """Table 2's uncoordinated and staggered batches and their throughputs (r/s)
    (symphony-deferred-batch-scheduling.md, Section 5.3, Batch Size)."""
    res = []
    for kind, budget in (("uncoordinated", slo / 2.0), ("staggered", slo / (1 + 1.0 / n))):
        b = math.floor((budget - beta) / alpha)
        thr = n * b / (alpha * b + beta) * 1000.0 if b >= 1 else 0.0
        res.append((kind, max(b, 0), thr))
    return res


def plot_table2(name, out):
    recs, _ = load_sweep(name, out)
    groups, pols = sweep_table_rows(recs, "@model")
    cols = colors(pols)
    rows, table = [], heading(name, recs)
    hdr = ["model", "alpha_ms", "beta_ms", "slo_ms", "gpus", "kind", "policy", "batch", "batch_request_p50",
           "goodput_rps", "goodput_ci_low", "goodput_ci_high", "seeds", "ratio_to_symphony", "ratio_ci_low",
           "ratio_ci_high", "ratio_to_eager", "ratio_to_eager_ci_low", "ratio_to_eager_ci_high", "bad_rate",
           "queueing_p99_ms", "paper_goodput_table2", "paper_goodput_table4", "paper_median_batch_fig1"] + PROV
    fig, axes = plt.subplots(2, len(groups), figsize=(6.2 * len(groups), 9.5), constrained_layout=True,
                             squeeze=False)
    for k, (model, prs) in enumerate(groups):
        ax, axb = axes[0][k], axes[1][k]
        r0 = prs[0][1]
        m = r0["models"][0]
        alpha, beta, slo, n = m["alpha_ms"], m["beta_ms"], r0["slo_ms"], r0["gpus"]
        sym = next((r for p, r in prs if p == SYMPHONY), None)
        eager = next((r for p, r in prs if p == EAGER), None)
        table += "\n%s: alpha %g ms, beta %g ms, SLO %g ms, N = %d GPUs\n" % (model, alpha, beta, slo, n)
        table += "  %-22s %9s %16s %15s %15s %13s %13s\n" % ("", "batch", "goodput r/s", "vs symphony", "vs eager",
                                                            "paper T2/T4", "paper F1 b")
        an = analytic_batches(alpha, beta, slo, n)
        for kind, b, thr in an:
            table += "  %-22s %9d %16.0f %15s %15s\n" % (
                "analytic " + kind, b, thr, fmt(ratio(thr, sym["goodput_rps"] if sym else None), "%.2fx"),
                fmt(ratio(thr, eager["goodput_rps"] if eager else None), "%.2fx"))
            rows.append([model, alpha, beta, slo, n, "analytic", kind, b, None, thr, None, None, None,
                         ratio(thr, sym["goodput_rps"] if sym else None), None, None,
                         ratio(thr, eager["goodput_rps"] if eager else None), None, None, None, None, None, None,
                         None, r0["version"], r0.get("commit"), r0["seed"]])
        for p, r in prs:
            rt, rci = rel_to(r, sym)
            et, eci = rel_to(r, eager)
            ids = TABLE2_GOODPUT.get(model, {}).get(paper_policy(p), [])
            t2 = paper_value(ids[0]) if ids else None
            t4 = paper_value(ids[1]) if len(ids) > 1 else None
            f1 = paper_value(FIG1_BATCH.get(model, {}).get(paper_policy(p), ""))
            table += "  %-22s %9s %16s %15s %15s %13s %13s\n" % (
                p, "%s/%s" % (fmt(r["batch_p50"], "%g"), fmt(r["batch_request_p50"], "%g")), gp(r),
                pm(rt, rci, "%.2f") + "x" if rt is not None else "-",
                pm(et, eci, "%.2f") + "x" if et is not None else "-",
                "%s/%s" % (fmt(t2), fmt(t4)) if t2 or t4 else "", fmt(f1, "%g", ""))
            c = ci_of(r)
            rows.append([model, alpha, beta, slo, n, "simulated", p, r["batch_p50"], r["batch_request_p50"],
                         r["goodput_rps"], c[0] if c else None, c[1] if c else None, len(r["by_seed"]), rt,
                         rci[0] if rci else None, rci[1] if rci else None, et, eci[0] if eci else None,
                         eci[1] if eci else None, r["bad_rate"], r["queueing_p99_ms"], t2, t4, f1] + prov_row(r))
        ps = [p for p, _ in prs]
        x = policy_bars(ax, ps, [r for _, r in prs], sym, cols)
        mark_table2(ax, model, ps, x)
        for (kind, b, thr), style in zip(an, ("--", "-.")):
            ax.axhline(thr, color="gray", linestyle=style, linewidth=1.2,
                       label="analytic %s: b = %d, %.0f r/s" % (kind, b, thr))
        top = max([thr for _, _, thr in an] + [r["goodput_rps"] or 0 for _, r in prs])
        ax.set_ylim(0, top * 1.35)
        ax.legend(loc="upper right", fontsize=7)
        ax.set_title("%s (alpha %g, beta %g ms), SLO %g ms, %d GPUs" % (model, alpha, beta, slo, n), fontsize=10)
        ax.set_ylabel("goodput (r/s)")
        # Figure 1: the median batch, per batch and per request, beside the paper's medians
        w = 0.38
        axb.bar(x - w / 2, [r["batch_p50"] or 0 for _, r in prs], w, color=[cols[p] for p in ps], edgecolor="black",
                linewidth=0.4, label="median over batches")
        axb.bar(x + w / 2, [r["batch_request_p50"] or 0 for _, r in prs], w, color=[cols[p] for p in ps],
                edgecolor="black", linewidth=0.4, hatch="//", alpha=0.7, label="median over requests")
        for xi, p in zip(x, ps):
            paper_mark(axb, xi, paper_value(FIG1_BATCH.get(model, {}).get(paper_policy(p), "")),
                       "paper: Figure 1 median")
        for kind, b, _ in an:
            axb.axhline(b, color="gray", linestyle="--" if kind == "uncoordinated" else "-.", linewidth=1,
                        label="analytic %s batch %d" % (kind, b))
        axb.set_xticks(x)
        axb.set_xticklabels([shown(p) for p in ps], rotation=45, ha="right", fontsize=8)
        axb.set_ylabel("median batch size (first seed's run at its goodput)")
        axb.set_title("%s: median batch (Figure 1)" % model, fontsize=10)
        axb.grid(axis="y", alpha=0.3)
        axb.legend(loc="upper right", fontsize=7)
    table += "\n(symphony is look-ahead deferral, symphony:lookahead=off the papers' rule; batch: median per batch / " \
             "per request, of the first seed's run at its goodput; paper T2/T4: the later paper's Table 2 / the " \
             "earlier paper's Table 4; paper F1 b: Figure 1's median batch)\n"
    fig.suptitle("Table 2 and Figure 1: goodput per policy (numbers: ratio to symphony) vs analytic throughput - %s"
                 % provenance(recs), fontsize=11)
    finish(out, name, hdr, rows, fig, table)


def beta_of(r):
    m = r["models"]
    if isinstance(m, list) and m and isinstance(m[0], dict) and "beta_ms" in m[0]:
        return float(m[0]["beta_ms"])
    mt = re.search(r"beta\s*=\s*([0-9.]+)", label_of(r["key"].get("@beta")))
    if not mt:
        die("cannot tell beta of point %d" % r["point"])
    return float(mt.group(1))


def plot_batching_effect(name, out):
    """Figure 6a: eager's goodput over symphony's as beta grows, for look-ahead (symphony) and, where the study
    runs it, the papers' rule (symphony:lookahead=off)."""
    recs, _ = load_sweep(name, out)
    idx = by_key(recs, "@beta", "policy")
    syms = [p for p in RULES if any(k[1] == p for k in idx)]
    rows, lines = [], {p: ([], [], [[], []]) for p in syms}
    table = heading(name, recs) + "\n  %7s %7s %16s" % ("beta ms", "SLO ms", "eager r/s") + "".join(
        " %16s %16s %10s" % (RULE_NAMES[p] + " r/s", "eager/" + RULE_NAMES[p], "batch") for p in syms) + \
        " %9s\n" % "eager b."
    for lab in axis_values(recs, "@beta"):
        e = idx.get((lab, "eager"))
        if not e or not all(idx.get((lab, p)) for p in syms):
            die("%s: point %s lacks eager or a symphony" % (name, lab))
        beta = beta_of(e)
        table += "  %7g %7g %16s" % (beta, e["slo_ms"], gp(e))
        for p in syms:
            s = idx[(lab, p)]
            rt, rci = rel_to(e, s)
            xs, ys, errs = lines[p]
            xs.append(beta)
            ys.append(rt)
            errs[0].append(rt - rci[0] if rci else 0)
            errs[1].append(rci[1] - rt if rci else 0)
            sc, ec = ci_of(s), ci_of(e)
            rows.append([beta, s["slo_ms"], p, s["goodput_rps"], sc[0] if sc else None, sc[1] if sc else None,
                         e["goodput_rps"], ec[0] if ec else None, ec[1] if ec else None, len(s["by_seed"]), rt,
                         rci[0] if rci else None, rci[1] if rci else None, s["batch_p50"], e["batch_p50"],
                         s["version"], s.get("commit"), s["seed"]])
            table += " %16s %16s %10s" % (gp(s), pm(rt, rci, "%.3f"), fmt(s["batch_p50"], "%g"))
        table += " %9s\n" % fmt(e["batch_p50"], "%g")
    table += "\n(symphony is look-ahead deferral, symphony:lookahead=off the papers' rule; batch: median batch of " \
             "the first seed's run at its goodput)\n"
    fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
    cols = colors(list(syms))
    for p in syms:
        xs, ys, errs = lines[p]
        ax.errorbar(xs, ys, yerr=errs, marker="o", color=cols[p], capsize=3,
                    label="eager / %s (95%% interval)" % shown(p), **line_style(p))
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xlabel("beta (ms): batch latency l(b) = 1 ms x b + beta, SLO = 2 l(8)")
    ax.set_ylabel("eager goodput / symphony goodput")
    xs = lines[syms[0]][0]
    ax.set_xticks(xs)
    ally = [y for p in syms for y in lines[p][1] if y is not None]
    ax.set_ylim(min(0.5, min(ally) - 0.05), max(1.05, max(ally) + 0.05))
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Batching effect (Figure 6a): 10 models on 32 GPUs, Poisson - %s" % provenance(recs), fontsize=9)
    finish(out, name, ["beta_ms", "slo_ms", "symphony_policy", "symphony_goodput_rps", "symphony_ci_low",
                       "symphony_ci_high", "eager_goodput_rps", "eager_ci_low", "eager_ci_high", "seeds",
                       "ratio_eager_to_symphony", "ratio_ci_low", "ratio_ci_high", "symphony_batch_p50",
                       "eager_batch_p50", "version", "commit", "seed"], rows, fig, table)


def timeout_pct(policy):
    m = re.fullmatch(r"timeout:([0-9.]+)%", policy)
    return float(m.group(1)) if m else None


def plot_timeout(name, out):
    """Figure 6b: the timeout policy's goodput relative to symphony's for timeouts of 10-100% of the SLO; relative
    to look-ahead (symphony, solid) and, where the study runs it, to the papers' rule (symphony:lookahead=off,
    dashed), which is what the paper's Symphony is."""
    recs, _ = load_sweep(name, out)
    groups, pols = sweep_table_rows(recs, "@case")
    tpols = [p for p in pols if timeout_pct(p) is not None]
    refs = [p for p in RULES if p in pols]
    rows = []
    fig, ax = plt.subplots(figsize=(7.5, 4.8), constrained_layout=True)
    table = heading(name, recs) + "\ntimeout goodput / symphony goodput (look-ahead; the papers' rule)\n  %-9s" % \
        "timeout"
    table += "".join(" %16s" % ("case %d / %s" % (i + 1, RULE_NAMES[ref][:6]))
                     for i in range(len(groups)) for ref in refs) + "\n"
    ratios = {}
    for i, (case, prs) in enumerate(groups):
        d = dict(prs)
        if SYMPHONY not in d:
            die("%s: case %s has no symphony point" % (name, case))
        for ref in refs:
            sym = d.get(ref)
            xs, ys, errs = [], [], [[], []]
            for p in tpols:
                r = d.get(p)
                if r and sym:
                    rt, rci = rel_to(r, sym)
                    xs.append(timeout_pct(p))
                    ys.append(rt)
                    errs[0].append(rt - rci[0] if rci else 0)
                    errs[1].append(rci[1] - rt if rci else 0)
                    ratios[(i, ref, p)] = (rt, rci)
                    c = ci_of(r)
                    rows.append([case, p, xs[-1], r["goodput_rps"], c[0] if c else None, c[1] if c else None,
                                 len(r["by_seed"]), ref, sym["goodput_rps"], rt, rci[0] if rci else None,
                                 rci[1] if rci else None, r["batch_p50"], r["bad_rate"]] + prov_row(r))
            ax.errorbar(xs, ys, yerr=errs, marker="o", color=PALETTE[i], capsize=3,
                        linestyle="-" if ref == SYMPHONY else "--",
                        label="%s, / %s (%s r/s)" % (wrap(case, 30), shown(ref), gp(sym)) if sym else case)
    for p in tpols:
        table += "  %-9s" % ("%g%%" % timeout_pct(p)) + "".join(
            " %16s" % (pm(*ratios[(i, ref, p)], spec="%.3f") if (i, ref, p) in ratios else "-")
            for i in range(len(groups)) for ref in refs) + "\n"
    table += "\n" + "".join("case %d: %s, %s\n" % (i + 1, c, ", ".join(
        "%s %s r/s" % (shown(ref), gp(dict(prs)[ref])) for ref in refs if ref in dict(prs)))
        for i, (c, prs) in enumerate(groups))
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xlabel("timeout (% of the SLO)")
    ax.set_ylabel("timeout goodput / symphony goodput")
    ax.set_xticks(sorted({timeout_pct(p) for p in tpols}))
    rs = [r[9] for r in rows if r[9] is not None] + [1.0]
    ax.set_ylim(min(0.8, math.floor((min(rs) - 0.05) * 10) / 10), max(1.1, max(rs) + 0.05))
    ax.grid(alpha=0.3)
    ax.legend(loc="lower center", fontsize=7)
    ax.set_title("Timeout policy (TF-Serving, Figure 6b) relative to symphony\n(solid: look-ahead; dashed: the "
                 "papers' rule) - %s" % provenance(recs), fontsize=9)
    finish(out, name, ["case", "policy", "timeout_pct_of_slo", "goodput_rps", "goodput_ci_low", "goodput_ci_high",
                       "seeds", "reference_policy", "reference_goodput_rps", "ratio_to_reference", "ratio_ci_low",
                       "ratio_ci_high", "batch_p50", "bad_rate"] + PROV, rows, fig, table)


def workload_of(k):
    """(model set, number of models) of a grid key: a "@workload" label "NAME xN", or the
    older "@model" and "num_models" axes."""
    if "@workload" in k:
        m = re.fullmatch(r"(.*) x(\d+)", label_of(k["@workload"]))
        if not m:
            die("a @workload label must read 'NAME xN', got %r" % label_of(k["@workload"]))
        return m.group(1), int(m.group(2))
    return label_of(k["@model"]), k["num_models"]


def grid_record(d):
    """The slim record of a synthetic-grid line (the file is large)."""
    k = d["key"]
    ci = d.get("goodput_ci95")
    return {"point": d["point"], "policy": policy_name(label_of(k["policy"]) if "policy" in k else d["policy"]),
            "goodput_rps": d["goodput_rps"], "version": d.get("version"), "commit": d.get("commit"),
            "seed": d.get("seed"), "replications": d.get("replications") or 1, "ci95": list(ci) if ci else None,
            "by_seed": [float(x) for x in d.get("goodput_by_seed") or [d["goodput_rps"]]],
            "bound_rps": d.get("bound_rps"), "goodput_of_bound": d.get("goodput_of_bound"),
            "worst_model": d.get("worst_model"), "worst_bad": d.get("worst_model_bad_rate"),
            "pair": workload_of(k) + (k["gpus_per_model"], k["slo_ms"], k["arrival"])}


def gamma_shape(arrival):
    m = re.fullmatch(r"gamma:([0-9.]+)", str(arrival))
    return float(m.group(1)) if m else str(arrival)


def median_panel(ax, labels, series, xlabel, cols):
    """Grouped bars of the median ratio of each group, one bar per series (name, [ratios per group])."""
    x = np.arange(len(labels))
    w = 0.8 / len(series)
    top = 1.0
    for j, (p, groups) in enumerate(series):
        meds = [float(np.median(g)) if g else 0.0 for g in groups]
        top = max([top] + meds)
        xx = x - 0.4 + w * (j + 0.5)
        ax.bar(xx, meds, w, color=cols[p], edgecolor="black", linewidth=0.4, label=shown(p))
        for xi, m in zip(xx, meds):
            ax.text(xi, m, "%.2f" % m, ha="center", va="bottom", fontsize=6)
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30 if max(len(s) for s in labels) > 4 else 0,
                       ha="right" if max(len(s) for s in labels) > 4 else "center", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("median symphony / eager")
    ax.set_ylim(0, top * 1.15)
    ax.grid(axis="y", alpha=0.3)


def ratio_stats(v):
    """The distribution's summary the report and the table share (studylib.ratio_summary)."""
    return ratio_summary(v)


# issue 27's "Done when" on the Table 1 grid: look-ahead at 0.95x eager or better on at least 99% of the pairs,
# and its median ratio at least 1.0
GRID_ISSUE = {"share_ge_0.95": 0.99, "median": 1.0}


def grid_verdict(st):
    """'met' / 'MISSED' of a ratio summary against issue 27's thresholds on the grid."""
    ok = st["share_ge_0.95"] >= GRID_ISSUE["share_ge_0.95"] and st["median"] >= GRID_ISSUE["median"]
    return "met" if ok else "MISSED (%s)" % ", ".join(
        w for w, bad in (("%.1f%% at >= 0.95x, needs %.0f%%" % (100 * st["share_ge_0.95"], 100 * GRID_ISSUE[
            "share_ge_0.95"]), st["share_ge_0.95"] < GRID_ISSUE["share_ge_0.95"]),
                         ("median %.3f, needs %.2f" % (st["median"], GRID_ISSUE["median"]),
                          st["median"] < GRID_ISSUE["median"])) if bad)


def stats_table(rules, stats, paper_notes=True):
    """The summary of each rule's ratio distribution, side by side."""
    t = "  %-14s" % "" + "".join(" %24s" % ("%s / eager" % shown(p)) for p in rules) + "\n"
    lines = [("pairs", lambda st: "%d" % st["count"]), ("median", lambda st: "%.3f" % st["median"]),
             ("mean", lambda st: "%.3f" % st["mean"]), ("p10", lambda st: "%.3f" % st["p10"]),
             ("p90", lambda st: "%.3f" % st["p90"]), ("min", lambda st: "%.3f" % st["min"]),
             ("max", lambda st: "%.3f" % st["max"]), ("ratio >= 0.95", lambda st: "%.1f%%" % (100 * st["share_ge_0.95"])),
             ("ratio >= 1", lambda st: "%.1f%%" % (100 * st["share_ge_1"])),
             ("ratio >= 1.5", lambda st: "%.1f%%" % (100 * st["share_ge_1.5"])),
             ("ratio >= 2", lambda st: "%.1f%%" % (100 * st["share_ge_2"]))]
    for lab, f in lines:
        t += "  %-14s" % lab + "".join(" %24s" % f(stats[p]) for p in rules) + "\n"
    if paper_notes:
        t += "  (paper: almost all pairs at >= 0.95x, Figure 7d; at >= 1.5x: %s)\n" % paper_text(
            ("dbs-f7d-share-1.5", "later Figure 7d"), ("co-f4d-share-1.5", "earlier Figure 4d"), pct=True)
    t += "  issue 27 (>= %.0f%% of pairs at >= 0.95x, median >= %.2f): %s\n" % (
        100 * GRID_ISSUE["share_ge_0.95"], GRID_ISSUE["median"], "; ".join(
            "%s %s" % (shown(p), grid_verdict(stats[p])) for p in rules))
    return t


def grid_pairs_of(recs):
    """{pair key: {policy: record}} in grid order."""
    pairs = {}
    for r in recs:
        pairs.setdefault(r["pair"], {})[r["policy"]] = r
    return {k: pairs[k] for k in sorted(pairs, key=lambda k: min(r["point"] for r in pairs[k].values()))}


def plot_synthetic_grid(name, out):
    recs, npoints = load_sweep(name, out, record=grid_record, partial=True)
    pairs = grid_pairs_of(recs)
    rules = [p for p in RULES if any(p in d for d in pairs.values())]
    pols = [EAGER] + rules
    rows, ratios, undefined, lone = [], {p: [] for p in rules}, {p: 0 for p in rules}, 0
    for key, d in pairs.items():
        e = d.get(EAGER)
        if not e or not all(p in d for p in rules):
            lone += 1
            continue
        row = list(key[:4]) + [gamma_shape(key[4]), e["goodput_rps"]]
        for p in rules:
            rt, rci = rel_to(d[p], e) if e["goodput_rps"] > 0 else (None, None)
            if rt is None:
                undefined[p] += 1
            else:
                ratios[p].append((key, rt))
            row += [d[p]["goodput_rps"], rt, rci[0] if rci else None, rci[1] if rci else None]
        rows.append(row + [len(e["by_seed"]), e.get("bound_rps")] + [d[p].get("goodput_of_bound") for p in pols] +
                    [d[p]["worst_model"] for p in pols] + [d[p]["point"] for p in pols] +
                    [e["version"], e.get("commit"), e["seed"]])
    if not rules or not ratios[rules[0]]:
        die("%s/results.jsonl has no complete symphony/eager pair yet (%d of %d points)"
            % (rel(out), len(recs), npoints))
    cols = colors(pols)
    done = "%d of %d points%s" % (len(recs), npoints, "" if len(recs) == npoints else " (partial: sweep not finished)")
    table = heading(name, recs, " - " + done)
    table += "symphony / eager goodput over the pairs (symphony: look-ahead deferral; symphony:lookahead=off: the " \
             "papers' rule)%s%s\n\n" % (
                 "".join(", %d pairs with eager goodput 0 left out" % undefined[p] for p in rules[:1] if undefined[p]),
                 ", %d points without their pairs yet" % lone if lone else "")
    stats = {p: ratio_stats([rt for _, rt in ratios[p]]) for p in rules}
    table += stats_table(rules, stats)

    def groups_by(p, i, order=None):
        g = {}
        for key, rt in ratios[p]:
            g.setdefault(key[i], []).append(rt)
        ks = order if order else sorted(g)
        return [k for k in ks if k in g], [g[k] for k in ks if k in g]

    model_order = []
    for key in pairs:
        if key[0] not in model_order:
            model_order.append(key[0])
    for p in rules:
        table += "\n%s / eager by model set: %6s %7s %7s %7s %7s %7s %8s %8s\n" % (
            shown(p), "pairs", "median", "p10", "p90", "min", "max", ">= 0.95", ">= 1.5x")
        for m, g in zip(*groups_by(p, 0, model_order)):
            s2 = ratio_stats(g)
            table += "  %-25s %6d %7.3f %7.3f %7.3f %7.3f %7.3f %7.1f%% %7.1f%%\n" % (
                m, s2["count"], s2["median"], s2["p10"], s2["p90"], s2["min"], s2["max"], 100 * s2["share_ge_0.95"],
                100 * s2["share_ge_1.5"])
    for p in rules:
        dn30 = [rt for key, rt in ratios[p] if key[0] == "DenseNet121" and float(key[3]) == 30]
        mixed = [rt for key, rt in ratios[p] if key[0].startswith("mixed")]
        if dn30:
            table += "  %s: DenseNet121 at SLO 30 ms: %.2f to %.2f (paper: %s)\n" % (shown(p), min(dn30), max(dn30), paper_text(
                ("dbs-f7b-densenet-slo30", "later Figure 7b"), ("co-f4b-densenet-slo30", "earlier Figure 4b")))
        if mixed:
            table += "  %s: mixed set: %.2f to %.2f (paper: %s)\n" % (shown(p), min(mixed), max(mixed), paper_text(
                ("dbs-f7a-mixed", "later Figure 7a"), ("co-f4a-mixed", "earlier Figure 4a")))
    panels = [("model", 0, model_order, str),
              ("gamma shape", 4, sorted({k[4] for k in pairs}, key=gamma_shape), lambda a: "%g" % gamma_shape(a)),
              ("SLO (ms)", 3, None, lambda a: "%g" % a), ("GPUs per model", 2, None, lambda a: "%g" % a),
              ("number of models", 1, None, lambda a: "%g" % a)]
    for title, i, order, lab in panels[1:]:
        ks = groups_by(rules[0], i, order)[0]
        table += "\nmedian ratio by %s\n  %-16s" % (title, "") + "".join(" %24s" % shown(p) for p in rules) + \
            "  pairs\n"
        for k in ks:
            table += "  %-16s" % lab(k) + "".join(
                " %24.3f" % np.median(dict(zip(*groups_by(p, i, order))).get(k, [np.nan])) for p in rules) + \
                "  %5d\n" % len(dict(zip(*groups_by(rules[0], i, order)))[k])
    # goodput over the multi-model bound, per policy, over every point with a bound
    ob = {p: [d[p]["goodput_of_bound"] for d in pairs.values() if p in d and d[p].get("goodput_of_bound") is not None]
          for p in pols}
    table += "\ngoodput over the multi-model bound (bound_rps), over the grid's points\n  %-24s %6s %7s %7s %7s\n" % (
        "policy", "points", "median", "p10", "p90")
    for p in pols:
        if ob[p]:
            table += "  %-24s %6d %7.3f %7.3f %7.3f\n" % (shown(p), len(ob[p]), np.median(ob[p]),
                                                         np.percentile(ob[p], 10), np.percentile(ob[p], 90))

    fig, axes = plt.subplots(2, 5, figsize=(23, 8.5), constrained_layout=True)
    allv = np.array([rt for p in rules for _, rt in ratios[p]])
    lo, hi = allv.min(), min(allv.max(), max(1.6, np.percentile(allv, 99) * 1.1))
    beyond = int((allv > hi).sum())
    note = "%d ratio%s beyond %.2f (max %.2f) not shown" % (beyond, "s" if beyond > 1 else "", hi, allv.max()) \
        if beyond else None
    ax = axes[0][0]
    bins = np.linspace(lo, hi, 41)
    for p in rules:
        v = np.array([rt for _, rt in ratios[p]])
        ax.hist(v[v <= hi], bins=bins, color=cols[p], alpha=0.55 if p == SYMPHONY else 0.45, edgecolor="black",
                linewidth=0.3, label="%s, median %.3f" % (shown(p), stats[p]["median"]))
    ax.axvline(1.0, color="red", linestyle="--", linewidth=1)
    ax.set_xlabel("goodput ratio symphony / eager")
    ax.set_ylabel("pairs")
    ax.set_title("Distribution of the ratio (%d pairs)" % stats[rules[0]]["count"], fontsize=10)
    ax.legend(fontsize=7, title=note, title_fontsize=7)
    ax = axes[0][1]
    for p in rules:
        sv = np.sort([rt for _, rt in ratios[p]])
        ax.step(sv, np.arange(1, len(sv) + 1) / len(sv), where="post", color=cols[p], label=shown(p),
                **{k: v for k, v in line_style(p).items() if k != "zorder"})
    ax.set_xlim(lo, max(hi, 1.6))
    ax.axvline(1.0, color="red", linestyle="--", linewidth=1)
    ax.axvline(0.95, color="gray", linestyle=":", linewidth=1)
    ax.axhline(1 - GRID_ISSUE["share_ge_0.95"], color="gray", linestyle=":", linewidth=1)
    share = paper_value("dbs-f7d-share-1.5")
    if share is not None:  # Figure 7(d): a share of the cases at 1.5x or more
        paper_mark(ax, 1.5, 1 - share, "paper: %.0f%% of cases >= 1.5x (Fig. 7d)" % (100 * share))
    ax.set_xlabel("goodput ratio symphony / eager")
    ax.set_ylabel("fraction of pairs <= x")
    ax.set_title("CDF: >= 0.95x %s; >= 1.5x %s" % (
        " / ".join("%.1f%%" % (100 * stats[p]["share_ge_0.95"]) for p in rules),
        " / ".join("%.1f%%" % (100 * stats[p]["share_ge_1.5"]) for p in rules)), fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    ax = axes[0][2]
    for p in pols:
        if ob[p]:
            sv = np.sort(ob[p])
            ax.step(sv, np.arange(1, len(sv) + 1) / len(sv), where="post", color=cols[p],
                    label="%s, median %.3f" % (shown(p), np.median(sv)),
                    **{k: v for k, v in line_style(p).items() if k != "zorder"})
    ax.set_xlabel("goodput / multi-model bound (bound_rps)")
    ax.set_ylabel("fraction of points <= x")
    ax.set_xlim(0, 1.05)
    ax.set_title("Goodput over the multi-model bound", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
    # the ratio against the load class: GPUs per model x SLO, as a heat map of medians, one per rule
    gk = groups_by(rules[0], 2)[0]
    sk = groups_by(rules[0], 3)[0]
    mats = {}
    for p in rules:
        cell = {}
        for key, rt in ratios[p]:
            cell.setdefault((key[2], key[3]), []).append(rt)
        m = np.full((len(sk), len(gk)), np.nan)
        for i, s_ in enumerate(sk):
            for j, g in enumerate(gk):
                if (g, s_) in cell:
                    m[i, j] = np.median(cell[(g, s_)])
        mats[p] = m
    span = max([max(abs(np.nanmax(m) - 1), abs(np.nanmin(m) - 1)) for m in mats.values()] + [0.05])
    for ax, p in zip([axes[0][3], axes[0][4]], rules + [None]):
        if p is None:
            ax.set_visible(False)
            continue
        m = mats[p]
        im = ax.imshow(m, origin="lower", aspect="auto", cmap="RdBu", vmin=1 - span, vmax=1 + span)
        for i in range(len(sk)):
            for j in range(len(gk)):
                if not np.isnan(m[i, j]):
                    ax.text(j, i, "%.2f" % m[i, j], ha="center", va="center", fontsize=7,
                            color="white" if abs(m[i, j] - 1) > 0.6 * span else "black")
        ax.set_xticks(range(len(gk)))
        ax.set_xticklabels(["%g" % g for g in gk], fontsize=8)
        ax.set_yticks(range(len(sk)))
        ax.set_yticklabels(["%g" % s_ for s_ in sk], fontsize=8)
        ax.set_xlabel("GPUs per model")
        ax.set_ylabel("SLO (ms)")
        ax.set_title("%s: median ratio by SLO and GPUs/model" % shown(p), fontsize=9)
        fig.colorbar(im, ax=ax, label="median symphony / eager (blue: symphony better)")
    for ax, (title, i, order, lab) in zip(axes[1], panels):
        ks = groups_by(rules[0], i, order)[0]
        median_panel(ax, [lab(k) for k in ks],
                     [(p, [dict(zip(*groups_by(p, i, order))).get(k, []) for k in ks]) for p in rules], title, cols)
        ax.set_title("Median ratio by %s" % title, fontsize=10)
    axes[1][0].legend(fontsize=7)
    fig.suptitle("Synthetic grid (Table 1, Figure 7): goodput of symphony (look-ahead and the papers' rule) relative "
                 "to eager - %s - %s" % (provenance(recs), done), fontsize=12)
    hdr = ["model", "num_models", "gpus_per_model", "slo_ms", "gamma_shape", "eager_goodput_rps"]
    for p in rules:
        tag = "symphony" if p == SYMPHONY else "paper_rule"
        hdr += ["%s_goodput_rps" % tag, "ratio_%s_to_eager" % tag, "ratio_%s_ci_low" % tag, "ratio_%s_ci_high" % tag]
    tags = ["eager"] + ["symphony" if p == SYMPHONY else "paper_rule" for p in rules]
    hdr += ["seeds", "bound_rps"] + ["%s_of_bound" % t for t in tags] + ["%s_worst_model" % t for t in tags] + \
        ["%s_point" % t for t in tags] + ["version", "commit", "seed"]
    finish(out, name, hdr, rows, fig, table)


def plot_synthetic_grid_spread(name, out):
    """The seed-to-seed spread on a sample of the synthetic grid: the relative half-width of each
    goodput's 95% interval, and each symphony/eager ratio's interval (look-ahead and the papers' rule)."""
    recs, npoints = load_sweep(name, out, record=grid_record)
    pairs = grid_pairs_of(recs)
    rules = [p for p in RULES if any(p in d for d in pairs.values())]
    pols = [EAGER] + rules
    cols = colors(pols)
    rows, relw, pts = [], {p: [] for p in pols}, {p: [] for p in rules}
    for key, d in pairs.items():
        for p, r in sorted(d.items()):
            c = ci_of(r)
            w = (c[1] - c[0]) / 2 / r["goodput_rps"] if c and r["goodput_rps"] else None
            if w is not None and p in relw:
                relw[p].append(w)
        e = d.get(EAGER)
        if not e:
            continue
        for p in rules:
            s = d.get(p)
            if not s:
                continue
            rt, rci = rel_to(s, e) if e["goodput_rps"] > 0 and all(e["by_seed"]) else (None, None)
            one = s["by_seed"][0] / e["by_seed"][0] if e["by_seed"] and e["by_seed"][0] else None
            if rt is not None:
                pts[p].append((key, rt, rci, one))
            sc, ec = ci_of(s), ci_of(e)
            rows.append(list(key[:4]) + [gamma_shape(key[4]), p, s["goodput_rps"], sc[0] if sc else None,
                                         sc[1] if sc else None, e["goodput_rps"], ec[0] if ec else None,
                                         ec[1] if ec else None, len(s["by_seed"]), rt, rci[0] if rci else None,
                                         rci[1] if rci else None, one, s.get("goodput_of_bound"),
                                         e.get("goodput_of_bound"), s["point"], e["point"], s["version"],
                                         s.get("commit"), s["seed"]])
    if not rules or not pts[rules[0]]:
        die("%s/results.jsonl has no symphony/eager pair with an interval" % rel(out))
    table = heading(name, recs, " - %d of %d points" % (len(recs), npoints))
    table += "\nrelative half-width of the goodput's 95%% interval (%s/mean)\n" % PM
    table += "  %-24s %6s %8s %8s %8s\n" % ("policy", "points", "median", "p90", "max")
    for p, ws in relw.items():
        if ws:
            table += "  %-24s %6d %7.2f%% %7.2f%% %7.2f%%\n" % (shown(p), len(ws), 100 * np.median(ws),
                                                              100 * np.percentile(ws, 90), 100 * max(ws))
    stats = {p: ratio_stats([rt for _, rt, _, _ in pts[p]]) for p in rules}
    table += "\nsymphony / eager over the sampled pairs (each the mean of its %d per-seed ratios)\n" % max(
        len(r["by_seed"]) for r in recs)
    table += stats_table(rules, stats, paper_notes=False)
    for p in rules:
        straddle = sum(1 for _, rt, c, _ in pts[p] if c and c[0] <= 1 <= c[1])
        outside = sum(1 for _, rt, c, one in pts[p] if c and one is not None and not (c[0] <= one <= c[1]))
        hw = [(c[1] - c[0]) / 2 for _, _, c, _ in pts[p] if c]
        table += "\n%s / eager per pair (mean of the per-seed ratios %s 95%%; seed 1 alone: what a one-seed grid " \
                 "point shows)\n" % (shown(p), PM)
        table += "  pairs %d; interval half-width median %.3f, max %.3f; intervals containing 1: %d; " \
                 "seed-1 ratio outside its interval: %d\n\n" % (len(pts[p]), np.median(hw) if hw else float("nan"),
                                                                max(hw) if hw else float("nan"), straddle, outside)
        table += "  %-42s %16s %10s\n" % ("pair (set, models, GPUs/model, SLO, arrival)", "ratio", "seed 1")
        for key, rt, c, one in pts[p]:
            table += "  %-42s %16s %10s\n" % ("%s x%d, %g, %g ms, %s" % key, pm(rt, c, "%.3f"), fmt(one, "%.3f"))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(16, 5.8), constrained_layout=True,
                                   gridspec_kw={"width_ratios": [1, 2.4]})
    shownp = [p for p in pols if relw[p]]
    data = [100 * np.array(relw[p]) for p in shownp]
    ax1.boxplot(data, labels=[wrap(shown(p), 14) for p in shownp], showfliers=True)
    for i, (p, dd) in enumerate(zip(shownp, data)):
        ax1.scatter(np.full(len(dd), i + 1) + np.random.RandomState(i).uniform(-0.12, 0.12, len(dd)), dd, s=10,
                    color=cols[p], alpha=0.7, zorder=3)
    ax1.set_ylabel("95% interval half-width, % of the mean goodput")
    ax1.set_title("Goodput spread over %d seeds" % max(len(r["by_seed"]) for r in recs), fontsize=10)
    ax1.grid(axis="y", alpha=0.3)
    keys = [k for k, _, _, _ in pts[rules[0]]]
    x = np.arange(len(keys))
    for j, p in enumerate(rules):
        by = {k: (rt, c, one) for k, rt, c, one in pts[p]}
        xx = x + (j - (len(rules) - 1) / 2) * 0.25
        ys = [by.get(k, (np.nan, None, None))[0] for k in keys]
        ax2.errorbar(xx, ys, yerr=[[by[k][0] - by[k][1][0] if k in by and by[k][1] else 0 for k in keys],
                                   [by[k][1][1] - by[k][0] if k in by and by[k][1] else 0 for k in keys]],
                     fmt="o", color=cols[p], capsize=2, markersize=3.5,
                     label="%s: mean of per-seed ratios, 95%% interval" % shown(p))
        ax2.plot(xx, [by.get(k, (None, None, np.nan))[2] for k in keys], linestyle="none", marker="x",
                 color=cols[p], markersize=4, alpha=0.6, label="%s: seed 1 alone" % shown(p))
    ax2.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax2.set_xticks(x)
    ax2.set_xticklabels(["%s x%d\n%g/model, %g ms\n%s" % (k[0][:12], k[1], k[2], k[3], k[4]) for k in keys],
                        fontsize=5.5, rotation=90)
    ax2.set_ylabel("symphony / eager goodput")
    ax2.set_title("The ratio of each sampled pair with its interval", fontsize=10)
    ax2.grid(axis="y", alpha=0.3)
    ax2.legend(fontsize=7)
    fig.suptitle("Synthetic grid, seed-to-seed spread - %s" % provenance(recs), fontsize=11)
    finish(out, name, ["model", "num_models", "gpus_per_model", "slo_ms", "gamma_shape", "symphony_policy",
                       "symphony_goodput_rps", "symphony_ci_low", "symphony_ci_high", "eager_goodput_rps",
                       "eager_ci_low", "eager_ci_high", "seeds", "ratio_symphony_to_eager", "ratio_ci_low",
                       "ratio_ci_high", "ratio_seed1", "symphony_of_bound", "eager_of_bound", "symphony_point",
                       "eager_point", "version", "commit", "seed"], rows, fig, table)


def short_case(label):
    """'A100 strong batching (29 models, ...)' -> 'A100 strong batching'."""
    return label.split(" (")[0]


# Figure 9 (later paper): the case a zoo-goodput label names -> the value id of Symphony's
# advantage over the baselines there
FIG9 = [("A100 all", "dbs-f9-all"), ("1080Ti all", "dbs-f9-all"), ("A100 strong", "dbs-f9-strong-a100"),
        ("1080Ti strong", "dbs-f9-strong-1080ti"), ("A100 weak", "dbs-f9-weak-a100"),
        ("1080Ti weak", "dbs-f9-weak-1080ti")]


def fig9_id(case):
    return next((vid for prefix, vid in FIG9 if case.startswith(prefix)), None)


def plot_zoo_goodput(name, out):
    recs, _ = load_sweep(name, out)
    groups, pols = sweep_table_rows(recs, "@case")
    cols = colors(pols)
    rows, table = [], heading(name, recs) + BLOCK_NOTE
    fig, (ax, axb) = plt.subplots(2, 1, figsize=(16, 11.5), constrained_layout=True)
    width = 0.8 / len(pols)
    x = np.arange(len(groups))
    for case, prs in groups:
        d = dict(prs)
        sym = d.get(SYMPHONY)
        for p, r in prs:
            rows.append([case, p] + metric_row(r, sym, d.get(EAGER)) + prov_row(r))
        table += "\n" + policy_block(case, prs)
        vid = fig9_id(case)
        for rule in [q for q in RULES if q in d]:
            base = [(p, rel_to(d[p], d[rule])[0]) for p in PAPER_BASELINES if p in d]
            base = [(p, rt) for p, rt in base if rt]
            if base:
                best = max(base, key=lambda t: t[1])
                table += "  %s / the papers' baselines: %s; over the best (%s) %.2fx" % (
                    shown(rule), ", ".join("%s %.2fx" % (p, 1 / rt) for p, rt in base), best[0], 1 / best[1])
                pv = paper_value(vid) if vid else None
                table += "; paper (Figure 9): %s\n" % ("%g-%gx" % tuple(pv) if isinstance(pv, list) else
                                                       "%gx" % pv if pv else "-")
        if "nexus" in d and "nexus:frontends=8" in d:
            rt, rci = rel_to(d["nexus:frontends=8"], d["nexus"])
            lost = paper_value("dbs-f9-nexus-8fe")
            if rt is not None:
                table += "  nexus 8 frontends / 1 frontend: %s%s\n" % (
                    pm(rt, rci, "%.2f"), " (paper, Figure 9: %.2f-%.2f)" % (1 - lost[1], 1 - lost[0]) if lost else "")
    for j, p in enumerate(pols):
        ys, lo, hi = [], [], []
        for case, prs in groups:
            d = dict(prs)
            rt, rci = rel_to(d.get(p), d.get(SYMPHONY)) if p in d and SYMPHONY in d else (None, None)
            ys.append(rt or 0)
            lo.append(rt - rci[0] if rci else 0)
            hi.append(rci[1] - rt if rci else 0)
        ax.bar(x - 0.4 + width * (j + 0.5), ys, width, color=cols[p], label=shown(p), edgecolor="black", linewidth=0.3,
               yerr=[lo, hi], capsize=1.5, error_kw=dict(linewidth=0.7))
    # the paper's statement as the baselines' goodput relative to symphony's: 1 / (its advantage)
    for i, (case, _) in enumerate(groups):
        vid = fig9_id(case)
        pv = paper_value(vid) if vid else None
        if isinstance(pv, list):
            paper_range(ax, x[i], 1 / pv[1], 1 / pv[0], "paper (Figure 9): baselines at 1/(symphony's advantage)",
                        width=0.8)
        elif pv:
            first = not getattr(ax, "_paper_marked", False)
            ax._paper_marked = True
            ax.plot([x[i] - 0.4, x[i] + 0.4], [1 / pv, 1 / pv], color="black", linewidth=1.5, zorder=6,
                    label="paper (Figure 9): baselines at 1/(symphony's advantage)" if first else None)
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xticks(x)
    ax.set_xticklabels(["%s\n(symphony %s r/s)" % (wrap(c, 30), gp(dict(prs)[SYMPHONY]))
                        for c, prs in groups], fontsize=8)
    ax.set_ylabel("goodput / symphony goodput (95% intervals)")
    ax.set_ylim(0, None)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(ncol=1, fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0), title="policy")
    ax.set_title("Goodput on the model zoos (Figure 9), 64 GPUs, own SLOs, relative to symphony (look-ahead) - %s"
                 % provenance(recs), fontsize=11)
    # the goodput as a fraction of the multi-model bound: how much any scheduler could still gain
    table += "\ngoodput over the multi-model bound (mean of the per-seed fractions)\n  %-24s" % "policy" + "".join(
        " %14s" % short_case(c)[:14] for c, _ in groups) + "\n"
    for j, p in enumerate(pols):
        vals = [of_bound(dict(prs).get(p)) for _, prs in groups]
        table += "  %-24s" % shown(p) + "".join(" %14s" % pm(m, ci, "%.3f") for m, ci in vals) + "\n"
        axb.bar(x - 0.4 + width * (j + 0.5), [m or 0 for m, _ in vals], width, color=cols[p], label=shown(p),
                edgecolor="black", linewidth=0.3, yerr=[[m - ci[0] if ci else 0 for m, ci in vals],
                                                        [ci[1] - m if ci else 0 for m, ci in vals]],
                capsize=1.5, error_kw=dict(linewidth=0.7))
    table += "  %-24s" % "bound r/s" + "".join(" %14s" % fmt(dict(prs)[SYMPHONY].get("bound_rps") if SYMPHONY in
                                                            dict(prs) else None) for _, prs in groups) + "\n"
    axb.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    axb.set_xticks(x)
    axb.set_xticklabels(["%s\n(bound %s r/s)" % (wrap(c, 30), fmt(dict(prs)[SYMPHONY].get("bound_rps")
                                                                   if SYMPHONY in dict(prs) else None))
                         for c, prs in groups], fontsize=8)
    axb.set_ylabel("goodput / multi-model bound (95% intervals)")
    axb.set_ylim(0, 1.1)
    axb.grid(axis="y", alpha=0.3)
    axb.set_title("Goodput as a fraction of the multi-model bound (bound_rps: the most any scheduler could serve)",
                  fontsize=11)
    finish(out, name, ["case", "policy"] + METRICS + PROV, rows, fig, table)


def plan_gpus(p):
    """(mean, [lo, hi] or None, min, max, answer or None when some seed needed more than max)."""
    def count(key):  # a count; null (or -1, in older files) when no count up to max_gpus served
        g = p.get(key)
        return g if g is not None and g >= 0 else None
    g = count("gpus")
    return (p.get("gpus_mean", g), p.get("gpus_ci95"), count("gpus_min"), count("gpus_max"), g)


def plot_min_gpus(name, out):
    cases = case_files(name, out, "plan-%d.json")
    allp = [d for _, d in cases]
    rows, table = [], heading(name, allp)
    hdr = ["case", "kind", "policy", "gpus", "gpus_mean", "gpus_ci_low", "gpus_ci_high", "gpus_min", "gpus_max",
           "seeds", "more_than_max", "bad_rate", "simulations", "target_rate", "max_gpus", "version", "commit",
           "seed"]
    fig, axes = plt.subplots(1, len(cases), figsize=(6.6 * len(cases), 5.6), constrained_layout=True, squeeze=False)
    for k, (ax, (case, d)) in enumerate(zip(axes[0], cases)):
        try:
            an, pls, mx = d["analytic"], d["policies"], d.get("max_gpus")
        except KeyError as e:
            die("%s plan file lacks %s: run scripts/reproduce %s" % (case, e, name))
        prov = [d.get("version"), d.get("commit"), d.get("seed")]
        table += "\n%s: %g r/s, at most %s GPUs, %s\n  %-24s %14s %9s %6s %9s %6s\n" % (
            case, d.get("target_rate"), mx, seeds_text(d.get("seed"), d.get("replications")), "", "GPUs (mean)",
            "range", "all", "bad rate", "sims")
        for kind in ("staggered", "nexus"):
            g = an.get(kind + "_gpus")
            table += "  %-24s %14s\n" % ("analytic " + kind, fmt(g, "%d"))
            rows.append([case, "analytic", kind, g, None, None, None, None, None, None, None, None, None,
                         d.get("target_rate"), mx] + prov)
        sym = None
        for p in pls:
            mean, ci, gmin, gmax, ans = plan_gpus(p)
            over = ans is None
            if p["policy"] == SYMPHONY:
                sym = mean
            table += "  %-24s %14s %9s %6s %9s %6s\n" % (
                p["policy"], pm(mean, ci, "%.1f") if mean is not None else "> %s" % mx,
                "%s-%s" % (fmt(gmin, "%d"), fmt(gmax, "%d")) if gmin is not None else "",
                "> %s" % mx if over else ans, fmt(p.get("bad_rate"), "%.4f"), fmt(p.get("simulations"), "%d"))
            rows.append([case, "simulated", p["policy"], ans, mean, ci[0] if ci else None, ci[1] if ci else None,
                         gmin, gmax, p.get("replications", 1), int(over), p.get("bad_rate"), p.get("simulations"),
                         d.get("target_rate"), mx] + prov)
        names = [p["policy"] for p in pls]
        vals = [plan_gpus(p)[0] for p in pls]
        vals = [v if v is not None and v > 0 else 0 for v in vals]
        top = max(vals + [an.get("staggered_gpus", 0) or 0, an.get("nexus_gpus", 0) or 0, 1])
        x = np.arange(len(names))
        cols = colors(names)
        recs = [{"v": v, "ci": plan_gpus(p)[1]} for p, v in zip(pls, vals)]
        bars = ax.bar(x, [v if v > 0 else top * 1.1 for v in vals], color=[cols[n] for n in names],
                      edgecolor="black", linewidth=0.4, yerr=yerr(recs, "v", "ci"), capsize=3)
        # one count far above the others (nexus on the zoo) would flatten the rest: it runs off the scale
        ranked = sorted(vals + [an.get("staggered_gpus") or 0, an.get("nexus_gpus") or 0], reverse=True)
        cap = ranked[1] * 2.2 if len(ranked) > 1 and ranked[0] > 4 * ranked[1] > 0 else None
        offscale = []
        for b, v in zip(bars, vals):
            if v <= 0:
                b.set_hatch("//")
                b.set_facecolor("white")
            if cap is not None and v > cap:
                offscale.append((b, v))
                continue
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), "%.3g" % v if v > 0 else "> %s" % mx,
                    ha="center", va="bottom", fontsize=7)
        for kind, style, col in (("staggered", (0, (6, 4)), "black"), ("nexus", (5, (6, 4)), "red")):
            g = an.get(kind + "_gpus")
            if g is not None and g > 0:
                ax.axhline(g, color=col, linestyle=style, linewidth=1.4, label="analytic %s: %d GPUs" % (kind, g))
        # Figure 10: the paper states the others relative to Symphony, so its marks sit on our symphony count
        if sym:
            single = len(d.get("config", {}).get("models", [])) == 1
            for xi, n in zip(x, names):
                if single and n in ("nexus", "shepherd"):
                    lo, hi = paper_value("dbs-f10-r50-saves") or [None, None]
                    if lo is not None:
                        paper_range(ax, xi, sym + lo, sym + hi, "paper (Fig. 10), relative to our symphony")
                elif single and n == "clockwork":
                    f = paper_value("dbs-f10-r50-clockwork")
                    if f:
                        paper_mark(ax, xi, f * sym, "paper (Fig. 10), relative to our symphony", marker="^")
                elif not single and n in ("nexus", "shepherd"):
                    f = paper_value("dbs-f10-mixed-" + n)
                    if f:
                        paper_mark(ax, xi, f * sym, "paper (Fig. 10), relative to our symphony")
            top = max(top, sym * 2.8)
        if cap:
            top = max(cap, sym * 2.8 if sym else 0) / 1.35 * 1.1
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, top * 1.35)
        for b, v in offscale:
            ax.text(b.get_x() + b.get_width() / 2, top * 1.3, "%.4g\n(off the\nscale)" % v, ha="center", va="top",
                    fontsize=7, bbox=dict(facecolor="white", edgecolor="none", pad=1))
        ax.set_ylabel("GPUs needed (every model <= 1% bad; mean over seeds)")
        ax.set_title("%s: %g r/s" % (case, d.get("target_rate")), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper left", fontsize=7)
    fig.suptitle("Fewest GPUs to serve the target rate (Figure 10), per policy - %s" % provenance(allp), fontsize=11)
    finish(out, name, hdr, rows, fig, table)


def lines_by_policy(ax, series, cols, xlabel, ylabel, title, categorical=None):
    """series: {policy: (xs, records)}: goodput lines with 95% error bars."""
    for p, (xs, rs) in series.items():
        ax.errorbar(xs, [r["goodput_rps"] for r in rs], yerr=yerr(rs), marker="o", markersize=4, color=cols[p],
                    label=shown(p), capsize=2.5, **line_style(p))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if categorical:
        ax.set_xticks(range(len(categorical)))
        ax.set_xticklabels([tick_label(c) for c in categorical], fontsize=7)
        ax.set_xlim(-0.5, len(categorical) - 0.5)


def tick_label(label, width=24):
    """A long category label on a few lines, broken first at ':' and ','."""
    parts = re.split(r"(?<=[:,])\s+", label)
    return "\n".join(wrap(p.rstrip(":,"), width) for p in parts)


def matrix_table(title, rowname, rowlabels, pols, cell, shown=None):
    """A text matrix: one row per rowlabel (written as shown[rowlabel]), one goodput column
    (mean +- 95%) per policy; cell(row, policy) is a record or None."""
    shown = shown or {r: str(r) for r in rowlabels}
    w = max(15, max(len(p) for p in pols) + 1)
    lw = max(len(rowname), max(len(shown[r]) for r in rowlabels))
    t = "\n%s\n  %-*s" % (title, lw, rowname) + "".join(" %*s" % (w, p) for p in pols) + "\n"
    for rl in rowlabels:
        t += "  %-*s" % (lw, shown[rl]) + "".join(
            " %*s" % (w, gp(cell(rl, p)) if cell(rl, p) else "-") for p in pols) + "\n"
    return t


def plot_workload_shape(name, out):
    recs, _ = load_sweep(name, out)
    pops, arrs, slos, pols = (axis_values(recs, a) for a in ("popularity", "arrival", "slo_ms", "policy"))
    idx = by_key(recs, "popularity", "arrival", "slo_ms", "policy")
    cols = colors(pols)
    rows, table = [], heading(name, recs) + "goodput (r/s)\n"
    fig, axes = plt.subplots(len(pops), len(arrs), figsize=(6 * len(arrs), 4.3 * len(pops)),
                             constrained_layout=True, squeeze=False)
    for i, pop in enumerate(pops):
        for j, arr in enumerate(arrs):
            series = {}
            for p in pols:
                pts = [(float(s), idx[(pop, arr, s, p)]) for s in slos if (pop, arr, s, p) in idx]
                series[p] = ([x for x, _ in pts], [r for _, r in pts])
                for s, r in pts:
                    sym = idx.get((pop, arr, label_of(r["key"]["slo_ms"]), SYMPHONY))
                    rows.append([pop, arr, s, p] + metric_row(r, sym, idx.get((pop, arr, label_of(r["key"]["slo_ms"]),
                                                                              EAGER))) + prov_row(r))
            ax = axes[i][j]
            lines_by_policy(ax, series, cols, "SLO (ms)", "goodput (r/s)", "popularity %s, arrival %s" % (pop, arr))
            ax.set_ylim(0, None)
            table += matrix_table("popularity %s, arrival %s" % (pop, arr), "SLO ms", slos, pols,
                                  lambda s, p: idx.get((pop, arr, s, p)))
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Workload shape (Figure 11): 20 ResNet50-like models on 32 GPUs - %s" % provenance(recs),
                 fontsize=11)
    finish(out, name, ["popularity", "arrival", "slo_ms", "policy"] + METRICS + PROV, rows, fig, table)


def plot_flat_top(name, out):
    cases = case_files(name, out, "loadcurve-%d.json")
    allc = [d for _, d in cases]
    rows, table = [], heading(name, allc)
    hdr = ["case", "policy", "load", "offered_rps", "goodput_rps", "goodput_ci_low", "goodput_ci_high", "seeds",
           "bad_rate", "bad_rate_ci_low", "bad_rate_ci_high", "gpu_busy_fraction", "gpus_used", "batch_p50",
           "worst_model", "reference_rps", "reference_ci_low", "reference_ci_high", "version", "commit", "seed"]
    fig, axes = plt.subplots(len(cases), 2, figsize=(13, 4.8 * len(cases)), constrained_layout=True, squeeze=False)
    for (case, d), (ax1, ax2) in zip(cases, axes):
        ref, rci = d.get("reference_rps"), d.get("reference_ci95")
        nseeds = d.get("replications") or 1
        pols = []
        for p in d.get("points", []):
            if p["policy"] not in pols:
                pols.append(p["policy"])
        if not pols:
            die("%s: the loadcurve of %s has no points: run scripts/reproduce %s" % (name, case, name))
        cols = colors(pols)
        table += "\n%s (reference: symphony goodput %s r/s, %s)\n  %-14s %16s %16s %16s %9s %10s %10s %10s\n" % (
            case, pm(ref, rci), seeds_text(d.get("seed"), nseeds), "policy", "peak r/s", "at load 1", "at load 2",
            "2 / peak", "busy at 1", "busy at 2", "busy@3K")
        for pol in pols:
            pts = sorted((p for p in d["points"] if p["policy"] == pol), key=lambda p: p["load"])
            for p in pts:
                c, bc = p.get("goodput_ci95"), p.get("bad_rate_ci95")
                rows.append([case, pol, p["load"], p["offered_rps"], p["goodput_rps"], c[0] if c else None,
                             c[1] if c else None, nseeds, p.get("bad_rate"), bc[0] if bc else None,
                             bc[1] if bc else None, p.get("gpu_busy_fraction"), p.get("gpus_used"),
                             p.get("batch_p50"), p.get("worst_model"), ref, rci[0] if rci else None,
                             rci[1] if rci else None, d.get("version"), d.get("commit"), d.get("seed")])
            xs = [p["offered_rps"] for p in pts]
            recs = [{"goodput_rps": p["goodput_rps"], "ci95": p.get("goodput_ci95")} for p in pts]
            ax1.errorbar(xs, [p["goodput_rps"] for p in pts], yerr=yerr(recs), marker="o", markersize=3,
                         color=cols[pol], label=shown(pol), capsize=2, **line_style(pol))
            ax2.plot(xs, [100 * p["gpu_busy_fraction"] for p in pts], marker="o", markersize=3, color=cols[pol],
                     label=shown(pol), **line_style(pol))
            at = {round(p["load"], 6): p for p in pts}
            peak = max(pts, key=lambda p: p["goodput_rps"])
            g1, g2 = at.get(1.0), at.get(2.0)
            b1, b2 = get(at, 1.0, "gpu_busy_fraction"), get(at, 2.0, "gpu_busy_fraction")
            b3k = interp(xs, [p["gpu_busy_fraction"] for p in pts], 3000.0)
            table += "  %-14s %16s %16s %16s %9s %10s %10s %10s\n" % (
                pol, pm(peak["goodput_rps"], peak.get("goodput_ci95")),
                pm(g1["goodput_rps"], g1.get("goodput_ci95")) if g1 else "-",
                pm(g2["goodput_rps"], g2.get("goodput_ci95")) if g2 else "-",
                fmt(ratio(g2["goodput_rps"] if g2 else None, peak["goodput_rps"]), "%.2f"),
                fmt(b1 * 100 if b1 is not None else None, "%.0f%%"), fmt(b2 * 100 if b2 is not None else None, "%.0f%%"),
                fmt(b3k * 100 if b3k is not None else None, "%.0f%%"))
        # Figure 2 (Right): at 3K r/s offered Symphony keeps 20% of the GPUs busy, the others all of them
        for pol in pols:
            vid = "dbs-f2-symphony-busy-3k" if pol == SYMPHONY else \
                "dbs-f2-others-busy-3k" if pol in PAPER_BASELINES else None
            v = paper_value(vid) if vid else None
            if v is not None:
                paper_mark(ax2, 3000, 100 * v, "paper (Figure 2): busy at 3K r/s")
        for ax in (ax1, ax2):
            if ref:
                ax.axvline(ref, color="gray", linestyle=":", linewidth=1)
                sec = ax.secondary_xaxis("top", functions=(lambda x, r=ref: x / r, lambda f, r=ref: f * r))
                sec.set_xlabel("load (fraction of symphony's goodput %.0f r/s)" % ref, fontsize=8)
            ax.set_xlabel("offered load (r/s)")
            ax.grid(alpha=0.3)
            ax.set_xlim(0, None)
            ax.set_ylim(0, None)
        top = max(r[3] for r in rows)
        ax1.plot([0, top], [0, top], color="lightgray", linewidth=0.8, linestyle="--", label="goodput = offered")
        ax1.set_ylabel("goodput (r/s served within the SLO; 95% intervals)")
        ax1.set_title("Goodput vs offered load (Figure 2 left): %s" % case, fontsize=10)
        ax2.set_ylabel("GPU busy (%)")
        ax2.set_ylim(0, 105)
        ax2.set_title("GPU busy fraction vs offered load (Figure 2 right)", fontsize=10)
        ax1.legend(fontsize=8)
        ax2.legend(fontsize=8, loc="lower right")
    table += "\n(busy@3K: GPU busy fraction at 3000 r/s offered, interpolated between load points; paper, Figure 2: " \
             "symphony 20%, clockwork, nexus and shepherd all GPUs)\n"
    fig.suptitle("Flat-top behaviour - %s" % provenance(allc), fontsize=11)
    finish(out, name, hdr, rows, fig, table)


NETWORK_KEYS = ["ctrl_ms", "data_ms", "resp_ms", "tail_ms"]  # the network delays in the CSV
OFF = ", send-ahead off"  # the suffix of the network study's send-ahead ablation series


def plot_network(name, out):
    recs, _ = load_sweep(name, out)
    nets, slos = (axis_values(recs, a) for a in ("@network", "slo_ms"))
    series = []
    for r in recs:
        if r["series"] not in series:
            series.append(r["series"])
    idx = {(label_of(r["key"]["@network"]), label_of(r["key"]["slo_ms"]), r["series"]): r for r in recs}
    main = [s for s in series if not s.endswith(OFF)]
    ablated = [s for s in main if s + OFF in series]
    cols = colors(main)
    rows, table = [], heading(name, recs) + "goodput (r/s), send-ahead on (the default)\n"
    short = {n: n.split(":")[0] for n in nets}  # "RDMA-like: plan ..." -> "RDMA-like"
    if len(set(short.values())) < len(nets):
        short = {n: n for n in nets}
    ncol = 2 if len(slos) > 1 else 1
    nrow = (len(slos) + ncol - 1) // ncol
    fig = plt.figure(figsize=(7 * max(ncol, 2), 4.6 * nrow + (4.4 if ablated else 0)), constrained_layout=True)
    sfs = fig.subfigures(2, 1, height_ratios=[4.6 * nrow, 4.4]) if ablated else [fig]
    axes = sfs[0].subplots(nrow, ncol, squeeze=False)
    tightest = min(slos, key=float)
    for k, slo in enumerate(slos):
        ax = axes[k // ncol][k % ncol]
        ser = {}
        for s in main:
            pts = [(i, idx[(n, slo, s)]) for i, n in enumerate(nets) if (n, slo, s) in idx]
            ser[s] = ([i for i, _ in pts], [r for _, r in pts])
        for s in series:
            for i, n in enumerate(nets):
                r = idx.get((n, slo, s))
                if not r:
                    continue
                sym = idx.get((n, slo, SYMPHONY))
                net = r["key"]["@network"].get("network", {})
                rows.append([n] + [net.get(nk) for nk in NETWORK_KEYS] + [float(slo), s, r["policy"],
                                                                          r.get("send_ahead")] +
                            metric_row(r, sym, idx.get((n, slo, EAGER))) + prov_row(r))
        lines_by_policy(ax, ser, cols, "network setting", "goodput (r/s)", "SLO %s ms" % slo, categorical=nets)
        ax.set_ylim(0, None)
        # Figure 14: within the TCP range goodput falls by up to 70% (the paper's reference: low latency)
        drop = paper_value("dbs-f14-tcp")
        ref = idx.get((nets[0], slo, SYMPHONY))
        if drop and ref and slo == tightest:
            paper_mark(ax, len(nets) - 1, (1 - drop) * ref["goodput_rps"],
                       "paper (Fig. 14): up to %.0f%% below low latency" % (100 * drop), marker="v")
            ax.legend(fontsize=7)
        table += matrix_table("SLO %s ms" % slo, "network", nets, main, lambda n, p: idx.get((n, slo, p)),
                              shown=short)
    for k in range(len(slos), nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    axes[0][0].legend(fontsize=8)
    if ablated:
        table += "\nsend-ahead ablation: goodput with send-ahead off / on (mean of per-seed ratios %s 95%%)\n" % PM
        axs = sfs[1].subplots(1, len(ablated), squeeze=False)[0]
        for ax, s in zip(axs, ablated):
            table += "\n%s\n  %-12s" % (s, "network") + "".join(" %16s" % ("SLO %s" % slo) for slo in slos) + "\n"
            for j, slo in enumerate(slos):
                xs, ys, lo, hi = [], [], [], []
                for i, n in enumerate(nets):
                    on, off = idx.get((n, slo, s)), idx.get((n, slo, s + OFF))
                    rt, rci = rel_to(off, on)
                    if rt is not None:
                        xs.append(i)
                        ys.append(rt)
                        lo.append(rt - rci[0] if rci else 0)
                        hi.append(rci[1] - rt if rci else 0)
                ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", markersize=4, capsize=2.5, color=PALETTE[j],
                            label="SLO %s ms" % slo)
            for n in nets:
                table += "  %-12s" % short[n] + "".join(
                    " %16s" % (pm(*rel_to(idx.get((n, slo, s + OFF)), idx.get((n, slo, s))), spec="%.3f")
                               if idx.get((n, slo, s + OFF)) and idx.get((n, slo, s)) else "-") for slo in slos) + "\n"
            ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
            ax.set_xticks(range(len(nets)))
            ax.set_xticklabels([short[n] for n in nets], fontsize=7, rotation=20)
            ax.set_ylabel("goodput, send-ahead off / on")
            ax.set_title("%s: send-ahead ablation" % s, fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    if any(short[n] != n for n in nets):
        table += "\nnetworks:\n" + "".join("  %s\n" % n for n in nets)
    fig.suptitle("Network delays (Figure 14): 20 ResNet50-like models on 32 GPUs - %s" % provenance(recs), fontsize=11)
    finish(out, name, ["network"] + NETWORK_KEYS + ["slo_ms", "series", "policy", "send_ahead"] + METRICS + PROV,
           rows, fig, table)


def plot_gpu_scaling(name, out):
    recs, _ = load_sweep(name, out)
    gpus = sorted({int(r["gpus"]) for r in recs})
    pols = axis_values(recs, "policy")
    idx = {(int(r["gpus"]), r["series"]): r for r in recs}
    cols = colors(pols)
    rows, table = [], heading(name, recs) + "goodput (r/s) and goodput per GPU\n"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), constrained_layout=True)
    ser = {}
    for p in pols:
        pts = [(g, idx[(g, p)]) for g in gpus if (g, p) in idx]
        ser[p] = ([g for g, _ in pts], [r for _, r in pts])
        for g, r in pts:
            rows.append([g, p] + metric_row(r, idx.get((g, SYMPHONY)), idx.get((g, EAGER))) + prov_row(r))
        per = [{"goodput_rps": r["goodput_rps"] / g, "ci95": [c / g for c in r["ci95"]] if r["ci95"] else None}
               for g, r in pts]
        ax2.errorbar([g for g, _ in pts], [q["goodput_rps"] for q in per], yerr=yerr(per), marker="o", markersize=4,
                     color=cols[p], label=shown(p), capsize=2.5, **line_style(p))
    lines_by_policy(ax1, ser, cols, "GPUs", "goodput (r/s)", "Goodput against the number of GPUs (Figure 13 right)")
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log", base=2)
    ax1.legend(fontsize=8)
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("GPUs")
    ax2.set_ylabel("goodput per GPU (r/s)")
    ax2.set_ylim(0, None)
    ax2.grid(alpha=0.3)
    ax2.set_title("Goodput per GPU (flat = linear scaling)", fontsize=10)
    table += matrix_table("goodput", "GPUs", [str(g) for g in gpus], pols, lambda g, p: idx.get((int(g), p)))
    table += "\ngoodput per GPU, relative to the smallest cluster\n  %-6s" % "GPUs" + "".join(
        " %14s" % p for p in pols) + "\n"
    for g in gpus:
        table += "  %-6d" % g
        for p in pols:
            r, r0 = idx.get((g, p)), idx.get((gpus[0], p))
            table += " %14s" % (fmt(ratio(r["goodput_rps"] / g, r0["goodput_rps"] / gpus[0]), "%.3f")
                                if r and r0 else "-")
        table += "\n"
    fig.suptitle("GPU scaling: 20 ResNet50-like models, SLO 100 ms - %s" % provenance(recs), fontsize=11)
    finish(out, name, ["gpus", "policy"] + METRICS + PROV, rows, fig, table)


def plot_variants(name, out, variant_axis, what):
    """An ablation: every case (@case) x variant (variant_axis) x policy: the goodputs under each
    variant, each variant's goodput over the first's, and symphony over each policy per variant."""
    recs, _ = load_sweep(name, out)
    cases, variants, pols = (axis_values(recs, a) for a in ("@case", variant_axis, "policy"))
    idx = by_key(recs, "@case", variant_axis, "policy")
    cols = colors(pols)
    rows, table = [], heading(name, recs) + "%s: %s\n" % (what, " / ".join(variants))
    ncol = min(4, len(cases))
    nrow = (len(cases) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 4.4 * nrow), constrained_layout=True, squeeze=False)
    hatches = ["", "//", "..", "xx"]
    for k, case in enumerate(cases):
        ax = axes[k // ncol][k % ncol]
        table += "\n%s\n  %-12s" % (case, "policy") + "".join(" %16s" % v for v in variants) + "".join(
            " %16s" % ("%s/%s" % (v, variants[0])) for v in variants[1:]) + "".join(
            " %18s" % ("sym/pol, %s" % v) for v in variants) + "\n"
        w = 0.8 / len(variants)
        x = np.arange(len(pols))
        for j, v in enumerate(variants):
            rs = [idx.get((case, v, p)) for p in pols]
            ax.bar(x - 0.4 + w * (j + 0.5), [r["goodput_rps"] if r else 0 for r in rs], w,
                   color=[cols[p] for p in pols], hatch=hatches[j % len(hatches)], edgecolor="black", linewidth=0.4,
                   yerr=yerr(rs), capsize=2, label=v)
        for p in pols:
            rs = [idx.get((case, v, p)) for v in variants]
            base = rs[0]
            table += "  %-12s" % p + "".join(" %16s" % (gp(r) if r else "-") for r in rs)
            table += "".join(" %16s" % (pm(*rel_to(r, base), spec="%.3f") if r and base else "-") for r in rs[1:])
            table += "".join(" %18s" % (pm(*rel_to(idx.get((case, v, SYMPHONY)), idx.get((case, v, p))), spec="%.3f")
                                        if idx.get((case, v, SYMPHONY)) and idx.get((case, v, p)) else "-")
                             for v in variants) + "\n"
            for v, r in zip(variants, rs):
                if r:
                    rows.append([case, v, p] + metric_row(r, idx.get((case, v, SYMPHONY)), idx.get((case, v, EAGER))) +
                                [rel_to(r, base)[0] if base else None] + prov_row(r))
        ax.set_xticks(x)
        ax.set_xticklabels(pols, rotation=45, ha="right", fontsize=8)
        ax.set_title(wrap(case, 48), fontsize=8)
        ax.set_ylabel("goodput (r/s)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, title=variant_axis, title_fontsize=7)
    for k in range(len(cases), nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    fig.suptitle("%s - %s" % (what, provenance(recs)), fontsize=11)
    finish(out, name, ["case", variant_axis, "policy"] + METRICS + ["ratio_to_%s" % variants[0]] + PROV, rows, fig,
           table)


def plot_ablation_criterion(name, out):
    plot_variants(name, out, "criterion", "Ablation: goodput judged per model or on all requests together")


def plot_ablation_drop(name, out):
    plot_variants(name, out, "drop", "Ablation: early drop (early:auto) against lazy drop")


def plot_generic_sweep(name, out):
    """Any sweep (say ablation-clockwork, whose axes this script does not know): every point's
    goodput with its interval, grouped by the values of its axes other than the policy."""
    recs, _ = load_sweep(name, out)
    axes_ = [a for a in recs[0]["key"] if a not in ("policy", "@policy")]

    def case_of(r):
        return ", ".join(label_of(r["key"].get(a)) for a in axes_) or name

    cases = []
    for r in recs:
        if case_of(r) not in cases:
            cases.append(case_of(r))
    groups = [(c, [(r["series"], r) for r in recs if case_of(r) == c]) for c in cases]
    pols = []
    for r in recs:
        if r["series"] not in pols:
            pols.append(r["series"])
    cols = colors(pols)
    rows, table = [], heading(name, recs) + BLOCK_NOTE
    ncol = min(3, len(groups))
    nrow = (len(groups) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.4 * ncol, 5 * nrow), constrained_layout=True, squeeze=False)
    for k, (case, prs) in enumerate(groups):
        ax = axes[k // ncol][k % ncol]
        sym = next((r for p, r in prs if p == SYMPHONY), None) or prs[0][1]
        table += "\n" + policy_block(case, prs, ref=SYMPHONY if sym is not prs[0][1] else prs[0][0])
        for p, r in prs:
            rows.append([case, p, r["policy"]] + metric_row(r, sym, next((q for pp, q in prs if pp == EAGER), None)) +
                        prov_row(r))
        policy_bars(ax, [p for p, _ in prs], [r for _, r in prs], sym, cols)
        ax.set_title(wrap(case, 48), fontsize=9)
        ax.set_ylabel("goodput (r/s)")
    for k in range(len(groups), nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    fig.suptitle("%s (numbers: ratio to symphony, or to the first policy) - %s" % (name, provenance(recs)),
                 fontsize=11)
    finish(out, name, ["case", "series", "policy"] + METRICS + PROV, rows, fig, table)


def read_timeline(name, path):
    """The columns of a timeline CSV ('#' lines are comments) as {column: numpy array}."""
    if not os.path.exists(path):
        missing(name, path)
    with open(path) as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    rd = csv.DictReader(lines)
    need = ["t_s", "offered", "good", "bad", "bad_rate", "busy_gpus", "gpus_in_use", "advice_add", "advice_release"]
    if not rd.fieldnames or any(c not in rd.fieldnames for c in need):
        die("%s: expected the columns %s: run scripts/reproduce %s" % (rel(path), ",".join(need), name))
    data = list(rd)
    if not data:
        die("%s has no rows: run scripts/reproduce %s" % (rel(path), name))
    return {c: np.array([float(r[c]) for r in data]) for c in rd.fieldnames}


def plot_large_changing(name, out):
    cases = case_files(name, out, "sim-%d.json")
    allc = [d for _, d in cases]
    rows, table = [], heading(name, allc)
    hdr = ["case", "series", "t_min", "model", "offered_rps", "good_rps", "bad_rps", "bad_rate", "busy_gpus",
           "gpus_in_use", "advice_add", "advice_release", "version", "seed"]
    fig = plt.figure(figsize=(15, 15 * len(cases)), constrained_layout=True)
    sub = fig.subfigures(len(cases), 1, squeeze=False)[:, 0] if len(cases) > 1 else [fig]
    for i, ((case, d), sf) in enumerate(zip(cases, sub)):
        tl = read_timeline(name, os.path.join(out, "timeline-%d.csv" % i))
        iv = float(get(d, "config", "interval_s") or 1.0)
        tmin = tl["t_s"] / 60.0
        off, good, bad = tl["offered"] / iv, tl["good"] / iv, tl["bad"] / iv
        ver, seed = d.get("version"), d.get("seed")
        for k in range(len(tmin)):
            rows.append([case, "timeline", tmin[k], None, off[k], good[k], bad[k], tl["bad_rate"][k],
                         tl["busy_gpus"][k], tl["gpus_in_use"][k], tl["advice_add"][k], tl["advice_release"][k],
                         ver, seed])
        models = d.get("models") or []
        for m in models:
            rows.append([case, "model", None, m.get("name"), m.get("offered_rps"), m.get("goodput_served_rps"),
                         None, m.get("bad_rate"), None, None, None, None, ver, seed])
        table += "\n%s: policy %s, %s GPUs, %s s measured\n" % (case, d.get("policy"), d.get("gpus"),
                                                               fmt(d.get("measured_seconds"), "%g"))
        table += "  offered %s r/s, good %s r/s, bad rate %s, GPU busy %s, GPUs in use mean %s max %s\n" % (
            fmt(d.get("offered_rps")), fmt(d.get("goodput_served_rps")), fmt(d.get("bad_rate"), "%.4f"),
            fmt(d["gpu_busy_fraction"] * 100 if d.get("gpu_busy_fraction") is not None else None, "%.0f%%"),
            fmt(get(d, "autoscale", "gpus_in_use_mean"), "%.1f"), fmt(get(d, "autoscale", "gpus_in_use_max"), "%g"))
        table += "  timeline: %d intervals of %g s; worst interval bad rate %.4f at %.1f min; advice add max %g\n" % (
            len(tmin), iv, tl["bad_rate"].max(), tmin[int(tl["bad_rate"].argmax())], tl["advice_add"].max())
        if models:
            table += "  %-22s %12s %12s %9s\n" % ("model", "offered r/s", "good r/s", "bad rate")
            for m in models:
                table += "  %-22s %12s %12s %9s\n" % (m.get("name"), fmt(m.get("offered_rps"), "%.1f"),
                                                    fmt(m.get("goodput_served_rps"), "%.1f"),
                                                    fmt(m.get("bad_rate"), "%.4f"))
        # per model over time (written by `symphony sim --model-timeline`): {model: [(t_s, offered, good, bad)]}
        per = {}
        mt_path = os.path.join(out, "model-timeline-%d.csv" % i)
        if os.path.exists(mt_path):
            with open(mt_path) as f:
                for rec in csv.DictReader(line for line in f if not line.startswith("#")):
                    per.setdefault(rec["model"], []).append((float(rec["t_s"]), int(rec["offered"]),
                                                             int(rec["good"]), int(rec["bad"])))
            for m, series in per.items():
                for t, o, g, b in series:
                    rows.append([case, "model_timeline", t / 60.0, m, o / iv, g / iv, b / iv,
                                 b / o if o else 0.0, None, None, None, None, ver, seed])
        axs = sf.subplot_mosaic([["rate", "gpus"], ["advice", "bad"], ["permodel", "permodel"],
                                 ["models", "models"]])
        ax = axs["permodel"]
        if per:
            # the eight busiest models one by one, the rest together, stacked
            order = sorted(per, key=lambda m: -sum(o for _, o, _, _ in per[m]))
            top, rest = order[:8], order[8:]
            t_axis = np.array([t for t, _, _, _ in per[order[0]]]) / 60.0
            layers = [np.array([g for _, _, g, _ in per[m]]) / iv for m in top]
            labels = list(top)
            if rest:
                layers.append(sum(np.array([g for _, _, g, _ in per[m]]) for m in rest) / iv)
                labels.append("%d other models" % len(rest))
            ax.stackplot(t_axis, layers, labels=labels, colors=[PALETTE[k % len(PALETTE)] for k in range(len(layers))],
                         alpha=0.85)
            ax.legend(fontsize=7, ncol=3, loc="upper left")
            ax.set_xlabel("time (minutes)")
            ax.set_ylabel("good requests per second")
            ax.grid(alpha=0.3)
        else:
            ax.text(0.5, 0.5, "no per-model timeline (run symphony sim with --model-timeline)", ha="center",
                    va="center", transform=ax.transAxes)
        ax.set_title("Per-model goodput over time (served within the SLO, stacked)", fontsize=10)
        ax = axs["rate"]
        ax.plot(tmin, off, color=PALETTE[0], linewidth=3, alpha=0.5, label="offered")
        ax.plot(tmin, good, color=PALETTE[2], linewidth=1, label="good (within SLO)")
        ax.set_ylabel("requests per second")
        ax.set_title("Offered and good rate", fontsize=10)
        ax = axs["gpus"]
        ax.plot(tmin, tl["gpus_in_use"], color=PALETTE[0], label="GPUs in use")
        ax.plot(tmin, tl["busy_gpus"], color=PALETTE[3], label="busy GPUs")
        if d.get("gpus"):
            ax.axhline(d["gpus"], color="gray", linestyle=":", linewidth=1, label="cluster (%s GPUs)" % d["gpus"])
        ax.set_ylabel("GPUs")
        ax.set_title("GPUs in use and busy", fontsize=10)
        ax = axs["advice"]
        ax.step(tmin, tl["advice_add"], where="post", color=PALETTE[3], label="add")
        ax.step(tmin, -tl["advice_release"], where="post", color=PALETTE[0], label="release (shown negative)")
        ax.axhline(0, color="gray", linewidth=0.6)
        ax.set_ylabel("GPUs advised (add > 0, release < 0)")
        ax.set_title("Autoscaling advice per interval", fontsize=10)
        ax = axs["bad"]
        ax.plot(tmin, 100 * tl["bad_rate"], color=PALETTE[3], label="bad rate")
        ax.axhline(100 * float(get(d, "config", "advice_threshold") or 0.01), color="gray", linestyle=":",
                   linewidth=1, label="advice threshold")
        ax.set_ylabel("late or dropped (%)")
        ax.set_title("Bad rate per interval", fontsize=10)
        for k in ("rate", "gpus", "advice", "bad"):
            axs[k].set_xlabel("time (minutes)")
            axs[k].grid(alpha=0.3)
            axs[k].legend(fontsize=8)
        axs["rate"].set_ylim(0, None)
        axs["gpus"].set_ylim(0, None)
        axs["bad"].set_ylim(0, None)
        ax = axs["models"]
        if models:
            x = np.arange(len(models))
            ax.bar(x, [m.get("offered_rps") or 0 for m in models], 0.8, color="lightgray", edgecolor="gray",
                   linewidth=0.4, label="offered")
            ax.bar(x, [m.get("goodput_served_rps") or 0 for m in models], 0.55, color=PALETTE[2],
                   label="good (served within SLO)")
            ax.set_xticks(x)
            ax.set_xticklabels([m.get("name") for m in models], rotation=90 if len(models) > 8 else 0, fontsize=8)
            ax.legend(fontsize=8)
        ax.set_ylabel("requests per second (whole run)")
        ax.set_title("Per-model offered and good rate", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        sf.suptitle("%s: policy %s - symphony %s, seed %s" % (case, d.get("policy"), ver, seed), fontsize=11)
    finish(out, name, hdr, rows, fig, table)


def plot_nexus_fig4(name, out):
    """Nexus's Figure 4: queries/s per GPU of each split plan and of the optimum, per gamma, with the
    paper's values (its table) as markers."""
    d = load_json(name, os.path.join(out, "split.json"))
    study = study_file(name) or {}
    pap = study.get("paper", {})
    gammas = pap.get("gammas", [])
    rows, lines = [], []
    hdr = ["gamma", "split", "budgets_ms", "gpus", "throughput_per_gpu", "paper", "version", "commit"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    res = d.get("results", [])
    names = [s["split"] for s in res[0]["splits"]] if res else []
    width = 0.8 / max(1, len(names))
    lines.append("%s (symphony %s @%s): queries/s per GPU (rate / GPUs), the paper's value in brackets\n" % (
        name, d.get("version"), d.get("commit")))
    lines.append("%-7s %s\n" % ("gamma", "  ".join("%-18s" % n for n in names)))
    for gi, r in enumerate(res):
        g = r.get("gamma")
        cells = []
        for si, sp in enumerate(r["splits"]):
            v = sp.get("throughput_per_gpu")
            pv = None
            if sp["split"] in pap.get("plans", {}) and g in gammas:
                pv = pap["plans"][sp["split"]][gammas.index(g)]
            budgets = "/".join("%g" % st["budget_ms"] for st in sp.get("stages", []))
            rows.append([g, sp["split"], budgets, fmt(sp.get("gpus"), "%.4f"), fmt(v, "%.2f"), fmt(pv, "%.1f"),
                         d.get("version"), d.get("commit")])
            cells.append("%-18s" % ("%s (%s)%s" % (fmt(v, "%.1f"), budgets, " [%g]" % pv if pv is not None else "")))
            x = gi + (si - (len(names) - 1) / 2) * width
            ax.bar(x, v or 0, width, color=PALETTE[si % len(PALETTE)], label=sp["split"] if gi == 0 else None)
            if pv is not None:
                paper_mark(ax, x, pv, text=None)
        lines.append("%-7s %s\n" % (fmt(g, "%g"), "  ".join(cells)))
    ax.set_xticks(range(len(res)))
    ax.set_xticklabels(["gamma %g" % r.get("gamma") for r in res])
    ax.set_ylabel("queries/s per GPU")
    ax.set_title("Nexus Figure 4: latency split plans (diamonds: the paper's values)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    finish(out, name, hdr, rows, fig, "".join(lines))


def plot_urgency(name, out):
    """An urgency study (scripts/urgency-study): per case, the % of requests missing their response
    time under each policy (mean over seeds), all applications together and per minute."""
    d = load_json(name, os.path.join(out, "urgency.json"))
    res = d.get("results", [])
    cases, pols = [], []
    for r in res:
        if r["case"] not in cases:
            cases.append(r["case"])
        if r["policy"] not in pols:
            pols.append(r["policy"])
    hdr = ["case", "policy", "seed", "app", "offered", "bad", "miss_pct", "per_minute_mean_pct", "per_minute_max_pct",
           "version", "commit"]
    rows = []
    for r in res:
        for a, v in r["apps"].items():
            rows.append([r["case"], r["policy"], r["seed"], a, v["offered"], v["bad"], "%.4f" % v["miss_pct"],
                         "%.4f" % v["per_minute_mean_pct"], "%.4f" % v["per_minute_max_pct"], r["version"], r["commit"]])
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(cases) * len(pols) / 3), 4.8))
    width = 0.8 / max(1, len(pols))
    for pi, pol in enumerate(pols):
        ys = []
        for c in cases:
            rs = [r for r in res if r["case"] == c and r["policy"] == pol]
            ys.append(sum(r["per_minute_mean_pct"] for r in rs) / len(rs) if rs else 0)
        ax.bar([i + (pi - (len(pols) - 1) / 2) * width for i in range(len(cases))], ys, width,
               color=PALETTE[pi % len(PALETTE)], label=pol)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([wrap(c, 18) for c in cases], fontsize=7)
    ax.set_ylabel("requests missing QoS, mean % per minute")
    ax.set_title("%s (symphony %s @%s)" % (name, d.get("version"), d.get("commit")), fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    with open(os.path.join(out, "table.txt")) as f:
        table = f.read()
    finish(out, name, hdr, rows, fig, table)


# ---------------------------------------------------------------- look-ahead deferral (issue 27)

LA_NAMES = {"symphony": "look-ahead (symphony)", "symphony:lookahead=off": "paper's rule (lookahead=off)"}


def case_short(label):
    """A lookahead case's short name: its label up to the first colon ('a (held out)' -> 'a')."""
    return label.split(":")[0].split(" (")[0].strip()


def ratio_to_eager(name, out, variant_axis, title):
    """A study of cases (@case) x variants (variant_axis, the first 'eager'): every variant's goodput over
    eager's on the same seeds (mean of the per-seed ratios, 95% interval) and the goodput over the
    multi-model bound. The figure: the ratios per case (lookahead: bars; more variants: a heat map)."""
    recs, _ = load_sweep(name, out)
    cases, variants = axis_values(recs, "@case"), axis_values(recs, variant_axis)
    idx = by_key(recs, "@case", variant_axis)
    if EAGER not in variants:
        die("%s: no eager variant to compare with" % name)
    others = [v for v in variants if v != EAGER]
    study = study_file(name) or {}
    issue = study.get("issue", {})
    thr_cases, thr_all, thr_of = issue.get("threshold_cases", []), issue.get("min_ratio"), issue.get("min_ratio_of", {})
    rows, table = [], heading(name, recs) + (
        "ratios: goodput over eager's on the same seeds (mean of the per-seed ratios %s 95%%); of bound: goodput over "
        "the multi-model bound (bound_rps)\n" % PM)
    q = {}
    for c in cases:
        e = idx.get((c, EAGER))
        table += "\n%s\n  %-26s %16s %16s %16s %9s\n" % (c, "variant", "goodput r/s", "vs eager", "of bound",
                                                          "bound")
        for v in variants:
            r = idx.get((c, v))
            if not r:
                continue
            rt, rci = rel_to(r, e)
            ob, obci = of_bound(r)
            q[(c, v)] = (rt, rci)
            table += "  %-26s %16s %16s %16s %9s\n" % (v, gp(r), pm(rt, rci, "%.3f") + "x" if rt is not None else "-",
                                                       pm(ob, obci, "%.3f"), fmt(r.get("bound_rps")))
            rows.append([c, v, r["policy"]] + metric_row(r, idx.get((c, SYMPHONY)), e) + prov_row(r))
        sc = case_short(c)
        if sc in thr_cases and thr_all is not None:
            t = thr_of.get(sc, thr_all)
            m = q.get((c, SYMPHONY), (None, None))[0]
            table += "  issue 27: symphony / eager >= %.2f: %s\n" % (t, "-" if m is None else "met" if m >= t else
                                                                     "MISSED")
    if len(others) <= 3:  # bars: the ratios per case, and the goodput over the bound
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 0.42 * len(cases) + 2.5), constrained_layout=True)
        cols = colors(variants)
        hbar_panel(ax1, [wrap(c, 60) for c in cases], [(v, [q.get((c, v), (None, None)) for c in cases])
                                                        for v in others], cols, 1.75,
                   "goodput / eager's (per-seed ratios, 95% intervals)", "Ratio to eager", 7, numbers=True)
        first = True
        for k, c in enumerate(cases):
            sc = case_short(c)
            if sc in thr_cases and thr_all is not None:
                t = thr_of.get(sc, thr_all)
                ax1.plot([t, t], [k - 0.45, k + 0.45], color="red", linewidth=1.5,
                         label="issue 27's threshold" if first else None)
                first = False
        ax1.axvline(1, color="gray", linestyle=":", linewidth=1)
        ax1.legend(fontsize=8, loc="upper right")
        hbar_panel(ax2, [case_short(c) for c in cases], [(v, [of_bound(idx.get((c, v))) for c in cases])
                                                         for v in variants], cols, 1.35,
                   "goodput / multi-model bound (bound_rps)", "Goodput as a fraction of the multi-model bound", 8)
    else:  # a heat map of the ratios: variants x cases
        fig, ax = plt.subplots(figsize=(1.1 * len(cases) + 4, 0.5 * len(others) + 2.5), constrained_layout=True)
        M = np.array([[q.get((c, v), (np.nan,))[0] if q.get((c, v), (None,))[0] is not None else np.nan
                       for c in cases] for v in others], dtype=float)
        im = ax.imshow(np.clip(M, 0.8, 1.2), cmap="RdBu", vmin=0.8, vmax=1.2, aspect="auto")
        for i, v in enumerate(others):
            for k, c in enumerate(cases):
                m, ci = q.get((c, v), (None, None))
                if m is not None:
                    ax.text(k, i, "%.2f\n%s%.2f" % (m, PM, half_width(ci)) if ci else "%.2f" % m, ha="center",
                            va="center", fontsize=6.5, color="white" if abs(min(max(m, 0.8), 1.2) - 1) > 0.12 else
                            "black")
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([case_short(c) for c in cases], rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(others)))
        ax.set_yticklabels(others, fontsize=8)
        fig.colorbar(im, ax=ax, label="goodput / eager's (colour clipped to 0.8-1.2)")
    fig.suptitle("%s - %s" % (title, provenance(recs)), fontsize=11)
    finish(out, name, ["case", variant_axis, "policy"] + METRICS + PROV, rows, fig, table)


def hbar_panel(ax, labels, series, cols, xmax, xlabel, title, fontsize, numbers=False):
    """Horizontal bars, one group per label (top to bottom), one bar per series (name, [(mean, [lo, hi])]) with
    its interval; numbers: each mean printed beside its bar."""
    y = np.arange(len(labels))
    h = 0.8 / len(series)
    for j, (v, vals) in enumerate(series):
        yy = y - 0.4 + h * (j + 0.5)
        ax.barh(yy, [m or 0 for m, _ in vals], h, color=cols[v], capsize=2, label=LA_NAMES.get(v, v),
                xerr=[[m - ci[0] if m is not None and ci else 0 for m, ci in vals],
                      [ci[1] - m if m is not None and ci else 0 for m, ci in vals]], edgecolor="black", linewidth=0.3)
        for yi, (m, _) in zip(yy, vals):
            if numbers and m is not None:
                ax.text(min(m, xmax - 0.3) + 0.01, yi, "%.3f" % m, va="center", fontsize=6)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=fontsize)
    ax.invert_yaxis()
    ax.set_xlim(0, xmax)
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title, fontsize=10)


def half_width(ci):
    return (ci[1] - ci[0]) / 2 if ci else 0


def plot_lookahead(name, out):
    ratio_to_eager(name, out, "policy", "Look-ahead deferral against eager and the papers' rule (issue 27)")


def plot_ablation_lookahead(name, out):
    ratio_to_eager(name, out, "@policy", "Ablation: look-ahead's parts one at a time, lazy drop, the paper's timeout "
                                         "(goodput / eager's)")


def plot_lookahead_heldout(name, out):
    ratio_to_eager(name, out, "policy", "Look-ahead deferral on ten held-out sets of A100 models (not tuned on)")


def param_variant(param, value, default):
    """The @policy label of a parameter's value in lookahead-params: 'symphony' at the default."""
    return SYMPHONY if value == default else "%s=%g" % (param, value)


def plot_lookahead_params(name, out):
    """One look-ahead parameter varied at a time from the defaults (the study file's "params"): each value's
    goodput over eager's per case (per-seed ratios) and the worst case, one panel per parameter."""
    recs, _ = load_sweep(name, out)
    cases = axis_values(recs, "@case")
    idx = by_key(recs, "@case", "@policy")
    params = (study_file(name) or {}).get("params") or {}
    if not params:
        die("%s: the study file names no \"params\"" % name)
    rows, table = [], heading(name, recs) + (
        "goodput over eager's on the same seeds (mean of the per-seed ratios), one parameter varied at a time from "
        "the defaults (*: the default); worst: the smallest ratio over the cases; mean: the mean over the cases\n")
    n = len(params)
    ncol = 3
    nrow = (n + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(6 * ncol, 4.6 * nrow), constrained_layout=True, squeeze=False)
    ccols = {c: (PALETTE + PALETTE)[i] for i, c in enumerate(cases)}
    for k, (param, spec) in enumerate(params.items()):
        ax = axes[k // ncol][k % ncol]
        vals, dflt = spec["values"], spec["default"]
        table += "\n%s (default %g)\n  %-8s" % (param, dflt, "value") + "".join(
            " %14s" % case_short(c)[:14] for c in cases) + " %9s %9s\n" % ("worst", "mean")
        grid = {}
        for v in vals:
            lab = param_variant(param, v, dflt)
            cells = []
            for c in cases:
                rt, rci = rel_to(idx.get((c, lab)), idx.get((c, EAGER)))
                grid[(v, c)] = rt
                cells.append(pm(rt, rci, "%.3f") if rt is not None else "-")
                r = idx.get((c, lab))
                if r:
                    rows.append([param, v, int(v == dflt), c, lab, r["goodput_rps"], rt, rci[0] if rci else None,
                                 rci[1] if rci else None, len(r["by_seed"])] + prov_row(r))
            got = [grid[(v, c)] for c in cases if grid.get((v, c)) is not None]
            worst = min(got, default=None)
            grid[(v, "worst")] = worst
            table += "  %-8s" % ("%g%s" % (v, "*" if v == dflt else "")) + "".join(" %14s" % x for x in cells) + \
                " %9s %9s\n" % (fmt(worst, "%.3f"), fmt(sum(got) / len(got) if got else None, "%.3f"))
        x = np.arange(len(vals))
        for c in cases:
            ax.plot(x, [grid.get((v, c)) if grid.get((v, c)) is not None else np.nan for v in vals], marker="o",
                    markersize=3, linewidth=1, color=ccols[c], alpha=0.8, label=case_short(c))
        ax.plot(x, [grid[(v, "worst")] if grid[(v, "worst")] is not None else np.nan for v in vals], marker="s",
                color="black", linewidth=2.5, label="worst case")
        if dflt in vals:
            ax.axvspan(vals.index(dflt) - 0.3, vals.index(dflt) + 0.3, color="gray", alpha=0.15, label="default")
        ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
        ax.set_xticks(x)
        ax.set_xticklabels(["%g" % v for v in vals])
        ax.set_xlabel(param)
        ax.set_ylabel("goodput / eager's")
        lo = min([grid[(v, "worst")] for v in vals if grid[(v, "worst")] is not None] + [0.9])
        ax.set_ylim(max(0, lo - 0.05), None)
        ax.grid(alpha=0.3)
        ax.set_title("%s (default %g)" % (param, dflt), fontsize=10)
    axes[0][0].legend(fontsize=6, ncol=2)
    for k in range(n, nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    table += "\neager (r/s): " + "; ".join("%s %s" % (case_short(c), gp(idx[(c, EAGER)])) for c in cases
                                           if (c, EAGER) in idx) + "\n"
    fig.suptitle("Look-ahead's parameters one at a time: goodput over eager's per case - %s" % provenance(recs),
                 fontsize=11)
    finish(out, name, ["parameter", "value", "default", "case", "variant", "goodput_rps", "ratio_to_eager",
                       "ratio_ci_low", "ratio_ci_high", "seeds"] + PROV, rows, fig, table)


def plot_lookahead_busy(name, out):
    """A sim sweep over loads (@load), seeds (an axis: every seed's busy fraction kept) and policies: the GPU
    busy fraction per load and policy (mean over the seeds, 95% interval) and the share of the paper's rule's
    reduction relative to eager that look-ahead keeps, per seed."""
    recs, _ = load_sweep(name, out, record=lambda d: dict(point_record(d), rate=get(d, "config", "rate"),
                                                          batch_mean_run=get(d, "batch_size", "mean")))
    loads, pols = axis_values(recs, "@load"), axis_values(recs, "policy")
    sds = sorted({int(r["key"]["seed"]) for r in recs})
    idx = {(label_of(r["key"]["@load"]), int(r["key"]["seed"]), label_of(r["key"]["policy"])): r for r in recs}
    want = ((study_file(name) or {}).get("issue") or {}).get("min_share", 0.9)
    cols = colors(pols)
    rows, table = [], heading(name, recs) + (
        "GPU busy fraction per load and policy; kept = (eager - symphony) / (eager - symphony:lookahead=off), "
        "per seed\n")
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), constrained_layout=True)
    x = np.arange(len(loads))
    w = 0.8 / len(pols)
    shares = []
    for j, p in enumerate(pols):
        ms = [mean_ci([idx[(L, s, p)]["gpu_busy_fraction"] for s in sds if (L, s, p) in idx]) for L in loads]
        axes[0].bar(x - 0.4 + w * (j + 0.5), [100 * m for m, _ in ms], w, color=cols[p], label=LA_NAMES.get(p, p),
                    yerr=[[100 * (m - ci[0]) if ci else 0 for m, ci in ms], [100 * (ci[1] - m) if ci else 0
                                                                           for m, ci in ms]],
                    capsize=3, edgecolor="black", linewidth=0.4)
    table += "\n  %-28s" % "load" + "".join(" %18s" % p[:18] for p in pols) + " %18s\n" % "kept"
    for L in loads:
        sh = []
        for s in sds:
            try:
                e, y, o = (idx[(L, s, p)]["gpu_busy_fraction"] for p in (EAGER, SYMPHONY, "symphony:lookahead=off"))
            except KeyError:
                continue
            sh.append((e - y) / (e - o) if e > o else None)
            for p in pols:
                r = idx[(L, s, p)]
                rows.append([L, r.get("rate"), s, p, r["gpu_busy_fraction"], r["bad_rate"], r.get("batch_mean_run"),
                             sh[-1] if p == SYMPHONY else None] + prov_row(r))
        m, ci = mean_ci([v for v in sh if v is not None])
        shares.append((m, ci))
        table += "  %-28s" % L + "".join(" %18s" % pm(*mean_ci([idx[(L, s, p)]["gpu_busy_fraction"] for s in sds
                                                                 if (L, s, p) in idx]), spec="%.3f") for p in pols)
        table += " %18s  (issue 27: >= %.2f: %s)\n" % (pm(m, ci, "%.3f"), want, "-" if m is None else
                                                      "met" if m >= want else "MISSED")
    axes[0].set_xticks(x)
    axes[0].set_xticklabels(loads, fontsize=8)
    axes[0].set_ylabel("GPU busy (%; mean over seeds, 95% intervals)")
    axes[0].set_ylim(0, 110)
    axes[0].legend(fontsize=8)
    axes[0].grid(axis="y", alpha=0.3)
    axes[0].set_title("GPU busy fraction, A100 zoo, 64 GPUs", fontsize=10)
    axes[1].bar(x, [m or 0 for m, _ in shares], 0.5, color=cols.get(SYMPHONY),
                yerr=[[m - ci[0] if ci else 0 for m, ci in shares], [ci[1] - m if ci else 0 for m, ci in shares]],
                capsize=4, edgecolor="black", linewidth=0.4)
    for xi, (m, _) in zip(x, shares):
        if m is not None:
            axes[1].text(xi, m + 0.02, "%.3f" % m, ha="center", fontsize=8)
    axes[1].axhline(want, color="red", linewidth=1.5, label="issue 27: at least %.0f%%" % (100 * want))
    axes[1].set_xticks(x)
    axes[1].set_xticklabels(loads, fontsize=8)
    axes[1].set_ylim(0, 1.15)
    axes[1].set_ylabel("share of the paper's rule's reduction kept")
    axes[1].legend(fontsize=8, loc="lower right")
    axes[1].grid(axis="y", alpha=0.3)
    axes[1].set_title("(eager - look-ahead) / (eager - paper's rule), per seed", fontsize=10)
    fig.suptitle("Busy GPUs at low and medium load - %s" % provenance(recs), fontsize=11)
    finish(out, name, ["load", "rate_rps", "seed", "policy", "gpu_busy_fraction", "bad_rate", "batch_mean",
                       "share_kept"] + PROV, rows, fig, table)


STUDIES = {
    "compare-policies": plot_compare_policies,
    "table2": plot_table2,
    "batching-effect": plot_batching_effect,
    "timeout": plot_timeout,
    "synthetic-grid": plot_synthetic_grid,
    "synthetic-grid-spread": plot_synthetic_grid_spread,
    "zoo-goodput": plot_zoo_goodput,
    "min-gpus": plot_min_gpus,
    "workload-shape": plot_workload_shape,
    "flat-top": plot_flat_top,
    "network": plot_network,
    "gpu-scaling": plot_gpu_scaling,
    "ablation-criterion": plot_ablation_criterion,
    "ablation-drop": plot_ablation_drop,
    "lookahead": plot_lookahead,
    "ablation-lookahead": plot_ablation_lookahead,
    "lookahead-busy": plot_lookahead_busy,
    "lookahead-heldout": plot_lookahead_heldout,
    "lookahead-params": plot_lookahead_params,
    "large-changing": plot_large_changing,
    "nexus-fig4": plot_nexus_fig4,
    "urgency-spikes": plot_urgency,
    "urgency-grid": plot_urgency,
}


def main(argv):
    args = argv[1:]
    if args and args[0] == "sweep":  # any sweep, axes and metric chosen (scripts/plotsweep.py)
        import plotsweep
        plotsweep.main(args[1:], write_atomic, save_fig, plt, PALETTE)
        return
    out = None
    if len(args) == 3 and args[1] == "--dir":
        out = os.path.abspath(args[2])
        args = args[:1]
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit(__doc__.strip().split("\n\n")[1] + "\n(studies: %s)" % ", ".join(sorted(STUDIES)))
    name = args[0]
    out = out or os.path.join(ROOT, "results", name)
    if name in STUDIES:
        STUDIES[name](name, out)
        return
    # a sweep study this script has no plot of its own for (ablation-clockwork, say): the generic one
    study = study_file(name)
    if (study and study.get("run") == "sweep") or (not study and os.path.exists(os.path.join(out, "results.jsonl"))):
        plot_generic_sweep(name, out)
        return
    die("unknown study '%s' (known: %s, and any sweep study)" % (name, ", ".join(sorted(STUDIES))))


if __name__ == "__main__":
    main(sys.argv)
