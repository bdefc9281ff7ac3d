"""Shared helpers of scripts/plot.py and scripts/report.py (Python's standard library only).

- 95% intervals: Student t on the per-seed values, as the C side computes goodput_ci95
  (mean +- t(0.975, n-1) s / sqrt(n)); paired ratios of two policies run on the same seeds
  (the same seed gives the same arrivals), as the mean of the per-seed ratios with its interval;
- formatting "5455 +- 30" (the table form) and "seeds 1-5";
- the papers' numbers (experiments/paper-values.json);
- reading a sweep's results.jsonl into slim records, with each point's provenance
  (version, commit, seed, replications) and a signature of its configuration, so that the
  same case can be found in another study (an ablation) whatever its axes are called.
"""
import hashlib
import json
import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPER_VALUES = os.path.join(ROOT, "experiments", "paper-values.json")
PM = "\u00b1"  # the plus-minus sign of the tables
LOOKAHEAD = "symphony"  # look-ahead deferral, the default since issue 27
PAPER_RULE = "symphony:lookahead=off"  # the papers' rule (Algorithm 1), beside it in the studies that compare
RULES = (LOOKAHEAD, PAPER_RULE)
RULE_NAMES = {LOOKAHEAD: "look-ahead", PAPER_RULE: "paper's rule"}

# t(0.975, df) for df = 1..30; beyond, the Cornish-Fisher expansion around z = 1.96
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def t975(df):
    if df < 1:
        raise ValueError("t quantile for df < 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4.0 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96.0 * df * df)


def mean_ci(xs):
    """(mean, [lo, hi]) of the values, the interval None for fewer than 2 values."""
    xs = [float(x) for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, None
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    h = t975(len(xs) - 1) * s / math.sqrt(len(xs))
    return m, [m - h, m + h]


def paired_ratio(num, den):
    """Ratio of two per-seed lists (same seeds, same order): (mean of num_i/den_i, [lo, hi] or
    None, n). None when the lists differ in length or a denominator is 0."""
    if not num or not den or len(num) != len(den) or any(not d for d in den):
        return None
    m, ci = mean_ci([a / b for a, b in zip(num, den)])
    return m, ci, len(num)


def half(ci):
    return None if not ci else (ci[1] - ci[0]) / 2.0


def pm(mean, ci, spec="%.0f", none="-"):
    """'5455 +- 30' (mean and the half-width of its 95% interval), or '5455' without one."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return none
    if not ci:
        return spec % mean
    return "%s %s %s" % (spec % mean, PM, spec % half(ci))


def seeds_text(seed, n):
    """'seeds 1-5', 'seed 1'."""
    if seed is None:
        return "seed ?"
    n = n or 1
    return "seed %d" % seed if n == 1 else "seeds %d-%d" % (seed, seed + n - 1)


def by_seed(rec, field="goodput_by_seed", mean_field="goodput_rps"):
    """A result's per-seed values (a one-seed result: its value)."""
    v = rec.get(field)
    if isinstance(v, list) and v:
        return [float(x) for x in v]
    m = rec.get(mean_field)
    return [float(m)] if m is not None else []


def request_median_batch(hist):
    """The median batch size over requests (each batch weighted by its size) from a
    {"size": batches} histogram: the batch size the median request ran in."""
    if not hist:
        return None
    items = sorted((int(k), int(v)) for k, v in hist.items())
    total = sum(b * c for b, c in items)
    if total == 0:
        return None
    seen = 0
    for b, c in items:
        seen += b * c
        if seen * 2 >= total:
            return b
    return items[-1][0]


def share_of_requests_at_least(hist, size):
    """Fraction of requests that ran in batches of at least size."""
    if not hist:
        return None
    items = [(int(k), int(v)) for k, v in hist.items()]
    total = sum(b * c for b, c in items)
    return sum(b * c for b, c in items if b >= size) / total if total else None


def interp(xs, ys, x):
    """Linear interpolation of y at x over sorted xs (None outside their range)."""
    pts = sorted(zip(xs, ys))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


# ---------------------------------------------------------------- the papers' numbers

def load_paper_values(path=PAPER_VALUES):
    """(papers, items, {value id: value}) of experiments/paper-values.json; each value gets
    its item's id, paper and place under "item", "paper" and "where"."""
    with open(path) as f:
        d = json.load(f)
    by_id = {}
    for it in d["items"]:
        for v in it.get("values", []):
            if v["id"] in by_id:
                raise ValueError("%s: value id %s twice" % (path, v["id"]))
            v.setdefault("paper", it["paper"])
            v.setdefault("where", it["where"])
            v["item"] = it["id"]
            by_id[v["id"]] = v
    return d["papers"], d["items"], by_id


_PV = None


def paper(value_id):
    """One value of experiments/paper-values.json (loaded once), or None if there is none."""
    global _PV
    if _PV is None:
        try:
            _PV = load_paper_values()[2]
        except (OSError, ValueError, KeyError):
            _PV = {}
    return _PV.get(value_id)


# ---------------------------------------------------------------- sweeps

# configuration keys that are not part of the case: what an ablation varies, the rate a
# goodput result echoes, and the seed count
NOT_THE_CASE = ("rate", "policy", "criterion", "drop", "send_ahead", "replications")


def signature(config):
    """A short fingerprint of a configuration without NOT_THE_CASE: two results with the same
    signature ran the same workload on the same cluster."""
    c = {k: v for k, v in (config or {}).items() if k not in NOT_THE_CASE}
    return hashlib.sha1(json.dumps(c, sort_keys=True).encode()).hexdigest()[:16]


def policy_name(p):
    """A policy as the study files name it: the C side writes the papers' rule, `symphony:lookahead=off`,
    back as `symphony:lookahead=false` (plan, loadcurve and the sweep lines' policy field)."""
    if isinstance(p, str) and p.startswith("symphony:"):
        return p.replace("lookahead=false", "lookahead=off").replace("lookahead=0", "lookahead=off")
    return p


def study_file(name):
    """experiments/NAME.json as an object, or None when it is missing or not valid JSON."""
    try:
        with open(os.path.join(ROOT, "experiments", name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def shown(p):
    """A policy's name in a figure's legend or a table: 'symphony (paper's rule)' for the papers' rule."""
    return "symphony (paper's rule)" if policy_name(p) == PAPER_RULE else p


def quantile(xs, q):
    """The q-th percentile (0-100) of the values, interpolated between order statistics (numpy's default)."""
    xs = sorted(float(x) for x in xs)
    if not xs:
        return None
    k = (len(xs) - 1) * q / 100.0
    f = int(math.floor(k))
    return xs[f] if f == k else xs[f] + (xs[f + 1] - xs[f]) * (k - f)


def ratio_summary(v):
    """The summary of a distribution of ratios (symphony/eager over the grid's pairs): count, median, mean, p10,
    p90, min, max and the shares at or above 0.95, 1, 1.5 and 2."""
    v = [float(x) for x in v]
    if not v:
        return None
    n = float(len(v))
    return {"count": len(v), "median": quantile(v, 50), "mean": sum(v) / n, "p10": quantile(v, 10),
            "p90": quantile(v, 90), "min": min(v), "max": max(v), "share_ge_0.95": sum(x >= 0.95 for x in v) / n,
            "share_ge_1": sum(x >= 1 for x in v) / n, "share_ge_1.5": sum(x >= 1.5 for x in v) / n,
            "share_ge_2": sum(x >= 2 for x in v) / n}


def label_of(v):
    """The label of an axis value: an @axis object's "label", else its text."""
    if isinstance(v, dict):
        return str(v["label"]) if "label" in v else json.dumps(v, sort_keys=True)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _get(d, *path):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


def sweep_record(d):
    """The slim record of a sweep line that the plots and the report use."""
    cfg = d.get("config") or {}
    key = d["key"]
    labels = {a: label_of(v) for a, v in key.items()}
    # the series a point belongs to: its @policy label where the grid has one, else its policy
    series = labels.get("@policy", labels.get("policy", d.get("policy")))
    ci = d.get("goodput_ci95")
    return {
        "point": d["point"], "npoints": d.get("npoints"), "key": key, "labels": labels,
        "policy": policy_name(d.get("policy")), "series": policy_name(series),
        "version": d.get("version"), "commit": d.get("commit"), "seed": d.get("seed"),
        "replications": d.get("replications") or 1,
        "goodput_rps": d.get("goodput_rps"), "ci95": list(ci) if ci else None,
        "by_seed": by_seed(d), "upper_bound_rps": d.get("upper_bound_rps"),
        "bound_rps": d.get("bound_rps"), "goodput_of_bound": d.get("goodput_of_bound"),
        "bad_rate": d.get("bad_rate"), "batch_p50": _get(d, "batch_size", "p50"),
        "batch_mean": _get(d, "batch_size", "mean"), "batch_hist": _get(d, "batch_size", "histogram"),
        "queueing_p50_ms": _get(d, "queueing_ms", "p50"), "queueing_p99_ms": _get(d, "queueing_ms", "p99"),
        "latency_p99_ms": _get(d, "latency_ms", "p99"), "gpu_busy_fraction": d.get("gpu_busy_fraction"),
        "worst_model": d.get("worst_model"), "worst_model_bad_rate": d.get("worst_model_bad_rate"),
        "slo_ms": cfg.get("slo_ms"), "gpus": cfg.get("gpus"), "models": cfg.get("models"),
        "criterion": cfg.get("criterion"), "drop": cfg.get("drop"), "send_ahead": cfg.get("send_ahead"),
        "network": cfg.get("network"), "sig": signature(cfg),
    }


class SweepError(Exception):
    pass


def read_sweep(path, record=sweep_record):
    """(records sorted by point, npoints, skipped) of a results.jsonl: a line cut short at the
    end (still being written) is skipped and counted; a bad line before the last is an error."""
    points, npoints, bad, skipped = {}, None, None, 0
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            if bad:
                raise SweepError("%s:%d: not a JSON line (%s)" % (path, bad[0], bad[1]))
            try:
                d = json.loads(line)
                n = d["npoints"]
                rec = record(d)
            except (ValueError, KeyError, TypeError) as e:
                bad = (lineno, e)
                continue
            if npoints not in (None, n):
                raise SweepError("%s: lines of grids of %d and %d points" % (path, npoints, n))
            npoints = n
            points[rec["point"]] = rec
    if bad:
        skipped = 1
    return [points[k] for k in sorted(points)], npoints, skipped
