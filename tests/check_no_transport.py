#!/usr/bin/env python3
"""tests/check_no_transport.py SYMPHONY - `symphony` itself does not load the
runtime's transport or HTTP library (libfabric's providers act when loaded:
libinfinipath installs its own SIGINT handler), the runtime module does not load
gRPC's or libtorch's (each has a module of its own), and the runtime's commands
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
# nor does the runtime module load gRPC's or libtorch's libraries: their modules (symphony-grpc.so,
# symphony-torch.so) are loaded only by a process that uses them
module = os.path.join(os.path.dirname(os.path.abspath(exe)), "symphony-runtime.so")
if os.path.exists(module):
    mlibs = subprocess.run(["ldd", module], capture_output=True, text=True, check=True).stdout
    bad = [l.strip() for l in mlibs.splitlines() if "libgrpc" in l or "libprotobuf" in l or "libtorch" in l]
    if bad:
        print("check_no_transport: %s loads %s" % (module, ", ".join(bad)))
        sys.exit(1)
# runtime commands load the module, and the module answers: keygen makes a CA and the
# members' credentials (secret files mode 0600), schedd --check takes its own, and refuses
# one others can read, another member's, and none
with tempfile.TemporaryDirectory() as d:
    keys = os.path.join(d, "keys")
    r = subprocess.run([exe, "keygen", "cluster", keys, "--frontends", "1", "--backends", "1", "--quiet"],
                       capture_output=True, text=True)
    cred = os.path.join(keys, "schedd-0.cred")
    if r.returncode != 0 or (os.stat(cred).st_mode & 0o777) != 0o600 or \
            (os.stat(os.path.join(keys, "ca.key")).st_mode & 0o777) != 0o600:
        print("check_no_transport: `symphony keygen cluster` exited %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    r = subprocess.run([exe, "schedd", "--check", "--keys-dir", keys], capture_output=True, text=True)
    if r.returncode != 0 or "the configuration is valid" not in r.stdout:
        print("check_no_transport: `symphony schedd --check` exited %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    r = subprocess.run([exe, "schedd", "--check", "--keys-dir", keys, "--credential",
                        os.path.join(keys, "backend-0.cred")], capture_output=True, text=True)
    if r.returncode != 2 or "holds the credential of backend 0, not of schedd 0" not in r.stderr:
        print("check_no_transport: schedd took a backend's credential (exit %d):\n%s" % (r.returncode, r.stderr))
        sys.exit(1)
    os.chmod(cred, 0o644)
    r = subprocess.run([exe, "schedd", "--check", "--keys-dir", keys], capture_output=True, text=True)
    if r.returncode != 2 or "can be read by others" not in r.stderr:
        print("check_no_transport: schedd took a credential others can read (exit %d):\n%s" % (r.returncode, r.stderr))
        sys.exit(1)
r = subprocess.run([exe, "schedd", "--check"], capture_output=True, text=True)
if r.returncode != 2 or "names no keys" not in r.stderr:
    print("check_no_transport: schedd ran without keys (exit %d):\n%s" % (r.returncode, r.stderr))
    sys.exit(1)
print("check_no_transport: %s loads neither libfabric, libmicrohttpd, libsodium nor libcurl; keygen and schedd --check "
      "ran from the module" % exe)
