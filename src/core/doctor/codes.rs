//! The codes of doctor's findings (KSM6xx), with their documentation.

use crate::diag::{CodeInfo, Severity};

pub const SMP_MISSING: &str = "KSM601";
pub const SMP_NOT_READY: &str = "KSM602";
pub const SMP_SUSPENDED: &str = "KSM603";
pub const SELECTOR_MISMATCH: &str = "KSM604";
pub const SERVICESET_PAUSED: &str = "KSM605";
pub const SERVICE_FAILED: &str = "KSM606";
pub const SERVICE_STUCK: &str = "KSM607";
pub const STATUS_DISAGREES: &str = "KSM608";
pub const FLUX_MISSING: &str = "KSM609";
pub const FLUX_STALLED: &str = "KSM610";
pub const FLUX_FAILING: &str = "KSM611";
pub const FLUX_SUSPENDED: &str = "KSM612";
pub const FLUX_OLD_GENERATION: &str = "KSM613";
pub const DEPENDENCY_NOT_READY: &str = "KSM614";
pub const SOURCE_FAILING: &str = "KSM615";
pub const TEMPLATE_INVALID: &str = "KSM616";
pub const KUBECONFIG_MISSING: &str = "KSM617";
pub const SMP_STATUS_STALE: &str = "KSM618";
pub const PROFILE_NOT_WRITTEN: &str = "KSM619";
pub const PROFILE_NOT_MATCHED: &str = "KSM620";
pub const SUMMARY_MISSING: &str = "KSM621";
pub const CLUSTER_NOT_READY: &str = "KSM622";
pub const HELM_CONFLICT: &str = "KSM623";
pub const CHART_HELD: &str = "KSM624";
pub const NON_RETRIABLE: &str = "KSM625";
pub const VERIFIER_HOLD: &str = "KSM626";
pub const STALE_FAILURE: &str = "KSM627";
pub const DEPENDENTS_BLOCKED: &str = "KSM628";
pub const NIL_CONFIG_TIER: &str = "KSM629";
pub const HEALTH_RULES_INVALID: &str = "KSM630";
pub const SUMMARY_SUSPENDED: &str = "KSM631";
pub const REFERENCE_NAMESPACE: &str = "KSM632";
pub const FLUX_CONFLICT: &str = "KSM633";
pub const FLUX_DUPLICATE: &str = "KSM634";
pub const MCS_BLOCKED: &str = "KSM635";
pub const MCS_NOT_RECONCILED: &str = "KSM636";
pub const KIND_UNREAD: &str = "KSM637";

/// The findings that do not clear without someone acting (`wait` fails on them at once): the
/// chain stopped for good (a spec, a pause or a suspension must change), not a state kcm or
/// the provider is still working through. Each with why.
pub const WILL_NOT_HEAL: &[(&str, &str)] = &[
    (SMP_SUSPENDED, "the StateManagementProvider is suspended"),
    (
        SELECTOR_MISMATCH,
        "the StateManagementProvider's selector does not match its adapter",
    ),
    (SERVICESET_PAUSED, "the ServiceSet is paused"),
    (
        FLUX_STALLED,
        "Flux gave up (Stalled): only a change restarts it",
    ),
    (FLUX_SUSPENDED, "the Flux object is suspended"),
    (TEMPLATE_INVALID, "kcm found the ServiceTemplate invalid"),
    (
        HELM_CONFLICT,
        "another ServiceSet's ClusterSummary keeps the Helm release",
    ),
    (NON_RETRIABLE, "Sveltos does not retry the failure"),
    (HEALTH_RULES_INVALID, "kcm's health rules do not compile"),
    (SUMMARY_SUSPENDED, "the ClusterSummary is suspended"),
    (FLUX_CONFLICT, "another ServiceSet owns the release"),
    (FLUX_DUPLICATE, "another deployer writes the same release"),
];

/// Every code of this family, in code order, with its documentation.
pub static ALL: &[CodeInfo] = &[
    CodeInfo {
        code: SMP_MISSING,
        name: "provider-missing",
        severity: Severity::Error,
        title: "The ServiceSet names a provider with no StateManagementProvider",
        docs: "## What it finds
`spec.provider.name` of a ServiceSet names a StateManagementProvider that does not exist.

## Why it matters
No adapter serves the ServiceSet: none of its services will ever be deployed, and nothing says so in its status.

## Fix
kubectl get statemanagementproviders
# then fix spec.provider.name, or install the provider
",
    },
    CodeInfo {
        code: SMP_NOT_READY,
        name: "provider-not-ready",
        severity: Severity::Error,
        title: "The provider is not ready",
        docs: "## What it finds
The StateManagementProvider's `status.ready` is not true. The finding lists its conditions that are not True and re-evaluates its readiness rules on the objects at hand, naming the clause that is false.

## Why it matters
kcm and the adapters act on a ServiceSet only while its provider is ready; its services wait.

## Fix
kubectl ksm check <provider>   # the conditions kcm would set, with explanations
",
    },
    CodeInfo {
        code: SMP_SUSPENDED,
        name: "provider-suspended",
        severity: Severity::Warning,
        title: "The provider is suspended",
        docs: "## What it finds
The StateManagementProvider has `spec.suspend: true`.

## Why it matters
Adapters skip the ServiceSets of a suspended provider: nothing is deployed or updated.

## Fix
kubectl patch statemanagementprovider <name> --type merge -p '{\"spec\":{\"suspend\":false}}'
",
    },
    CodeInfo {
        code: SELECTOR_MISMATCH,
        name: "selector-mismatch",
        severity: Severity::Error,
        title: "The ServiceSet's labels do not match the provider's selector",
        docs: "## What it finds
The ServiceSet names the provider, but its labels do not match the provider's `spec.selector`.

## Why it matters
The provider's adapter watches only the ServiceSets its selector matches: this one is ignored.

## Fix
Label the ServiceSet (or its ClusterDeployment/MultiClusterService) as the selector requires.
",
    },
    CodeInfo {
        code: SERVICESET_PAUSED,
        name: "serviceset-paused",
        severity: Severity::Warning,
        title: "The ServiceSet is paused",
        docs: "## What it finds
The ServiceSet carries kcm's pause annotation `k0rdent.mirantis.com/service-set-paused`.

## Why it matters
Its Flux objects are suspended: nothing changes until the annotation is removed.

## Fix
kubectl annotate serviceset -n <namespace> <name> k0rdent.mirantis.com/service-set-paused-
",
    },
    CodeInfo {
        code: SERVICE_FAILED,
        name: "service-failed",
        severity: Severity::Error,
        title: "The service is Failed",
        docs: "## What it finds
The ServiceSet's status says the service is Failed, and no link below it explains more: usually the adapter could not render it (bad provider config, template, values), and its `failureMessage` says why.

## Why it matters
The service is not deployed and will not be until the cause is fixed.

## Fix
kubectl ksm render serviceset.yaml --templates templates.yaml   # the same translation, with its findings
",
    },
    CodeInfo {
        code: SERVICE_STUCK,
        name: "service-stuck",
        severity: Severity::Error,
        title: "The service has been Pending or Provisioning too long",
        docs: "## What it finds
The service has been Pending or Provisioning for longer than `--stuck-after` (10m by default) and no other error explains it.

## Why it matters
A service that never converges usually waits on something that will not happen by itself.

## Fix
Follow the hint: the Flux object's conditions and events say what it waits for.
",
    },
    CodeInfo {
        code: STATUS_DISAGREES,
        name: "status-disagrees",
        severity: Severity::Warning,
        title: "The ServiceSet status disagrees with the Flux object",
        docs: "## What it finds
The state the ServiceSet's status reports differs from the state its Flux object is in, mapped as the adapter maps it.

## Why it matters
The adapter has not written the status since the Flux object changed: it may be down, or failing.

## Fix
Check the adapter's logs and that it runs.
",
    },
    CodeInfo {
        code: FLUX_MISSING,
        name: "flux-object-missing",
        severity: Severity::Error,
        title: "The Flux object of the service is missing",
        docs: "## What it finds
No HelmRelease or Kustomization is labelled for the service or named `<serviceset>-<service>`.

## Why it matters
Nothing deploys the service. Right after a change the adapter may not have created it yet (a warning); when the status says Deployed or the service is stuck, it is an error.

## Fix
kubectl get helmreleases,kustomizations -n <namespace> -l ksm.k0rdent.mirantis.com/serviceset=<name>
",
    },
    CodeInfo {
        code: FLUX_STALLED,
        name: "flux-object-stalled",
        severity: Severity::Error,
        title: "The Flux object is stalled",
        docs: "## What it finds
The HelmRelease or Kustomization has `Stalled=True` at its current generation.

## Why it matters
Flux has given up: it will not retry until the object or its inputs change.

## Fix
flux get helmreleases -n <namespace> <name>; kubectl describe the object and fix what its message names.
",
    },
    CodeInfo {
        code: FLUX_FAILING,
        name: "flux-object-failed",
        severity: Severity::Error,
        title: "The Flux object failed",
        docs: "## What it finds
The HelmRelease or Kustomization is Ready=False with a failure reason (InstallFailed, UpgradeFailed, TestFailed, remediated, BuildFailed, HealthCheckFailed...).

## Why it matters
The service is not (or no longer) deployed as specified; Flux retries, but the same failure usually repeats.

## Fix
Read the message: it is Helm's or kustomize's own error.
",
    },
    CodeInfo {
        code: FLUX_SUSPENDED,
        name: "flux-object-suspended",
        severity: Severity::Warning,
        title: "The Flux object is suspended",
        docs: "## What it finds
The HelmRelease or Kustomization has `spec.suspend: true`.

## Why it matters
Flux does not reconcile it: changes are not applied and drift is not corrected.

## Fix
flux resume helmrelease -n <namespace> <name>
",
    },
    CodeInfo {
        code: FLUX_OLD_GENERATION,
        name: "flux-object-not-reconciled",
        severity: Severity::Warning,
        title: "The Flux object has not reconciled its latest spec",
        docs: "## What it finds
`status.observedGeneration` (or the Ready condition's) is older than `metadata.generation`.

## Why it matters
What the status shows is about an older spec; the latest change is not applied yet.

## Fix
flux reconcile helmrelease -n <namespace> <name>
",
    },
    CodeInfo {
        code: DEPENDENCY_NOT_READY,
        name: "dependency-not-ready",
        severity: Severity::Warning,
        title: "A dependency of the Flux object is not ready",
        docs: "## What it finds
The HelmRelease or Kustomization is Ready=False with DependencyNotReady: an object in its `dependsOn` is not ready.

## Why it matters
The service waits for the dependency; the dependency is the link to look at.

## Fix
flux get helmreleases -n <namespace>   # find the dependency and follow it
",
    },
    CodeInfo {
        code: SOURCE_FAILING,
        name: "source-failing",
        severity: Severity::Error,
        title: "The source of the Flux object is failing",
        docs: "## What it finds
The HelmChart, HelmRepository, GitRepository, OCIRepository or Bucket the Flux object reads is stalled or not ready with a failure.

## Why it matters
Without an artifact the release or Kustomization cannot be applied.

## Fix
flux get sources <kind> -n <namespace> <name>; fix the URL, credentials or chart version it names.
",
    },
    CodeInfo {
        code: TEMPLATE_INVALID,
        name: "service-template-invalid",
        severity: Severity::Error,
        title: "The ServiceTemplate is invalid or missing",
        docs: "## What it finds
The service's ServiceTemplate does not exist in the ServiceSet's namespace, or kcm marked it invalid (`status.valid: false`).

## Why it matters
kcm resolves templates in the ServiceSet's namespace; without a valid one the service cannot be deployed.

## Fix
kubectl get servicetemplate -n <namespace> <name> -o yaml   # status.validationError says why
",
    },
    CodeInfo {
        code: KUBECONFIG_MISSING,
        name: "kubeconfig-missing",
        severity: Severity::Error,
        title: "The target cluster's kubeconfig Secret is missing",
        docs: "## What it finds
The Secret `<cluster>-kubeconfig` the Flux objects use to reach the target cluster does not exist (checked by name; Secret data is never read).

## Why it matters
Flux cannot reach the cluster: every service of the ServiceSet fails.

## Fix
kubectl get clusterdeployment -n <namespace> <cluster>   # is the cluster provisioned?
",
    },
    CodeInfo {
        code: SMP_STATUS_STALE,
        name: "provider-status-stale",
        severity: Severity::Warning,
        title: "The provider's recorded readiness differs from its rules now",
        docs: "## What it finds
`status.ready` of the StateManagementProvider differs from what its readiness rules give on the objects at hand.

## Why it matters
kcm re-evaluates every 10 s; a lasting difference means kcm is not reconciling the provider.

## Fix
kubectl logs -n kcm-system deploy/kcm-controller-manager | grep -i statemanagementprovider
",
    },
    CodeInfo {
        code: PROFILE_NOT_WRITTEN,
        name: "serviceset-profile-false",
        severity: Severity::Error,
        title: "kcm wrote no Sveltos Profile for the ServiceSet",
        docs: "## What it finds
The ServiceSet of kcm's default provider has `ServiceSetProfile=False`, or its Profile/ClusterProfile does not exist. doctor rebuilds the Profile as kcm does to say why: an invalid or unresolved template, a chart version that is not semver, a missing ClusterDeployment, Credential or cluster, a provider config kcm cannot decode, or a Profile the Sveltos CRD rejects (whose error kcm shows only in a Warning event).

## Why it matters
kcm builds the Profile all or nothing: none of the ServiceSet's services is deployed or updated.

## Fix
kubectl ksm render --live <serviceset> -n <namespace>   # the Profile kcm builds, with every problem
kubectl get events -n <namespace> --field-selector involvedObject.name=<serviceset>
",
    },
    CodeInfo {
        code: PROFILE_NOT_MATCHED,
        name: "profile-not-matched",
        severity: Severity::Error,
        title: "Sveltos has not matched the Profile to its cluster",
        docs: "## What it finds
The Profile has no `status.matchingClusters` (Sveltos echoes the clusterRef kcm sets once it reconciles the Profile), or lists failed or updating clusters.

## Why it matters
kcm reads the ClusterSummary of the first matching cluster; without one, no service state is collected.

## Fix
kubectl get profile -n <namespace> <name> -o yaml   # status
kubectl logs -n projectsveltos deploy/addon-controller | grep <name>
",
    },
    CodeInfo {
        code: SUMMARY_MISSING,
        name: "clustersummary-missing",
        severity: Severity::Error,
        title: "The ClusterSummary of the Profile does not exist",
        docs: "## What it finds
The Profile matches its cluster but Sveltos's ClusterSummary (`p--<profile>-<capi|sveltos>-<cluster>`, or `<clusterprofile>-…` for a ClusterProfile) is not in the cluster's namespace.

## Why it matters
kcm maps service states from that ClusterSummary only: the services stay as they were (Provisioning or Pending).

## Fix
kubectl get clustersummaries -n <cluster namespace>
kubectl logs -n projectsveltos deploy/addon-controller
",
    },
    CodeInfo {
        code: CLUSTER_NOT_READY,
        name: "cluster-not-ready",
        severity: Severity::Error,
        title: "Sveltos cannot use the target cluster (kcm hides it)",
        docs: "## What it finds
The ClusterSummary's features are Failed with \"cluster is not ready\" (or the agent in pull mode is not healthy). kcm maps them to Pending (or keeps Deployed) and never shows the message.

## Why it matters
Nothing is deployed or updated until the cluster's control plane is initialized (CAPI Cluster `ControlPlaneInitialized`) or the SveltosCluster is ready.

## Fix
kubectl get cluster.cluster.x-k8s.io -n <namespace> <cluster> -o yaml   # ControlPlaneInitialized
kubectl get sveltoscluster -n <namespace> <cluster> -o yaml   # status.ready, failureMessage
",
    },
    CodeInfo {
        code: HELM_CONFLICT,
        name: "helm-release-conflict",
        severity: Severity::Error,
        title: "Another Profile manages the Helm release",
        docs: "## What it finds
The release summary is `Conflict`: another ClusterSummary on the same cluster owns the chart. The finding names that ClusterSummary, its Profile and ServiceSet, and both tiers (tier = 2147483647 − priority; a nil provider config gives tier 100).

## Why it matters
Sveltos gives a release to the strictly lower tier; with equal tiers the first owner keeps it. The service stays Failed; with continueOnConflict false (stopOnConflict, or a nil config) the charts after it are not deployed either.

## Fix
Give the ServiceSet that should win a higher priority (lower tier), or remove the duplicate service from one of them.
",
    },
    CodeInfo {
        code: CHART_HELD,
        name: "chart-held",
        severity: Severity::Warning,
        title: "The service waits behind an earlier chart",
        docs: "## What it finds
A Helm service is Pending because Sveltos stopped at an earlier chart of the same Profile: it failed and continueOnError is false, or it conflicted and continueOnConflict is false.

## Why it matters
Sveltos deploys charts in order; the later ones are never attempted, and kcm shows them Pending, not Failed.

## Fix
Fix the earlier chart, or set continueOnError (or leave stopOnConflict false) in the provider config.
",
    },
    CodeInfo {
        code: NON_RETRIABLE,
        name: "failed-non-retriable",
        severity: Severity::Error,
        title: "Sveltos will not retry",
        docs: "## What it finds
The feature is FailedNonRetriable: a conflict, a template that cannot be instantiated, a missing templateResourceRef, or maxConsecutiveFailures reached.

## Why it matters
Sveltos stops retrying until the Profile or the ClusterSummary changes.

## Fix
Fix the cause in the message, then change the ServiceSet (kcm rewrites the Profile).
",
    },
    CodeInfo {
        code: VERIFIER_HOLD,
        name: "health-verifier-hold",
        severity: Severity::Error,
        title: "kcm's health verifier holds the service Provisioning",
        docs: "## What it finds
Sveltos installed the release, but kcm's health rules find an object unhealthy (`ServiceHealth<Kind>` conditions name the object and the rule), or kcm cannot compute the release's fingerprint (no chart entry in the ClusterConfiguration).

## Why it matters
The service never becomes Deployed, and services that depend on it never start. The default Pod rule marks completed Job pods unhealthy forever.

## Fix
kubectl get serviceset -n <namespace> <name> -o yaml   # status.services[].conditions
Delete the completed pods, or narrow the health rule (label k0rdent.mirantis.com/health-rule-target).
",
    },
    CodeInfo {
        code: STALE_FAILURE,
        name: "stale-failure-message",
        severity: Severity::Warning,
        title: "A failure message is stale",
        docs: "## What it finds
A Sveltos feature is Provisioning again but keeps its previous failureMessage while it retries; kcm shows Kustomize and Resource services Failed from it.

## Why it matters
The message may describe a problem already fixed; the retry's outcome is not known yet.

## Fix
kubectl get clustersummary -n <cluster namespace> <name> -o yaml   # featureSummaries
",
    },
    CodeInfo {
        code: DEPENDENTS_BLOCKED,
        name: "dependents-blocked",
        severity: Severity::Error,
        title: "Services wait on a dependency kcm does not consider ready",
        docs: "## What it finds
A service of the ClusterDeployment or MultiClusterService that kcm leaves out of the ServiceSet because a service it depends on is not Deployed with `status.version` equal to its desired version (kcm `internal/serviceset/util.go` `FilterServiceDependencies`), for either provider. The finding names the dependency, follows it when it is itself left out, and says whether the service is waiting or stuck:
- waiting (info; a warning once the dependency has been Pending or Provisioning longer than `--stuck-after`): the dependency is on its way;
- stuck (error): the dependency is Failed (a failed dependency keeps its dependents out until it is Deployed), disabled (kcm never deploys it), Deployed but without its version (for Helm services only kcm's health verifier writes `status.version`), on a cycle or not a service of the spec.

## Why it matters
The dependent services are not deployed, and nothing in the ServiceSet says why: they are simply absent from it.

## Fix
kubectl get serviceset -n <namespace> <name> -o jsonpath='{.status.services}'   # state and version of the dependency; fix the dependency first
",
    },
    CodeInfo {
        code: NIL_CONFIG_TIER,
        name: "profile-tier-100",
        severity: Severity::Warning,
        title: "A nil provider config gives the Profile tier 100",
        docs: "## What it finds
The ServiceSet names its provider but has no `spec.provider.config`: kcm leaves the Profile spec zero, so it gets tier 100 and continueOnConflict false.

## Why it matters
Tier 100 outranks every priority-derived tier (about 2.1e9): this ServiceSet wins every conflict, and its first conflict stops its later charts.

## Fix
Give the ClusterDeployment or MultiClusterService a provider config (`serviceSpec.provider.config: {}` at least).
",
    },
    CodeInfo {
        code: HEALTH_RULES_INVALID,
        name: "health-rules-invalid",
        severity: Severity::Error,
        title: "kcm cannot load a health rule",
        docs: "## What it finds
The ServiceSet's `ServiceSetHealthRules` condition is False: a health-rule ConfigMap has a rule kcm cannot load (scope, kind/version, a CEL expression that does not compile, YAML).

## Why it matters
kcm's verifier does not run: Helm services are not promoted to Deployed and their version is not stamped.

## Fix
kubectl ksm lint <configmap.yaml>   # positions inside the rules
kubectl get configmaps -A -l k0rdent.mirantis.com/health-rule-target
",
    },
    CodeInfo {
        code: SUMMARY_SUSPENDED,
        name: "clustersummary-suspended",
        severity: Severity::Warning,
        title: "Sveltos suspended the ClusterSummary",
        docs: "## What it finds
The ClusterSummary has `status.reconciliationSuspended` (the cluster is paused) or a reconcile-level failureMessage.

## Why it matters
Nothing is deployed or updated on the cluster while it lasts.

## Fix
kubectl get clustersummary -n <cluster namespace> <name> -o yaml
",
    },
    CodeInfo {
        code: REFERENCE_NAMESPACE,
        name: "reference-namespace-rewritten",
        severity: Severity::Warning,
        title: "Sveltos looks a Profile's reference up in the Profile's namespace",
        docs: "## What it finds
A `policyRefs` or `kustomizationRefs` entry of a (namespaced) Profile names another namespace than the Profile's.

## Why it matters
Sveltos rewrites, in memory, the namespace of those references to the Profile's own namespace: the object of the other namespace is never read, and the one of the same name in the Profile's namespace (or nothing) is deployed instead.

## Fix
Put the ConfigMap, Secret or source in the ServiceSet's namespace, or use a MultiClusterService (ClusterProfile) when it must be shared.
",
    },
    CodeInfo {
        code: FLUX_CONFLICT,
        name: "flux-release-conflict",
        severity: Severity::Error,
        title: "Another ServiceSet of the Flux adapter owns the release",
        docs: "## What it finds
A service of the Flux adapter deploys a Helm release (same cluster, release namespace and release name), or applies a source path, that another ServiceSet of the same provider deploys too, and the other one owns it: it has the higher `spec.provider.config.priority` (default 100), or the same priority and is older (creation time, then namespace/name). The finding names the owning ServiceSet and service and both priorities; kcm's provider settles the same conflict through Sveltos tiers (KSM623).

## Why it matters
The adapter writes nothing for the losing service and reports it Failed (Pending while the owner is being deleted). When the owner goes away, the loser takes the release over on its next reconcile, without an uninstall.

## Fix
Give the ServiceSet that should own the release a higher priority, or remove the duplicate service from one of them.
",
    },
    CodeInfo {
        code: FLUX_DUPLICATE,
        name: "flux-duplicate-release",
        severity: Severity::Error,
        title: "Two Flux objects deploy one release",
        docs: "## What it finds
Two or more HelmReleases found on the management cluster deploy the same Helm release (same target cluster, storage namespace and release name), or two Kustomizations apply the same path of the same source to the same cluster and namespace. The finding names each object and the ServiceSet that controls it.

## Why it matters
Each Flux object upgrades the release (or applies the path) with its own values and prunes what the other applied: the release flips between them, and deleting either one uninstalls it for both.

## Fix
kubectl get helmreleases -A -l ksm.k0rdent.mirantis.com/managed=true   # then delete the one no ServiceSet should own, or give the owning ServiceSet a higher priority and let the adapter hand the release over
",
    },
    CodeInfo {
        code: MCS_BLOCKED,
        name: "mcs-dependency-blocked",
        severity: Severity::Warning,
        title: "A MultiClusterService waits on another before it deploys to a cluster",
        docs: "## What it finds
A target cluster of a MultiClusterService whose ServiceSet kcm does not create or update because a MultiClusterService it depends on has not deployed every one of its services there: the target's `status.matchingClusters` entry has reason `MultiClusterServiceDependencyNotReady` and the condition `MultiClusterServiceDependencyReady` is False (kcm `internal/controller/multiclusterservice_controller.go` `okToReconcileServiceSet`, `setMatchingClusters`). The finding names the blocking MultiClusterService and why, from its ServiceSet on that cluster: which services are not Deployed, or that the ServiceSet does not exist because the dependency is itself blocked or not reconciled. The severity says whether it is waiting (info, a warning once the target has waited longer than `--stuck-after`) or stuck (error: a service of the dependency Failed or is disabled, or the dependency is not reconciled).

## Why it matters
Nothing of this MultiClusterService reaches the cluster until the dependency is fully deployed there; a failed or disabled service of the dependency blocks it for good.

## Fix
kubectl get multiclusterservice <name> -o jsonpath='{.status.matchingClusters}'; then fix the dependency's failing service (kubectl ksm doctor on its ServiceSet)
",
    },
    CodeInfo {
        code: MCS_NOT_RECONCILED,
        name: "mcs-not-reconciled",
        severity: Severity::Error,
        title: "kcm stopped reconciling the MultiClusterService: a validation failed",
        docs: "## What it finds
A MultiClusterService with the condition `ServicesReferencesValidation`, `ServicesDependencyValidation` or `MultiClusterServiceDependencyValidation` False: a template or template chain it names is missing or invalid, its services' dependencies are undefined or cyclic, or its `dependsOn` names a missing MultiClusterService or leads to a cycle.

## Why it matters
kcm's MultiClusterService controller returns at the first failed validation without creating or updating any ServiceSet, and does not retry until the spec changes (kcm `internal/controller/multiclusterservice_controller.go` `reconcileUpdate`). There is no MultiClusterService webhook, so the object was accepted.

## Fix
Fix what the condition's message names (`kubectl ksm lint` finds most of these before applying: KSM410, KSM411, KSM421, KSM423, KSM424).
",
    },
    CodeInfo {
        code: KIND_UNREAD,
        name: "kind-unread",
        severity: Severity::Warning,
        title: "A kind doctor needs could not be read",
        docs: "## What it finds
Live, the API server refused to list a kind doctor follows (HTTP 403: the user lacks `list` on it), so the snapshot has none of its objects. The finding names the kind and quotes the refusal.

## Why it matters
The diagnosis goes on with what it could read, but it cannot follow a chain past that kind: a Flux object, source, Profile or ClusterSummary it could not list is neither judged nor reported missing, so a problem there stays unseen. ServiceSets themselves must be readable: without them doctor stops with an error.

## Fix
kubectl auth can-i list helmreleases.helm.toolkit.fluxcd.io -A   # for the kind named
# then grant get and list on it: the README lists the rules doctor needs (a ClusterRole)
",
    },
];
