//! What the Kubernetes API server writes in the status of the built-in workload kinds.

use crate::api::kinds::{self, Kind};

/// The status fields with `omitempty` in the Kubernetes API types (k8s.io/api), per kind:
/// absent from an object while zero or not yet known.
const OMITTED_STATUS_FIELDS: &[(&Kind, &[&str])] = &[
    (
        &kinds::DEPLOYMENT,
        &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "terminatingReplicas",
            "conditions",
            "collisionCount",
        ],
    ),
    (
        &kinds::STATEFUL_SET,
        &[
            "observedGeneration",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "currentRevision",
            "updateRevision",
            "collisionCount",
            "conditions",
        ],
    ),
    (
        &kinds::DAEMON_SET,
        &[
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
            "conditions",
        ],
    ),
    (
        &kinds::REPLICA_SET,
        &[
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "terminatingReplicas",
            "observedGeneration",
            "conditions",
        ],
    ),
    (
        &kinds::POD,
        &[
            "phase",
            "conditions",
            "message",
            "reason",
            "hostIP",
            "podIP",
            "podIPs",
            "startTime",
            "containerStatuses",
            "initContainerStatuses",
            "qosClass",
        ],
    ),
    (
        &kinds::JOB,
        &[
            "conditions",
            "startTime",
            "completionTime",
            "active",
            "succeeded",
            "failed",
            "ready",
        ],
    ),
];

/// The status fields the API server omits from an object of this kind while they are zero or
/// not yet known (any version of the kind's group); None for a kind not listed, such as a
/// custom resource, whose whole status is absent until its controller first writes one.
pub fn omitted_fields(api_version: &str, kind: &str) -> Option<&'static [&'static str]> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    OMITTED_STATUS_FIELDS
        .iter()
        .find(|(k, _)| k.group == group && k.kind == kind)
        .map(|(_, fields)| *fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_group_and_kind_at_any_version() {
        assert!(
            omitted_fields("apps/v1", "Deployment").is_some_and(|f| f.contains(&"readyReplicas"))
        );
        assert!(omitted_fields("apps/v1beta2", "Deployment").is_some());
        assert!(omitted_fields("v1", "Pod").is_some_and(|f| f.contains(&"phase")));
        assert_eq!(omitted_fields("example.com/v1", "Deployment"), None);
        assert_eq!(omitted_fields("v1", "ConfigMap"), None);
    }
}
