#!/usr/bin/env python3
"""tests/check_no_transport.py SYMPHONY - `symphony` itself does not load the
runtime's transport or HTTP library (libfabric's providers act when loaded:
libinfinipath installs its own SIGINT handler), and the runtime's commands
still run, from the module symphony-runtime.so (cli/rtmodule.c)."""
import os
import subprocess
import sys
import tempfile

exe = sys.argv[1]
libs = subprocess.run(["ldd", exe], capture_output=True, text=True, check=True).stdout
bad = [l.strip() for l in libs.splitlines()
       if "libfabric" in l or "libmicrohttpd" in l or "libsodium" in l or "libcurl" in l]
if bad:
    print("check_no_transport: %s loads %s at start" % (exe, ", ".join(bad)))
    sys.exit(1)
# runtime commands load the module, and the module answers: keygen writes a secret
# (mode 0600), schedd --check takes it, and refuses to start without one
with tempfile.TemporaryDirectory() as d:
    key = os.path.join(d, "cluster.key")
    r = subprocess.run([exe, "keygen", key, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0 or (os.stat(key).st_mode & 0o777) != 0o600:
        print("check_no_transport: `symphony keygen` exited %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    r = subprocess.run([exe, "schedd", "--check", "--secret-file", key], capture_output=True, text=True)
    if r.returncode != 0 or "the configuration is valid" not in r.stdout:
        print("check_no_transport: `symphony schedd --check` exited %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    os.chmod(key, 0o644)
    r = subprocess.run([exe, "schedd", "--check", "--secret-file", key], capture_output=True, text=True)
    if r.returncode != 2 or "can be read by others" not in r.stderr:
        print("check_no_transport: schedd took a secret others can read (exit %d):\n%s" % (r.returncode, r.stderr))
        sys.exit(1)
r = subprocess.run([exe, "schedd", "--check"], capture_output=True, text=True)
if r.returncode != 2 or "names no secret" not in r.stderr:
    print("check_no_transport: schedd ran without a secret (exit %d):\n%s" % (r.returncode, r.stderr))
    sys.exit(1)
print("check_no_transport: %s loads neither libfabric, libmicrohttpd, libsodium nor libcurl; keygen and schedd --check "
      "ran from the module" % exe)
