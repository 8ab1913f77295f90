//! Step 3 of kcm's `profileSpec`: the services as Helm charts, Kustomization references
//! and policy references, in service order (`getHelmCharts`, `getKustomizationRefs`,
//! `getPolicyRefs`).

use serde_json::{Map, Value};

use super::{Builder, Failed, codes, helm};
use crate::api::kcm::{ServiceTemplate, ServiceType, TemplateSource};
use crate::api::kinds;
use crate::api::sveltos::{
    REASON_HELM_CHARTS_BUILD_FAILED, REASON_KUSTOMIZATION_REFS_BUILD_FAILED,
    REASON_POLICY_REFS_BUILD_FAILED, REASON_PROFILE_NOT_READY,
};
use crate::diag::Severity;

/// collected (the build goes on), the first other problem ends it.
pub(super) fn helm_charts(b: &mut Builder) -> Result<Vec<Value>, Failed> {
    let ss = b.ss;
    let ns = ss.namespace();
    let mut charts = Vec::new();
    let mut invalid: Vec<String> = Vec::new();
    let fail = |error: String| Failed {
        reason: REASON_HELM_CHARTS_BUILD_FAILED,
        error: format!("failed to build helm charts\n{error}"),
    };
    for svc in ss.services() {
        let t_name = svc.template();
        let Some(template) = b.objects.get(&kinds::SERVICE_TEMPLATE, ns, t_name) else {
            let e = format!(
                "failed to get ServiceTemplate {ns}/{t_name}: {}",
                helm::not_found(&kinds::SERVICE_TEMPLATE, t_name)
            );
            b.service_problems.insert(svc.name().into(), e.clone());
            let help = if b.objects.has_kind(&kinds::SERVICE_TEMPLATE) {
                format!(
                    "kubectl get servicetemplates -n {ns}  # kcm looks the template up in the ServiceSet's namespace"
                )
            } else {
                "pass the templates with --templates (kubectl get servicetemplates -n <namespace> -o yaml)".to_string()
            };
            b.error(
                codes::TEMPLATE_MISSING,
                format!(
                    "service {:?}: ServiceTemplate {ns}/{t_name} not found",
                    svc.name()
                ),
                Some(help),
            );
            return Err(fail(e));
        };
        let template = ServiceTemplate(template);
        if template.source_spec(ServiceType::Helm).is_null() {
            continue;
        }
        if template.valid() != Some(true) {
            let e = format!("ServiceTemplate {ns}/{t_name} is invalid");
            invalid.push(e.clone());
            b.service_problems.insert(svc.name().into(), e);
            template_invalid(b, svc.name(), template);
        }
        match helm::helm_chart(ns, svc, template, b.objects) {
            Ok(c) => charts.push(c),
            Err(e) => {
                b.service_problems
                    .insert(svc.name().into(), e.message.clone());
                let help = match e.code {
                    codes::SOURCE_MISSING => "pass the template's HelmChart and its repository with --templates (kubectl get helmcharts,helmrepositories,gitrepositories -n <namespace> -o yaml)".to_string(),
                    codes::CHART_VERSION => "kcm needs a semantic version: the HelmChart's spec.version or its artifact revision".to_string(),
                    _ => format!("kubectl get servicetemplate -n {ns} {t_name} -o yaml"),
                };
                let mut message = format!("service {:?}: {}", svc.name(), e.message);
                if let Some(o) = &e.object {
                    message.push_str(&format!(" ({o})"));
                }
                b.error(e.code, message, Some(help));
                return Err(fail(e.message));
            }
        }
    }
    if !invalid.is_empty() {
        return Err(fail(invalid.join("\n")));
    }
    Ok(charts)
}

fn template_invalid(b: &mut Builder, service: &str, template: ServiceTemplate) {
    let why = template.validation_error();
    let (ns, name) = (template.namespace(), template.name());
    let message = if !template.validated() {
        format!(
            "service {service:?}: ServiceTemplate {ns}/{name} has no status yet (kcm has not validated it)"
        )
    } else if why.is_empty() {
        format!("service {service:?}: ServiceTemplate {ns}/{name} is not valid")
    } else {
        format!("service {service:?}: ServiceTemplate {ns}/{name} is not valid: {why}")
    };
    b.error(
        codes::TEMPLATE_INVALID,
        message,
        Some(format!(
            "kubectl get servicetemplate -n {ns} {name} -o yaml  # status.validationError"
        )),
    );
}

/// kcm's `getKustomizationRefs` (Kustomize) or `getPolicyRefs` (Resource).
pub(super) fn source_refs(b: &mut Builder, ty: ServiceType) -> Result<Vec<Value>, Failed> {
    let ss = b.ss;
    let ns = ss.namespace();
    let (reason, prefix) = match ty {
        ServiceType::Kustomize => (
            REASON_KUSTOMIZATION_REFS_BUILD_FAILED,
            "failed to build kustomization refs",
        ),
        _ => (
            REASON_POLICY_REFS_BUILD_FAILED,
            "failed to build policy refs",
        ),
    };
    let field = match ty {
        ServiceType::Kustomize => ServiceType::Kustomize,
        _ => ServiceType::Resource,
    };
    let mut refs = Vec::new();
    let mut invalid: Vec<String> = Vec::new();
    for svc in ss.services() {
        let Some(template) = b.objects.get(&kinds::SERVICE_TEMPLATE, ns, svc.template()) else {
            continue; // reported by the Helm step, which stops first
        };
        let template = ServiceTemplate(template);
        let source = template.source_spec(field);
        if source.is_null() {
            continue;
        }
        if template.valid() != Some(true) {
            let e = format!("ServiceTemplate {ns}/{} is invalid", template.name());
            invalid.push(e.clone());
            b.service_problems.insert(svc.name().into(), e);
            template_invalid(b, svc.name(), template);
        }
        let Some(status) = template.source_status() else {
            let e = format!(
                "ServiceTemplate {ns}/{} has no status.sourceStatus: kcm's adapter reads it without a check, and its reconcile of the ServiceSet panics",
                template.name()
            );
            b.service_problems.insert(svc.name().into(), e.clone());
            b.error(
                codes::TEMPLATE_INVALID,
                format!("service {:?}: {e}", svc.name()),
                Some(format!(
                    "wait for kcm to reconcile the template's source: kubectl get servicetemplate -n {ns} {} -o jsonpath='{{.status}}'",
                    template.name()
                )),
            );
            return Err(Failed {
                reason: REASON_PROFILE_NOT_READY,
                error: "runtime error: invalid memory address or nil pointer dereference".into(),
            });
        };
        let mut r = Map::new();
        r.insert("namespace".into(), status.namespace().into());
        r.insert("name".into(), status.name().into());
        r.insert("kind".into(), status.kind().into());
        let source = TemplateSource(source);
        let path = source.path();
        if !path.is_empty() {
            r.insert("path".into(), path.into());
        }
        let svc_ns = svc.namespace_as_written();
        if ty == ServiceType::Kustomize && !svc_ns.is_empty() {
            r.insert("targetNamespace".into(), svc_ns.into());
        }
        let dt = source.deployment_type();
        if !dt.is_empty() {
            r.insert("deploymentType".into(), dt.into());
        }
        if ty == ServiceType::Kustomize
            && let Some(vf) = helm::values_from(svc, ns)
        {
            r.insert("valuesFrom".into(), vf);
        }
        let ignored: Vec<&str> = [
            ("values", !svc.values().trim().is_empty()),
            (
                "valuesFrom",
                ty == ServiceType::Resource
                    && svc
                        .values_from()
                        .and_then(Value::as_array)
                        .is_some_and(|a| !a.is_empty()),
            ),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
        .collect();
        if !ignored.is_empty() {
            b.note(
                codes::NO_EQUIVALENT,
                Severity::Warning,
                format!(
                    "service {:?}: {} ignored for a {ty:?} service (kcm's adapter does not pass {} to Sveltos)",
                    svc.name(),
                    ignored.join(" and "),
                    if ignored.len() == 1 { "it" } else { "them" }
                ),
                "",
            );
        }
        refs.push(Value::Object(r));
    }
    if !invalid.is_empty() {
        return Err(Failed {
            reason,
            error: format!("{prefix}\n{}", invalid.join("\n")),
        });
    }
    Ok(refs)
}
