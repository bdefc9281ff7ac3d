"""Plots any sweep: `scripts/plot.py sweep RESULTS [options]` (see plot.py's docstring).

RESULTS is a results.jsonl written by `symphony sweep` (or a directory holding one). The axes
are the keys of the lines' "key" objects; --x picks the one on the x axis, --group the one
drawn as separate lines, --where fixes others, and every other axis with more than one value
gets a subplot of its own. The metric is any number in the lines (a dotted path such as
latency_ms.p99), with its 95% interval where the line has one (METRIC_ci95 beside it, or
{mean, ci95}, or a sim line's METRIC_mean and METRIC_ci95). Anything that does not match
(lines of two grids or versions, a --grid file whose axes differ, an unknown axis, value or
metric) is refused with exit status 2 and nothing written.
"""
import argparse
import csv
import io
import json
import math
import os
import sys
import textwrap

from studylib import label_of, paired_ratio

MAX_FACETS = 12
SKIP = {"key", "config", "provenance", "search", "by_model", "models", "point", "npoints", "seed",
        "replications", "grid_id"}  # not metrics


def refuse(msg):
    print("plot.py sweep: " + msg, file=sys.stderr)
    sys.exit(2)


def read_lines(path):
    """The results lines of path (a results.jsonl, or a directory holding one)."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.jsonl")
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        refuse("%s: %s" % (path, e.strerror))
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            if not isinstance(d, dict) or not isinstance(d.get("key"), dict) or "point" not in d:
                raise ValueError("not a sweep line (no key or point)")
        except ValueError as e:
            refuse("%s:%d: %s" % (path, n, e))
        lines.append(d)
    if not lines:
        refuse("%s: no results lines" % path)
    for what in ("grid_id", "version"):
        seen = sorted({str(d.get(what)) for d in lines})
        if len(seen) > 1:
            refuse("%s: lines of different %ss (%s): plot one sweep at a time" % (path, what, ", ".join(seen)))
    axes = list(lines[0]["key"])
    for d in lines:
        if sorted(d["key"]) != sorted(axes):
            refuse("%s: point %s has the axes %s, the first line %s" % (path, d["point"], sorted(d["key"]),
                                                                        sorted(axes)))
    return path, lines, axes


def axis_values(lines, axes):
    """{axis: [labels in the order they first appear]}."""
    vals = {a: [] for a in axes}
    for d in sorted(lines, key=lambda d: d["point"]):
        for a in axes:
            lab = label_of(d["key"][a])
            if lab not in vals[a]:
                vals[a].append(lab)
    return vals


def check_grid(path, grid_path, lines, axes):
    """Refuses a --grid file (a grid, or a study file with one) that is not the lines' grid."""
    try:
        with open(grid_path) as f:
            g = json.load(f)
    except (OSError, ValueError) as e:
        refuse("--grid %s: %s" % (grid_path, e))
    g = g.get("grid", g) if isinstance(g, dict) else None
    if not isinstance(g, dict) or not isinstance(g.get("axes"), dict):
        refuse("--grid %s: not a grid (no \"axes\" object)" % grid_path)
    name = lines[0].get("grid")
    if g.get("name") != name:
        refuse("%s holds grid '%s', --grid %s is '%s'" % (path, name, grid_path, g.get("name")))
    if sorted(g["axes"]) != sorted(axes):
        refuse("%s has the axes %s, --grid %s has %s" % (path, sorted(axes), grid_path, sorted(g["axes"])))
    npoints = 1
    for a, vs in g["axes"].items():
        labels = [label_of(v) for v in vs]
        npoints *= len(vs)
        for d in lines:
            if label_of(d["key"][a]) not in labels:
                refuse("point %s: %s = %s is not a value of the axis in --grid %s (%s)" % (
                    d["point"], a, label_of(d["key"][a]), grid_path, ", ".join(labels)))
    if lines[0].get("npoints") != npoints:
        refuse("%s: a grid of %s points, --grid %s makes %d" % (path, lines[0].get("npoints"), grid_path, npoints))


def metrics_of(d, prefix=""):
    """The dotted paths of the numbers in line d (what --metric may name)."""
    out = []
    for k, v in d.items():
        if k in SKIP or k.endswith("_ci95") or k.endswith("_by_seed") or (k.endswith("_mean") and k[:-5] in d):
            continue
        p = prefix + k
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            out.append(p)
        elif isinstance(v, dict) and ("ci95" in v or "by_seed" in v) and isinstance(v.get("mean"), (int, float)):
            out.append(p)  # {mean, ci95, by_seed}: a value over the seeds
        elif isinstance(v, dict):
            out += metrics_of(v, p + ".")
    return out


# axis labels with units: metrics and axes by name (a name not here is shown as it is)
LABELS = {
    "goodput_rps": "goodput (req/s)", "goodput_served_rps": "served within SLO (req/s)",
    "bad_rate": "bad rate (late or dropped, fraction)", "bad_rate_mean": "bad rate (fraction)",
    "gpu_busy_fraction": "GPU busy (fraction)", "gpus_used": "GPUs used", "upper_bound_rps": "upper bound (req/s)",
    "latency_ms.p50": "p50 latency (ms)", "latency_ms.p99": "p99 latency (ms)", "latency_ms.max": "max latency (ms)",
    "queueing_ms.p99": "p99 queueing (ms)", "at_goodput.batch_p50": "median batch at goodput",
    "at_goodput.batch_mean": "mean batch at goodput", "at_goodput.queueing_p99_ms": "p99 queueing at goodput (ms)",
    "batch_size.p50": "median batch", "slo_ms": "SLO (ms)", "gpus": "GPUs", "rate": "offered rate (req/s)",
    "duration_s": "duration (s)", "num_models": "models", "replications": "seeds",
}


def label(name):
    return LABELS.get(name, name)


# metrics whose interval is not METRIC_ci95
CI_KEY = {"goodput_rps": "goodput_ci95"}


def value(d, metric):
    """(mean, ci95 low, ci95 high) of metric in line d; the interval is None without one."""
    *parent_path, last = metric.split(".")
    parent = d
    for p in parent_path:
        parent = parent.get(p) if isinstance(parent, dict) else None
    if not isinstance(parent, dict) or last not in parent:
        return None
    v = parent[last]
    ci = None
    if isinstance(v, dict) and ("ci95" in v or "by_seed" in v):
        v, ci = v.get("mean"), v.get("ci95")
    elif isinstance(parent.get(last + "_mean"), (int, float)):  # sim lines: the mean over the seeds
        v, ci = parent[last + "_mean"], parent.get(last + "_ci95")
    else:  # (a goodput line's goodput_rps has its interval as goodput_ci95)
        ci = parent.get(last + "_ci95", parent.get(CI_KEY.get(last, "")))
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    lo, hi = (ci[0], ci[1]) if isinstance(ci, list) and len(ci) == 2 and None not in ci else (None, None)
    return float(v), lo, hi


def seed_values(d, metric):
    """The per-seed values of metric in line d (METRIC_by_seed, goodput_by_seed for goodput_rps), or
    [its value] for a one-seed line; None when the line has neither."""
    *parent_path, last = metric.split(".")
    parent = d
    for p in parent_path:
        parent = parent.get(p) if isinstance(parent, dict) else None
    if not isinstance(parent, dict):
        return None
    v = parent.get(last)
    if isinstance(v, dict) and isinstance(v.get("by_seed"), list):
        return v["by_seed"]
    for k in (last + "_by_seed", "goodput_by_seed" if last == "goodput_rps" else None):
        if k and isinstance(parent.get(k), list):
            return parent[k]
    got = value(d, metric)
    return [got[0]] if got and (d.get("replications") or 1) == 1 else None


def ratio_lines(lines, axis, num, den, metric):
    """Lines of NUM over DEN along `axis`: each NUM line paired with the DEN line of the same other
    axes, its metric the mean of the per-seed ratios (the same seed gives both the same arrivals)
    with its 95% interval, under the key "ratio"."""
    others = {}
    for d in lines:
        k = json.dumps({a: v for a, v in d["key"].items() if a != axis}, sort_keys=True)
        others.setdefault(k, {})[label_of(d["key"][axis])] = d
    out = []
    for k, by in others.items():
        if num not in by or den not in by:
            continue
        a, b = seed_values(by[num], metric), seed_values(by[den], metric)
        r = paired_ratio(a, b) if a and b else None
        d = dict(by[num])
        d["ratio"] = {"mean": r[0], "ci95": r[1]} if r else None
        out.append(d)
    return out


def default_metric(lines):
    first = lines[0]
    for m in ("goodput_rps", "goodput_served_rps", "bad_rate"):
        if value(first, m) is not None:
            return m
    refuse("no default metric in the lines: give --metric (see --list)")


def as_number(label):
    try:
        x = float(label)
        return x if math.isfinite(x) else None
    except ValueError:
        return None


def main(argv, write_atomic, save_fig, plt, palette):
    ap = argparse.ArgumentParser(prog="plot.py sweep", description="Plots any sweep's results.")
    ap.add_argument("results", help="a results.jsonl, or the directory of a sweep")
    ap.add_argument("--grid", help="the grid (or study) file: refuse results that are not its points")
    ap.add_argument("--x", help="the axis on the x axis")
    ap.add_argument("--metric", help="a number of the lines, e.g. goodput_rps, bad_rate, latency_ms.p99 "
                    "(default: goodput_rps, or goodput_served_rps for sim sweeps)")
    ap.add_argument("--group", help="the axis drawn as separate lines")
    ap.add_argument("--where", action="append", default=[], metavar="AXIS=LABEL", help="keep one value of an axis")
    ap.add_argument("--out", help="the figure, .png, .pdf or .svg (default: beside RESULTS, sweep-X-METRIC.png); "
                    "the CSV goes beside it")
    ap.add_argument("--ratio", metavar="NUM/DEN", help="plot the metric of one value of --ratio-axis over another's, "
                    "e.g. symphony/eager: the mean of the per-seed ratios with its interval")
    ap.add_argument("--ratio-axis", default="policy", help="the axis --ratio's values belong to (default policy)")
    ap.add_argument("--list", action="store_true", help="print the axes, their values and the metrics, and exit")
    a = ap.parse_args(argv)
    path, lines, axes = read_lines(a.results)
    if a.grid:
        check_grid(path, a.grid, lines, axes)
    vals = axis_values(lines, axes)
    npoints = lines[0].get("npoints")
    metrics = metrics_of(lines[0])
    if a.list:
        print("grid %s: %d of %s points, symphony %s @%s" % (lines[0].get("grid"), len(lines), npoints,
                                                             lines[0].get("version"), lines[0].get("commit")))
        for ax in axes:
            print("  axis %s: %s" % (ax, ", ".join(vals[ax])))
        print("  metrics: " + ", ".join(metrics))
        return
    if not a.x:
        refuse("give --x AXIS (axes: %s)" % ", ".join(axes))
    for name, ax in (("--x", a.x), ("--group", a.group)):
        if ax is not None and ax not in axes:
            refuse("%s %s: not an axis of the grid (axes: %s)" % (name, ax, ", ".join(axes)))
    if a.group == a.x:
        refuse("--group and --x name the same axis")
    where = {}
    for w in a.where:
        ax, sep, lab = w.partition("=")
        if not sep or ax not in axes:
            refuse("--where %s: expected AXIS=LABEL with an axis of the grid (%s)" % (w, ", ".join(axes)))
        if lab not in vals[ax]:
            refuse("--where %s: %s has the values %s" % (w, ax, ", ".join(vals[ax])))
        where[ax] = lab
    metric = a.metric or default_metric(lines)
    if value(lines[0], metric) is None:
        refuse("--metric %s: not a number of the lines (metrics: %s)" % (metric, ", ".join(metrics[:40])))
    if npoints and len(lines) < npoints:
        print("plot.py sweep: warning: %d of the grid's %d points are present" % (len(lines), npoints),
              file=sys.stderr)
    keep = [d for d in lines if all(label_of(d["key"][ax]) == lab for ax, lab in where.items())]
    ylabel = label(metric)
    shown_metric = metric
    if a.ratio:
        num, sep, den = a.ratio.partition("/")
        if not sep or a.ratio_axis not in axes:
            refuse("--ratio %s: expected NUM/DEN, two values of --ratio-axis %s (axes: %s)"
                   % (a.ratio, a.ratio_axis, ", ".join(axes)))
        for v in (num, den):
            if v not in vals[a.ratio_axis]:
                refuse("--ratio %s: %s is not a value of %s (%s)" % (a.ratio, v, a.ratio_axis,
                                                                 ", ".join(vals[a.ratio_axis])))
        if a.ratio_axis in (a.x, a.group) or a.ratio_axis in where:
            refuse("--ratio's axis %s cannot also be --x, --group or --where" % a.ratio_axis)
        keep = [d for d in ratio_lines(keep, a.ratio_axis, num, den, metric) if d["ratio"]]
        if not keep:
            refuse("--ratio %s: no point has both %s and %s with %s" % (a.ratio, num, den, metric))
        # a ratio has no unit: the metric's name without its "(req/s)"
        ylabel = "%s, %s / %s" % (label(metric).split(" (")[0], num, den)
        shown_metric = "%s %s/%s" % (metric, num, den)
        metric = "ratio"
        vals[a.ratio_axis] = [num]
    facet_axes = [ax for ax in axes if ax not in (a.x, a.group) and ax not in where and len(vals[ax]) > 1]
    facets = []
    for d in sorted(keep, key=lambda d: d["point"]):
        f = ", ".join("%s=%s" % (ax, label_of(d["key"][ax])) for ax in facet_axes)
        if f not in facets:
            facets.append(f)
    if len(facets) > MAX_FACETS:
        refuse("%d subplots (one per value of %s): fix some with --where AXIS=LABEL, or use them as --group"
               % (len(facets), ", ".join(facet_axes)))
    numeric = all(as_number(lab) is not None for lab in vals[a.x])
    groups = vals[a.group] if a.group else [""]
    rows = []
    for d in keep:
        f = ", ".join("%s=%s" % (ax, label_of(d["key"][ax])) for ax in facet_axes)
        g = label_of(d["key"][a.group]) if a.group else ""
        mean, lo, hi = value(d, metric) or (None, None, None)
        rows.append([f, g, label_of(d["key"][a.x]), mean, lo, hi, d.get("replications") or 1, d["point"],
                     d.get("version"), d.get("commit")])
    xorder = {lab: i for i, lab in enumerate(vals[a.x])}
    rows.sort(key=lambda r: (facets.index(r[0]), groups.index(r[1]),
                             as_number(r[2]) if numeric else xorder[r[2]]))
    seeds = sorted({r[6] for r in rows})
    prov = "symphony %s @%s" % (lines[0].get("version"), lines[0].get("commit"))
    title = "%s: %s against %s (%s, %s seed%s)" % (lines[0].get("grid"), shown_metric, a.x, prov,
                                                   "/".join(str(s) for s in seeds), "" if seeds == [1] else "s")
    ncol = min(3, len(facets))
    nrow = (len(facets) + ncol - 1) // ncol
    # facets share the y axis within a row, so that their values compare by eye
    fig, axs = plt.subplots(nrow, ncol, figsize=(5.6 * ncol, 4.4 * nrow), constrained_layout=True, squeeze=False,
                            sharey="row")
    for k, f in enumerate(facets):
        ax = axs[k // ncol][k % ncol]
        for gi, g in enumerate(groups):
            pts = [r for r in rows if r[0] == f and r[1] == g and r[3] is not None]
            if not pts:
                continue
            xs = [as_number(r[2]) if numeric else xorder[r[2]] for r in pts]
            ys = [r[3] for r in pts]
            err = None
            if any(r[4] is not None for r in pts):
                err = [[r[3] - r[4] if r[4] is not None else 0 for r in pts],
                       [r[5] - r[3] if r[5] is not None else 0 for r in pts]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color=palette[gi % len(palette)],
                        label=("%s=%s" % (a.group, g)) if a.group else metric)
        if not numeric:
            ax.set_xticks(range(len(vals[a.x])))
            ax.set_xticklabels(vals[a.x], rotation=30 if len(vals[a.x]) > 4 else 0, fontsize=8)
        ax.set_xlabel(label(a.x))
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if f:
            ax.set_title(f, fontsize=9)
        if a.group:
            ax.legend(fontsize=8)
    for k in range(len(facets), nrow * ncol):
        axs[k // ncol][k % ncol].set_visible(False)
    # about 11 characters of a 10-point title per inch of width: wrapped, it is never cut off
    fig.suptitle(textwrap.fill(title, int(11 * 5.6 * ncol)), fontsize=10)
    out = a.out or os.path.join(os.path.dirname(path), "sweep-%s-%s.png" % (a.x.lstrip("@"), metric))
    if not out.endswith((".png", ".pdf", ".svg")):
        refuse("--out %s: the figure's name must end in .png, .pdf or .svg" % out)
    header = ["facet", "group", "x", "mean", "ci_low", "ci_high", "seeds", "point", "version", "commit"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    csv_path = out[:-4] + ".csv"
    write_atomic(csv_path, buf.getvalue())
    save_fig(fig, out)
    print(title)
    for r in rows:
        ci = "" if r[4] is None else "  [%.6g, %.6g]" % (r[4], r[5])
        print("  %-30s %-20s %-12s %s%s" % (r[0][:30], r[1][:20], r[2][:12], "%.6g" % r[3] if r[3] is not None else "-",
                                            ci))
    print("plot.py sweep: wrote %s and %s" % (out, csv_path), file=sys.stderr)
