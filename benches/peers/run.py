#!/usr/bin/env python3
"""Side-by-side figures against the peers, in one run on one machine.

The peers are built from their Go modules at the releases benches/peers/go.mod pins:
kubeconform v0.7.0 (lint) and cel-go v0.31.0, the version kcm's go.mod requires, set up as
kcm sets it up (benches/peers/celgo). The project's side is the release build of
kubectl-ksm and the `peers` bench (benches/peers.rs).

  python3 benches/peers/run.py            build everything, time every pair, print the table
  python3 benches/peers/run.py --build    build only
  python3 benches/peers/run.py --peers    build the peers and their schemas only, and check that
                                          kubeconform reads them (what CI runs; clippy builds
                                          the project's side, benches/peers.rs)
  options: --pairs N (interleaved pairs per figure, default 21), --only SUBSTRING

Each figure is the median of the per-pair ratios (this project / peer) of interleaved runs,
so that a change of the machine's load hits both sides of a pair alike. Lint pairs time whole
processes (wall clock); CEL pairs compare the ns per operation each harness measures over
its own loop. "one core" pins both sides to CPU 0 (`taskset -c 0`) with one worker each
(lint -j 1, kubeconform -n 1); "all cores" leaves both to their defaults.

kubeconform reads the CRDs in crds/ as JSON schemas in its strict form (benches/peers/schemas:
objects closed to unknown fields), so both sides check the same documents against the same
schemas; kubectl-ksm also compiles and type-checks each SMP's CEL rules, which kubeconform
does not.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
BIN = os.path.join(TARGET, "peers")

# The seeds' Deployment rule and its Deployment: the files benches/cel_eval.rs reads too.
with open(os.path.join(HERE, "seeds-deployment-rule.cel")) as f:
    SEEDS_DEPLOYMENT_RULE = f.read()
DEPLOYMENT = os.path.join(HERE, "deployment.json")
# A health rule in the manner of kcm's default Deployment rule: generations, defaults by
# ternary, int() conversions.
HEALTH_RULE = (
    "has(obj.status.observedGeneration) && "
    "int(obj.status.observedGeneration) >= int(obj.metadata.generation) && "
    "int(has(obj.spec.replicas) ? obj.spec.replicas : 1) == "
    "int(has(obj.status.readyReplicas) ? obj.status.readyReplicas : 0) && "
    "int(has(obj.spec.replicas) ? obj.spec.replicas : 1) == "
    "int(has(obj.status.updatedReplicas) ? obj.status.updatedReplicas : 0)"
)
ADAPTER_RULE = ("|-\n      self.status.availableReplicas == self.status.replicas &&\n"
                "      self.status.availableReplicas == self.status.updatedReplicas")
PROVISIONER_RULES = [
    "|-\n      self.status.availableReplicas > 0 &&\n      self.status.readyReplicas > 0",
    "has(self.status.readyReplicas) && self.status.readyReplicas == self.spec.replicas",
]


def smp(i):
    """An SMP of the lint benchmark: an adapter and three provisioners with rules, and one
    field the schema does not know (a finding on both sides)."""
    d = (f"---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\n"
         f"metadata:\n  name: ksm-flux-{i}\nspec:\n  adapter:\n    apiVersion: apps/v1\n"
         f"    kind: Deployment\n    name: flux-adapter-{i}\n    namespace: kcm-system\n"
         f"    readinessRule: {ADAPTER_RULE}\n  provisioner:\n")
    for j, c in enumerate(["helm-controller", "kustomize-controller", "source-controller"]):
        d += (f"  - apiVersion: apps/v1\n    kind: Deployment\n    name: {c}\n"
              f"    namespace: flux-system\n    readinessRule: {PROVISIONER_RULES[(i + j) % 2]}\n")
    return d + ("  provisionerCRDs: []\n  selector:\n    matchLabels:\n      a: b\n"
                "  suspend: false\n  unknownField: 1\n")


def run(cmd, **kw):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, **kw)


def build_ours():
    run(["cargo", "build", "--release", "--locked", "--bin", "kubectl-ksm"], cwd=ROOT)
    out = subprocess.run(
        ["cargo", "bench", "--locked", "--bench", "peers", "--no-run", "--message-format", "json"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    exe = None
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "peers":
            exe = msg.get("executable") or exe
    if not exe:
        sys.exit("run.py: cargo did not name the peers bench executable")
    shutil.copy(exe, os.path.join(BIN, "peers-ours"))


def build_peers():
    os.makedirs(BIN, exist_ok=True)
    # -mod=readonly: the versions are go.mod's and go.sum's, never resolved again.
    env = dict(os.environ, GOFLAGS="-mod=readonly")
    run(["go", "build", "-trimpath", "-o", BIN + "/", "./celgo", "./schemas"], cwd=HERE, env=env)
    run(["go", "build", "-trimpath", "-o", os.path.join(BIN, "kubeconform"),
         "github.com/yannh/kubeconform/cmd/kubeconform"], cwd=HERE, env=env)
    crds = sorted(os.path.join(d, f) for d in
                  (os.path.join(ROOT, "crds", k) for k in sorted(os.listdir(os.path.join(ROOT, "crds"))))
                  if os.path.isdir(d) for f in os.listdir(d) if f.endswith(".yaml"))
    schemas = os.path.join(BIN, "schemas.d")
    shutil.rmtree(schemas, ignore_errors=True)
    run([os.path.join(BIN, "schemas"), schemas] + crds)
    # One check that kubeconform reads the schemas: an SMP with an unknown field is invalid.
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(smp(0))
    r = subprocess.run(kubeconform([f.name]), capture_output=True, text=True)
    os.unlink(f.name)
    if r.returncode != 1 or "unknownField" not in r.stdout + r.stderr:
        sys.exit(f"run.py: kubeconform did not read the schemas: {r.stdout}{r.stderr}")


def kubeconform(paths, workers=None):
    cmd = [os.path.join(BIN, "kubeconform"), "-strict", "-ignore-missing-schemas",
           "-schema-location",
           os.path.join(BIN, "schemas.d") + "/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"]
    if workers:
        cmd += ["-n", str(workers)]
    return cmd + paths


def ours(paths, jobs=None):
    cmd = [os.path.join(TARGET, "release", "kubectl-ksm"), "lint"]
    if jobs:
        cmd += ["-j", str(jobs)]
    return cmd + paths


def wall(cmd):
    start = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if r.returncode not in (0, 1):
        sys.exit(f"run.py: {' '.join(cmd)} exited {r.returncode}")
    return elapsed


def paired(a, b, pairs):
    """Median of the per-pair ratios a/b, and the medians of each side."""
    ta, tb = [], []
    a(); b()  # warm the page cache
    for i in range(pairs):
        if i % 2:
            tb.append(b()); ta.append(a())
        else:
            ta.append(a()); tb.append(b())
    ratios = [x / y for x, y in zip(ta, tb)]
    return statistics.median(ratios), statistics.median(ta), statistics.median(tb)


def cel(harness, env, mode, rule, obj, n):
    out = subprocess.run([harness, "-env", env, "-mode", mode, "-rule", rule, "-object", obj,
                          "-n", str(n)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="store_true", help="build the harness only")
    ap.add_argument("--peers", action="store_true", help="build and check the peers only")
    ap.add_argument("--pairs", type=int, default=21)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    build_peers()
    if args.peers:
        print(f"peers built in {BIN}")
        return
    build_ours()
    if args.build:
        print(f"peers built in {BIN}")
        return
    work = tempfile.mkdtemp(prefix="ksm-peers-")
    try:
        one = os.path.join(work, "smps.yaml")
        with open(one, "w") as f:
            f.write("".join(smp(i) for i in range(1000)))
        many = os.path.join(work, "many")
        os.makedirs(many)
        for i in range(1000):
            with open(os.path.join(many, f"smp-{i:04}.yaml"), "w") as f:
                f.write(smp(i))
        examples = os.path.join(ROOT, "testdata", "examples")
        startup = os.path.join(examples, "smp-flux-from-guide.yaml")
        pin = ["taskset", "-c", "0"]
        rows = []

        def lint_row(name, paths, cores):
            if args.only not in name:
                return
            if cores == 1:
                a = lambda: wall(pin + ours(paths, 1))
                b = lambda: wall(pin + kubeconform(paths, 1))
            else:
                a = lambda: wall(ours(paths))
                b = lambda: wall(kubeconform(paths))
            ratio, ma, mb = paired(a, b, args.pairs)
            rows.append((name, f"{ma * 1000:.1f} ms", f"{mb * 1000:.1f} ms", ratio))
            print(f"{name}: {ratio:.2f}", file=sys.stderr, flush=True)

        for cores, label in ((1, "one core"), (0, "all cores")):
            lint_row(f"lint, 1,000 SMPs in one file, {label}", [one], cores)
            lint_row(f"lint, 1,000 SMPs in 1,000 files, {label}", [many], cores)
            lint_row(f"lint, the bundled examples, {label}", [examples], cores)
        lint_row("start-up: lint of one file, one core", [startup], 1)

        theirs, mine = os.path.join(BIN, "celgo"), os.path.join(BIN, "peers-ours")
        for rule_name, env, rule in (("seeds' Deployment rule", "readiness", SEEDS_DEPLOYMENT_RULE),
                                     ("Deployment health rule", "health", HEALTH_RULE)):
            # Each side's loop runs for a second or so: shorter loops varied by a third from
            # run to run on a shared machine.
            for mode, what, n in (("compile", "compile+program", 2000),
                                  ("eval", "evaluation of the compiled rule", 1000000),
                                  ("kcm", "the rule on an object as it comes (kcm's path)",
                                   20000 if env == "readiness" else 500000)):
                name = f"CEL {what}, {rule_name}"
                if args.only not in name:
                    continue
                results = {}

                def side(h, key):
                    r = cel(h, env, mode, rule, DEPLOYMENT, n)
                    results.setdefault(key, set()).add(r["result"])
                    return r["ns_per_op"]
                ratio, ma, mb = paired(lambda: side(mine, "ours"), lambda: side(theirs, "cel-go"),
                                       max(5, args.pairs // 3))
                if results["ours"] != results["cel-go"]:
                    sys.exit(f"run.py: {name}: results differ: {results}")
                rows.append((name, f"{ma:,.0f} ns", f"{mb:,.0f} ns", ratio))
                print(f"{name}: {ratio:.2f}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"| figure | kubectl-ksm | peer | ratio |")
    print("|---|---:|---:|---:|")
    for name, a, b, ratio in rows:
        print(f"| {name} | {a} | {b} | **{ratio:.2f}** |")


if __name__ == "__main__":
    main()
