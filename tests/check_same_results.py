#!/usr/bin/env python3
"""scripts/same-results: a build compared with itself is identical in every case
(exit 0); with a build that decides differently (here a wrapper adding GPU-time
jitter) each case differs, naming fields (exit 1); a missing binary is a usage
error (exit 2)."""
import os
import subprocess
import sys
import tempfile

sym, root = sys.argv[1], sys.argv[2]
script = os.path.join(root, "scripts", "same-results")


def run(*args):
    p = subprocess.run([sys.executable, script, "--bin", sym, "--quick"] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


rc, out = run("--other", sym)
print(out)
assert rc == 0, rc
assert "same-results: 3 of 3 cases identical" in out, out
assert out.count(" identical (bad rate ") == 3, out

with tempfile.TemporaryDirectory() as d:
    w = os.path.join(d, "jittered")
    with open(w, "w") as f:
        f.write('#!/bin/sh\nexec "%s" "$@" --jitter 0.05\n' % sym)
    os.chmod(w, 0o755)
    rc, out = run("--other", w)
    print(out)
    assert rc == 1, rc
    assert out.count("DIFFER: .") == 3, out
    assert "0 of 3 cases identical, 3 differ" in out, out

rc, out = run("--other", "/nonexistent/symphony")
print(out)
assert rc == 2 and "not an executable" in out, (rc, out)
print("check_same_results: ok")
