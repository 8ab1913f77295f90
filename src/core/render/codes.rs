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
        title: "The ServiceSet's provider config is not valid for the Flux adapter",
        docs: "## What it finds
`spec.provider.config` has a key the adapter does not know, or a value of the wrong type or form (durations as Flux accepts them).

## Why it matters
The adapter does not guess: nothing is rendered with a configuration it does not understand.

## Fix
Use the keys listed in the finding's help.
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
