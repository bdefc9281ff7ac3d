#!/usr/bin/env python3
"""Writes a synthetic "diurnal plus bursts" per-model rate trace for symphony.

The output is a rate table (`rate_csv` in an experiment file, `--rate-csv` on
the command line): a '#' comment line recording how it was made, a header
`second,MODEL1,MODEL2,...`, then one line per second giving each model's
offered rate in requests/s (finite, >= 0).  The simulator holds each rate for
its second and draws the arrivals itself (Poisson by default).

Rate of model i (0-based rank in --models) in second t:

    rate_i(t) = peak_total * share_i * diurnal_i(t) * burst_i(t) * noise_i(t)

share_i      base popularity, Zipf-like: (i+1)^-S normalised over the models
             (S = --zipf), so the list order is the popularity order.  The
             time-averaged mix therefore matches `"popularity": "zipf:S"` over
             the same model list, which is what a constant-rate calibration
             with `symphony goodput` should use.
diurnal_i    a day compressed into --seconds (hour of day h = 24 t / seconds):
             trough_i + (1 - trough_i) * sin^(2k)(pi (h - trough_hour - phase_i) / 24),
             i.e. a raised cosine with its minimum at --trough-hour (04:00 by
             default) and its maximum 12 h later, sharpened by k = --sharpness
             (k > 1: narrower peaks, wider troughs).  trough_i is drawn
             uniformly from [--trough-min, --trough-max] (the model's rate at
             its trough as a fraction of its peak) and phase_i uniformly from
             [-spread, +spread] hours (spread = --phase-spread), so models peak
             at different times while the total keeps a clear daily swing.
             diurnal_i is 1 at the model's own peak, so peak_total is the total
             rate if every model peaked at once, without bursts or noise.
burst_i      1 outside bursts.  Each model gets Poisson(--bursts * seconds/3600)
             bursts; each starts at a uniform time, lasts a log-uniform
             [--burst-min, --burst-max] seconds, multiplies the rate by a uniform
             [--burst-low, --burst-high] factor, with linear ramps of 1-2 s at
             both edges (overlapping bursts multiply).
noise_i      independent per-second multiplicative noise, 1 + N(0, --noise),
             clipped at 0.

Each model draws from its own random streams, seeded by the string
"SEED:MODEL" (parameters and bursts) and "SEED:MODEL:noise" (noise), so the
output is deterministic for given arguments, and a model's curve does not
change when other models are added or removed.  Plain python3, stdlib only.

example (the shipped trace workloads/diurnal-bursts.csv):
    python3 workloads/gen-diurnal-bursts.py --seed 1 --out workloads/diurnal-bursts.csv
"""
import argparse
import math
import os
import random
import sys

# The 24 models of experiments/large-changing.json, most popular first
# (a100 zoo profiles, a mix of light and heavy models).
DEFAULT_MODELS = (
    "BERT,SSDMobilenet,ResNet50,EfficientNetB7,MobileNetV2,EfficientNetV2L,"
    "InceptionV3,NASNetLarge,ResNet101,EfficientNetB0,DenseNet121,EfficientNetB4,"
    "VGG16,EfficientNetV2M,MobileNet,EfficientNetV2S,Xception,EfficientNetB5,"
    "ResNet152,EfficientNetB3,InceptionResNetV2,MobileNetV3Large,DenseNet201,VGG19"
)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help="comma-separated model names, most popular first (default: the 24 of large-changing)")
    ap.add_argument("--seconds", type=int, default=3600, help="trace length in seconds, one simulated day (default 3600)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--peak-total", type=float, default=80000.0,
                    help="total req/s if every model were at its diurnal peak at once, before bursts and noise "
                         "(default 80000)")
    ap.add_argument("--scale", type=float, default=1.0, help="extra factor on every rate (default 1)")
    ap.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent S of the base popularity (default 1; 0: equal)")
    ap.add_argument("--trough-min", type=float, default=0.15,
                    help="lowest trough/peak ratio of a model (default 0.15)")
    ap.add_argument("--trough-max", type=float, default=0.30,
                    help="highest trough/peak ratio of a model (default 0.30)")
    ap.add_argument("--trough-hour", type=float, default=4.0, help="hour of day of the mean trough (default 4)")
    ap.add_argument("--phase-spread", type=float, default=3.0,
                    help="per-model phase offsets uniform in +-this many hours (default 3)")
    ap.add_argument("--sharpness", type=float, default=1.5,
                    help="exponent k of the daily curve sin^(2k) (default 1.5; 1: plain raised cosine)")
    ap.add_argument("--bursts", type=float, default=3.0, help="mean bursts per model per 3600 s (default 3)")
    ap.add_argument("--burst-min", type=float, default=3.0, help="shortest burst in seconds (default 3)")
    ap.add_argument("--burst-max", type=float, default=60.0, help="longest burst in seconds (default 60)")
    ap.add_argument("--burst-low", type=float, default=2.0, help="lowest burst multiplier (default 2)")
    ap.add_argument("--burst-high", type=float, default=5.0, help="highest burst multiplier (default 5)")
    ap.add_argument("--noise", type=float, default=0.03, help="s.d. of the per-second multiplicative noise (default 0.03)")
    ap.add_argument("--decimals", type=int, default=0, help="decimals of the written rates (default 0)")
    ap.add_argument("--out", default="-", help="output CSV file (default: stdout)")
    a = ap.parse_args(argv)
    a.model_list = [m.strip() for m in a.models.split(",") if m.strip()]
    bad = []
    if not a.model_list:
        bad.append("--models: give at least one model")
    if len(set(a.model_list)) != len(a.model_list):
        bad.append("--models: names must be unique")
    if any("," in m or m.startswith("#") or m in ("second", "t", "time") for m in a.model_list):
        bad.append("--models: a name may not be second, t or time or start with '#'")
    if a.seconds < 1:
        bad.append("--seconds must be >= 1")
    for k in ("peak_total", "scale", "zipf", "phase_spread", "bursts", "noise"):
        v = getattr(a, k)
        if not math.isfinite(v) or v < 0:
            bad.append("--%s must be finite and >= 0" % k.replace("_", "-"))
    if not 0 <= a.trough_min <= a.trough_max <= 1:
        bad.append("need 0 <= --trough-min <= --trough-max <= 1")
    if not a.sharpness > 0:
        bad.append("--sharpness must be > 0")
    if not 0 < a.burst_min <= a.burst_max:
        bad.append("need 0 < --burst-min <= --burst-max")
    if not 0 < a.burst_low <= a.burst_high:
        bad.append("need 0 < --burst-low <= --burst-high")
    if not 0 <= a.decimals <= 6:
        bad.append("--decimals must be in 0..6")
    if bad:
        ap.error("; ".join(bad))
    return a


def poisson(rng, mean):
    """Knuth's method; fine for the small means used here."""
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def model_curve(a, name, share):
    """Per-second rates of one model, and its drawn parameters."""
    rng = random.Random("%d:%s" % (a.seed, name))
    noise_rng = random.Random("%d:%s:noise" % (a.seed, name))
    n = a.seconds
    trough = rng.uniform(a.trough_min, a.trough_max)
    phase = rng.uniform(-a.phase_spread, a.phase_spread)
    bursts = []
    for _ in range(poisson(rng, a.bursts * n / 3600.0)):
        start = rng.uniform(0, n)
        length = math.exp(rng.uniform(math.log(a.burst_min), math.log(a.burst_max)))
        factor = rng.uniform(a.burst_low, a.burst_high)
        ramp = min(rng.uniform(1.0, 2.0), length / 2)
        bursts.append((start, length, factor, ramp))
    base = a.peak_total * a.scale * share
    rates = []
    for t in range(n):
        mid = t + 0.5  # the rate of second t, taken at its middle
        h = 24.0 * mid / n
        x = math.sin(math.pi * (h - a.trough_hour - phase) / 24.0) ** 2
        d = trough + (1.0 - trough) * x ** a.sharpness
        b = 1.0
        for start, length, factor, ramp in bursts:
            if start <= mid < start + length:
                edge = min(mid - start, start + length - mid)
                b *= 1.0 + (factor - 1.0) * min(1.0, edge / ramp)
        noise = max(0.0, 1.0 + noise_rng.gauss(0.0, a.noise)) if a.noise > 0 else 1.0
        rates.append(base * d * b * noise)
    return rates, trough, phase, bursts


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    names = a.model_list
    w = [(i + 1) ** -a.zipf for i in range(len(names))]
    tot = sum(w)
    cols, info = [], []
    for name, wi in zip(names, w):
        rates, trough, phase, bursts = model_curve(a, name, wi / tot)
        cols.append(rates)
        info.append((name, wi / tot, trough, phase, bursts))
    cmd = "python3 workloads/gen-diurnal-bursts.py " + " ".join(
        "--%s %s" % (k, v) for k, v in (
            ("models", ",".join(names)), ("seconds", a.seconds), ("seed", a.seed),
            ("peak-total", "%g" % a.peak_total), ("scale", "%g" % a.scale), ("zipf", "%g" % a.zipf),
            ("trough-min", "%g" % a.trough_min), ("trough-max", "%g" % a.trough_max),
            ("trough-hour", "%g" % a.trough_hour), ("phase-spread", "%g" % a.phase_spread),
            ("sharpness", "%g" % a.sharpness), ("bursts", "%g" % a.bursts),
            ("burst-min", "%g" % a.burst_min), ("burst-max", "%g" % a.burst_max),
            ("burst-low", "%g" % a.burst_low), ("burst-high", "%g" % a.burst_high),
            ("noise", "%g" % a.noise), ("decimals", a.decimals)))
    fmt = "%%.%df" % a.decimals
    lines = ["# generated by: %s (seed %d; diurnal day compressed into %d s, Zipf popularity, bursts, noise)"
             % (cmd, a.seed, a.seconds),
             "second," + ",".join(names)]
    totals = []
    for t in range(a.seconds):
        vals = [fmt % c[t] for c in cols]
        totals.append(sum(float(v) for v in vals))
        lines.append("%d,%s" % (t, ",".join(vals)))
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
        nb = sum(len(x[4]) for x in info)
        print("%s: %d models x %d s, total rate min %.0f / mean %.0f / max %.0f req/s, %d bursts, %.1f M requests"
              % (a.out, len(names), a.seconds, min(totals), sum(totals) / len(totals), max(totals), nb,
                 sum(totals) / 1e6), file=sys.stderr)


if __name__ == "__main__":
    main()
