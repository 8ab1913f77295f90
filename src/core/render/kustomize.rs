//! Kustomize and Resources services → Kustomization (kustomize.toolkit.fluxcd.io/v1).
//!
//! The source comes from the template's SourceSpec (a GitRepository, Bucket or OCIRepository:
//! a Kustomization cannot read a ConfigMap or Secret), the path from the template, prune, wait,
//! timeout and interval from the provider config, the target namespace from the provider
//! config or the service. `deploymentType: Local` deploys to the management cluster.

use serde_json::{Map, Value};

use super::helm::source_ref;
use super::{Problem, ServiceType, SetContext, codes, kube_config};
use crate::api::flux::KUSTOMIZATION_SOURCES;
use crate::api::kcm::{Service, ServiceTemplate, TemplateSource};
use crate::api::kinds;
use crate::diag::{Diagnostic, Severity};

pub(super) fn kustomization(
    ctx: &SetContext,
    svc: &Value,
    template: &Value,
    service_type: ServiceType,
    metadata: Map<String, Value>,
    diags: &mut Vec<Diagnostic>,
    label: &str,
) -> Result<Value, Vec<Problem>> {
    let t = ServiceTemplate(template);
    let source = t.source_spec(service_type);
    let (kind, name, namespace) = source_ref(template, source).map_err(|p| vec![p])?;
    if !KUSTOMIZATION_SOURCES.iter().any(|k| k.kind == kind) {
        return Err(vec![Problem::new(
            codes::SOURCE_UNSUPPORTED,
            format!(
                "ServiceTemplate {}/{}: a Flux Kustomization cannot use a {kind} as its source (sourceRef kinds: GitRepository, Bucket, OCIRepository)",
                t.namespace(),
                t.name()
            ),
        )
        .help("store the manifests in a GitRepository, Bucket or OCIRepository (e.g. `flux push artifact`) and reference it")]);
    }
    for (what, set) in [
        ("values", !Service(svc).values().trim().is_empty()),
        (
            "valuesFrom",
            svc.get("valuesFrom")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty()),
        ),
        (
            "helmOptions",
            svc.get("helmOptions").is_some_and(|h| !h.is_null()),
        ),
    ] {
        if set {
            diags.push(Diagnostic::new(
                codes::NO_EQUIVALENT,
                Severity::Warning,
                format!("{label}: {what} is ignored for a {service_type:?} service (a Kustomization has no Helm values)"),
            ));
        }
    }
    let source = TemplateSource(source);
    let local = source.deployment_type() == "Local";
    let svc_namespace = Service(svc).namespace();
    let mut spec = Map::new();
    spec.insert("interval".into(), ctx.config.interval.clone().into());
    spec.insert("timeout".into(), ctx.config.timeout.clone().into());
    spec.insert("prune".into(), ctx.config.prune.into());
    spec.insert("wait".into(), ctx.config.wait.into());
    let path = source.path();
    if !path.is_empty() {
        spec.insert("path".into(), path.into());
    }
    let mut source_ref = Map::new();
    source_ref.insert("kind".into(), kind.into());
    source_ref.insert("name".into(), name.into());
    source_ref.insert("namespace".into(), namespace.into());
    spec.insert("sourceRef".into(), Value::Object(source_ref));
    spec.insert(
        "targetNamespace".into(),
        ctx.config
            .target_namespace
            .clone()
            .unwrap_or_else(|| svc_namespace.to_string())
            .into(),
    );
    if !local && let Some(kc) = kube_config(ctx) {
        spec.insert("kubeConfig".into(), kc);
    }
    if ctx.paused || ctx.config.suspend {
        spec.insert("suspend".into(), true.into());
    }
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), kinds::KUSTOMIZATION.api_version.into());
    obj.insert("kind".into(), "Kustomization".into());
    obj.insert("metadata".into(), Value::Object(metadata));
    obj.insert("spec".into(), Value::Object(spec));
    Ok(Value::Object(obj))
}
