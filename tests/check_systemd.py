#!/usr/bin/env python3
"""tests/check_systemd.py SYMPHONY ROOT - deploy/systemd's units for bare-metal hosts.

Every unit passes `systemd-analyze verify` with no warning (template units as instance 0), with
the binary path pointed at the built symphony. Then each service's command line, its paths
pointed at a cluster made here (symphony keygen cluster: a CA and every member's credential;
a cluster file with a standby), runs with --check: symphony accepts its flags, loads the
credential its LoadCredential names, and finds it is the member's own (role and id). The
autoscaler's command is checked for the add and remove commands it needs. Exits 77 (skipped)
where systemd-analyze is missing."""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sym, root = os.path.abspath(sys.argv[1]), sys.argv[2]
units_dir = os.path.join(root, "deploy", "systemd")
analyze = shutil.which("systemd-analyze")
if not analyze:
    print("check_systemd: systemd-analyze not found (Debian's systemd package); skipped")
    sys.exit(77)
errors = []
units = sorted(glob.glob(os.path.join(units_dir, "*.service")) + glob.glob(os.path.join(units_dir, "*.target")))
if not units:
    sys.exit("check_systemd: no unit in deploy/systemd")
tmp = tempfile.mkdtemp(prefix="sym-systemd-")
try:
    # the units as they would be installed, the binary being the one built here
    vdir = os.path.join(tmp, "units")
    os.makedirs(vdir)
    paths = []
    for u in units:
        name = os.path.basename(u).replace("@.", "@0.")
        text = open(u).read().replace("/usr/local/bin/symphony", sym)
        p = os.path.join(vdir, name)
        open(p, "w").write(text)
        paths.append(p)
    r = subprocess.run([analyze, "verify", "--man=no"] + paths, capture_output=True, text=True, cwd=vdir)
    out = (r.stdout + r.stderr).strip()
    if r.returncode or out:
        errors.append("systemd-analyze verify: %s" % (out or "exit %d" % r.returncode))
    # a cluster for the command lines: keys, a cluster file naming them, a standby
    keys = os.path.join(tmp, "keys")
    r = subprocess.run([sym, "keygen", "cluster", keys, "--frontends", "1", "--backends", "1", "--standby"],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("check_systemd: keygen: " + r.stderr)
    cluster = os.path.join(tmp, "cluster.json")
    json.dump({"models": ["ResNet50"], "slo_ms": 25, "runtime": {
        "frontends": 1, "backends": 1, "keys_dir": keys,
        "schedd": ["127.0.0.1:7700", "127.0.0.1:7710"]}}, open(cluster, "w"))
    state = os.path.join(tmp, "state")
    os.makedirs(state)
    checked = 0
    for u in units:
        if not u.endswith(".service"):
            continue
        text = open(u).read().replace("%i", "0")
        exe = re.search(r"^ExecStart=(.*)$", text, re.M)
        if not exe:
            errors.append("%s: no ExecStart" % os.path.basename(u))
            continue
        cred = re.search(r"^LoadCredential=cred:(\S+)$", text, re.M)
        line = exe.group(1).replace("$$", "$")
        argv = shlex.split(line)
        if argv[0] != "/usr/local/bin/symphony":
            errors.append("%s: ExecStart runs %s, not /usr/local/bin/symphony" % (os.path.basename(u), argv[0]))
            continue
        argv[0] = sym
        argv = [a.replace("/etc/symphony/cluster.json", cluster).replace("/var/lib/symphony", state) for a in argv]
        if argv[1] == "autoscale":
            for flag in ("--add-cmd", "--remove-cmd"):
                if flag not in argv or "SYMPHONY_BACKEND_ID" not in argv[argv.index(flag) + 1]:
                    errors.append("%s: %s must start or stop backend $SYMPHONY_BACKEND_ID" %
                                  (os.path.basename(u), flag))
            # the backend unit reads the sub-cluster it was started for from the file the add command writes
            unit = open(os.path.join(os.path.dirname(u), "symphony-backend@.service")).read()
            env = re.search(r"^EnvironmentFile=-(\S+)$", unit, re.M)
            add = argv[argv.index("--add-cmd") + 1] if "--add-cmd" in argv else ""
            if not env or "SYMPHONY_SUBCLUSTER=${SYMPHONY_SUBCLUSTER} > " + env.group(1).replace(
                    "%i", "${SYMPHONY_BACKEND_ID}") not in add:
                errors.append("%s: --add-cmd must write SYMPHONY_SUBCLUSTER to the backend unit's EnvironmentFile"
                              % os.path.basename(u))
            continue
        if not cred:
            errors.append("%s: no LoadCredential=cred:... (each process gets only its own key)" % os.path.basename(u))
            continue
        src = cred.group(1).replace("/etc/symphony/keys", keys)
        argv = [a.replace("${CREDENTIALS_DIRECTORY}/cred", src) for a in argv]
        r = subprocess.run(argv + ["--check"], capture_output=True, text=True)
        if r.returncode or "the configuration is valid" not in r.stdout:
            errors.append("%s: `%s --check` exits %d: %s" % (os.path.basename(u), " ".join(argv), r.returncode,
                                                             (r.stdout + r.stderr).strip()))
        checked += 1
finally:
    shutil.rmtree(tmp, ignore_errors=True)
if errors:
    print("check_systemd: " + "\n  ".join(errors))
    sys.exit(1)
print("check_systemd: %d units verified by systemd-analyze; %d command lines accepted with their own credential"
      % (len(units), checked))
