#!/usr/bin/env python3
"""Generates the large inputs of BENCHMARKS.md "Hostile and large inputs" into OUT.

  smps9.yaml    8,252 StateManagementProviders with findings (9.0 MB)
  d4/           four files of 25,000 SMPs with two findings each (9.6 MB each)
  dump10.yaml   testdata/doctor/healthy/dump.yaml with its namespaced objects copied into
                363 namespaces: one List document (8.7 MB, 5,461 objects)
  render10.yaml the values-and-valuesfrom render case with 200 services of 40 KB values

Usage: python3 scripts/large_inputs.py OUT   (needs PyYAML)
"""
import copy, json, os, sys
import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = sys.argv[1] if len(sys.argv) > 1 else "large-inputs"
os.makedirs(os.path.join(OUT, "d4"), exist_ok=True)

ADAPTER = "|-\n      self.status.availableReplicas == self.status.replicas &&\n      self.status.availableReplicas == self.status.updatedReplicas"
PROV = ["|-\n      self.status.availableReplicas > 0 &&\n      self.status.readyReplicas > 0",
        "has(self.status.readyReplicas) && self.status.readyReplicas == self.spec.replicas"]

def smp(i):
    d = (f"---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: ksm-flux-{i}\n"
         f"spec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: flux-adapter-{i}\n"
         f"    namespace: kcm-system\n    readinessRule: {ADAPTER}\n  provisioner:\n")
    for j, c in enumerate(["helm-controller", "kustomize-controller", "source-controller"]):
        d += f"  - apiVersion: apps/v1\n    kind: Deployment\n    name: {c}\n    namespace: flux-system\n    readinessRule: {PROV[(i + j) % 2]}\n"
    return d + "  provisionerCRDs: []\n  selector:\n    matchLabels:\n      a: b\n  suspend: false\n  unknownField: 1\n"

def small_smp(i):  # the documents of tests/hostile.rs (write_smps)
    return ("---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n"
            f"  name: smp-{i}\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: a-{i}\n"
            "    namespace: kcm-system\n    readinessRule: self.status.availableReplicas == self.status.replicas\n"
            "  provisioner: []\n  provisionerCRDs: []\n  selector:\n    matchLabels: {a: b}\n  suspend: false\n"
            f"  unknownField: {i}\n")

with open(os.path.join(OUT, "smps9.yaml"), "w") as f:
    n = i = 0
    while n < 9_000_000:
        d = smp(i); f.write(d); n += len(d); i += 1
text = "".join(small_smp(i) for i in range(25_000))
for name in "abcd":
    open(os.path.join(OUT, "d4", name + ".yaml"), "w").write(text)

dump = yaml.safe_load(open(os.path.join(ROOT, "testdata/doctor/healthy/dump.yaml")))
items = dump["items"]
shared = [o for o in items if "namespace" not in o["metadata"] or o["kind"] == "Deployment"]
namespaced = [o for o in items if o not in shared]
out, size, i = list(shared), 0, 0
while size <= 8_500_000:
    batch = [json.loads(json.dumps(o).replace('"kcm-system"', json.dumps(f"team-{i}"))) for o in namespaced]
    out.extend(batch); size += len(json.dumps(batch)); i += 1
yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": out},
               open(os.path.join(OUT, "dump10.yaml"), "w"), sort_keys=False)

docs = list(yaml.safe_load_all(open(os.path.join(ROOT, "testdata/render/values-and-valuesfrom/input.yaml"))))
svc = docs[0]["spec"]["services"][0]
values = {f"k{j}": {"list": [f"item-{j}-{k}" for k in range(40)], "nested": {"a": {"b": {"c": j}}}} for j in range(60)}
services = []
for n in range(200):
    s = copy.deepcopy(svc); s["name"] = f"svc-{n}"; s["values"] = yaml.safe_dump(values)
    services.append(s)
docs[0]["spec"]["services"] = services
yaml.safe_dump_all(docs, open(os.path.join(OUT, "render10.yaml"), "w"), sort_keys=False)
