#!/usr/bin/env python3
"""tests/check_reference.py SYMPHONY DOCS/CLI.MD - the command-line reference
in docs/cli.md is what `symphony help --markdown` prints from the command
table; fails with the first differing line when it is not."""
import subprocess
import sys

got = subprocess.run([sys.argv[1], "help", "--markdown"], capture_output=True, text=True, check=True).stdout
with open(sys.argv[2], encoding="utf-8") as f:
    want = f.read()
if got == want:
    print("check_reference: docs/cli.md matches the command table")
    sys.exit(0)
g, w = got.splitlines(), want.splitlines()
for i in range(max(len(g), len(w))):
    a = g[i] if i < len(g) else "(end)"
    b = w[i] if i < len(w) else "(end)"
    if a != b:
        print("check_reference: docs/cli.md differs from `symphony help --markdown` at line %d:" % (i + 1))
        print("  docs/cli.md: %s" % b)
        print("  generated:   %s" % a)
        break
print("regenerate it: build/symphony help --markdown > docs/cli.md")
sys.exit(1)
