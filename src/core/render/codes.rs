//! The codes of render's findings (KSM5xx), with their documentation.

use crate::diag::{CodeInfo, Severity};

pub const INVALID_SERVICESET: &str = "KSM500";
pub const TEMPLATE_MISSING: &str = "KSM501";
pub const TEMPLATE_INVALID: &str = "KSM502";
pub const VALUES_INVALID: &str = "KSM503";
pub const NAME_INVALID: &str = "KSM504";
pub const PROVIDER_CONFIG: &str = "KSM505";
pub const SOURCE_UNSUPPORTED: &str = "KSM506";
pub const NAME_COLLISION: &str = "KSM507";
pub const UNINSTALL: &str = "KSM508";
pub const NO_EQUIVALENT: &str = "KSM509";
pub const VALUES_TEMPLATED: &str = "KSM510";
pub const HELM_OPTION_INVALID: &str = "KSM511";
pub const PROVIDER_UNKNOWN: &str = "KSM512";
pub const PROFILE_NOT_WRITTEN: &str = "KSM513";
pub const PROFILE_REJECTED: &str = "KSM514";
pub const CLUSTER_MISSING: &str = "KSM515";
pub const NIL_CONFIG: &str = "KSM516";
pub const CONFIG_KEY_IGNORED: &str = "KSM517";
pub const CHART_VERSION: &str = "KSM518";
pub const SOURCE_MISSING: &str = "KSM519";
pub const RENDER_NOTE: &str = "KSM520";
pub const RELEASE_CONFLICT: &str = "KSM521";
pub const PROFILE_DEFAULTS: &str = "KSM522";
pub const OUTPUT_INVALID: &str = "KSM599";

/// Every code of this family, in code order, with its documentation.
pub static ALL: &[CodeInfo] = &[
    CodeInfo {
        code: INVALID_SERVICESET,
        name: "invalid-serviceset",
        severity: Severity::Error,
        title: "The input is not a ServiceSet with a name",
        docs: "## What it finds
The object given to render is not a ServiceSet, or has no `metadata.name`.

## Why it matters
Nothing can be rendered from it.

## Fix
Give a ServiceSet (kubectl get serviceset NAME -o yaml), or a ClusterDeployment or MultiClusterService to derive one from.
",
    },
    CodeInfo {
        code: TEMPLATE_MISSING,
        name: "template-missing",
        severity: Severity::Error,
        title: "The service's ServiceTemplate is not among the inputs",
        docs: "## What it finds
No ServiceTemplate of the service's template name in the ServiceSet's namespace.

## Why it matters
kcm looks the template up in the ServiceSet's namespace; without it the service cannot be rendered.

## Fix
Pass the templates with --templates (kubectl get servicetemplates -n NAMESPACE -o yaml).
",
    },
    CodeInfo {
        code: TEMPLATE_INVALID,
        name: "template-invalid",
        severity: Severity::Error,
        title: "The ServiceTemplate is not valid",
        docs: "## What it finds
The template has `status.valid` false or no status yet, has none of helm, kustomize or resources, or lacks the status.chartRef/sourceStatus kcm writes.

## Why it matters
kcm only deploys valid, reconciled templates; the adapter does the same.

## Fix
Fix what status.validationError says, or wait for kcm to reconcile the template.
",
    },
    CodeInfo {
        code: VALUES_INVALID,
        name: "values-invalid",
        severity: Severity::Error,
        title: "The service's values are not a YAML mapping",
        docs: "## What it finds
`values` does not parse as YAML, or is not a mapping of keys to values.

## Why it matters
Helm values are key: value pairs; the release cannot be rendered.

## Fix
Fix the YAML at the line and column given.
",
    },
    CodeInfo {
        code: NAME_INVALID,
        name: "name-invalid",
        severity: Severity::Error,
        title: "A rendered name is not valid",
        docs: "## What it finds
The object name `<serviceset>-<service>`, the namespace, or the Helm release name (the service name, at most 53 characters) is not a valid Kubernetes or Helm name.

## Why it matters
The API server (or Helm) would refuse the object.

## Fix
Shorten or rename the service or the ServiceSet.
",
    },
    CodeInfo {
        code: PROVIDER_CONFIG,
        name: "provider-config-invalid",
        severity: Severity::Error,
        title: "The ServiceSet's provider config is not valid for its provider",
        docs: "## What it finds
For the Flux adapter: `spec.provider.config` has a key the adapter does not know, or a value of the wrong type or form (durations as Flux accepts them). For kcm's Sveltos adapter: a value kcm cannot decode into its profile configuration (a string priority, a list that is not a list...), with Go's own error, or a priority outside 1…2147483646.

## Why it matters
The Flux adapter does not guess: nothing is rendered with a configuration it does not understand. kcm writes no Profile at all (ServiceSetProfile=False, ServiceSetProfileBuildFailed), so none of the ServiceSet's services is deployed or updated.

## Fix
Use the keys and types listed in the finding's help.
",
    },
    CodeInfo {
        code: SOURCE_UNSUPPORTED,
        name: "source-unsupported",
        severity: Severity::Error,
        title: "The template's source cannot be used by a Flux object",
        docs: "## What it finds
A Kustomization would read a ConfigMap or Secret, or the template names a source kind Flux cannot use there.

## Why it matters
A Flux Kustomization reads only GitRepository, Bucket and OCIRepository artifacts.

## Fix
Store the manifests in a GitRepository, Bucket or OCIRepository and reference it.
",
    },
    CodeInfo {
        code: NAME_COLLISION,
        name: "name-collision",
        severity: Severity::Error,
        title: "Two services render to the same object name",
        docs: "## What it finds
Two services of the ServiceSet have the same name (in different namespaces): both would be `<serviceset>-<service>`.

## Why it matters
Only one object can have the name; the second service would overwrite the first.

## Fix
Give the services distinct names.
",
    },
    CodeInfo {
        code: UNINSTALL,
        name: "uninstall",
        severity: Severity::Info,
        title: "The service is being uninstalled",
        docs: "## What it finds
`helmAction: Uninstall`: no object is rendered; the adapter deletes the HelmRelease, which uninstalls the release.

## Why it matters
A note, not a problem: the service disappears from the cluster on purpose.

## Fix
Remove the service from the ServiceSet once it is uninstalled.
",
    },
    CodeInfo {
        code: NO_EQUIVALENT,
        name: "no-equivalent",
        severity: Severity::Warning,
        title: "A setting has no equivalent in the Flux object",
        docs: "## What it finds
A helmOptions field (or values on a Kustomize service) that the Flux object cannot express.

## Why it matters
The setting is ignored: the deployment may differ from what kcm's own provider would do.

## Fix
Drop the setting, or see docs/helm-options.md for the mapping.
",
    },
    CodeInfo {
        code: VALUES_TEMPLATED,
        name: "values-templated",
        severity: Severity::Warning,
        title: "The values contain template expressions",
        docs: "## What it finds
`values` contain `{{ ... }}`: kcm's Sveltos provider renders them as templates, the Flux adapter passes them as they are.

## Why it matters
The release would get the literal text, not the rendered value.

## Fix
Resolve the values before putting them into the ServiceSet.
",
    },
    CodeInfo {
        code: HELM_OPTION_INVALID,
        name: "helm-option-invalid",
        severity: Severity::Error,
        title: "A helmOptions value is not valid",
        docs: "## What it finds
A helmOptions field has a value of the wrong type or form (a timeout Flux does not accept...).

## Why it matters
The HelmRelease would be refused or behave differently.

## Fix
Fix the value as the finding says.
",
    },
    CodeInfo {
        code: PROVIDER_UNKNOWN,
        name: "provider-unknown",
        severity: Severity::Error,
        title: "The ServiceSet's provider is not one the tool can render",
        docs: "## What it finds
The ServiceSet names a provider whose translation the tool does not know: not kcm's default `ksm-projectsveltos` (or another provider whose adapter is kcm's own controller), not the Flux adapter of `kubectl ksm run`.

## Why it matters
Rendering it with another provider's translation would show objects its adapter never writes.

## Fix
Pass the StateManagementProvider with --smp so the tool can see its adapter, or render a ServiceSet of a known provider.
",
    },
    CodeInfo {
        code: PROFILE_NOT_WRITTEN,
        name: "profile-not-written",
        severity: Severity::Error,
        title: "kcm writes no Sveltos Profile for the ServiceSet",
        docs: "## What it finds
kcm's Sveltos adapter builds a ServiceSet's Profile all or nothing; a problem of any service or of the provider config leaves it unwritten. The finding gives the ServiceSetProfile condition kcm sets (reason and message) and, for ServiceSetProfileNotReady, the error that only reaches kcm's log and a Warning event.

## Why it matters
None of the ServiceSet's services is deployed or updated, including those that have no problem.

## Fix
Fix the problems reported with it (template, chart, source, cluster, provider config).
",
    },
    CodeInfo {
        code: PROFILE_REJECTED,
        name: "profile-rejected",
        severity: Severity::Error,
        title: "The API server rejects the Profile kcm would write",
        docs: "## What it finds
The Profile (or ClusterProfile) kcm's adapter builds does not validate against the real Sveltos CRD: a syncMode or stopMatchingBehavior outside its enum, a duplicate templateResourceRefs identifier, a policyRef with both kind and remoteURL...

## Why it matters
kcm's create or update fails: the ServiceSet shows only ServiceSetProfile=False \"Profile is not ready\"; the API server's reason is in a Warning event and kcm's log.

## Fix
Fix the ServiceSet's provider config (or its ClusterDeployment/MultiClusterService serviceSpec) as the message says.
",
    },
    CodeInfo {
        code: CLUSTER_MISSING,
        name: "cluster-missing",
        severity: Severity::Error,
        title: "The ServiceSet's cluster cannot be resolved",
        docs: "## What it finds
The ClusterDeployment of `spec.cluster`, its Credential, or the CAPI Cluster / SveltosCluster of the same name that the Profile must target does not exist.

## Why it matters
kcm cannot build the Profile: ServiceSetProfile stays False with ServiceSetProfileNotReady, and nothing is deployed.

## Fix
kubectl get clusterdeployment,credential -n NAMESPACE; kubectl get clusters.cluster.x-k8s.io,sveltosclusters -n NAMESPACE
",
    },
    CodeInfo {
        code: NIL_CONFIG,
        name: "nil-provider-config",
        severity: Severity::Warning,
        title: "A nil provider config gives the Profile tier 100",
        docs: "## What it finds
The ServiceSet names its provider but has no `spec.provider.config`. kcm then leaves the Profile spec zero: tier 100 and continueOnConflict false, instead of tier 2147483647 - priority and continueOnConflict true.

## Why it matters
Tier 100 outranks every priority-derived tier (about 2.1e9): this ServiceSet silently wins every conflict over a release, and its first conflict stops the charts after it.

## Fix
Give the ClusterDeployment or MultiClusterService a provider config (`serviceSpec.provider.config: {}` at least), or leave `serviceSpec.provider.name` empty so kcm writes one from the serviceSpec fields.
",
    },
    CodeInfo {
        code: CONFIG_KEY_IGNORED,
        name: "provider-config-key-ignored",
        severity: Severity::Warning,
        title: "kcm's adapter ignores a key of the provider config",
        docs: "## What it finds
A key of `spec.provider.config` that kcm's Sveltos adapter does not decode: keys are case-sensitive, and only priority, stopOnConflict, continueOnError, syncMode, driftIgnore, driftExclusions, patches, templateResourceRefs, policyRefs, stopMatchingBehavior, reloader and maxConsecutiveFailures are read.

## Why it matters
The setting has no effect, without a word from kcm.

## Fix
Correct the key's spelling, or drop it.
",
    },
    CodeInfo {
        code: CHART_VERSION,
        name: "chart-version-invalid",
        severity: Severity::Error,
        title: "The chart version is not a semantic version",
        docs: "## What it finds
The HelmChart of the template has neither an artifact revision nor a `spec.version` that parses as a semantic version (a range such as `>=1.0.0` or `*` does not).

## Why it matters
kcm's adapter needs the exact chart version for Sveltos: it writes no Profile.

## Fix
Pin the template's chart version.
",
    },
    CodeInfo {
        code: SOURCE_MISSING,
        name: "source-missing",
        severity: Severity::Error,
        title: "The template's HelmChart or repository is missing",
        docs: "## What it finds
The HelmChart named by the template's `status.chartRef`, or the HelmRepository/GitRepository it reads, is not there (or not among render's inputs).

## Why it matters
kcm's adapter reads the chart's repository URL and version from them: without them it writes no Profile.

## Fix
kubectl get helmcharts,helmrepositories,gitrepositories -n NAMESPACE; pass them to render with --templates.
",
    },
    CodeInfo {
        code: RENDER_NOTE,
        name: "render-note",
        severity: Severity::Info,
        title: "Something render assumed or noticed",
        docs: "## What it finds
An input render did not get (the ClusterDeployment, its Credential, the cluster object) and what it assumed instead, or a fact of where kcm writes the object (a regional cluster).

## Why it matters
The rendered object may differ from kcm's in what the missing input decides.

## Fix
Pass the objects named with --templates to render exactly.
",
    },
    CodeInfo {
        code: RELEASE_CONFLICT,
        name: "release-conflict",
        severity: Severity::Error,
        title: "Another ServiceSet owns the release (or path) this service deploys",
        docs: "## What it finds
Two ServiceSets of the Flux adapter deploy the same Helm release (same cluster, release namespace and release name) or apply the same path of the same source to the same cluster and namespace: typically a ClusterDeployment's ServiceSet and a MultiClusterService's. The adapter gives it to the higher `spec.provider.config.priority` (default 100); on equal priority the older ServiceSet keeps it (creation time, then namespace/name), as kcm's own provider resolves conflicts through Sveltos tiers.

## Why it matters
The losing service is not written: its state is Failed (Pending while the owner is being deleted), and render leaves its object out. Two objects for one release would fight over it on the workload cluster.

## Example
A ClusterDeployment `dev` deploys `ingress-nginx` into `ingress`, and a MultiClusterService matching `dev` deploys it too, with priority 500: the MultiClusterService's ServiceSet owns the release and the ClusterDeployment's service reports the conflict.

## Fix
Remove the duplicate service from one of them, or give the ServiceSet that should own the release a higher priority. When the owner goes away, the other takes the release over (its object is suspended first and deleted, so nothing is uninstalled).
",
    },
    CodeInfo {
        code: PROFILE_DEFAULTS,
        name: "profile-defaults",
        severity: Severity::Info,
        title: "The values kcm's adapter defaults in the Profile, and which default",
        docs: "## What it finds
For a ServiceSet of kcm's default provider, each Profile value the ServiceSet leaves to kcm and the default kcm v1.12 writes instead (kcm `internal/controller/adapters/sveltos/serviceset_controller.go` `buildProfileSpec`, `applyProfileSpecDefaults`, `convertHelmOptions`): the tier of the default priority 100 (2147483547), `continueOnConflict: true` when `stopOnConflict` is unset (the opposite of Sveltos's own default), `syncMode: Continuous`, `stopMatchingBehavior: WithdrawPolicies` (also for any value that is not exactly `LeavePolicies`), `continueOnError: false`, no `maxConsecutiveFailures` (Sveltos retries forever), and per chart `atomic: true` and `helmChartAction: Install`. With a nil provider config, the Profile CRD's tier 100 and `continueOnConflict: false`.

## Why it matters
The rendered Profile shows these values as if they were chosen; the note says which ones nobody chose, and so which ones change with kcm's defaults.

## Fix
Nothing to fix; set the value in `spec.provider.config` (or the service's `helmOptions`/`helmAction`) to choose it.
",
    },
    CodeInfo {
        code: OUTPUT_INVALID,
        name: "output-invalid",
        severity: Severity::Error,
        title: "A rendered object fails its Flux CRD",
        docs: "## What it finds
The object the translation produced does not validate against the real Flux CRD.

## Why it matters
A bug of the translation, never expected: please report it with the input.

## Fix
Report it; meanwhile the service is not rendered.
",
    },
];
