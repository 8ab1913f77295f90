//! Every kind the tool reads or writes, in one table: group, version, kind, plural, scope.
//!
//! A new kind is one line here (and, when it gets a typed view, a file beside this one). The
//! live edges turn a [`Kind`] into their client's resource type; nothing else spells a group or
//! a version.

/// One kind of object, at the version the tool reads and writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kind {
    /// The API group; empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    /// `group/version`, or `version` for the core group.
    pub api_version: &'static str,
    pub kind: &'static str,
    /// The resource name in URLs (`servicesets`).
    pub plural: &'static str,
    pub namespaced: bool,
    /// The short names kubectl takes for it (`hr`, `deploy`), as its CRD or the API server
    /// declares them.
    pub short_names: &'static [&'static str],
}

macro_rules! kind {
    ("", $version:literal, $kind:literal, $plural:literal, $namespaced:expr $(, [$($short:literal),*])?) => {
        Kind {
            group: "",
            version: $version,
            api_version: $version,
            kind: $kind,
            plural: $plural,
            namespaced: $namespaced,
            short_names: &[$($($short),*)?],
        }
    };
    ($group:literal, $version:literal, $kind:literal, $plural:literal, $namespaced:expr $(, [$($short:literal),*])?) => {
        Kind {
            group: $group,
            version: $version,
            api_version: concat!($group, "/", $version),
            kind: $kind,
            plural: $plural,
            namespaced: $namespaced,
            short_names: &[$($($short),*)?],
        }
    };
}

pub const NAMESPACED: bool = true;
pub const CLUSTER_SCOPED: bool = false;

// Kubernetes.
pub const SECRET: Kind = kind!("", "v1", "Secret", "secrets", NAMESPACED);
pub const DEPLOYMENT: Kind = kind!(
    "apps",
    "v1",
    "Deployment",
    "deployments",
    NAMESPACED,
    ["deploy"]
);
pub const CRD: Kind = kind!(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    CLUSTER_SCOPED,
    ["crd", "crds"]
);
pub const LEASE: Kind = kind!("coordination.k8s.io", "v1", "Lease", "leases", NAMESPACED);
/// The core Events controllers record about objects (`doctor --watch`'s timeline).
pub const EVENT: Kind = kind!("", "v1", "Event", "events", NAMESPACED, ["ev"]);

// k0rdent (kcm).
pub const STATE_MANAGEMENT_PROVIDER: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "StateManagementProvider",
    "statemanagementproviders",
    CLUSTER_SCOPED,
    ["smp"]
);
pub const SERVICE_SET: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ServiceSet",
    "servicesets",
    NAMESPACED
);
pub const SERVICE_TEMPLATE: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ServiceTemplate",
    "servicetemplates",
    NAMESPACED,
    ["svctmpl"]
);
pub const CLUSTER_DEPLOYMENT: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterDeployment",
    "clusterdeployments",
    NAMESPACED,
    ["clusterd", "cld"]
);
pub const CREDENTIAL: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "Credential",
    "credentials",
    NAMESPACED,
    ["cred"]
);
pub const MULTI_CLUSTER_SERVICE: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "MultiClusterService",
    "multiclusterservices",
    CLUSTER_SCOPED,
    ["mcs"]
);

pub const SERVICE_TEMPLATE_CHAIN: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ServiceTemplateChain",
    "servicetemplatechains",
    NAMESPACED
);
pub const CLUSTER_TEMPLATE: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterTemplate",
    "clustertemplates",
    NAMESPACED,
    ["clustertmpl"]
);
pub const CLUSTER_TEMPLATE_CHAIN: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterTemplateChain",
    "clustertemplatechains",
    NAMESPACED
);
pub const PROVIDER_TEMPLATE: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ProviderTemplate",
    "providertemplates",
    CLUSTER_SCOPED,
    ["providertmpl"]
);
pub const ACCESS_MANAGEMENT: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "AccessManagement",
    "accessmanagements",
    CLUSTER_SCOPED,
    ["am"]
);
pub const CLUSTER_AUDIT_POLICY: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterAuditPolicy",
    "clusterauditpolicies",
    NAMESPACED
);
pub const CLUSTER_AUTHENTICATION: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterAuthentication",
    "clusterauthentications",
    NAMESPACED,
    ["clauth"]
);
pub const CLUSTER_DATA_SOURCE: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterDataSource",
    "clusterdatasources",
    NAMESPACED,
    ["clds"]
);
pub const CLUSTER_IPAM: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterIPAM",
    "clusteripams",
    NAMESPACED
);
pub const CLUSTER_IPAM_CLAIM: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ClusterIPAMClaim",
    "clusteripamclaims",
    NAMESPACED
);
pub const DATA_SOURCE: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "DataSource",
    "datasources",
    NAMESPACED
);
pub const MANAGEMENT_BACKUP: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "ManagementBackup",
    "managementbackups",
    CLUSTER_SCOPED,
    ["kcmbackup", "mgmtbackup"]
);
pub const REGION: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "Region",
    "regions",
    CLUSTER_SCOPED,
    ["rgn"]
);

// Flux: the objects the adapter writes, and their sources.
pub const HELM_RELEASE: Kind = kind!(
    "helm.toolkit.fluxcd.io",
    "v2",
    "HelmRelease",
    "helmreleases",
    NAMESPACED,
    ["hr"]
);
pub const KUSTOMIZATION: Kind = kind!(
    "kustomize.toolkit.fluxcd.io",
    "v1",
    "Kustomization",
    "kustomizations",
    NAMESPACED,
    ["ks"]
);
pub const HELM_CHART: Kind = kind!(
    "source.toolkit.fluxcd.io",
    "v1",
    "HelmChart",
    "helmcharts",
    NAMESPACED,
    ["hc"]
);
pub const HELM_REPOSITORY: Kind = kind!(
    "source.toolkit.fluxcd.io",
    "v1",
    "HelmRepository",
    "helmrepositories",
    NAMESPACED,
    ["helmrepo"]
);
pub const GIT_REPOSITORY: Kind = kind!(
    "source.toolkit.fluxcd.io",
    "v1",
    "GitRepository",
    "gitrepositories",
    NAMESPACED,
    ["gitrepo"]
);
pub const OCI_REPOSITORY: Kind = kind!(
    "source.toolkit.fluxcd.io",
    "v1",
    "OCIRepository",
    "ocirepositories",
    NAMESPACED,
    ["ocirepo"]
);
pub const BUCKET: Kind = kind!(
    "source.toolkit.fluxcd.io",
    "v1",
    "Bucket",
    "buckets",
    NAMESPACED
);
pub const EXTERNAL_ARTIFACT: Kind = kind!(
    "source.toolkit.fluxcd.io",
    "v1",
    "ExternalArtifact",
    "externalartifacts",
    NAMESPACED,
    ["ea"]
);

// Sveltos (kcm's default provider, `ksm-projectsveltos`) and the Cluster API Cluster it targets.
pub const PROFILE: Kind = kind!(
    "config.projectsveltos.io",
    "v1beta1",
    "Profile",
    "profiles",
    NAMESPACED
);
pub const CLUSTER_PROFILE: Kind = kind!(
    "config.projectsveltos.io",
    "v1beta1",
    "ClusterProfile",
    "clusterprofiles",
    CLUSTER_SCOPED
);
pub const CLUSTER_SUMMARY: Kind = kind!(
    "config.projectsveltos.io",
    "v1beta1",
    "ClusterSummary",
    "clustersummaries",
    NAMESPACED
);
pub const CLUSTER_CONFIGURATION: Kind = kind!(
    "config.projectsveltos.io",
    "v1beta1",
    "ClusterConfiguration",
    "clusterconfigurations",
    NAMESPACED
);
pub const SVELTOS_CLUSTER: Kind = kind!(
    "lib.projectsveltos.io",
    "v1beta1",
    "SveltosCluster",
    "sveltosclusters",
    NAMESPACED
);
pub const CAPI_CLUSTER: Kind = kind!(
    "cluster.x-k8s.io",
    "v1beta2",
    "Cluster",
    "clusters",
    NAMESPACED
);

// Kinds the tool does not read or write itself but knows, because an SMP's adapter and
// provisioners may name them: lint checks their scope and resource names offline.
pub const POD: Kind = kind!("", "v1", "Pod", "pods", NAMESPACED, ["po"]);
pub const SERVICE: Kind = kind!("", "v1", "Service", "services", NAMESPACED, ["svc"]);
pub const CONFIG_MAP: Kind = kind!("", "v1", "ConfigMap", "configmaps", NAMESPACED, ["cm"]);
pub const SERVICE_ACCOUNT: Kind = kind!(
    "",
    "v1",
    "ServiceAccount",
    "serviceaccounts",
    NAMESPACED,
    ["sa"]
);
pub const ENDPOINTS: Kind = kind!("", "v1", "Endpoints", "endpoints", NAMESPACED, ["ep"]);
pub const NAMESPACE: Kind = kind!("", "v1", "Namespace", "namespaces", CLUSTER_SCOPED, ["ns"]);
pub const NODE: Kind = kind!("", "v1", "Node", "nodes", CLUSTER_SCOPED, ["no"]);
pub const PERSISTENT_VOLUME: Kind = kind!(
    "",
    "v1",
    "PersistentVolume",
    "persistentvolumes",
    CLUSTER_SCOPED,
    ["pv"]
);
pub const STATEFUL_SET: Kind = kind!(
    "apps",
    "v1",
    "StatefulSet",
    "statefulsets",
    NAMESPACED,
    ["sts"]
);
pub const DAEMON_SET: Kind = kind!("apps", "v1", "DaemonSet", "daemonsets", NAMESPACED, ["ds"]);
pub const REPLICA_SET: Kind = kind!(
    "apps",
    "v1",
    "ReplicaSet",
    "replicasets",
    NAMESPACED,
    ["rs"]
);
pub const JOB: Kind = kind!("batch", "v1", "Job", "jobs", NAMESPACED);
pub const CRON_JOB: Kind = kind!("batch", "v1", "CronJob", "cronjobs", NAMESPACED, ["cj"]);
pub const CLUSTER_ROLE: Kind = kind!(
    "rbac.authorization.k8s.io",
    "v1",
    "ClusterRole",
    "clusterroles",
    CLUSTER_SCOPED
);
pub const CLUSTER_ROLE_BINDING: Kind = kind!(
    "rbac.authorization.k8s.io",
    "v1",
    "ClusterRoleBinding",
    "clusterrolebindings",
    CLUSTER_SCOPED
);
pub const VALIDATING_WEBHOOK_CONFIGURATION: Kind = kind!(
    "admissionregistration.k8s.io",
    "v1",
    "ValidatingWebhookConfiguration",
    "validatingwebhookconfigurations",
    CLUSTER_SCOPED
);
pub const MUTATING_WEBHOOK_CONFIGURATION: Kind = kind!(
    "admissionregistration.k8s.io",
    "v1",
    "MutatingWebhookConfiguration",
    "mutatingwebhookconfigurations",
    CLUSTER_SCOPED
);
pub const MANAGEMENT: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "Management",
    "managements",
    CLUSTER_SCOPED,
    ["kcm-mgmt", "mgmt"]
);
pub const RELEASE: Kind = kind!(
    "k0rdent.mirantis.com",
    "v1beta1",
    "Release",
    "releases",
    CLUSTER_SCOPED
);
pub const CLUSTER_REPORT: Kind = kind!(
    "config.projectsveltos.io",
    "v1beta1",
    "ClusterReport",
    "clusterreports",
    NAMESPACED
);
pub const ARGO_APPLICATION: Kind = kind!(
    "argoproj.io",
    "v1alpha1",
    "Application",
    "applications",
    NAMESPACED,
    ["app", "apps"]
);
pub const ARGO_APPLICATION_SET: Kind = kind!(
    "argoproj.io",
    "v1alpha1",
    "ApplicationSet",
    "applicationsets",
    NAMESPACED,
    ["appset", "appsets"]
);
pub const ARGO_APP_PROJECT: Kind = kind!(
    "argoproj.io",
    "v1alpha1",
    "AppProject",
    "appprojects",
    NAMESPACED,
    ["appproj", "appprojs"]
);

/// Kinds whose scope lint knows when an SMP references them (a reference to a namespaced
/// kind needs a namespace, one to a cluster-scoped kind must not have one).
pub const SCOPE_KNOWN: &[&Kind] = &[
    &DEPLOYMENT,
    &STATEFUL_SET,
    &DAEMON_SET,
    &REPLICA_SET,
    &POD,
    &SERVICE,
    &CONFIG_MAP,
    &SECRET,
    &SERVICE_ACCOUNT,
    &ENDPOINTS,
    &JOB,
    &CRON_JOB,
    &HELM_RELEASE,
    &KUSTOMIZATION,
    &GIT_REPOSITORY,
    &HELM_REPOSITORY,
    &HELM_CHART,
    &OCI_REPOSITORY,
    &BUCKET,
    &EXTERNAL_ARTIFACT,
    &NAMESPACE,
    &NODE,
    &PERSISTENT_VOLUME,
    &CRD,
    &CLUSTER_ROLE,
    &CLUSTER_ROLE_BINDING,
    &VALIDATING_WEBHOOK_CONFIGURATION,
    &MUTATING_WEBHOOK_CONFIGURATION,
    &STATE_MANAGEMENT_PROVIDER,
    &MANAGEMENT,
    &RELEASE,
];

/// Custom resources of other add-on controllers an SMP may name as provisioners, whose
/// resource names lint knows without their CRDs.
pub const ADDON_CRDS: &[&Kind] = &[
    &PROFILE,
    &CLUSTER_PROFILE,
    &CLUSTER_SUMMARY,
    &CLUSTER_CONFIGURATION,
    &CLUSTER_REPORT,
    &ARGO_APPLICATION,
    &ARGO_APPLICATION_SET,
    &ARGO_APP_PROJECT,
];

/// Whether a kind of [`SCOPE_KNOWN`] is namespaced (matched by group and kind, any version).
pub fn known_scope(api_version: &str, kind: &str) -> Option<bool> {
    let group = group_of(api_version);
    SCOPE_KNOWN
        .iter()
        .find(|k| k.group == group && k.kind == kind)
        .map(|k| k.namespaced)
}

/// Every kind of the table (the kinds the tool reads or writes).
pub const ALL: &[&Kind] = &[
    &SECRET,
    &DEPLOYMENT,
    &CRD,
    &LEASE,
    &EVENT,
    &STATE_MANAGEMENT_PROVIDER,
    &SERVICE_SET,
    &SERVICE_TEMPLATE,
    &CLUSTER_DEPLOYMENT,
    &MULTI_CLUSTER_SERVICE,
    &CREDENTIAL,
    &SERVICE_TEMPLATE_CHAIN,
    &CLUSTER_TEMPLATE,
    &CLUSTER_TEMPLATE_CHAIN,
    &PROVIDER_TEMPLATE,
    &ACCESS_MANAGEMENT,
    &CLUSTER_AUDIT_POLICY,
    &CLUSTER_AUTHENTICATION,
    &CLUSTER_DATA_SOURCE,
    &CLUSTER_IPAM,
    &CLUSTER_IPAM_CLAIM,
    &DATA_SOURCE,
    &MANAGEMENT,
    &MANAGEMENT_BACKUP,
    &REGION,
    &RELEASE,
    &CONFIG_MAP,
    &HELM_RELEASE,
    &KUSTOMIZATION,
    &HELM_CHART,
    &HELM_REPOSITORY,
    &GIT_REPOSITORY,
    &OCI_REPOSITORY,
    &BUCKET,
    &EXTERNAL_ARTIFACT,
    &PROFILE,
    &CLUSTER_PROFILE,
    &CLUSTER_SUMMARY,
    &CLUSTER_CONFIGURATION,
    &SVELTOS_CLUSTER,
    &CAPI_CLUSTER,
];

/// The Sveltos objects of kcm's default provider that doctor follows.
pub const SVELTOS_OBJECTS: &[&Kind] = &[
    &PROFILE,
    &CLUSTER_PROFILE,
    &CLUSTER_SUMMARY,
    &CLUSTER_CONFIGURATION,
    &SVELTOS_CLUSTER,
];

/// The Flux objects the adapter writes, one per service.
pub const FLUX_OBJECTS: &[&Kind] = &[&HELM_RELEASE, &KUSTOMIZATION];

/// The Flux source kinds a HelmRelease or Kustomization may consume.
pub const FLUX_SOURCES: &[&Kind] = &[
    &HELM_CHART,
    &HELM_REPOSITORY,
    &GIT_REPOSITORY,
    &OCI_REPOSITORY,
    &BUCKET,
    &EXTERNAL_ARTIFACT,
];

/// The kcm group (every k0rdent kind).
pub const KCM_GROUP: &str = SERVICE_SET.group;
/// The kcm apiVersion.
pub const KCM_API_VERSION: &str = SERVICE_SET.api_version;

/// A kind of the table by its name (kind names are unique in the table).
pub fn by_name(kind: &str) -> Option<&'static Kind> {
    ALL.iter().copied().find(|k| k.kind == kind)
}

/// A kind of the kcm group by its name.
pub fn kcm_kind(kind: &str) -> Option<&'static Kind> {
    ALL.iter()
        .copied()
        .find(|k| k.group == KCM_GROUP && k.kind == kind)
}

/// A Flux source kind by name.
pub fn flux_source(kind: &str) -> Option<&'static Kind> {
    FLUX_SOURCES.iter().copied().find(|k| k.kind == kind)
}

/// A Flux object kind (HelmRelease, Kustomization) by name.
pub fn flux_object(kind: &str) -> Option<&'static Kind> {
    FLUX_OBJECTS.iter().copied().find(|k| k.kind == kind)
}

/// Every kind the tool knows: the ones it reads or writes, and the ones lint knows by scope or
/// as an add-on's custom resource.
pub fn known() -> impl Iterator<Item = &'static Kind> {
    let mut seen: Vec<&'static Kind> = Vec::new();
    ALL.iter()
        .chain(SCOPE_KNOWN)
        .chain(ADDON_CRDS)
        .copied()
        .filter(move |k| {
            let new = !seen.iter().any(|s| s == k);
            if new {
                seen.push(k);
            }
            new
        })
}

/// A kind by a name as kubectl takes it: the kind (any case), its plural, its singular or a
/// short name (`hr`, `deploy`, `smp`), optionally in a group (`group` is then required to
/// match). None when the table does not know it (the live edges then ask discovery).
pub fn by_resource_name(name: &str, group: Option<&str>) -> Option<&'static Kind> {
    let lower = name.to_ascii_lowercase();
    known().find(|k| {
        group.is_none_or(|g| g == k.group)
            && (k.kind.to_ascii_lowercase() == lower
                || k.plural == lower
                || k.short_names.contains(&lower.as_str()))
    })
}

/// Splits a resource name as kubectl takes it: `resource`, `resource.group` or
/// `resource.version.group` (`deployments.v1.apps`) into (resource, version, group).
pub fn split_resource_name(name: &str) -> (&str, Option<&str>, Option<&str>) {
    let Some((resource, rest)) = name.split_once('.') else {
        return (name, None, None);
    };
    if let Some((version, group)) = rest.split_once('.')
        && is_version(version)
    {
        return (resource, Some(version), Some(group));
    }
    (resource, None, Some(rest))
}

/// `v1`, `v1beta1`, `v2alpha3`: a Kubernetes API version.
fn is_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let tail = &rest[digits..];
    tail.is_empty()
        || ["alpha", "beta"].iter().any(|p| {
            tail.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// The group of an apiVersion (`apps/v1` → `apps`, `v1` → the core group ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The (group, version) of an apiVersion.
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

impl Kind {
    /// Whether `api_version`/`kind` name this kind.
    pub fn is(&self, api_version: &str, kind: &str) -> bool {
        self.kind == kind && self.api_version == api_version
    }

    /// Whether `api_version`/`kind` name this kind at any version of its group.
    pub fn is_any_version(&self, api_version: &str, kind: &str) -> bool {
        self.kind == kind && self.group == group_of(api_version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        for (i, k) in ALL.iter().enumerate() {
            let want = if k.group.is_empty() {
                k.version.to_string()
            } else {
                format!("{}/{}", k.group, k.version)
            };
            assert_eq!(k.api_version, want);
            assert_eq!(k.plural, k.plural.to_ascii_lowercase());
            assert!(
                ALL[..i].iter().all(|o| o.kind != k.kind),
                "{} twice",
                k.kind
            );
            assert_eq!(by_name(k.kind), Some(*k));
        }
        assert_eq!(group_of("apps/v1"), "apps");
        assert_eq!(group_of("v1"), "");
        assert_eq!(flux_source("HelmChart"), Some(&HELM_CHART));
        assert_eq!(flux_source("HelmRelease"), None);
        assert_eq!(flux_object("Kustomization"), Some(&KUSTOMIZATION));
    }

    #[test]
    fn short_names_and_plurals_as_kubectl_takes_them() {
        let mut shorts: Vec<&str> = known()
            .flat_map(|k| k.short_names.iter().copied())
            .collect();
        let n = shorts.len();
        shorts.sort_unstable();
        shorts.dedup();
        assert_eq!(shorts.len(), n, "short names are unique");
        for (name, want) in [
            ("deploy", &DEPLOYMENT),
            ("deployments", &DEPLOYMENT),
            ("Deployment", &DEPLOYMENT),
            ("hr", &HELM_RELEASE),
            ("smp", &STATE_MANAGEMENT_PROVIDER),
            ("ks", &KUSTOMIZATION),
            ("servicesets", &SERVICE_SET),
            ("mcs", &MULTI_CLUSTER_SERVICE),
            ("cm", &CONFIG_MAP),
        ] {
            assert_eq!(by_resource_name(name, None), Some(want), "{name}");
        }
        assert_eq!(by_resource_name("hr", Some("apps")), None);
        assert_eq!(by_resource_name("widgets", None), None);
        assert_eq!(split_resource_name("deploy"), ("deploy", None, None));
        assert_eq!(
            split_resource_name("deployments.apps"),
            ("deployments", None, Some("apps"))
        );
        assert_eq!(
            split_resource_name("deployments.v1.apps"),
            ("deployments", Some("v1"), Some("apps"))
        );
        assert_eq!(
            split_resource_name("helmreleases.helm.toolkit.fluxcd.io"),
            ("helmreleases", None, Some("helm.toolkit.fluxcd.io"))
        );
        assert_eq!(
            split_resource_name("hr.v2beta1.helm.toolkit.fluxcd.io"),
            ("hr", Some("v2beta1"), Some("helm.toolkit.fluxcd.io"))
        );
    }
}
