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
];
