#!/usr/bin/env python3
"""tests/check_netns.py SYMPHONY - the runtime across real network stacks.

schedd, a frontend, two backends and loadgen each run in a network namespace
of their own (the test's, named symtest-PID-ROLE), joined by veth pairs to a
bridge in a hub namespace, on addresses of a private /24 of the test's own:
addressing, binding and the tcp provider go through four separate network
stacks, not loopback. Where the kernel has sch_netem, each link gets 1 ms
+- 0.2 ms of delay (tc netem); where it does not (this machine's kernel), the
test runs without added delay and says so. Exits 77 (skipped) where network
namespaces cannot be created (not root, no ip). Everything it creates is
removed at the end, whatever happens.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

exe = os.path.abspath(sys.argv[1])
pid = os.getpid()
tag = "symtest%d" % pid
net = "10.%d.%d" % (77 + pid % 100, (pid // 100) % 250)
roles = ["schedd", "fe", "be", "lg"]
ip = {r: "%s.%d" % (net, i + 1) for i, r in enumerate(roles)}
made = []
procs = []


def run(*args, check=True):
    return subprocess.run(list(args), capture_output=True, text=True, check=check)


def ns(role):
    return "%s-%s" % (tag, role)


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    for n in reversed(made):
        run("ip", "netns", "del", n, check=False)


def skip(why):
    print("check_netns: skipped: %s" % why)
    cleanup()
    sys.exit(77)


if not shutil.which("ip"):
    skip("no ip command (iproute2)")
try:
    run("ip", "netns", "add", ns("hub"))
except subprocess.CalledProcessError as e:
    skip("cannot create a network namespace: %s" % e.stderr.strip())
made.append(ns("hub"))
try:
    run("ip", "-n", ns("hub"), "link", "add", "br0", "type", "bridge")
    run("ip", "-n", ns("hub"), "link", "set", "br0", "up")
    netem = None
    for i, r in enumerate(roles):
        run("ip", "netns", "add", ns(r))
        made.append(ns(r))
        a, b = "v%d%s" % (pid % 10000, r[:2]), "h%d%s" % (pid % 10000, r[:2])
        run("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        run("ip", "link", "set", a, "netns", ns(r))
        run("ip", "link", "set", b, "netns", ns("hub"))
        run("ip", "-n", ns("hub"), "link", "set", b, "master", "br0")
        run("ip", "-n", ns("hub"), "link", "set", b, "up")
        run("ip", "-n", ns(r), "addr", "add", ip[r] + "/24", "dev", a)
        run("ip", "-n", ns(r), "link", "set", a, "up")
        run("ip", "-n", ns(r), "link", "set", "lo", "up")
        if netem is not False:
            t = run("ip", "netns", "exec", ns(r), "tc", "qdisc", "add", "dev", a, "root", "netem", "delay", "1ms",
                    "0.2ms", check=False)
            netem = t.returncode == 0
            if not netem:
                netem_why = (t.stderr.strip() or "tc failed").splitlines()[0]
    if netem:
        print("check_netns: tc netem: 1 ms +- 0.2 ms on every link")
    else:
        print("check_netns: no sch_netem in this kernel (%s): running without added delay" % netem_why)

    d = tempfile.mkdtemp(prefix="symphony-netns-")
    keys = os.path.join(d, "keys")
    run(exe, "keygen", "cluster", keys, "--frontends", "1", "--backends", "2", "--quiet")
    cfg = os.path.join(d, "cluster.json")
    conf = {"models": [{"name": "m", "alpha_ms": 2.5, "beta_ms": 2.5}], "slo_ms": 60, "arrival": "poisson",
            "seed": 3, "network": {"ctrl_ms": 4, "data_ms": 0.1, "resp_ms": 6},
            "runtime": {"keys_dir": keys, "host": ip["be"], "schedd": ip["schedd"] + ":7100",
                        "frontends": [{"fabric": ip["fe"] + ":7101", "clients": ip["fe"] + ":7102"}],
                        "backends": 2, "http_base": 0, "heartbeat_ms": 10, "failure_ms": 1000,
                        "pool_slots": 512, "input_max": 4096, "input_bytes": 1000}}
    with open(cfg, "w") as f:
        json.dump(conf, f)

    def start(role, log, *args):
        out = open(os.path.join(d, log), "w")
        p = subprocess.Popen(["ip", "netns", "exec", ns(role), exe] + list(args), stdout=out, stderr=out)
        procs.append(p)
        return p

    start("schedd", "schedd.log", "schedd", cfg, "--json", os.path.join(d, "schedd.json"))
    start("fe", "frontend0.log", "frontend", cfg, "--id", "0")
    for i in range(2):
        start("be", "backend%d.log" % i, "backend", cfg, "--id", str(i))
    end = time.time() + 20
    while time.time() < end:
        with open(os.path.join(d, "schedd.log")) as f:
            log = f.read()
        if log.count("registered: GPU") == 2 and "frontend 0 registered" in log:
            break
        time.sleep(0.05)
    else:
        print("check_netns: the cluster did not come up in 20 s; logs in %s" % d)
        cleanup()
        sys.exit(1)
    lg = start("lg", "loadgen.log", "loadgen", cfg, "--rate", "200", "--duration", "3", "--warmup", "0.5",
               "--json", os.path.join(d, "loadgen.json"), "--quiet")
    rc = lg.wait(timeout=60)
    for p in procs[:-1]:
        p.send_signal(signal.SIGTERM)
    for p in procs[:-1]:
        p.wait(timeout=20)
    with open(os.path.join(d, "loadgen.json")) as f:
        j = json.load(f)
    chk = j["checks"]
    ok = (rc == 0 and chk["answered"] == chk["requests"] and chk["duplicate_answers"] == 0 and
          chk["wrong_outputs"] == 0 and j["served"] > 0.9 * j["offered"] and
          all(p.returncode == 0 for p in procs))
    print("check_netns: %d requests from %s to a frontend at %s, schedd at %s, backends at %s: %d answered, "
          "%d served on time of %d offered; exit statuses %s" %
          (chk["requests"], ip["lg"], ip["fe"], ip["schedd"], ip["be"], chk["answered"], j["served"],
           j["offered"], [p.returncode for p in procs]))
    if not ok:
        print("check_netns: FAILED; logs in %s" % d)
        cleanup()
        sys.exit(1)
    shutil.rmtree(d)
finally:
    cleanup()
