#!/usr/bin/env python3
"""tests/check_deploy.py ROOT - the Kubernetes examples in deploy/ parse (python3-yaml), the HPA
is an autoscaling/v2 HorizontalPodAutoscaler on the adapter's external metric with an AverageValue
target of 1, and the series the adapter rule reads is one schedd exports (runtime/schedd.c)."""
import os
import re
import sys

import yaml

root = sys.argv[1]
errors = []
hpa = yaml.safe_load(open(os.path.join(root, "deploy", "backend-hpa.yaml")))
rules = yaml.safe_load(open(os.path.join(root, "deploy", "prometheus-adapter-rules.yaml")))
if hpa.get("apiVersion") != "autoscaling/v2" or hpa.get("kind") != "HorizontalPodAutoscaler":
    errors.append("backend-hpa.yaml is not an autoscaling/v2 HorizontalPodAutoscaler")
spec = hpa.get("spec", {})
if not spec.get("scaleTargetRef", {}).get("name"):
    errors.append("backend-hpa.yaml: no scaleTargetRef")
if not 1 <= spec.get("minReplicas", 0) <= spec.get("maxReplicas", 0):
    errors.append("backend-hpa.yaml: minReplicas/maxReplicas")
metrics = spec.get("metrics", [])
ext = [m["external"] for m in metrics if m.get("type") == "External"]
if len(ext) != 1:
    errors.append("backend-hpa.yaml: expected one External metric")
else:
    name = ext[0]["metric"]["name"]
    target = ext[0]["target"]
    if target.get("type") != "AverageValue" or str(target.get("averageValue")) != "1":
        errors.append("backend-hpa.yaml: the target must be AverageValue 1 (desired replicas = the metric)")
    exposed = [r["name"]["as"] for r in rules.get("externalRules", [])]
    if name not in exposed:
        errors.append("backend-hpa.yaml names %s, the adapter rules expose %s" % (name, exposed))
schedd = open(os.path.join(root, "runtime", "schedd.c")).read()
for r in rules.get("externalRules", []):
    series = re.match(r"^\s*([a-z_:][a-z0-9_:]*)", r["seriesQuery"]).group(1)
    if '"%s"' % series not in schedd:
        errors.append("the adapter reads %s, which schedd does not export" % series)
    if "<<.Series>>" not in r.get("metricsQuery", ""):
        errors.append("adapter rule for %s: metricsQuery does not use <<.Series>>" % series)
if errors:
    print("check_deploy: " + "; ".join(errors))
    sys.exit(1)
print("check_deploy: deploy/ parses; the HPA follows %s, which schedd exports" % ext[0]["metric"]["name"])
