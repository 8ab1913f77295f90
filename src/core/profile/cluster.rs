//! Step 1 of kcm's `profileSpec`: the cluster the Profile targets, and what a
//! ClusterDeployment's Credential adds (credential propagation, a regional cluster).

use serde_json::{Map, Value, json};

use super::{Builder, Failed, codes, helm};
use crate::api::kcm::ServiceSource;
use crate::api::kinds;
use crate::api::meta::ObjectRef;
use crate::api::sveltos::{ClusterRef, Credential, REASON_PROFILE_NOT_READY};
use crate::diag::Severity;

/// The cluster and what the Credential adds to the Profile spec.
pub(super) struct Resolved {
    pub cluster: ClusterRef,
    pub template_resource_refs: Vec<Value>,
    pub credential_policy_refs: Vec<Value>,
    /// False when the Credential has a region: kcm writes the Profile there, without owner
    /// references.
    pub in_management_cluster: bool,
}

/// kcm's `getClusterReference` and credential propagation (`profileSpec`).
pub(super) fn resolve(b: &mut Builder, self_management: bool) -> Result<Resolved, Failed> {
    let ss = b.ss;
    let ns = ss.namespace();
    let not_ready = |error: String| Failed {
        reason: REASON_PROFILE_NOT_READY,
        error: format!("failed to build Profile: {error}"),
    };

    let mut template_resource_refs: Vec<Value> = Vec::new();
    let mut credential_policy_refs: Vec<Value> = Vec::new();
    let mut in_management_cluster = true;
    let cluster = if self_management {
        ClusterRef::management()
    } else {
        let cd_name = ss.cluster();
        let cd = b.objects.get(&kinds::CLUSTER_DEPLOYMENT, ns, cd_name);
        let cd = match cd {
            Some(cd) => Some(cd),
            None if b.objects.has_kind(&kinds::CLUSTER_DEPLOYMENT) || cd_name.is_empty() => {
                let e = format!(
                    "failed to get ClusterDeployment: {}",
                    helm::not_found(&kinds::CLUSTER_DEPLOYMENT, cd_name)
                );
                b.error(
                    codes::CLUSTER_MISSING,
                    format!("ClusterDeployment {ns}/{cd_name} (spec.cluster) does not exist"),
                    Some(format!("kubectl get clusterdeployment -n {ns} {cd_name}")),
                );
                return Err(not_ready(e));
            }
            None => {
                b.note(
                    codes::RENDER_NOTE,
                    Severity::Info,
                    format!("ClusterDeployment {ns}/{cd_name} is not among the inputs: rendered without credential propagation, as for a Profile in the management cluster"),
                    "pass the ClusterDeployment and its Credential (and the CAPI Cluster or SveltosCluster) with --templates to render exactly",
                );
                None
            }
        };
        if let Some(cd) = cd {
            let cd = ServiceSource(cd);
            let cred_name = cd.credential();
            match b.objects.get(&kinds::CREDENTIAL, ns, cred_name) {
                Some(cred) => {
                    let cred = Credential(cred);
                    if !cred.region().is_empty() {
                        in_management_cluster = false;
                        b.note(
                            codes::RENDER_NOTE,
                            Severity::Info,
                            format!("Credential {ns}/{cred_name} has region {:?}: kcm writes the Profile on that regional cluster, without owner references", cred.region()),
                            "",
                        );
                    }
                    let propagate = cd.propagate_credentials();
                    if ss.multi_cluster_service().is_empty()
                        && propagate
                        && let Some(identity) = cred.identity_ref()
                    {
                        let id = ObjectRef(identity);
                        let (id_kind, id_ns, id_name) = (id.kind(), id.namespace(), id.name());
                        template_resource_refs.push(json!({
                            "resource": identity_reference(identity),
                            "identifier": "InfrastructureProviderIdentity",
                        }));
                        if !id_kind.eq_ignore_ascii_case("Secret") {
                            let mut r = Map::new();
                            r.insert("kind".into(), "Secret".into());
                            if !id_ns.is_empty() {
                                r.insert("namespace".into(), id_ns.into());
                            }
                            r.insert("name".into(), format!("{id_name}-secret").into());
                            r.insert("apiVersion".into(), "v1".into());
                            template_resource_refs.push(json!({
                                "resource": Value::Object(r),
                                "identifier": "InfrastructureProviderIdentitySecret",
                            }));
                        }
                        let mut p = Map::new();
                        if !id_ns.is_empty() {
                            p.insert("namespace".into(), id_ns.into());
                        }
                        p.insert(
                            "name".into(),
                            format!("{id_name}-resource-template").into(),
                        );
                        p.insert("kind".into(), "ConfigMap".into());
                        p.insert("deploymentType".into(), "Remote".into());
                        credential_policy_refs.push(Value::Object(p));
                    }
                }
                None if b.objects.has_kind(&kinds::CREDENTIAL) => {
                    let e = format!(
                        "failed to get Credential: {}",
                        helm::not_found(&kinds::CREDENTIAL, cred_name)
                    );
                    b.error(
                        codes::CLUSTER_MISSING,
                        format!("Credential {ns}/{cred_name} of ClusterDeployment {ns}/{cd_name} does not exist"),
                        Some(format!("kubectl get credential -n {ns} {cred_name}")),
                    );
                    return Err(not_ready(e));
                }
                None => b.note(
                    codes::RENDER_NOTE,
                    Severity::Info,
                    format!("Credential {ns}/{cred_name} is not among the inputs: rendered without credential propagation"),
                    "",
                ),
            }
        }
        // The CAPI Cluster first, then an adopted cluster's SveltosCluster.
        if b.objects.get(&kinds::CAPI_CLUSTER, ns, cd_name).is_some() {
            ClusterRef::capi(ns, cd_name)
        } else if b
            .objects
            .get(&kinds::SVELTOS_CLUSTER, ns, cd_name)
            .is_some()
        {
            ClusterRef::sveltos(ns, cd_name)
        } else if b.objects.has_kind(&kinds::CAPI_CLUSTER)
            || b.objects.has_kind(&kinds::SVELTOS_CLUSTER)
        {
            let e = format!(
                "failed to get ClusterReference for ClusterDeployment {ns}/{cd_name}: {}",
                helm::not_found(&kinds::SVELTOS_CLUSTER, cd_name)
            );
            b.error(
                codes::CLUSTER_MISSING,
                format!("neither a CAPI Cluster nor a SveltosCluster {ns}/{cd_name} exists for ClusterDeployment {ns}/{cd_name}"),
                Some(format!("kubectl get clusters.cluster.x-k8s.io,sveltosclusters -n {ns} {cd_name}")),
            );
            return Err(not_ready(e));
        } else {
            if cd.is_some() {
                b.note(
                    codes::RENDER_NOTE,
                    Severity::Info,
                    format!("no CAPI Cluster or SveltosCluster {ns}/{cd_name} among the inputs: the Profile targets the CAPI Cluster, as kcm does when it exists"),
                    "",
                );
            }
            ClusterRef::capi(ns, cd_name)
        }
    };
    Ok(Resolved {
        cluster,
        template_resource_refs,
        credential_policy_refs,
        in_management_cluster,
    })
}

fn identity_reference(identity: &Value) -> Value {
    // corev1.ObjectReference's field order does not matter: keys are sorted on output.
    let mut r = Map::new();
    for k in [
        "kind",
        "namespace",
        "name",
        "uid",
        "apiVersion",
        "resourceVersion",
        "fieldPath",
    ] {
        if let Some(v) = identity
            .get(k)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
        {
            r.insert(k.into(), v.into());
        }
    }
    Value::Object(r)
}
