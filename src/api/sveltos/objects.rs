//! Typed views of the Sveltos objects kcm's default provider involves: the Profile (or
//! ClusterProfile) kcm's adapter writes, the ClusterSummary and ClusterConfiguration Sveltos
//! writes per matching cluster, the clusters a Profile targets and the ClusterDeployment's
//! Credential.

use crate::api::meta::At;
use serde_json::Value;

use super::*;
use crate::api::meta::{Object, ObjectRef, bool_at, i64_at, items_at, str_at};

/// A Profile or ClusterProfile (`config.projectsveltos.io/v1beta1`).
#[derive(Debug, Clone, Copy)]
pub struct ProfileView<'a>(pub &'a Value);

impl<'a> ProfileView<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// `spec` (None when absent).
    pub fn spec(self) -> Option<&'a Value> {
        self.meta().spec()
    }
    /// `spec.policyRefs[]`: the ConfigMaps and Secrets whose resources it deploys.
    pub fn policy_refs(self) -> Vec<ObjectRef<'a>> {
        items_at(self.0, "/spec/policyRefs")
            .iter()
            .map(ObjectRef)
            .collect()
    }
    /// `spec.kustomizationRefs[]`: the Flux sources (or ConfigMaps, Secrets) it deploys
    /// with kustomize.
    pub fn kustomization_refs(self) -> Vec<ObjectRef<'a>> {
        items_at(self.0, "/spec/kustomizationRefs")
            .iter()
            .map(ObjectRef)
            .collect()
    }
    pub fn kind(self) -> ProfileKind {
        if self.meta().kind() == kinds::CLUSTER_PROFILE.kind {
            ProfileKind::ClusterProfile
        } else {
            ProfileKind::Profile
        }
    }
    /// `spec.tier` (the CRD default, 100, when absent).
    pub fn tier(self) -> i64 {
        i64_at(self.0, "/spec/tier").unwrap_or(DEFAULT_TIER)
    }
    pub fn continue_on_conflict(self) -> bool {
        bool_at(self.0, "/spec/continueOnConflict").unwrap_or(false)
    }
    pub fn continue_on_error(self) -> bool {
        bool_at(self.0, "/spec/continueOnError").unwrap_or(false)
    }
    pub fn sync_mode(self) -> &'a str {
        match str_at(self.0, "/spec/syncMode") {
            "" => "Continuous",
            m => m,
        }
    }
    /// `spec.maxConsecutiveFailures`, when set.
    pub fn max_consecutive_failures(self) -> Option<i64> {
        i64_at(self.0, "/spec/maxConsecutiveFailures")
    }
    /// The pause annotation is present (Sveltos does not record it in a Profile's status).
    pub fn paused(self) -> bool {
        self.meta().has_annotation(ANNOTATION_PROFILE_PAUSED)
    }
    pub fn helm_charts(self) -> &'a [Value] {
        items_at(self.0, "/spec/helmCharts")
    }
    pub fn cluster_refs(self) -> Vec<ClusterRef> {
        items_at(self.0, "/spec/clusterRefs")
            .iter()
            .map(ClusterRef::from_json)
            .collect()
    }
    /// `status.matchingClusters`.
    pub fn matching_clusters(self) -> Vec<ClusterRef> {
        items_at(self.0, "/status/matchingClusters")
            .iter()
            .map(ClusterRef::from_json)
            .collect()
    }
    /// `status.failedClusters[]`: (cluster, message).
    pub fn failed_clusters(self) -> Vec<(ClusterRef, &'a str)> {
        items_at(self.0, "/status/failedClusters")
            .iter()
            .map(|f| {
                (
                    ClusterRef::from_json(f.get("clusterRef").unwrap_or(&Value::Null)),
                    str_at(f, "/failureMessage"),
                )
            })
            .collect()
    }
    /// `status.updatingClusters.clusters`: clusters whose ClusterSummary is being brought
    /// to the profile's spec.
    pub fn updating_clusters(self) -> Vec<ClusterRef> {
        items_at(self.0, "/status/updatingClusters/clusters")
            .iter()
            .map(ClusterRef::from_json)
            .collect()
    }
}

/// One `status.featureSummaries[]` entry of a ClusterSummary.
#[derive(Debug, Clone, Copy)]
pub struct FeatureSummary<'a>(pub &'a Value);

impl<'a> FeatureSummary<'a> {
    pub fn feature_id(self) -> &'a str {
        str_at(self.0, "/featureID")
    }
    pub fn status(self) -> FeatureStatus {
        FeatureStatus::parse(str_at(self.0, "/status"))
    }
    pub fn status_text(self) -> &'a str {
        str_at(self.0, "/status")
    }
    /// `failureMessage` when present (possibly empty).
    pub fn failure_message(self) -> Option<&'a str> {
        self.0.get("failureMessage").and_then(Value::as_str)
    }
    pub fn consecutive_failures(self) -> i64 {
        i64_at(self.0, "/consecutiveFailures").unwrap_or(0)
    }
    pub fn last_applied_time(self) -> &'a str {
        str_at(self.0, "/lastAppliedTime")
    }
}

/// One `status.helmReleaseSummaries[]` entry of a ClusterSummary.
#[derive(Debug, Clone, Copy)]
pub struct HelmReleaseSummary<'a>(pub &'a Value);

impl<'a> HelmReleaseSummary<'a> {
    pub fn release_name(self) -> &'a str {
        str_at(self.0, "/releaseName")
    }
    pub fn release_namespace(self) -> &'a str {
        str_at(self.0, "/releaseNamespace")
    }
    /// `Managing` or `Conflict`.
    pub fn status(self) -> &'a str {
        str_at(self.0, "/status")
    }
    pub fn is_conflict(self) -> bool {
        self.status() == "Conflict"
    }
    pub fn conflict_message(self) -> &'a str {
        str_at(self.0, "/conflictMessage")
    }
    /// A valuesHash is set: an install or upgrade succeeded.
    pub fn values_hash_set(self) -> bool {
        !str_at(self.0, "/valuesHash").is_empty()
    }
    pub fn values_hash(self) -> &'a str {
        str_at(self.0, "/valuesHash")
    }
    pub fn patches_hash(self) -> &'a str {
        str_at(self.0, "/patchesHash")
    }
    /// A non-empty per-release failureMessage.
    pub fn failure_message(self) -> Option<&'a str> {
        self.0
            .get("failureMessage")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
    }
}

/// A ClusterSummary (`config.projectsveltos.io/v1beta1`).
#[derive(Debug, Clone, Copy)]
pub struct ClusterSummary<'a>(pub &'a Value);

impl<'a> ClusterSummary<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// The profile spec the summary was made from (`spec.clusterProfileSpec`).
    pub fn profile_spec(self) -> &'a Value {
        self.0
            .at("/spec/clusterProfileSpec")
            .unwrap_or(&Value::Null)
    }
    pub fn tier(self) -> i64 {
        i64_at(self.profile_spec(), "/tier").unwrap_or(DEFAULT_TIER)
    }
    pub fn continue_on_conflict(self) -> bool {
        bool_at(self.profile_spec(), "/continueOnConflict").unwrap_or(false)
    }
    pub fn continue_on_error(self) -> bool {
        bool_at(self.profile_spec(), "/continueOnError").unwrap_or(false)
    }
    /// `spec.clusterProfileSpec.helmCharts`.
    pub fn helm_charts(self) -> &'a [Value] {
        items_at(self.profile_spec(), "/helmCharts")
    }
    pub fn has_kustomization_refs(self) -> bool {
        !items_at(self.profile_spec(), "/kustomizationRefs").is_empty()
    }
    pub fn has_policy_refs(self) -> bool {
        !items_at(self.profile_spec(), "/policyRefs").is_empty()
    }
    pub fn features(self) -> impl Iterator<Item = FeatureSummary<'a>> {
        items_at(self.0, "/status/featureSummaries")
            .iter()
            .map(FeatureSummary)
    }
    /// The summary of a feature (the first of its ID).
    pub fn feature(self, id: &str) -> Option<FeatureSummary<'a>> {
        self.features().find(|f| f.feature_id() == id)
    }
    pub fn helm_releases(self) -> impl Iterator<Item = HelmReleaseSummary<'a>> {
        items_at(self.0, "/status/helmReleaseSummaries")
            .iter()
            .map(HelmReleaseSummary)
    }
    /// The release summary of (namespace, name).
    pub fn helm_release(self, namespace: &str, name: &str) -> Option<HelmReleaseSummary<'a>> {
        self.helm_releases()
            .find(|r| r.release_namespace() == namespace && r.release_name() == name)
    }
    /// `status.failureMessage` (reconcile-level problems).
    pub fn failure_message(self) -> &'a str {
        str_at(self.0, "/status/failureMessage")
    }
    pub fn reconciliation_suspended(self) -> bool {
        bool_at(self.0, "/status/reconciliationSuspended") == Some(true)
    }
    pub fn suspension_reason(self) -> &'a str {
        str_at(self.0, "/status/suspensionReason")
    }
    /// The profile that owns the summary: (kind, name), from Sveltos's labels.
    pub fn profile(self) -> Option<(ProfileKind, &'a str)> {
        let m = self.meta();
        match (
            m.label(LABEL_PROFILE_NAME),
            m.label(LABEL_CLUSTER_PROFILE_NAME),
        ) {
            (p, _) if !p.is_empty() => Some((ProfileKind::Profile, p)),
            (_, c) if !c.is_empty() => Some((ProfileKind::ClusterProfile, c)),
            _ => None,
        }
    }
    /// The cluster the summary deploys to: `spec.clusterNamespace/clusterName`, its type.
    pub fn cluster(self) -> (&'a str, &'a str, &'a str) {
        (
            str_at(self.0, "/spec/clusterNamespace"),
            str_at(self.0, "/spec/clusterName"),
            str_at(self.0, "/spec/clusterType"),
        )
    }
}

/// A ClusterConfiguration: what Sveltos deployed per profile on one cluster.
#[derive(Debug, Clone, Copy)]
pub struct ClusterConfiguration<'a>(pub &'a Value);

impl<'a> ClusterConfiguration<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// Whether an ownerReference names `uid` (kcm finds a profile's ClusterConfiguration so).
    pub fn owned_by(self, uid: &str) -> bool {
        !uid.is_empty()
            && items_at(self.0, "/metadata/ownerReferences")
                .iter()
                .any(|r| str_at(r, "/uid") == uid)
    }
    /// The Helm charts recorded for a profile (note Sveltos's capital `Features` key).
    pub fn helm_charts(self, kind: ProfileKind, profile: &str) -> &'a [Value] {
        let section = match kind {
            ProfileKind::Profile => "/status/profileResources",
            ProfileKind::ClusterProfile => "/status/clusterProfileResources",
        };
        let name_key = match kind {
            ProfileKind::Profile => "/profileName",
            ProfileKind::ClusterProfile => "/clusterProfileName",
        };
        items_at(self.0, section)
            .iter()
            .find(|r| str_at(r, name_key) == profile)
            .map(|r| {
                items_at(r, "/Features")
                    .iter()
                    .find(|f| str_at(f, "/featureID") == FEATURE_HELM)
                    .map_or(&[][..], |f| items_at(f, "/charts"))
            })
            .unwrap_or(&[])
    }
}

/// A SveltosCluster (`lib.projectsveltos.io/v1beta1`).
#[derive(Debug, Clone, Copy)]
pub struct SveltosCluster<'a>(pub &'a Value);

impl<'a> SveltosCluster<'a> {
    /// `status.ready`.
    pub fn ready(self) -> bool {
        bool_at(self.0, "/status/ready") == Some(true)
    }
    pub fn paused(self) -> bool {
        bool_at(self.0, "/spec/paused") == Some(true)
    }
    pub fn connection_status(self) -> &'a str {
        str_at(self.0, "/status/connectionStatus")
    }
    pub fn failure_message(self) -> &'a str {
        str_at(self.0, "/status/failureMessage")
    }
}

/// A Cluster API Cluster (`cluster.x-k8s.io/v1beta2`).
#[derive(Debug, Clone, Copy)]
pub struct CapiCluster<'a>(pub &'a Value);

impl<'a> CapiCluster<'a> {
    /// Sveltos's readiness test: condition `ControlPlaneInitialized` True, or
    /// `status.initialization.controlPlaneInitialized`.
    pub fn control_plane_initialized(self) -> bool {
        Object(self.0)
            .condition("ControlPlaneInitialized")
            .is_some_and(|c| c.status() == "True")
            || bool_at(self.0, "/status/initialization/controlPlaneInitialized") == Some(true)
    }
    pub fn paused(self) -> bool {
        bool_at(self.0, "/spec/paused") == Some(true)
            || Object(self.0).has_annotation(ANNOTATION_CAPI_PAUSED)
    }
}

/// A kcm Credential (`k0rdent.mirantis.com/v1beta1`).
#[derive(Debug, Clone, Copy)]
pub struct Credential<'a>(pub &'a Value);

impl<'a> Credential<'a> {
    /// `spec.identityRef` (None when absent).
    pub fn identity_ref(self) -> Option<&'a Value> {
        self.0.at("/spec/identityRef").filter(|v| v.is_object())
    }
    /// `spec.region`: the Profile then lives on that regional cluster.
    pub fn region(self) -> &'a str {
        str_at(self.0, "/spec/region")
    }
}

/// One `spec.helmCharts[]` entry of a Profile (copied into its ClusterSummaries).
#[derive(Debug, Clone, Copy)]
pub struct HelmChartSpec<'a>(pub &'a Value);

impl<'a> HelmChartSpec<'a> {
    pub fn release_name(self) -> &'a str {
        str_at(self.0, "/releaseName")
    }
    pub fn release_namespace(self) -> &'a str {
        str_at(self.0, "/releaseNamespace")
    }
}

/// One chart a ClusterConfiguration records as deployed (`charts[]` of its Helm feature).
#[derive(Debug, Clone, Copy)]
pub struct DeployedChart<'a>(pub &'a Value);

impl<'a> DeployedChart<'a> {
    pub fn release_name(self) -> &'a str {
        str_at(self.0, "/releaseName")
    }
    /// `namespace`: the release's namespace.
    pub fn namespace(self) -> &'a str {
        str_at(self.0, "/namespace")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_views() {
        let v = json!({"metadata": {"labels": {LABEL_PROFILE_NAME: "p"}},
            "spec": {"clusterProfileSpec": {"tier": 5, "kustomizationRefs": [{}]}},
            "status": {"featureSummaries": [{"featureID": "Helm", "status": "Failed", "failureMessage": "x"}],
              "helmReleaseSummaries": [{"releaseName": "a", "releaseNamespace": "b", "status": "Conflict",
                "conflictMessage": "ClusterSummary o managing it"}]}});
        let s = ClusterSummary(&v);
        assert_eq!(s.tier(), 5);
        assert!(s.has_kustomization_refs() && !s.has_policy_refs());
        let f = s.feature(FEATURE_HELM).unwrap();
        assert_eq!(
            (f.status(), f.failure_message()),
            (FeatureStatus::Failed, Some("x"))
        );
        assert!(s.helm_release("b", "a").unwrap().is_conflict());
        assert_eq!(s.profile(), Some((ProfileKind::Profile, "p")));
        let cc = json!({"metadata": {"ownerReferences": [{"uid": "u"}]},
            "status": {"profileResources": [{"profileName": "p", "Features": [{"featureID": "Helm", "charts": [{"releaseName": "a"}]}]}]}});
        let cc = ClusterConfiguration(&cc);
        assert!(cc.owned_by("u") && !cc.owned_by(""));
        assert_eq!(cc.helm_charts(ProfileKind::Profile, "p").len(), 1);
        assert!(cc.helm_charts(ProfileKind::ClusterProfile, "p").is_empty());
    }

    #[test]
    fn profile_references_and_chart_entries() {
        let v = json!({"spec": {"policyRefs": [{"kind": "ConfigMap", "name": "p", "namespace": "x"}],
            "kustomizationRefs": "bad", "helmCharts": [{"releaseName": "r", "releaseNamespace": "n"}]}});
        let p = ProfileView(&v);
        let refs: Vec<_> = p
            .policy_refs()
            .iter()
            .map(|r| (r.kind(), r.namespace()))
            .collect();
        assert_eq!(refs, [("ConfigMap", "x")]);
        assert!(p.kustomization_refs().is_empty() && p.spec().is_some());
        let chart = HelmChartSpec(&p.helm_charts()[0]);
        assert_eq!(
            (chart.release_name(), chart.release_namespace()),
            ("r", "n")
        );
        let deployed = json!({"releaseName": "r", "namespace": "n"});
        let d = DeployedChart(&deployed);
        assert_eq!((d.release_name(), d.namespace()), ("r", "n"));
        assert!(ProfileView(&json!(null)).spec().is_none());
    }
}
