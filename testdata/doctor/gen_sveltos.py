#!/usr/bin/env python3
"""Generates testdata/doctor/sveltos-<case>/{dump.yaml,README}: ServiceSets of kcm's default
provider ksm-projectsveltos with their Profile/ClusterProfile, ClusterSummary and
ClusterConfiguration, one dump per case of the Sveltos chain a doctor must explain.

Every dump is judged with `--now 2026-11-21T12:00:00Z` (default `--stuck-after 10m`). The base
objects are the hand-written examples of testdata/sveltos/examples (ServiceSet 01, Profile 02,
ClusterConfiguration 03, ClusterSummary 04, self-management 07, conflict 08); each case changes
what its README says. Facts: kcm's Sveltos adapter (state.go mapping, verify.go) and Sveltos
v1.12.0, as written down in the project's domain notes.

Usage: python3 gen_sveltos.py
"""
import copy, hashlib, os
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(HERE, "..", "sveltos", "examples")
NOW = "2026-11-21T12:00:00Z"
T_OLD = "2026-11-21T09:00:00Z"    # three hours before NOW: stuck
T_NEW = "2026-11-21T11:58:00Z"    # two minutes before NOW: not stuck yet
PROFILE_UID = "5f0e7a2c-93b1-4d6e-a8f4-7c21b0d9e3aa"
SS_UID = "0b6a3d55-1f2e-4c7a-8d90-2e4f6a8b0c1d"


def load(name):
    with open(os.path.join(EX, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


INPUTS = load("00-inputs.yaml")
SS = load("01-serviceset.yaml")[0]
SS["metadata"]["uid"] = SS_UID
PROFILE = load("02-profile.yaml")[0]
PROFILE["metadata"]["uid"] = PROFILE_UID
CC = load("03-clusterconfiguration.yaml")[0]
CS = load("04-clustersummary-partial-failure.yaml")[0]
SELF = load("07-multiclusterservice-selfmanagement.yaml")
CONFLICT = load("08-clustersummary-conflict.yaml")

with open(os.path.join(HERE, "..", "examples", "smp-ksm-projectsveltos.yaml")) as f:
    SMP = yaml.safe_load(f)
SMP["status"] = {"ready": True, "conditions": [
    {"type": t, "status": "True", "reason": r, "message": m, "lastTransitionTime": "2026-11-14T08:13:00Z"}
    for t, r, m in [("RBACReady", "RBACEnsuredSuccessfully", "Successfully ensured RBAC"),
                    ("AdapterReady", "AdapterEnsuredSuccessfully", "Successfully ensured adapter"),
                    ("ProvisionerReady", "ProvisionerEnsuredSuccessfully", "Successfully ensured provisioner"),
                    ("ProvisionerCRDsReady", "ProvisionerCRDsEnsuredSuccessfully", "Successfully ensured provisioner CRDs"),
                    ("Ready", "Succeeded", "StateManagementProvider is ready")]]}


def deployment(ns, name):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "generation": 1},
            "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "replicas": 1, "availableReplicas": 1,
                       "readyReplicas": 1, "updatedReplicas": 1}}


def crd(plural, kind, group="config.projectsveltos.io", version="v1beta1"):
    """A CRD as `kubectl get crd` saves it, its schema reduced to an open object."""
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "names": {"kind": kind, "plural": plural, "listKind": kind + "List",
                                               "singular": kind.lower()},
                     "scope": "Namespaced",
                     "versions": [{"name": version, "served": True, "storage": True, "schema": schema,
                                   "subresources": {"status": {}}}]},
            "status": {"conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                       "message": "the initial names have been accepted"}]}}


PLATFORM = [SMP, deployment("kcm-system", "kcm-controller-manager"),
            deployment("projectsveltos", "addon-controller"),
            crd("profiles", "Profile"), crd("clustersummaries", "ClusterSummary"),
            crd("clusters", "Cluster", "cluster.x-k8s.io", "v1beta2")]

FEATURE_OK = {"featureID": "Helm", "status": "Provisioned", "consecutiveFailures": 0,
              "hash": "8UsfB9vZpjIceiTHIKYgrr+emLow23ABa5RxloaKZkQ=", "lastAppliedTime": "2026-11-21T09:02:31Z"}


def cc_with(*releases):
    cc = copy.deepcopy(CC)
    charts = []
    for ns, name, repo, version in releases:
        charts.append({"repoURL": repo, "releaseName": name, "namespace": ns, "chartVersion": version,
                       "appVersion": version, "lastAppliedTime": "2026-11-21T09:01:40Z"})
    cc["status"]["profileResources"][0]["Features"][0]["charts"] = charts
    return cc


BOTH = [("ingress-nginx", "ingress-nginx", "oci://ghcr.io/k0rdent/catalog/charts", "4.13.0"),
        ("cert-manager", "cert-manager", "https://charts.jetstack.io", "v1.18.2")]


def healthy_parts():
    ss = copy.deepcopy(SS)
    for s in ss["status"]["services"]:
        s["state"] = "Deployed"
        s.pop("failureMessage", None)
        s["version"] = {"cert-manager": "1.18.2", "ingress-nginx": "4.13.0"}[s["name"]]
        s["lastDeployedHash"] = "7d0b1c3f0f6e0c1e8e1b4a4f5b9a4c1f2e3d4c5b6a79880716253443526170a1"
        s["lastStateTransitionTime"] = "2026-11-21T09:02:40Z"
    ss["status"]["deployed"] = True
    for c in ss["status"]["conditions"]:
        if c["type"] == "ServicesInReadyState":
            c["status"], c["message"] = "True", "2/2"
    cs = copy.deepcopy(CS)
    cs["status"]["featureSummaries"] = [copy.deepcopy(FEATURE_OK)]
    cs["status"]["helmReleaseSummaries"] = [
        {"releaseName": "ingress-nginx", "releaseNamespace": "ingress-nginx", "status": "Managing",
         "valuesHash": "ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs="},
        {"releaseName": "cert-manager", "releaseNamespace": "cert-manager", "status": "Managing",
         "valuesHash": "q0J0lGhWbRyQeKk9cyb8xRMl0eVw3nZfYp6sJm1xw2Q="}]
    return ss, copy.deepcopy(PROFILE), cs, cc_with(*BOTH)


def svc_status(ss, name):
    return next(s for s in ss["status"]["services"] if s["name"] == name)


def release(cs, name):
    return next(r for r in cs["status"]["helmReleaseSummaries"] if r["releaseName"] == name)


CASES = {}


def case(name, readme):
    def wrap(f):
        CASES[name] = (readme, f)
        return f
    return wrap


@case("healthy-profile", "ServiceSet kcm-system/dev-cluster of ksm-projectsveltos, both Helm services installed (valuesHash set, Helm feature Provisioned), the ClusterConfiguration has both chart entries, the verifier promoted both to Deployed with their version: healthy, exit 0.")
def _():
    ss, p, cs, cc = healthy_parts()
    return [ss, p, cs, cc]


@case("healthy-self-management", "Self-management ServiceSet management-e9e9a00a of MultiClusterService global-monitoring (example 07): ClusterProfile on SveltosCluster mgmt/mgmt, ClusterSummary management-e9e9a00a-sveltos-mgmt Provisioned, service Deployed: healthy, exit 0.")
def _():
    objs = copy.deepcopy(SELF)
    cp = next(o for o in objs if o["kind"] == "ClusterProfile")
    for o in objs:
        if o["kind"] == "ClusterSummary":
            # Sveltos copies the ClusterProfile's spec (the example abbreviates it).
            o["spec"]["clusterProfileSpec"] = copy.deepcopy(cp["spec"])
        if o["kind"] == "ServiceSet":
            o.setdefault("status", {})
            o["status"]["services"] = [{"type": "Helm", "name": "kube-prometheus-stack", "namespace": "monitoring",
                                        "template": "kube-prometheus-stack-75-15-1", "state": "Deployed",
                                        "version": "75.15.1", "lastStateTransitionTime": "2026-11-21T09:02:40Z"}]
            o["status"]["conditions"] = [{"type": "ServiceSetProfile", "status": "True", "reason": "ServiceSetProfileReady",
                                          "message": "Profile is ready", "lastTransitionTime": "2026-11-21T09:00:00Z"}]
            o["status"]["deployed"] = True
    return objs


@case("healthy-mcs-on-cd", "ServiceSet dev-cluster-1a2b3c4d derived from MultiClusterService global-ingress on ClusterDeployment dev-cluster (owner the CD): Profile kcm-system/dev-cluster-1a2b3c4d and ClusterSummary p--dev-cluster-1a2b3c4d-capi-dev-cluster, its Helm service Deployed: healthy, exit 0.")
def _():
    ss, p, cs, cc = healthy_parts()
    name = "dev-cluster-1a2b3c4d"
    ss["metadata"]["name"] = name
    ss["spec"]["multiClusterService"] = "global-ingress"
    ss["spec"]["services"] = [s for s in ss["spec"]["services"] if s["name"] == "ingress-nginx"]
    ss["status"]["services"] = [s for s in ss["status"]["services"] if s["name"] == "ingress-nginx"]
    p["metadata"]["name"] = name
    p["metadata"]["ownerReferences"][0]["name"] = name
    p["spec"]["helmCharts"] = p["spec"]["helmCharts"][:1]
    cs["metadata"]["name"] = f"p--{name}-capi-dev-cluster"
    cs["metadata"]["labels"]["projectsveltos.io/profile-name"] = name
    cs["metadata"]["ownerReferences"][0]["name"] = name
    cs["spec"]["clusterProfileSpec"]["helmCharts"] = cs["spec"]["clusterProfileSpec"]["helmCharts"][:1]
    cs["status"]["helmReleaseSummaries"] = cs["status"]["helmReleaseSummaries"][:1]
    cc["status"]["profileResources"][0]["profileName"] = name
    return [ss, p, cs, cc]


@case("helm-failed", "cert-manager's release summary has no valuesHash and Helm's error (the CRDs exist outside the release): kcm maps it Failed with the raw message -> KSM606 naming the error; ingress-nginx Deployed.")
def _():
    ss = copy.deepcopy(SS)
    for s in ss["status"]["services"]:
        s["lastStateTransitionTime"] = "2026-11-21T09:02:31Z"
    p, cs = copy.deepcopy(PROFILE), copy.deepcopy(CS)
    return [ss, p, cs, cc_with(BOTH[0])]


@case("stuck-provisioning", "Helm feature Provisioning for three hours, no release has a valuesHash nor a failureMessage (first install in progress): both services Provisioning since 09:00 -> KSM607 stuck.")
def _():
    ss, p, cs, cc = healthy_parts()
    cs["status"]["featureSummaries"][0]["status"] = "Provisioning"
    for r in cs["status"]["helmReleaseSummaries"]:
        r.pop("valuesHash")
    for s in ss["status"]["services"]:
        s["state"], s["lastStateTransitionTime"] = "Provisioning", T_OLD
        s.pop("version"); s.pop("lastDeployedHash")
    return [ss, p, cs, cc]


@case("cluster-not-ready", "The CAPI Cluster's control plane is not initialized: Sveltos marks the Helm feature Failed with \"cluster is not ready\", which kcm never shows (it maps the services Pending) -> KSM622 naming the cluster's state.")
def _():
    ss, p, cs, cc = healthy_parts()
    cs["status"]["featureSummaries"] = [{"featureID": "Helm", "status": "Failed", "consecutiveFailures": 12,
                                         "failureMessage": "cluster is not ready"}]
    cs["status"]["helmReleaseSummaries"] = []
    for s in ss["status"]["services"]:
        s["state"], s["lastStateTransitionTime"] = "Pending", T_OLD
        s.pop("version"); s.pop("lastDeployedHash")
    return [ss, p, cs]


def with_cluster(objs, initialized):
    cluster = copy.deepcopy(next(o for o in INPUTS if o["kind"] == "Cluster"))
    cluster["status"]["initialization"]["controlPlaneInitialized"] = initialized
    cluster["status"]["conditions"][0]["status"] = "True" if initialized else "False"
    cluster["status"]["conditions"][0]["reason"] = "Initialized" if initialized else "WaitingForControlPlaneInitialization"
    return objs + [cluster]


def conflict_owner(tier, config):
    """ServiceSet kcm-system/edge-ingress, its Profile and ClusterSummary owning ingress-nginx."""
    owner_ss = copy.deepcopy(SS)
    owner_ss["metadata"].update({"name": "edge-ingress", "uid": "9a1b2c3d-0000-4000-8000-00000000e1e1"})
    if config is None:
        owner_ss["spec"]["provider"].pop("config")
    else:
        owner_ss["spec"]["provider"]["config"] = config
    owner_ss["spec"]["services"] = owner_ss["spec"]["services"][:1]
    owner_ss["status"]["services"] = [dict(svc_status(owner_ss, "ingress-nginx"), state="Deployed",
                                           lastStateTransitionTime="2026-11-21T08:00:00Z")]
    owner_p = copy.deepcopy(PROFILE)
    owner_p["metadata"].update({"name": "edge-ingress", "uid": "aa000000-0000-4000-8000-00000000e1e1"})
    owner_p["metadata"]["ownerReferences"][0].update({"name": "edge-ingress", "uid": owner_ss["metadata"]["uid"]})
    owner_p["spec"]["tier"] = tier
    owner_p["spec"]["continueOnConflict"] = config is not None
    owner_p["spec"]["helmCharts"] = owner_p["spec"]["helmCharts"][:1]
    owner_cs = copy.deepcopy(CS)
    owner_cs["metadata"]["name"] = "p--edge-ingress-capi-dev-cluster"
    owner_cs["metadata"]["labels"]["projectsveltos.io/profile-name"] = "edge-ingress"
    owner_cs["metadata"]["ownerReferences"][0].update({"name": "edge-ingress", "uid": owner_p["metadata"]["uid"]})
    owner_cs["spec"]["clusterProfileSpec"]["tier"] = tier
    owner_cs["spec"]["clusterProfileSpec"]["continueOnConflict"] = config is not None
    owner_cs["spec"]["clusterProfileSpec"]["helmCharts"] = owner_cs["spec"]["clusterProfileSpec"]["helmCharts"][:1]
    owner_cs["status"]["featureSummaries"] = [copy.deepcopy(FEATURE_OK)]
    owner_cs["status"]["helmReleaseSummaries"] = [{"releaseName": "ingress-nginx", "releaseNamespace": "ingress-nginx",
                                                    "status": "Managing", "valuesHash": "ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs="}]
    return [owner_ss, owner_p, owner_cs]


def losing(ss, cs, continue_on_conflict=True):
    cs["spec"]["clusterProfileSpec"]["continueOnConflict"] = continue_on_conflict
    r = release(cs, "ingress-nginx")
    r.clear()
    r.update({"releaseName": "ingress-nginx", "releaseNamespace": "ingress-nginx", "status": "Conflict",
              "conflictMessage": "cannot manage chart ingress-nginx/ingress-nginx. ClusterSummary p--edge-ingress-capi-dev-cluster managing it."})
    cs["status"]["featureSummaries"] = [{"featureID": "Helm", "status": "FailedNonRetriable", "consecutiveFailures": 1,
                                         "failureMessage": "chart=ingress-nginx, releaseNamespace=ingress-nginx, releaseName=ingress-nginx: cannot manage chart ingress-nginx/ingress-nginx. ClusterSummary p--edge-ingress-capi-dev-cluster managing it."}]
    st = svc_status(ss, "ingress-nginx")
    st.update({"state": "Failed", "failureMessage": r["conflictMessage"], "lastStateTransitionTime": T_OLD})
    st.pop("version", None); st.pop("lastDeployedHash", None)


@case("conflict", "ingress-nginx is owned by ClusterSummary p--edge-ingress-capi-dev-cluster of Profile/ServiceSet edge-ingress (priority 500, tier 2147483147) while dev-cluster has priority 100 (tier 2147483547): Conflict -> KSM623 naming the owner's ClusterSummary, Profile and ServiceSet and both tiers.")
def _():
    ss, p, cs, cc = healthy_parts()
    losing(ss, cs)
    return [ss, p, cs, cc] + conflict_owner(2147483147, {"priority": 500})


@case("conflict-nil-config", "The owner of ingress-nginx, ServiceSet edge-ingress, names its provider without a config: its Profile has tier 100 and beats every priority -> KSM623 (tier 100, nil provider config) and KSM629 on edge-ingress; dev-cluster's stopOnConflict makes cert-manager, after it, wait Pending (KSM624).")
def _():
    ss, p, cs, cc = healthy_parts()
    ss["spec"]["provider"]["config"]["stopOnConflict"] = True
    p["spec"]["continueOnConflict"] = False
    # ingress-nginx first, cert-manager after it: cert-manager is never attempted.
    losing(ss, cs, continue_on_conflict=False)
    r = release(cs, "cert-manager"); r.pop("valuesHash")
    st = svc_status(ss, "cert-manager")
    st.update({"state": "Pending", "lastStateTransitionTime": T_OLD}); st.pop("version"); st.pop("lastDeployedHash")
    return [ss, p, cs, cc] + conflict_owner(100, None)


@case("continue-on-error-false", "ingress-nginx (first chart) fails to install and continueOnError is false: Sveltos never attempts cert-manager, which kcm shows Pending, not Failed -> KSM624 naming the failed chart (and KSM606 on ingress-nginx).")
def _():
    ss, p, cs, cc = healthy_parts()
    cs["status"]["featureSummaries"] = [{"featureID": "Helm", "status": "Failed", "consecutiveFailures": 3,
                                         "failureMessage": "chart=ingress-nginx, releaseNamespace=ingress-nginx, releaseName=ingress-nginx: context deadline exceeded"}]
    cs["status"]["helmReleaseSummaries"] = [
        {"releaseName": "ingress-nginx", "releaseNamespace": "ingress-nginx", "status": "Managing", "failureMessage": "context deadline exceeded"},
        {"releaseName": "cert-manager", "releaseNamespace": "cert-manager", "status": "Managing"}]
    svc_status(ss, "ingress-nginx").update({"state": "Failed", "failureMessage": "context deadline exceeded", "lastStateTransitionTime": T_OLD})
    st = svc_status(ss, "cert-manager"); st.update({"state": "Pending", "lastStateTransitionTime": T_OLD})
    for s in ss["status"]["services"]:
        s.pop("version", None); s.pop("lastDeployedHash", None)
    return [ss, p, cs, cc_with()]


@case("failed-non-retriable", "maxConsecutiveFailures 3 reached: the Helm feature is FailedNonRetriable (\"the maximum number of consecutive errors has been reached\") and cert-manager's release keeps Helm's error -> KSM625: Sveltos will not retry.")
def _():
    ss, p, cs, cc = healthy_parts()
    ss["spec"]["provider"]["config"]["maxConsecutiveFailures"] = 3
    p["spec"]["maxConsecutiveFailures"] = 3
    cs["spec"]["clusterProfileSpec"]["maxConsecutiveFailures"] = 3
    cs["status"]["featureSummaries"] = [{"featureID": "Helm", "status": "FailedNonRetriable", "consecutiveFailures": 3,
                                         "failureMessage": "the maximum number of consecutive errors has been reached"}]
    r = release(cs, "cert-manager"); r.pop("valuesHash"); r["failureMessage"] = "failed pre-install: timed out waiting for the condition"
    st = svc_status(ss, "cert-manager"); st.update({"state": "Failed", "failureMessage": r["failureMessage"], "lastStateTransitionTime": T_OLD})
    st.pop("version"); st.pop("lastDeployedHash")
    return [ss, p, cs, cc]


@case("verifier-completed-job", "cert-manager is installed (valuesHash, Helm feature Provisioned) but kcm's health verifier keeps it Provisioning: its startupapicheck Job left a completed Pod labelled app.kubernetes.io/instance=cert-manager, which the default Pod rule finds not Ready (ServiceHealthPod False) -> KSM626 naming the pod and the rule, and why completed pods never pass.")
def _():
    ss, p, cs, cc = healthy_parts()
    st = svc_status(ss, "cert-manager")
    st.update({"state": "Provisioning", "lastStateTransitionTime": T_OLD})
    st.pop("version"); st.pop("lastDeployedHash")
    rules = "\n".join([
        "- {group: apps, version: v1, kind: Deployment, scope: Namespaced,",
        "   healthy: 'has(obj.status.readyReplicas) && obj.status.readyReplicas == obj.spec.replicas',",
        "   message: '\"replicas not ready\"'}",
        "- {group: apps, version: v1, kind: StatefulSet, scope: Namespaced,",
        "   healthy: 'has(obj.status.readyReplicas) && obj.status.readyReplicas == obj.spec.replicas',",
        "   message: '\"replicas not ready\"'}",
        "- {group: apps, version: v1, kind: DaemonSet, scope: Namespaced,",
        "   healthy: 'obj.status.numberReady == obj.status.desiredNumberScheduled',",
        "   message: '\"nodes not ready\"'}",
        "- group: ''",
        "  version: v1",
        "  kind: Pod",
        "  scope: Namespaced",
        "  healthy: |",
        "    has(obj.status.conditions) &&",
        "    obj.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
        "  message: '\"pod not ready\"'",
        ""])
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "kcm-default-health-rules", "namespace": "kcm-system",
                       "labels": {"k0rdent.mirantis.com/health-rule-target": "global"}},
          "data": {"rules": rules}}
    st["conditions"] = [{"type": "ServiceHealthPod", "status": "False", "reason": "PodUnhealthy",
                         "message": "1 Pod unhealthy: cert-manager/cert-manager-startupapicheck-5x7qz (job: Completed, rule kcm-system/kcm-default-health-rules#3)",
                         "lastTransitionTime": "2026-11-21T09:03:00Z"}]
    return [ss, p, cs, cc, cm]


@case("verifier-no-chart-entry", "ingress-nginx is installed and no health condition is False, but the ClusterConfiguration has no chart entry for its release: kcm cannot compute the fingerprint and never promotes it (Provisioning since 09:00, no version stamped) -> KSM626.")
def _():
    ss, p, cs, cc = healthy_parts()
    st = svc_status(ss, "ingress-nginx")
    st.update({"state": "Provisioning", "lastStateTransitionTime": T_OLD}); st.pop("version"); st.pop("lastDeployedHash")
    return [ss, p, cs, cc_with(BOTH[1])]


@case("profile-not-written", "ServiceTemplate cert-manager-1-18-2 is invalid (status.valid false): kcm builds no Profile (ServiceSetProfile False ServiceSetHelmChartsBuildFailed) and the old one stays -> KSM619 with kcm's condition and the reason rebuilt from the objects.")
def _():
    ss, p, cs, cc = healthy_parts()
    for c in ss["status"]["conditions"]:
        if c["type"] == "ServiceSetProfile":
            c.update({"status": "False", "reason": "ServiceSetHelmChartsBuildFailed",
                      "message": "Failed to build Helm Charts from ServiceSet dev-cluster configuration: failed to build helm charts\nServiceTemplate kcm-system/cert-manager-1-18-2 is invalid"})
    return [ss, p, cs, cc]


@case("profile-rejected", "provider.config syncMode Always: kcm decodes it, the API server rejects the Profile; kcm's condition only says ServiceSetProfileNotReady \"Profile is not ready\" and no Profile exists -> KSM619 with the CRD's message, rebuilt as kcm builds it.")
def _():
    ss, p, cs, cc = healthy_parts()
    ss["spec"]["provider"]["config"]["syncMode"] = "Always"
    for c in ss["status"]["conditions"]:
        if c["type"] == "ServiceSetProfile":
            c.update({"status": "False", "reason": "ServiceSetProfileNotReady", "message": "Profile is not ready"})
    for s in ss["status"]["services"]:
        s.update({"state": "Provisioning", "lastStateTransitionTime": T_OLD}); s.pop("version"); s.pop("lastDeployedHash")
    return [ss]


@case("paused", "ServiceSet annotated k0rdent.mirantis.com/service-set-paused and its Profile profile.projectsveltos.io/paused: Sveltos skips it and writes no status -> KSM605.")
def _():
    ss, p, cs, cc = healthy_parts()
    ss["metadata"]["annotations"] = {"k0rdent.mirantis.com/service-set-paused": "true"}
    p["metadata"]["annotations"] = {"profile.projectsveltos.io/paused": "true"}
    return [ss, p, cs, cc]


@case("stale-kustomize-failure", "A Kustomize service: the Kustomize feature is Provisioning again (retrying) but keeps the previous failureMessage, so kcm shows the service Failed (\"One or more Kustomizations failed to deploy: ...\") -> KSM627 stale message.")
def _():
    ss, p, cs, cc = healthy_parts()
    ss["spec"]["services"].append({"name": "podinfo", "namespace": "podinfo", "template": "podinfo-kustomize-6-7-1"})
    msg = "failed to get GitRepository kcm-system/podinfo-kustomize-6-7-1: artifact not ready"
    ss["status"]["services"].append({"type": "Kustomize", "name": "podinfo", "namespace": "podinfo",
                                     "template": "podinfo-kustomize-6-7-1", "state": "Failed",
                                     "failureMessage": "One or more Kustomizations failed to deploy: " + msg,
                                     "lastStateTransitionTime": T_NEW})
    tmpl = {"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
            "metadata": {"name": "podinfo-kustomize-6-7-1", "namespace": "kcm-system"},
            "spec": {"version": "6.7.1", "kustomize": {"path": "./kustomize", "deploymentType": "Remote",
                     "remoteSourceSpec": {"git": {"url": "https://github.com/stefanprodan/podinfo", "ref": {"tag": "6.7.1"}, "interval": "10m0s"}}}},
            "status": {"valid": True, "sourceStatus": {"kind": "GitRepository", "name": "podinfo-kustomize-6-7-1", "namespace": "kcm-system"}}}
    ref = {"namespace": "kcm-system", "name": "podinfo-kustomize-6-7-1", "kind": "GitRepository", "path": "./kustomize",
           "targetNamespace": "podinfo", "deploymentType": "Remote", "optional": False, "skipNamespaceCreation": False, "tier": 100}
    p["spec"]["kustomizationRefs"] = [ref]
    cs["spec"]["clusterProfileSpec"]["kustomizationRefs"] = [copy.deepcopy(ref)]
    cs["status"]["featureSummaries"].append({"featureID": "Kustomize", "status": "Provisioning", "consecutiveFailures": 2,
                                             "failureMessage": msg})
    return [ss, p, cs, cc, tmpl]


@case("blocked-dependents", "ClusterDeployment dev-cluster wants ingress-nginx after cert-manager (dependsOn); no health rules exist, so the verifier never stamps cert-manager's status.version: cert-manager shows Deployed but kcm keeps ingress-nginx out of the ServiceSet -> KSM628 naming the dependency and the missing version.")
def _():
    ss, p, cs, cc = healthy_parts()
    ss["spec"]["services"] = [s for s in ss["spec"]["services"] if s["name"] == "cert-manager"]
    ss["status"]["services"] = [s for s in ss["status"]["services"] if s["name"] == "cert-manager"]
    svc_status(ss, "cert-manager").pop("version")
    p["spec"]["helmCharts"] = p["spec"]["helmCharts"][1:]
    cs["spec"]["clusterProfileSpec"]["helmCharts"] = cs["spec"]["clusterProfileSpec"]["helmCharts"][1:]
    cs["status"]["helmReleaseSummaries"] = cs["status"]["helmReleaseSummaries"][1:]
    cd = {"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
          "metadata": {"name": "dev-cluster", "namespace": "kcm-system", "uid": "6c1f4e0a-2d7b-4b8e-9a51-0d3e2f8c7b11"},
          "spec": {"template": "aws-standalone-cp-1-0-16", "credential": "aws-cred",
                   "serviceSpec": {"priority": 100, "syncMode": "Continuous", "services": [
                       {"name": "cert-manager", "namespace": "cert-manager", "template": "cert-manager-1-18-2", "version": "1.18.2"},
                       {"name": "ingress-nginx", "namespace": "ingress-nginx", "template": "ingress-nginx-4-13-0", "version": "4.13.0",
                        "dependsOn": [{"name": "cert-manager", "namespace": "cert-manager"}]}]}}}
    return [ss, p, cs, cc, cd]


@case("health-rules-invalid", "A health-rule ConfigMap has a rule whose healthy expression does not compile: ServiceSetHealthRules False HealthRuleInvalid -> KSM630 with kcm's message.")
def _():
    ss, p, cs, cc = healthy_parts()
    for c in ss["status"]["conditions"]:
        if c["type"] == "ServiceSetHealthRules":
            c.update({"status": "False", "reason": "HealthRuleInvalid",
                      "message": "kcm-system/team-health-rules#0: healthy: compile: ERROR: <input>:1:12: undeclared reference to 'status'"})
    return [ss, p, cs, cc]


@case("reference-namespace", "The provider config's policyRefs name ConfigMap platform/namespaces, but Sveltos reads a Profile's policyRefs in the Profile's namespace kcm-system -> KSM632; the services themselves are Deployed.")
def _():
    ss, p, cs, cc = healthy_parts()
    ref = {"kind": "ConfigMap", "name": "namespaces", "namespace": "platform"}
    ss["spec"]["provider"]["config"]["policyRefs"] = [ref]
    full = dict(ref, deploymentType="Remote", optional=False, skipNamespaceCreation=False, tier=100)
    p["spec"]["policyRefs"] = [full]
    cs["spec"]["clusterProfileSpec"]["policyRefs"] = [copy.deepcopy(full)]
    cs["status"]["featureSummaries"].append({"featureID": "Resources", "status": "Provisioned",
                                             "consecutiveFailures": 0, "hash": "x0qH6bV2Gm0gA8e0k1yJtY1oXo5b2c3d4e5f6g7h8i9="})
    return [ss, p, cs, cc]


@case("summary-out-of-sync", "The ServiceSet's priority moved from 100 to 200 and kcm rewrote the Profile (tier 2147483447), but Sveltos has not copied the new spec into the ClusterSummary yet (tier 2147483547): an informational note that the states shown are those of the previous spec; healthy otherwise, exit 0.")
def _():
    ss, p, cs, cc = healthy_parts()
    ss["spec"]["provider"]["config"]["priority"] = 200
    p["spec"]["tier"] = 2147483447
    return [ss, p, cs, cc]


def dependents_parts(cert_manager_state):
    """The blocked-dependents case with cert-manager (the dependency) in another state."""
    ss, p, cs, cc = healthy_parts()
    ss["spec"]["services"] = [s for s in ss["spec"]["services"] if s["name"] == "cert-manager"]
    ss["status"]["services"] = [s for s in ss["status"]["services"] if s["name"] == "cert-manager"]
    ss["status"]["deployed"] = False
    p["spec"]["helmCharts"] = p["spec"]["helmCharts"][1:]
    cs["spec"]["clusterProfileSpec"]["helmCharts"] = cs["spec"]["clusterProfileSpec"]["helmCharts"][1:]
    cs["status"]["helmReleaseSummaries"] = cs["status"]["helmReleaseSummaries"][1:]
    r = release(cs, "cert-manager"); r.pop("valuesHash")
    st = svc_status(ss, "cert-manager"); st.pop("version"); st.pop("lastDeployedHash")
    if cert_manager_state == "Provisioning":
        cs["status"]["featureSummaries"][0]["status"] = "Provisioning"
        st.update({"state": "Provisioning", "lastStateTransitionTime": T_NEW})
    else:
        cs["status"]["featureSummaries"] = [{"featureID": "Helm", "status": "Failed", "consecutiveFailures": 4,
                                             "failureMessage": "chart=cert-manager, releaseNamespace=cert-manager, releaseName=cert-manager: failed pre-install: timed out waiting for the condition"}]
        r["failureMessage"] = "failed pre-install: timed out waiting for the condition"
        st.update({"state": "Failed", "failureMessage": r["failureMessage"], "lastStateTransitionTime": T_OLD})
    cd = {"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
          "metadata": {"name": "dev-cluster", "namespace": "kcm-system", "uid": "6c1f4e0a-2d7b-4b8e-9a51-0d3e2f8c7b11"},
          "spec": {"template": "aws-standalone-cp-1-0-16", "credential": "aws-cred",
                   "serviceSpec": {"priority": 100, "syncMode": "Continuous", "services": [
                       {"name": "cert-manager", "namespace": "cert-manager", "template": "cert-manager-1-18-2", "version": "1.18.2"},
                       {"name": "ingress-nginx", "namespace": "ingress-nginx", "template": "ingress-nginx-4-13-0", "version": "4.13.0",
                        "dependsOn": [{"name": "cert-manager", "namespace": "cert-manager"}]}]}}}
    return [ss, p, cs, cc, cd]


@case("dependents-waiting", "ClusterDeployment dev-cluster wants ingress-nginx after cert-manager (dependsOn); cert-manager started installing two minutes ago (Provisioning since 11:58), so kcm keeps ingress-nginx out of the ServiceSet: the dependents-blocked finding is info, waiting, naming cert-manager; healthy otherwise, exit 0.")
def _():
    return dependents_parts("Provisioning")


@case("dependents-stuck", "ClusterDeployment dev-cluster wants ingress-nginx after cert-manager (dependsOn); cert-manager Failed (pre-install hook timed out) three hours ago: a failed dependency keeps ingress-nginx out of the ServiceSet for good -> KSM628 error, stuck, naming cert-manager and its failure (and KSM606 on cert-manager).")
def _():
    return dependents_parts("Failed")


def mcs_key(cd, mcs):
    return f"{cd}-{hashlib.sha256(mcs.encode()).hexdigest()[:8]}"


def mcs(name, uid, services, depends_on=None, status=None):
    spec = {"clusterSelector": {"matchLabels": {"group": "demo"}},
            "serviceSpec": {"provider": {"name": "ksm-projectsveltos", "config": {"priority": 100}},
                            "services": services}}
    if depends_on:
        spec["dependsOn"] = depends_on
    o = {"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "MultiClusterService",
         "metadata": {"name": name, "uid": uid, "generation": 1,
                      "finalizers": ["k0rdent.mirantis.com/multicluster-service"]},
         "spec": spec}
    if status:
        o["status"] = status
    return o


def mcs_parts(base_state, blocked_since):
    """MultiClusterService apps depends on base; both select dev-cluster (group=demo). base's
    ServiceSet on dev-cluster deploys ingress-nginx; apps' ServiceSet there is not created."""
    ss, p, cs, cc = healthy_parts()
    name = mcs_key("dev-cluster", "base")
    ss["metadata"]["name"] = name
    ss["metadata"]["uid"] = "0b6a3d55-1f2e-4c7a-8d90-2e4f6a8b0c2e"
    ss["spec"]["multiClusterService"] = "base"
    ss["spec"]["services"] = [s for s in ss["spec"]["services"] if s["name"] == "ingress-nginx"]
    ss["status"]["services"] = [s for s in ss["status"]["services"] if s["name"] == "ingress-nginx"]
    ss["status"]["deployed"] = base_state == "Deployed"
    p["metadata"]["name"] = name
    p["metadata"]["ownerReferences"][0].update({"name": name, "uid": ss["metadata"]["uid"]})
    p["spec"]["helmCharts"] = p["spec"]["helmCharts"][:1]
    cs["metadata"]["name"] = f"p--{name}-capi-dev-cluster"
    cs["metadata"]["labels"]["projectsveltos.io/profile-name"] = name
    cs["metadata"]["ownerReferences"][0]["name"] = name
    cs["spec"]["clusterProfileSpec"]["helmCharts"] = cs["spec"]["clusterProfileSpec"]["helmCharts"][:1]
    cs["status"]["helmReleaseSummaries"] = cs["status"]["helmReleaseSummaries"][:1]
    cc["status"]["profileResources"][0]["profileName"] = name
    st = svc_status(ss, "ingress-nginx")
    r = release(cs, "ingress-nginx")
    if base_state != "Deployed":
        r.pop("valuesHash"); st.pop("version"); st.pop("lastDeployedHash")
        cc = cc_with()
        cc["status"]["profileResources"][0]["profileName"] = name
    if base_state == "Provisioning":
        cs["status"]["featureSummaries"][0]["status"] = "Provisioning"
        st.update({"state": "Provisioning", "lastStateTransitionTime": T_NEW})
    elif base_state == "Failed":
        msg = "Unable to continue with install: IngressClass \"nginx\" in namespace \"\" exists and cannot be imported into the current release"
        cs["status"]["featureSummaries"] = [{"featureID": "Helm", "status": "Failed", "consecutiveFailures": 9,
                                             "failureMessage": "chart=ingress-nginx, releaseNamespace=ingress-nginx, releaseName=ingress-nginx: " + msg}]
        r["failureMessage"] = msg
        st.update({"state": "Failed", "failureMessage": msg, "lastStateTransitionTime": T_OLD})
    ingress = {"name": "ingress-nginx", "namespace": "ingress-nginx", "template": "ingress-nginx-4-13-0", "version": "4.13.0"}
    cert = {"name": "cert-manager", "namespace": "cert-manager", "template": "cert-manager-1-18-2", "version": "1.18.2"}
    msg = "skipping create/update of ServiceSet for matching cluster kcm-system/dev-cluster: waiting on base (0/1 services deployed)"
    apps = mcs("apps", "7e2a9c41-5b0d-4f3e-9a6c-1d2e3f4a5b6c", [cert], ["base"], {
        "observedGeneration": 1,
        "matchingClusters": [{"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
                              "name": "dev-cluster", "namespace": "kcm-system", "deployed": False, "regional": False,
                              "reason": "MultiClusterServiceDependencyNotReady", "message": msg,
                              "lastTransitionTime": blocked_since}],
        "conditions": [
            {"type": "ServicesReferencesValidation", "status": "True", "reason": "Succeeded", "message": "",
             "observedGeneration": 1, "lastTransitionTime": T_OLD},
            {"type": "ServicesDependencyValidation", "status": "True", "reason": "Succeeded", "message": "",
             "observedGeneration": 1, "lastTransitionTime": T_OLD},
            {"type": "MultiClusterServiceDependencyValidation", "status": "True", "reason": "Succeeded", "message": "",
             "observedGeneration": 1, "lastTransitionTime": T_OLD},
            {"type": "ClusterInReadyState", "status": "False", "reason": "Failed", "message": "0/1",
             "lastTransitionTime": blocked_since},
            {"type": "MultiClusterServiceDependencyReady", "status": "False", "reason": "MultiClusterServiceDependencyNotReady",
             "message": "waiting for MultiClusterService dependencies to be ready on 1 matching cluster(s)",
             "observedGeneration": 1, "lastTransitionTime": blocked_since}]})
    base = mcs("base", "3c1d2e4f-6a7b-4c8d-9e0f-a1b2c3d4e5f6", [ingress])
    cd = {"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
          "metadata": {"name": "dev-cluster", "namespace": "kcm-system", "uid": "6c1f4e0a-2d7b-4b8e-9a51-0d3e2f8c7b11",
                       "labels": {"group": "demo"}},
          "spec": {"template": "aws-standalone-cp-1-0-16", "credential": "aws-cred"}}
    return [ss, p, cs, cc, base, apps, cd]


@case("mcs-dependency-waiting", "MultiClusterService apps depends on base; both select dev-cluster. base's ServiceSet there started installing ingress-nginx two minutes ago (Provisioning since 11:58), so kcm has not created apps' ServiceSet: matchingClusters reason MultiClusterServiceDependencyNotReady \"waiting on base (0/1 services deployed)\" since 11:58. The mcs-dependency-blocked finding is info, waiting, naming base and its Provisioning service; exit 0.")
def _():
    return mcs_parts("Provisioning", T_NEW)


@case("mcs-dependency-stuck", "MultiClusterService apps depends on base; both select dev-cluster. base's ingress-nginx Failed there three hours ago (an IngressClass owned by another release), so apps waits forever: KSM635 error, stuck, naming base, its ServiceSet and the failed service with Helm's message (and KSM606 on base's ServiceSet).")
def _():
    return mcs_parts("Failed", T_OLD)


@case("mcs-not-reconciled", "MultiClusterServices a and b depend on each other: kcm's controller sets MultiClusterServiceDependencyValidation False (\"dependency cycle detected at /a\") on each and creates no ServiceSet: KSM636 on both, no ServiceSet exists.")
def _():
    objs = []
    for name, other, uid in [("a", "b", "11111111-2222-4333-8444-555555555555"), ("b", "a", "66666666-7777-4888-9999-000000000000")]:
        cond = {"type": "MultiClusterServiceDependencyValidation", "status": "False", "reason": "Failed",
                "message": f"failed MCS dependency cycle validation: dependency cycle detected at /{name}",
                "observedGeneration": 1, "lastTransitionTime": T_OLD}
        ok = lambda t: {"type": t, "status": "True", "reason": "Succeeded", "message": "", "observedGeneration": 1,
                        "lastTransitionTime": T_OLD}
        objs.append(mcs(name, uid, [{"name": f"svc-{name}", "namespace": "apps", "template": "ingress-nginx-4-13-0"}], [other],
                        {"observedGeneration": 1, "conditions": [ok("ServicesReferencesValidation"),
                                                                  ok("ServicesDependencyValidation"), cond]}))
    return objs


def main():
    for name, (readme, build) in CASES.items():
        d = os.path.join(HERE, "sveltos-" + name)
        os.makedirs(d, exist_ok=True)
        inputs = [copy.deepcopy(o) for o in INPUTS if o["kind"] != "Cluster"]
        if name == "profile-not-written":
            for t in inputs:
                if t["kind"] == "ServiceTemplate" and t["metadata"]["name"] == "cert-manager-1-18-2":
                    t["status"]["valid"] = False
                    t["status"]["validationError"] = "the chart's HelmRepository jetstack is not ready"
        objs = PLATFORM + inputs + build()
        if name == "cluster-not-ready":
            objs = with_cluster(objs, False)
        elif not any(o["kind"] in ("Cluster", "SveltosCluster") for o in objs):
            objs = with_cluster(objs, True)
        with open(os.path.join(d, "dump.yaml"), "w") as f:
            f.write(f"# sveltos-{name}: generated by testdata/doctor/gen_sveltos.py; judged at {NOW}\n")
            yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}, f, sort_keys=True, width=1000)
        with open(os.path.join(d, "README"), "w") as f:
            f.write(readme + "\n")


if __name__ == "__main__":
    main()
