//! kcm's default provider, `ksm-projectsveltos`: the facts of its adapter (inside kcm) and of
//! Sveltos, each in one place, and typed views of the objects involved:
//!
//! - the Profile (or, for self-management, ClusterProfile) kcm's adapter writes for a
//!   ServiceSet ([`ProfileView`]);
//! - the ClusterSummary Sveltos writes per matching cluster ([`ClusterSummary`]) and the
//!   ClusterConfiguration that records what it deployed ([`ClusterConfiguration`]);
//! - the cluster objects a Profile targets ([`SveltosCluster`], [`CapiCluster`]);
//! - the ClusterDeployment's Credential ([`Credential`]) and kcm's health-rule ConfigMaps.
//!
//! Sources: kcm `internal/controller/adapters/sveltos/` at 8373a241, addon-controller and
//! libsveltos v1.12.0 (the versions in kcm's go.mod).

use serde_json::Value;

use super::kinds;
use super::meta::str_at;

mod objects;
pub use objects::{
    CapiCluster, ClusterConfiguration, ClusterSummary, Credential, DeployedChart, FeatureSummary,
    HelmChartSpec, HelmReleaseSummary, ProfileView, SveltosCluster,
};

// ---------------------------------------------------------------- kcm's adapter

/// The name of kcm's controller Deployment (`KCM_NAME` of the kcm chart): the adapter of
/// the default provider, and the selector value of its ServiceSets.
pub const KCM_ADAPTER_NAME: &str = "kcm-controller-manager";
/// The label key of the default provider's selector.
pub const ADAPTER_SELECTOR_KEY: &str = "ksm.k0rdent.mirantis.com/adapter";
/// kcm's system namespace (the chart's release namespace).
pub const DEFAULT_SYSTEM_NAMESPACE: &str = "kcm-system";

/// The only label kcm puts on a Profile it creates (`"true"`; never updated afterwards).
pub const LABEL_KCM_MANAGED: &str = "k0rdent.mirantis.com/managed";
/// Sveltos's pause annotation, which kcm sets on the Profile of a paused ServiceSet.
pub const ANNOTATION_PROFILE_PAUSED: &str = "profile.projectsveltos.io/paused";

/// `math.MaxInt32`: tier = MAX_TIER − priority.
pub const MAX_TIER: i64 = i32::MAX as i64;
/// The priority of a provider config that sets none.
pub const DEFAULT_PRIORITY: i64 = 100;
/// The tier of a Profile whose provider config is nil (the CRD default and kcm's own).
pub const DEFAULT_TIER: i64 = 100;
/// The allowed priorities (Sveltos requires tier ≥ 1).
pub const MIN_PRIORITY: i64 = 1;
pub const MAX_PRIORITY: i64 = MAX_TIER - 1;

/// The tier kcm writes for a priority (`priorityToTier`), or None outside 1…2147483646.
pub fn priority_to_tier(priority: i64) -> Option<i64> {
    (MIN_PRIORITY..=MAX_PRIORITY)
        .contains(&priority)
        .then(|| MAX_TIER - priority)
}

/// The priority a tier stands for (the inverse of [`priority_to_tier`]).
pub fn tier_to_priority(tier: i64) -> i64 {
    MAX_TIER - tier
}

/// What kcm's adapter writes when the config leaves it out (`buildProfileSpec`,
/// `applyProfileSpecDefaults`): `syncMode`, `stopMatchingBehavior` (anything but exactly
/// `LeavePolicies` gives `WithdrawPolicies`), a chart's `helmChartAction`.
pub const DEFAULT_SYNC_MODE: &str = "Continuous";
pub const DEFAULT_STOP_MATCHING_BEHAVIOR: &str = "WithdrawPolicies";
pub const LEAVE_POLICIES: &str = "LeavePolicies";
pub const DEFAULT_HELM_CHART_ACTION: &str = "Install";

/// The JSON 6902 patch kcm appends for each `driftIgnore` selector.
pub const DRIFT_IGNORE_PATCH: &str =
    "- op: add\n  path: /metadata/annotations/projectsveltos.io~1driftDetectionIgnore\n  value: ok";

/// The SveltosCluster of the management cluster (`mgmt/mgmt`), which self-management targets;
/// the projectsveltos chart's register job creates it.
pub const MANAGEMENT_CLUSTER_NAME: &str = "mgmt";
pub const MANAGEMENT_CLUSTER_NAMESPACE: &str = "mgmt";

/// The keys of `spec.provider.config` kcm's adapter decodes (`profileConfig`); every other
/// key is ignored without a word.
pub const CONFIG_KEYS: &[(&str, &str)] = &[
    (
        "priority",
        "tier = 2147483647 − priority (integer 1…2147483646, default 100); the lower tier wins a conflict",
    ),
    (
        "stopOnConflict",
        "bool: continueOnConflict = !stopOnConflict (so Sveltos goes on after a conflict by default)",
    ),
    (
        "continueOnError",
        "bool: deploy the next charts after one fails",
    ),
    (
        "syncMode",
        "OneTime, Continuous (default), ContinuousWithDriftDetection or DryRun",
    ),
    (
        "driftIgnore",
        "patch selectors whose objects drift detection ignores (become patches)",
    ),
    ("driftExclusions", "paths drift detection ignores"),
    (
        "patches",
        "JSON/strategic-merge patches applied to every object",
    ),
    (
        "templateResourceRefs",
        "objects of the management cluster the templates may read",
    ),
    ("policyRefs", "extra ConfigMaps/Secrets/sources to deploy"),
    (
        "stopMatchingBehavior",
        "WithdrawPolicies (default) or LeavePolicies",
    ),
    (
        "reloader",
        "bool: restart workloads when their ConfigMaps/Secrets change",
    ),
    (
        "maxConsecutiveFailures",
        "integer: Sveltos stops retrying after this many failures (default: never)",
    ),
];

/// A ServiceSet condition the adapter writes.
pub const COND_PROFILE: &str = "ServiceSetProfile";
pub const COND_STATUSES_COLLECTED: &str = "ServiceSetStatusesCollected";
pub const COND_SERVICES_READY: &str = "ServicesInReadyState";
pub const COND_HEALTH_RULES: &str = "ServiceSetHealthRules";
/// `ServiceSetProfile` reasons.
pub const REASON_PROFILE_READY: &str = "ServiceSetProfileReady";
pub const REASON_PROFILE_NOT_READY: &str = "ServiceSetProfileNotReady";
pub const REASON_PROFILE_BUILD_FAILED: &str = "ServiceSetProfileBuildFailed";
pub const REASON_HELM_CHARTS_BUILD_FAILED: &str = "ServiceSetHelmChartsBuildFailed";
pub const REASON_KUSTOMIZATION_REFS_BUILD_FAILED: &str = "ServiceSetKustomizationRefsBuildFailed";
pub const REASON_POLICY_REFS_BUILD_FAILED: &str = "ServiceSetPolicyRefsBuildFailed";
pub const MESSAGE_PROFILE_READY: &str = "Profile is ready";
pub const MESSAGE_PROFILE_NOT_READY: &str = "Profile is not ready";
/// The prefix of the per-service conditions the health verifier writes
/// (`ServiceHealth<Kind>`, reason `<Kind>Unhealthy`).
pub const SERVICE_HEALTH_PREFIX: &str = "ServiceHealth";
/// `ServiceSetHealthRules` reasons.
pub const REASON_RULES_VALID: &str = "AllRulesValid";
pub const REASON_RULE_INVALID: &str = "HealthRuleInvalid";

// ---------------------------------------------------------------- health rules

/// The label of a health-rule ConfigMap; its value is `global` or the name of the
/// ClusterDeployment/MultiClusterService that owns the ServiceSet.
pub const LABEL_HEALTH_RULE_TARGET: &str = "k0rdent.mirantis.com/health-rule-target";
pub const HEALTH_RULE_TARGET_GLOBAL: &str = "global";
/// The key of the ConfigMap's data holding the YAML list of rules.
pub const HEALTH_RULES_KEY: &str = "rules";
/// The scopes a rule may declare.
pub const HEALTH_RULE_SCOPES: &[&str] = &["Namespaced", "Cluster"];
/// The labels whose value (= the service name) selects a service's objects on the cluster.
pub const HEALTH_DISCOVERY_LABELS: &[&str] = &[
    "release",
    "app",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/name",
];
/// The verifier names at most this many objects per kind in a condition message.
pub const HEALTH_MAX_REFS: usize = 3;
/// A rule's `message` is cut to this many bytes in a condition.
pub const HEALTH_MAX_REASON_BYTES: usize = 500;
/// kcm's default rules: `<kcm fullname>-default-health-rules` in the system namespace.
pub const DEFAULT_HEALTH_RULES_SUFFIX: &str = "-default-health-rules";

// ---------------------------------------------------------------- Sveltos

/// Sveltos's label on a ClusterSummary naming its Profile / ClusterProfile.
pub const LABEL_PROFILE_NAME: &str = "projectsveltos.io/profile-name";
pub const LABEL_CLUSTER_PROFILE_NAME: &str = "projectsveltos.io/cluster-profile-name";
pub const LABEL_CLUSTER_NAME: &str = "projectsveltos.io/cluster-name";
pub const LABEL_CLUSTER_TYPE: &str = "projectsveltos.io/cluster-type";
/// CAPI's pause annotation (on a ClusterSummary or its cluster).
pub const ANNOTATION_CAPI_PAUSED: &str = "cluster.x-k8s.io/paused";

/// Feature IDs of a ClusterSummary.
pub const FEATURE_HELM: &str = "Helm";
pub const FEATURE_KUSTOMIZE: &str = "Kustomize";
pub const FEATURE_RESOURCES: &str = "Resources";

/// The feature-level message Sveltos writes when the target cluster cannot be used.
pub const CLUSTER_NOT_READY: &str = "cluster is not ready";
pub const AGENT_NOT_HEALTHY: &str = "agent in managed cluster is not healthy.";

/// `status.featureSummaries[].status` (libsveltos FeatureStatus).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureStatus {
    Provisioning,
    Provisioned,
    Failed,
    FailedNonRetriable,
    Removing,
    AgentRemoving,
    Removed,
    /// Absent, empty, or a value this version does not know.
    Unknown,
}

impl FeatureStatus {
    pub fn parse(s: &str) -> FeatureStatus {
        match s {
            "Provisioning" => FeatureStatus::Provisioning,
            "Provisioned" => FeatureStatus::Provisioned,
            "Failed" => FeatureStatus::Failed,
            "FailedNonRetriable" => FeatureStatus::FailedNonRetriable,
            "Removing" => FeatureStatus::Removing,
            "AgentRemoving" => FeatureStatus::AgentRemoving,
            "Removed" => FeatureStatus::Removed,
            _ => FeatureStatus::Unknown,
        }
    }
}

/// Which kind of Profile kcm writes for a ServiceSet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileKind {
    /// A namespaced Profile named like the ServiceSet.
    Profile,
    /// A cluster-scoped ClusterProfile named like the ServiceSet (self-management).
    ClusterProfile,
}

impl ProfileKind {
    pub fn kind(self) -> &'static kinds::Kind {
        match self {
            ProfileKind::Profile => &kinds::PROFILE,
            ProfileKind::ClusterProfile => &kinds::CLUSTER_PROFILE,
        }
    }

    /// The label Sveltos puts on the ClusterSummaries of a profile of this kind.
    pub fn summary_label(self) -> &'static str {
        match self {
            ProfileKind::Profile => LABEL_PROFILE_NAME,
            ProfileKind::ClusterProfile => LABEL_CLUSTER_PROFILE_NAME,
        }
    }
}

/// A cluster reference of a Profile (`spec.clusterRefs[]`, `status.matchingClusters[]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl ClusterRef {
    pub fn from_json(v: &Value) -> ClusterRef {
        ClusterRef {
            api_version: str_at(v, "/apiVersion").into(),
            kind: str_at(v, "/kind").into(),
            namespace: str_at(v, "/namespace").into(),
            name: str_at(v, "/name").into(),
        }
    }

    /// The CAPI Cluster `<namespace>/<name>`.
    pub fn capi(namespace: &str, name: &str) -> ClusterRef {
        ClusterRef {
            api_version: kinds::CAPI_CLUSTER.api_version.into(),
            kind: kinds::CAPI_CLUSTER.kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The SveltosCluster `<namespace>/<name>`.
    pub fn sveltos(namespace: &str, name: &str) -> ClusterRef {
        ClusterRef {
            api_version: kinds::SVELTOS_CLUSTER.api_version.into(),
            kind: kinds::SVELTOS_CLUSTER.kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The management cluster's SveltosCluster `mgmt/mgmt`.
    pub fn management() -> ClusterRef {
        ClusterRef::sveltos(MANAGEMENT_CLUSTER_NAMESPACE, MANAGEMENT_CLUSTER_NAME)
    }

    /// Sveltos decides by apiVersion alone (`lib.projectsveltos.io/v1beta1`).
    pub fn is_sveltos(&self) -> bool {
        self.api_version == kinds::SVELTOS_CLUSTER.api_version
    }

    /// The kind of the object the reference names, for lookups.
    pub fn target_kind(&self) -> &'static kinds::Kind {
        if self.is_sveltos() {
            &kinds::SVELTOS_CLUSTER
        } else {
            &kinds::CAPI_CLUSTER
        }
    }

    pub fn to_json(&self) -> Value {
        serde_json::json!({"apiVersion": self.api_version, "kind": self.kind,
            "namespace": self.namespace, "name": self.name})
    }

    /// `Kind/namespace/name`.
    pub fn display(&self) -> String {
        format!("{}/{}/{}", self.kind, self.namespace, self.name)
    }
}

/// The name of the ClusterSummary Sveltos creates for a profile and a cluster
/// (`GetClusterSummaryName`): `p--<profile>-<capi|sveltos>-<cluster>` for a Profile,
/// `<clusterprofile>-<capi|sveltos>-<cluster>` for a ClusterProfile; in the cluster's
/// namespace.
pub fn cluster_summary_name(kind: ProfileKind, profile: &str, cluster: &ClusterRef) -> String {
    let prefix = if cluster.is_sveltos() {
        "sveltos"
    } else {
        "capi"
    };
    match kind {
        ProfileKind::Profile => format!("p--{profile}-{prefix}-{}", cluster.name),
        ProfileKind::ClusterProfile => format!("{profile}-{prefix}-{}", cluster.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_and_priorities() {
        assert_eq!(priority_to_tier(100), Some(2_147_483_547));
        assert_eq!(priority_to_tier(1), Some(2_147_483_646));
        assert_eq!(priority_to_tier(2_147_483_646), Some(1));
        assert_eq!(priority_to_tier(0), None);
        assert_eq!(priority_to_tier(2_147_483_647), None);
        assert_eq!(tier_to_priority(2_147_483_547), 100);
    }

    #[test]
    fn cluster_summary_names() {
        let capi = ClusterRef::capi("ns", "dev");
        assert_eq!(
            cluster_summary_name(ProfileKind::Profile, "dev", &capi),
            "p--dev-capi-dev"
        );
        assert_eq!(
            cluster_summary_name(ProfileKind::ClusterProfile, "m", &ClusterRef::management()),
            "m-sveltos-mgmt"
        );
    }
}
