//! The real kcm, Flux and Sveltos CRDs, embedded at build time (crds/) and parsed on first
//! use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::core::cel;
use crate::core::schema::{Crd, RuleEvaluator, Violation};
use crate::diag::Source;
use crate::diag::yaml::{self, Limits};

/// (kind, CRD YAML) of every embedded CRD.
const EMBEDDED: &[(&str, &str)] = &[
    (
        "StateManagementProvider",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_statemanagementproviders.yaml"),
    ),
    (
        "ServiceSet",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_servicesets.yaml"),
    ),
    (
        "ServiceTemplate",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_servicetemplates.yaml"),
    ),
    (
        "ClusterDeployment",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clusterdeployments.yaml"),
    ),
    (
        "MultiClusterService",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_multiclusterservices.yaml"),
    ),
    (
        "ServiceTemplateChain",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_servicetemplatechains.yaml"),
    ),
    (
        "ClusterTemplate",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clustertemplates.yaml"),
    ),
    (
        "ClusterTemplateChain",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clustertemplatechains.yaml"),
    ),
    (
        "ProviderTemplate",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_providertemplates.yaml"),
    ),
    (
        "Credential",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_credentials.yaml"),
    ),
    (
        "AccessManagement",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_accessmanagements.yaml"),
    ),
    (
        "ClusterAuditPolicy",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clusterauditpolicies.yaml"),
    ),
    (
        "ClusterAuthentication",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clusterauthentications.yaml"),
    ),
    (
        "ClusterDataSource",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clusterdatasources.yaml"),
    ),
    (
        "ClusterIPAM",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clusteripams.yaml"),
    ),
    (
        "ClusterIPAMClaim",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_clusteripamclaims.yaml"),
    ),
    (
        "DataSource",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_datasources.yaml"),
    ),
    (
        "Management",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_managements.yaml"),
    ),
    (
        "ManagementBackup",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_managementbackups.yaml"),
    ),
    (
        "Region",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_regions.yaml"),
    ),
    (
        "Release",
        include_str!("../../crds/kcm/k0rdent.mirantis.com_releases.yaml"),
    ),
    (
        "HelmRelease",
        include_str!("../../crds/flux/helm.toolkit.fluxcd.io_helmreleases.yaml"),
    ),
    (
        "Kustomization",
        include_str!("../../crds/flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
    ),
    (
        "Bucket",
        include_str!("../../crds/flux/source.toolkit.fluxcd.io_buckets.yaml"),
    ),
    (
        "ExternalArtifact",
        include_str!("../../crds/flux/source.toolkit.fluxcd.io_externalartifacts.yaml"),
    ),
    (
        "GitRepository",
        include_str!("../../crds/flux/source.toolkit.fluxcd.io_gitrepositories.yaml"),
    ),
    (
        "HelmChart",
        include_str!("../../crds/flux/source.toolkit.fluxcd.io_helmcharts.yaml"),
    ),
    (
        "HelmRepository",
        include_str!("../../crds/flux/source.toolkit.fluxcd.io_helmrepositories.yaml"),
    ),
    (
        "OCIRepository",
        include_str!("../../crds/flux/source.toolkit.fluxcd.io_ocirepositories.yaml"),
    ),
    (
        "Profile",
        include_str!("../../crds/sveltos/config.projectsveltos.io_profiles.yaml"),
    ),
    (
        "ClusterProfile",
        include_str!("../../crds/sveltos/config.projectsveltos.io_clusterprofiles.yaml"),
    ),
    (
        "ClusterSummary",
        include_str!("../../crds/sveltos/config.projectsveltos.io_clustersummaries.yaml"),
    ),
    (
        "ClusterConfiguration",
        include_str!("../../crds/sveltos/config.projectsveltos.io_clusterconfigurations.yaml"),
    ),
    (
        "SveltosCluster",
        include_str!("../../crds/sveltos/lib.projectsveltos.io_sveltosclusters.yaml"),
    ),
];

/// The embedded CRD of a kcm, Flux or Sveltos kind, parsed once.
pub fn crd(kind: &str) -> Option<&'static Crd> {
    static PARSED: [OnceLock<Crd>; EMBEDDED.len()] = [const { OnceLock::new() }; EMBEDDED.len()];
    let idx = EMBEDDED.iter().position(|(k, _)| *k == kind)?;
    Some(PARSED[idx].get_or_init(|| parse(EMBEDDED[idx].1)))
}

/// Every embedded kind.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    EMBEDDED.iter().map(|(k, _)| *k)
}

/// Evaluates the CRDs' x-kubernetes-validations rules with the project's CEL, compiling each
/// rule once (the CRDs hold a few dozen). The lock is held only to find the rule; the value is
/// read in place (`evaluate_json`), not converted: the adapter validates every object it
/// renders, on every reconcile.
#[derive(Default)]
pub struct CrdRules {
    compiled: Mutex<HashMap<String, Option<Arc<cel::CompiledRule>>>>,
}

impl RuleEvaluator for CrdRules {
    fn eval(&self, rule: &str, value: &Value) -> Option<bool> {
        let compiled = {
            let mut cache = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(rule) {
                Some(c) => c.clone(),
                None => {
                    let c = cel::compile(rule, &cel::Limits::default())
                        .ok()
                        .map(Arc::new);
                    cache.insert(rule.to_string(), c.clone());
                    c
                }
            }
        }?;
        match compiled.evaluate_json(value) {
            cel::Verdict::True => Some(true),
            cel::Verdict::False => Some(false),
            cel::Verdict::Error(_) | cel::Verdict::BudgetExceeded(_) => None,
        }
    }
}

/// The shared evaluator of CRD validation rules.
pub fn rule_evaluator() -> &'static CrdRules {
    static RULES: OnceLock<CrdRules> = OnceLock::new();
    RULES.get_or_init(CrdRules::default)
}

/// Puts an object of an embedded kind in the shape the API server stores: unknown fields
/// pruned, defaults applied. Returns the pruned paths; None if the kind is not embedded.
pub fn default_and_prune(object: &mut Value) -> Option<Vec<Vec<crate::core::schema::PathSeg>>> {
    let kind = object.get("kind")?.as_str()?;
    crd(kind)?.default_and_prune(object)
}

/// Validates an object of an embedded kind against its CRD as the API server would on create
/// (status is not validated: the server ignores it). None if the kind is not embedded.
pub fn validate(object: &Value) -> Option<Vec<Violation>> {
    let kind = object.get("kind")?.as_str()?;
    Some(crd(kind)?.validate_as_create(object, rule_evaluator()))
}

fn parse(text: &str) -> Crd {
    let source = Source::new("embedded CRD", text);
    let (docs, err) = yaml::parse_documents(&source);
    assert!(err.is_none(), "embedded CRD is valid YAML: {err:?}");
    let root = docs
        .into_iter()
        .find_map(|d| d.root)
        .expect("embedded CRD has a document");
    let json = root
        .to_json(&Limits::default())
        .expect("embedded CRD converts to JSON");
    Crd::from_json(&json).expect("embedded CRD is a valid CustomResourceDefinition")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_crd_parses() {
        for kind in kinds() {
            let crd = crd(kind).unwrap();
            assert_eq!(crd.kind, kind);
            assert!(crd.versions.iter().any(|v| v.served));
        }
    }

    #[test]
    fn the_kinds_table_agrees_with_the_crds() {
        for kind in kinds() {
            let crd = crd(kind).unwrap();
            let k = crate::api::kinds::by_name(kind)
                .unwrap_or_else(|| panic!("{kind} not in api::kinds"));
            assert_eq!(
                (k.group, k.plural, k.namespaced),
                (
                    crd.group.as_str(),
                    crd.plural.as_str(),
                    crd.scope_namespaced
                ),
                "{kind}"
            );
            assert!(
                crd.versions.iter().any(|v| v.served && v.name == k.version),
                "{kind} {} is served",
                k.version
            );
        }
    }
}
