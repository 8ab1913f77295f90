//! Where the objects an SMP references come from: saved files or a dump ([`ObjectSet`]), or
//! a live snapshot (doctor's index implements [`ObjectLookup`] too).

use serde_json::Value;

use crate::api::crd::CustomResourceDefinition;
use crate::api::kinds;
use crate::api::meta::Object;
use crate::core::objects::ObjectId;

/// Where a referenced object comes from: saved files or a live snapshot.
pub trait ObjectLookup {
    /// The object with this apiVersion, kind, namespace ("" for cluster-wide) and name.
    fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<&Value>;
    /// A CustomResourceDefinition by name (`<plural>.<group>`).
    fn crd(&self, name: &str) -> Option<&Value>;
    /// The plural resource of a kind, for messages (`deployments.apps`); None if unknown.
    fn resource_of(&self, group: &str, kind: &str) -> Option<String>;

    /// kcm's REST mapper's error when it cannot map `kind` at `group/version`, as far as
    /// the objects show it: the kind's CRD is among them and has no such served version.
    /// None when it maps or the objects cannot tell (no CRD of the kind: assumed served).
    fn unmapped(&self, group: &str, version: &str, kind: &str) -> Option<String> {
        unmapped_by_crd(self, group, version, kind)
    }

    /// Whether `object`, as saved (at one version of its group: `kubectl get` gives the
    /// preferred one), answers a reference at `api_version`: the API server serves one stored
    /// object at every served version, so a reference at another version of the same group
    /// reads the same object, unless the CRD (when the input has it) does not serve that
    /// version.
    fn answers(&self, object: &Value, api_version: &str) -> bool {
        let saved = Object(object).api_version();
        if saved == api_version {
            return true;
        }
        let group = kinds::group_of(api_version);
        if kinds::group_of(saved) != group || group.is_empty() {
            return false;
        }
        let version = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
        let kind = Object(object).kind();
        let Some(crd) = self
            .resource_of(group, kind)
            .and_then(|plural| self.crd(&format!("{plural}.{group}")))
        else {
            return true;
        };
        CustomResourceDefinition(crd).serves(version)
    }
}

/// `ObjectLookup::unmapped` from the kind's CRD among the objects.
fn unmapped_by_crd<L: ObjectLookup + ?Sized>(
    l: &L,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<String> {
    let plural = l.resource_of(group, kind)?;
    let crd = l.crd(&format!("{plural}.{group}"))?;
    (!CustomResourceDefinition(crd).serves(version)).then(|| no_kind_match(group, version, kind))
}

/// apimachinery's NoKindMatchError for one version searched.
pub fn no_kind_match(group: &str, version: &str, kind: &str) -> String {
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    format!("no matches for kind {kind:?} in version {gv:?}")
}

/// An in-memory set of objects (files, a dump).
#[derive(Debug, Default)]
pub struct ObjectSet {
    objects: Vec<Value>,
    /// (apiVersion, kind) pairs the cluster's discovery does not serve (live).
    not_served: Vec<(String, String)>,
}

impl ObjectSet {
    pub fn new(objects: Vec<Value>) -> ObjectSet {
        ObjectSet {
            objects,
            not_served: Vec::new(),
        }
    }

    /// The set with what the cluster's discovery says it does not serve: (apiVersion, kind).
    pub fn with_not_served(mut self, not_served: Vec<(String, String)>) -> ObjectSet {
        self.not_served = not_served;
        self
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
        let same = |o: &&Value| {
            let id = ObjectId::of(o);
            id.kind == kind && id.namespace == namespace && id.name == name
        };
        let mut found = self.objects.iter().filter(same);
        let first = found.next()?;
        // The object saved at the version named, else at another version that serves it.
        std::iter::once(first)
            .chain(found)
            .find(|o| Object(o).api_version() == api_version)
            .or_else(|| {
                self.objects
                    .iter()
                    .filter(same)
                    .find(|o| self.answers(o, api_version))
            })
    }

    fn crd(&self, name: &str) -> Option<&Value> {
        self.get(kinds::CRD.api_version, kinds::CRD.kind, "", name)
    }

    fn unmapped(&self, group: &str, version: &str, kind: &str) -> Option<String> {
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        if self
            .not_served
            .iter()
            .any(|(av, k)| *av == api_version && k == kind)
        {
            return Some(no_kind_match(group, version, kind));
        }
        unmapped_by_crd(self, group, version, kind)
    }

    fn resource_of(&self, group: &str, kind: &str) -> Option<String> {
        self.objects.iter().find_map(|o| {
            let crd = CustomResourceDefinition(o);
            (Object(o).kind() == kinds::CRD.kind && crd.defines(group, kind))
                .then(|| crd.plural().to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn widget(version: &str) -> Value {
        json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget",
               "metadata": {"name": "w", "namespace": "n"}})
    }

    fn crd(served_v1beta1: bool) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "widgets.example.com"},
               "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
                        "versions": [{"name": "v1", "served": true, "storage": true},
                                     {"name": "v1beta1", "served": served_v1beta1}]}})
    }

    #[test]
    fn a_reference_finds_the_object_saved_at_another_served_version() {
        let get = |set: &ObjectSet, v: &str| set.get(v, "Widget", "n", "w").is_some();
        // Without the CRD: any version of the group reads the object.
        let set = ObjectSet::new(vec![widget("v1")]);
        assert!(get(&set, "example.com/v1"));
        assert!(get(&set, "example.com/v1beta1"));
        assert!(!get(&set, "other.com/v1"));
        // With it: only the versions it serves.
        let set = ObjectSet::new(vec![widget("v1"), crd(true)]);
        assert!(get(&set, "example.com/v1beta1"));
        assert!(!get(&set, "example.com/v2"));
        let set = ObjectSet::new(vec![widget("v1"), crd(false)]);
        assert!(!get(&set, "example.com/v1beta1"));
        // The object saved at the version named comes first.
        let set = ObjectSet::new(vec![widget("v1"), widget("v1beta1")]);
        let found = set.get("example.com/v1beta1", "Widget", "n", "w").unwrap();
        assert_eq!(found["apiVersion"], "example.com/v1beta1");
        // The core group has one version per kind: no cross-version match.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w", "namespace": "n"}});
        let set = ObjectSet::new(vec![cm]);
        assert!(set.get("v2", "ConfigMap", "n", "w").is_none());
    }
}
