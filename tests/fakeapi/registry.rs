//! The resource types the fake server serves: built-ins and those of loaded CRDs.

use serde_json::{Value, json};

/// One served resource (a group and plural; served at one or more versions).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    pub group: String,
    /// Served versions; the first is the preferred one.
    pub versions: Vec<String>,
    pub kind: String,
    pub list_kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub status_subresource: bool,
    /// A custom resource (from a CRD): strategic merge patch is refused.
    pub custom: bool,
    /// `additionalPrinterColumns` per version, for `Table` output.
    pub printer_columns: Vec<(String, Vec<Value>)>,
}

impl ResourceType {
    /// `plural` or `plural.group`, as used in error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{}", self.group, version)
        }
    }

    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }

    pub fn key(&self) -> TypeKey {
        (self.group.clone(), self.plural.clone())
    }

    pub fn columns(&self, version: &str) -> &[Value] {
        self.printer_columns
            .iter()
            .find(|(v, _)| v == version)
            .map(|(_, c)| c.as_slice())
            .unwrap_or(&[])
    }

    /// Its entry in an `APIResourceList`, followed by its status subresource.
    pub fn discovery_entries(&self) -> Vec<Value> {
        let mut e = json!({
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        });
        if !self.short_names.is_empty() {
            e["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            e["categories"] = json!(self.categories);
        }
        let mut out = vec![e];
        if self.status_subresource {
            out.push(json!({
                "name": format!("{}/status", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        out
    }
}

/// `(group, plural)`: where a resource's objects are stored, whatever the version.
pub type TypeKey = (String, String);

#[allow(clippy::too_many_arguments)]
fn builtin(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    short: &[&str],
    namespaced: bool,
    status: bool,
    categories: &[&str],
) -> ResourceType {
    ResourceType {
        group: group.to_string(),
        versions: vec![version.to_string()],
        kind: kind.to_string(),
        list_kind: format!("{kind}List"),
        plural: plural.to_string(),
        singular: kind.to_lowercase(),
        short_names: short.iter().map(|s| s.to_string()).collect(),
        categories: categories.iter().map(|s| s.to_string()).collect(),
        namespaced,
        status_subresource: status,
        custom: false,
        printer_columns: Vec::new(),
    }
}

/// core/v1, apps/v1, apiextensions.k8s.io/v1, coordination.k8s.io/v1 and events.k8s.io/v1.
pub fn builtins() -> Vec<ResourceType> {
    let all = &["all"][..];
    vec![
        builtin(
            "",
            "v1",
            "Namespace",
            "namespaces",
            &["ns"],
            false,
            true,
            &[],
        ),
        builtin(
            "",
            "v1",
            "ConfigMap",
            "configmaps",
            &["cm"],
            true,
            false,
            &[],
        ),
        builtin("", "v1", "Secret", "secrets", &[], true, false, &[]),
        builtin("", "v1", "Service", "services", &["svc"], true, true, all),
        builtin("", "v1", "Pod", "pods", &["po"], true, true, all),
        builtin(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            &["sa"],
            true,
            false,
            &[],
        ),
        builtin("", "v1", "Event", "events", &["ev"], true, false, &[]),
        builtin("", "v1", "Node", "nodes", &["no"], false, true, &[]),
        builtin(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            &["deploy"],
            true,
            true,
            all,
        ),
        builtin(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            &["sts"],
            true,
            true,
            all,
        ),
        builtin(
            "apps",
            "v1",
            "DaemonSet",
            "daemonsets",
            &["ds"],
            true,
            true,
            all,
        ),
        builtin(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            &["rs"],
            true,
            true,
            all,
        ),
        builtin(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            &["crd", "crds"],
            false,
            true,
            &["api-extensions"],
        ),
        builtin(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            &[],
            true,
            false,
            &[],
        ),
        builtin(
            "events.k8s.io",
            "v1",
            "Event",
            "events",
            &["ev"],
            true,
            false,
            &[],
        ),
    ]
}

/// The resource type a `CustomResourceDefinition` defines.
pub fn from_crd(crd: &Value) -> Result<ResourceType, String> {
    let spec = crd.get("spec").ok_or("CRD without spec")?;
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let group = s(spec, "group").ok_or("spec.group is required")?;
    let names = spec.get("names").ok_or("spec.names is required")?;
    let kind = s(names, "kind").ok_or("spec.names.kind is required")?;
    let plural = s(names, "plural").ok_or("spec.names.plural is required")?;
    let singular = s(names, "singular").unwrap_or_else(|| kind.to_lowercase());
    let list_kind = s(names, "listKind").unwrap_or_else(|| format!("{kind}List"));
    let strs = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let short_names = strs(names.get("shortNames"));
    let categories = strs(names.get("categories"));
    let namespaced = s(spec, "scope").as_deref() != Some("Cluster");
    let mut versions = Vec::new();
    let mut status_subresource = false;
    let mut printer_columns = Vec::new();
    let mut storage_first = None;
    for v in spec
        .get("versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = s(v, "name") else { continue };
        if v.get("served").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        if v.pointer("/subresources/status").is_some() {
            status_subresource = true;
        }
        if let Some(cols) = v.get("additionalPrinterColumns").and_then(Value::as_array) {
            printer_columns.push((name.clone(), cols.clone()));
        }
        if v.get("storage").and_then(Value::as_bool) == Some(true) {
            storage_first = Some(name.clone());
        }
        versions.push(name);
    }
    if versions.is_empty() {
        return Err("spec.versions: no served version".into());
    }
    // The preferred version: the storage one (close to the real server's priority order).
    if let Some(st) = storage_first
        && let Some(i) = versions.iter().position(|v| *v == st)
    {
        let v = versions.remove(i);
        versions.insert(0, v);
    }
    Ok(ResourceType {
        group,
        versions,
        kind,
        list_kind,
        plural,
        singular,
        short_names,
        categories,
        namespaced,
        status_subresource,
        custom: true,
        printer_columns,
    })
}
