//! The watches: a cache per kind fed by a watch stream, each object slimmed to what the
//! reconciles read.

use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use serde_json::Value;

use super::cache;
use crate::api::naming::{ANNOTATION_LAST_APPLIED, FIELD_MANAGER};
use crate::cluster::with_type;

/// A cache of every object of a kind, and the stream of its watch events (which fills the
/// cache as it is polled; watch errors back off and the watch resumes or relists).
pub fn reflect(
    client: &Client,
    ar: &ApiResource,
    wc: watcher::Config,
    modify: fn(&mut DynamicObject),
) -> (
    Store<DynamicObject>,
    impl futures::Stream<Item = Result<watcher::Event<DynamicObject>, watcher::Error>> + Send + use<>,
) {
    let writer = reflector::store::Writer::<DynamicObject>::new(ar.clone());
    let store = writer.as_reader();
    let api = Api::<DynamicObject>::all_with(client.clone(), ar);
    let stream = watcher(api, wc).default_backoff().modify(modify);
    (store, reflector::reflector(writer, stream))
}

/// What the caches need of an object, to keep memory flat: managedFields only the adapter's
/// own entry (the SSA no-op check reads it), no last-applied annotation, and of the long
/// Flux status lists (Helm release history, Kustomization inventory) only whether they are
/// empty (the state mapping's "something was attempted").
pub fn slim(o: &mut DynamicObject) {
    if let Some(mf) = o.metadata.managed_fields.as_mut() {
        mf.retain(|e| {
            e.manager.as_deref() == Some(FIELD_MANAGER)
                && e.operation.as_deref() == Some("Apply")
                && e.subresource.as_deref().unwrap_or("").is_empty()
        });
    }
    if let Some(a) = o.metadata.annotations.as_mut() {
        a.remove(ANNOTATION_LAST_APPLIED);
    }
    if let Some(status) = o.data.get_mut("status") {
        if let Some(Value::Array(h)) = status.get_mut("history") {
            h.truncate(1);
        }
        if let Some(Value::Array(e)) = status
            .get_mut("inventory")
            .and_then(|i| i.get_mut("entries"))
        {
            e.truncate(1);
        }
    }
}

/// How the ServiceSets are cached: slimmed, and their spec and status packed.
pub fn slim_set(o: &mut DynamicObject) {
    slim(o);
    pack(o);
}

/// The fields of a cached ServiceSet kept packed.
const PACKED: [&str; 2] = ["spec", "status"];

/// What a ServiceSet's spec and status are compressed against: their field names and common
/// values (kcm's ServiceSet; any text works as a dictionary, the closer the better).
const SET_DICTIONARY: &[u8] = br#"{"cluster":"","provider":{"name":"ksm-projectsveltos","config":{"priority":100}},"services":[{"name":"","namespace":"","template":"","values":"","valuesFrom":[{"kind":"ConfigMap","name":""}]}]}{"conditions":[{"type":"ServicesInReadyState","status":"True","reason":"Succeeded","message":"","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}],"services":[{"type":"Helm","name":"","namespace":"","template":"","state":"Deployed","lastStateTransitionTime":"2026-01-01T00:00:00Z","version":"","conditions":[{"type":"Ready","status":"True","reason":"","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]},{"type":"Kustomize","state":"Provisioning","failureMessage":""}],"deployed":true,"provider":{"ready":true,"suspended":false}}"#;

/// Every ServiceSet stays cached, but its services and their status (states, conditions,
/// messages, times: most of the object) are read only by the reconcile of that ServiceSet
/// and by the claims index when its spec changes. So they are kept as their JSON text
/// compressed against [`SET_DICTIONARY`], in base64 (a JSON string holds text): about a
/// twentieth of the memory of the parsed trees. The metadata stays parsed (the watches and
/// the shard selector read it).
fn pack(o: &mut DynamicObject) {
    use base64::Engine as _;
    for field in PACKED {
        if let Some(v) = o.data.get_mut(field)
            && v.is_object()
        {
            let text = v.to_string();
            let z =
                lz4_flex::block::compress_prepend_size_with_dict(text.as_bytes(), SET_DICTIONARY);
            *v = Value::String(base64::engine::general_purpose::STANDARD_NO_PAD.encode(z));
        }
    }
}

/// The text [`pack`] packed (None: not packed by it, which no cached ServiceSet is).
fn unpacked_text(packed: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let z = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(packed)
        .ok()?;
    lz4_flex::block::decompress_size_prepended_with_dict(&z, SET_DICTIONARY).ok()
}

/// What [`pack`] packed, parsed.
fn unpack(packed: &str) -> Option<Value> {
    serde_json::from_slice(&unpacked_text(packed)?).ok()
}

/// A field of a cached ServiceSet ([`pack`]), parsed (None when absent).
pub fn set_field(o: &DynamicObject, field: &str) -> Option<Value> {
    match o.data.get(field)? {
        Value::String(packed) if PACKED.contains(&field) => unpack(packed),
        v => Some(v.clone()),
    }
}

/// The `spec.provider` of a cached ServiceSet, without parsing the rest of its spec (the
/// metrics read it of every ServiceSet).
pub fn set_provider(o: &DynamicObject) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Spec {
        provider: Option<Value>,
    }
    match o.data.get("spec")? {
        Value::String(packed) => {
            serde_json::from_slice::<Spec>(&unpacked_text(packed)?)
                .ok()?
                .provider
        }
        spec => spec.get("provider").cloned(),
    }
}

/// A cached ServiceSet as JSON with its apiVersion and kind, its fields unpacked (the one
/// way the controller reads a whole ServiceSet from its cache).
pub fn set_json(o: &DynamicObject, ar: &ApiResource) -> Value {
    let mut v = with_type(o, ar);
    for field in PACKED {
        if let Some(packed) = v.get_mut(field)
            && let Value::String(text) = packed
        {
            *packed = unpack(text).unwrap_or_else(|| Value::Object(Default::default()));
        }
    }
    v
}

/// Like [`reflect`], into a [`cache::TextCache`].
pub fn text_reflect(
    client: &Client,
    ar: &ApiResource,
    wc: watcher::Config,
) -> (
    cache::TextCache,
    impl futures::Stream<Item = Result<watcher::Event<DynamicObject>, watcher::Error>> + Send + use<>,
) {
    let cache = cache::TextCache::new(ar.clone());
    let api = Api::<DynamicObject>::all_with(client.clone(), ar);
    let stream = cache.reflect(watcher(api, wc).default_backoff().modify(slim));
    (cache, stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ar() -> ApiResource {
        crate::cluster::api_resource(&crate::api::kinds::SERVICE_SET)
    }

    fn set() -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
            "metadata": {"name": "dev", "namespace": "kcm-system", "uid": "u1",
                "labels": {"ksm.k0rdent.mirantis.com/adapter": "flux"},
                "managedFields": [{"manager": "kcm", "operation": "Update"}]},
            "spec": {"cluster": "dev", "provider": {"name": "ksm-flux"},
                "services": [{"name": "nginx", "namespace": "ingress", "template": "nginx-4-11",
                    "values": "controller:\n  replicaCount: 2\n  ünïcode: \"✓\"\n"}]},
            "status": {"deployed": false, "services": [{"type": "Helm", "name": "nginx",
                "namespace": "ingress", "template": "nginx-4-11", "state": "Provisioning",
                "conditions": [{"type": "Ready", "status": "False", "reason": "Progressing",
                    "message": "waiting", "lastTransitionTime": "2026-11-26T10:00:00Z"}]}]}})
    }

    #[test]
    fn a_cached_service_set_reads_back_as_it_came_less_what_slim_drops() {
        let mut o: DynamicObject = serde_json::from_value(set()).unwrap();
        slim_set(&mut o);
        assert!(
            o.data["spec"].is_string() && o.data["status"].is_string(),
            "packed"
        );
        assert!(o.metadata.managed_fields.as_ref().unwrap().is_empty());
        let back = set_json(&o, &ar());
        let mut want = set();
        want["metadata"]["managedFields"] = json!([]);
        assert_eq!(back, want);
        assert_eq!(set_field(&o, "spec"), Some(set()["spec"].clone()));
        assert_eq!(set_field(&o, "status"), Some(set()["status"].clone()));
        assert_eq!(set_field(&o, "other"), None);
        assert_eq!(set_provider(&o), Some(json!({"name": "ksm-flux"})));
        // The packed text is smaller than the text.
        let packed =
            o.data["spec"].as_str().unwrap().len() + o.data["status"].as_str().unwrap().len();
        let text = set()["spec"].to_string().len() + set()["status"].to_string().len();
        assert!(packed < text, "{packed} >= {text}");
    }

    #[test]
    fn an_object_never_packed_reads_as_it_is() {
        let o: DynamicObject = serde_json::from_value(set()).unwrap();
        assert_eq!(set_json(&o, &ar()), set());
        assert_eq!(set_field(&o, "spec"), Some(set()["spec"].clone()));
        assert_eq!(set_provider(&o), Some(json!({"name": "ksm-flux"})));
    }
}
