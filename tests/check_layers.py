#!/usr/bin/env python3
"""tests/check_layers.py - the layers' include rules (docs/design.md, Layers).

Each folder may include only the folders below it:

    core/            nothing of ours
    partition/       core/ (the partitioning MILP, with CBC)
    workloads/       core/
    profiles/        core/
    control/         core/ (the control plane's decisions: pure, issue 31)
    experiment/      core/, workloads/, profiles/, partition/, control/
    sim/             experiment/ and what it may include
    runtime/         experiment/ and what it may include (never sim/)
    urgency/         core/ (libsymphony-urgency: the urgency scheduler's application API)
    cli/             everything

core/policy_api.h (the core's state and services, for policy authors) is
included only inside core/: the drivers see the opaque core of core/core.h
and the words they share with it (core/vocab.h). The core's two sides,
core/models.h (shards, candidates; core/shard.h) and core/ranker.h (GPUs,
matching), are included outside core/ only by runtime/sched.c, which runs
them on threads of their own (docs/design.md).

Within the layers, no two modules (a .c file and its .h, by name) include each other, directly
or through others: a module's callers are above it, never below (a circle means neither can be
read, built or tested without the other). core/ is exempt: the core calls its policies and they
call the core back through core/policy_api.h, by design (docs/design.md).

Exits 1 naming every include that breaks a rule, and every circle."""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
BASE = {"core", "workloads", "profiles", "control"}
ALLOWED = {
    "core": {"core"},
    "partition": {"core", "partition"},
    "workloads": {"core", "workloads"},
    "profiles": {"core", "profiles"},
    "control": {"core", "control"},
    "experiment": BASE | {"experiment", "partition"},
    "sim": BASE | {"experiment", "partition", "sim"},
    "runtime": BASE | {"experiment", "partition", "runtime"},
    "urgency": {"core", "urgency"},
    "cli": BASE | {"experiment", "partition", "sim", "runtime", "cli"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')
CORE_ONLY = {"core/policy_api.h"}
CORE_SIDES = {"core/shard.h", "core/models.h", "core/ranker.h"}
SPLIT_CORE = "runtime/sched.c"

bad = []
for layer, allowed in ALLOWED.items():
    for dirpath, _, files in os.walk(os.path.join(ROOT, layer)):
        for f in files:
            if not f.endswith((".c", ".h", ".cu", ".cpp")):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) in ALLOWED and m.group(1) not in allowed:
                        bad.append("%s:%d: %s/ may not include %s/ (%s)"
                                   % (os.path.relpath(path, ROOT), n, layer, m.group(1), line.strip()))
                    elif m and layer != "core" and "%s/%s" % m.groups() in CORE_ONLY:
                        bad.append("%s:%d: %s/ may not include %s/%s (policies only; drivers use core/core.h)"
                                   % ((os.path.relpath(path, ROOT), n, layer) + m.groups()))
                    elif (m and layer != "core" and "%s/%s" % m.groups() in CORE_SIDES
                          and os.path.relpath(path, ROOT) != SPLIT_CORE):
                        bad.append("%s:%d: %s/ may not include %s/%s (the core's insides: drivers use core/core.h "
                                   "and core/vocab.h; only %s runs the two sides itself)"
                                   % ((os.path.relpath(path, ROOT), n, layer) + m.groups() + (SPLIT_CORE,)))
# circles between modules (core/ exempt)
edges = {}
for layer in ALLOWED:
    for dirpath, _, files in os.walk(os.path.join(ROOT, layer)):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            mod = os.path.splitext(os.path.relpath(path, ROOT))[0]
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    m = INCLUDE.match(line)
                    if m:
                        to = os.path.splitext("%s/%s" % m.groups())[0]
                        if to != mod:
                            edges.setdefault(mod, set()).add(to)
index, low, stack, on, circles = {}, {}, [], set(), []


def strong(v):
    """Tarjan's strongly connected components (recursive: the tree is shallow)."""
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in sorted(edges.get(v, ())):
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1 and not all(c.startswith("core/") for c in comp):
            circles.append(sorted(comp))


sys.setrecursionlimit(10000)
for v in sorted(edges):
    if v not in index:
        strong(v)
for c in circles:
    bad.append("an include circle: %s (each reaches the others)" % ", ".join(c))
for b in bad:
    print(b)
if bad:
    print("check_layers: %d include(s) break the layers of docs/design.md" % len(bad))
    sys.exit(1)
print("check_layers: every include follows the layers, and no modules include each other in a circle")
