//! Naming and labelling rules, each in one function: the Flux adapter's (object names,
//! labels, finalizer, field manager) and kcm's (the kubeconfig Secret of a cluster, the
//! ServiceSet of a MultiClusterService, the pause annotation, owner references).

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::names::is_qualified_name_part;

/// Every object the adapter writes carries it (`"true"`).
pub const LABEL_MANAGED: &str = "ksm.k0rdent.mirantis.com/managed";
/// The ServiceSet an object belongs to ([`label_value`] of its name).
pub const LABEL_SERVICESET: &str = "ksm.k0rdent.mirantis.com/serviceset";
/// The service of the ServiceSet an object renders ([`label_value`] of its name).
pub const LABEL_SERVICE: &str = "ksm.k0rdent.mirantis.com/service";
/// The ServiceSet's `spec.provider.config.priority`, when set.
pub const LABEL_PRIORITY: &str = "ksm.k0rdent.mirantis.com/priority";
/// kcm's annotation that pauses a ServiceSet. kcm reads it from ServiceSets only, and only
/// its presence counts (`handlePauseAnnotations`): any value, `"false"` included, pauses.
pub const ANNOTATION_PAUSED: &str = "k0rdent.mirantis.com/service-set-paused";
/// kcm's annotation that pauses a Region (and the ClusterDeployments in it); read from
/// Regions only, by presence (`RegionPauseAnnotation`).
pub const ANNOTATION_REGION_PAUSE: &str = "k0rdent.mirantis.com/region-pause";
/// kcm's ServiceSet finalizer; the adapter owns the ServiceSet's lifecycle as kcm's does.
pub const FINALIZER: &str = "k0rdent.mirantis.com/service-set";
/// The provider name of the Flux adapter (deploy/base/statemanagementprovider.yaml).
pub const FLUX_PROVIDER: &str = "ksm-flux";
/// The Deployment that runs the Flux adapter (deploy/base/deployment.yaml).
pub const ADAPTER_DEPLOYMENT: &str = "kubectl-ksm";
/// The field manager of every write of the adapter.
pub const FIELD_MANAGER: &str = "kubectl-ksm";
/// kubectl's annotation with the whole last applied object.
pub const ANNOTATION_LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The `operation` of a managedFields entry written by server-side apply.
pub const OPERATION_APPLY: &str = "Apply";
/// The subresource a ServiceSet's status is written through.
pub const SUBRESOURCE_STATUS: &str = "status";

/// The name of the Flux object (HelmRelease or Kustomization) of a service:
/// `<serviceset>-<service>`, in the ServiceSet's namespace.
pub fn flux_object_name(service_set: &str, service: &str) -> String {
    format!("{service_set}-{service}")
}

/// The labels of the Flux object of a service.
pub fn flux_object_labels(
    service_set: &str,
    service: &str,
    priority: Option<i64>,
) -> Map<String, Value> {
    let mut labels = Map::new();
    labels.insert(LABEL_MANAGED.into(), "true".into());
    labels.insert(LABEL_SERVICESET.into(), label_value(service_set).into());
    labels.insert(LABEL_SERVICE.into(), label_value(service).into());
    if let Some(p) = priority {
        labels.insert(LABEL_PRIORITY.into(), p.to_string().into());
    }
    labels
}

/// The label selector (`key=value`) of every Flux object of a ServiceSet.
pub fn flux_objects_selector(service_set: &str) -> String {
    format!("{LABEL_SERVICESET}={}", label_value(service_set))
}

/// A label value for a name: the name itself when it is a valid label value (at most 63
/// characters), otherwise a prefix and a hash of it, so that long names still select.
pub fn label_value(name: &str) -> String {
    if name.is_empty() || is_qualified_name_part(name) {
        return name.to_string();
    }
    let digest = Sha256::digest(name.as_bytes());
    let hash: String = digest[..5].iter().map(|b| format!("{b:02x}")).collect();
    let prefix: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(52)
        .collect();
    let prefix = prefix.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if prefix.is_empty() {
        hash
    } else {
        format!("{prefix}-{hash}")
    }
}

/// kcm's kubeconfig Secret of a ClusterDeployment: `<cluster>-kubeconfig`, key `value`.
pub fn kubeconfig_secret(cluster: &str) -> String {
    format!("{cluster}-kubeconfig")
}

/// The ClusterDeployment of a kubeconfig Secret (the inverse of [`kubeconfig_secret`]); a
/// Secret named otherwise stands for itself.
pub fn cluster_of_kubeconfig_secret(secret: &str) -> &str {
    secret
        .strip_suffix("-kubeconfig")
        .filter(|c| !c.is_empty())
        .unwrap_or(secret)
}

/// The key in the kubeconfig Secret.
pub const KUBECONFIG_SECRET_KEY: &str = "value";

/// kcm's `serviceset.ObjectKey` for a MultiClusterService: `<cd>-<hash>` in the
/// ClusterDeployment's namespace, or `management-<hash>` in the system namespace for
/// self-management, where the hash is the hex of the first 4 bytes of sha256(mcs name).
/// `cd` is the ClusterDeployment's (namespace, name).
pub fn mcs_service_set_key(
    cd: Option<(&str, &str)>,
    mcs_name: &str,
    system_namespace: &str,
) -> (String, String) {
    let sum = Sha256::digest(mcs_name.as_bytes());
    let hash: String = sum[..4].iter().map(|b| format!("{b:02x}")).collect();
    match cd {
        None => (system_namespace.to_string(), format!("management-{hash}")),
        Some((ns, name)) => (ns.to_string(), format!("{name}-{hash}")),
    }
}

/// A controller ownerReference (`metav1.NewControllerRef`).
pub fn controller_ref(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
           "controller": true, "blockOwnerDeletion": true})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_stay_valid() {
        assert_eq!(label_value("dev-cluster"), "dev-cluster");
        assert_eq!(label_value(""), "");
        let long = "x".repeat(80);
        let v = label_value(&long);
        assert!(v.len() <= 63, "{v}");
        assert_ne!(label_value(&long), label_value(&"x".repeat(81)));
        assert!(label_value("-a").starts_with("a-"));
    }

    #[test]
    fn names_and_keys() {
        assert_eq!(flux_object_name("dev", "ingress"), "dev-ingress");
        assert_eq!(kubeconfig_secret("dev"), "dev-kubeconfig");
        assert_eq!(
            flux_objects_selector("dev"),
            format!("{LABEL_SERVICESET}=dev")
        );
        let (ns, name) = mcs_service_set_key(Some(("ns", "cd")), "m", "kcm-system");
        assert_eq!(ns, "ns");
        assert!(name.starts_with("cd-") && name.len() == 3 + 8);
        let (ns, name) = mcs_service_set_key(None, "m", "kcm-system");
        assert_eq!(ns, "kcm-system");
        assert_eq!(
            name,
            format!(
                "management-{}",
                &mcs_service_set_key(Some(("", "x")), "m", "").1[2..]
            )
        );
        let l = flux_object_labels("s", "v", Some(3));
        assert_eq!(l[LABEL_PRIORITY], "3");
        assert_eq!(l[LABEL_MANAGED], "true");
    }
}
