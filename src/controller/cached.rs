//! A ServiceSet as the controller caches it: its metadata parsed, what routes events parsed
//! out of its spec (the provider's name, the templates of its services), and its spec and
//! status kept packed ([`compact`]) until a reconcile asks for them. Nothing else of the
//! object is kept, and nothing of it is reachable but through these fields and accessors.
//!
//! It is read straight from the API server's JSON (its own `Deserialize`): the spec and
//! status are copied as JSON text into their packed bytes as they are parsed, never built as
//! a tree. (`serde_json`'s `RawValue` would copy the text without parsing it, but kube reads
//! a list through a buffered map, where a `RawValue` cannot be read; a copy that parses works
//! from both.)

use std::fmt;

use kube::api::ObjectMeta;
use kube::discovery::ApiResource;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::compact::{Packed, Packer};
use super::watch::slim_meta;

/// What a ServiceSet's spec and status are compressed against: their field names and common
/// values (kcm's ServiceSet; any text works as a dictionary, the closer the better).
static PACKER: Packer = Packer::with_dictionary(
    br#"{"cluster":"","provider":{"name":"ksm-projectsveltos","config":{"priority":100}},"services":[{"name":"","namespace":"","template":"","values":"","valuesFrom":[{"kind":"ConfigMap","name":""}]}]}{"conditions":[{"type":"ServicesInReadyState","status":"True","reason":"Succeeded","message":"","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}],"services":[{"type":"Helm","name":"","namespace":"","template":"","state":"Deployed","lastStateTransitionTime":"2026-01-01T00:00:00Z","version":"","conditions":[{"type":"Ready","status":"True","reason":"","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]},{"type":"Kustomize","state":"Provisioning","failureMessage":""}],"deployed":true,"provider":{"ready":true,"suspended":false}}"#,
);

/// A cached ServiceSet.
#[derive(Clone, Debug)]
pub struct CachedSet {
    /// Slimmed as every cached object's ([`slim_meta`]).
    pub metadata: ObjectMeta,
    /// `spec.provider.name` ("" when unset).
    provider: Box<str>,
    /// The `template` of each of `spec.services`, in order.
    templates: Box<[Box<str>]>,
    spec: Option<Packed>,
    status: Option<Packed>,
}

impl CachedSet {
    /// `spec.provider.name` ("" when unset).
    pub fn provider_name(&self) -> &str {
        &self.provider
    }

    /// The templates its services deploy, in the order of `spec.services`.
    pub fn templates(&self) -> impl Iterator<Item = &str> {
        self.templates.iter().map(|t| &**t)
    }

    /// Its spec, parsed (an empty object when it has none).
    pub fn spec(&self) -> Value {
        unpacked(&self.spec).unwrap_or_else(|| json!({}))
    }

    /// Its status, parsed (None when it has none).
    pub fn status(&self) -> Option<Value> {
        unpacked(&self.status)
    }

    /// The whole ServiceSet as JSON, with its apiVersion and kind (what a reconcile reads).
    pub fn to_json(&self, ar: &ApiResource) -> Value {
        let mut v = json!({"apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": self.metadata});
        if let Some(object) = v.as_object_mut() {
            // Moved in: `json!` would copy the parsed values once more.
            object.insert("spec".into(), self.spec());
            if let Some(status) = self.status() {
                object.insert("status".into(), status);
            }
        }
        v
    }

    /// What decides which adapter serves it: its labels and its provider's name.
    pub fn routing_view(&self) -> Value {
        json!({"metadata": {"labels": self.metadata.labels},
            "spec": {"provider": {"name": self.provider_name()}}})
    }

    /// `(namespace, name)`.
    pub fn key(&self) -> (String, String) {
        (
            self.metadata.namespace.clone().unwrap_or_default(),
            self.metadata.name.clone().unwrap_or_default(),
        )
    }
}

/// Packed by this module, so it unpacks (None only when absent).
fn unpacked(packed: &Option<Packed>) -> Option<Value> {
    PACKER.unpack(packed.as_ref()?).ok()
}

/// `kube::Resource` for a type of the adapter's own that holds an object's `metadata`, its
/// kind known at run time (an `ApiResource`), as kube's `DynamicObject`.
macro_rules! dynamic_resource {
    ($t:ty) => {
        impl kube::Resource for $t {
            type DynamicType = kube::discovery::ApiResource;
            type Scope = kube::core::DynamicResourceScope;

            fn kind(dt: &kube::discovery::ApiResource) -> std::borrow::Cow<'_, str> {
                dt.kind.as_str().into()
            }

            fn group(dt: &kube::discovery::ApiResource) -> std::borrow::Cow<'_, str> {
                dt.group.as_str().into()
            }

            fn version(dt: &kube::discovery::ApiResource) -> std::borrow::Cow<'_, str> {
                dt.version.as_str().into()
            }

            fn api_version(dt: &kube::discovery::ApiResource) -> std::borrow::Cow<'_, str> {
                dt.api_version.as_str().into()
            }

            fn plural(dt: &kube::discovery::ApiResource) -> std::borrow::Cow<'_, str> {
                dt.plural.as_str().into()
            }

            fn meta(&self) -> &kube::api::ObjectMeta {
                &self.metadata
            }

            fn meta_mut(&mut self) -> &mut kube::api::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}
pub(super) use dynamic_resource;

dynamic_resource!(CachedSet);

/// What routing reads of a spec (the CRD's types; anything else is an error).
#[derive(Deserialize)]
struct SpecView {
    #[serde(default)]
    provider: Option<ProviderView>,
    #[serde(default)]
    services: Option<Vec<ServiceView>>,
}

#[derive(Deserialize)]
struct ProviderView {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct ServiceView {
    #[serde(default)]
    template: Option<String>,
}

impl<'de> Deserialize<'de> for CachedSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CachedSet, D::Error> {
        /// The object as it comes; apiVersion, kind and other fields are skipped.
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            metadata: ObjectMeta,
            #[serde(default)]
            spec: Option<Text>,
            #[serde(default)]
            status: Option<Text>,
        }
        let Wire {
            mut metadata,
            spec,
            status,
        } = Wire::deserialize(d)?;
        let who = || {
            format!(
                "ServiceSet {}/{}",
                metadata.namespace.as_deref().unwrap_or(""),
                metadata.name.as_deref().unwrap_or("")
            )
        };
        let view = match &spec {
            Some(Text(text)) => serde_json::from_slice::<SpecView>(text)
                .map_err(|e| de::Error::custom(format!("{}: spec: {e}", who())))?,
            None => SpecView {
                provider: None,
                services: None,
            },
        };
        slim_meta(&mut metadata);
        Ok(CachedSet {
            metadata,
            provider: view
                .provider
                .and_then(|p| p.name)
                .unwrap_or_default()
                .into(),
            templates: view
                .services
                .into_iter()
                .flatten()
                .map(|s| s.template.unwrap_or_default().into())
                .collect(),
            spec: spec.map(|Text(t)| PACKER.pack(&t)),
            status: status.map(|Text(t)| PACKER.pack(&t)),
        })
    }
}

/// A JSON value's text, compact, copied as it is parsed.
struct Text(Vec<u8>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        let mut out = Vec::new();
        Copy(&mut out).deserialize(d)?;
        Ok(Text(out))
    }
}

/// Appends the JSON text of the value it is given.
pub(super) struct Copy<'a>(pub &'a mut Vec<u8>);

impl Copy<'_> {
    fn write<T: Serialize + ?Sized, E: de::Error>(self, v: &T) -> Result<(), E> {
        serde_json::to_writer(&mut *self.0, v).map_err(E::custom)
    }
}

impl<'de> DeserializeSeed<'de> for Copy<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Copy<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.write(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        items(self.0, (b'[', b']'), |out| {
            Ok(seq.next_element_seed(Copy(out))?.is_some())
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        items(self.0, (b'{', b'}'), |out| {
            if map.next_key_seed(Copy(out))?.is_none() {
                return Ok(false);
            }
            out.push(b':');
            map.next_value_seed(Copy(out))?;
            Ok(true)
        })
    }
}

/// Writes `open`, the items `next` writes separated by commas (it says whether there was
/// one), and `close`.
fn items<E>(
    out: &mut Vec<u8>,
    (open, close): (u8, u8),
    mut next: impl FnMut(&mut Vec<u8>) -> Result<bool, E>,
) -> Result<(), E> {
    out.push(open);
    let mut first = true;
    loop {
        let mark = out.len();
        if !first {
            out.push(b',');
        }
        if !next(out)? {
            out.truncate(mark);
            break;
        }
        first = false;
    }
    out.push(close);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar() -> ApiResource {
        crate::cluster::api_resource(&crate::api::kinds::SERVICE_SET)
    }

    fn set() -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
            "metadata": {"name": "dev", "namespace": "kcm-system", "uid": "u1",
                "labels": {"ksm.k0rdent.mirantis.com/adapter": "flux"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "managedFields": [{"manager": "kcm", "operation": "Update"}]},
            "spec": {"cluster": "dev", "provider": {"name": "ksm-flux", "config": {"priority": 1.5}},
                "services": [{"name": "nginx", "namespace": "ingress", "template": "nginx-4-11",
                    "values": "controller:\n  replicaCount: 2\n  ünïcode: \"✓\\\"\"\n"},
                    {"name": "cert", "namespace": "cert", "template": "cert-manager",
                    "helmOptions": {"wait": true, "timeout": null, "retries": -3,
                        "big": 18446744073709551615u64, "list": [[], {}, [1, "a"]]}}]},
            "status": {"deployed": false, "services": [{"type": "Helm", "name": "nginx",
                "namespace": "ingress", "template": "nginx-4-11", "state": "Provisioning",
                "conditions": [{"type": "Ready", "status": "False", "reason": "Progressing",
                    "message": "waiting", "lastTransitionTime": "2026-11-26T10:00:00Z"}]}]}})
    }

    /// What the cache keeps: all of it, less what slimming drops.
    fn slimmed() -> Value {
        let mut want = set();
        want["metadata"]["managedFields"] = json!([]);
        want["metadata"]["annotations"] = json!({});
        want
    }

    #[test]
    fn a_service_set_read_from_text_reads_back_less_what_slimming_drops() {
        let text = set().to_string();
        let s: CachedSet = serde_json::from_str(&text).unwrap();
        assert_eq!(s.provider_name(), "ksm-flux");
        assert_eq!(
            s.templates().collect::<Vec<_>>(),
            ["nginx-4-11", "cert-manager"]
        );
        assert_eq!(s.spec(), set()["spec"]);
        assert_eq!(s.status(), Some(set()["status"].clone()));
        assert_eq!(s.to_json(&ar()), slimmed());
        assert_eq!(s.key(), ("kcm-system".into(), "dev".into()));
        assert_eq!(
            s.routing_view(),
            json!({"metadata": {"labels": {"ksm.k0rdent.mirantis.com/adapter": "flux"}},
                "spec": {"provider": {"name": "ksm-flux"}}})
        );
        // Packed: smaller than the text of the spec and status.
        let packed = s.spec.as_ref().unwrap().size() + s.status.as_ref().unwrap().size();
        let text = set()["spec"].to_string().len() + set()["status"].to_string().len();
        assert!(packed < text, "{packed} >= {text}");
    }

    #[test]
    fn a_service_set_read_from_a_buffered_map_as_kube_reads_lists() {
        // kube's lists flatten their type fields, so their items come from a buffered map
        // (serde's, as here from a Value), not from the text.
        let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {},
            "items": [set()]});
        let list: kube::core::ObjectList<CachedSet> = serde_json::from_value(list).unwrap();
        assert_eq!(list.items[0].to_json(&ar()), slimmed());
        let from_text: kube::core::ObjectList<CachedSet> = serde_json::from_str(
            &json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [set()]})
                .to_string(),
        )
        .unwrap();
        assert_eq!(from_text.items[0].to_json(&ar()), slimmed());
    }

    #[test]
    fn a_service_set_without_spec_or_status_reads_as_empty() {
        let s: CachedSet =
            serde_json::from_value(json!({"metadata": {"name": "a", "namespace": "n"}})).unwrap();
        assert_eq!(s.provider_name(), "");
        assert_eq!(s.templates().count(), 0);
        assert_eq!(s.spec(), json!({}));
        assert_eq!(s.status(), None);
        let s: CachedSet = serde_json::from_str(
            r#"{"metadata": {"name": "a"}, "spec": {"services": [{"name": "x"}]}, "status": null}"#,
        )
        .unwrap();
        assert_eq!(s.templates().collect::<Vec<_>>(), [""]);
        assert_eq!(s.status(), None);
    }

    #[test]
    fn a_malformed_service_set_is_a_clear_error() {
        let bad = |spec: Value| {
            let v = json!({"metadata": {"name": "a", "namespace": "n"}, "spec": spec});
            serde_json::from_str::<CachedSet>(&v.to_string())
                .unwrap_err()
                .to_string()
        };
        let e = bad(json!({"services": "nginx"}));
        assert!(e.starts_with("ServiceSet n/a: spec: invalid type"), "{e}");
        let e = bad(json!({"provider": {"name": 3}}));
        assert!(
            e.contains("ServiceSet n/a: spec: invalid type: integer"),
            "{e}"
        );
        let e = bad(json!("text"));
        assert!(e.contains("ServiceSet n/a: spec"), "{e}");
        // Not JSON at all, or metadata of the wrong shape: serde's error, no panic.
        assert!(serde_json::from_str::<CachedSet>(r#"{"metadata": 1}"#).is_err());
        assert!(serde_json::from_str::<CachedSet>(r#"{"spec": {"#).is_err());
    }
}
