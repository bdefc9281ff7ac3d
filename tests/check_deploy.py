#!/usr/bin/env python3
"""tests/check_deploy.py SYMPHONY ROOT - deploy/'s Kubernetes layout.

The HPA (deploy/k8s/backend-hpa.yaml) is an autoscaling/v2 HorizontalPodAutoscaler on the
adapter's external metric with an AverageValue target of 1 on the backend StatefulSet, and the
series the adapter rule reads is one schedd exports. Then `kubectl kustomize deploy/k8s` renders
(with keys made here by `symphony keygen cluster`) and the objects are checked:

- every object is in the namespace; each role's Secret holds ca.pub and that role's credentials
  only (never the CA's private key); each StatefulSet mounts its own role's Secret in its init
  container only, which copies the pod's own credential into memory for the main container;
- schedd (2 replicas), frontends (as many as cluster.json lists) and backends are StatefulSets
  behind headless Services that publish not-ready addresses, named as cluster.json's addresses;
- every container serves HTTP on cluster.json's http_port, with liveness on /v2/health/live and
  readiness on /v2/health/ready; the client Services select their component and target its port;
- ordinals: for each pod, with HOSTNAME=NAME-ORDINAL, the init container's script (run here)
  leaves ca.pub, the pod's own credential (mode 0600, the main container's user) and revoked.json,
  and the main command runs symphony with the id of its ordinal (schedd-1: --standby) and passes
  `--check` with it, and fails without it.

Exits 77 (skipped) where no kubectl is found (scripts/setup installs Debian's kubernetes-client).
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

sym, root = os.path.abspath(sys.argv[1]), sys.argv[2]
k8s = os.path.join(root, "deploy", "k8s")
errors = []

# ---- the HPA and the adapter rule ----
hpa = yaml.safe_load(open(os.path.join(k8s, "backend-hpa.yaml")))
rules = yaml.safe_load(open(os.path.join(root, "deploy", "prometheus-adapter-rules.yaml")))
if hpa.get("apiVersion") != "autoscaling/v2" or hpa.get("kind") != "HorizontalPodAutoscaler":
    errors.append("backend-hpa.yaml is not an autoscaling/v2 HorizontalPodAutoscaler")
spec = hpa.get("spec", {})
if spec.get("scaleTargetRef", {}).get("kind") != "StatefulSet" or spec["scaleTargetRef"].get("name") != "backend":
    errors.append("backend-hpa.yaml: scaleTargetRef must be the StatefulSet backend")
if not 1 <= spec.get("minReplicas", 0) <= spec.get("maxReplicas", 0):
    errors.append("backend-hpa.yaml: minReplicas/maxReplicas")
metrics = spec.get("metrics", [])
ext = [m["external"] for m in metrics if m.get("type") == "External"]
if len(ext) != 1:
    errors.append("backend-hpa.yaml: expected one External metric")
else:
    target = ext[0]["target"]
    if target.get("type") != "AverageValue" or str(target.get("averageValue")) != "1":
        errors.append("backend-hpa.yaml: the target must be AverageValue 1 (desired replicas = the metric)")
    exposed = [r["name"]["as"] for r in rules.get("externalRules", [])]
    if ext[0]["metric"]["name"] not in exposed:
        errors.append("backend-hpa.yaml names %s, the adapter rules expose %s" % (ext[0]["metric"]["name"], exposed))
schedd_c = open(os.path.join(root, "runtime", "schedd.c")).read()
for r in rules.get("externalRules", []):
    series = re.match(r"^\s*([a-z_:][a-z0-9_:]*)", r["seriesQuery"]).group(1)
    if '"%s"' % series not in schedd_c:
        errors.append("the adapter reads %s, which schedd does not export" % series)
    if "<<.Series>>" not in r.get("metricsQuery", ""):
        errors.append("adapter rule for %s: metricsQuery does not use <<.Series>>" % series)

# ---- the kustomization ----
kubectl = shutil.which("kubectl")
if not kubectl:
    if errors:
        sys.exit("check_deploy: " + "; ".join(errors))
    print("check_deploy: the HPA checks passed; no kubectl (Debian's kubernetes-client) to render deploy/k8s: skipped")
    sys.exit(77)
cluster = json.load(open(os.path.join(k8s, "cluster.json")))
rt = cluster["runtime"]
nfe, bmax, port = len(rt["frontends"]), rt["backends_max"], rt["http_port"]
if spec.get("maxReplicas") != bmax:
    errors.append("backend-hpa.yaml: maxReplicas %s, runtime.backends_max %d (only those ids have credentials)"
                  % (spec.get("maxReplicas"), bmax))
tmp = tempfile.mkdtemp(prefix="sym-k8s-")
try:
    kdir = os.path.join(tmp, "k8s")
    shutil.copytree(k8s, kdir, ignore=shutil.ignore_patterns("keys"))
    r = subprocess.run([sym, "keygen", "cluster", os.path.join(kdir, "keys"), "--frontends", str(nfe),
                        "--backends", str(bmax), "--standby", "--quiet"], capture_output=True, text=True)
    if r.returncode:
        sys.exit("check_deploy: keygen: " + r.stderr)
    r = subprocess.run([kubectl, "kustomize", kdir], capture_output=True, text=True)
    if r.returncode:
        sys.exit("check_deploy: kubectl kustomize deploy/k8s: " + r.stderr)
    objs = [o for o in yaml.safe_load_all(r.stdout) if o]
    by = {}
    for o in objs:
        by.setdefault(o["kind"], {})[o["metadata"]["name"]] = o
        if o["kind"] != "Namespace" and o["metadata"].get("namespace") != "symphony":
            errors.append("%s/%s is not in the namespace symphony" % (o["kind"], o["metadata"]["name"]))
    if "symphony" not in by.get("Namespace", {}):
        errors.append("no Namespace symphony")

    def generated(kind, base):
        names = [n for n in by.get(kind, {}) if n == base or re.fullmatch(re.escape(base) + r"-[a-z0-9]{10}", n)]
        if len(names) != 1:
            errors.append("expected one %s %s, got %s" % (kind, base, names))
            return None
        return by[kind][names[0]]

    cm = generated("ConfigMap", "symphony-cluster")
    if cm and json.loads(cm["data"]["cluster.json"]) != cluster:
        errors.append("the ConfigMap's cluster.json is not deploy/k8s/cluster.json")
    roles = {"schedd": ["schedd-0", "schedd-1"], "frontend": ["frontend-%d" % i for i in range(nfe)],
             "backend": ["backend-%d" % i for i in range(bmax)]}
    secrets = {}
    for role, members in roles.items():
        s = generated("Secret", "symphony-%s-keys" % role)
        if not s:
            continue
        secrets[role] = s
        want = {"ca.pub"} | {m + ".cred" for m in members}
        if set(s.get("data", {})) != want:
            errors.append("Secret %s holds %s, expected %s" % (s["metadata"]["name"], sorted(s.get("data", {})),
                                                                sorted(want)))
    for o in objs:
        if o["kind"] == "Secret" and "ca.key" in o.get("data", {}):
            errors.append("Secret %s holds the CA's private key" % o["metadata"]["name"])

    # the peers' addresses in cluster.json are the StatefulSets' stable names
    addrs = {"schedd": rt["schedd"], "frontend": [f["fabric"] for f in rt["frontends"]]}
    replicas = {"schedd": 2, "frontend": nfe, "backend": bmax}
    ran = 0
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    for role in ("schedd", "frontend", "backend"):
        ss = by.get("StatefulSet", {}).get(role)
        if not ss:
            errors.append("no StatefulSet %s" % role)
            continue
        sp = ss["spec"]
        svc = by.get("Service", {}).get(sp.get("serviceName"))
        if not svc or svc["spec"].get("clusterIP") != "None" or not svc["spec"].get("publishNotReadyAddresses"):
            errors.append("StatefulSet %s: its serviceName %s is not a headless Service publishing not-ready "
                          "addresses" % (role, sp.get("serviceName")))
        if role != "backend" and sp.get("replicas") != replicas[role]:
            errors.append("StatefulSet %s: %s replicas, cluster.json has %d" % (role, sp.get("replicas"), replicas[role]))
        for i, a in enumerate(addrs.get(role, [])):
            if a.split(":")[0] != "%s-%d.%s" % (role, i, sp.get("serviceName")):
                errors.append("cluster.json's %s %d is %s, not its pod's stable name %s-%d.%s"
                              % (role, i, a, role, i, sp.get("serviceName")))
        pod = sp["template"]["spec"]
        labels = sp["template"]["metadata"]["labels"]
        (c,) = pod["containers"]
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        if ports.get("http") != port:
            errors.append("%s: container port http %s, cluster.json's http_port %d" % (role, ports.get("http"), port))
        for probe, path in (("livenessProbe", "/v2/health/live"), ("readinessProbe", "/v2/health/ready")):
            g = c.get(probe, {}).get("httpGet", {})
            if g.get("path") != path or ports.get(g.get("port"), g.get("port")) != port:
                errors.append("%s: %s is not GET %s on the HTTP port" % (role, probe, path))
        vols = {v["name"]: v for v in pod.get("volumes", [])}
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        cfgv = vols.get(mounts.get("/etc/symphony/cluster.json"), {})
        if not cm or cfgv.get("configMap", {}).get("name") != cm["metadata"]["name"]:
            errors.append("%s: /etc/symphony/cluster.json is not the ConfigMap" % role)
        # the role's Secret only in the init container, which copies the pod's own credential into
        # memory (keys_dir) for the main container
        own = secrets.get(role, {}).get("metadata", {}).get("name")
        key_secrets = {x["metadata"]["name"] for x in secrets.values()}
        secret_vols = {n for n, v in vols.items() if v.get("secret", {}).get("secretName") in key_secrets}
        if {vols[n]["secret"]["secretName"] for n in secret_vols} != {own}:
            errors.append("%s: mounts the Secrets %s, not only its own role's %s" % (role, sorted(
                vols[n]["secret"]["secretName"] for n in secret_vols), own))
        if any(m["name"] in secret_vols for m in c.get("volumeMounts", [])):
            errors.append("%s: the main container mounts its role's Secret (every member's credential)" % role)
        if vols.get(mounts.get(rt["keys_dir"]), {}).get("emptyDir", {}).get("medium") != "Memory":
            errors.append("%s: %s is not an in-memory emptyDir" % (role, rt["keys_dir"]))
        inits = pod.get("initContainers", [])
        if len(inits) != 1:
            errors.append("%s: expected one init container (the credential)" % role)
            continue
        init = inits[0]
        imounts = {m["mountPath"]: m["name"] for m in init.get("volumeMounts", [])}
        uid = pod.get("securityContext", {}).get("runAsUser")
        init_script = (init.get("command", []) + init.get("args", []))
        if init_script[:2] != ["/bin/sh", "-c"] or len(init_script) != 3:
            errors.append("%s: the init container's command is not /bin/sh -c SCRIPT" % role)
            continue
        if not pod.get("securityContext", {}).get("runAsNonRoot") or "-o %s -g" % uid not in init_script[2]:
            errors.append("%s: the main container must run as a non-root uid that the credential is given to" % role)
        # each ordinal: the init container's script, then the main container's command with a symphony
        # that runs the real one with --check, on the files this pod's volumes hold
        if role not in secrets:
            continue
        sd = os.path.join(tmp, "secret-" + role)
        os.makedirs(sd)
        for name, b64 in secrets[role]["data"].items():
            with open(os.path.join(sd, name), "wb") as f:
                f.write(base64.b64decode(b64))
        argv = list(c.get("command", [])) + list(c.get("args", []))
        if argv[:2] != ["/bin/sh", "-c"] or len(argv) != 3:
            errors.append("%s: the command is not /bin/sh -c SCRIPT" % role)
            continue
        for i in range(replicas[role]):
            pdir = os.path.join(tmp, "%s-%d" % (role, i))
            kd, rd = os.path.join(pdir, "keys"), os.path.join(pdir, "revoked")
            os.makedirs(kd)
            os.makedirs(rd)
            script = init_script[2].replace("-o %s -g %s" % (uid, uid), "-o %d -g %d" % (os.getuid(), os.getgid()))
            for path, d in ((next(p for p, n in imounts.items() if n in secret_vols), sd), (rt["keys_dir"], kd),
                            ("/etc/symphony/revoked", rd)):
                script = script.replace(path, d)
            env = dict(os.environ, HOSTNAME="%s-%d" % (role, i), PATH=bindir + ":" + os.environ["PATH"])
            r = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, env=env)
            if r.returncode or sorted(os.listdir(kd)) != sorted(["ca.pub", "%s-%d.cred" % (role, i), "revoked.json"]):
                errors.append("pod %s-%d: the init container exits %d and leaves %s: %s" % (
                    role, i, r.returncode, sorted(os.listdir(kd)), r.stderr.strip()))
                continue
            cpath = os.path.join(pdir, "cluster.json")
            json.dump(dict(cluster, runtime=dict(rt, keys_dir=kd)), open(cpath, "w"))
            wrapper = os.path.join(bindir, "symphony")
            with open(wrapper, "w") as f:
                f.write('#!/bin/sh\n[ "$2" = /etc/symphony/cluster.json ] || { echo "config: $2" >&2; exit 3; }\n'
                        'cmd=$1; shift 2\nexec "%s" "$cmd" "%s" "$@" --check\n' % (sym, cpath))
            os.chmod(wrapper, 0o755)
            r = subprocess.run(argv, capture_output=True, text=True, env=env)
            want = "%s: the configuration is valid" % role
            if r.returncode or want not in r.stdout:
                errors.append("pod %s-%d: exits %d: %s" % (role, i, r.returncode, (r.stdout + r.stderr).strip()))
            ran += 1
            # the member's own credential, and no other, makes it pass: without it, --check fails
            if i == replicas[role] - 1:
                os.remove(os.path.join(kd, "%s-%d.cred" % (role, i)))
                r = subprocess.run(argv, capture_output=True, text=True, env=env)
                if r.returncode == 0:
                    errors.append("pod %s-%d passed --check without its credential" % (role, i))
    for name, sel_role in (("schedd", "schedd"), ("frontend", "frontend")):
        s = by.get("Service", {}).get(name)
        if not s or s["spec"].get("selector", {}).get("app.kubernetes.io/component") != sel_role or \
                s["spec"].get("clusterIP") == "None":
            errors.append("no client Service %s selecting the %s pods" % (name, sel_role))
        elif not any(p.get("targetPort") == "http" for p in s["spec"].get("ports", [])):
            errors.append("Service %s does not target the pods' http port" % name)
    rhpa = by.get("HorizontalPodAutoscaler", {}).get("backend")
    if not rhpa or rhpa["spec"]["scaleTargetRef"]["name"] not in by.get("StatefulSet", {}):
        errors.append("the HPA does not target a rendered StatefulSet")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
if errors:
    print("check_deploy: " + "\n  ".join(errors))
    sys.exit(1)
kv = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True).stdout.split("\n")[0]
print("check_deploy: deploy/k8s renders (%s) into %d objects; %d pods' commands pass --check with their own "
      "credential; the HPA follows %s" % (kv.strip(), len(objs), ran, ext[0]["metric"]["name"]))
