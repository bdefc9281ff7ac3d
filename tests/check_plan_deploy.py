#!/usr/bin/env python3
"""tests/check_plan_deploy.py SYMPHONY SOURCE_ROOT STRICT - the plan becomes a deployment
(the `plan-deploy` test).

`symphony plan --emit-cluster planned.json` answers how many GPUs serve ResNet50 (SLO 25 ms) at
2000 req/s, planning with the runtime's network delays on tcp loopback, and writes the cluster
file; `scripts/cluster-local planned.json --loadgen` starts that cluster as it is (one
frontend, a backend per planned GPU) and offers it the target rate. Every request must be
answered once; with STRICT (the release build) the measured bad rate must meet the plan's
criterion (every model at most 1% late or dropped) in one of up to three runs (below). A sanitizer build's processes run several
times slower than the plan's profile says, so there only the deployment and the answers are
checked. Also: a plan no count serves writes nothing."""
import json
import os
import subprocess
import sys
import tempfile

symphony, root, strict = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3] == "true"
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL: " + what)


tmp = tempfile.mkdtemp(prefix="symphony-plan-deploy-")
# The cluster runs without meson's MALLOC_PERTURB_ (a debugging aid that fills every block glibc
# hands out or takes back): the criterion is timing, and with it the same deployment was 1.8-3.2%
# bad against 0.15-1.0% without (the sanitizer builds check the memory).
os.environ.pop("MALLOC_PERTURB_", None)
env = dict(os.environ, SYMPHONY=symphony, SYM_SETUP_DONE="1", SYM_LOG_DIR=os.path.join(tmp, "logs"),
           BUILD_DIR=os.path.dirname(symphony))
net = ["--ctrl-ms", "0.3", "--data-ms", "0.05", "--resp-ms", "1", "--done-ms", "0.2"]
r = subprocess.run([symphony, "plan", "--profile", "1.053,5.072", "--slo", "25", "--target-rate", "2000",
                    "--duration", "10", "--warmup", "2"] + net + ["--emit-cluster", "planned.json", "--json",
                                                                    "plan.json", "--quiet"],
                   cwd=tmp, capture_output=True, text=True, timeout=300)
check(r.returncode == 0, "plan: " + r.stderr)
planned = json.load(open(os.path.join(tmp, "planned.json")))
plan = json.load(open(os.path.join(tmp, "plan.json")))
gpus = plan["policies"][0]["gpus"]
check(planned["gpus"] == gpus and planned["runtime"]["backends"] == gpus and planned["runtime"]["frontends"] == 1,
      "the cluster file has the plan's %s GPUs: %s" % (gpus, planned.get("runtime")))
check(planned["rate"] == 2000 and planned["policy"] == "symphony", "the target rate and the policy")
port = 21000 + (os.getpid() % 400) * 20
# The criterion is timing: a deferred batch has about alpha (1 ms) of slack, and this 2-core VM
# stalls processes for several ms at random (a run whose backends started batches up to 16 ms late,
# p99 7-9 ms, was 4.2% bad; quiet runs 0.2-0.9%). So, as bench-sched's --retries, a deployment that
# misses it is run again, up to three times in all; every run must answer every request once.
met = []
for attempt in range(3 if strict else 1):
    out = "lg%d.json" % attempt
    r = subprocess.run(["bash", os.path.join(root, "scripts", "cluster-local"), "planned.json", "--port-base",
                        str(port), "--loadgen", "--json", out, "--quiet"], cwd=tmp, env=env, capture_output=True,
                       text=True, timeout=240)
    check(r.returncode == 0, "cluster-local planned.json --loadgen: exit %d: %s" % (r.returncode, r.stderr[-2000:]))
    if not os.path.exists(os.path.join(tmp, out)):
        break
    lg = json.load(open(os.path.join(tmp, out)))
    c = lg["checks"]
    check(c["answered"] == c["requests"] and c["unanswered"] == 0 and c["duplicate_answers"] == 0,
          "every request answered once: %s" % c)
    print("planned %d GPUs for 2000 req/s; the runtime on them (run %d): bad rate %.4f (criterion: %s, <= %g)"
          % (gpus, attempt + 1, lg["bad_rate"], lg.get("criterion"), lg.get("max_bad_rate", 0.01)))
    met.append((lg["meets_criterion"], lg["bad_rate"], lg.get("worst_model"), lg.get("worst_model_bad_rate")))
    if lg["meets_criterion"] or r.returncode:
        break
if strict and met:
    check(any(m[0] for m in met), "the runtime meets the plan's criterion at the target in one of %d runs: %s"
          % (len(met), "; ".join("bad rate %s, worst %s %s" % m[1:] for m in met)))
# nothing written when no count serves the rate
r = subprocess.run([symphony, "plan", "--profile", "1.053,5.072", "--slo", "25", "--target-rate", "20000",
                    "--max-gpus", "2", "--duration", "3", "--warmup", "1", "--emit-cluster", "none.json", "--quiet"],
                   cwd=tmp, capture_output=True, text=True, timeout=120)
check(r.returncode == 1 and "on no count up to --max-gpus" in r.stderr and not os.path.exists(
    os.path.join(tmp, "none.json")), "an unservable plan writes no cluster: %d %s" % (r.returncode, r.stderr))
if fails:
    print("logs kept in", tmp)
    sys.exit(1)
subprocess.run(["rm", "-rf", tmp])
print("ok")
