//! A CustomResourceDefinition (apiextensions.k8s.io/v1, or the legacy v1beta1 single-version
//! form): the group, names, scope and versions the API server serves for a kind. The walk of
//! a version's openAPI schema (arbitrary shapes) is the schema room's; this view hands it the
//! schema.

use crate::api::meta::At;
use serde_json::Value;

use super::meta::{Object, bool_at, items_at, opt_str_at};

/// A borrowed view of a CustomResourceDefinition.
#[derive(Debug, Clone, Copy)]
pub struct CustomResourceDefinition<'a>(pub &'a Value);

impl<'a> CustomResourceDefinition<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// `spec` (None when absent).
    pub fn spec(self) -> Option<&'a Value> {
        self.meta().spec()
    }
    /// `spec.group`, if set.
    pub fn group(self) -> Option<&'a str> {
        opt_str_at(self.0, "/spec/group")
    }
    /// `spec.names.kind`, if set.
    pub fn defined_kind(self) -> Option<&'a str> {
        opt_str_at(self.0, "/spec/names/kind")
    }
    /// `spec.names.plural` ("" when unset).
    pub fn plural(self) -> &'a str {
        opt_str_at(self.0, "/spec/names/plural").unwrap_or("")
    }
    /// Whether the CRD defines `kind` in `group`.
    pub fn defines(self, group: &str, kind: &str) -> bool {
        self.group().unwrap_or("") == group && self.defined_kind().unwrap_or("") == kind
    }
    /// `spec.scope` (`Namespaced` when unset, the API server's default).
    pub fn scope(self) -> &'a str {
        opt_str_at(self.0, "/spec/scope").unwrap_or("Namespaced")
    }
    /// `spec.version`: the legacy single version, if set.
    pub fn legacy_version(self) -> Option<&'a str> {
        opt_str_at(self.0, "/spec/version")
    }
    /// `spec.validation.openAPIV3Schema`: the legacy schema of every version, if set.
    pub fn legacy_schema(self) -> Option<&'a Value> {
        self.0.at("/spec/validation/openAPIV3Schema")
    }
    /// `spec.subresources.status` is set (the legacy form's status subresource).
    pub fn legacy_status_subresource(self) -> bool {
        self.0
            .at("/spec/subresources/status")
            .is_some_and(|s| !s.is_null())
    }
    /// `spec.versions[]` (none when absent or not a list).
    pub fn versions(self) -> impl Iterator<Item = CrdVersion<'a>> {
        items_at(self.0, "/spec/versions").iter().map(CrdVersion)
    }
    /// `spec.versions[]` names `version`.
    pub fn has_version(self, version: &str) -> bool {
        self.versions().any(|v| v.name() == Some(version))
    }
    /// `version` is one of `spec.versions[]`, not marked `served: false`.
    pub fn serves(self, version: &str) -> bool {
        self.versions()
            .any(|v| v.name().unwrap_or("") == version && v.served() != Some(false))
    }
    /// A version has the status subresource: its own `subresources`, else the CRD's
    /// (`spec.subresources`), has `status` set.
    pub fn status_subresource(self, version: CrdVersion) -> bool {
        version
            .0
            .get("subresources")
            .or(self.0.at("/spec/subresources"))
            .and_then(|s| s.get("status"))
            .is_some_and(|s| !s.is_null())
    }
}

/// One `spec.versions[]` entry of a CustomResourceDefinition.
#[derive(Debug, Clone, Copy)]
pub struct CrdVersion<'a>(pub &'a Value);

impl<'a> CrdVersion<'a> {
    /// `name`, if set.
    pub fn name(self) -> Option<&'a str> {
        opt_str_at(self.0, "/name")
    }
    /// `served`, if set.
    pub fn served(self) -> Option<bool> {
        bool_at(self.0, "/served")
    }
    /// `storage`, if set.
    pub fn storage(self) -> Option<bool> {
        bool_at(self.0, "/storage")
    }
    /// `schema.openAPIV3Schema`, if set.
    pub fn schema(self) -> Option<&'a Value> {
        self.0.at("/schema/openAPIV3Schema")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crd_view() {
        let v = json!({"spec": {"group": "g.io", "names": {"kind": "W", "plural": "ws"},
            "subresources": {"status": {}},
            "versions": [{"name": "v1", "served": false, "storage": true},
                         {"name": "v2", "subresources": {}, "schema": {"openAPIV3Schema": {}}}]}});
        let c = CustomResourceDefinition(&v);
        assert!(c.defines("g.io", "W") && !c.defines("g.io", "X"));
        assert_eq!((c.plural(), c.scope()), ("ws", "Namespaced"));
        assert!(c.has_version("v1") && !c.serves("v1") && c.serves("v2"));
        let vs: Vec<_> = c.versions().collect();
        assert!(c.status_subresource(vs[0]) && !c.status_subresource(vs[1]));
        assert_eq!((vs[0].served(), vs[0].storage()), (Some(false), Some(true)));
        assert!(vs[1].schema().is_some() && vs[0].schema().is_none());
    }

    #[test]
    fn malformed_crd_reads_as_empty() {
        let v = json!({"spec": {"group": 1, "versions": {"name": "v1"}, "names": []}});
        let c = CustomResourceDefinition(&v);
        assert_eq!((c.group(), c.defined_kind(), c.plural()), (None, None, ""));
        assert_eq!(c.versions().count(), 0);
        assert!(!c.serves("v1") && !c.legacy_status_subresource());
    }
}
