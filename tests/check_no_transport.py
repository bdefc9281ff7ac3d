#!/usr/bin/env python3
"""tests/check_no_transport.py SYMPHONY - `symphony` itself does not load the
runtime's transport or HTTP library (libfabric's providers act when loaded:
libinfinipath installs its own SIGINT handler), and the runtime's commands
still run, from the module symphony-runtime.so (cli/rtmodule.c)."""
import subprocess
import sys

exe = sys.argv[1]
libs = subprocess.run(["ldd", exe], capture_output=True, text=True, check=True).stdout
bad = [l.strip() for l in libs.splitlines() if "libfabric" in l or "libmicrohttpd" in l]
if bad:
    print("check_no_transport: %s loads %s at start" % (exe, ", ".join(bad)))
    sys.exit(1)
# a runtime command loads the module, and the module answers
r = subprocess.run([exe, "schedd", "--check"], capture_output=True, text=True)
if r.returncode != 0 or "the configuration is valid" not in r.stdout:
    print("check_no_transport: `symphony schedd --check` exited %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))
    sys.exit(1)
print("check_no_transport: %s loads neither libfabric nor libmicrohttpd; schedd --check ran from the module" % exe)
