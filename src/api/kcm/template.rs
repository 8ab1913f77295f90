//! kcm's templates: a ServiceTemplate (what a service deploys, and from which source) and a
//! ServiceTemplateChain or ClusterTemplateChain (the upgrades it allows).

use crate::api::meta::At;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::meta::{Object, ObjectRef, items_at, str_at};

/// A ServiceTemplate.
#[derive(Debug, Clone, Copy)]
pub struct ServiceTemplate<'a>(pub &'a Value);

/// What a ServiceTemplate deploys, as kcm reports it in `status.services[].type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServiceType {
    Helm,
    Kustomize,
    Resource,
}

impl<'a> ServiceTemplate<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    pub fn name(self) -> &'a str {
        self.meta().name()
    }
    pub fn namespace(self) -> &'a str {
        self.meta().namespace()
    }
    /// `spec.helm`, `spec.kustomize` or `spec.resources`, whichever is set first.
    pub fn service_type(self) -> Option<ServiceType> {
        if self.0.at("/spec/helm").is_some() {
            Some(ServiceType::Helm)
        } else if self.0.at("/spec/kustomize").is_some() {
            Some(ServiceType::Kustomize)
        } else if self.0.at("/spec/resources").is_some() {
            Some(ServiceType::Resource)
        } else {
            None
        }
    }
    /// `spec.helm`, `spec.kustomize` or `spec.resources` (Null when absent).
    pub fn source_spec(self, ty: ServiceType) -> &'a Value {
        let field = match ty {
            ServiceType::Helm => "/spec/helm",
            ServiceType::Kustomize => "/spec/kustomize",
            ServiceType::Resource => "/spec/resources",
        };
        self.0.at(field).unwrap_or(&Value::Null)
    }
    /// `spec.helmOptions`.
    pub fn helm_options(self) -> Option<&'a Value> {
        self.0.at("/spec/helmOptions")
    }
    /// `status.valid` (None before kcm validated it).
    pub fn valid(self) -> Option<bool> {
        self.0.at("/status/valid").and_then(Value::as_bool)
    }
    /// `status.valid` is present.
    pub fn validated(self) -> bool {
        self.0.at("/status/valid").is_some()
    }
    pub fn validation_error(self) -> &'a str {
        str_at(self.0, "/status/validationError")
    }
    /// `status.chartRef`: the HelmChart kcm made for a chartSpec or chartRef template.
    pub fn status_chart_ref(self) -> Option<ObjectRef<'a>> {
        self.0
            .at("/status/chartRef")
            .filter(|r| r.is_object())
            .map(ObjectRef)
    }
    /// `spec.version`.
    pub fn version(self) -> &'a str {
        str_at(self.0, "/spec/version")
    }
    /// `status.sourceStatus`: the Flux source kcm made or found for the template (None when
    /// absent or not an object).
    pub fn source_status(self) -> Option<ObjectRef<'a>> {
        self.0
            .at("/status/sourceStatus")
            .filter(|v| v.is_object())
            .map(ObjectRef)
    }
    /// `spec.helm.chartSource.path`.
    pub fn chart_source_path(self) -> &'a str {
        str_at(self.0, "/spec/helm/chartSource/path")
    }
    /// `spec.helm.chartSpec.version` ("" when unset).
    pub fn chart_spec_version(self) -> &'a str {
        str_at(self.0, "/spec/helm/chartSpec/version")
    }
    /// `status.chartVersion`: the chart version kcm found ("" when unset).
    pub fn status_chart_version(self) -> &'a str {
        str_at(self.0, "/status/chartVersion")
    }
    /// `spec.helm.chartSpec.chart` ("" when unset).
    pub fn chart_spec_chart(self) -> &'a str {
        str_at(self.0, "/spec/helm/chartSpec/chart")
    }
    /// `spec.helm.chartSpec.sourceRef` (None when absent or not an object).
    pub fn chart_spec_source_ref(self) -> Option<ObjectRef<'a>> {
        self.0
            .at("/spec/helm/chartSpec/sourceRef")
            .filter(|r| r.is_object())
            .map(ObjectRef)
    }
    /// `spec.helm.chartRef`: an existing HelmChart or OCIRepository (None when absent).
    pub fn chart_ref(self) -> Option<ObjectRef<'a>> {
        self.0
            .at("/spec/helm/chartRef")
            .filter(|r| r.is_object())
            .map(ObjectRef)
    }
    /// `spec.helm.chartSource` (None when absent or not an object).
    pub fn chart_source(self) -> Option<TemplateSource<'a>> {
        self.0
            .at("/spec/helm/chartSource")
            .filter(|r| r.is_object())
            .map(TemplateSource)
    }
    /// `spec.helm.chartSpec` (None when absent or not an object).
    pub fn chart_spec(self) -> Option<&'a Value> {
        self.0.at("/spec/helm/chartSpec").filter(|c| c.is_object())
    }
}

/// A ServiceTemplateChain or ClusterTemplateChain (`TemplateChainSpec`).
#[derive(Debug, Clone, Copy)]
pub struct TemplateChain<'a>(pub &'a Value);

impl<'a> TemplateChain<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// `spec.supportedTemplates[]`.
    pub fn supported(self) -> &'a [Value] {
        items_at(self.0, "/spec/supportedTemplates")
    }
    /// `spec.supportedTemplates[]`, each a view.
    pub fn supported_templates(self) -> impl Iterator<Item = SupportedTemplate<'a>> {
        self.supported().iter().map(SupportedTemplate)
    }
    /// The template is one of `spec.supportedTemplates[].name`.
    pub fn supports(self, template: &str) -> bool {
        self.supported_templates().any(|t| t.name() == template)
    }
}

/// One `spec.supportedTemplates[]` entry of a template chain.
#[derive(Debug, Clone, Copy)]
pub struct SupportedTemplate<'a>(pub &'a Value);

impl<'a> SupportedTemplate<'a> {
    pub fn name(self) -> &'a str {
        str_at(self.0, "/name")
    }
    /// `availableUpgrades[]` as (name, version), in order.
    pub fn available_upgrades(self) -> impl Iterator<Item = (&'a str, &'a str)> {
        items_at(self.0, "/availableUpgrades")
            .iter()
            .map(|u| (str_at(u, "/name"), str_at(u, "/version")))
    }
}

/// A template's `SourceSpec` (`spec.kustomize`, `spec.resources`, `spec.helm.chartSource`):
/// where its manifests or chart come from.
#[derive(Debug, Clone, Copy)]
pub struct TemplateSource<'a>(pub &'a Value);

impl<'a> TemplateSource<'a> {
    /// `localSourceRef`: an existing Flux source (None when absent).
    pub fn local_source_ref(self) -> Option<ObjectRef<'a>> {
        self.0.get("localSourceRef").map(ObjectRef)
    }
    /// `remoteSourceSpec`: the source kcm creates (None when absent).
    pub fn remote_source_spec(self) -> Option<&'a Value> {
        self.0.get("remoteSourceSpec")
    }
    pub fn path(self) -> &'a str {
        str_at(self.0, "/path")
    }
    /// The kind of source `remoteSourceSpec` makes (`git`, `oci`, `bucket`) and its URL (or
    /// a bucket's endpoint and name), as written.
    pub fn remote_source(self) -> Option<(&'a str, String)> {
        let spec = self.remote_source_spec()?.as_object()?;
        let (kind, body) = spec.iter().find(|(_, v)| v.is_object())?;
        let url = match kind.as_str() {
            "bucket" => format!(
                "{}/{}",
                str_at(body, "/endpoint"),
                str_at(body, "/bucketName")
            ),
            _ => str_at(body, "/url").to_string(),
        };
        Some((kind.as_str(), url))
    }
    /// `deploymentType`: `Local` or `Remote` ("" when unset).
    pub fn deployment_type(self) -> &'a str {
        str_at(self.0, "/deploymentType")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn template_view() {
        let v =
            json!({"spec": {"kustomize": {}}, "status": {"valid": false, "validationError": "e"}});
        let t = ServiceTemplate(&v);
        assert_eq!(t.service_type(), Some(ServiceType::Kustomize));
        assert_eq!(
            (t.valid(), t.validated(), t.validation_error()),
            (Some(false), true, "e")
        );
        assert!(t.status_chart_ref().is_none());
    }

    #[test]
    fn sources_chains_and_statuses() {
        let v = json!({"spec": {"helm": {"chartSource": {"path": "./c", "deploymentType": "Remote",
                "localSourceRef": {"kind": "GitRepository", "name": "g"}}, "chartSpec": {"version": "1.0"}}},
            "status": {"sourceStatus": {"kind": "GitRepository", "name": "g", "namespace": "n"},
                "chartRef": {"kind": "HelmChart", "name": "h"}}});
        let t = ServiceTemplate(&v);
        assert_eq!(
            (t.chart_source_path(), t.chart_spec_version()),
            ("./c", "1.0")
        );
        assert_eq!(t.source_status().map(|s| s.namespace()), Some("n"));
        assert_eq!(t.status_chart_ref().map(|r| r.kind()), Some("HelmChart"));
        let src = TemplateSource(&v["spec"]["helm"]["chartSource"]);
        assert_eq!((src.path(), src.deployment_type()), ("./c", "Remote"));
        assert_eq!(src.local_source_ref().map(|r| r.name()), Some("g"));
        assert!(src.remote_source_spec().is_none());
        let bad = json!({"status": {"sourceStatus": "x", "chartRef": []}});
        let t = ServiceTemplate(&bad);
        assert!(t.source_status().is_none() && t.status_chart_ref().is_none());
        let chain = json!({"spec": {"supportedTemplates": [{"name": "a-1",
            "availableUpgrades": [{"name": "a-2", "version": "2"}, {"name": "a-3"}]}, {"name": "a-2"}]}});
        let chain = TemplateChain(&chain);
        assert!(chain.supports("a-2") && !chain.supports("a-3"));
        let first = chain.supported_templates().next().unwrap();
        let ups: Vec<_> = first.available_upgrades().collect();
        assert_eq!(ups, [("a-2", "2"), ("a-3", "")]);
    }
}
