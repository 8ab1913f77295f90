//! Where the objects an SMP references come from: saved files or a dump ([`ObjectSet`]), or
//! a live snapshot (doctor's index implements [`ObjectLookup`] too).

use serde_json::Value;

use crate::api::kinds;
use crate::api::meta::{Object, str_at};
use crate::core::objects::ObjectId;

/// Where a referenced object comes from: saved files or a live snapshot.
pub trait ObjectLookup {
    /// The object with this apiVersion, kind, namespace ("" for cluster-wide) and name.
    fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<&Value>;
    /// A CustomResourceDefinition by name (`<plural>.<group>`).
    fn crd(&self, name: &str) -> Option<&Value>;
    /// The plural resource of a kind, for messages (`deployments.apps`); None if unknown.
    fn resource_of(&self, group: &str, kind: &str) -> Option<String>;
}

/// An in-memory set of objects (files, a dump).
#[derive(Debug, Default)]
pub struct ObjectSet {
    objects: Vec<Value>,
}

impl ObjectSet {
    pub fn new(objects: Vec<Value>) -> ObjectSet {
        ObjectSet { objects }
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

impl ObjectLookup for ObjectSet {
    fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects.iter().find(|o| {
            let id = ObjectId::of(o);
            id.api_version == api_version
                && id.kind == kind
                && id.namespace == namespace
                && id.name == name
        })
    }

    fn crd(&self, name: &str) -> Option<&Value> {
        self.get(kinds::CRD.api_version, kinds::CRD.kind, "", name)
    }

    fn resource_of(&self, group: &str, kind: &str) -> Option<String> {
        self.objects.iter().find_map(|o| {
            (Object(o).kind() == kinds::CRD.kind
                && str_at(o, "/spec/group") == group
                && str_at(o, "/spec/names/kind") == kind)
                .then(|| str_at(o, "/spec/names/plural").to_string())
                .filter(|p| !p.is_empty())
        })
    }
}

/// The plural resource name Kubernetes would guess for a kind (apimachinery's
/// UnsafeGuessKindToResource), for messages when discovery is not at hand.
pub fn guess_resource(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.is_empty() {
        return lower;
    }
    if lower.ends_with('s')
        || lower.ends_with("sh")
        || lower.ends_with("ch")
        || lower.ends_with('x')
        || lower.ends_with('z')
    {
        return format!("{lower}es");
    }
    if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    format!("{lower}s")
}
