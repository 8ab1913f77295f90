//! Typed views of the Flux objects: the HelmRelease or Kustomization of a service, and the
//! sources they read (kinds in [`super::kinds::FLUX_SOURCES`]).

use serde_json::Value;

use super::kinds;
use super::meta::{Object, str_at};

/// A HelmRelease or a Kustomization.
#[derive(Debug, Clone, Copy)]
pub struct FluxObject<'a>(pub &'a Value);

/// A reference to a source: (kind, namespace, name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceRef {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl<'a> FluxObject<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }

    /// `spec.suspend` is true.
    pub fn suspended(self) -> bool {
        self.0.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true)
    }

    /// The kind of the source the object names (`spec.chartRef`, `spec.chart.spec.sourceRef`
    /// or `spec.sourceRef`), or "".
    pub fn source_kind(self) -> &'a str {
        self.0
            .pointer("/spec/chartRef/kind")
            .or_else(|| self.0.pointer("/spec/chart/spec/sourceRef/kind"))
            .or_else(|| self.0.pointer("/spec/sourceRef/kind"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The source the object's state depends on: the chartRef'd HelmChart or OCIRepository,
    /// for a `chart.spec` HelmRelease the HelmChart helm-controller generates
    /// ([`Self::generated_chart`]), or the Kustomization's sourceRef. A reference without a
    /// namespace is in the object's.
    pub fn source(self) -> Option<SourceRef> {
        if let Some(r) = self.0.pointer("/spec/chartRef") {
            return Some(self.reference(r));
        }
        if self.0.pointer("/spec/chart/spec/sourceRef").is_some() {
            return self.generated_chart();
        }
        self.0.pointer("/spec/sourceRef").map(|r| self.reference(r))
    }

    /// A HelmRelease's `spec.chartRef` (a HelmChart or an OCIRepository).
    pub fn chart_ref(self) -> Option<SourceRef> {
        self.0.pointer("/spec/chartRef").map(|r| self.reference(r))
    }

    /// A `chart.spec` HelmRelease's repository (`spec.chart.spec.sourceRef`).
    pub fn chart_repository(self) -> Option<SourceRef> {
        self.0
            .pointer("/spec/chart/spec/sourceRef")
            .map(|r| self.reference(r))
    }

    /// The HelmChart helm-controller generates for a `chart.spec` HelmRelease:
    /// `<namespace>-<name>` in the repository's namespace.
    pub fn generated_chart(self) -> Option<SourceRef> {
        let repo = self.chart_repository()?;
        let m = self.meta();
        Some(SourceRef {
            kind: kinds::HELM_CHART.kind.to_string(),
            namespace: repo.namespace,
            name: format!("{}-{}", m.namespace(), m.name()),
        })
    }

    fn reference(self, r: &Value) -> SourceRef {
        let namespace = match str_at(r, "/namespace") {
            "" => self.meta().namespace(),
            n => n,
        };
        SourceRef {
            kind: str_at(r, "/kind").to_string(),
            namespace: namespace.to_string(),
            name: str_at(r, "/name").to_string(),
        }
    }

    /// Something was tried: a reconcile recorded an attempt, a release or an applied revision.
    pub fn attempted(self) -> bool {
        let Some(st) = self.0.get("status") else {
            return false;
        };
        let nonempty_str = |k: &str| {
            st.get(k)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        };
        let nonempty_arr =
            |v: Option<&Value>| v.and_then(Value::as_array).is_some_and(|a| !a.is_empty());
        nonempty_str("lastAttemptedRevision")
            || nonempty_str("lastAppliedRevision")
            || nonempty_str("lastAttemptedReleaseAction")
            || st
                .get("lastAttemptedGeneration")
                .and_then(Value::as_i64)
                .is_some_and(|g| g > 0)
            || nonempty_arr(st.get("history"))
            || nonempty_arr(st.pointer("/inventory/entries"))
    }
}

/// The source kinds a Kustomization can read (`spec.sourceRef.kind`).
pub const KUSTOMIZATION_SOURCES: &[&kinds::Kind] = &[
    &kinds::GIT_REPOSITORY,
    &kinds::BUCKET,
    &kinds::OCI_REPOSITORY,
];

/// The `flux` CLI's word for a source kind (`flux get sources <word>`).
pub fn cli_source_word(kind: &str) -> &'static str {
    match kind {
        "GitRepository" => "git",
        "HelmRepository" => "helm",
        "HelmChart" => "chart",
        "OCIRepository" => "oci",
        "Bucket" => "bucket",
        _ => "all",
    }
}

/// The `flux` CLI's resource word of a Flux object kind (`flux get <word>`).
pub fn cli_object_word(kind: &str) -> &'static str {
    if kind == kinds::HELM_RELEASE.kind {
        "helmreleases"
    } else {
        "kustomizations"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sources_of_each_form() {
        let chart_ref = json!({"metadata": {"name": "r", "namespace": "n"},
            "spec": {"chartRef": {"kind": "OCIRepository", "name": "o"}}});
        assert_eq!(
            FluxObject(&chart_ref).source(),
            Some(SourceRef {
                kind: "OCIRepository".into(),
                namespace: "n".into(),
                name: "o".into()
            })
        );
        let chart = json!({"metadata": {"name": "r", "namespace": "n"},
            "spec": {"chart": {"spec": {"sourceRef": {"kind": "HelmRepository", "name": "h", "namespace": "s"}}}}});
        let f = FluxObject(&chart);
        assert_eq!(
            f.source().map(|s| (s.kind, s.namespace, s.name)),
            Some(("HelmChart".into(), "s".into(), "n-r".into()))
        );
        assert_eq!(f.source_kind(), "HelmRepository");
        assert_eq!(f.chart_repository().map(|s| s.name), Some("h".into()));
        let none = json!({"spec": 1});
        assert_eq!(FluxObject(&none).source(), None);
        assert!(!FluxObject(&none).attempted());
        assert!(FluxObject(&json!({"status": {"history": [{}]}})).attempted());
    }
}
