#!/usr/bin/env python3
"""tests/check_dashboards.py ROOT [METRICS...] - deploy/'s alert rules and Grafana dashboard.

Always: promtool accepts deploy/alerts.yaml (`promtool check rules`) and its unit tests pass
(`promtool test rules deploy/alerts-test.yaml`: every alert fires where it should and not
elsewhere, and every alert has a test); the dashboard is a Grafana dashboard whose panels each
have a title and PromQL targets.

With METRICS (files holding what schedd, a frontend and a backend serve at /metrics:
tests/test_runtime.c fetches them from a running cluster), every metric an alert or a panel
names is one the processes export, and every label a selector names is one that metric has."""
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

root = sys.argv[1]
deploy = os.path.join(root, "deploy")
errors = []

# the expressions: (where, PromQL)
exprs = []
alerts = yaml.safe_load(open(os.path.join(deploy, "alerts.yaml")))
alert_names = set()
for g in alerts["groups"]:
    for r in g["rules"]:
        exprs.append(("alerts.yaml %s" % (r.get("alert") or r.get("record")), r["expr"]))
        if "alert" in r:
            alert_names.add(r["alert"])
dash = json.load(open(os.path.join(deploy, "grafana-dashboard.json")))
if not dash.get("uid") or not dash.get("title") or not dash.get("panels"):
    errors.append("grafana-dashboard.json: a dashboard needs uid, title and panels")
for p in dash.get("panels", []):
    if not p.get("title") or not p.get("targets"):
        errors.append("grafana-dashboard.json: panel %s has no title or no targets" % p.get("id"))
    for t in p.get("targets", []):
        exprs.append(("dashboard panel '%s'" % p.get("title"), t["expr"]))
for v in dash.get("templating", {}).get("list", []):
    q = v.get("query")
    if isinstance(q, dict):
        exprs.append(("dashboard variable %s" % v["name"], q["query"]))

# every alert is tested
tests = yaml.safe_load(open(os.path.join(deploy, "alerts-test.yaml")))
tested = {a["alertname"] for t in tests["tests"] for a in t.get("alert_rule_test", [])}
for a in sorted(alert_names - tested):
    errors.append("alerts-test.yaml has no test of alert %s" % a)

promtool = shutil.which("promtool")
if not promtool:
    errors.append("promtool not found (Debian's prometheus package; scripts/setup installs it)")
else:
    for args in (["check", "rules", "alerts.yaml"], ["test", "rules", "alerts-test.yaml"]):
        r = subprocess.run([promtool] + args, cwd=deploy, capture_output=True, text=True)
        if r.returncode:
            errors.append("promtool %s: %s%s" % (" ".join(args), r.stdout, r.stderr))

# metric names and the labels their selectors use, against what the processes export
NAME = re.compile(r"\b(symphony_[a-z0-9_]+)\b(\s*\{([^}]*)\})?")
LABEL = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)")
exported = {}  # name -> set of label names
for path in sys.argv[2:]:
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s", line)
        if m:
            labels = set(LABEL.findall(m.group(3) or "")) if m.group(3) else set()
            exported.setdefault(m.group(1), set()).update(k for k, _ in labels)
used = 0
if len(sys.argv) > 2:
    for where, e in exprs:
        for m in NAME.finditer(e):
            name = m.group(1)
            used += 1
            if name not in exported:
                errors.append("%s names %s, which no process exports" % (where, name))
                continue
            for k, _ in LABEL.findall(m.group(3) or ""):
                if k not in exported[name]:
                    errors.append("%s selects %s by label '%s', which it does not have (it has %s)" %
                                  (where, name, k, ", ".join(sorted(exported[name])) or "none"))
if errors:
    print("check_dashboards: " + "\n  ".join(errors))
    sys.exit(1)
print("check_dashboards: %d alerts tested by promtool, %d dashboard panels%s" %
      (len(alert_names), len(dash["panels"]),
       ", %d metric references found in /metrics of %d processes" % (used, len(sys.argv) - 2) if used else ""))
