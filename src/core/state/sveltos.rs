//! A ClusterSummary mapped to service states, exactly as kcm's Sveltos adapter maps it
//! (`state.go`, `servicesStateFromSummary`): per Helm service from the Helm feature and the
//! service's release summary, one verdict for all Kustomize and for all Resource services.
//! What kcm writes is the state and a failure message; [`SveltosState::why`] keeps which rule
//! decided, so that doctor can say what kcm does not.

use crate::api::kcm::ServiceType;
use crate::api::sveltos::{
    ClusterSummary, FEATURE_HELM, FEATURE_KUSTOMIZE, FEATURE_RESOURCES, FeatureStatus,
};

use super::ServiceState;

/// Which rule of kcm's mapping decided a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The feature is being removed or was removed.
    Removal,
    /// No release summary for the service yet.
    NoRelease,
    /// The release is owned by another ClusterSummary.
    Conflict,
    /// The release was never attempted (an earlier chart failed or conflicted and Sveltos
    /// stopped there), or is being attempted for the first time.
    NotAttempted,
    /// The release's first install failed.
    InstallFailed,
    /// The release is installed (valuesHash set), the feature's status decided.
    Installed,
    /// An older version is installed and the current attempt fails.
    UpgradeFailed,
    /// Kustomize/Resources: the feature is Provisioned.
    FeatureProvisioned,
    /// Kustomize/Resources: the feature has a failure message.
    FeatureFailed,
    /// Kustomize/Resources: still provisioning.
    FeatureProvisioning,
    /// Kustomize/Resources: the summary's spec has no refs of the type yet (stale summary).
    NoRefs,
}

/// A service's state as kcm derives it from a ClusterSummary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SveltosState {
    pub state: ServiceState,
    /// The failure message kcm writes (empty when none).
    pub message: String,
    pub why: Why,
}

/// kcm's `featureStatusToServiceState`.
pub fn feature_state(status: FeatureStatus) -> ServiceState {
    match status {
        FeatureStatus::Provisioning => ServiceState::Provisioning,
        FeatureStatus::Provisioned => ServiceState::Deployed,
        FeatureStatus::Failed | FeatureStatus::FailedNonRetriable => ServiceState::Failed,
        FeatureStatus::Removing | FeatureStatus::AgentRemoving => ServiceState::Deleting,
        FeatureStatus::Removed => ServiceState::Deleted,
        FeatureStatus::Unknown => ServiceState::Pending,
    }
}

/// The Helm release a service maps to: (namespace or "default", name).
pub fn release_key<'a>(service_namespace: &'a str, service_name: &'a str) -> (&'a str, &'a str) {
    let ns = if service_namespace.is_empty() {
        "default"
    } else {
        service_namespace
    };
    (ns, service_name)
}

/// kcm's `featureHelm` for one Helm service.
pub fn helm(summary: ClusterSummary, service_namespace: &str, service_name: &str) -> SveltosState {
    let feature = summary
        .feature(FEATURE_HELM)
        .map_or(FeatureStatus::Unknown, |f| f.status());
    let from_feature = feature_state(feature);
    let st = |state, message: &str, why| SveltosState {
        state,
        message: message.to_string(),
        why,
    };
    if matches!(from_feature, ServiceState::Deleting | ServiceState::Deleted) {
        return st(from_feature, "", Why::Removal);
    }
    let (ns, name) = release_key(service_namespace, service_name);
    let Some(release) = summary.helm_release(ns, name) else {
        return st(ServiceState::Pending, "", Why::NoRelease);
    };
    if release.is_conflict() {
        return st(
            ServiceState::Failed,
            release.conflict_message(),
            Why::Conflict,
        );
    }
    match (release.values_hash_set(), release.failure_message()) {
        (false, None) => {
            let state = if feature == FeatureStatus::Provisioning {
                ServiceState::Provisioning
            } else {
                ServiceState::Pending
            };
            st(state, "", Why::NotAttempted)
        }
        (false, Some(m)) => st(ServiceState::Failed, m, Why::InstallFailed),
        (true, None) => {
            let state = match feature {
                FeatureStatus::Provisioned
                | FeatureStatus::Failed
                | FeatureStatus::FailedNonRetriable => ServiceState::Deployed,
                FeatureStatus::Provisioning => ServiceState::Provisioning,
                _ => ServiceState::Pending,
            };
            st(state, "", Why::Installed)
        }
        (true, Some(m)) => st(ServiceState::Failed, m, Why::UpgradeFailed),
    }
}

/// kcm's `featureKustomize` / `featureResources`: one verdict for every service of the type.
pub fn by_feature(summary: ClusterSummary, ty: ServiceType) -> SveltosState {
    let (id, has_refs, what) = match ty {
        ServiceType::Kustomize => (
            FEATURE_KUSTOMIZE,
            summary.has_kustomization_refs(),
            "Kustomizations",
        ),
        _ => (FEATURE_RESOURCES, summary.has_policy_refs(), "Resources"),
    };
    if !has_refs {
        return SveltosState {
            state: ServiceState::Deployed,
            message: String::new(),
            why: Why::NoRefs,
        };
    }
    let feature = summary.feature(id);
    if feature.is_some_and(|f| f.status() == FeatureStatus::Provisioned) {
        return SveltosState {
            state: ServiceState::Deployed,
            message: String::new(),
            why: Why::FeatureProvisioned,
        };
    }
    if let Some(m) = feature
        .and_then(|f| f.failure_message())
        .filter(|m| !m.is_empty())
    {
        return SveltosState {
            state: ServiceState::Failed,
            message: format!("One or more {what} failed to deploy: {m}"),
            why: Why::FeatureFailed,
        };
    }
    SveltosState {
        state: ServiceState::Provisioning,
        message: String::new(),
        why: Why::FeatureProvisioning,
    }
}

/// The state of one service of a type.
pub fn service(
    summary: ClusterSummary,
    ty: ServiceType,
    service_namespace: &str,
    service_name: &str,
) -> SveltosState {
    match ty {
        ServiceType::Helm => helm(summary, service_namespace, service_name),
        other => by_feature(summary, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn summary(feature: &str, fm: Option<&str>, releases: Value) -> Value {
        let mut f = json!({"featureID": "Helm", "status": feature});
        if let Some(m) = fm {
            f["failureMessage"] = json!(m);
        }
        json!({"spec": {"clusterProfileSpec": {"helmCharts": [{}], "kustomizationRefs": [{}]}},
            "status": {"featureSummaries": [f, {"featureID": "Kustomize", "status": "Provisioning",
                "failureMessage": "old error"}],
            "helmReleaseSummaries": releases}})
    }

    #[test]
    fn helm_rules_in_kcm_order() {
        let cs = summary(
            "Failed",
            Some("x"),
            json!([
                {"releaseName": "a", "releaseNamespace": "n", "status": "Managing", "valuesHash": "h"},
                {"releaseName": "b", "releaseNamespace": "n", "status": "Managing", "failureMessage": "boom"},
                {"releaseName": "c", "releaseNamespace": "n", "status": "Conflict",
                    "conflictMessage": "cannot manage chart n/c. ClusterSummary p--x-capi-y managing it."},
                {"releaseName": "d", "releaseNamespace": "n", "status": "Managing"},
                {"releaseName": "e", "releaseNamespace": "n", "status": "Managing", "valuesHash": "h",
                    "failureMessage": "upgrade failed"},
                {"releaseName": "f", "releaseNamespace": "default", "status": "Managing", "valuesHash": "h"}
            ]),
        );
        let s = ClusterSummary(&cs);
        assert_eq!(helm(s, "n", "a").state, ServiceState::Deployed);
        assert_eq!(helm(s, "n", "b").state, ServiceState::Failed);
        assert_eq!(helm(s, "n", "b").message, "boom");
        let c = helm(s, "n", "c");
        assert_eq!((c.state, c.why), (ServiceState::Failed, Why::Conflict));
        assert!(c.message.contains("managing it"));
        assert_eq!(helm(s, "n", "d").state, ServiceState::Pending);
        assert_eq!(helm(s, "n", "e").why, Why::UpgradeFailed);
        assert_eq!(
            helm(s, "", "f").state,
            ServiceState::Deployed,
            "empty namespace is default"
        );
        assert_eq!(helm(s, "n", "zz").why, Why::NoRelease);
    }

    #[test]
    fn feature_status_decides_installed_and_unattempted_releases() {
        let rel = json!([{"releaseName": "a", "releaseNamespace": "n", "valuesHash": "h"},
            {"releaseName": "d", "releaseNamespace": "n"}]);
        let prov = summary("Provisioning", None, rel.clone());
        assert_eq!(
            helm(ClusterSummary(&prov), "n", "a").state,
            ServiceState::Provisioning
        );
        assert_eq!(
            helm(ClusterSummary(&prov), "n", "d").state,
            ServiceState::Provisioning
        );
        let none = summary("", None, rel.clone());
        assert_eq!(
            helm(ClusterSummary(&none), "n", "a").state,
            ServiceState::Pending
        );
        let removing = summary("Removing", None, rel);
        assert_eq!(
            helm(ClusterSummary(&removing), "n", "a").state,
            ServiceState::Deleting
        );
    }

    #[test]
    fn kustomize_and_resources_share_one_verdict() {
        let cs = summary("Provisioned", None, json!([]));
        let k = by_feature(ClusterSummary(&cs), ServiceType::Kustomize);
        assert_eq!(
            k.state,
            ServiceState::Failed,
            "a stale message still fails it"
        );
        assert_eq!(
            k.message,
            "One or more Kustomizations failed to deploy: old error"
        );
        let r = by_feature(ClusterSummary(&cs), ServiceType::Resource);
        assert_eq!((r.state, r.why), (ServiceState::Deployed, Why::NoRefs));
    }
}
