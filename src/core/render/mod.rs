//! ServiceSet → Flux objects: the desired state of the Flux adapter. `render` prints it and
//! `run` applies it, through this one function.
//!
//! Inputs are the ServiceSet and the ServiceTemplates it names (as `kubectl get -o yaml`
//! exports them, status included); the output is the objects, in service order, with a
//! per-service outcome and diagnostics. A service that cannot be rendered is reported and
//! skipped; the others are rendered. Nothing here reads Secrets: `valuesFrom` is passed on
//! as a reference.

pub mod codes;
mod helm;
mod kustomize;
pub mod provider;

use serde_json::{Map, Value, json};

use crate::api::kcm::{Service, ServiceSet, ServiceTemplate};
use crate::api::names::{is_dns1123_label, is_dns1123_subdomain};
use crate::api::{kinds, naming};
use crate::core::crds;
use crate::diag::{Diagnostic, Severity};

pub use crate::api::kcm::ServiceType;
pub use helm::merged_helm_options;
pub use provider::ProviderConfig;

/// What a ServiceSet is rendered from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub service_set: &'a Value,
    /// ServiceTemplates (of any namespace; a service's template is looked up in the
    /// ServiceSet's namespace, as kcm does).
    pub templates: &'a [Value],
}

/// What became of one service of the ServiceSet.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Rendered into `objects[index]`.
    Rendered { index: usize },
    /// `helmAction: Uninstall`: no object (deleting the HelmRelease uninstalls the release).
    Uninstall,
    /// Cannot be rendered; the message says why (the adapter writes it into the service's
    /// failureMessage).
    Failed { message: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServiceResult {
    pub name: String,
    pub namespace: String,
    pub template: String,
    pub service_type: Option<ServiceType>,
    pub outcome: Outcome,
}

#[derive(Debug, Default)]
pub struct Rendered {
    pub objects: Vec<Value>,
    pub services: Vec<ServiceResult>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Rendered {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
}

/// What every object of the ServiceSet shares.
struct SetContext<'a> {
    name: &'a str,
    namespace: &'a str,
    /// The kubeconfig Secret of the target cluster; None when deploying to the management
    /// cluster (self-management).
    kubeconfig_secret: Option<String>,
    paused: bool,
    config: ProviderConfig,
    owner: Option<Value>,
}

/// Renders a ServiceSet into Flux objects.
pub fn render(inputs: &Inputs) -> Rendered {
    let mut out = Rendered::default();
    let set = ServiceSet(inputs.service_set);
    let (name, namespace) = (set.name(), set.meta().namespace_or_default());
    if set.meta().kind() != kinds::SERVICE_SET.kind || name.is_empty() {
        out.diagnostics.push(Diagnostic::error(
            codes::INVALID_SERVICESET,
            "not a ServiceSet with a name",
        ));
        return out;
    }
    let config = match provider::parse(set.provider_config()) {
        Ok(c) => c,
        Err(errors) => {
            let message = format!("invalid provider config: {}", errors.join("; "));
            for (i, e) in errors.iter().enumerate() {
                let mut d = Diagnostic::error(
                    codes::PROVIDER_CONFIG,
                    format!("ServiceSet {namespace}/{name}: {e}"),
                );
                if i + 1 == errors.len() {
                    d = d.help(provider_keys_help());
                }
                out.diagnostics.push(d);
            }
            // Nothing can be rendered with a configuration the adapter does not understand.
            for svc in set.services() {
                out.services.push(service_result(
                    svc,
                    None,
                    Outcome::Failed {
                        message: message.clone(),
                    },
                ));
            }
            return out;
        }
    };
    let ctx = SetContext {
        name,
        namespace,
        kubeconfig_secret: (!set.self_management())
            .then(|| naming::kubeconfig_secret(set.cluster())),
        paused: set.paused(),
        config,
        owner: set.meta().uid_if_set().map(|uid| {
            naming::controller_ref(kinds::KCM_API_VERSION, kinds::SERVICE_SET.kind, name, uid)
        }),
    };

    let mut names: Vec<(String, String)> = Vec::new();
    for svc in set.services() {
        let result = render_service(&ctx, svc, inputs.templates, &mut names, &mut out);
        out.services.push(result);
    }
    out
}

fn service_result(
    svc: Service,
    service_type: Option<ServiceType>,
    outcome: Outcome,
) -> ServiceResult {
    ServiceResult {
        name: svc.name().to_string(),
        namespace: svc.namespace().to_string(),
        template: svc.template().to_string(),
        service_type,
        outcome,
    }
}

fn provider_keys_help() -> String {
    let keys: Vec<String> = provider::KEYS
        .iter()
        .map(|(k, what)| format!("{k}: {what}"))
        .collect();
    format!(
        "the Flux adapter reads these keys of spec.provider.config:\n{}",
        keys.join("\n")
    )
}

/// A problem of one service: a diagnostic and the service's failure message.
struct Problem {
    code: &'static str,
    message: String,
    help: Option<String>,
}

impl Problem {
    fn new(code: &'static str, message: impl Into<String>) -> Problem {
        Problem {
            code,
            message: message.into(),
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Problem {
        self.help = Some(help.into());
        self
    }
}

fn render_service(
    ctx: &SetContext,
    svc: Service,
    templates: &[Value],
    names: &mut Vec<(String, String)>,
    out: &mut Rendered,
) -> ServiceResult {
    let svc_name = svc.name();
    let label = format!("service {svc_name:?}");
    let fail = |out: &mut Rendered, ty: Option<ServiceType>, problems: Vec<Problem>| {
        let message = problems
            .iter()
            .map(|p| p.message.clone())
            .collect::<Vec<_>>()
            .join("; ");
        for p in problems {
            let mut d = Diagnostic::error(p.code, format!("{label}: {}", p.message));
            if let Some(h) = p.help {
                d = d.help(h);
            }
            out.diagnostics.push(d);
        }
        service_result(svc, ty, Outcome::Failed { message })
    };

    if svc.uninstall() {
        out.diagnostics.push(
            Diagnostic::new(
                codes::UNINSTALL,
                Severity::Info,
                format!("{label}: helmAction is Uninstall: no object is rendered (the adapter deletes the HelmRelease, which uninstalls the release)"),
            ),
        );
        return service_result(svc, Some(ServiceType::Helm), Outcome::Uninstall);
    }

    // The template, in the ServiceSet's namespace (kcm resolves it there).
    let template_name = svc.template();
    let Some(template) = templates.iter().map(ServiceTemplate).find(|t| {
        t.meta().kind() == kinds::SERVICE_TEMPLATE.kind
            && t.name() == template_name
            && t.namespace() == ctx.namespace
    }) else {
        let elsewhere: Vec<&str> = templates
            .iter()
            .map(ServiceTemplate)
            .filter(|t| t.name() == template_name)
            .map(|t| t.namespace())
            .collect();
        let mut p = Problem::new(
            codes::TEMPLATE_MISSING,
            format!(
                "ServiceTemplate {}/{template_name} not found",
                ctx.namespace
            ),
        );
        p = if elsewhere.is_empty() {
            p.help("pass the templates with --templates (kubectl get servicetemplates -n <namespace> -o yaml)")
        } else {
            p.help(format!(
                "a template of that name is in namespace {}: kcm looks for it in the ServiceSet's namespace",
                elsewhere.join(", ")
            ))
        };
        return fail(out, None, vec![p]);
    };
    let service_type = template.service_type();
    if template.valid() != Some(true) {
        let why = template.validation_error();
        let message = if !template.validated() {
            format!(
                "ServiceTemplate {}/{template_name} has no status yet (kcm has not validated it)",
                ctx.namespace
            )
        } else if why.is_empty() {
            format!(
                "ServiceTemplate {}/{template_name} is not valid",
                ctx.namespace
            )
        } else {
            format!(
                "ServiceTemplate {}/{template_name} is not valid: {why}",
                ctx.namespace
            )
        };
        return fail(
            out,
            service_type,
            vec![Problem::new(codes::TEMPLATE_INVALID, message)],
        );
    }
    let Some(service_type) = service_type else {
        return fail(
            out,
            None,
            vec![Problem::new(
                codes::TEMPLATE_INVALID,
                format!(
                    "ServiceTemplate {}/{template_name} has none of helm, kustomize, resources",
                    ctx.namespace
                ),
            )],
        );
    };

    // Names and labels.
    let object_name = naming::flux_object_name(ctx.name, svc_name);
    let svc_namespace = svc.namespace();
    let mut problems = Vec::new();
    if !is_dns1123_subdomain(&object_name) {
        problems.push(Problem::new(
            codes::NAME_INVALID,
            format!("object name {object_name:?} (<serviceset>-<service>) is not a valid Kubernetes name (DNS-1123 subdomain, at most 253 characters)"),
        ));
    }
    if !is_dns1123_label(svc_namespace) {
        problems.push(Problem::new(
            codes::NAME_INVALID,
            format!("namespace {svc_namespace:?} is not a valid namespace name (DNS-1123 label, at most 63 characters)"),
        ));
    }
    if let Some((_, other)) = names.iter().find(|(n, _)| *n == object_name) {
        problems.push(
            Problem::new(
                codes::NAME_COLLISION,
                format!("object name {object_name:?} is already used by service {other:?}"),
            )
            .help("give the services distinct names: the object name is <serviceset>-<service>"),
        );
    }
    if !problems.is_empty() {
        return fail(out, Some(service_type), problems);
    }
    let metadata = metadata(ctx, &object_name, svc_name);
    let built = match service_type {
        ServiceType::Helm => helm::helm_release(
            ctx,
            svc.json(),
            template.0,
            metadata,
            &mut out.diagnostics,
            &label,
        ),
        ServiceType::Kustomize | ServiceType::Resource => kustomize::kustomization(
            ctx,
            svc.json(),
            template.0,
            service_type,
            metadata,
            &mut out.diagnostics,
            &label,
        ),
    };
    let object = match built {
        Ok(o) => o,
        Err(problems) => return fail(out, Some(service_type), problems),
    };
    // The translation must produce what Flux accepts: check it against the real CRD.
    if let Some(violations) = crds::validate(&object)
        && !violations.is_empty()
    {
        let problems = violations
            .iter()
            .map(|v| {
                Problem::new(
                    codes::OUTPUT_INVALID,
                    format!("rendered object fails the Flux CRD: {v}"),
                )
            })
            .collect();
        return fail(out, Some(service_type), problems);
    }
    names.push((object_name, svc_name.to_string()));
    out.objects.push(object);
    service_result(
        svc,
        Some(service_type),
        Outcome::Rendered {
            index: out.objects.len() - 1,
        },
    )
}

fn metadata(ctx: &SetContext, name: &str, service: &str) -> Map<String, Value> {
    let labels = naming::flux_object_labels(ctx.name, service, ctx.config.priority);
    let mut m = Map::new();
    m.insert("name".into(), name.into());
    m.insert("namespace".into(), ctx.namespace.into());
    m.insert("labels".into(), Value::Object(labels));
    if let Some(owner) = &ctx.owner {
        m.insert("ownerReferences".into(), json!([owner]));
    }
    m
}

/// `spec.kubeConfig` for objects that deploy to the ServiceSet's cluster.
fn kube_config(ctx: &SetContext) -> Option<Value> {
    ctx.kubeconfig_secret
        .as_ref()
        .map(|name| json!({"secretRef": {"name": name, "key": naming::KUBECONFIG_SECRET_KEY}}))
}

#[cfg(test)]
mod tests;
