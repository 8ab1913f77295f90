//! Typed views of the Flux objects: the HelmRelease or Kustomization of a service, and the
//! sources they read (kinds in [`super::kinds::FLUX_SOURCES`]).

use crate::api::meta::At;
use serde_json::Value;

use super::kinds;
use super::meta::{Object, ObjectRef, bool_at, str_at};

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
        self.0.at("/spec/suspend").and_then(Value::as_bool) == Some(true)
    }

    /// The kind of the source the object names (`spec.chartRef`, `spec.chart.spec.sourceRef`
    /// or `spec.sourceRef`), or "".
    pub fn source_kind(self) -> &'a str {
        self.0
            .at("/spec/chartRef/kind")
            .or_else(|| self.0.at("/spec/chart/spec/sourceRef/kind"))
            .or_else(|| self.0.at("/spec/sourceRef/kind"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The source the object's state depends on: the chartRef'd HelmChart or OCIRepository,
    /// for a `chart.spec` HelmRelease the HelmChart helm-controller generates
    /// ([`Self::generated_chart`]), or the Kustomization's sourceRef. A reference without a
    /// namespace is in the object's.
    pub fn source(self) -> Option<SourceRef> {
        if let Some(r) = self.0.at("/spec/chartRef") {
            return Some(self.reference(r));
        }
        if self.0.at("/spec/chart/spec/sourceRef").is_some() {
            return self.generated_chart();
        }
        self.0.at("/spec/sourceRef").map(|r| self.reference(r))
    }

    /// A HelmRelease's `spec.chartRef` (a HelmChart or an OCIRepository).
    pub fn chart_ref(self) -> Option<SourceRef> {
        self.0.at("/spec/chartRef").map(|r| self.reference(r))
    }

    /// A `chart.spec` HelmRelease's repository (`spec.chart.spec.sourceRef`).
    pub fn chart_repository(self) -> Option<SourceRef> {
        self.0
            .at("/spec/chart/spec/sourceRef")
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

    /// `spec.kubeConfig.secretRef.name`: the kubeconfig Secret of the cluster it deploys to
    /// ("" for the management cluster).
    pub fn kube_config_secret(self) -> &'a str {
        str_at(self.0, "/spec/kubeConfig/secretRef/name")
    }
    /// `spec.targetNamespace` ("" when unset).
    pub fn target_namespace(self) -> &'a str {
        str_at(self.0, "/spec/targetNamespace")
    }
    /// A HelmRelease's `spec.releaseName` ("" when unset).
    pub fn release_name(self) -> &'a str {
        str_at(self.0, "/spec/releaseName")
    }
    /// A HelmRelease's `spec.storageNamespace` ("" when unset).
    pub fn storage_namespace(self) -> &'a str {
        str_at(self.0, "/spec/storageNamespace")
    }
    /// A Kustomization's `spec.path` ("" when unset).
    pub fn path(self) -> &'a str {
        str_at(self.0, "/spec/path")
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
            || nonempty_arr(st.at("/inventory/entries"))
    }
}

/// A Flux source: a HelmChart, HelmRepository, GitRepository, OCIRepository or Bucket. Each
/// field is its kind's; on another kind it reads as empty.
#[derive(Debug, Clone, Copy)]
pub struct FluxSource<'a>(pub &'a Value);

impl<'a> FluxSource<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// A HelmChart's `spec.chart`: the chart's name in its repository.
    pub fn chart(self) -> &'a str {
        str_at(self.0, "/spec/chart")
    }
    /// A HelmChart's `spec.version` (a semver range or a version).
    pub fn chart_version(self) -> &'a str {
        str_at(self.0, "/spec/version")
    }
    /// A HelmChart's `spec.sourceRef`: the repository it is fetched from.
    pub fn chart_source(self) -> ObjectRef<'a> {
        ObjectRef(self.0.at("/spec/sourceRef").unwrap_or(&Value::Null))
    }
    /// `status.artifact.revision`: what the source last fetched ("" before it did).
    pub fn artifact_revision(self) -> &'a str {
        str_at(self.0, "/status/artifact/revision")
    }
    /// A HelmRepository's `spec.type` is `oci`.
    pub fn is_oci(self) -> bool {
        str_at(self.0, "/spec/type") == "oci"
    }
    /// A HelmRepository's `spec.insecure` (plain HTTP) is true.
    pub fn insecure(self) -> bool {
        bool_at(self.0, "/spec/insecure") == Some(true)
    }
    /// `spec.url`.
    pub fn url(self) -> &'a str {
        str_at(self.0, "/spec/url")
    }
    /// `spec.secretRef`: the credentials (None when absent or not an object).
    pub fn secret_ref(self) -> Option<ObjectRef<'a>> {
        self.object_ref("/spec/secretRef")
    }
    /// `spec.certSecretRef`: the CA (None when absent or not an object).
    pub fn cert_secret_ref(self) -> Option<ObjectRef<'a>> {
        self.object_ref("/spec/certSecretRef")
    }
    fn object_ref(self, pointer: &str) -> Option<ObjectRef<'a>> {
        self.0.at(pointer).filter(|v| v.is_object()).map(ObjectRef)
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

    #[test]
    fn source_view() {
        let chart = json!({"spec": {"chart": "c", "version": "1.x", "url": 1,
            "sourceRef": {"kind": "HelmRepository", "name": "r"}, "secretRef": "s",
            "certSecretRef": {"name": "ca"}, "insecure": true, "type": "oci"},
            "status": {"artifact": {"revision": "1.2.3"}}});
        let s = FluxSource(&chart);
        assert_eq!((s.chart(), s.chart_version()), ("c", "1.x"));
        assert_eq!(
            (s.chart_source().kind(), s.chart_source().name()),
            ("HelmRepository", "r")
        );
        assert_eq!((s.artifact_revision(), s.url()), ("1.2.3", ""));
        assert!(s.is_oci() && s.insecure() && s.secret_ref().is_none());
        assert_eq!(s.cert_secret_ref().map(|r| r.name()), Some("ca"));
        let bare = json!([]);
        let b = FluxSource(&bare);
        assert_eq!(
            (b.chart(), b.chart_source().name(), b.artifact_revision()),
            ("", "", "")
        );
        assert!(!b.is_oci() && !b.insecure() && b.secret_ref().is_none());
    }
}
