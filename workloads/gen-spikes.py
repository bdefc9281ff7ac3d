#!/usr/bin/env python3
"""Writes a per-application rate trace with random load spikes, the workload of the urgency
scheduler's evaluation (urgency-scheduler.md, Section V-A3: spikes of 1.25-2x the normal load
lasting 5-30 minutes, injected at random times for each application independently).

The output is a rate table (`rate_csv` in an experiment file, `--rate-csv`): a '#' comment line
recording how it was made, a header `second,APP1,APP2,...`, then one line per second with each
application's rate in requests/s. The simulator draws the arrivals itself (Poisson by default).

Rate of application i in second t:

    rate_i(t) = base_i * spike_i(t)

spike_i is 1 outside spikes. Each application gets its spikes at the times of a Poisson process
of --per-hour spikes per hour (at least --min-spikes over the trace), each with a height drawn
uniformly from [--height-min, --height-max] (the peak over the normal load) and a width (minutes)
from [--width-min, --width-max]; a spike ramps up linearly over its first quarter, holds, and ramps
down over its last quarter (overlapping spikes take the larger). --height H and --width W fix
every spike's height and width (the height x width study).

Each application draws from its own stream, seeded by "SEED:APP", so the output is deterministic
and one application's spikes do not change when others are added. Plain python3, stdlib only.

example:
    python3 workloads/gen-spikes.py --apps search,sql,options,transcode --base 2000,20,4,0.1 \\
        --seconds 7200 --seed 1 --out spikes.csv
"""
import argparse
import random
import sys


def spikes_of(rng, a):
    """[(start s, width s, height)] of one application."""
    out = []
    t = 0.0
    while True:
        t += rng.expovariate(a.per_hour / 3600.0) if a.per_hour > 0 else float("inf")
        if t >= a.seconds:
            break
        out.append(t)
    while len(out) < a.min_spikes:
        out.append(rng.uniform(0, a.seconds))
    res = []
    for start in sorted(out):
        h = a.height if a.height else rng.uniform(a.height_min, a.height_max)
        w = 60.0 * (a.width if a.width else rng.uniform(a.width_min, a.width_max))
        res.append((start, w, h))
    return res


def factor(spikes, t):
    f = 1.0
    for start, w, h in spikes:
        if not start <= t < start + w:
            continue
        x = (t - start) / w
        ramp = min(1.0, x / 0.25, (1 - x) / 0.25)
        f = max(f, 1 + (h - 1) * ramp)
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", required=True, help="application (model) names, comma-separated")
    ap.add_argument("--base", required=True, help="each application's normal rate (requests/s), comma-separated")
    ap.add_argument("--seconds", type=int, default=7200, help="trace length (default 7200)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--per-hour", type=float, default=1.0, help="mean spikes per application per hour (default 1)")
    ap.add_argument("--min-spikes", type=int, default=1, help="at least this many spikes per application (default 1)")
    ap.add_argument("--height-min", type=float, default=1.25, help="lowest spike height (default 1.25)")
    ap.add_argument("--height-max", type=float, default=2.0, help="highest spike height (default 2)")
    ap.add_argument("--width-min", type=float, default=5.0, help="shortest spike, minutes (default 5)")
    ap.add_argument("--width-max", type=float, default=30.0, help="longest spike, minutes (default 30)")
    ap.add_argument("--height", type=float, default=0.0, help="every spike this high (0: drawn)")
    ap.add_argument("--width", type=float, default=0.0, help="every spike this wide, minutes (0: drawn)")
    ap.add_argument("--decimals", type=int, default=3, help="decimals of the written rates (default 3)")
    ap.add_argument("--out", default="-", help="output file (default: standard output)")
    a = ap.parse_args()
    apps = [x for x in a.apps.split(",") if x]
    try:
        base = [float(x) for x in a.base.split(",")]
    except ValueError:
        sys.exit("gen-spikes: --base: expected numbers, comma-separated")
    if len(base) != len(apps) or not apps:
        sys.exit("gen-spikes: --base needs one rate per application (%d apps, %d rates)" % (len(apps), len(base)))
    if any(b < 0 or b > 1e9 for b in base):
        sys.exit("gen-spikes: --base: rates must be from 0 to 1e9")
    if not 1 <= a.seconds <= 10 ** 7:
        sys.exit("gen-spikes: --seconds must be from 1 to 1e7")
    if not (1 <= a.height_min <= a.height_max <= 100) or a.height < 0 or a.height > 100:
        sys.exit("gen-spikes: heights must satisfy 1 <= --height-min <= --height-max <= 100 (--height: 0 or up to 100)")
    if not (0 < a.width_min <= a.width_max) or a.width < 0 or a.per_hour < 0 or a.min_spikes < 0:
        sys.exit("gen-spikes: widths must satisfy 0 < --width-min <= --width-max; --per-hour, --min-spikes >= 0")
    spikes = [spikes_of(random.Random("%d:%s" % (a.seed, app)), a) for app in apps]
    lines = ["# generated by: python3 workloads/gen-spikes.py %s" % " ".join(sys.argv[1:]),
             "second," + ",".join(apps)]
    fmt = "%%.%df" % a.decimals
    for t in range(a.seconds):
        lines.append("%d,%s" % (t, ",".join(fmt % (b * factor(s, t + 0.5)) for b, s in zip(base, spikes))))
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)
    n = sum(len(s) for s in spikes)
    print("gen-spikes: %d apps x %d s, %d spikes (%s)" % (
        len(apps), a.seconds, n, "; ".join("%s: %s" % (app, ", ".join("%.0f min x%.2f at %.0f min" % (
            w / 60, h, st / 60) for st, w, h in s)) for app, s in zip(apps, spikes))), file=sys.stderr)


if __name__ == "__main__":
    main()
