#!/usr/bin/env python3
"""Generates testdata/doctor/<case>/{dump.yaml,README} for `kubectl ksm doctor --from`.

Every dump is judged with `--now 2026-11-21T12:00:00Z` (and the default `--stuck-after 10m`).
A dump is what `kubectl get <the kinds below> -A -o yaml` saves: one `kind: List` (the case
multi-problem is saved as several plain documents instead). Objects are written the way the API
server returns them: server-set metadata, CRD defaults applied, keys sorted, no managedFields.

Facts: the project's kcm and Flux domain notes (sections 1-3) and render spec, the controllers'
sources (kcm 8373a241, helm-controller 0f61a860, kustomize-controller 186fb3b2); the Flux
adapter's naming/labels follow the render fixtures (testdata/render/*/output.snap).

Self-checks on every run: each kcm/Flux object is validated against the CRDs in
crds (types, required, enums, patterns, lengths, unknown fields), CRD defaults are applied
like the API server does, and each file parses back to the same objects.

Usage: python3 gen.py [OUT]   (default: the directory of this script)
"""
import base64, copy, glob, hashlib, os, re, sys, uuid
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else HERE
CRDS = os.path.join(HERE, "..", "..", "crds")

NOW = "2026-11-21T12:00:00Z"          # every dump: --now 2026-11-21T12:00:00Z
T_FLUX = "2026-11-14T08:12:40Z"       # Flux, kcm and the adapter installed
T_CRD = "2026-11-14T08:12:31Z"
T0 = "2026-11-20T09:00:00Z"           # dev-cluster objects created
T_SRC = "2026-11-20T09:00:41Z"        # sources fetched, templates validated
T_HR = "2026-11-20T09:03:12Z"         # releases installed / kustomization applied
T_SS = "2026-11-20T09:03:30Z"         # ServiceSet status: Deployed
NS = "kcm-system"
API = "k0rdent.mirantis.com/v1beta1"
HR_API = "helm.toolkit.fluxcd.io/v2"
KS_API = "kustomize.toolkit.fluxcd.io/v1"
SRC_API = "source.toolkit.fluxcd.io/v1"
L_MANAGED, L_SET, L_SVC = ("ksm.k0rdent.mirantis.com/managed", "ksm.k0rdent.mirantis.com/serviceset",
                           "ksm.k0rdent.mirantis.com/service")
L_ADAPTER = "ksm.k0rdent.mirantis.com/adapter"
PAUSED = "k0rdent.mirantis.com/service-set-paused"

def uid(*parts):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "ksm-doctor-fixture/" + "/".join(parts)))
def sha256(s):
    return hashlib.sha256(s.encode()).hexdigest()
def sha1(s):
    return hashlib.sha1(s.encode()).hexdigest()
_rv = [7301022]
def rv():
    _rv[0] += 211
    return str(_rv[0])

def meta(kind, name, ns=NS, generation=1, labels=None, annotations=None, finalizers=None, owners=None, created=T0):
    m = {"creationTimestamp": created, "name": name, "resourceVersion": rv(), "uid": uid(kind, ns or "", name)}
    if generation is not None: m["generation"] = generation
    if ns: m["namespace"] = ns
    if labels: m["labels"] = labels
    if annotations: m["annotations"] = annotations
    if finalizers: m["finalizers"] = finalizers
    if owners: m["ownerReferences"] = owners
    return m

def owner(kind, name, ns=NS, api=API):
    return {"apiVersion": api, "blockOwnerDeletion": True, "controller": True, "kind": kind,
            "name": name, "uid": uid(kind, ns or "", name)}

def cond(type_, status, reason, message, gen=1, t=T_SRC):
    return {"lastTransitionTime": t, "message": message, "observedGeneration": gen,
            "reason": reason, "status": status, "type": type_}

def at(hms):
    """A time today (2026-11-21), e.g. at('11:00') -> 2026-11-21T11:00:00Z."""
    if hms.count(":") == 1: hms += ":00"
    return f"2026-11-21T{hms}Z"

# ================================================================ CRD objects (schemas left out)
def crd_stub(path):
    d = yaml.safe_load(open(path))
    spec = copy.deepcopy(d["spec"])
    for v in spec["versions"]:
        v.pop("schema", None)      # schemas omitted in the fixtures (doctor needs names + versions)
    name = d["metadata"]["name"]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"annotations": d["metadata"].get("annotations", {}), "creationTimestamp": T_CRD,
                         "generation": 1, "labels": {"app.kubernetes.io/part-of": "flux" if "fluxcd" in name else "kcm"},
                         "name": name, "resourceVersion": rv(), "uid": uid("CustomResourceDefinition", name)},
            "spec": spec,
            "status": {"acceptedNames": spec["names"],
                       "conditions": [{"lastTransitionTime": T_CRD, "message": "no conflicts found", "reason": "NoConflicts",
                                       "status": "True", "type": "NamesAccepted"},
                                      {"lastTransitionTime": T_CRD, "message": "the initial names have been accepted",
                                       "reason": "InitialNamesAccepted", "status": "True", "type": "Established"}],
                       "storedVersions": [v["name"] for v in spec["versions"] if v.get("storage")]}}

SCHEMAS = {}    # (apiVersion, kind) -> openAPIV3Schema
CRD_OBJECTS = []
for f in sorted(glob.glob(os.path.join(CRDS, "*", "*.yaml"))):
    d = yaml.safe_load(open(f))
    for v in d["spec"]["versions"]:
        SCHEMAS[(d["spec"]["group"] + "/" + v["name"], d["spec"]["names"]["kind"])] = v["schema"]["openAPIV3Schema"]
    if "/flux/" in f and "externalartifacts" not in f:
        CRD_OBJECTS.append(crd_stub(f))
    elif "/kcm/" in f and ("servicesets" in f or "servicetemplates" in f or "statemanagementproviders" in f):
        CRD_OBJECTS.append(crd_stub(f))

# ================================================================ schema check + defaulting
DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
def check(obj, schema, path, errs, defaults=True):
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(obj, (int, str)): errs.append(f"{path}: want int-or-string")
        return
    t = schema.get("type")
    if obj is None:
        if not schema.get("nullable"): errs.append(f"{path}: null")
        return
    if t == "object":
        if not isinstance(obj, dict): errs.append(f"{path}: want object, got {type(obj).__name__}"); return
        props = schema.get("properties", {})
        if defaults:
            for k, sub in props.items():
                if k not in obj and "default" in sub:
                    obj[k] = copy.deepcopy(sub["default"])
        for r in schema.get("required", []):
            if r not in obj: errs.append(f"{path}: missing required {r}")
        for k, v in obj.items():
            if k in props:
                check(v, props[k], f"{path}.{k}", errs, defaults)
            elif isinstance(schema.get("additionalProperties"), dict):
                check(v, schema["additionalProperties"], f"{path}.{k}", errs, defaults)
            elif not schema.get("x-kubernetes-preserve-unknown-fields") and path != "" and not (path == ".metadata"):
                errs.append(f"{path}: unknown field {k}")
        if "maxProperties" in schema and len(obj) > schema["maxProperties"]: errs.append(f"{path}: too many properties")
    elif t == "array":
        if not isinstance(obj, list): errs.append(f"{path}: want array"); return
        if "maxItems" in schema and len(obj) > schema["maxItems"]: errs.append(f"{path}: too many items")
        if "minItems" in schema and len(obj) < schema["minItems"]: errs.append(f"{path}: too few items")
        for i, v in enumerate(obj):
            check(v, schema.get("items", {}), f"{path}[{i}]", errs, defaults)
    elif t == "string":
        if not isinstance(obj, str): errs.append(f"{path}: want string, got {obj!r}"); return
        if "maxLength" in schema and len(obj) > schema["maxLength"]: errs.append(f"{path}: longer than {schema['maxLength']}")
        if "minLength" in schema and len(obj) < schema["minLength"]: errs.append(f"{path}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], obj): errs.append(f"{path}: {obj!r} !~ {schema['pattern']}")
        if schema.get("format") == "date-time" and not DATE_TIME.match(obj): errs.append(f"{path}: not a date-time: {obj!r}")
    elif t == "integer":
        if not isinstance(obj, int) or isinstance(obj, bool): errs.append(f"{path}: want integer, got {obj!r}"); return
    elif t == "number":
        if not isinstance(obj, (int, float)) or isinstance(obj, bool): errs.append(f"{path}: want number")
    elif t == "boolean":
        if not isinstance(obj, bool): errs.append(f"{path}: want boolean, got {obj!r}")
    if "enum" in schema and obj not in schema["enum"]: errs.append(f"{path}: {obj!r} not in {schema['enum']}")
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        if "minimum" in schema and obj < schema["minimum"]: errs.append(f"{path}: below minimum")
        if "maximum" in schema and obj > schema["maximum"]: errs.append(f"{path}: above maximum")

CONDITION_KEYS = {"type", "status", "reason", "message", "lastTransitionTime"}
def validate(o, case):
    key = (o["apiVersion"], o["kind"])
    errs = []
    if key in SCHEMAS:
        check(o, SCHEMAS[key], "", errs)
    # conditions everywhere: the five fields, status True|False|Unknown
    def conds(v, p):
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "conditions" and isinstance(x, list):
                    for i, c in enumerate(x):
                        miss = CONDITION_KEYS - set(c)
                        if miss and o["kind"] != "CustomResourceDefinition": errs.append(f"{p}.conditions[{i}] lacks {sorted(miss)}")
                        if c.get("status") not in ("True", "False", "Unknown"): errs.append(f"{p}.conditions[{i}].status")
                conds(x, f"{p}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v): conds(x, f"{p}[{i}]")
    conds(o.get("status", {}), ".status")
    # HelmRelease CEL: exactly one of chart / chartRef; kubeConfig exactly one ref
    if o["kind"] == "HelmRelease" and (("chart" in o["spec"]) == ("chartRef" in o["spec"])):
        errs.append("HelmRelease: either chart or chartRef must be set")
    if errs:
        raise SystemExit(f"{case}: {o['kind']}/{o['metadata'].get('namespace','')}/{o['metadata']['name']}:\n  " + "\n  ".join(errs))

# ================================================================ sources
def artifact(kind, ns, name, revision, filename, seed, size):
    plural = {"GitRepository": "gitrepository", "HelmRepository": "helmrepository", "HelmChart": "helmchart",
              "OCIRepository": "ocirepository", "Bucket": "bucket"}[kind]
    return {"digest": "sha256:" + sha256("artifact/" + seed), "lastUpdateTime": T_SRC,
            "path": f"{plural}/{ns}/{name}/{filename}", "revision": revision, "size": size,
            "url": f"http://source-controller.flux-system.svc.cluster.local./{plural}/{ns}/{name}/{filename}"}

def ready_src(msg, gen=1, t=T_SRC, extra=()):
    return [cond("Ready", "True", "Succeeded", msg, gen, t), cond("ArtifactInStorage", "True", "Succeeded", msg, gen, t), *extra]

PODINFO_COMMIT = sha1("podinfo-master-2026-11-20")
PODINFO_REV = f"master@sha1:{PODINFO_COMMIT}"

def gitrepository(name="podinfo", ns=NS, url="https://github.com/stefanprodan/podinfo", commit=PODINFO_COMMIT):
    rev = f"master@sha1:{commit}"
    return {"apiVersion": SRC_API, "kind": "GitRepository",
            "metadata": meta("GitRepository", name, ns, finalizers=["finalizers.fluxcd.io"]),
            "spec": {"interval": "5m", "ref": {"branch": "master"}, "timeout": "60s", "url": url},
            "status": {"artifact": artifact("GitRepository", ns, name, rev, f"{commit}.tar.gz", "git/" + ns + name + commit, 88341),
                       "conditions": ready_src(f"stored artifact for revision '{rev}'"),
                       "observedGeneration": 1}}

def helmrepository(name, url, ns=NS):
    d = sha256("index/" + name)
    return {"apiVersion": SRC_API, "kind": "HelmRepository",
            "metadata": meta("HelmRepository", name, ns, finalizers=["finalizers.fluxcd.io"]),
            "spec": {"interval": "10m", "timeout": "60s", "url": url},
            "status": {"artifact": artifact("HelmRepository", ns, name, "sha256:" + d, f"index-{d}.yaml", "idx/" + name, 4021773),
                       "conditions": ready_src(f"stored artifact: revision 'sha256:{d}'"),
                       "observedGeneration": 1, "url": f"http://source-controller.flux-system.svc.cluster.local./helmrepository/{ns}/{name}/index.yaml"}}

def helmchart(name, chart, version, repo, ns=NS, owner_tmpl=None):
    m = meta("HelmChart", name, ns, finalizers=["finalizers.fluxcd.io"],
             owners=[owner("ServiceTemplate", owner_tmpl, ns)] if owner_tmpl else None)
    return {"apiVersion": SRC_API, "kind": "HelmChart", "metadata": m,
            "spec": {"chart": chart, "interval": "10m0s", "reconcileStrategy": "ChartVersion",
                     "sourceRef": {"kind": "HelmRepository", "name": repo}, "version": version},
            "status": {"artifact": artifact("HelmChart", ns, name, version.lstrip("v") if False else version,
                                            f"{chart}-{version}.tgz", "chart/" + ns + name, 61233),
                       "conditions": ready_src(f"pulled '{chart}' chart with version '{version}'"),
                       "observedChartName": chart, "observedGeneration": 1,
                       "observedSourceArtifactRevision": "sha256:" + sha256("index/" + repo),
                       "url": f"http://source-controller.flux-system.svc.cluster.local./helmchart/{ns}/{name}/{chart}-latest.tgz"}}

def set_failed(obj, reason, message, t, fetch_failed=True, keep_artifact=True, stalled=False):
    """A source whose last fetch failed (source-controller: FetchFailed=True, Ready=False, same reason)."""
    gen = obj["metadata"]["generation"]
    cs = []
    if fetch_failed: cs.append(cond("FetchFailed", "True", reason, message, gen, t))
    if stalled: cs.append(cond("Stalled", "True", reason, message, gen, t))
    cs.append(cond("Ready", "False", reason, message, gen, t))
    if keep_artifact and "artifact" in obj["status"]:
        cs.append(cond("ArtifactInStorage", "True", "Succeeded", "stored artifact for revision '%s'" % obj["status"]["artifact"]["revision"], gen, T_SRC))
    else:
        obj["status"].pop("artifact", None)
        obj["status"].pop("observedGeneration", None)
    obj["status"]["conditions"] = cs

# ================================================================ ServiceTemplates
def tmpl_chartspec(name, chart, version, repo, valid=True, validation_error=None, description=None):
    status = {"chartRef": {"kind": "HelmChart", "name": name, "namespace": NS}, "chartVersion": version,
              "observedGeneration": 1, "valid": valid}
    if description: status["description"] = description
    if validation_error: status["validationError"] = validation_error
    return {"apiVersion": API, "kind": "ServiceTemplate",
            "metadata": meta("ServiceTemplate", name, labels={"k0rdent.mirantis.com/component": "kcm"}),
            "spec": {"helm": {"chartSpec": {"chart": chart, "interval": "10m0s", "reconcileStrategy": "ChartVersion",
                                            "sourceRef": {"kind": "HelmRepository", "name": repo}, "version": version}},
                     "version": version},
            "status": status}

def source_status_of(src):
    """kcm copies the source's artifact and conditions (sourceStatusFromFluxObject); observedGeneration =
    the source's metadata.generation."""
    return {"artifact": copy.deepcopy(src["status"]["artifact"]), "conditions": copy.deepcopy(src["status"]["conditions"]),
            "kind": src["kind"], "name": src["metadata"]["name"], "namespace": src["metadata"]["namespace"],
            "observedGeneration": src["metadata"]["generation"]}

def tmpl_local(name, variant, src, version, path=None):
    sp = {"deploymentType": "Remote", "localSourceRef": {"kind": src["kind"], "name": src["metadata"]["name"],
                                                         "namespace": src["metadata"]["namespace"]}}
    if path: sp["path"] = path
    spec = {"helm": {"chartSource": sp}} if variant == "chartSource" else {variant: sp}
    spec["version"] = version
    return {"apiVersion": API, "kind": "ServiceTemplate",
            "metadata": meta("ServiceTemplate", name, src["metadata"]["namespace"]),
            "spec": spec, "status": {"observedGeneration": 1, "sourceStatus": source_status_of(src), "valid": True}}

# ================================================================ Deployments, SMP, Secrets
def deployment(name, ns, image, args, replicas=1, generation=1, labels=None, created=T_FLUX):
    sel = {"app": name}
    d = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": meta("Deployment", name, ns, generation=generation, created=created,
                          labels={"app.kubernetes.io/instance": ns, "app.kubernetes.io/part-of": "flux" if ns == "flux-system" else "kcm",
                                  **(labels or {})},
                          annotations={"deployment.kubernetes.io/revision": str(generation)}),
         "spec": {"progressDeadlineSeconds": 600, "replicas": replicas, "revisionHistoryLimit": 10, "selector": {"matchLabels": sel},
                  "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
                  "template": {"metadata": {"labels": sel},
                               "spec": {"containers": [{"args": args, "image": image, "imagePullPolicy": "IfNotPresent", "name": "manager",
                                                        "ports": [{"containerPort": 8080, "name": "http-prom", "protocol": "TCP"}],
                                                        "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                                                      "requests": {"cpu": "100m", "memory": "64Mi"}},
                                                        "terminationMessagePath": "/dev/termination-log",
                                                        "terminationMessagePolicy": "File"}],
                                        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                                        "securityContext": {"fsGroup": 1337}, "serviceAccountName": name,
                                        "terminationGracePeriodSeconds": 10}}},
         "status": {}}
    rs = f"{name}-{sha1(name + str(generation))[:10]}"
    d["status"] = {"availableReplicas": replicas, "conditions": [
        {"lastTransitionTime": T_FLUX, "lastUpdateTime": T_FLUX, "message": "Deployment has minimum availability.",
         "reason": "MinimumReplicasAvailable", "status": "True", "type": "Available"},
        {"lastTransitionTime": T_FLUX, "lastUpdateTime": T_FLUX, "message": f'ReplicaSet "{rs}" has successfully progressed.',
         "reason": "NewReplicaSetAvailable", "status": "True", "type": "Progressing"}],
        "observedGeneration": generation, "readyReplicas": replicas, "replicas": replicas, "updatedReplicas": replicas}
    return d

def scale_to_zero(d, t):
    """kubectl scale --replicas=0: generation+1; Kubernetes omits the zero-valued replica counts."""
    g = d["metadata"]["generation"] + 1
    d["metadata"]["generation"] = g
    d["spec"]["replicas"] = 0
    d["status"] = {"conditions": d["status"]["conditions"], "observedGeneration": g}
    for c in d["status"]["conditions"]:
        if c["type"] == "Available": c["lastUpdateTime"] = t
        if c["type"] == "Progressing": c["lastUpdateTime"] = t

FLUX_ARGS = ["--events-addr=http://notification-controller.flux-system.svc.cluster.local./", "--watch-all-namespaces=true",
             "--log-level=info", "--log-encoding=json", "--enable-leader-election"]
def deployments():
    return [deployment("flux-adapter", NS, "ghcr.io/k0rdent/ksm-flux-adapter:0.4.1", ["--leader-elect", "--health-probe-bind-address=:8081"]),
            deployment("kcm-controller-manager", NS, "ghcr.io/k0rdent/kcm/controller:1.6.0",
                       ["--default-registry-url=oci://ghcr.io/k0rdent/kcm/charts", "--enable-webhook=true"]),
            deployment("helm-controller", "flux-system", "ghcr.io/fluxcd/helm-controller:v1.4.2", FLUX_ARGS),
            deployment("kustomize-controller", "flux-system", "ghcr.io/fluxcd/kustomize-controller:v1.7.1", FLUX_ARGS),
            deployment("source-controller", "flux-system", "ghcr.io/fluxcd/source-controller:v1.7.2",
                       FLUX_ARGS + ["--storage-path=/data", "--storage-adv-addr=source-controller.$(RUNTIME_NAMESPACE).svc.cluster.local."])]

SMP_SELECTOR = {L_ADAPTER: "flux-adapter"}
ADAPTER_RULE = ("has(self.status.observedGeneration) && has(self.status.readyReplicas) && "
                "has(self.status.updatedReplicas) && self.status.observedGeneration == self.metadata.generation && "
                "self.status.updatedReplicas == self.spec.replicas && self.status.readyReplicas == self.spec.replicas")
PROV_RULE = "has(self.status.readyReplicas) && self.status.readyReplicas > 0"

def smp(name="ksm-flux", adapter="flux-adapter", created=T_FLUX):
    prov = lambda n: {"apiVersion": "apps/v1", "kind": "Deployment", "name": n, "namespace": "flux-system", "readinessRule": PROV_RULE}
    return {"apiVersion": API, "kind": "StateManagementProvider",
            "metadata": meta("StateManagementProvider", name, ns=None, created=created,
                             labels={"k0rdent.mirantis.com/component": "ksm"}),
            "spec": {"adapter": {"apiVersion": "apps/v1", "kind": "Deployment", "name": adapter, "namespace": NS,
                                 "readinessRule": ADAPTER_RULE},
                     "provisioner": [prov("helm-controller"), prov("kustomize-controller"), prov("source-controller")],
                     "provisionerCRDs": [{"group": "helm.toolkit.fluxcd.io", "resources": ["helmreleases"], "version": "v2"},
                                         {"group": "kustomize.toolkit.fluxcd.io", "resources": ["kustomizations"], "version": "v1"},
                                         {"group": "source.toolkit.fluxcd.io",
                                          "resources": ["gitrepositories", "helmrepositories", "ocirepositories"], "version": "v1"}],
                     "selector": {"matchLabels": {L_ADAPTER: adapter}}, "suspend": False},
            "status": {"conditions": [
                cond("RBACReady", "True", "RBACEnsuredSuccessfully", "Successfully ensured RBAC", t=T_FLUX),
                cond("AdapterReady", "True", "AdapterEnsuredSuccessfully", "Successfully ensured adapter", t=T_FLUX),
                cond("ProvisionerReady", "True", "ProvisionerEnsuredSuccessfully", "Successfully ensured provisioner", t=T_FLUX),
                cond("ProvisionerCRDsReady", "True", "ProvisionerCRDsEnsuredSuccessfully", "Successfully ensured provisioner CRDs", t=T_FLUX)],
                "ready": True}}

def b64(s):
    return base64.b64encode(s.encode()).decode()
FAKE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: RkFLRS1DQS1GT1ItVEVTVFMtT05MWQ==
    server: https://dev-cluster-apiserver.example.invalid:6443
  name: {c}
contexts:
- context:
    cluster: {c}
    user: {c}-admin
  name: {c}-admin@{c}
current-context: {c}-admin@{c}
users:
- name: {c}-admin
  user:
    token: FAKE-TOKEN-DOCTOR-MUST-NEVER-PRINT-THIS-{c}
"""
def secret_kubeconfig(cluster, ns=NS):
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": meta("Secret", f"{cluster}-kubeconfig", ns, generation=None,
                             labels={"cluster.x-k8s.io/cluster-name": cluster},
                             owners=[owner("Cluster", cluster, ns, "cluster.x-k8s.io/v1beta1")]),
            "data": {"value": b64(FAKE_KUBECONFIG.format(c=cluster))}}
def secret_ca(cluster, ns=NS):
    return {"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
            "metadata": meta("Secret", f"{cluster}-ca", ns, generation=None,
                             labels={"cluster.x-k8s.io/cluster-name": cluster}),
            "data": {"tls.crt": b64("FAKE CERTIFICATE " + cluster), "tls.key": b64("FAKE KEY DOCTOR-MUST-NEVER-PRINT-THIS " + cluster)}}

# ================================================================ Flux objects of the adapter
def flux_meta(kind, ss, svc, ns=NS, generation=1, created=T0, extra_labels=None):
    return meta(kind, f"{ss}-{svc}", ns, generation=generation, created=created,
                labels={L_MANAGED: "true", L_SET: ss, L_SVC: svc, **(extra_labels or {})},
                finalizers=["finalizers.fluxcd.io"], owners=[owner("ServiceSet", ss, ns)])

def kubeconfig(cluster):
    return {"secretRef": {"key": "value", "name": f"{cluster}-kubeconfig"}}

def helmrelease(ss, svc, release_ns, cluster, chart_ref=None, chart_spec=None, ns=NS, created=T0):
    spec = {"install": {"createNamespace": True}, "interval": "10m", "kubeConfig": kubeconfig(cluster),
            "releaseName": svc, "storageNamespace": release_ns, "targetNamespace": release_ns, "timeout": "5m"}
    if chart_ref: spec["chartRef"] = chart_ref
    if chart_spec: spec["chart"] = {"spec": chart_spec}
    return {"apiVersion": HR_API, "kind": "HelmRelease", "metadata": flux_meta("HelmRelease", ss, svc, ns, created=created),
            "spec": spec, "status": {}}

def hr_installed(hr, chart, version, t=T_HR, helmchart=None, action="install", rel_version=1, gen=None, first=None):
    """Ready=True/Released=True as helm-controller leaves it after a successful install/upgrade."""
    gen = gen or hr["metadata"]["generation"]
    rns, rname = hr["spec"]["targetNamespace"], hr["spec"]["releaseName"]
    reason = "InstallSucceeded" if action == "install" else "UpgradeSucceeded"
    verb = "install" if action == "install" else "upgrade"
    msg = f"Helm {verb} succeeded for release {rns}/{rname}.v{rel_version} with chart {chart}@{version}"
    cfg = "sha256:" + sha256("values/" + hr["metadata"]["name"] + str(gen))
    st = {"conditions": [cond("Ready", "True", reason, msg, gen, t), cond("Released", "True", reason, msg, gen, t)],
          "history": [{"appVersion": version.lstrip("v"), "chartName": chart, "chartVersion": version, "configDigest": cfg,
                       "digest": "sha256:" + sha256("release/" + hr["metadata"]["name"] + str(rel_version)),
                       "firstDeployed": first or t, "lastDeployed": t, "name": rname, "namespace": rns,
                       "status": "deployed", "version": rel_version, "action": action}],
          "lastAttemptedConfigDigest": cfg, "lastAttemptedGeneration": gen, "lastAttemptedReleaseAction": action,
          "lastAttemptedRevision": version, "observedGeneration": gen, "storageNamespace": rns}
    if helmchart: st["helmChart"] = helmchart
    hr["status"] = st
    return hr

def kustomization(ss, svc, target_ns, cluster, source, path="./kustomize", ns=NS, created=T0):
    return {"apiVersion": KS_API, "kind": "Kustomization", "metadata": flux_meta("Kustomization", ss, svc, ns, created=created),
            "spec": {"interval": "10m", "kubeConfig": kubeconfig(cluster), "path": path, "prune": True,
                     "sourceRef": {"kind": source["kind"], "name": source["metadata"]["name"],
                                   "namespace": source["metadata"]["namespace"]},
                     "targetNamespace": target_ns, "timeout": "5m", "wait": False},
            "status": {}}

def ks_applied(ks, revision, target_ns, t=T_HR):
    gen = ks["metadata"]["generation"]
    ks["status"] = {"conditions": [cond("Ready", "True", "ReconciliationSucceeded", f"Applied revision: {revision}", gen, t)],
                    "inventory": {"entries": [{"id": f"{target_ns}_podinfo__Service", "v": "v1"},
                                              {"id": f"{target_ns}_podinfo_apps_Deployment", "v": "v1"},
                                              {"id": f"{target_ns}_podinfo_autoscaling_HorizontalPodAutoscaler", "v": "v2"}]},
                    "lastAppliedRevision": revision, "lastAttemptedRevision": revision, "observedGeneration": gen}
    return ks

# ================================================================ ServiceSet
def svc(name, template, version, namespace):
    return {"name": name, "namespace": namespace, "template": template, "version": version}

def serviceset(name, ns, cluster, provider, services, types, states, labels=None, annotations=None, provider_status=None,
               generation=1, created=T0):
    """states: service -> (state, lastStateTransitionTime[, failureMessage])."""
    st_services = []
    for s in services:
        if s["name"] not in states: continue
        state, t, *msg = states[s["name"]]
        e = {"lastStateTransitionTime": t, "name": s["name"], "namespace": s["namespace"], "state": state,
             "template": s["template"], "type": types[s["name"]]}
        if state == "Deployed": e["version"] = s["version"]
        if msg: e["failureMessage"] = msg[0]
        st_services.append(e)
    deployed = sum(1 for e in st_services if e["state"] == "Deployed")
    last = max([e["lastStateTransitionTime"] for e in st_services] or [created])
    status = {"cluster": {"apiVersion": API, "kind": "ClusterDeployment", "name": cluster, "namespace": ns},
              "conditions": [cond("ServicesInReadyState", "True" if deployed == len(services) else "False",
                                  "ServicesInReadyState", f"{deployed}/{len(services)}", generation, last)],
              "deployed": deployed == len(services), "provider": provider_status or {"ready": True},
              "services": st_services}
    return {"apiVersion": API, "kind": "ServiceSet",
            "metadata": meta("ServiceSet", name, ns, generation=generation, created=created,
                             labels=labels if labels is not None else dict(SMP_SELECTOR), annotations=annotations,
                             finalizers=["k0rdent.mirantis.com/service-set"], owners=[owner("ClusterDeployment", cluster, ns)]),
            "spec": {"cluster": cluster, "provider": {"name": provider}, "services": services},
            "status": status}

# ================================================================ the healthy base
class Dump:
    """The objects of one dump, addressable by (kind, namespace, name)."""
    def __init__(self, objs): self.objs = objs
    def get(self, kind, name, ns=NS):
        for o in self.objs:
            if o["kind"] == kind and o["metadata"]["name"] == name and o["metadata"].get("namespace", "") == (ns or ""):
                return o
        raise KeyError((kind, ns, name))
    def remove(self, kind, name, ns=NS):
        self.objs.remove(self.get(kind, name, ns))
    def add(self, *objs): self.objs.extend(objs)
    def ss(self, name="dev-cluster", ns=NS): return self.get("ServiceSet", name, ns)
    def status_of(self, service, ss="dev-cluster", ns=NS):
        return next(e for e in self.ss(ss, ns)["status"]["services"] if e["name"] == service)
    def set_state(self, service, state, t, msg=None, ss="dev-cluster", ns=NS):
        e = self.status_of(service, ss, ns)
        e["state"], e["lastStateTransitionTime"] = state, t
        e.pop("failureMessage", None)
        if msg: e["failureMessage"] = msg
        if state != "Deployed": e.pop("version", None)
        obj = self.ss(ss, ns)
        n = len(obj["spec"]["services"])
        d = sum(1 for x in obj["status"]["services"] if x["state"] == "Deployed")
        obj["status"]["deployed"] = d == n
        c = obj["status"]["conditions"][0]
        new = ("True" if d == n else "False", f"{d}/{n}")
        if (c["status"], c["message"]) != new:
            c["status"], c["message"], c["lastTransitionTime"] = new[0], new[1], t

NGINX_T, CERTM_T, PODINFO_T = "ingress-nginx-4-13-0", "cert-manager-1-18-2", "podinfo-kustomize-6-7-1"

def dev_cluster(ss="dev-cluster", ns=NS, cluster="dev-cluster", provider="ksm-flux"):
    """ServiceSet + templates + sources + Flux objects + Secrets of one healthy cluster."""
    repo_nginx = helmrepository("ingress-nginx", "https://kubernetes.github.io/ingress-nginx", ns)
    repo_jetstack = helmrepository("jetstack", "https://charts.jetstack.io", ns)
    git = gitrepository("podinfo", ns)
    t_nginx = tmpl_chartspec(NGINX_T, "ingress-nginx", "4.13.0", "ingress-nginx",
                             description="Ingress controller for Kubernetes using NGINX as a reverse proxy and load balancer")
    t_certm = tmpl_chartspec(CERTM_T, "cert-manager", "v1.18.2", "jetstack", description="A Helm chart for cert-manager")
    for t in (t_nginx, t_certm):
        t["metadata"]["namespace"] = ns
        t["metadata"]["uid"] = uid("ServiceTemplate", ns, t["metadata"]["name"])
        t["status"]["chartRef"]["namespace"] = ns
    t_podinfo = tmpl_local(PODINFO_T, "kustomize", git, "6.7.1", path="./kustomize")
    # kcm creates one HelmChart per chartSpec template (same name/namespace, owned by the template)
    hc_nginx = helmchart(NGINX_T, "ingress-nginx", "4.13.0", "ingress-nginx", ns, owner_tmpl=NGINX_T)
    hc_certm_t = helmchart(CERTM_T, "cert-manager", "v1.18.2", "jetstack", ns, owner_tmpl=CERTM_T)
    # helm-controller creates <hr-namespace>-<hr-name> for a chart.spec HelmRelease, in the source namespace
    hc_certm = helmchart(f"{ns}-{ss}-cert-manager", "cert-manager", "v1.18.2", "jetstack", ns)
    hc_certm["metadata"]["annotations"] = {"meta.helm.toolkit.fluxcd.io/owner": f"{ns}/{ss}-cert-manager"} if False else None
    hc_certm["metadata"].pop("annotations")
    hc_certm["metadata"]["labels"] = {"helm.toolkit.fluxcd.io/name": f"{ss}-cert-manager", "helm.toolkit.fluxcd.io/namespace": ns}
    hc_certm["spec"]["sourceRef"] = {"kind": "HelmRepository", "name": "jetstack"}
    hc_certm["spec"]["interval"] = "10m"
    hc_certm["spec"]["reconcileStrategy"] = "ChartVersion"

    services = [svc("cert-manager", CERTM_T, "v1.18.2", "cert-manager"),
                svc("ingress-nginx", NGINX_T, "4.13.0", "ingress-nginx"),
                svc("podinfo", PODINFO_T, "6.7.1", "podinfo")]
    types = {"cert-manager": "Helm", "ingress-nginx": "Helm", "podinfo": "Kustomize"}
    states = {s["name"]: ("Deployed", T_SS) for s in services}
    sset = serviceset(ss, ns, cluster, provider, services, types, states)

    hr_nginx = hr_installed(helmrelease(ss, "ingress-nginx", "ingress-nginx", cluster, ns=ns,
                                        chart_ref={"kind": "HelmChart", "name": NGINX_T, "namespace": ns}),
                            "ingress-nginx", "4.13.0")
    hr_certm = hr_installed(helmrelease(ss, "cert-manager", "cert-manager", cluster, ns=ns,
                                        chart_spec={"chart": "cert-manager", "version": "v1.18.2",
                                                    "sourceRef": {"kind": "HelmRepository", "name": "jetstack", "namespace": ns}}),
                            "cert-manager", "v1.18.2", helmchart=f"{ns}/{ns}-{ss}-cert-manager")
    ks = ks_applied(kustomization(ss, "podinfo", "podinfo", cluster, git, ns=ns), PODINFO_REV, "podinfo")
    return [sset, t_certm, t_nginx, t_podinfo, hr_certm, hr_nginx, ks,
            hc_certm_t, hc_nginx, hc_certm, repo_jetstack, repo_nginx, git,
            secret_ca(cluster, ns), secret_kubeconfig(cluster, ns)]

def base():
    return Dump(CRD_OBJECTS and [copy.deepcopy(c) for c in CRD_OBJECTS] + [smp()] + deployments() + dev_cluster())

# ================================================================ emit
ORDER = ["CustomResourceDefinition", "StateManagementProvider", "Deployment", "Secret", "ServiceSet", "ServiceTemplate",
         "HelmRelease", "Kustomization", "HelmChart", "HelmRepository", "GitRepository", "OCIRepository", "Bucket"]
COMMAND = ("kubectl get crd,statemanagementproviders,deployments,secrets,servicesets,servicetemplates,helmreleases,"
           "kustomizations,helmcharts,helmrepositories,gitrepositories,ocirepositories,buckets -A -o yaml")

class D(yaml.SafeDumper):
    pass
def _str(d, s):
    if "\n" in s:
        return d.represent_scalar("tag:yaml.org,2002:str", s, style="|")
    return d.represent_str(s)
D.add_representer(str, _str)
def _style(self):
    st = yaml.SafeDumper.choose_scalar_style(self)
    return '"' if st == "'" else st   # go-yaml (kubectl) quotes with double quotes
D.choose_scalar_style = _style
D.ignore_aliases = lambda self, data: True

def sort_key(o):
    return (ORDER.index(o["kind"]), o["metadata"].get("namespace", ""), o["metadata"]["name"])

def write(case, about, dump, as_list=True):
    objs = sorted(dump.objs, key=sort_key)
    for o in objs:
        validate(o, case)
    d = os.path.join(OUT, case)
    os.makedirs(d, exist_ok=True)
    dumpit = lambda x: yaml.dump(x, Dumper=D, sort_keys=True, default_flow_style=False, allow_unicode=True, width=4096)
    head = f"# {case}: {about}\n# Saved with: {COMMAND}\n# Judge with: --now {NOW} (default --stuck-after 10m)\n"
    if as_list:
        body = dumpit({"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}})
        docs = [{"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}]
    else:
        body = "---\n".join(dumpit(o) for o in objs)
        docs = objs
    path = os.path.join(d, "dump.yaml")
    with open(path, "w") as f:
        f.write(head + body)
    with open(os.path.join(d, "README"), "w") as f:
        f.write(about + "\n")
    assert list(yaml.safe_load_all(open(path))) == docs, case

CASES = []
def case(name, codes, about, as_list=True):
    def reg(fn):
        CASES.append((name, codes, about, fn, as_list)); return fn
    return reg

def helm_fail_conditions(hr, reason, msg, t, gen=None, reconciling=None, extra=()):
    gen = gen or hr["metadata"]["generation"]
    cs = []
    if reconciling: cs.append(cond("Reconciling", "True", reconciling[0], reconciling[1], gen, t))
    cs.append(cond("Ready", "False", reason, msg, gen, t))
    cs.extend(extra)
    return cs

def fresh_hr(d, service, created):
    """The service was (re)added at `created`: its HelmRelease is new, nothing installed yet."""
    hr = d.get("HelmRelease", f"dev-cluster-{service}")
    hr["metadata"]["creationTimestamp"] = created
    hr["status"] = {}
    return hr

# ================================================================ cases
@case("healthy", [], "healthy base: SMP ksm-flux ready, ServiceSet kcm-system/dev-cluster with cert-manager (chart.spec from "
      "HelmRepository jetstack), ingress-nginx (chartRef HelmChart of its template), podinfo (Kustomization from GitRepository) "
      "all Deployed and Ready at their generation, kubeconfig Secret present → no findings (exit 0)")
def _():
    return base()

@case("smp-missing", ["KSM601"], "ServiceSet kcm-system/dev-cluster names provider \"ksm-fluxx\" (typo; no such "
      "StateManagementProvider, only ksm-flux exists); no adapter ever processed it: no status, no Flux objects → "
      "KSM601 smp-missing on ServiceSet/kcm-system/dev-cluster (the missing Flux objects are only info)")
def _():
    d = base()
    for k, n in [("HelmRelease", "dev-cluster-cert-manager"), ("HelmRelease", "dev-cluster-ingress-nginx"),
                 ("Kustomization", "dev-cluster-podinfo"), ("HelmChart", "kcm-system-dev-cluster-cert-manager")]:
        d.remove(k, n)
    ss = d.ss()
    ss["spec"]["provider"]["name"] = "ksm-fluxx"
    ss["metadata"]["creationTimestamp"] = at("11:30")
    del ss["status"]
    return d

@case("smp-not-ready", ["KSM602"], "Deployment flux-system/kustomize-controller scaled to 0 at 11:40 (status without "
      "replicas/readyReplicas, so the guarded rule `has(self.status.readyReplicas) && ...` is false); kcm wrote "
      "ProvisionerReady=False ProvisionerNotReady \"provisioner not ready\" and status.ready false; the adapter mirrors "
      "status.provider.ready false → KSM602 smp-not-ready on StateManagementProvider/ksm-flux")
def _():
    d = base()
    scale_to_zero(d.get("Deployment", "kustomize-controller", "flux-system"), at("11:40"))
    p = d.get("StateManagementProvider", "ksm-flux", None)
    c = next(c for c in p["status"]["conditions"] if c["type"] == "ProvisionerReady")
    c.update(status="False", reason="ProvisionerNotReady", message="provisioner not ready", lastTransitionTime=at("11:40:07"))
    p["status"]["ready"] = False
    d.ss()["status"]["provider"] = {"ready": False}
    return d

@case("smp-suspended", ["KSM603"], "StateManagementProvider ksm-flux has spec.suspend true (generation 2; kcm skips it, "
      "its status stays ready from generation 1); the adapter mirrors status.provider.suspended true; Flux objects "
      "unchanged and healthy → KSM603 smp-suspended on StateManagementProvider/ksm-flux")
def _():
    d = base()
    p = d.get("StateManagementProvider", "ksm-flux", None)
    p["spec"]["suspend"] = True
    p["metadata"]["generation"] = 2
    d.ss()["status"]["provider"] = {"ready": True, "suspended": True}
    return d

@case("selector-mismatch", ["KSM604"], "ServiceSet kcm-system/dev-cluster (created 11:30 by hand from the docs example) "
      "is labelled ksm.k0rdent.mirantis.com/adapter: kcm-controller-manager, but SMP ksm-flux selects adapter=flux-adapter: "
      "the flux adapter ignores it (no status, no Flux objects) → KSM604 selector-mismatch on ServiceSet/kcm-system/dev-cluster")
def _():
    d = base()
    for k, n in [("HelmRelease", "dev-cluster-cert-manager"), ("HelmRelease", "dev-cluster-ingress-nginx"),
                 ("Kustomization", "dev-cluster-podinfo"), ("HelmChart", "kcm-system-dev-cluster-cert-manager")]:
        d.remove(k, n)
    ss = d.ss()
    ss["metadata"]["labels"] = {L_ADAPTER: "kcm-controller-manager"}
    ss["metadata"]["creationTimestamp"] = at("11:30")
    del ss["status"]
    return d

@case("serviceset-paused", ["KSM605"], "ServiceSet kcm-system/dev-cluster has annotation "
      "k0rdent.mirantis.com/service-set-paused: \"true\" (since 10:45); the adapter set spec.suspend true on its two "
      "HelmReleases and its Kustomization (generation 2, observedGeneration 2, Ready=True kept from generation 1); "
      "status all Deployed → KSM605 serviceset-paused on ServiceSet/kcm-system/dev-cluster "
      "(the per-object suspensions, KSM612, are its consequence)")
def _():
    d = base()
    d.ss()["metadata"]["annotations"] = {PAUSED: "true"}
    for k, n in [("HelmRelease", "dev-cluster-cert-manager"), ("HelmRelease", "dev-cluster-ingress-nginx"),
                 ("Kustomization", "dev-cluster-podinfo")]:
        o = d.get(k, n)
        o["spec"]["suspend"] = True
        o["metadata"]["generation"] = 2
        o["status"]["observedGeneration"] = 2   # helm-/kustomize-controller patch it on the suspended no-op reconcile
    return d

NGINX_OWNERSHIP = ("Unable to continue with install: IngressClass \"nginx\" in namespace \"\" exists and cannot be imported "
                   "into the current release: invalid ownership metadata; annotation validation error: key "
                   "\"meta.helm.sh/release-name\" must equal \"ingress-nginx\": current value is \"nginx-legacy\"; "
                   "annotation validation error: key \"meta.helm.sh/release-namespace\" must equal \"ingress-nginx\": "
                   "current value is \"kube-system\"")

@case("service-failed-install", ["KSM611"], "service ingress-nginx (added 11:20) cannot install: HelmRelease "
      "kcm-system/dev-cluster-ingress-nginx Ready=False/Released=False InstallFailed (Helm: IngressClass nginx exists "
      "with another release's ownership metadata), Reconciling=True ProgressingWithRetry \"retrying after 5m0s\" "
      "(helm-controller runs with --feature-gates=DefaultToRetryOnFailure=true); ServiceSet status Failed with that "
      "failureMessage → KSM611 flux-failing on HelmRelease/kcm-system/dev-cluster-ingress-nginx")
def _():
    d = base()
    hc = d.get("Deployment", "helm-controller", "flux-system")
    hc["spec"]["template"]["spec"]["containers"][0]["args"].append("--feature-gates=DefaultToRetryOnFailure=true")
    hc["metadata"]["generation"] = hc["status"]["observedGeneration"] = 2
    hc["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "2"
    hr = fresh_hr(d, "ingress-nginx", at("11:20:02"))
    msg = f"Helm install failed for release ingress-nginx/ingress-nginx with chart ingress-nginx@4.13.0: {NGINX_OWNERSHIP}"
    t = at("11:51:09")
    hr["status"] = {"conditions": [cond("Reconciling", "True", "ProgressingWithRetry", "retrying after 5m0s", 1, t),
                                   cond("Ready", "False", "InstallFailed", msg, 1, at("11:21:07")),
                                   cond("Released", "False", "InstallFailed", msg, 1, at("11:21:07"))],
                    "failures": 7, "installFailures": 7, "lastAttemptedConfigDigest": "sha256:" + sha256("values/nginx"),
                    "lastAttemptedGeneration": 1, "lastAttemptedReleaseAction": "install", "lastAttemptedRevision": "4.13.0",
                    "storageNamespace": "ingress-nginx"}
    d.set_state("ingress-nginx", "Failed", at("11:21:08"), msg)
    return d

CERTM_HOOK = ("failed post-install: 1 error occurred:\n\t* job cert-manager-startupapicheck failed: BackoffLimitExceeded")
@case("helmrelease-stalled", ["KSM610"], "service cert-manager (added 11:10): HelmRelease kcm-system/dev-cluster-cert-manager "
      "install failed (post-install hook job cert-manager-startupapicheck BackoffLimitExceeded) with the default install "
      "remediation (retries 0): Stalled=True RetriesExceeded \"Failed to install after 1 attempt(s)\", Ready=False "
      "InstallFailed, observedGeneration 1 (terminal); ServiceSet status Failed → KSM610 flux-stalled on "
      "HelmRelease/kcm-system/dev-cluster-cert-manager")
def _():
    d = base()
    hr = fresh_hr(d, "cert-manager", at("11:10:00"))
    msg = f"Helm install failed for release cert-manager/cert-manager with chart cert-manager@v1.18.2: {CERTM_HOOK}"
    t = at("11:15:31")
    cfg = "sha256:" + sha256("values/certm")
    hr["status"] = {"conditions": [cond("Stalled", "True", "RetriesExceeded", "Failed to install after 1 attempt(s)", 1, t),
                                   cond("Ready", "False", "InstallFailed", msg, 1, t),
                                   cond("Released", "False", "InstallFailed", msg, 1, t)],
                    "failures": 1, "helmChart": "kcm-system/kcm-system-dev-cluster-cert-manager",
                    "history": [{"action": "install", "appVersion": "v1.18.2", "chartName": "cert-manager", "chartVersion": "v1.18.2",
                                 "configDigest": cfg, "digest": "sha256:" + sha256("release/certm-failed"),
                                 "firstDeployed": at("11:10:31"), "lastDeployed": at("11:10:31"), "name": "cert-manager",
                                 "namespace": "cert-manager", "status": "failed", "version": 1}],
                    "installFailures": 1, "lastAttemptedConfigDigest": cfg, "lastAttemptedGeneration": 1,
                    "lastAttemptedReleaseAction": "install", "lastAttemptedRevision": "v1.18.2", "observedGeneration": 1,
                    "storageNamespace": "cert-manager"}
    d.set_state("cert-manager", "Failed", at("11:15:32"), msg)
    return d

@case("helmrelease-remediated", ["KSM611"], "service ingress-nginx (added 11:30) with install.remediation.retries 3: the "
      "install timed out, helm-controller uninstalled it: Ready=False UninstallSucceeded \"Helm uninstall remediation for "
      "release ingress-nginx/ingress-nginx.v2 ... succeeded\", Remediated=True, Released=False InstallFailed, Reconciling=True "
      "ProgressingWithRetry; ServiceSet status Failed (remediation reasons are failures even while retrying) → KSM611 "
      "flux-failing on HelmRelease/kcm-system/dev-cluster-ingress-nginx")
def _():
    d = base()
    hr = fresh_hr(d, "ingress-nginx", at("11:30:00"))
    hr["spec"]["install"]["remediation"] = {"retries": 3}
    t1, t2 = at("11:47:14"), at("11:47:19")
    failed = ("Helm install failed for release ingress-nginx/ingress-nginx with chart ingress-nginx@4.13.0: context deadline exceeded")
    rem = "Helm uninstall remediation for release ingress-nginx/ingress-nginx.v2 with chart ingress-nginx@4.13.0 succeeded"
    hr["status"] = {"conditions": [cond("Reconciling", "True", "ProgressingWithRetry", rem, 1, t2),
                                   cond("Ready", "False", "UninstallSucceeded", rem, 1, t2),
                                   cond("Remediated", "True", "UninstallSucceeded", rem, 1, t2),
                                   cond("Released", "False", "InstallFailed", failed, 1, t1)],
                    "failures": 2, "installFailures": 2, "lastAttemptedConfigDigest": "sha256:" + sha256("values/nginx"),
                    "lastAttemptedGeneration": 1, "lastAttemptedReleaseAction": "install", "lastAttemptedRevision": "4.13.0",
                    "storageNamespace": "ingress-nginx"}
    d.set_state("ingress-nginx", "Failed", at("11:35:16"), rem)
    return d

@case("helmrelease-test-failed", ["KSM611"], "HelmRelease kcm-system/dev-cluster-ingress-nginx (test.enable true, "
      "install.remediation.ignoreTestFailures true) installed at 11:05 but its Helm test pod failed: Released=True, "
      "TestSuccess=False and Ready=False TestFailed \"Helm test failed for release ... pod ingress-nginx-test-connection "
      "failed\"; ServiceSet status Failed → KSM611 flux-failing on HelmRelease/kcm-system/dev-cluster-ingress-nginx")
def _():
    d = base()
    hr = fresh_hr(d, "ingress-nginx", at("11:04:30"))
    hr["spec"]["test"] = {"enable": True}
    hr["spec"]["install"]["remediation"] = {"ignoreTestFailures": True}
    hr_installed(hr, "ingress-nginx", "4.13.0", t=at("11:05:12"))
    hr["status"]["history"][0]["testHooks"] = {"ingress-nginx-test-connection": {
        "lastCompleted": at("11:06:40"), "lastStarted": at("11:05:13"), "phase": "Failed"}}
    tmsg = ("Helm test failed for release ingress-nginx/ingress-nginx.v1 with chart ingress-nginx@4.13.0: "
            "pod ingress-nginx-test-connection failed")
    t = at("11:06:40")
    cs = hr["status"]["conditions"]
    released = next(c for c in cs if c["type"] == "Released")
    hr["status"]["conditions"] = [cond("Reconciling", "True", "ProgressingWithRetry", tmsg, 1, t),
                                  cond("Ready", "False", "TestFailed", tmsg, 1, t), released,
                                  cond("TestSuccess", "False", "TestFailed", tmsg, 1, t)]
    hr["status"]["lastAttemptedReleaseAction"] = "install"
    d.set_state("ingress-nginx", "Failed", at("11:06:41"), tmsg)
    return d

NEW_COMMIT = sha1("podinfo-master-2026-11-21")
NEW_REV = f"master@sha1:{NEW_COMMIT}"
def new_git_revision(d, t):
    g = d.get("GitRepository", "podinfo")
    g["status"]["artifact"] = artifact("GitRepository", NS, "podinfo", NEW_REV, f"{NEW_COMMIT}.tar.gz", "git/new", 88517)
    g["status"]["artifact"]["lastUpdateTime"] = t
    g["status"]["conditions"] = ready_src(f"stored artifact for revision '{NEW_REV}'", t=t)

@case("kustomization-build-failed", ["KSM611"], "GitRepository kcm-system/podinfo got a new revision at 11:31; "
      "Kustomization kcm-system/dev-cluster-podinfo fails to build it: Ready=False BuildFailed \"kustomize build failed: "
      "...\", Reconciling=True ProgressingWithRetry, lastAppliedRevision still the old one; ServiceSet status Failed → "
      "KSM611 flux-failing on Kustomization/kcm-system/dev-cluster-podinfo")
def _():
    d = base()
    new_git_revision(d, at("11:31:02"))
    ks = d.get("Kustomization", "dev-cluster-podinfo")
    msg = ("kustomize build failed: accumulating resources: accumulation err='accumulating resources from "
           "'deployment.yaml': missing Resource metadata'")
    t = at("11:31:05")
    ks["status"]["conditions"] = [
        cond("Reconciling", "True", "ProgressingWithRetry", f"Building manifests for revision {NEW_REV} with a timeout of 5m0s", 1, t),
        cond("Ready", "False", "BuildFailed", msg, 1, t)]
    ks["status"]["lastAttemptedRevision"] = NEW_REV
    d.set_state("podinfo", "Failed", at("11:31:06"), msg)
    return d

@case("kustomization-health-check-failed", ["KSM611"], "provider.config wait: true; the new podinfo revision (11:40) was "
      "applied but Deployment podinfo/podinfo never became ready: Kustomization kcm-system/dev-cluster-podinfo Ready=False "
      "and Healthy=False HealthCheckFailed \"timeout waiting for: [Deployment/podinfo/podinfo status: 'InProgress']\", "
      "Reconciling=True ProgressingWithRetry; ServiceSet status Failed → KSM611 flux-failing on "
      "Kustomization/kcm-system/dev-cluster-podinfo")
def _():
    d = base()
    d.ss()["spec"]["provider"]["config"] = {"wait": True}
    new_git_revision(d, at("11:40:00"))
    ks = d.get("Kustomization", "dev-cluster-podinfo")
    ks["spec"]["wait"] = True
    msg = "timeout waiting for: [Deployment/podinfo/podinfo status: 'InProgress']"
    t0, t = at("11:40:03"), at("11:45:04")
    ks["status"]["conditions"] = [
        cond("Reconciling", "True", "ProgressingWithRetry", f"Running health checks for revision {NEW_REV} with a timeout of 5m0s", 1, t0),
        cond("Ready", "False", "HealthCheckFailed", msg, 1, t),
        cond("Healthy", "False", "HealthCheckFailed", msg, 1, t)]
    ks["status"]["lastAttemptedRevision"] = NEW_REV
    ks["status"]["history"] = [{"digest": "sha256:" + sha256("ks-history-new"), "firstReconciled": t, "lastReconciled": t,
                                "lastReconciledDuration": "5m0.94s", "lastReconciledStatus": "HealthCheckFailed",
                                "metadata": {"revision": NEW_REV}, "totalReconciliations": 1}]
    d.set_state("podinfo", "Failed", at("11:45:05"), msg)
    return d

def installing(d, service, since, created):
    hr = fresh_hr(d, service, created)
    m = "Running 'install' action with timeout of 5m0s"
    rel = hr["spec"]["releaseName"]
    hr["status"] = {"conditions": [cond("Reconciling", "True", "Progressing", m, 1, since),
                                   cond("Ready", "Unknown", "Progressing", m, 1, since)],
                    "lastAttemptedConfigDigest": "sha256:" + sha256("values/" + rel), "lastAttemptedGeneration": 1,
                    "lastAttemptedReleaseAction": "install",
                    "lastAttemptedRevision": {"ingress-nginx": "4.13.0", "cert-manager": "v1.18.2"}[service],
                    "storageNamespace": hr["spec"]["storageNamespace"]}
    if "chart" in hr["spec"]:
        hr["status"]["helmChart"] = f"kcm-system/kcm-system-{hr['metadata']['name']}"
    return hr

@case("service-stuck-provisioning", ["KSM607"], "service ingress-nginx added at 11:00: HelmRelease "
      "kcm-system/dev-cluster-ingress-nginx has been Ready=Unknown Progressing \"Running 'install' action with timeout of "
      "5m0s\" since 11:00:05 and the ServiceSet status says Provisioning since 11:00 (60 min > --stuck-after 10m) → "
      "KSM607 service-stuck for ingress-nginx (object HelmRelease/kcm-system/dev-cluster-ingress-nginx)")
def _():
    d = base()
    installing(d, "ingress-nginx", at("11:00:05"), at("10:59:58"))
    d.set_state("ingress-nginx", "Provisioning", at("11:00:00"))
    return d

@case("service-pending-not-stuck", [], "same as service-stuck-provisioning but the install started at 11:58: "
      "Ready=Unknown Progressing since 11:58:02, ServiceSet status Provisioning since 11:58 (2 min < 10m) → "
      "no findings (exit 0)")
def _():
    d = base()
    installing(d, "ingress-nginx", at("11:58:02"), at("11:57:58"))
    d.set_state("ingress-nginx", "Provisioning", at("11:58:00"))
    return d

@case("status-disagrees", ["KSM608"], "ServiceSet status says cert-manager Failed since 10:20 (an old install timeout), "
      "but HelmRelease kcm-system/dev-cluster-cert-manager has been Ready=True InstallSucceeded at its generation since "
      "10:41: the adapter did not update the status → KSM608 status-disagrees for cert-manager "
      "(ServiceSet/kcm-system/dev-cluster: Failed vs Deployed)")
def _():
    d = base()
    hr = fresh_hr(d, "cert-manager", at("10:14:40"))
    hr_installed(hr, "cert-manager", "v1.18.2", t=at("10:41:12"), helmchart="kcm-system/kcm-system-dev-cluster-cert-manager",
                 rel_version=2, first=at("10:41:12"))
    d.set_state("cert-manager", "Failed", at("10:20:33"),
                "Helm install failed for release cert-manager/cert-manager with chart cert-manager@v1.18.2: context deadline exceeded")
    return d

@case("flux-object-missing", ["KSM609"], "the Kustomization kcm-system/dev-cluster-podinfo does not exist (deleted by "
      "hand at 11:20), yet the ServiceSet status still says podinfo Deployed → KSM609 flux-missing (error) for podinfo "
      "(HelmRelease|Kustomization/kcm-system/dev-cluster-podinfo)")
def _():
    d = base()
    d.remove("Kustomization", "dev-cluster-podinfo")
    return d

@case("flux-suspended", ["KSM612"], "HelmRelease kcm-system/dev-cluster-cert-manager has spec.suspend true (flux "
      "suspend at 10:30; generation 2, observedGeneration 2, Ready=True kept from generation 1); the ServiceSet is not "
      "paused; status Deployed → KSM612 flux-suspended on HelmRelease/kcm-system/dev-cluster-cert-manager")
def _():
    d = base()
    hr = d.get("HelmRelease", "dev-cluster-cert-manager")
    hr["spec"]["suspend"] = True
    hr["metadata"]["generation"] = 2
    hr["status"]["observedGeneration"] = 2
    return d

@case("flux-old-generation", ["KSM613"], "HelmRelease kcm-system/dev-cluster-ingress-nginx got new values at 11:56:40 "
      "(generation 3) but helm-controller has not reconciled it yet: observedGeneration 2, Ready=True UpgradeSucceeded from "
      "generation 2; ServiceSet status Provisioning since 11:56:41 (not stuck) → KSM613 flux-old-generation on "
      "HelmRelease/kcm-system/dev-cluster-ingress-nginx")
def _():
    d = base()
    hr = d.get("HelmRelease", "dev-cluster-ingress-nginx")
    hr["metadata"]["generation"] = 3
    hr["spec"]["values"] = {"controller": {"replicaCount": 3, "service": {"type": "LoadBalancer"}}}
    hr_installed(hr, "ingress-nginx", "4.13.0", t=at("10:15:20"), action="upgrade", rel_version=2, gen=2, first=T_HR)
    d.ss()["spec"]["services"][1]["values"] = "controller:\n  replicaCount: 3\n  service:\n    type: LoadBalancer\n"
    d.ss()["metadata"]["generation"] = 3
    d.set_state("ingress-nginx", "Provisioning", at("11:56:41"))
    return d

@case("dependency-not-ready", ["KSM614"], "cert-manager and ingress-nginx (re)added at 11:55; HelmRelease "
      "kcm-system/dev-cluster-ingress-nginx dependsOn dev-cluster-cert-manager: Ready=False DependencyNotReady "
      "\"dependency 'kcm-system/dev-cluster-cert-manager' is not ready\"; cert-manager is installing (Ready=Unknown since "
      "11:56, not stuck); ServiceSet status ingress-nginx Pending, cert-manager Provisioning → KSM614 "
      "dependency-not-ready on HelmRelease/kcm-system/dev-cluster-ingress-nginx")
def _():
    d = base()
    installing(d, "cert-manager", at("11:56:02"), at("11:55:40"))
    hr = fresh_hr(d, "ingress-nginx", at("11:55:40"))
    hr["spec"]["dependsOn"] = [{"name": "dev-cluster-cert-manager"}]
    t = at("11:59:41")
    hr["status"] = {"conditions": [
        cond("Reconciling", "True", "Progressing", "Fulfilling prerequisites", 1, at("11:55:41")),
        cond("Ready", "False", "DependencyNotReady", "dependency 'kcm-system/dev-cluster-cert-manager' is not ready", 1, at("11:55:41"))]}
    d.set_state("cert-manager", "Provisioning", at("11:56:00"))
    d.set_state("ingress-nginx", "Pending", at("11:55:41"))
    return d

@case("source-helmchart-failed", ["KSM615"], "HelmChart kcm-system/ingress-nginx-4-13-0 (status.chartRef of the template) "
      "Ready=False ChartPullError since 11:12 (source-controller restarted without its storage and cannot re-download the "
      "chart: 404 from the upstream URL); HelmRelease kcm-system/dev-cluster-ingress-nginx Ready=False ArtifactFailed "
      "\"Source not ready: artifact not found. Retrying in 30s\"; ServiceSet status Failed → KSM615 source-failing on "
      "HelmChart/kcm-system/ingress-nginx-4-13-0")
def _():
    d = base()
    hc = d.get("HelmChart", NGINX_T)
    msg = ("chart pull error: failed to download chart for remote reference: failed to fetch "
           "https://github.com/kubernetes/ingress-nginx/releases/download/helm-chart-4.13.0/ingress-nginx-4.13.0.tgz : 404 Not Found")
    set_failed(hc, "ChartPullError", msg, at("11:12:30"))
    hc["status"]["conditions"][-1] = cond("ArtifactInStorage", "False", "ArtifactOutdated",
                                          "artifact is not present in storage", 1, at("11:12:29"))
    hr = d.get("HelmRelease", "dev-cluster-ingress-nginx")
    hr["metadata"]["generation"] = 2
    hr["spec"]["values"] = {"controller": {"replicaCount": 2}}
    hm = "Source not ready: artifact not found. Retrying in 30s"
    hr["status"]["conditions"] = [cond("Reconciling", "True", "Progressing", "Fulfilling prerequisites", 2, at("11:13:00")),
                                  cond("Ready", "False", "ArtifactFailed", hm, 2, at("11:13:00")),
                                  hr["status"]["conditions"][1]]
    d.set_state("ingress-nginx", "Failed", at("11:13:01"), hm)
    return d

@case("source-helmrepository-failed", ["KSM615"], "HelmRepository kcm-system/jetstack re-created at 11:05 (new URL) and "
      "its index fetch fails: FetchFailed=True/Ready=False Failed \"failed to fetch Helm repository index: ... 403 "
      "Forbidden\", no artifact; the HelmChart kcm-system/kcm-system-dev-cluster-cert-manager that helm-controller generated "
      "for the chart.spec HelmRelease is Ready=False NoSourceArtifact; HelmRelease kcm-system/dev-cluster-cert-manager "
      "(re-created 11:05) Ready=False SourceNotReady; ServiceSet status Failed → KSM615 source-failing on "
      "HelmRepository/kcm-system/jetstack (or the HelmChart it names)")
def _():
    d = base()
    repo = d.get("HelmRepository", "jetstack")
    repo["metadata"]["creationTimestamp"] = at("11:05:00")
    repo["spec"]["url"] = "https://charts.jetstack.example/charts"
    repo["status"].pop("url")
    msg = ("failed to fetch Helm repository index: failed to cache index to temporary file: failed to fetch "
           "https://charts.jetstack.example/charts/index.yaml : 403 Forbidden")
    set_failed(repo, "Failed", msg, at("11:05:02"), keep_artifact=False)
    hc = d.get("HelmChart", "kcm-system-dev-cluster-cert-manager")
    hc["metadata"]["creationTimestamp"] = at("11:05:01")
    hmsg = "no artifact available for HelmRepository source 'jetstack'"
    set_failed(hc, "NoSourceArtifact", hmsg, at("11:05:02"), keep_artifact=False)
    hc["status"] = {"conditions": hc["status"]["conditions"], "observedChartName": "cert-manager"}
    hr = fresh_hr(d, "cert-manager", at("11:05:00"))
    m = ("HelmChart 'kcm-system/kcm-system-dev-cluster-cert-manager' is not ready: latest generation of object has not "
         "been reconciled")
    hr["status"] = {"conditions": [cond("Reconciling", "True", "Progressing", "Fulfilling prerequisites", 1, at("11:05:01")),
                                   cond("Ready", "False", "SourceNotReady", m, 1, at("11:05:02"))],
                    "helmChart": "kcm-system/kcm-system-dev-cluster-cert-manager"}
    d.set_state("cert-manager", "Failed", at("11:20:02"), m)
    return d

GIT_AUTH = ("failed to checkout and determine revision: unable to clone 'https://github.com/example-org/podinfo-private': "
            "authentication required: Repository not found.")
@case("source-gitrepository-failed", ["KSM615"], "GitRepository kcm-system/podinfo was re-created at 11:10 pointing at a "
      "private repository without credentials: FetchFailed=True/Ready=False GitOperationFailed \"failed to checkout and "
      "determine revision: unable to clone ...: authentication required\", no artifact (the template's sourceStatus is "
      "still the old copy: kcm does not watch a localSourceRef); Kustomization kcm-system/dev-cluster-podinfo Ready=False "
      "ArtifactFailed \"Source artifact not found, retrying in 30s\"; ServiceSet status Failed → KSM615 source-failing on "
      "GitRepository/kcm-system/podinfo")
def _():
    d = base()
    g = d.get("GitRepository", "podinfo")
    g["metadata"]["creationTimestamp"] = at("11:10:00")
    g["spec"]["url"] = "https://github.com/example-org/podinfo-private"
    set_failed(g, "GitOperationFailed", GIT_AUTH, at("11:10:03"), keep_artifact=False)
    ks = d.get("Kustomization", "dev-cluster-podinfo")
    m = "Source artifact not found, retrying in 30s"
    ks["status"]["conditions"] = [cond("Reconciling", "True", "ProgressingWithRetry", "reconciliation in progress", 1, at("11:10:04")),
                                  cond("Ready", "False", "ArtifactFailed", m, 1, at("11:10:04"))]
    d.set_state("podinfo", "Failed", at("11:20:05"), m)
    return d

def oci_repo(name, url, tag, ns=NS):
    dg = sha256("oci/" + name + tag)
    rev = f"{tag}@sha256:{dg}"
    return {"apiVersion": SRC_API, "kind": "OCIRepository",
            "metadata": meta("OCIRepository", name, ns, finalizers=["finalizers.fluxcd.io"]),
            "spec": {"interval": "10m", "layerSelector": {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                                                          "operation": "copy"},
                     "ref": {"tag": tag}, "timeout": "60s", "url": url},
            "status": {"artifact": artifact("OCIRepository", ns, name, rev, f"{dg}.tgz", "oci/" + name, 14337),
                       "conditions": ready_src(f"stored artifact for digest '{rev}'"), "observedGeneration": 1, "url":
                       f"http://source-controller.flux-system.svc.cluster.local./ocirepository/{ns}/{name}/latest.tar.gz"}}

@case("source-ocirepository-failed", ["KSM615"], "service podinfo uses a helm chartSource template from OCIRepository "
      "kcm-system/podinfo-chart (HelmRelease chartRef OCIRepository); the OCIRepository was re-created at 11:15 with tag "
      "6.99.0: FetchFailed=True/Ready=False OCIArtifactPullFailed \"failed to determine artifact digest: ... "
      "MANIFEST_UNKNOWN\", no artifact; HelmRelease kcm-system/dev-cluster-podinfo Ready=False SourceNotReady; ServiceSet "
      "status Failed → KSM615 source-failing on OCIRepository/kcm-system/podinfo-chart")
def _():
    d = base()
    for k, n in [("Kustomization", "dev-cluster-podinfo"), ("ServiceTemplate", PODINFO_T), ("GitRepository", "podinfo")]:
        d.remove(k, n)
    oci = oci_repo("podinfo-chart", "oci://ghcr.io/stefanprodan/charts/podinfo", "6.7.1")
    tmpl = tmpl_local("podinfo-oci-6-7-1", "chartSource", oci, "6.7.1")
    hr = hr_installed(helmrelease("dev-cluster", "podinfo", "podinfo", "dev-cluster",
                                  chart_ref={"kind": "OCIRepository", "name": "podinfo-chart", "namespace": NS}),
                      "podinfo", "6.7.1")
    oci["metadata"]["creationTimestamp"] = at("11:15:00")
    oci["spec"]["ref"]["tag"] = "6.99.0"
    msg = ("failed to determine artifact digest: GET https://ghcr.io/v2/stefanprodan/charts/podinfo/manifests/6.99.0: "
           "MANIFEST_UNKNOWN: manifest unknown; map[Tag:6.99.0]")
    set_failed(oci, "OCIArtifactPullFailed", msg, at("11:15:02"), keep_artifact=False)
    hr["status"]["conditions"] = [cond("Reconciling", "True", "Progressing", "Fulfilling prerequisites", 1, at("11:15:03")),
                                  cond("Ready", "False", "SourceNotReady",
                                       f"OCIRepository 'kcm-system/podinfo-chart' is not ready: {msg}", 1, at("11:15:03")),
                                  hr["status"]["conditions"][1]]
    d.add(oci, tmpl, hr)
    ss = d.ss()
    ss["spec"]["services"][2] = svc("podinfo", "podinfo-oci-6-7-1", "6.7.1", "podinfo")
    e = d.status_of("podinfo")
    e["template"], e["type"] = "podinfo-oci-6-7-1", "Helm"
    d.set_state("podinfo", "Failed", at("11:25:03"), hr["status"]["conditions"][1]["message"])
    return d

@case("source-bucket-failed", ["KSM615"], "service podinfo is a kustomize template from Bucket kcm-system/podinfo-manifests "
      "(S3); the Bucket was re-created at 11:08 with another bucket name: FetchFailed=True/Ready=False BucketOperationFailed "
      "\"bucket 'podinfo-manifests-eu' not found\", no artifact; Kustomization kcm-system/dev-cluster-podinfo Ready=False "
      "ArtifactFailed; ServiceSet status Failed → KSM615 source-failing on Bucket/kcm-system/podinfo-manifests")
def _():
    d = base()
    d.remove("ServiceTemplate", PODINFO_T); d.remove("GitRepository", "podinfo")
    b = {"apiVersion": SRC_API, "kind": "Bucket",
         "metadata": meta("Bucket", "podinfo-manifests", NS, finalizers=["finalizers.fluxcd.io"], created=at("11:08:00")),
         "spec": {"bucketName": "podinfo-manifests", "endpoint": "s3.eu-central-1.amazonaws.com", "interval": "5m",
                  "provider": "aws", "region": "eu-central-1", "timeout": "60s"},
         "status": {"artifact": artifact("Bucket", NS, "podinfo-manifests", "sha256:" + sha256("bucket-index"),
                                         sha256("bucket-index") + ".tar.gz", "bucket", 20412),
                    "conditions": ready_src("stored artifact: revision 'sha256:%s'" % sha256("bucket-index")),
                    "observedGeneration": 1}}
    tmpl = tmpl_local("podinfo-kustomize-bucket-6-7-1", "kustomize", b, "6.7.1", path="./kustomize")
    b["spec"]["bucketName"] = "podinfo-manifests-eu"
    set_failed(b, "BucketOperationFailed", "bucket 'podinfo-manifests-eu' not found", at("11:08:02"), keep_artifact=False)
    ks = d.get("Kustomization", "dev-cluster-podinfo")
    ks["spec"]["sourceRef"] = {"kind": "Bucket", "name": "podinfo-manifests", "namespace": NS}
    m = "Source artifact not found, retrying in 30s"
    ks["status"]["conditions"] = [cond("Reconciling", "True", "ProgressingWithRetry", "reconciliation in progress", 1, at("11:08:03")),
                                  cond("Ready", "False", "ArtifactFailed", m, 1, at("11:08:03"))]
    d.add(b, tmpl)
    d.ss()["spec"]["services"][2]["template"] = "podinfo-kustomize-bucket-6-7-1"
    d.status_of("podinfo")["template"] = "podinfo-kustomize-bucket-6-7-1"
    d.set_state("podinfo", "Failed", at("11:18:03"), m)
    return d

@case("template-invalid", ["KSM616"], "service ingress-nginx was moved to template ingress-nginx-4-99-0 (chart version "
      "4.99.0 does not exist): ServiceTemplate kcm-system/ingress-nginx-4-99-0 status.valid false with validationError, its "
      "HelmChart Ready=False ChartPullError; the adapter left the old HelmRelease on 4.13.0 and reports Failed → KSM616 "
      "template-invalid on ServiceTemplate/kcm-system/ingress-nginx-4-99-0")
def _():
    d = base()
    name = "ingress-nginx-4-99-0"
    pull = ("chart pull error: failed to get chart version for remote reference: no 'ingress-nginx' chart with version "
            "matching '4.99.0' found")
    err = f"failed to get HelmChart artifact: HelmChart {NS}/{name} is not ready: {pull}"
    t = tmpl_chartspec(name, "ingress-nginx", "4.99.0", "ingress-nginx", valid=False, validation_error=err)
    t["metadata"]["creationTimestamp"] = at("11:22:00")
    hc = helmchart(name, "ingress-nginx", "4.99.0", "ingress-nginx", owner_tmpl=name)
    hc["metadata"]["creationTimestamp"] = at("11:22:00")
    set_failed(hc, "ChartPullError", pull, at("11:22:01"), keep_artifact=False)
    hc["status"]["observedChartName"] = "ingress-nginx"
    d.add(t, hc)
    ss = d.ss()
    ss["metadata"]["generation"] = 2
    ss["spec"]["services"][1] = svc("ingress-nginx", name, "4.99.0", "ingress-nginx")
    d.status_of("ingress-nginx")["template"] = name
    d.set_state("ingress-nginx", "Failed", at("11:22:04"), f"ServiceTemplate {NS}/{name} is not valid: {err}")
    return d

@case("kubeconfig-missing", ["KSM617"], "Secret kcm-system/dev-cluster-kubeconfig is gone (deleted at 11:58; the dump "
      "holds other Secrets, e.g. dev-cluster-ca, so Secrets were collected); everything else is still healthy → KSM617 "
      "kubeconfig-missing on Secret/kcm-system/dev-cluster-kubeconfig")
def _():
    d = base()
    d.remove("Secret", "dev-cluster-kubeconfig")
    return d

@case("smp-status-stale", ["KSM618"], "EXTRA: SMP ksm-flux status.ready true (kcm last wrote it yesterday), but "
      "Deployment flux-system/source-controller has been scaled to 0 at 11:50 (no readyReplicas): its rules evaluate to false "
      "now; kcm has not reconciled (kcm-controller-manager down to 0 replicas too) → KSM618 smp-status-stale on "
      "StateManagementProvider/ksm-flux")
def _():
    d = base()
    scale_to_zero(d.get("Deployment", "source-controller", "flux-system"), at("11:50"))
    scale_to_zero(d.get("Deployment", "kcm-controller-manager"), at("11:49"))
    return d

@case("multi-problem", ["KSM603", "KSM615"], "two ServiceSets: kcm-system/dev-cluster (provider ksm-flux, healthy) and "
      "team-a/prod-eu (provider ksm-flux-edge, selector adapter=flux-adapter-edge) whose SMP ksm-flux-edge is suspended and "
      "whose GitRepository team-a/podinfo fails (GitOperationFailed, re-created 11:10, no artifact; Kustomization "
      "team-a/prod-eu-podinfo ArtifactFailed, status Failed); saved as several documents, not a List → KSM603 smp-suspended "
      "on StateManagementProvider/ksm-flux-edge and KSM615 source-failing on GitRepository/team-a/podinfo; nothing for "
      "dev-cluster", as_list=False)
def _():
    d = base()
    edge = smp("ksm-flux-edge", "flux-adapter-edge", created=T0)
    edge["spec"]["suspend"] = True
    edge["metadata"]["generation"] = 2
    ad = deployment("flux-adapter-edge", NS, "ghcr.io/k0rdent/ksm-flux-adapter:0.4.1", ["--leader-elect", "--selector=flux-adapter-edge"],
                    created=T0)
    objs = dev_cluster(ss="prod-eu", ns="team-a", cluster="prod-eu", provider="ksm-flux-edge")
    team = Dump(objs)
    team.ss("prod-eu", "team-a")["metadata"]["labels"] = {L_ADAPTER: "flux-adapter-edge"}
    team.ss("prod-eu", "team-a")["status"]["provider"] = {"ready": True, "suspended": True}
    g = team.get("GitRepository", "podinfo", "team-a")
    g["metadata"]["creationTimestamp"] = at("11:10:00")
    g["spec"]["url"] = "https://github.com/example-org/podinfo-private"
    set_failed(g, "GitOperationFailed", GIT_AUTH, at("11:10:03"), keep_artifact=False)
    ks = team.get("Kustomization", "prod-eu-podinfo", "team-a")
    m = "Source artifact not found, retrying in 30s"
    ks["status"]["conditions"] = [cond("Reconciling", "True", "ProgressingWithRetry", "reconciliation in progress", 1, at("11:10:04")),
                                  cond("Ready", "False", "ArtifactFailed", m, 1, at("11:10:04"))]
    team.set_state("podinfo", "Failed", at("11:20:05"), m, ss="prod-eu", ns="team-a")
    d.add(edge, ad, *team.objs)
    return d

@case("flux-priority-conflict", ["KSM633"], "MultiClusterService global-ingress (priority 500) selects dev-cluster at 11:30: "
      "its ServiceSet kcm-system/dev-cluster-bb74fe23 deploys ingress-nginx into ingress-nginx on dev-cluster too; the adapter "
      "gave the release to it (higher priority): the ClusterDeployment's HelmRelease kcm-system/dev-cluster-ingress-nginx was "
      "handed over (suspended, then deleted) and the MCS's kcm-system/dev-cluster-bb74fe23-ingress-nginx upgraded it at 11:31; "
      "dev-cluster's status says ingress-nginx Failed with the owner → KSM633 flux-release-conflict for ingress-nginx of "
      "ServiceSet/kcm-system/dev-cluster, naming dev-cluster-bb74fe23 and both priorities")
def _():
    d = base()
    mcs_ss = "dev-cluster-bb74fe23"
    nginx = svc("ingress-nginx", NGINX_T, "4.13.0", "ingress-nginx")
    s = serviceset(mcs_ss, NS, "dev-cluster", "ksm-flux", [nginx], {"ingress-nginx": "Helm"},
                   {"ingress-nginx": ("Deployed", at("11:31:10"))}, created=at("11:30:00"))
    s["spec"]["provider"]["config"] = {"priority": 500}
    s["spec"]["multiClusterService"] = "global-ingress"
    s["metadata"]["ownerReferences"] = [owner("MultiClusterService", "global-ingress", None)]
    hr = hr_installed(helmrelease(mcs_ss, "ingress-nginx", "ingress-nginx", "dev-cluster",
                                  chart_ref={"kind": "HelmChart", "name": NGINX_T, "namespace": NS}, created=at("11:30:01")),
                      "ingress-nginx", "4.13.0", t=at("11:31:05"), action="upgrade", rel_version=2, first=T_HR)
    d.remove("HelmRelease", "dev-cluster-ingress-nginx")
    d.set_state("ingress-nginx", "Failed", at("11:30:02"),
                "Helm release ingress-nginx/ingress-nginx on cluster kcm-system/dev-cluster is owned by service ingress-nginx "
                "of ServiceSet kcm-system/dev-cluster-bb74fe23: its priority 500 against this one's 100")
    d.add(s, hr)
    return d

@case("flux-duplicate-release", ["KSM634"], "someone applied a HelmRelease kcm-system/ingress-nginx by hand at 11:20 "
      "(releaseName ingress-nginx, storage/target namespace ingress-nginx, kubeConfig of dev-cluster): the same Helm release "
      "as the adapter's kcm-system/dev-cluster-ingress-nginx; both report Ready (each upgraded it last with its own values) "
      "→ KSM634 flux-duplicate-release on HelmRelease/kcm-system/dev-cluster-ingress-nginx, naming both objects and "
      "ServiceSet kcm-system/dev-cluster")
def _():
    d = base()
    hr = helmrelease("dev-cluster", "ingress-nginx", "ingress-nginx", "dev-cluster",
                     chart_ref={"kind": "HelmChart", "name": NGINX_T, "namespace": NS}, created=at("11:20:00"))
    hr["metadata"] = meta("HelmRelease", "ingress-nginx", NS, created=at("11:20:00"),
                          finalizers=["finalizers.fluxcd.io"])
    hr_installed(hr, "ingress-nginx", "4.13.0", t=at("11:20:40"), action="upgrade", rel_version=2, first=T_HR)
    d.add(hr)
    return d

# ================================================================ main
if __name__ == "__main__":
    lines = ["# doctor fixtures", "",
             f"Generated by gen.py (do not edit the cases by hand). Judge every dump with `--now {NOW}` "
             "(default `--stuck-after 10m`).", "", "| case | expected codes | situation → finding |", "|---|---|---|"]
    for name, codes, about, fn, as_list in CASES:
        write(name, about, fn(), as_list)
        lines.append(f"| {name} | {' '.join(codes) or '(none)'} | {about.replace('|', '/')} |")
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(len(CASES), "cases written to", OUT)
