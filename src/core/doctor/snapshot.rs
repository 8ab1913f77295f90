//! The objects doctor looks at, indexed once: by kind, by (kind, namespace, name), the Flux
//! objects by the adapter's labels and the StateManagementProviders by name. Every lookup of
//! the diagnosis is a hash lookup, so a run is linear in the objects.

use std::collections::HashMap;

use serde_json::Value;

use crate::api::crd::CustomResourceDefinition;
use crate::api::kcm::StateManagementProvider;
use crate::api::kinds;
use crate::api::meta::Object;
use crate::api::naming::{LABEL_SERVICE, LABEL_SERVICESET};
use crate::core::readiness::ObjectLookup;

pub struct Snapshot<'a> {
    by_kind: HashMap<&'a str, Vec<&'a Value>>,
    by_key: HashMap<(&'a str, &'a str, &'a str), &'a Value>,
    /// (namespace, serviceset label, service label) → HelmRelease or Kustomization.
    flux_by_labels: HashMap<(&'a str, &'a str, &'a str), &'a Value>,
    /// StateManagementProviders by name (cluster-scoped: the name is the key).
    smps: HashMap<&'a str, &'a Value>,
}

impl<'a> Snapshot<'a> {
    pub fn new(objects: &'a [Value]) -> Snapshot<'a> {
        let mut by_kind: HashMap<&str, Vec<&Value>> = HashMap::new();
        let mut by_key = HashMap::new();
        let mut flux_by_labels = HashMap::new();
        let mut smps = HashMap::new();
        for o in objects {
            let m = Object(o);
            let kind = m.kind();
            by_kind.entry(kind).or_default().push(o);
            let ns = m.namespace();
            // The first object of a key wins, as a linear scan would find it.
            by_key.entry((kind, ns, m.name())).or_insert(o);
            if kinds::flux_object(kind).is_some() {
                let (set, svc) = (m.label(LABEL_SERVICESET), m.label(LABEL_SERVICE));
                if !set.is_empty() && !svc.is_empty() {
                    flux_by_labels.entry((ns, set, svc)).or_insert(o);
                }
            }
            if kind == kinds::STATE_MANAGEMENT_PROVIDER.kind {
                smps.entry(m.name()).or_insert(o);
            }
        }
        Snapshot {
            by_kind,
            by_key,
            flux_by_labels,
            smps,
        }
    }

    pub fn all(&self, kind: &str) -> &[&'a Value] {
        self.by_kind.get(kind).map_or(&[], Vec::as_slice)
    }

    /// Whether the snapshot holds any object of the kind.
    pub fn has_kind(&self, kind: &str) -> bool {
        self.by_kind.contains_key(kind)
    }

    pub fn find(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Value> {
        self.by_key.get(&(kind, namespace, name)).copied()
    }

    /// The Flux object the adapter labelled for a service.
    pub fn flux_by_labels(
        &self,
        namespace: &str,
        set_label: &str,
        svc_label: &str,
    ) -> Option<&'a Value> {
        self.flux_by_labels
            .get(&(namespace, set_label, svc_label))
            .copied()
    }

    /// The StateManagementProvider of a name.
    pub fn smp(&self, name: &str) -> Option<StateManagementProvider<'a>> {
        self.smps.get(name).map(|v| StateManagementProvider(v))
    }
}

/// The readiness re-evaluation reads the SMP's references from the snapshot's index.
impl ObjectLookup for Snapshot<'_> {
    fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.find(kind, namespace, name)
            .filter(|o| self.answers(o, api_version))
    }

    fn crd(&self, name: &str) -> Option<&Value> {
        self.find(kinds::CRD.kind, "", name)
    }

    fn resource_of(&self, group: &str, kind: &str) -> Option<String> {
        self.all(kinds::CRD.kind).iter().find_map(|c| {
            let crd = CustomResourceDefinition(c);
            crd.defines(group, kind).then(|| crd.plural().to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(name: &str, marker: u32) -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "StateManagementProvider",
               "metadata": {"name": name}, "spec": {"marker": marker}})
    }

    #[test]
    fn providers_are_found_by_name_first_one_winning() {
        let objects: Vec<Value> = (0..1_000)
            .map(|i| smp(&format!("p-{i}"), i))
            .chain([smp("p-7", 9_999)])
            .collect();
        let snap = Snapshot::new(&objects);
        let found = snap.smp("p-7").unwrap();
        assert_eq!(
            found.0["spec"]["marker"], 7,
            "the first of a name, as a scan finds it"
        );
        assert_eq!(snap.smp("p-999").map(|p| p.name()), Some("p-999"));
        assert!(snap.smp("nope").is_none());
    }
}
