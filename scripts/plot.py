#!/usr/bin/python3
"""Draws the figure and table of a study from its raw results.

usage: /usr/bin/python3 scripts/plot.py NAME [--dir DIR]

NAME is a study (experiments/NAME.json); scripts/reproduce NAME computes its
raw results into results/NAME/ and then runs this script. It reads

  results.jsonl         "sweep" studies: one JSON line per grid point (symphony sweep)
  plan-I.json           "plan" studies (min-gpus): symphony plan, one per case
  loadcurve-I.json      "loadcurve" studies (flat-top): symphony loadcurve, one per case
  sim-I.json + timeline-I.csv   "sim" studies (large-changing): symphony sim, one per case

and writes, beside them (each file atomically: a temporary file, then a rename)

  NAME.csv    one row per point or plotted value, with the symphony version and seed
  NAME.png    the figure
  table.txt   the key numbers as a text table (also printed); its first line names
              the study, the symphony version and the seed.

--dir DIR reads the raw results from DIR and writes the outputs there instead of
results/NAME/ (to try a study's plot on a stand-in). Run it with Debian's
interpreter (/usr/bin/python3), which has matplotlib. A sweep whose results.jsonl
is still being written is refused, except synthetic-grid, which is plotted from the
points there so far ("N of M points" in its table).
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPI = 150
PALETTE = list(plt.get_cmap("tab10").colors) + ["#000000", "#aec7e8", "#ffbb78", "#98df8a"]
SYMPHONY = "symphony"
# one colour per policy in every figure (others get the colours left)
POLICY_ORDER = [SYMPHONY, "eager", "timeout:30%", "betalambda", "clockwork", "shepherd", "nexus", "urgency", "fcfs",
                "edf", "nexus:frontends=8"]

# the columns of every sweep point in the CSV files, after the study's own ones
METRICS = ["goodput_rps", "ratio_to_symphony", "upper_bound_rps", "bad_rate", "batch_p50",
           "batch_mean", "queueing_p99_ms", "latency_p99_ms", "gpu_busy_fraction"]


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
    tmp = path + ".tmp"
    fig.savefig(tmp, format="png", dpi=DPI)
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
    """'symphony 0.1.0, seed 1' from the records' version and seed fields."""
    versions = sorted({str(r.get("version")) for r in recs})
    seeds = sorted({str(r.get("seed")) for r in recs})
    return "symphony %s, seed%s %s" % (", ".join(versions), "s" if len(seeds) > 1 else "", ", ".join(seeds))


def heading(name, recs, extra=""):
    return "%s (%s)%s\n" % (name, provenance(recs), extra)


def label_of(v):
    """The label of an axis value: an @axis object's "label", else its text."""
    if isinstance(v, dict):
        return str(v["label"]) if "label" in v else json.dumps(v, sort_keys=True)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


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
    free = [c for c in PALETTE if c not in [cols[p] for p in policies if p in cols]]
    for i, p in enumerate(p for p in policies if p not in cols):
        cols[p] = free[i % len(free)] if free else PALETTE[i % len(PALETTE)]
    return cols


def line_style(policy):
    """Symphony is drawn wide underneath, so that policies on top of it stay visible."""
    return dict(linewidth=3.5, alpha=0.55, zorder=1) if policy == SYMPHONY else dict(linewidth=1.5, zorder=2)


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


# ---------------------------------------------------------------- sweeps

def point_record(d):
    """The fields of a sweep line the plots use (the full config stays out)."""
    return {
        "point": d["point"], "key": d["key"], "policy": d.get("policy"),
        "version": d.get("version"), "seed": d.get("seed"),
        "goodput_rps": d.get("goodput_rps"), "upper_bound_rps": d.get("upper_bound_rps"),
        "bad_rate": d.get("bad_rate"), "batch_p50": get(d, "batch_size", "p50"),
        "batch_mean": get(d, "batch_size", "mean"), "queueing_p99_ms": get(d, "queueing_ms", "p99"),
        "latency_p99_ms": get(d, "latency_ms", "p99"), "gpu_busy_fraction": d.get("gpu_busy_fraction"),
        "slo_ms": get(d, "config", "slo_ms"), "gpus": get(d, "config", "gpus"),
        "models": get(d, "config", "models"),
    }


def load_sweep(name, out, record=point_record, partial=False):
    """Streams results.jsonl: (records sorted by point, npoints). A line cut short at the
    end (being written) is skipped; without partial, missing points are an error."""
    path = os.path.join(out, "results.jsonl")
    if not os.path.exists(path):
        missing(name, path)
    points, npoints, bad = {}, None, None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            if bad:
                die("%s:%d: not a JSON line (%s): run scripts/reproduce %s" % (rel(path), bad[0], bad[1], name))
            try:
                d = json.loads(line)
                n = d["npoints"]
                rec = record(d)
            except (ValueError, KeyError, TypeError) as e:
                bad = (lineno, e)
                continue
            if npoints not in (None, n):
                die("%s: lines of grids of %d and %d points: run scripts/reproduce %s" % (rel(path), npoints, n, name))
            npoints = n
            points[rec["point"]] = rec
    if bad:
        print("plot.py: %s:%d: skipped a line cut short (still being written?)" % (rel(path), bad[0]), file=sys.stderr)
    if not points:
        die("%s has no results yet: run scripts/reproduce %s" % (rel(path), name))
    if len(points) < npoints and not partial:
        die("%s has %d of %d points: run scripts/reproduce %s (it resumes)" % (rel(path), len(points), npoints, name))
    return [points[k] for k in sorted(points)], npoints


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


def metric_row(r, sym):
    """The METRICS columns of a record, sym: symphony's goodput at the same point."""
    g = r["goodput_rps"]
    return [g, ratio(g, sym), r["upper_bound_rps"], r["bad_rate"], r["batch_p50"], r["batch_mean"],
            r["queueing_p99_ms"], r["latency_p99_ms"], r["gpu_busy_fraction"]]


def policy_block(title, rows):
    """Text block: a case's goodput, ratio to symphony, batch p50, queueing p99, GPU busy per policy."""
    sym = next((r["goodput_rps"] for p, r in rows if p == SYMPHONY), None)
    lines = [title, "  %-20s %12s %9s %10s %13s %9s" % ("policy", "goodput r/s", "vs symph", "batch p50",
                                                     "queue p99 ms", "GPU busy")]
    for p, r in rows:
        lines.append("  %-20s %12s %9s %10s %13s %9s" % (
            p, fmt(r["goodput_rps"]), fmt(ratio(r["goodput_rps"], sym), "%.2fx"), fmt(r["batch_p50"], "%g"),
            fmt(r["queueing_p99_ms"], "%.2f"),
            fmt(r["gpu_busy_fraction"] * 100 if r["gpu_busy_fraction"] is not None else None, "%.0f%%")))
    return "\n".join(lines) + "\n"


def policy_bars(ax, policies, values, ref=None, cols=None):
    """Bars of values per policy, each labelled with its ratio to ref (symphony)."""
    x = np.arange(len(policies))
    vals = [v if v is not None else 0 for v in values]
    ax.bar(x, vals, color=[cols[p] for p in policies] if cols else None, edgecolor="black", linewidth=0.4)
    ax.set_xticks(x)
    ax.set_xticklabels(policies, rotation=45, ha="right", fontsize=8)
    top = max(vals) if vals and max(vals) > 0 else 1
    if ref:
        for xi, v in zip(x, vals):
            ax.text(xi, v + top * 0.01, "%.2f" % (v / ref), ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, top * 1.15)
    ax.grid(axis="y", alpha=0.3)


def sweep_table_rows(recs, case_axis):
    """(case, [(policy, record)]) in grid order."""
    cases = axis_values(recs, case_axis)
    pols = axis_values(recs, "policy")
    idx = by_key(recs, case_axis, "policy")
    return [(c, [(p, idx[(c, p)]) for p in pols if (c, p) in idx]) for c in cases], pols


# ---------------------------------------------------------------- studies

def plot_compare_policies(name, out):
    recs, _ = load_sweep(name, out)
    groups, pols = sweep_table_rows(recs, "@case")
    cols = colors(pols)
    rows, table = [], heading(name, recs)
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 5.2), constrained_layout=True, squeeze=False)
    for ax, (case, prs) in zip(axes[0], groups):
        sym = next((r["goodput_rps"] for p, r in prs if p == SYMPHONY), None)
        for p, r in prs:
            rows.append([case, p] + metric_row(r, sym) + [r["point"], r["version"], r["seed"]])
        table += "\n" + policy_block(case, prs)
        policy_bars(ax, [p for p, _ in prs], [r["goodput_rps"] for _, r in prs], sym, cols)
        ax.set_title(wrap(case, 40), fontsize=10)
        ax.set_ylabel("goodput (r/s, <= 1% late or dropped)")
    fig.suptitle("Goodput per policy (numbers: ratio to symphony) - %s" % provenance(recs), fontsize=11)
    finish(out, name, ["case", "policy"] + METRICS + ["point", "version", "seed"], rows, fig, table)


def analytic_batches(alpha, beta, slo, n):
    """Table 2's uncoordinated and staggered batches and their throughputs (r/s)."""
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
    hdr = ["model", "alpha_ms", "beta_ms", "slo_ms", "gpus", "kind", "policy", "batch", "goodput_rps",
           "ratio_to_symphony", "bad_rate", "point", "version", "seed"]
    fig, axes = plt.subplots(1, len(groups), figsize=(6.2 * len(groups), 5.2), constrained_layout=True, squeeze=False)
    for ax, (model, prs) in zip(axes[0], groups):
        r0 = prs[0][1]
        m = r0["models"][0]
        alpha, beta, slo, n = m["alpha_ms"], m["beta_ms"], r0["slo_ms"], r0["gpus"]
        sym = next((r["goodput_rps"] for p, r in prs if p == SYMPHONY), None)
        table += "\n%s: alpha %g ms, beta %g ms, SLO %g ms, N = %d GPUs\n" % (model, alpha, beta, slo, n)
        table += "  %-24s %6s %12s %9s\n" % ("", "batch", "r/s", "vs symph")
        an = analytic_batches(alpha, beta, slo, n)
        for kind, b, thr in an:
            table += "  %-24s %6d %12.0f %9s\n" % ("analytic " + kind, b, thr, fmt(ratio(thr, sym), "%.2fx"))
            rows.append([model, alpha, beta, slo, n, "analytic", kind, b, thr, ratio(thr, sym), None, None,
                         r0["version"], r0["seed"]])
        for p, r in prs:
            table += "  %-24s %6s %12s %9s\n" % (p, fmt(r["batch_p50"], "%g"), fmt(r["goodput_rps"]),
                                               fmt(ratio(r["goodput_rps"], sym), "%.2fx"))
            rows.append([model, alpha, beta, slo, n, "simulated", p, r["batch_p50"], r["goodput_rps"],
                         ratio(r["goodput_rps"], sym), r["bad_rate"], r["point"], r["version"], r["seed"]])
        ps = [p for p, _ in prs]
        policy_bars(ax, ps, [r["goodput_rps"] for _, r in prs], sym, cols)
        for (kind, b, thr), style in zip(an, ("--", "-.")):
            ax.axhline(thr, color="black", linestyle=style, linewidth=1.2,
                       label="analytic %s: b = %d, %.0f r/s" % (kind, b, thr))
        top = max([thr for _, _, thr in an] + [r["goodput_rps"] or 0 for _, r in prs])
        ax.set_ylim(0, top * 1.3)
        ax.legend(loc="upper left", fontsize=8)
        ax.set_title("%s (alpha %g, beta %g ms), SLO %g ms, %d GPUs" % (model, alpha, beta, slo, n), fontsize=10)
        ax.set_ylabel("goodput (r/s)")
    fig.suptitle("Table 2: simulated goodput per policy (numbers: ratio to symphony) vs analytic throughput - %s"
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
    recs, _ = load_sweep(name, out)
    idx = by_key(recs, "@beta", "policy")
    rows, xs, ys = [], [], []
    table = heading(name, recs) + "\n  %7s %7s %13s %11s %7s %10s %9s\n" % (
        "beta ms", "SLO ms", "symphony r/s", "eager r/s", "ratio", "sym batch", "eager b.")
    for lab in axis_values(recs, "@beta"):
        s, e = idx.get((lab, SYMPHONY)), idx.get((lab, "eager"))
        if not s or not e:
            die("%s: point %s lacks symphony or eager" % (name, lab))
        beta, rt = beta_of(s), ratio(e["goodput_rps"], s["goodput_rps"])
        xs.append(beta)
        ys.append(rt)
        rows.append([beta, s["slo_ms"], s["goodput_rps"], e["goodput_rps"], rt, s["batch_p50"], e["batch_p50"],
                     s["version"], s["seed"]])
        table += "  %7g %7g %13.0f %11.0f %7s %10s %9s\n" % (beta, s["slo_ms"], s["goodput_rps"], e["goodput_rps"],
                                                         fmt(rt, "%.3f"), fmt(s["batch_p50"], "%g"),
                                                         fmt(e["batch_p50"], "%g"))
    fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
    ax.plot(xs, ys, marker="o", color=PALETTE[1], label="eager / symphony")
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xlabel("beta (ms): batch latency l(b) = 1 ms x b + beta, SLO = 2 l(8)")
    ax.set_ylabel("eager goodput / symphony goodput")
    ax.set_xticks(xs)
    ax.set_ylim(min(0.5, min(y for y in ys if y is not None) - 0.05), 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Batching effect: 10 models on 32 GPUs, Poisson - %s" % provenance(recs), fontsize=10)
    finish(out, name, ["beta_ms", "slo_ms", "symphony_goodput_rps", "eager_goodput_rps", "ratio_eager_to_symphony",
                       "symphony_batch_p50", "eager_batch_p50", "version", "seed"], rows, fig, table)


def timeout_pct(policy):
    m = re.fullmatch(r"timeout:([0-9.]+)%", policy)
    return float(m.group(1)) if m else None


def plot_timeout(name, out):
    recs, _ = load_sweep(name, out)
    groups, pols = sweep_table_rows(recs, "@case")
    tpols = [p for p in pols if timeout_pct(p) is not None]
    rows = []
    fig, ax = plt.subplots(figsize=(7.5, 4.8), constrained_layout=True)
    table = heading(name, recs) + "\ntimeout goodput / symphony goodput\n  %-9s" % "timeout"
    table += "".join(" %16s" % ("case %d" % (i + 1)) for i in range(len(groups))) + "\n"
    ratios = {}
    for i, (case, prs) in enumerate(groups):
        d = dict(prs)
        sym = d[SYMPHONY]["goodput_rps"] if SYMPHONY in d else None
        if sym is None:
            die("%s: case %s has no symphony point" % (name, case))
        xs, ys = [], []
        for p in tpols:
            r = d.get(p)
            if r:
                xs.append(timeout_pct(p))
                ys.append(ratio(r["goodput_rps"], sym))
                ratios[(i, p)] = ys[-1]
                rows.append([case, p, xs[-1], r["goodput_rps"], sym, ys[-1], r["batch_p50"], r["bad_rate"],
                             r["point"], r["version"], r["seed"]])
        ax.plot(xs, ys, marker="o", color=PALETTE[i], label="%s (symphony %.0f r/s)" % (case, sym))
    for p in tpols:
        table += "  %-9s" % ("%g%%" % timeout_pct(p)) + "".join(
            " %16s" % fmt(ratios.get((i, p)), "%.3f") for i in range(len(groups))) + "\n"
    table += "\n" + "".join("case %d: %s, symphony %.0f r/s\n" % (i + 1, c, dict(prs)[SYMPHONY]["goodput_rps"])
                            for i, (c, prs) in enumerate(groups))
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xlabel("timeout (% of the SLO)")
    ax.set_ylabel("timeout goodput / symphony goodput")
    ax.set_xticks(sorted({timeout_pct(p) for p in tpols}))
    rs = [r[5] for r in rows if r[5] is not None] + [1.0]
    ax.set_ylim(min(0.8, math.floor((min(rs) - 0.05) * 10) / 10), max(1.1, max(rs) + 0.05))
    ax.grid(alpha=0.3)
    ax.legend(loc="lower center", fontsize=8)
    ax.set_title("Timeout policy (TF-Serving) relative to symphony - %s" % provenance(recs), fontsize=10)
    finish(out, name, ["case", "policy", "timeout_pct_of_slo", "goodput_rps", "symphony_goodput_rps",
                       "ratio_to_symphony", "batch_p50", "bad_rate", "point", "version", "seed"], rows, fig, table)


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
    return {"point": d["point"], "policy": d["policy"], "goodput_rps": d["goodput_rps"],
            "version": d.get("version"), "seed": d.get("seed"),
            "ci95": d.get("goodput_ci95"), "by_seed": d.get("goodput_by_seed"),
            "worst_model": d.get("worst_model"), "worst_bad": d.get("worst_model_bad_rate"),
            "pair": workload_of(k) + (k["gpus_per_model"], k["slo_ms"], k["arrival"])}


def gamma_shape(arrival):
    m = re.fullmatch(r"gamma:([0-9.]+)", str(arrival))
    return float(m.group(1)) if m else str(arrival)


def median_panel(ax, labels, groups, xlabel):
    """Bars of the median ratio of each group, with its point count."""
    meds = [float(np.median(g)) if g else 0.0 for g in groups]
    x = np.arange(len(labels))
    ax.bar(x, meds, color=PALETTE[0], edgecolor="black", linewidth=0.4)
    for xi, m, g in zip(x, meds, groups):
        ax.text(xi, m, "%.2f" % m, ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30 if max(len(s) for s in labels) > 4 else 0,
                       ha="right" if max(len(s) for s in labels) > 4 else "center", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("median symphony / eager")
    ax.set_ylim(0, max(meds + [1.0]) * 1.15)
    ax.grid(axis="y", alpha=0.3)


def plot_synthetic_grid(name, out):
    recs, npoints = load_sweep(name, out, record=grid_record, partial=True)
    pairs = {}
    for r in recs:
        pairs.setdefault(r["pair"], {})[r["policy"]] = r
    rows, ratios, undefined, lone = [], [], 0, 0
    for key in sorted(pairs, key=lambda k: min(r["point"] for r in pairs[k].values())):
        s, e = pairs[key].get(SYMPHONY), pairs[key].get("eager")
        if not s or not e:
            lone += 1
            continue
        rt = s["goodput_rps"] / e["goodput_rps"] if e["goodput_rps"] > 0 else None
        if rt is None:
            undefined += 1
        else:
            ratios.append((key, rt))
        rows.append(list(key[:4]) + [gamma_shape(key[4]), s["goodput_rps"], e["goodput_rps"], rt,
                                     s["point"], e["point"], s["version"], s["seed"]])
    if not ratios:
        die("results/%s/results.jsonl has no complete symphony/eager pair yet (%d of %d points)"
            % (name, len(recs), npoints))
    v = np.array([rt for _, rt in ratios])
    done = "%d of %d points%s" % (len(recs), npoints, "" if len(recs) == npoints else " (partial: sweep not finished)")
    table = heading(name, recs, " - " + done)
    table += "symphony / eager goodput over %d pairs%s%s\n\n" % (
        len(v), ", %d pairs with eager goodput 0 left out" % undefined if undefined else "",
        ", %d points without their pair yet" % lone if lone else "")
    stats = [("count", "%d" % len(v)), ("median", "%.3f" % np.median(v)), ("mean", "%.3f" % v.mean()),
             ("p10", "%.3f" % np.percentile(v, 10)), ("p90", "%.3f" % np.percentile(v, 90)),
             ("min", "%.3f" % v.min()), ("max", "%.3f" % v.max()),
             ("ratio >= 1", "%.1f%%" % (100.0 * (v >= 1).mean()))]
    table += "".join("  %-12s %s\n" % s for s in stats)

    def groups_by(i, order=None):
        g = {}
        for key, rt in ratios:
            g.setdefault(key[i], []).append(rt)
        ks = order if order else sorted(g)
        return [k for k in ks if k in g], [g[k] for k in ks if k in g]

    model_order = []
    for key, _ in ratios:
        if key[0] not in model_order:
            model_order.append(key[0])
    panels = [("model", groups_by(0, model_order), str),
              ("gamma shape", groups_by(4, sorted({k[4] for k, _ in ratios}, key=gamma_shape)),
               lambda a: "%g" % gamma_shape(a)),
              ("SLO (ms)", groups_by(3), lambda a: "%g" % a),
              ("GPUs per model", groups_by(2), lambda a: "%g" % a),
              ("number of models", groups_by(1), lambda a: "%g" % a)]
    for title, (ks, gs), lab in panels:
        table += "\nmedian ratio by %s\n" % title
        table += "".join("  %-16s %6.3f  (%d pairs)\n" % (lab(k), np.median(g), len(g)) for k, g in zip(ks, gs))

    fig, axes = plt.subplots(2, 4, figsize=(18, 8.5), constrained_layout=True)
    # the x range of the distribution: the bulk of it (a few outliers far out would squash it)
    lo, hi = v.min(), min(v.max(), max(1.5, np.percentile(v, 99) * 1.1))
    beyond = int((v > hi).sum())
    note = "; %d pair%s beyond %.2f (max %.2f) not shown" % (beyond, "s" if beyond > 1 else "", hi, v.max()) \
        if beyond else ""
    ax = axes[0][0]
    ax.hist(v[v <= hi], bins=np.linspace(lo, hi, 41), color=PALETTE[0], edgecolor="black", linewidth=0.3)
    ax.axvline(1.0, color="red", linestyle="--", linewidth=1, label="ratio 1")
    ax.axvline(np.median(v), color="black", linestyle=":", linewidth=1.2, label="median %.3f" % np.median(v))
    ax.set_xlabel("goodput ratio symphony / eager")
    ax.set_ylabel("pairs")
    ax.set_title("Distribution of the ratio (%d pairs)" % len(v), fontsize=10)
    ax.legend(fontsize=8, title=note[2:] if note else None, title_fontsize=7)
    ax = axes[0][1]
    sv = np.sort(v)
    ax.step(sv, np.arange(1, len(sv) + 1) / len(sv), where="post", color=PALETTE[0])
    ax.set_xlim(lo, hi)
    ax.axvline(1.0, color="red", linestyle="--", linewidth=1)
    ax.set_xlabel("goodput ratio symphony / eager")
    ax.set_ylabel("fraction of pairs <= x")
    ax.set_title("CDF: %.1f%% of pairs have ratio >= 1" % (100.0 * (v >= 1).mean()), fontsize=10)
    ax.grid(alpha=0.3)
    for ax, (title, (ks, gs), lab) in zip([axes[0][2], axes[0][3], axes[1][0], axes[1][1], axes[1][2]], panels):
        median_panel(ax, [lab(k) for k in ks], gs, title)
        ax.set_title("Median ratio by %s" % title, fontsize=10)
    # the ratio against the load class: GPUs per model x SLO, as a heat map of medians
    ax = axes[1][3]
    gk, gs_ = groups_by(2)
    sk, _ = groups_by(3)
    cell = {}
    for key, rt in ratios:
        cell.setdefault((key[2], key[3]), []).append(rt)
    m = np.full((len(sk), len(gk)), np.nan)
    for i, s in enumerate(sk):
        for j, g in enumerate(gk):
            if (g, s) in cell:
                m[i, j] = np.median(cell[(g, s)])
    span = max(abs(np.nanmax(m) - 1), abs(np.nanmin(m) - 1), 0.05)
    im = ax.imshow(m, origin="lower", aspect="auto", cmap="RdBu", vmin=1 - span, vmax=1 + span)
    for i in range(len(sk)):
        for j in range(len(gk)):
            if not np.isnan(m[i, j]):
                ax.text(j, i, "%.2f" % m[i, j], ha="center", va="center", fontsize=7,
                        color="white" if abs(m[i, j] - 1) > 0.6 * span else "black")
    ax.set_xticks(range(len(gk)))
    ax.set_xticklabels(["%g" % g for g in gk], fontsize=8)
    ax.set_yticks(range(len(sk)))
    ax.set_yticklabels(["%g" % s for s in sk], fontsize=8)
    ax.set_xlabel("GPUs per model")
    ax.set_ylabel("SLO (ms)")
    ax.set_title("Median ratio by SLO and GPUs per model", fontsize=10)
    fig.colorbar(im, ax=ax, label="median symphony / eager (blue: symphony better)")
    fig.suptitle("Synthetic grid: goodput of symphony relative to eager - %s - %s" % (provenance(recs), done),
                 fontsize=12)
    finish(out, name, ["model", "num_models", "gpus_per_model", "slo_ms", "gamma_shape", "symphony_goodput_rps",
                       "eager_goodput_rps", "ratio_symphony_to_eager", "symphony_point", "eager_point", "version",
                       "seed"], rows, fig, table)


def short_case(label):
    """'A100 strong batching (29 models, ...)' -> 'A100 strong batching'."""
    return label.split(" (")[0]


def plot_zoo_goodput(name, out):
    recs, _ = load_sweep(name, out)
    groups, pols = sweep_table_rows(recs, "@case")
    cols = colors(pols)
    rows, table = [], heading(name, recs)
    fig, ax = plt.subplots(figsize=(15, 6), constrained_layout=True)
    width = 0.8 / len(pols)
    x = np.arange(len(groups))
    for case, prs in groups:
        sym = next((r["goodput_rps"] for p, r in prs if p == SYMPHONY), None)
        for p, r in prs:
            rows.append([case, p] + metric_row(r, sym) + [r["point"], r["version"], r["seed"]])
        table += "\n" + policy_block(case, prs)
    for j, p in enumerate(pols):
        ys = []
        for case, prs in groups:
            d = dict(prs)
            ys.append(ratio(d[p]["goodput_rps"], d[SYMPHONY]["goodput_rps"]) if p in d and SYMPHONY in d else 0)
        ax.bar(x - 0.4 + width * (j + 0.5), [y or 0 for y in ys], width, color=cols[p], label=p,
               edgecolor="black", linewidth=0.3)
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xticks(x)
    ax.set_xticklabels(["%s\n(symphony %.0f r/s)" % (wrap(c, 30), dict(prs)[SYMPHONY]["goodput_rps"])
                        for c, prs in groups], fontsize=8)
    ax.set_ylabel("goodput / symphony goodput")
    ax.set_ylim(0, None)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(ncol=1, fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0), title="policy")
    ax.set_title("Goodput on the model zoos, 64 GPUs, own SLOs, relative to symphony - %s" % provenance(recs),
                 fontsize=11)
    finish(out, name, ["case", "policy"] + METRICS + ["point", "version", "seed"], rows, fig, table)


def plot_min_gpus(name, out):
    cases = case_files(name, out, "plan-%d.json")
    allp = [d for _, d in cases]
    rows, table = [], heading(name, allp)
    hdr = ["case", "kind", "policy", "gpus", "more_than_max", "bad_rate", "simulations", "target_rate", "max_gpus",
           "version", "seed"]
    fig, axes = plt.subplots(1, len(cases), figsize=(6.2 * len(cases), 5.4), constrained_layout=True, squeeze=False)
    for ax, (case, d) in zip(axes[0], cases):
        try:
            an, pls, mx = d["analytic"], d["policies"], d.get("max_gpus")
        except KeyError as e:
            die("%s plan file lacks %s: run scripts/reproduce %s" % (case, e, name))
        table += "\n%s: %g r/s, at most %s GPUs\n  %-24s %6s %9s %6s\n" % (
            case, d.get("target_rate"), mx, "", "GPUs", "bad rate", "sims")
        for kind in ("staggered", "nexus"):
            g = an.get(kind + "_gpus")
            table += "  %-24s %6s\n" % ("analytic " + kind, fmt(g, "%d"))
            rows.append([case, "analytic", kind, g, None, None, None, d.get("target_rate"), mx, d.get("version"),
                         d.get("seed")])
        for p in pls:
            over = p["gpus"] < 0
            table += "  %-24s %6s %9s %6s\n" % (p["policy"], "> %s" % mx if over else p["gpus"],
                                              fmt(p.get("bad_rate"), "%.4f"), fmt(p.get("simulations"), "%d"))
            rows.append([case, "simulated", p["policy"], None if over else p["gpus"], int(over), p.get("bad_rate"),
                         p.get("simulations"), d.get("target_rate"), mx, d.get("version"), d.get("seed")])
        names = [p["policy"] for p in pls]
        vals = [p["gpus"] if p["gpus"] >= 0 else 0 for p in pls]
        top = max(vals + [an.get("staggered_gpus", 0) or 0, an.get("nexus_gpus", 0) or 0, 1])
        x = np.arange(len(names))
        cols = colors(names)
        bars = ax.bar(x, [v if v > 0 else top * 1.1 for v in vals], color=[cols[n] for n in names],
                      edgecolor="black", linewidth=0.4)
        for b, v in zip(bars, vals):
            if v <= 0:
                b.set_hatch("//")
                b.set_facecolor("white")
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), "%d" % v if v > 0 else "> %s" % mx,
                    ha="center", va="bottom", fontsize=7)
        for kind, style, col in (("staggered", (0, (6, 4)), "black"), ("nexus", (5, (6, 4)), "red")):
            g = an.get(kind + "_gpus")
            if g is not None and g > 0:
                ax.axhline(g, color=col, linestyle=style, linewidth=1.4, label="analytic %s: %d GPUs" % (kind, g))
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, top * 1.35)
        ax.set_ylabel("GPUs needed (<= 1% bad)")
        ax.set_title("%s: %g r/s" % (case, d.get("target_rate")), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("Fewest GPUs to serve the target rate, per policy - %s" % provenance(allp), fontsize=11)
    finish(out, name, hdr, rows, fig, table)


def lines_by_policy(ax, xs_by_pol, cols, xlabel, ylabel, title, categorical=None):
    for p, (xs, ys) in xs_by_pol.items():
        ax.plot(xs, ys, marker="o", markersize=4, color=cols[p], label=p, **line_style(p))
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
    """A text matrix: one row per rowlabel (written as shown[rowlabel]), one goodput column per policy."""
    shown = shown or {r: str(r) for r in rowlabels}
    w = max(9, max(len(p) for p in pols) + 1)
    lw = max(len(rowname), max(len(shown[r]) for r in rowlabels))
    t = "\n%s\n  %-*s" % (title, lw, rowname) + "".join(" %*s" % (w, p) for p in pols) + "\n"
    for rl in rowlabels:
        t += "  %-*s" % (lw, shown[rl]) + "".join(" %*s" % (w, fmt(cell(rl, p))) for p in pols) + "\n"
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
                series[p] = ([x for x, _ in pts], [r["goodput_rps"] for _, r in pts])
                for s, r in pts:
                    sym = idx.get((pop, arr, label_of(r["key"]["slo_ms"]), SYMPHONY))
                    rows.append([pop, arr, s, p] + metric_row(r, sym["goodput_rps"] if sym else None) +
                                [r["point"], r["version"], r["seed"]])
            ax = axes[i][j]
            lines_by_policy(ax, series, cols, "SLO (ms)", "goodput (r/s)", "popularity %s, arrival %s" % (pop, arr))
            ax.set_ylim(0, None)
            table += matrix_table("popularity %s, arrival %s" % (pop, arr), "SLO ms", slos, pols,
                                  lambda s, p: idx[(pop, arr, s, p)]["goodput_rps"] if (pop, arr, s, p) in idx
                                  else None)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Workload shape: 20 ResNet50-like models on 32 GPUs - %s" % provenance(recs), fontsize=11)
    finish(out, name, ["popularity", "arrival", "slo_ms", "policy"] + METRICS + ["point", "version", "seed"],
           rows, fig, table)


def plot_flat_top(name, out):
    cases = case_files(name, out, "loadcurve-%d.json")
    allc = [d for _, d in cases]
    rows, table = [], heading(name, allc)
    hdr = ["case", "policy", "load", "offered_rps", "goodput_rps", "bad_rate", "gpu_busy_fraction", "gpus_used",
           "batch_p50", "reference_rps", "version", "seed"]
    fig, axes = plt.subplots(len(cases), 2, figsize=(13, 4.8 * len(cases)), constrained_layout=True, squeeze=False)
    for (case, d), (ax1, ax2) in zip(cases, axes):
        ref = d.get("reference_rps")
        pols = []
        for p in d.get("points", []):
            if p["policy"] not in pols:
                pols.append(p["policy"])
        if not pols:
            die("%s: the loadcurve of %s has no points: run scripts/reproduce %s" % (name, case, name))
        cols = colors(pols)
        table += "\n%s (reference: symphony goodput %.0f r/s)\n  %-14s %12s %12s %12s %9s %10s %10s\n" % (
            case, ref, "policy", "peak r/s", "at load 1", "at load 2", "2 / peak", "busy at 1", "busy at 2")
        for pol in pols:
            pts = sorted((p for p in d["points"] if p["policy"] == pol), key=lambda p: p["load"])
            for p in pts:
                rows.append([case, pol, p["load"], p["offered_rps"], p["goodput_rps"], p.get("bad_rate"),
                             p.get("gpu_busy_fraction"), p.get("gpus_used"), p.get("batch_p50"), ref,
                             d.get("version"), d.get("seed")])
            xs = [p["offered_rps"] for p in pts]
            ax1.plot(xs, [p["goodput_rps"] for p in pts], marker="o", markersize=3, color=cols[pol], label=pol,
                     **line_style(pol))
            ax2.plot(xs, [100 * p["gpu_busy_fraction"] for p in pts], marker="o", markersize=3, color=cols[pol],
                     label=pol, **line_style(pol))
            at = {round(p["load"], 6): p for p in pts}
            peak = max(p["goodput_rps"] for p in pts)
            g1, g2 = get(at, 1.0, "goodput_rps"), get(at, 2.0, "goodput_rps")
            b1, b2 = get(at, 1.0, "gpu_busy_fraction"), get(at, 2.0, "gpu_busy_fraction")
            table += "  %-14s %12.0f %12s %12s %9s %10s %10s\n" % (
                pol, peak, fmt(g1), fmt(g2), fmt(ratio(g2, peak), "%.2f"),
                fmt(b1 * 100 if b1 is not None else None, "%.0f%%"), fmt(b2 * 100 if b2 is not None else None, "%.0f%%"))
        for ax in (ax1, ax2):
            if ref:
                ax.axvline(ref, color="gray", linestyle=":", linewidth=1)
                sec = ax.secondary_xaxis("top", functions=(lambda x, r=ref: x / r, lambda f, r=ref: f * r))
                sec.set_xlabel("load (fraction of symphony's goodput %.0f r/s)" % ref, fontsize=8)
            ax.set_xlabel("offered load (r/s)")
            ax.grid(alpha=0.3)
            ax.set_xlim(0, None)
            ax.set_ylim(0, None)
        ax1.plot([0, max(r[3] for r in rows)], [0, max(r[3] for r in rows)], color="lightgray", linewidth=0.8,
                 linestyle="--", label="goodput = offered")
        ax1.set_ylabel("goodput (r/s served within the SLO)")
        ax1.set_title("Goodput vs offered load: %s" % case, fontsize=10)
        ax2.set_ylabel("GPU busy (%)")
        ax2.set_ylim(0, 105)
        ax2.set_title("GPU busy fraction vs offered load", fontsize=10)
        ax1.legend(fontsize=8)
        ax2.legend(fontsize=8, loc="lower right")
    fig.suptitle("Flat-top behaviour - %s" % provenance(allc), fontsize=11)
    finish(out, name, hdr, rows, fig, table)


NETWORK_KEYS = ["ctrl_ms", "data_ms", "resp_ms", "tail_ms"]  # the network delays in the CSV


def plot_network(name, out):
    recs, _ = load_sweep(name, out)
    nets, slos, pols = (axis_values(recs, a) for a in ("@network", "slo_ms", "policy"))
    idx = by_key(recs, "@network", "slo_ms", "policy")
    cols = colors(pols)
    rows, table = [], heading(name, recs) + "goodput (r/s)\n"
    short = {n: n.split(":")[0] for n in nets}  # "RDMA-like: plan ..." -> "RDMA-like"
    if len(set(short.values())) < len(nets):
        short = {n: n for n in nets}
    ncol = 2 if len(slos) > 1 else 1
    nrow = (len(slos) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(7 * ncol, 4.6 * nrow), constrained_layout=True, squeeze=False)
    for k, slo in enumerate(slos):
        ax = axes[k // ncol][k % ncol]
        series = {}
        for p in pols:
            pts = [(i, idx[(n, slo, p)]) for i, n in enumerate(nets) if (n, slo, p) in idx]
            series[p] = ([i for i, _ in pts], [r["goodput_rps"] for _, r in pts])
            for i, r in pts:
                sym = idx.get((nets[i], slo, SYMPHONY))
                net = r["key"]["@network"].get("network", {})
                rows.append([nets[i]] + [net.get(nk) for nk in NETWORK_KEYS] + [float(slo), p] +
                            metric_row(r, sym["goodput_rps"] if sym else None) + [r["point"], r["version"], r["seed"]])
        lines_by_policy(ax, series, cols, "network setting", "goodput (r/s)",
                        "SLO %s ms" % slo, categorical=nets)
        ax.set_ylim(0, None)
        table += matrix_table("SLO %s ms" % slo, "network", nets, pols,
                              lambda n, p: idx[(n, slo, p)]["goodput_rps"] if (n, slo, p) in idx else None,
                              shown=short)
    for k in range(len(slos), nrow * ncol):
        axes[k // ncol][k % ncol].set_visible(False)
    axes[0][0].legend(fontsize=8)
    if any(short[n] != n for n in nets):
        table += "\nnetworks:\n" + "".join("  %s\n" % n for n in nets)
    fig.suptitle("Network delays: 20 ResNet50-like models on 32 GPUs - %s" % provenance(recs), fontsize=11)
    finish(out, name, ["network"] + NETWORK_KEYS + ["slo_ms", "policy"] + METRICS +
           ["point", "version", "seed"], rows, fig, table)


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


STUDIES = {
    "compare-policies": plot_compare_policies,
    "table2": plot_table2,
    "batching-effect": plot_batching_effect,
    "timeout": plot_timeout,
    "synthetic-grid": plot_synthetic_grid,
    "zoo-goodput": plot_zoo_goodput,
    "min-gpus": plot_min_gpus,
    "workload-shape": plot_workload_shape,
    "flat-top": plot_flat_top,
    "network": plot_network,
    "large-changing": plot_large_changing,
}


def main(argv):
    args = argv[1:]
    out = None
    if len(args) == 3 and args[1] == "--dir":
        out = os.path.abspath(args[2])
        args = args[:1]
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit(__doc__.strip().split("\n\n")[1] + "\n(studies: %s)" % ", ".join(sorted(STUDIES)))
    name = args[0]
    if name not in STUDIES:
        die("unknown study '%s' (known: %s)" % (name, ", ".join(sorted(STUDIES))))
    STUDIES[name](name, out or os.path.join(ROOT, "results", name))


if __name__ == "__main__":
    main(sys.argv)
