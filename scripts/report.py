#!/usr/bin/env python3
"""Writes docs/reproduction.md: every number the two Symphony papers state in their text
beside this project's measurement of the same quantity, from the studies' results.

usage: scripts/report.py [--results DIR] [--out FILE] [--allow-missing]
       (or scripts/reproduce report ...; scripts/reproduce all runs every study first)

The papers' numbers come from experiments/paper-values.json (each with its section,
table or figure); ours come only from the result files under results/ (symphony sweep
lines, plan, loadcurve and sim JSON), never from this script: every number printed
names the study, the commit and the seeds it came from. For each value the report
gives the paper's number, ours (mean over the seeds with its 95% interval), the ratio
ours/paper and, for every gap over 10%, the rows of the ablation studies that ran the
same case with one thing changed (the goodput criterion, lazy against early drop,
send-ahead, Clockwork's variants, the model mix), so that the cause is shown by a run
rather than argued. An ablation row is found by the case's configuration (its
signature: the resolved config less the policy, criterion, drop, send_ahead, rate and
replications), so it needs no knowledge of the ablation's axes: a study
ablation-clockwork (whose points vary the policy string) is picked up as soon as its
results exist.

When a study's results are missing (or a sweep is unfinished) the script refuses,
naming each such study and the command that computes it; --allow-missing writes the
report anyway, with those values marked "not run". Python's standard library only.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studylib import (PM, ROOT, SweepError, interp, label_of, load_paper_values, mean_ci, study_file,  # noqa: E402
                      paired_ratio, policy_name, read_sweep, request_median_batch, seeds_text,
                      share_of_requests_at_least, sweep_record)

GAP = 0.10  # a ratio ours/paper further than this from 1 is a gap
# Two symphonies: look-ahead deferral (`symphony`, the default since issue 27) and the papers' rule
# (`symphony:lookahead=off`, Algorithm 1), which the papers measured. Every quantity that involves
# symphony is computed for both (build(R, sym)): the main column of the report is the papers' rule, the
# look-ahead column beside it the default.
LOOKAHEAD = "symphony"
PAPER_RULE = "symphony:lookahead=off"
SYMPHONY = LOOKAHEAD  # the policy named `symphony` (look-ahead); the item functions take the one they use
SYMPHONIES = (PAPER_RULE, LOOKAHEAD)
SYM_NAMES = {PAPER_RULE: "the papers' rule", LOOKAHEAD: "look-ahead"}
# issue 27's "Done when" on the synthetic grid, for look-ahead (experiments/synthetic-grid.json's
# "issue" object overrides them where it has one)
GRID_ISSUE = {"min_share_095": 0.99, "min_median": 1.0}
BASELINES_LATER = ["clockwork", "nexus", "shepherd"]  # the later paper's baselines
BASELINES_EARLIER = ["clockwork", "nexus"]  # the earlier paper measured no Shepherd

# The studies the report reads, cheapest first (the order scripts/reproduce all runs them in).
STUDIES = ["table2", "timeout", "compare-policies", "batching-effect", "flat-top", "ablation-drop", "gpu-scaling",
           "large-changing", "ablation-clockwork", "zoo-goodput", "ablation-criterion", "min-gpus", "workload-shape",
           "network", "synthetic-grid-spread", "synthetic-grid"]
# The Clockwork ablation: its points vary the policy string (clockwork and its variants).
ABLATION_CLOCKWORK = "ablation-clockwork"


def studies_for_all():
    """The studies scripts/reproduce all runs, cheapest first (then those of the sections on Nexus and the
    urgency scheduler and on look-ahead deferral that have a study file)."""
    import report_lookahead  # noqa: E402
    import report_others  # noqa: E402
    return list(STUDIES) + [n for n in report_others.STUDIES + report_lookahead.STUDIES if study_file(n)]


# ---------------------------------------------------------------- results

class Missing(Exception):
    """A study's results are not there (or not complete)."""

    def __init__(self, study, why):
        super().__init__("%s: %s" % (study, why))
        self.study, self.why = study, why


def rel(path):
    """A path relative to the repository where it is inside it, else absolute."""
    r = os.path.relpath(path, ROOT)
    return os.path.abspath(path) if r.startswith("..") else r


def commit_of(d):
    return d.get("commit") or "?"


class Results:
    """The result files of every study, read on demand, with their provenance and checks."""

    def __init__(self, root):
        self.root = root
        self.sweeps, self.files, self.missing, self.checks, self.used = {}, {}, {}, {}, []
        self.item_missing = {}  # {study: Missing} of the items that could not be computed from its results

    def _use(self, name):
        if name not in self.used:
            self.used.append(name)

    def _check_seeds(self, name, got):
        """A comparison study's results with fewer seeds than its study file asks for are flagged."""
        st = study_file(name) or {}
        want = None
        if st.get("run") == "sweep":
            want = st.get("grid", {}).get("base", {}).get("replications")
        elif st.get("cases"):
            want = max((c.get("config", {}).get("replications") or 1) for c in st["cases"])
        if want and got and min(got) < want:
            self.checks.setdefault(name, []).append(
                "ran with %d seed%s; experiments/%s.json asks for %d" % (min(got), "s" if min(got) > 1 else "", name,
                                                                         want))

    def sweep(self, name):
        """The study's sweep records (complete), or Missing."""
        if name in self.sweeps:
            return self.sweeps[name]
        if name in self.missing:
            raise self.missing[name]
        path = os.path.join(self.root, name, "results.jsonl")
        try:
            if not os.path.exists(path):
                raise Missing(name, "no %s" % rel(path))
            try:
                recs, npoints, _ = read_sweep(path, sweep_record)
            except SweepError as e:
                raise Missing(name, str(e))
            if not recs or len(recs) < npoints:
                raise Missing(name, "%d of %d points (unfinished; it resumes)" % (len(recs), npoints or 0))
        except Missing as e:
            self.missing[name] = e
            raise
        st = study_file(name)
        gpath = os.path.join(self.root, name, "grid.json")
        if st and os.path.exists(gpath):
            with open(gpath) as f:
                if json.load(f) != st.get("grid"):
                    self.checks.setdefault(name, []).append(
                        "results are of a grid other than experiments/%s.json's (rerun to refresh)" % name)
        self._check_seeds(name, [r["replications"] for r in recs])
        if st and PAPER_RULE in json.dumps(st.get("grid")) and not any(r["series"] == PAPER_RULE for r in recs):
            self.checks.setdefault(name, []).append(
                "no %s points, which experiments/%s.json runs: these results predate the side-by-side (issue 27), "
                "and their `symphony` may be the papers' rule (look-ahead became the default at 70cebae)"
                % (PAPER_RULE, name))
        for r in recs:
            r["_study"] = name
        self.sweeps[name] = recs
        self._use(name)
        return recs

    def cases(self, name, pattern):
        """[(case name, JSON)] of a plan/loadcurve/sim study, or Missing."""
        if name in self.files:
            return self.files[name]
        if name in self.missing:
            raise self.missing[name]
        st = study_file(name) or {}
        n = len(st.get("cases", []))
        out = []
        try:
            if n == 0:
                raise Missing(name, "no study file experiments/%s.json with cases" % name)
            for i in range(n):
                path = os.path.join(self.root, name, pattern % i)
                if not os.path.exists(path):
                    raise Missing(name, "no %s" % rel(path))
                with open(path) as f:
                    try:
                        d = json.load(f)
                    except ValueError as e:
                        raise Missing(name, "%s: not valid JSON (%s)" % (path, e))
                cpath = os.path.join(self.root, name, "case-%d.config.json" % i)
                if os.path.exists(cpath):
                    with open(cpath) as f:
                        if json.load(f) != st["cases"][i]["config"]:
                            self.checks.setdefault(name, []).append(
                                "case %d ran a config other than experiments/%s.json's (rerun to refresh)" % (i, name))
                out.append((st["cases"][i].get("name", "case %d" % i), d))
        except Missing as e:
            self.missing[name] = e
            raise
        self._check_seeds(name, [d.get("replications") or 1 for _, d in out])
        ran = {policy_name(p.get("policy")) for _, d in out for p in (d.get("policies") or d.get("points") or [])
               if isinstance(p, dict)}
        if PAPER_RULE in (st.get("policies") or []) and ran and PAPER_RULE not in ran:
            self.checks.setdefault(name, []).append(
                "no %s results, which experiments/%s.json runs: these results predate the side-by-side (issue 27), "
                "and their `symphony` may be the papers' rule (look-ahead became the default at 70cebae)"
                % (PAPER_RULE, name))
        self.files[name] = out
        self._use(name)
        return out

    def has(self, name):
        try:
            self.sweep(name)
            return True
        except Missing:
            return False

    def find(self, name, **labels):
        """The one record of a sweep study whose axis labels match (an axis named with a leading
        '@' is passed as at_NAME)."""
        want = {(k[3:] and "@" + k[3:]) if k.startswith("at_") else k: v for k, v in labels.items()}
        hits = [r for r in self.sweep(name) if all(match_label(r, a, v, exact=True) for a, v in want.items())]
        if not hits:
            hits = [r for r in self.sweep(name) if all(match_label(r, a, v) for a, v in want.items())]
        if len(hits) != 1:
            raise Missing(name, "%d points match %s (the study file changed?)" % (len(hits), want))
        return hits[0]

    def select(self, name, pred):
        return [r for r in self.sweep(name) if pred(r)]


def match_label(r, axis, v, exact=False):
    if axis == "policy":
        return r["series"] == v or (r["policy"] == v and "@policy" not in r["labels"])
    lab = r["labels"].get(axis)
    if lab is None:
        return False
    # an @axis value is named by its label or the label's start ("A100 all" for "A100 all (37 models)")
    return lab == v or (not exact and axis.startswith("@") and lab.startswith(v))


# ---------------------------------------------------------------- numbers with provenance

def src_of(recs, study=None):
    """'table2 @87af1ed9cdcc, seeds 1-5, points 0/4'."""
    recs = [r for r in recs if r]
    by = {}
    for r in recs:
        st = r.get("_study") or study or "?"
        by.setdefault((st, commit_of(r), seeds_text(r.get("seed"), r.get("replications"))), []).append(
            str(r.get("point", "")))
    return "; ".join("%s @%s, %s, point%s %s" % (st, c, s, "s" if len(p) > 1 else "", "/".join(p))
                     for (st, c, s), p in by.items())


class Num:
    """A value of ours: mean, its 95% interval (or None), where it came from."""

    def __init__(self, mean, ci=None, src="", note=""):
        self.mean, self.ci, self.src, self.note = mean, ci, src, note

    def text(self, spec):
        if self.mean is None:
            return "-"
        if spec == "%.3g":  # three significant digits of the mean, the interval to the same decimals
            d = 0 if self.mean == 0 else max(0, 2 - int(math.floor(math.log10(abs(self.mean)))))
            spec = "%%.%df" % min(d, 6)
        if not self.ci:
            return spec % self.mean
        return "%s %s %s" % (spec % self.mean, PM, spec % ((self.ci[1] - self.ci[0]) / 2))


class Rng:
    """A range of ours over several values (label, Num): its smallest and largest."""

    def __init__(self, items, note=""):
        self.items = [(lab, n) for lab, n in items if n is not None and n.mean is not None]
        self.note = note
        self.lo = min(self.items, key=lambda t: t[1].mean) if self.items else None
        self.hi = max(self.items, key=lambda t: t[1].mean) if self.items else None
        self.src = "; ".join(sorted({n.src for _, n in self.items}))

    @property
    def mean(self):
        return None if not self.items else math.sqrt(abs(self.lo[1].mean * self.hi[1].mean))

    def text(self, spec):
        if not self.items:
            return "-"
        if len(self.items) == 1:
            return self.items[0][1].text(spec)
        return "%s to %s" % (spec % self.lo[1].mean, spec % self.hi[1].mean)


class Stmt:
    """What we measured for a statement without a number: a few labelled values."""

    def __init__(self, items, note=""):
        self.items, self.note = items, note
        self.src = "; ".join(sorted({n.src for _, n in items if n is not None and n.src}))
        self.mean = None

    def text(self, spec):
        return "; ".join("%s %s" % (lab, n.text(spec) if isinstance(n, (Num, Rng)) else n) for lab, n in self.items)


def goodput(r):
    return Num(r["goodput_rps"], r.get("ci95"), src_of([r]))


def ratio(a, b, note=""):
    """Goodput of record a over record b, paired by seed."""
    if a is None or b is None:
        return None
    pr = paired_ratio(a["by_seed"], b["by_seed"]) if a.get("seed") == b.get("seed") else None
    if pr:
        return Num(pr[0], pr[1], src_of([a, b]), note)
    if not b["goodput_rps"]:
        return Num(None, None, src_of([a, b]), "denominator 0")
    return Num(a["goodput_rps"] / b["goodput_rps"], None, src_of([a, b]), note)


def loss(a, b):
    """1 - a/b, paired by seed."""
    q = ratio(a, b)
    if q is None or q.mean is None:
        return q
    return Num(1 - q.mean, [1 - q.ci[1], 1 - q.ci[0]] if q.ci else None, q.src, q.note)


def first_seed(r, value, what):
    return Num(value, None, src_of([r]).replace(seeds_text(r["seed"], r["replications"]),
                                                 "seed %s run at its goodput" % r["seed"]), what)


# ---------------------------------------------------------------- comparisons

class Spec:
    """A quantity of ours over sweep records: roles {name: [(study, labels)]} resolved to records,
    and compute({name: [records]}) -> Num | Rng | Stmt. Specs let an ablation substitute records."""

    def __init__(self, roles, compute):
        self.roles, self.compute = roles, compute

    def resolve(self, R):
        out = {}
        for role, sels in self.roles.items():
            recs = []
            for study, labels in sels:
                r = R.find(study, **labels)
                r["_study"] = study
                recs.append(r)
            out[role] = recs
        return out

    def value(self, R):
        return self.compute(self.resolve(R))


class Probe:
    """A related case shown beside a gap: its own value (spec over recs, or resolved from the spec),
    and what each ablation of it changes. to_paper: the probe measures the same quantity as the
    paper's value (the zoo's subsets), so it is set against the paper; otherwise (one grid point
    against a whole set's range) only its change under each ablation is shown."""

    def __init__(self, label, spec, recs=None, to_paper=False, key=None):
        self.label, self.spec, self.recs, self.to_paper, self.key = label, spec, recs, to_paper, key


class Cmp:
    """One paper value and ours."""

    def __init__(self, vid, ours=None, spec=None, note="", probes=(), missing=None):
        self.vid, self.ours, self.spec, self.note, self.probes, self.missing = vid, ours, spec, note, probes, missing


def unit_spec(pv):
    u = pv.get("unit")
    v = pv.get("value")
    if u == "r/s" or u == "GPUs" or u == "workloads":
        return "%.0f"
    if u == "batch":
        return "%.0f"
    if u in ("share", "fraction", "of SLO"):
        return "%.2f"
    if u == "x":
        return "%.2f"
    return "%.3g" if not isinstance(v, (int, float)) else "%.2f"


def compare(pv, ours):
    """(ratio text, gap?, distance) of ours against the paper's value: the distance is the largest
    |log(ours/paper)| over the compared ends (0 within a range or above a lower bound), what an
    ablation row must shrink to close the gap."""
    rel, v = pv.get("relation", "="), pv.get("value")
    if ours is None or v is None or rel in ("statement", "input", "setup") or getattr(ours, "mean", None) is None:
        return "", False, None
    if isinstance(v, list):
        lo, hi = v
        if isinstance(ours, Rng) and len(ours.items) > 1:
            a, b = ours.lo[1].mean / lo, ours.hi[1].mean / hi
            return "%.2f / %.2f" % (a, b), abs(a - 1) > GAP or abs(b - 1) > GAP, dist(a, b)
        m = ours.mean
        if lo <= m <= hi:
            return "within", False, 0.0
        r = m / (lo if m < lo else hi)
        return "%.2f of the %s end" % (r, "low" if m < lo else "high"), abs(r - 1) > GAP, dist(r)
    m = ours.mean
    if isinstance(ours, Rng) and len(ours.items) > 1 and v:
        if rel == "up to":
            m = ours.hi[1].mean
        elif rel == ">":
            m = ours.lo[1].mean
        else:  # every one of ours against the one value
            a, b = ours.lo[1].mean / v, ours.hi[1].mean / v
            return "%.2f to %.2f" % (a, b), abs(a - 1) > GAP or abs(b - 1) > GAP, dist(a, b)
    r = m / v if v else None
    if r is None:
        return "", False, None
    if rel == ">":
        return "%.2f (bound)" % r, r < 1 - GAP, dist(min(r, 1.0))
    return "%.2f" % r, abs(r - 1) > GAP, dist(r)


def dist(*ratios):
    """The largest |log r| (a ratio <= 0 is as far as can be)."""
    return max(abs(math.log(r)) if r > 0 else float("inf") for r in ratios)


# the ablations: (study, what it varies, the variant of a record, does record a stand in for record r?)
def _same_policy(a, r):
    return a["policy"] == r["policy"]


def _clockwork_family(a, r):
    return r["policy"].split(":")[0] == "clockwork" and a["policy"].split(":")[0] == "clockwork"


ABLATIONS = [
    ("ablation-criterion", "criterion", lambda a: a["criterion"], _same_policy),
    ("ablation-drop", "drop", lambda a: a["drop"], _same_policy),
    ("network", "send-ahead", lambda a: "send-ahead " + ("on" if a["send_ahead"] else "off"), _same_policy),
    (ABLATION_CLOCKWORK, "Clockwork variant", lambda a: a["policy"], _clockwork_family),
]


def ablation_rows(R, spec, main_recs, own=False):
    """[(ablation study, what it varies, variant, value)] for every ablation that ran a record of the
    spec's case; with own, also the variant that is the main result's own setting (then each row
    ends with whether it is that one)."""
    rows = []
    for study, what, variant, stands in ABLATIONS:
        if not R.has(study):
            continue
        by_sig = {}
        for a in R.sweep(study):
            by_sig.setdefault(a["sig"], []).append(a)
        # the variants every substituted record offers
        subs = {}
        for role, recs in main_recs.items():
            for i, r in enumerate(recs):
                for a in by_sig.get(r["sig"], []):
                    if stands(a, r):
                        a["_study"] = study
                        subs.setdefault(variant(a), {})[(role, i)] = a
        for v in sorted(subs):
            same = all(variant(main_recs[role][i]) == v for role, i in subs[v])
            if same and not own:  # the main result's own setting: nothing changed
                continue
            new = {role: [subs[v].get((role, i), r) for i, r in enumerate(recs)] for role, recs in main_recs.items()}
            try:
                val = spec.compute(new)
            except (ZeroDivisionError, TypeError, ValueError):
                continue
            rows.append((study, what, v, val, same) if own else (study, what, v, val))
    return rows


# ---------------------------------------------------------------- the quantities, per table and figure

def sel(study, **labels):
    return (study, labels)


def table2_items(R, out, sym=PAPER_RULE):
    """Table 2 (later paper), Table 4 (earlier), Figure 1 and its batches, Figure 12 and Figure 9 of the
    earlier paper (queueing) - all from the table2 study. sym: the symphony measured (the papers' rule or
    look-ahead); the value ids keep the papers' name, symphony."""
    for model, tag in (("ResNet50", "r50"), ("InceptionResNetV2", "irv2")):
        rs = R.select("table2", lambda r: match_label(r, "@model", model, exact=True))
        if not rs:
            raise Missing("table2", "no point of %s (the study file changed?)" % model)
        r = rs[0]
        m = r["models"][0]
        alpha, beta, slo, n = m["alpha_ms"], m["beta_ms"], r["slo_ms"], r["gpus"]
        src = "analytic, from the table2 config (%s: alpha %g, beta %g ms, SLO %g ms, %d GPUs)" % (
            model, alpha, beta, slo, n)
        for kind, budget in (("unc", slo / 2.0), ("stag", slo / (1 + 1.0 / n))):
            b = math.floor((budget - beta) / alpha)
            out["dbs-t2-%s-%s-batch" % (tag, kind)] = Cmp(None, Num(b, None, src))
            out["dbs-t2-%s-%s-tpt" % (tag, kind)] = Cmp(None, Num(n * b / (alpha * b + beta) * 1000.0, None, src))
        for p in [SYMPHONY] + BASELINES_LATER:
            pol = sym if p == SYMPHONY else p
            spec = Spec({"x": [sel("table2", at_model=model, policy=pol)]}, lambda rr: goodput(rr["x"][0]))
            out["dbs-t2-%s-%s" % (tag, p)] = Cmp(None, spec=spec)
            if p != "shepherd":
                out["co-t4-%s-%s" % (tag, p)] = Cmp(None, spec=spec)
            bspec = Spec({"x": [sel("table2", at_model=model, policy=pol)]},
                         lambda rr: first_seed(rr["x"][0], request_median_batch(rr["x"][0]["batch_hist"]),
                                               "median over requests; over batches %s" % rr["x"][0]["batch_p50"]))
            out["dbs-f1-%s-%s" % (tag, p)] = Cmp(None, spec=bspec)
        for p, pol in ((SYMPHONY, sym), ("nexus", "nexus")):
            vid = "co-f8-%s-%s" % (tag, p)
            out[vid] = Cmp(vid, spec=Spec({"x": [sel("table2", at_model=model, policy=pol)]},
                                          lambda rr, vid=vid: first_seed(
                                              rr["x"][0], share_of_requests_at_least(
                                                  rr["x"][0]["batch_hist"], PV[vid]["threshold"]),
                                              "share of requests in batches of %d or more" % PV[vid]["threshold"])))
    gain = []
    for tag in ("r50", "irv2"):
        u, s = out["dbs-t2-%s-unc-tpt" % tag].ours, out["dbs-t2-%s-stag-tpt" % tag].ours
        gain.append((tag, Num(s.mean / u.mean, None, s.src)))
    out["dbs-t2-stag-gain"] = Cmp(None, Rng(gain))

    def queue_ratios(rr):
        items = []
        for s, b in zip(rr["sym"], rr["base"]):
            q = Num(b["queueing_p99_ms"] / s["queueing_p99_ms"] if s["queueing_p99_ms"] else None, None,
                    src_of([s, b]).replace(seeds_text(s["seed"], s["replications"]), "seed %s run" % s["seed"]))
            items.append(("%s/%s" % (b["labels"]["@model"], b["policy"]), q))
        return Rng(items, "p99 queueing delay of the baseline over symphony's, first seed's run at its goodput")

    for vid, bases in (("dbs-f12-shorter", ["nexus", "clockwork"]), ("co-f9-shorter", ["nexus", "clockwork"])):
        pairs = [(m, b) for m in ("ResNet50", "InceptionResNetV2") for b in bases]
        out[vid] = Cmp(vid, spec=Spec({"sym": [sel("table2", at_model=m, policy=sym) for m, _ in pairs],
                                       "base": [sel("table2", at_model=m, policy=b) for m, b in pairs]},
                                      queue_ratios))

    def nexus_half(rr):
        return Rng([(r["labels"]["@model"], Num(r["queueing_p99_ms"] / r["slo_ms"], None, src_of([r])))
                    for r in rr["x"]], "Nexus's p99 queueing delay over the SLO (p99, not the maximum)")

    for vid in ("dbs-f12-nexus-half", "co-f9-nexus-half"):
        out[vid] = Cmp(vid, spec=Spec({"x": [sel("table2", at_model=m, policy="nexus")
                                             for m in ("ResNet50", "InceptionResNetV2")]}, nexus_half))

    def shepherd_queue(rr):
        return Stmt([("%s shepherd/symphony p99 queueing" % s["labels"]["@model"],
                      Num(h["queueing_p99_ms"] / s["queueing_p99_ms"], None, src_of([s, h])))
                     for s, h in zip(rr["sym"], rr["sh"])])
    out["dbs-f12-shepherd"] = Cmp(None, spec=Spec(
        {"sym": [sel("table2", at_model=m, policy=sym) for m in ("ResNet50", "InceptionResNetV2")],
         "sh": [sel("table2", at_model=m, policy="shepherd") for m in ("ResNet50", "InceptionResNetV2")]},
        shepherd_queue))


ZOO_CASES = {"all-a100": "A100 all", "all-1080ti": "1080Ti all", "strong-a100": "A100 strong",
             "strong-1080ti": "1080Ti strong", "weak-a100": "A100 weak", "weak-1080ti": "1080Ti weak"}


def zoo_items(R, out, sym=PAPER_RULE):
    """Figure 9 (later) and Figure 6 (earlier paper): symphony over the baselines on the zoos; Nexus with
    8 frontends against 1 (Figure 9, and the earlier paper's Figure 1 with compare-policies)."""

    def over(bases):
        def f(rr):
            return Rng([("%s / %s" % (short(s["labels"]["@case"]), b["policy"]), ratio(s, b))
                        for s, b in zip(rr["sym"], rr["base"])], "symphony's goodput over each baseline's")
        return f

    def best(bases):
        def f(rr):
            items = [(b["policy"], ratio(s, b)) for s, b in zip(rr["sym"], rr["base"])]
            items = [(p, q) for p, q in items if q and q.mean is not None]
            if not items:
                return None
            p, q = min(items, key=lambda t: t[1].mean)
            q = Num(q.mean, q.ci, q.src, "over the best baseline (%s); over each: %s" % (
                p, ", ".join("%s %.2fx" % (pp, qq.mean) for pp, qq in items)))
            return q
        return f

    for paper_, bases in (("dbs-f9", BASELINES_LATER), ("co-f6", BASELINES_EARLIER)):
        cases = [ZOO_CASES["all-a100"], ZOO_CASES["all-1080ti"]]
        pairs = [(c, b) for c in cases for b in bases]
        spec = Spec({"sym": [sel("zoo-goodput", at_case=c, policy=sym) for c, _ in pairs],
                     "base": [sel("zoo-goodput", at_case=c, policy=b) for c, b in pairs]}, over(bases))
        probes = []
        for k in ("strong-a100", "weak-a100", "strong-1080ti", "weak-1080ti"):
            probes.append(Probe("model mix: %s only" % ZOO_CASES[k], Spec(
                {"sym": [sel("zoo-goodput", at_case=ZOO_CASES[k], policy=sym) for _ in bases],
                 "base": [sel("zoo-goodput", at_case=ZOO_CASES[k], policy=b) for b in bases]}, over(bases)),
                to_paper=True))
        out["%s-all" % paper_] = Cmp(None, spec=spec, probes=probes)
        for k in ("strong-1080ti", "strong-a100", "weak-1080ti", "weak-a100"):
            out["%s-%s" % (paper_, k)] = Cmp(None, spec=Spec(
                {"sym": [sel("zoo-goodput", at_case=ZOO_CASES[k], policy=sym) for _ in bases],
                 "base": [sel("zoo-goodput", at_case=ZOO_CASES[k], policy=b) for b in bases]}, best(bases)))

    def fe_loss(rr):
        return Rng([(short(o["labels"]["@case"]), loss(e, o)) for o, e in zip(rr["one"], rr["eight"])
                    if o["goodput_rps"]], "1 - goodput(nexus, 8 frontends) / goodput(nexus, 1 frontend)")

    zc = list(ZOO_CASES.values())
    zoo = {"one": [sel("zoo-goodput", at_case=c, policy="nexus") for c in zc],
           "eight": [sel("zoo-goodput", at_case=c, policy="nexus:frontends=8") for c in zc]}
    for vid in ("dbs-f9-nexus-8fe", "co-f6-nexus-8fe"):
        out[vid] = Cmp(vid, spec=Spec(zoo, fe_loss))
    cp = [label_of(r["key"]["@case"]) for r in R.sweep("compare-policies") if r["series"] == "nexus"] \
        if R.has("compare-policies") else []
    roles = {"one": zoo["one"] + [sel("compare-policies", at_case=c, policy="nexus") for c in cp],
             "eight": zoo["eight"] + [sel("compare-policies", at_case=c, policy="nexus:frontends=8") for c in cp]}
    out["co-f1-frontends"] = Cmp(None, spec=Spec(roles, fe_loss))


def short(label):
    return label.split(" (")[0]


def counted(gpus):
    """Whether every seed found a GPU count: symphony plan writes null for a seed that no count
    up to --max-gpus serves (before, -1)."""
    return all(g is not None and g > 0 for g in gpus)


def min_gpus_items(R, out, sym=PAPER_RULE):
    """Figure 10: the fewest GPUs for 15K r/s."""
    cases = R.cases("min-gpus", "plan-%d.json")

    def pol(d, name):
        return next((p for p in d["policies"] if policy_name(p["policy"]) == name), None)

    def src(d, note=""):  # every value here involves symphony: its source names which
        return "min-gpus @%s, %s%s, symphony = `%s`" % (commit_of(d), seeds_text(d.get("seed"), d.get("replications")),
                                                       note, sym)

    single = [(c, d) for c, d in cases if len(d.get("config", {}).get("models", [])) == 1]
    mixed = [(c, d) for c, d in cases if len(d.get("config", {}).get("models", [])) > 1]
    if single:
        c, d = single[0]
        s = pol(d, sym)
        items = []
        for b in ("shepherd", "nexus"):
            p = pol(d, b)
            if p and s and p.get("gpus_by_seed") and s.get("gpus_by_seed") and \
                    counted(p["gpus_by_seed"] + s["gpus_by_seed"]):
                diff = [x - y for x, y in zip(p["gpus_by_seed"], s["gpus_by_seed"])]
                m, ci = mean_ci(diff)
                items.append(("%s - symphony" % b, Num(m, ci, src(d, ", paired by seed"))))
        out["dbs-f10-r50-saves"] = Cmp(None, Rng(items, "GPUs the baseline needs beyond symphony's (mean over "
                                                        "seeds of the per-seed difference)"))
        cw = pol(d, "clockwork")
        others = [pol(d, b) for b in (sym, "nexus", "shepherd")]
        if cw and all(others):
            items = [("clockwork / %s" % ("symphony" if o is others[0] else o["policy"]),
                      Num(cw["gpus_mean"] / o["gpus_mean"], None, src(d)))
                     for o in others if cw.get("gpus_mean") and o.get("gpus_mean")]
            out["dbs-f10-r50-clockwork"] = Cmp(None, min(items, key=lambda t: t[1].mean)[1] if items else None,
                                               note="; ".join(
                "%s %.2fx" % (lab, n.mean) for lab, n in items))
    if mixed:
        c, d = mixed[0]
        s = pol(d, sym)
        if s is None:
            raise Missing("min-gpus", "no %s in %s's plan (the study file changed?)" % (sym, c))
        for b in ("nexus", "shepherd"):
            p = pol(d, b)
            if p and s:
                if p["gpus"] is None or p["gpus"] < 0:
                    out["dbs-f10-mixed-" + b] = Cmp(None, Num(None, None, src(d)), note="more than %s GPUs" %
                                                    d.get("max_gpus"))
                    continue
                pr = paired_ratio(p["gpus_by_seed"], s["gpus_by_seed"]) \
                    if counted(p["gpus_by_seed"] + s["gpus_by_seed"]) else None
                out["dbs-f10-mixed-" + b] = Cmp(None, Num(pr[0], pr[1], src(d, ", paired by seed")) if pr else
                                                Num(p["gpus_mean"] / s["gpus_mean"], None, src(d)))
        cw = pol(d, "clockwork")
        if cw:
            out["dbs-f10-mixed-clockwork"] = Cmp(None, Stmt([("clockwork GPUs", Num(
                cw.get("gpus_mean"), cw.get("gpus_ci95"), src(d))), ("symphony GPUs", Num(
                    s.get("gpus_mean"), s.get("gpus_ci95"), src(d)))]))


def flat_top_items(R, out, sym=PAPER_RULE):
    """Figure 2 (later) and Figure 10 (earlier paper)."""
    case, d = R.cases("flat-top", "loadcurve-%d.json")[0]
    src = "flat-top @%s, %s (loadcurve; busy fraction: the mean over the seeds, interpolated at 3000 r/s)" % (
        commit_of(d), seeds_text(d.get("seed"), d.get("replications")))
    pts = {}
    for p in d["points"]:
        name = policy_name(p["policy"])
        if name in SYMPHONIES and name != sym:  # the other symphony is the other column's
            continue
        pts.setdefault("symphony" if name == sym else name, []).append(p)

    def busy_at(pol, x=3000.0):
        ps = sorted(pts.get(pol, []), key=lambda p: p["offered_rps"])
        return interp([p["offered_rps"] for p in ps], [p["gpu_busy_fraction"] for p in ps], x)

    if "symphony" not in pts:
        raise Missing("flat-top", "no %s in the loadcurve (the study file changed?)" % sym)
    src_sym = src + ", symphony = `%s`" % sym  # (plan and loadcurve results name no points)
    out["dbs-f2-symphony-busy-3k"] = Cmp(None, Num(busy_at("symphony"), None, src_sym))
    items = [(p, Num(busy_at(p), None, src)) for p in BASELINES_LATER if p in pts]
    out["dbs-f2-others-busy-3k"] = Cmp(None, Rng(items, "GPU busy fraction at 3000 r/s of each baseline"))
    stab = []
    for p, ps in pts.items():
        peak = max(ps, key=lambda q: q["goodput_rps"])
        at2 = [q for q in ps if abs(q["load"] - 2.0) < 1e-9]
        if at2:
            stab.append(("%s at 2x load / peak" % p, Num(at2[0]["goodput_rps"] / peak["goodput_rps"], None,
                                                         "flat-top @%s, %s%s" % (commit_of(d), seeds_text(
                                                             d.get("seed"), d.get("replications")),
                                                             ", symphony = `%s`" % sym if p == "symphony" else ""))))
    out["dbs-f2-stability"] = Cmp(None, Stmt(stab))
    out["co-f10-flat"] = Cmp(None, Stmt(stab + [("symphony busy at 3K r/s", out["dbs-f2-symphony-busy-3k"].ours)]))


def batching_items(R, out, sym=PAPER_RULE):
    def f(rr):
        return Stmt([("eager/symphony at beta %s" % s["labels"]["@beta"].split("=")[-1], ratio(e, s))
                     for s, e in zip(rr["sym"], rr["eager"])])
    labs = [label_of(r["key"]["@beta"]) for r in R.sweep("batching-effect") if r["series"] == "eager"]
    ends = [labs[0], labs[-1]] if labs else []
    out["dbs-f6a-equal-at-1"] = Cmp(None, spec=Spec({
        "sym": [sel("batching-effect", at_beta=b, policy=sym) for b in ends],
        "eager": [sel("batching-effect", at_beta=b, policy="eager") for b in ends]}, f))


def timeout_items(R, out, sym=PAPER_RULE):
    recs = R.sweep("timeout")
    cases = []
    for r in recs:
        c = label_of(r["key"]["@case"])
        if c not in cases:
            cases.append(c)
    for vid, case in (("dbs-f6b-single", cases[0]), ("dbs-f6b-mixed", cases[-1])):
        pols = [r["series"] for r in recs if label_of(r["key"]["@case"]) == case and r["series"].startswith("timeout")]

        def f(rr, case=case):
            items = [(t["policy"], ratio(t, rr["sym"][0])) for t in rr["t"]]
            b = max(items, key=lambda t: t[1].mean)
            w = min(items, key=lambda t: t[1].mean)
            return Stmt([("%s: best timeout (%s) / symphony" % (short(case), b[0]), b[1]),
                         ("worst (%s)" % w[0], w[1])])
        out[vid] = Cmp(None, spec=Spec({"sym": [sel("timeout", at_case=case, policy=sym)],
                                        "t": [sel("timeout", at_case=case, policy=p) for p in pols]}, f))


def workload_items(R, out, sym=PAPER_RULE):
    recs = R.sweep("workload-shape")
    # the systems: symphony is sym (the other symphony is the other column's)
    idx = {(r["labels"]["popularity"], r["labels"]["arrival"], r["labels"]["slo_ms"],
            SYMPHONY if r["series"] == sym else r["series"]): r for r in recs
           if r["series"] not in SYMPHONIES or r["series"] == sym}
    panels = sorted({(p, a) for p, a, _, _ in idx})
    slos = sorted({float(s) for _, _, s, _ in idx})
    lab = lambda s: label_of(float(s))  # noqa: E731
    tight, loose = lab(slos[0]), lab(slos[-1])
    items1, items2, items3 = [], [], []
    for p, a in panels:
        for slo in (tight, lab(slos[1]) if len(slos) > 1 else tight):
            s = idx.get((p, a, slo, SYMPHONY))
            others = [r for (pp, aa, ss, q), r in idx.items() if (pp, aa, ss) == (p, a, slo) and q != SYMPHONY]
            if s and others:
                b = max(others, key=lambda r: r["goodput_rps"])
                items1.append(("%s/%s SLO %s: symphony / best other (%s)" % (p, a, slo, b["series"]), ratio(s, b)))
        nx = idx.get((p, a, tight, "nexus"))
        s = idx.get((p, a, tight, SYMPHONY))
        if nx and s:
            items2.append(("%s/%s SLO %s: nexus / symphony" % (p, a, tight), ratio(nx, s)))
        at = [r for (pp, aa, ss, q), r in idx.items() if (pp, aa, ss) == (p, a, loose) and r["goodput_rps"]]
        if at:
            lo, hi = min(at, key=lambda r: r["goodput_rps"]), max(at, key=lambda r: r["goodput_rps"])
            items3.append(("%s/%s SLO %s: worst/best (%s/%s)" % (
                p, a, loose, *("symphony" if r["series"] == sym else r["series"] for r in (lo, hi))),
                           ratio(lo, hi)))
    out["dbs-f11-tight"] = Cmp(None, Stmt(items1))
    out["dbs-f11-nexus-bursty"] = Cmp(None, Stmt(items2))
    out["dbs-f11-loose"] = Cmp(None, Stmt(items3))
    out["co-f7-findings"] = Cmp(None, Stmt(items1[:2] + items2[:2] + items3[:2]))


def network_items(R, out, sym=PAPER_RULE):
    recs = R.sweep("network")
    nets = []
    for r in recs:
        n = label_of(r["key"]["@network"])
        if n not in nets:
            nets.append(n)
    slos = sorted({r["labels"]["slo_ms"] for r in recs}, key=float)
    ref, rdma, tcp = nets[0], [n for n in nets if n.lower().startswith("rdma")], \
        [n for n in nets if "tcp" in n.lower()]

    def losses(rr):
        return Rng([("%s, SLO %s" % (short_net(n["labels"]["@network"]), n["labels"]["slo_ms"]), loss(n, z))
                    for z, n in zip(rr["ref"], rr["net"])], "1 - symphony's goodput there / with no network delay")

    def roles(nets_):
        pairs = [(n, s) for n in nets_ for s in slos]
        return {"ref": [sel("network", at_network=ref, slo_ms=s, policy=sym) for _, s in pairs],
                "net": [sel("network", at_network=n, slo_ms=s, policy=sym) for n, s in pairs]}

    out["dbs-f14-tcp"] = Cmp(None, spec=Spec(roles(tcp), losses))
    out["dbs-f14-rdma"] = Cmp(None, spec=Spec(roles(rdma), losses))

    def per_slo(rr):
        return Stmt([("SLO %s" % n["labels"]["slo_ms"], loss(n, z)) for z, n in zip(rr["ref"], rr["net"])])
    worst = tcp[-1:] if tcp else nets[-1:]
    out["dbs-f14-tighter"] = Cmp(None, spec=Spec(roles(worst), per_slo))
    out["co-f13-findings"] = Cmp(None, spec=Spec(roles(worst), per_slo))


def short_net(label):
    return label.split(":")[0]


def scaling_items(R, out, sym=PAPER_RULE):
    recs = R.sweep("gpu-scaling")
    gs = sorted({int(r["gpus"]) for r in recs})
    items = []
    for p in [sym, "clockwork", "eager"]:
        a = [r for r in recs if r["series"] == p and int(r["gpus"]) == gs[0]]
        b = [r for r in recs if r["series"] == p and int(r["gpus"]) == gs[-1]]
        if a and b:
            q = ratio(b[0], a[0])
            items.append(("%s: per-GPU goodput at %d GPUs / at %d" % ("symphony" if p == sym else p, gs[-1], gs[0]),
                          Num(q.mean * gs[0] / gs[-1], [c * gs[0] / gs[-1] for c in q.ci] if q.ci else None, q.src)))
    out["dbs-f13-linear"] = Cmp(None, Stmt(items))
    out["co-f11-linear"] = Cmp(None, Stmt(items))
    out["dbs-f13-left"] = Cmp(None, None, note="not a simulation result: scripts/bench measures the scheduler")


def large_items(R, out, sym=PAPER_RULE):
    case, d = R.cases("large-changing", "sim-%d.json")[0]
    src = "large-changing @%s, seed %s" % (commit_of(d), d.get("seed"))
    a = d.get("autoscale") or {}
    st = Stmt([("bad rate", Num(d.get("bad_rate"), None, src)),
               ("GPUs in use, mean", Num(a.get("gpus_in_use_mean"), None, src)),
               ("max", Num(a.get("gpus_in_use_max"), None, src)),
               ("of GPUs", Num(d.get("gpus"), None, src))])
    out["dbs-f15-low-bad"] = Cmp(None, st)
    out["co-f14-low-bad"] = Cmp(None, st)


# ---- the synthetic grid

def grid_points(R, name="synthetic-grid"):
    """{(set, models, gpus/model, slo, arrival): {policy: record}} of a synthetic-grid study (the
    policies by the study file's names: symphony, symphony:lookahead=off, eager)."""
    cache = R.__dict__.setdefault("_grid_points", {})
    if name in cache:
        return cache[name]
    pts = {}
    for r in R.sweep(name):
        k = r["key"]
        wl = label_of(k["@workload"])
        st, _, n = wl.rpartition(" x")
        key = (st, int(n), float(k["gpus_per_model"]), float(k["slo_ms"]), str(k["arrival"]))
        r["_study"] = name
        pts.setdefault(key, {})[policy_name(r["series"])] = r
    cache[name] = pts
    return pts


def grid_pairs(R, name="synthetic-grid", sym=PAPER_RULE):
    """{(set, models, gpus/model, slo, arrival): (sym's record, eager's record)}."""
    return {k: (v[sym], v["eager"]) for k, v in grid_points(R, name).items() if sym in v and "eager" in v}


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * q / 100.0
    f = math.floor(k)
    return xs[f] if f == k else xs[f] + (xs[f + 1] - xs[f]) * (k - f)


def grid_items(R, out, sym=PAPER_RULE):
    pairs = grid_pairs(R, sym=sym)
    if not pairs:
        raise Missing("synthetic-grid", "no %s/eager pairs in the results (the study file changed?)" % sym)
    rat = {k: s["goodput_rps"] / e["goodput_rps"] for k, (s, e) in pairs.items() if e["goodput_rps"]}
    anyrec = next(iter(pairs.values()))[0]
    src = "synthetic-grid @%s, %s, %d pairs" % (commit_of(anyrec), seeds_text(anyrec["seed"], anyrec["replications"]),
                                                len(rat))

    def rng(keys, note):
        return Rng([("%s x%d, %g GPUs/model, SLO %g, %s" % k, Num(rat[k], None, src_of(pairs[k]))) for k in keys],
                   note)

    mixed = [k for k in rat if k[0].startswith("mixed")]
    dn30 = [k for k in rat if k[0] == "DenseNet121" and k[3] == 30]
    bert = [k for k in rat if k[0].lower() == "bert"]
    v = list(rat.values())
    out["dbs-f7-count"] = Cmp(None, Num(len(rat), None, src), note="symphony/eager pairs with eager > 0, of %d" %
                              len(pairs))
    probes = grid_probes(R, pairs)
    for vid in ("dbs-f7a-mixed", "co-f4a-mixed"):
        out[vid] = Cmp(None, rng(mixed, "symphony/eager over the mixed set's pairs"),
                       probes=[p for p in probes if p.key[0].startswith("mixed")])
    for vid in ("dbs-f7b-densenet-slo30", "co-f4b-densenet-slo30"):
        out[vid] = Cmp(None, rng(dn30, "symphony/eager over DenseNet121's pairs at SLO 30 ms"),
                       probes=[p for p in probes if p.key[0] == "DenseNet121" and p.key[3] == 30])
    bv = [rat[k] for k in bert]
    out["dbs-f7c-bert"] = Cmp(None, Stmt([("Bert pairs, median", Num(pct(bv, 50), None, src)),
                                          ("p10", Num(pct(bv, 10), None, src)), ("p90", Num(pct(bv, 90), None, src))])
                              if bv else None)
    share95 = Num(sum(x >= 0.95 for x in v) / len(v), None, src)
    for vid in ("dbs-f7d-no-worse", "co-f4d-no-worse"):
        out[vid] = Cmp(None, Stmt([("share of pairs >= 0.95", share95)]))
    share15 = Num(sum(x >= 1.5 for x in v) / len(v), None, src)
    for vid in ("dbs-f7d-share-1.5", "co-f4d-share-1.5"):
        out[vid] = Cmp(None, share15, probes=probes)
    out["dbs-f7d-double"] = Cmp(None, Num(max(v), None, src),
                                note="the largest ratio; %.1f%% of pairs at 2x or more" % (
                                    100.0 * sum(x >= 2 for x in v) / len(v)))
    g1 = [rat[k] for k in rat if k[4] == "gamma:1"]
    g01 = [rat[k] for k in rat if k[4] == "gamma:0.1"]
    out["co-f4b-bursty"] = Cmp(None, Stmt([("median at gamma 1", Num(pct(g1, 50), None, src)),
                                           ("at gamma 0.1", Num(pct(g01, 50), None, src))]))


def grid_probes(R, pairs):
    """The synthetic-grid points the ablation studies also ran: the ratio symphony/eager there, as a
    spec over the grid's records (so the ablations substitute their own)."""
    probes = []
    sigs = set()
    for study, _, _, _ in ABLATIONS:
        if R.has(study):
            sigs |= {r["sig"] for r in R.sweep(study)}
    for k, (s, e) in sorted(pairs.items()):
        if s["sig"] in sigs:
            probes.append(Probe("symphony/eager at the grid point %s x%d, %g GPUs/model, SLO %g ms, %s" % k,
                                Spec({}, lambda rr: ratio(rr["s"][0], rr["e"][0])), {"s": [s], "e": [e]}, key=k))
    return probes


# ---------------------------------------------------------------- rendering

PV = {}


def fmt_paper(pv):
    v, rel, u = pv.get("value"), pv.get("relation", "="), pv.get("unit", "")
    if v is None:
        return "figure only"
    unit = "" if u in ("share", "fraction", "x", "of SLO", "batch", "workloads") else " " + u
    suf = "x" if u == "x" else ""
    if isinstance(v, list):
        return "%g%s to %g%s%s" % (v[0], suf, v[1], suf, unit)
    pre = {">": "more than ", "about": "about ", "up to": "up to "}.get(rel, "")
    return "%s%g%s%s" % (pre, v, suf, unit)


def md_escape(s):
    return str(s).replace("|", "\\|")


def evaluate(R, cmps):
    """Fills in ours for every Cmp with a spec; records missing studies."""
    for vid, c in cmps.items():
        c.vid = vid
        if c.spec is not None and c.ours is None:
            try:
                c.recs = c.spec.resolve(R)
                c.ours = c.spec.compute(c.recs)
            except Missing as e:
                c.missing = e


def build(R, sym=PAPER_RULE):
    """{value id: Cmp} for every value the studies can compute, with sym as symphony (the papers' rule for
    the report's main column, look-ahead for the column beside it)."""
    cmps = {}
    for f in (table2_items, zoo_items, min_gpus_items, flat_top_items, batching_items, timeout_items, workload_items,
              network_items, scaling_items, large_items, grid_items):
        part = {}
        try:
            f(R, part, sym)
        except Missing as e:
            part["__missing__" + f.__name__] = Cmp(None, missing=e)
            if e.study not in R.missing:
                R.item_missing.setdefault(e.study, e)
        cmps.update(part)
    evaluate(R, cmps)
    return cmps


def signature_of(pv, c):
    """What a value shows (its text, sources, why it is missing): two builds that show the same did not
    use symphony for it."""
    if c is None:
        return None
    if c.missing is not None:
        return ("missing", c.missing.study, c.missing.why)
    o = c.ours
    return (o.text(unit_spec(pv)) if o is not None else c.note, getattr(o, "src", None))


def involves_symphony(pv, c, la):
    """Does the value differ between the papers' rule and look-ahead (so that it concerns symphony)?"""
    return la is not None and signature_of(pv, c) != signature_of(pv, la)


def la_cell(pv, la, R, it, bullet=False):
    """Look-ahead's value and its ratio to the paper: 'v; r' for the table, 'v (ours/paper r)' in a bullet."""
    ours, rt, gap = row_of(pv, la, R, it)
    if rt:
        ours += (" (ours/paper %s%s)" if bullet else "; %s%s") % (rt, ", a **gap**" if bullet and gap else
                                                                   " **gap**" if gap else "")
    return ours


def note_of(c):
    return "; ".join(x for x in (getattr(c.ours, "note", ""), c.note) if x) if c is not None else ""


def render(R, papers, items, cmps, args, la=None):
    """The report; cmps: the values with the papers' rule as symphony, la: with look-ahead."""
    la = la or {}
    L = []
    w = L.append
    w("# Reproducing the evaluations of the two Symphony papers")
    w("")
    w("Generated by `scripts/report.py` from the study results under `%s/` - do not edit by hand. Regenerate "
      "with `scripts/reproduce report` (after `scripts/reproduce all`, or after running the studies one by one; "
      "see docs/studies.md)." % rel(args.results))
    w("")
    gone = sorted(n for n in R.missing if n != ABLATION_CLOCKWORK)
    if gone:
        w("**Incomplete:** %d of the studies this report reads have no results (%s), so their values read "
          "*not run*; `scripts/reproduce all` computes everything." % (len(gone), ", ".join(gone)))
        w("")
    w("The papers: %s." % "; ".join("`%s` (%s: *%s*)" % (p["file"], p["short"], p["title"]) for p in papers.values()))
    w("Their numbers, each with its place in the text, are in `experiments/paper-values.json`; the text "
      "extraction lost most figures, so a figure whose text states no number is marked *figure only* and "
      "no number is read off a plot.")
    w("")
    w("**How to read it.** *Ours* is the mean over the seeds with its 95%% interval (Student t over the "
      "per-seed values: `mean %s half-width`); a ratio of two policies is the mean of their per-seed ratios "
      "(the same seed gives both the same arrivals). Batch sizes and queueing delays are of the first seed's "
      "run at its own goodput (the C side reports them for that run only). *ours/paper* is the ratio to the "
      "paper's value (for a range: our low end over theirs / our high end over theirs; for a bound, against "
      "the bound). A **gap** is a ratio further than %d%% from 1; under each gap are the rows of the ablation "
      "studies that ran the same case with one thing changed, with the ratio each variant gives, so that the "
      "cause is shown by a run. *Source* names the study, the commit of the program that computed it, the "
      "seeds and the sweep points." % (PM, 100 * GAP))
    w("")
    w("**Two symphonies.** The papers measured their own rule, Algorithm 1 (`%s`); this project's default "
      "`symphony` is look-ahead deferral (issue 27; docs/policies.md, \"Look-ahead deferral\"). Every study "
      "that sets symphony beside a paper's number or beside eager or timeout runs both. *Ours* (with *ours/paper* "
      "and *gap*) is the papers' rule; the column *look-ahead* beside it is the same quantity with `symphony` in "
      "its place, then its own ratio to the paper (`value; ours/paper`, **gap** where that is one): for a "
      "goodput, look-ahead's goodput; for a comparison with eager, timeout or the baselines, look-ahead's ratio. "
      "It is empty where the value does not involve symphony (a baseline's goodput, an analytic number). "
      "*Source* is the papers' rule's; below, each value lists both values and both sources, and each gap block "
      "opens with look-ahead's row (how much of the gap the default closes). The synthetic grid's section gives "
      "both distributions of the ratio to "
      "eager, issue 27's thresholds for look-ahead, and goodput over the multi-model bound (`bound_rps`, "
      "core/capacity.h) for eager and both symphonies." % PAPER_RULE)
    w("")
    # provenance
    w("## Results used")
    w("")
    w("| study | commit | version | seeds | points | checks |")
    w("| --- | --- | --- | --- | --- | --- |")
    for name in R.used + [n for n in R.missing if n not in R.used]:
        if name in R.missing:
            w("| %s | - | - | - | - | **not run**: %s (`scripts/reproduce %s`) |" % (
                name, md_escape(R.missing[name].why), name))
            continue
        if name in R.sweeps:
            recs = R.sweeps[name]
            commits = sorted({commit_of(r) for r in recs})
            vers = sorted({str(r.get("version")) for r in recs})
            seeds = sorted({seeds_text(r.get("seed"), r.get("replications")) for r in recs})
            pts = "%d" % len(recs)
        else:
            ds = [d for _, d in R.files[name]]
            commits = sorted({commit_of(d) for d in ds})
            vers = sorted({str(d.get("version")) for d in ds})
            seeds = sorted({seeds_text(d.get("seed"), d.get("replications")) for d in ds})
            pts = "%d case%s" % (len(ds), "s" if len(ds) > 1 else "")
        w("| %s | %s | %s | %s | %s | %s |" % (name, ", ".join(commits), ", ".join(vers), "; ".join(seeds), pts,
                                               md_escape("; ".join(R.checks.get(name, [])) or "ok")))
    w("")
    # the summary
    gaps, la_gaps, both = [], [], 0
    w("## Every number the papers state, beside ours")
    w("")
    w("| paper | where | what | paper's value | ours (papers' rule) | ours/paper | gap | look-ahead; ours/paper "
      "| source |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for it in items:
        for pv in it["values"]:
            c, c_la = cmps.get(pv["id"]), la.get(pv["id"])
            ours, rt, gap = row_of(pv, c, R, it)
            if gap:
                gaps.append(pv["id"])
            sided = involves_symphony(pv, c, c_la)
            both += sided
            if (row_of(pv, c_la, R, it)[2] if sided else gap):
                la_gaps.append(pv["id"])
            w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                papers[it["paper"]]["short"], md_escape(pv.get("cite", it["where"])), md_escape(pv["what"]),
                md_escape(fmt_paper(pv)), md_escape(ours), rt, "**gap**" if gap else "",
                md_escape(la_cell(pv, c_la, R, it)) if sided else "", md_escape(source_of(c) or source_of(c_la))))
    w("")
    w("%d values, %d of them involving symphony; %d gaps over %d%% with the papers' rule, %d with look-ahead." % (
        sum(len(it["values"]) for it in items), both, len(gaps), 100 * GAP, len(la_gaps)))
    w("")
    # per table and figure
    w("## Per table and figure")
    for it in items:
        w("")
        w("### %s, %s: %s" % (papers[it["paper"]]["short"].capitalize(), it["where"], it["title"]))
        w("")
        w("Set-up (the paper): %s Studies: %s." % (it.get("setup", ""), ", ".join(
            "`%s`" % s for s in it.get("studies", [])) or "none (not a simulation result)"))
        w("")
        for pv in it["values"]:
            c, c_la = cmps.get(pv["id"]), la.get(pv["id"])
            ours, rt, gap = row_of(pv, c, R, it)
            sided = involves_symphony(pv, c, c_la)
            w("- **%s** (`%s`, %s): paper %s; ours%s %s%s%s%s." % (
                pv["what"], pv["id"], pv.get("cite", ""), fmt_paper(pv), " (the papers' rule)" if sided else "",
                ours, "; ours/paper %s" % rt if rt else "", " - **gap**" if gap else "",
                "; look-ahead %s" % la_cell(pv, c_la, R, it, bullet=True) if sided else ""))
            one_note = not sided or note_of(c) == note_of(c_la)
            if one_note and note_of(c):
                w("  - %s" % note_of(c))
            for cc, who in ((c, "the papers' rule: " if sided else ""), (c_la if sided else None, "look-ahead: ")):
                if cc is None:
                    continue
                if not one_note and note_of(cc):
                    w("  - %s%s" % (who, note_of(cc)))
                if isinstance(cc.ours, Rng) and len(cc.ours.items) > 1:
                    w("  - %sthe values: %s" % (who, "; ".join("%s %s" % (lab, n.text(unit_spec(pv)))
                                                            for lab, n in cc.ours.items)))
                if cc.ours is not None and source_of(cc):
                    w("  - %ssource: %s" % (who, source_of(cc)))
            if gap or (sided and row_of(pv, c_la, R, it)[2]):
                for line in gap_block(R, pv, c, c_la if sided else None):
                    w("  " + line)
    # the synthetic grid
    w("")
    grid_section(R, w)
    # the Clockwork ablation (hook)
    w("")
    clockwork_section(R, w)
    w("")
    return "\n".join(L) + "\n", gaps


def row_of(pv, c, R=None, item=None):
    """(ours text, ratio text, gap?) of a value."""
    if c is None:
        if pv.get("relation") == "input":
            return "an input, not a result", "", False
        gone = [s for s in (item or {}).get("studies", []) if R is not None and s in R.missing]
        if gone:
            return "not run (`scripts/reproduce %s`)" % gone[0], "", False
        short = [s for s in (item or {}).get("studies", []) if R is not None and s in R.item_missing]
        if short:
            return "not in these results (rerun `scripts/reproduce %s`)" % short[0], "", False
        return "not computed by a study", "", False
    if c.missing is not None:
        if R is not None and c.missing.study not in R.missing:  # the study ran, without this point
            return "not in these results (rerun `scripts/reproduce %s`)" % c.missing.study, "", False
        return "not run (`scripts/reproduce %s`)" % c.missing.study, "", False
    if c.ours is None:
        return c.note or "-", "", False
    spec = unit_spec(pv)
    txt = c.ours.text(spec)
    rt, gap, _ = compare(pv, c.ours)
    return txt, rt, gap


def source_of(c):
    if c is None or c.ours is None:
        return ""
    return short_src(getattr(c.ours, "src", "") or "")


def short_src(src, most=6):
    """Sources of several records, merged per study, commit and seeds: 'zoo-goodput @c, seeds 1-5,
    points 0/4, 0/5, 33/37 (and 3 more)'."""
    groups, order = {}, []
    for part in [p for p in src.split("; ") if p]:
        head, sep, pts = part.partition(", point")
        if not sep:
            head, pts = part, ""
        else:
            pts = pts[2:] if pts.startswith("s ") else pts[1:]
        if head not in groups:
            groups[head] = []
            order.append(head)
        for p in pts.split(", "):
            if p and p not in groups[head]:
                groups[head].append(p)
    out = []
    for h in order:
        ps = groups[h]
        if not ps:
            out.append(h)
            continue
        more = " (and %d more)" % (len(ps) - most) if len(ps) > most else ""
        out.append("%s, point%s %s%s" % (h, "s" if len(ps) > 1 else "", ", ".join(ps[:most]), more))
    return "; ".join(out)


def gap_block(R, pv, c, la=None):
    """The rows beside a gap: look-ahead's value in the papers' rule's place (la: its Cmp, where the value
    involves symphony), then the ablation studies' runs of the case, for the papers' rule and for look-ahead."""
    L = []
    _, main_gap, r_main = compare(pv, c.ours) if c is not None else ("", False, None)
    spec = unit_spec(pv)

    def closes(val):
        rt, gap, d = compare(pv, val) if not isinstance(val, Stmt) else ("", False, None)
        txt = ""
        if main_gap and d is not None and r_main and math.isfinite(r_main) and math.isfinite(d):
            f = 1 - d / r_main
            txt = ", closes the gap" if not gap else ", closes %.0f%% of the gap" % (100 * f) if f > 0.005 \
                else ", leaves it" if f > -0.005 else ", widens it"
        elif gap and not main_gap:
            txt = ", a gap (the papers' rule has none)"
        return rt, txt

    if la is not None:
        if la.ours is not None and getattr(la.ours, "mean", None) is not None or isinstance(la.ours, Stmt):
            rt, txt = closes(la.ours)
            L.append("- look-ahead deferral (`%s`) in the papers' rule's place: %s%s%s (%s)" % (
                LOOKAHEAD, la.ours.text(spec), "; ours/paper %s" % rt if rt else "", txt, short_src(la.ours.src)))
        else:
            L.append("- look-ahead deferral (`%s`): %s" % (LOOKAHEAD, row_of(pv, la, R)[0]))
    L.append("- ablations of this case:")
    rows, extra = [], []
    for cc, who in ((c, ""), (la, "look-ahead: ")):
        if cc is None:
            continue
        if cc.spec is not None and getattr(cc, "recs", None):
            for study, what, variant, val in ablation_rows(R, cc.spec, cc.recs):
                rows.append(("%s%s (`%s`)" % (who, what, study), variant, val))
        for pr in cc.probes or ():
            try:
                recs = pr.recs or pr.spec.resolve(R)
                base = pr.spec.compute(recs)
            except Missing:
                continue
            label = who + pr.label
            if pr.to_paper:
                rows.append((label, "as run", base))
                for study, what, variant, val in ablation_rows(R, pr.spec, recs):
                    rows.append(("%s, %s (`%s`)" % (label, what, study), variant, val))
                continue
            # a point of a larger set: its value as run, and how much each ablation moves it (against the
            # ablation's own run of the main setting, which has the ablation's seeds)
            parts = []
            arows = ablation_rows(R, pr.spec, recs, own=True)
            for study, what, variant, val, same in arows:
                ref = next((v for st, _, _, v, sm in arows if st == study and sm), None)
                if val is None or val.mean is None:
                    continue
                if same:
                    parts.append("%s %s (the same setting): %s (%s)" % (what, variant, val.text(spec),
                                                                         short_src(val.src)))
                elif ref is not None and ref.mean:
                    parts.append("%s %s: %s (%+.1f%% against %s; %s)" % (
                        what, variant, val.text(spec), 100 * (val.mean / ref.mean - 1), "the same setting",
                        short_src(val.src)))
                else:
                    parts.append("%s %s: %s (%s)" % (what, variant, val.text(spec), short_src(val.src)))
            extra.append("  - %s: %s as run (%s)%s" % (label, base.text(spec) if base else "-",
                                                       short_src(base.src) if base else "",
                                                       "; " + "; ".join(parts) if parts else "; no ablation ran it"))
    if not rows and not extra:
        L.append("  - none: no ablation study ran this case with one thing changed (the ablations: %s)" % ", ".join(
            "`%s` (%s)" % (s, w) for s, w, _, _ in ABLATIONS))
        if not R.has(ABLATION_CLOCKWORK) and "clockwork" in pv["id"]:
            L.append("  - `%s` has no results yet: when its study file exists, `scripts/reproduce %s`" % (
                ABLATION_CLOCKWORK, ABLATION_CLOCKWORK))
        return L
    for what, variant, val in rows:
        if val is None:
            continue
        rt, txt = closes(val)
        L.append("  - %s, %s: %s%s%s (%s)" % (what, variant, val.text(spec), "; ours/paper %s" % rt if rt else "",
                                             txt, short_src(val.src)))
    L += extra
    if not R.has(ABLATION_CLOCKWORK) and "clockwork" in pv["id"]:
        L.append("  - `%s` has no results yet: when its study file exists, `scripts/reproduce %s`" % (
            ABLATION_CLOCKWORK, ABLATION_CLOCKWORK))
    return L


def grid_ratios(R, name, sym):
    """({pair key: ratio sym/eager}, pairs with eager 0 left out, any record) of a synthetic-grid study; with
    several seeds a pair's ratio is the mean of its per-seed ratios (the ratio of the means where eager has a
    seed at 0)."""
    pairs = grid_pairs(R, name, sym)
    rat, zero = {}, 0
    for k, (s, e) in pairs.items():
        if not e["goodput_rps"]:
            zero += 1
            continue
        q = ratio(s, e)
        rat[k] = q.mean if q is not None and q.mean is not None else s["goodput_rps"] / e["goodput_rps"]
    return rat, zero, (next(iter(pairs.values()))[0] if pairs else None)


def dist_stats(v):
    """The distribution of ratios to eager the grid section prints (None without values)."""
    if not v:
        return None
    n = float(len(v))
    return {"n": len(v), "median": pct(v, 50), "p10": pct(v, 10), "p90": pct(v, 90), "mean": sum(v) / n,
            "ge1": sum(x >= 1 for x in v) / n, "ge15": sum(x >= 1.5 for x in v) / n,
            "lt095": sum(x < 0.95 for x in v) / n, "ge095": sum(x >= 0.95 for x in v) / n}


def grid_issue():
    """Issue 27's thresholds on the grid (experiments/synthetic-grid.json's "issue" object, else GRID_ISSUE)."""
    t = dict(GRID_ISSUE)
    t.update(((study_file("synthetic-grid") or {}).get("issue") or {}))
    return t


def grid_verdict(st, thr):
    """(text, met?) of look-ahead's distribution against issue 27's thresholds."""
    share_ok = st["ge095"] >= thr["min_share_095"]
    med_ok = st["median"] >= thr["min_median"]
    return ("%.1f%% of pairs at 0.95x eager or better (%s), median %.3f (%s): %s" % (
        100 * st["ge095"], "met" if share_ok else "**not met**", st["median"], "met" if med_ok else "**not met**",
        "**met**" if share_ok and med_ok else "**not met**"), share_ok and med_ok)


def of_bound(r):
    """A record's goodput over its multi-model bound (None where the result carries no bound)."""
    if r is None:
        return None
    if r.get("goodput_of_bound") is not None:
        return r["goodput_of_bound"]
    return r["goodput_rps"] / r["bound_rps"] if r.get("bound_rps") and r.get("goodput_rps") is not None else None


GRID_STUDIES = [("synthetic-grid", "the whole grid"), ("synthetic-grid-spread", "the spread study's sample")]


def grid_section(R, w):
    w("## The synthetic grid: look-ahead and the papers' rule against eager")
    w("")
    w("The goodput ratio to eager over the grid of Table 1 (later paper, Section 3.4.2) / Table 3 (earlier paper, "
      "Section 4.3): *look-ahead* is `%s` / eager, *papers' rule* `%s` / eager, paired point by point (same "
      "workload, cluster and seeds). `synthetic-grid` runs every point with one seed; `synthetic-grid-spread` "
      "runs a sample of its points with several seeds, where a pair's ratio is the mean of its per-seed ratios. "
      "Pairs where eager's goodput is 0 are left out (any goodput is then at least eager's). Figure 7 (later "
      "paper) compares deferred (symphony) with eager; Figure 4 (earlier paper) compares the beta*lambda rule "
      "with work-conserving dispatch, which this grid does not run." % (LOOKAHEAD, PAPER_RULE))
    w("")
    thr = grid_issue()
    w("| study | seeds | policy | pairs | median | p10 | p90 | mean | share >= 1.0 | share >= 1.5x | share < 0.95x |")
    w("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    verdicts, ran = [], {}
    for name, _ in GRID_STUDIES:
        for sym in (LOOKAHEAD, PAPER_RULE):
            try:
                rat, zero, anyrec = grid_ratios(R, name, sym)
            except Missing as e:
                w("| `%s` | - | %s | not run: %s (`scripts/reproduce %s`) | | | | | | | |" % (
                    name, SYM_NAMES[sym], md_escape(e.why), name))
                break
            st = dist_stats(list(rat.values()))
            if st is None:
                w("| `%s` | - | %s | no %s/eager pairs in these results (rerun `scripts/reproduce %s`) | | | | | | | |"
                  % (name, SYM_NAMES[sym], sym, name))
                continue
            ran[(name, sym)] = (rat, anyrec)
            w("| `%s` @%s | %s | %s | %d%s | %.3f | %.3f | %.3f | %.3f | %.1f%% | %.1f%% | %.1f%% |" % (
                name, commit_of(anyrec), seeds_text(anyrec["seed"], anyrec["replications"]), SYM_NAMES[sym],
                st["n"], " (+%d with eager 0)" % zero if zero else "", st["median"], st["p10"], st["p90"], st["mean"],
                100 * st["ge1"], 100 * st["ge15"], 100 * st["lt095"]))
            if sym == LOOKAHEAD:
                verdicts.append((name, anyrec, grid_verdict(st, thr)))
    w("")
    w("**Issue 27's thresholds** for look-ahead on the grid (at least %.0f%% of pairs at 0.95x eager or better, "
      "median at least %.2f; computed from the rows above): %s." % (
          100 * thr["min_share_095"], thr["min_median"], "; ".join(
              "`%s` (%s): %s" % (n, seeds_text(r["seed"], r["replications"]), v[0]) for n, r, v in verdicts)
          if verdicts else "no look-ahead results yet"))
    w("")
    grid_by_set(R, w, ran)
    w("")
    bound_section(R, w)
    w("")
    spread_section(R, w)


def grid_by_set(R, w, ran):
    w("### By model set (`synthetic-grid`)")
    w("")
    la, pr = ran.get(("synthetic-grid", LOOKAHEAD)), ran.get(("synthetic-grid", PAPER_RULE))
    if not la and not pr:
        w("No ratios to show (see above).")
        return
    w("Each cell: look-ahead / the papers' rule (`-` where that policy has no pairs). The papers' statements are "
      "beside the rows they concern.")
    w("")
    sets = []
    for rat in (la, pr):
        for k in (rat[0] if rat else {}):
            if k[0] not in sets:
                sets.append(k[0])

    def says(*vids):
        return "; ".join("%s%s (`%s`)" % (PV[v]["what"], "" if PV[v].get("value") is None else ": " +
                                          fmt_paper(PV[v]), v) for v in vids if v in PV)

    paper_says = {"mixed": says("dbs-f7a-mixed", "co-f4a-mixed"),
                  "DenseNet121": says("dbs-f7b-densenet-slo30", "co-f4b-densenet-slo30"),
                  "BERT": says("dbs-f7c-bert"), "Bert": says("dbs-f7c-bert")}
    w("| model set | pairs | median | p10 | p90 | share >= 1.5x | share >= 0.95 | the papers |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")

    def both(st_la, st_pr, key, spec):
        return " / ".join("-" if st is None else spec % (st[key] * (100 if spec.endswith("%%") else 1))
                          for st in (st_la, st_pr))

    for st_name in sets + ["all"]:
        sts = []
        for rat in (la, pr):
            v = [x for k, x in (rat[0].items() if rat else []) if st_name == "all" or k[0] == st_name]
            sts.append(dist_stats(v))
        said = next((t for key, t in paper_says.items() if st_name.startswith(key)), "")
        if st_name == "all":
            said = says("dbs-f7d-no-worse", "dbs-f7d-share-1.5", "dbs-f7d-double", "co-f4d-share-1.5")
        w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            "**all**" if st_name == "all" else st_name, " / ".join("-" if st is None else "%d" % st["n"] for st in sts),
            both(*sts, "median", "%.3f"), both(*sts, "p10", "%.3f"), both(*sts, "p90", "%.3f"),
            both(*sts, "ge15", "%.1f%%"), both(*sts, "ge095", "%.1f%%"), md_escape(said)))
    dn = []
    for rat in (la, pr):
        dn.append([x for k, x in (rat[0].items() if rat else []) if k[0] == "DenseNet121" and k[3] == 30])
    if any(dn):
        w("")
        w("DenseNet121 at SLO 30 ms alone: %s." % "; ".join(
            "%s %d pairs, %.2f to %.2f, median %.3f" % (SYM_NAMES[sym], len(v), min(v), max(v), pct(v, 50))
            for sym, v in zip((LOOKAHEAD, PAPER_RULE), dn) if v))


def bound_section(R, w):
    w("### Goodput over the multi-model bound")
    w("")
    w("The multi-model bound (`bound_rps`, core/capacity.h) is the largest total rate any scheduler could serve "
      "the models at their shares on the GPUs within their SLOs; each goodput over it (`goodput_of_bound`) says "
      "how much any scheduler could still gain. Over the grid's points: median (p10 to p90).")
    w("")
    pols = [("eager", "eager"), (LOOKAHEAD, "look-ahead"), (PAPER_RULE, "papers' rule")]
    w("| study | points | %s |" % " | ".join(n for _, n in pols))
    w("| --- | ---: | %s |" % " | ".join("---:" for _ in pols))
    for name, what in GRID_STUDIES + [("zoo-goodput", "the six zoo cases")]:
        try:
            recs = R.sweep(name)
        except Missing as e:
            w("| `%s` | not run: %s | %s |" % (name, md_escape(e.why), " | ".join("" for _ in pols)))
            continue
        cells, npts = [], 0
        for p, _ in pols:
            v = [x for x in (of_bound(r) for r in recs if policy_name(r["series"]) == p) if x is not None]
            npts = max(npts, len(v))
            cells.append("%.3f (%.3f to %.3f)" % (pct(v, 50), pct(v, 10), pct(v, 90)) if v else "-")
        w("| `%s` (%s) | %d | %s |" % (name, what, npts, " | ".join(cells)))
    w("")
    try:
        recs = R.sweep("zoo-goodput")
    except Missing:
        return
    w("Per zoo case (`zoo-goodput`): the mean over the seeds of each seed's goodput over the bound, with its 95% "
      "interval.")
    w("")
    w("| case | bound r/s | %s |" % " | ".join(n for _, n in pols))
    w("| --- | ---: | %s |" % " | ".join("---:" for _ in pols))
    for c in ZOO_CASES.values():
        row = {policy_name(r["series"]): r for r in recs if match_label(r, "@case", c)}
        if not row:
            continue
        b = next((r.get("bound_rps") for r in row.values() if r.get("bound_rps")), None)
        label = next(iter(row.values()))["labels"]["@case"]
        cells = []
        for p, _ in pols:
            r = row.get(p)
            if r is None or not b:
                cells.append("-")
                continue
            m, ci = mean_ci([x / b for x in r["by_seed"]])
            cells.append(Num(m, ci).text("%.3f"))
        w("| %s | %s | %s |" % (md_escape(label), "%.0f" % b if b else "-", " | ".join(cells)))


def spread_section(R, w):
    w("### The grid's spread (`synthetic-grid-spread`)")
    w("")
    try:
        R.sweep("synthetic-grid-spread")
    except Missing as e:
        w("Not run: %s (`scripts/reproduce synthetic-grid-spread`)." % e.why)
        return
    w("The grid runs one search per point; `synthetic-grid-spread` runs several seeds on a sample of its points:")
    w("")
    for sym in (LOOKAHEAD, PAPER_RULE):
        sp = grid_pairs(R, "synthetic-grid-spread", sym)
        if not sp:
            w("- %s: no %s/eager pairs in these results." % (SYM_NAMES[sym], sym))
            continue
        hw, straddle, outside, n = [], 0, 0, 0
        for k, (s, e) in sp.items():
            for r in (s, e):
                if r.get("ci95") and r["goodput_rps"]:
                    hw.append((r["ci95"][1] - r["ci95"][0]) / 2 / r["goodput_rps"])
            q = ratio(s, e)
            if q and q.ci:
                n += 1
                straddle += q.ci[0] <= 1 <= q.ci[1]
                one = s["by_seed"][0] / e["by_seed"][0] if e["by_seed"][0] else None
                outside += one is not None and not (q.ci[0] <= one <= q.ci[1])
        rs = next(iter(sp.values()))[0]
        w("- %s: %d pairs (@%s, %s); the half-width of a goodput's 95%% interval (%s and eager) is %s; %d of "
          "%d ratio intervals contain 1 (no difference shown); in %d the seed-%s ratio (what a one-seed grid point "
          "reports) lies outside the %d-seed interval." % (
              SYM_NAMES[sym], len(sp), commit_of(rs), seeds_text(rs["seed"], rs["replications"]), sym,
              "%.1f%% of the mean at the median, %.1f%% at p90, %.1f%% at most" % (
                  100 * pct(hw, 50), 100 * pct(hw, 90), 100 * max(hw)) if hw else "not known (one seed?)",
              straddle, n, outside, rs["seed"], rs["replications"]))


def clockwork_section(R, w):
    """The hook for ablation-clockwork: every point of it, by case, when its results exist."""
    w("## Clockwork variants (`%s`)" % ABLATION_CLOCKWORK)
    w("")
    if not R.has(ABLATION_CLOCKWORK):
        e = R.missing.get(ABLATION_CLOCKWORK)
        w("No results yet (%s). When `experiments/%s.json` exists (its points vary the `policy` string: "
          "`clockwork` and its variants), `scripts/reproduce %s` computes them; this section then lists every "
          "point, and the gaps above that concern Clockwork print its rows beside them (matched by the case's "
          "configuration)." % (e.why if e else "no study file", ABLATION_CLOCKWORK, ABLATION_CLOCKWORK))
        R.missing.pop(ABLATION_CLOCKWORK, None)
        return
    recs = R.sweep(ABLATION_CLOCKWORK)
    w("| case | policy | goodput r/s | vs `clockwork` there | median batch (seed 1) | source |")
    w("| --- | --- | ---: | ---: | ---: | --- |")
    plain = {r["sig"]: r for r in recs if r["policy"] == "clockwork"}
    for r in recs:
        case = ", ".join(v for a, v in r["labels"].items() if a not in ("policy", "@policy")) or "-"
        q = ratio(r, plain.get(r["sig"])) if r["sig"] in plain else None
        r["_study"] = ABLATION_CLOCKWORK
        w("| %s | `%s` | %s | %s | %s | %s |" % (md_escape(case), r["policy"], goodput(r).text("%.0f"),
                                                 q.text("%.3f") if q else "-",
                                                 request_median_batch(r.get("batch_hist")) or "-", src_of([r])))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, "results"), help="the results root (default results/)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "reproduction.md"),
                    help="the report (default docs/reproduction.md)")
    ap.add_argument("--section", choices=["others", "lookahead"],
                    help="rewrite only this section of the report in place: others = Nexus and the urgency "
                         "scheduler (scripts/report_others.py), lookahead = look-ahead deferral "
                         "(scripts/report_lookahead.py), from their studies' results")
    ap.add_argument("--allow-missing", action="store_true",
                    help="write the report even when some studies have no results (marked 'not run')")
    args = ap.parse_args(argv)
    args.results = os.path.abspath(args.results)
    import report_lookahead  # noqa: E402 (the section on look-ahead deferral, issue 27)
    import report_others  # noqa: E402 (the section on Nexus and the urgency scheduler)
    if args.section == "lookahead":
        report_lookahead.splice(args.out, report_lookahead.section(args.results))
        print("report: rewrote the section on look-ahead deferral in %s" % rel(args.out), file=sys.stderr)
        return
    if args.section == "others":
        report_others.splice(args.out, report_others.section(args.results))
        print("report: rewrote the section on Nexus and the urgency scheduler in %s" % rel(args.out), file=sys.stderr)
        return
    papers, items, by_id = load_paper_values()
    PV.update(by_id)
    R = Results(args.results)
    cmps = build(R, PAPER_RULE)
    la = build(R, LOOKAHEAD)
    # every study the report reads must have run
    for name in STUDIES:
        try:
            (R.sweep(name) if (study_file(name) or {}).get("run") == "sweep" else None)
        except Missing:
            pass
    missing = {n: e for n, e in R.missing.items() if n != ABLATION_CLOCKWORK}
    if missing and not args.allow_missing:
        lines = ["report: the results of %d stud%s missing, so the report was not written:" % (
            len(missing), "y are" if len(missing) == 1 else "ies are")]
        for n, e in sorted(missing.items()):
            lines.append("  %-22s %s; compute it with: scripts/reproduce %s" % (n, e.why, n))
        lines.append("(or all at once: scripts/reproduce all; --allow-missing writes the report without them)")
        print("\n".join(lines), file=sys.stderr)
        sys.exit(2)
    text, gaps = render(R, papers, items, cmps, args, la)
    text = text.rstrip("\n") + "\n\n" + report_others.section(args.results)
    text = text.rstrip("\n") + "\n\n" + report_lookahead.section(args.results)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.out)
    print("report: wrote %s (%d gaps over %d%%%s)" % (rel(args.out), len(gaps), 100 * GAP,
                                                     "; not run: " + ", ".join(sorted(missing)) if missing else ""),
          file=sys.stderr)


if __name__ == "__main__":
    main()
