#!/usr/bin/env python3
"""The Helm chart of `kubectl ksm run`, charts/kubectl-ksm/, generated from deploy/base/: one
source of truth for both ways to install the adapter (`kubectl apply -k deploy/` and
`helm install`).

Usage:
  scripts/helm_chart.py            rewrite charts/kubectl-ksm/ from deploy/base/
  scripts/helm_chart.py --check    exit 1 (saying which files) when the committed chart is stale

Each manifest of deploy/base/ (in its kustomization's order) becomes a template as it is, but
for what a chart lets its user choose: the namespace is the release's, and the Deployment's
replicas, image, pull policy, resources and extra arguments come from values.yaml, whose
defaults are deploy/base's own. So `helm template -n kcm-system` with the default values gives
exactly the objects of `kubectl kustomize deploy/` (tests/deploy.rs checks it with the real helm
and kubectl). The chart's version and appVersion are the crate's.

A change to deploy/base/ that this script cannot place (an anchor below no longer found once)
stops it with a message naming the file and the line it looked for: change the script with it.
No dependency beyond Python's standard library.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.path.join(ROOT, "deploy", "base")
CHART = os.path.join(ROOT, "charts", "kubectl-ksm")
NAMESPACE = "kcm-system"


def die(msg):
    print(f"helm_chart.py: {msg}", file=sys.stderr)
    sys.exit(1)


def crate_version():
    with open(os.path.join(ROOT, "Cargo.toml")) as f:
        for line in f:
            m = re.match(r'^version\s*=\s*"([^"]+)"', line)
            if m:
                return m.group(1)
    die("Cargo.toml: no version")


def base_resources():
    """The files of deploy/base/kustomization.yaml's `resources`, in order."""
    path = os.path.join(BASE, "kustomization.yaml")
    with open(path) as f:
        lines = f.read().splitlines()
    out, inside = [], False
    for line in lines:
        if line.startswith("resources:"):
            inside = True
        elif inside and line.startswith("- "):
            out.append(line[2:].strip())
        elif inside and line and not line.startswith("#"):
            inside = False
    if not out:
        die(f"{path}: no resources")
    return out


def replace_once(text, old, new, where):
    n = text.count(old)
    if n != 1:
        die(f"{where}: expected `{old.strip()}` once, found it {n} times; update scripts/helm_chart.py")
    return text.replace(old, new)


def block(lines, start, where):
    """The lines of the YAML block that starts at `start` (a `key:` line): those indented more."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    if end == start + 1:
        die(f"{where}: `{lines[start].strip()}` has no block under it")
    return indent, end


def deployment(text, where, values):
    """The Deployment's template, filling `values` with deploy/base's defaults."""
    m = re.search(r"^  replicas: (\d+)$", text, re.M)
    if not m:
        die(f"{where}: no `  replicas: N`; update scripts/helm_chart.py")
    values["replicas"] = int(m.group(1))
    text = replace_once(text, m.group(0), "  replicas: {{ .Values.replicas }}", where)

    m = re.search(r"^        image: (\S+):(\S+)$", text, re.M)
    if not m:
        die(f"{where}: no `        image: REPOSITORY:TAG`; update scripts/helm_chart.py")
    repository, tag = m.group(1), m.group(2)
    if tag != crate_version():
        die(f"{where}: the image tag {tag} is not the crate's version {crate_version()}")
    values["image"] = {"repository": repository, "tag": "", "pullPolicy": None}
    text = replace_once(
        text,
        m.group(0),
        '        image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"',
        where,
    )
    m = re.search(r"^        imagePullPolicy: (\S+)$", text, re.M)
    if not m:
        die(f"{where}: no `        imagePullPolicy: POLICY`; update scripts/helm_chart.py")
    values["image"]["pullPolicy"] = m.group(1)
    text = replace_once(text, m.group(0), "        imagePullPolicy: {{ .Values.image.pullPolicy }}", where)

    m = re.search(r"^        args: \[(.*)\]$", text, re.M)
    if not m:
        die(f"{where}: no `        args: [...]` (a flow sequence); update scripts/helm_chart.py")
    text = replace_once(
        text,
        m.group(0),
        "        args: [" + m.group(1) + "{{ range .Values.extraArgs }}, {{ . | quote }}{{ end }}]",
        where,
    )
    values["extraArgs"] = []

    lines = text.split("\n")
    starts = [i for i, l in enumerate(lines) if l == "        resources:"]
    if len(starts) != 1:
        die(f"{where}: expected `resources:` of the container once; update scripts/helm_chart.py")
    start = starts[0]
    indent, end = block(lines, start, where)
    values["resources"] = [l[indent + 2:] for l in lines[start + 1:end] if l.strip()]
    lines[start + 1:end] = [" " * (indent + 2) + "{{- toYaml .Values.resources | nindent %d }}" % (indent + 2)]
    return "\n".join(lines)


def template(name, values):
    where = f"deploy/base/{name}"
    with open(os.path.join(BASE, name)) as f:
        text = f.read()
    if "{{" in text or "}}" in text:
        die(f"{where}: holds `{{{{` or `}}}}`, which Helm would read as a template action")
    text = text.replace(f"namespace: {NAMESPACE}\n", "namespace: {{ .Release.Namespace }}\n")
    if name == "deployment.yaml":
        text = deployment(text, where, values)
    header = f"# Generated by scripts/helm_chart.py from {where}: edit that file, not this one.\n"
    return header + text


def values_yaml(values):
    image = values["image"]
    resources = "\n".join("  " + l for l in values["resources"])
    return f"""# Generated by scripts/helm_chart.py: the defaults are deploy/base/deployment.yaml's, so that
# the chart installs what `kubectl apply -k deploy/` does. Install into kcm's namespace:
#   helm install kubectl-ksm charts/kubectl-ksm -n {NAMESPACE}

# Leader election (--leader-elect) makes more replicas safe; one reconciles at a time.
replicas: {values["replicas"]}

image:
  repository: {image["repository"]}
  # Empty: the chart's appVersion, the crate's version.
  tag: "{image["tag"]}"
  pullPolicy: {image["pullPolicy"]}

# More arguments of `kubectl-ksm run`, after deploy/base's, e.g.
#   - --concurrency=16
# (One release per cluster: its ClusterRole and StateManagementProvider have fixed names. For
# shards, use deploy/sharded/.)
extraArgs: []

resources:
{resources}
"""


def chart_yaml():
    version = crate_version()
    return f"""# Generated by scripts/helm_chart.py from deploy/base/ and Cargo.toml.
apiVersion: v2
name: kubectl-ksm
description: >-
  kubectl ksm run, a Flux adapter for k0rdent Service Management: the StateManagementProvider
  ksm-flux, its Deployment and least-privilege RBAC (the manifests of deploy/base/)
type: application
version: {version}
appVersion: "{version}"
"""


def files():
    """Every file of the chart, as {relative path: text}."""
    values = {}
    out = {}
    for name in base_resources():
        out[os.path.join("templates", name)] = template(name, values)
    if "replicas" not in values:
        die("deploy/base/ has no deployment.yaml")
    out["Chart.yaml"] = chart_yaml()
    out["values.yaml"] = values_yaml(values)
    return out


def existing():
    out = {}
    for d, _, names in os.walk(CHART):
        for n in names:
            path = os.path.join(d, n)
            with open(path) as f:
                out[os.path.relpath(path, CHART)] = f.read()
    return out


def main(argv):
    if argv not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    want = files()
    if argv == ["--check"]:
        have = existing()
        stale = sorted(p for p in set(want) | set(have) if want.get(p) != have.get(p))
        if stale:
            for p in stale:
                state = "missing" if p not in have else "not generated" if p not in want else "stale"
                print(f"charts/kubectl-ksm/{p}: {state}", file=sys.stderr)
            die("the chart is not what deploy/base/ gives: run scripts/helm_chart.py and commit")
        return
    for p in set(existing()) - set(want):
        os.remove(os.path.join(CHART, p))
    for p, text in sorted(want.items()):
        path = os.path.join(CHART, p)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote charts/kubectl-ksm/{p}")


if __name__ == "__main__":
    main(sys.argv[1:])
