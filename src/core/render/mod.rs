//! ServiceSet → Flux objects: the desired state of the Flux adapter. `render` prints it and
//! `run` applies it, through this one function.
//!
//! Inputs are the ServiceSet and the ServiceTemplates it names (as `kubectl get -o yaml`
//! exports them, status included); the output is the objects, in service order, with a
//! per-service outcome and diagnostics. A service that cannot be rendered is reported and
//! skipped; the others are rendered. Nothing here reads Secrets: `valuesFrom` is passed on
//! as a reference.

pub mod derive;
mod helm;
mod kustomize;
pub mod provider;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::core::crds;
use crate::diag::{Diagnostic, Severity};

pub use provider::ProviderConfig;

pub const LABEL_MANAGED: &str = "ksm.k0rdent.mirantis.com/managed";
pub const LABEL_SERVICESET: &str = "ksm.k0rdent.mirantis.com/serviceset";
pub const LABEL_SERVICE: &str = "ksm.k0rdent.mirantis.com/service";
pub const LABEL_PRIORITY: &str = "ksm.k0rdent.mirantis.com/priority";
pub const ANNOTATION_PAUSED: &str = "k0rdent.mirantis.com/service-set-paused";
pub const KCM_API_VERSION: &str = "k0rdent.mirantis.com/v1beta1";
pub const HELMRELEASE_API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";
pub const KUSTOMIZATION_API_VERSION: &str = "kustomize.toolkit.fluxcd.io/v1";

/// Codes of render findings.
pub mod codes {
    /// The ServiceSet itself cannot be rendered (not a ServiceSet, no name...).
    pub const INVALID_SERVICESET: &str = "KSM500";
    pub const TEMPLATE_MISSING: &str = "KSM501";
    pub const TEMPLATE_INVALID: &str = "KSM502";
    pub const VALUES_INVALID: &str = "KSM503";
    pub const NAME_INVALID: &str = "KSM504";
    pub const PROVIDER_CONFIG: &str = "KSM505";
    pub const SOURCE_UNSUPPORTED: &str = "KSM506";
    pub const NAME_COLLISION: &str = "KSM507";
    pub const UNINSTALL: &str = "KSM508";
    pub const NO_EQUIVALENT: &str = "KSM509";
    pub const VALUES_TEMPLATED: &str = "KSM510";
    pub const HELM_OPTION_INVALID: &str = "KSM511";
    /// A rendered object fails its Flux CRD: a bug of the translation, never expected.
    pub const OUTPUT_INVALID: &str = "KSM599";
}

/// What a ServiceSet is rendered from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub service_set: &'a Value,
    /// ServiceTemplates (of any namespace; a service's template is looked up in the
    /// ServiceSet's namespace, as kcm does).
    pub templates: &'a [Value],
}

/// The service type as kcm reports it in `status.services[].type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ServiceType {
    Helm,
    Kustomize,
    Resource,
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

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Renders a ServiceSet into Flux objects.
pub fn render(inputs: &Inputs) -> Rendered {
    let mut out = Rendered::default();
    let set = inputs.service_set;
    let (name, namespace) = (s(set, "/metadata/name"), s(set, "/metadata/namespace"));
    if set.get("kind").and_then(Value::as_str) != Some("ServiceSet") || name.is_empty() {
        out.diagnostics.push(Diagnostic::error(
            codes::INVALID_SERVICESET,
            "not a ServiceSet with a name",
        ));
        return out;
    }
    let namespace = if namespace.is_empty() {
        "default"
    } else {
        namespace
    };
    let services: &[Value] = set
        .pointer("/spec/services")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);

    let config = match provider::parse(set.pointer("/spec/provider/config")) {
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
            for svc in services {
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
    let cluster = s(set, "/spec/cluster");
    let self_management = set
        .pointer("/spec/provider/selfManagement")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || cluster.is_empty();
    let ctx = SetContext {
        name,
        namespace,
        kubeconfig_secret: (!self_management).then(|| format!("{cluster}-kubeconfig")),
        paused: set
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .is_some_and(|a| a.contains_key(ANNOTATION_PAUSED)),
        config,
        owner: set
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .map(|uid| {
                json!({"apiVersion": KCM_API_VERSION, "kind": "ServiceSet", "name": name,
                   "uid": uid, "controller": true, "blockOwnerDeletion": true})
            }),
    };

    let mut names: Vec<(String, String)> = Vec::new();
    for svc in services {
        let result = render_service(&ctx, svc, inputs.templates, &mut names, &mut out);
        out.services.push(result);
    }
    out
}

fn service_result(
    svc: &Value,
    service_type: Option<ServiceType>,
    outcome: Outcome,
) -> ServiceResult {
    let ns = s(svc, "/namespace");
    ServiceResult {
        name: s(svc, "/name").to_string(),
        namespace: if ns.is_empty() {
            "default".into()
        } else {
            ns.to_string()
        },
        template: s(svc, "/template").to_string(),
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
    svc: &Value,
    templates: &[Value],
    names: &mut Vec<(String, String)>,
    out: &mut Rendered,
) -> ServiceResult {
    let svc_name = s(svc, "/name");
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

    if svc.pointer("/helmAction").and_then(Value::as_str) == Some("Uninstall") {
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
    let template_name = s(svc, "/template");
    let Some(template) = templates.iter().find(|t| {
        t.get("kind").and_then(Value::as_str) == Some("ServiceTemplate")
            && s(t, "/metadata/name") == template_name
            && (s(t, "/metadata/namespace") == ctx.namespace)
    }) else {
        let elsewhere: Vec<&str> = templates
            .iter()
            .filter(|t| s(t, "/metadata/name") == template_name)
            .map(|t| s(t, "/metadata/namespace"))
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
    let service_type = if template.pointer("/spec/helm").is_some() {
        Some(ServiceType::Helm)
    } else if template.pointer("/spec/kustomize").is_some() {
        Some(ServiceType::Kustomize)
    } else if template.pointer("/spec/resources").is_some() {
        Some(ServiceType::Resource)
    } else {
        None
    };
    if template.pointer("/status/valid").and_then(Value::as_bool) != Some(true) {
        let why = s(template, "/status/validationError");
        let message = if template.pointer("/status/valid").is_none() {
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
    let object_name = format!("{}-{svc_name}", ctx.name);
    let svc_namespace = {
        let ns = s(svc, "/namespace");
        if ns.is_empty() { "default" } else { ns }
    };
    let mut problems = Vec::new();
    if !provider::is_dns1123_subdomain(&object_name) {
        problems.push(Problem::new(
            codes::NAME_INVALID,
            format!("object name {object_name:?} (<serviceset>-<service>) is not a valid Kubernetes name (DNS-1123 subdomain, at most 253 characters)"),
        ));
    }
    if !provider::is_dns1123_label(svc_namespace) {
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
        ServiceType::Helm => {
            helm::helm_release(ctx, svc, template, metadata, &mut out.diagnostics, &label)
        }
        ServiceType::Kustomize | ServiceType::Resource => kustomize::kustomization(
            ctx,
            svc,
            template,
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
    let mut labels = Map::new();
    labels.insert(LABEL_MANAGED.into(), "true".into());
    labels.insert(LABEL_SERVICESET.into(), label_value(ctx.name).into());
    labels.insert(LABEL_SERVICE.into(), label_value(service).into());
    if let Some(p) = ctx.config.priority {
        labels.insert(LABEL_PRIORITY.into(), p.to_string().into());
    }
    let mut m = Map::new();
    m.insert("name".into(), name.into());
    m.insert("namespace".into(), ctx.namespace.into());
    m.insert("labels".into(), Value::Object(labels));
    if let Some(owner) = &ctx.owner {
        m.insert("ownerReferences".into(), json!([owner]));
    }
    m
}

/// A label value for a name: the name itself when it is a valid label value (at most 63
/// characters), otherwise a prefix and a hash of it, so that long names still select.
pub fn label_value(name: &str) -> String {
    let valid = name.len() <= 63
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && name
            .bytes()
            .next()
            .is_none_or(|c| c.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_none_or(|c| c.is_ascii_alphanumeric());
    if valid {
        return name.to_string();
    }
    let digest = Sha256::digest(name.as_bytes());
    let hash: String = digest[..5].iter().map(|b| format!("{b:02x}")).collect();
    let prefix: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(52)
        .collect();
    let prefix = prefix.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if prefix.is_empty() {
        hash
    } else {
        format!("{prefix}-{hash}")
    }
}

/// `spec.kubeConfig` for objects that deploy to the ServiceSet's cluster.
fn kube_config(ctx: &SetContext) -> Option<Value> {
    ctx.kubeconfig_secret
        .as_ref()
        .map(|name| json!({"secretRef": {"name": name, "key": "value"}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_stay_valid() {
        assert_eq!(label_value("dev-cluster"), "dev-cluster");
        let long = "x".repeat(80);
        let v = label_value(&long);
        assert!(v.len() <= 63, "{v}");
        assert_ne!(label_value(&long), label_value(&"x".repeat(81)));
    }
}

#[cfg(test)]
mod render_tests {
    use super::*;
    use serde_json::json;

    fn template(name: &str, spec: Value, status: Value) -> Value {
        json!({"apiVersion": KCM_API_VERSION, "kind": "ServiceTemplate",
               "metadata": {"name": name, "namespace": "kcm-system"}, "spec": spec, "status": status})
    }

    fn chart_template() -> Value {
        template(
            "nginx-4-11-0",
            json!({"helm": {"chartSpec": {"chart": "ingress-nginx", "version": "4.11.0",
                   "interval": "10m", "sourceRef": {"kind": "HelmRepository", "name": "k0rdent-catalog"}}}}),
            json!({"valid": true, "chartRef": {"kind": "HelmChart", "name": "nginx-4-11-0", "namespace": "kcm-system"}}),
        )
    }

    fn set(services: Value) -> Value {
        json!({"apiVersion": KCM_API_VERSION, "kind": "ServiceSet",
               "metadata": {"name": "dev", "namespace": "kcm-system", "uid": "u-1"},
               "spec": {"cluster": "dev", "provider": {"name": "ksm-flux"}, "services": services}})
    }

    fn run(set: &Value, templates: &[Value]) -> Rendered {
        render(&Inputs {
            service_set: set,
            templates,
        })
    }

    fn messages(r: &Rendered) -> Vec<String> {
        r.diagnostics
            .iter()
            .map(|d| format!("{} {}", d.code, d.message))
            .collect()
    }

    #[test]
    fn helm_chart_ref_release() {
        let r = run(
            &set(
                json!([{"name": "ingress", "namespace": "ingress", "template": "nginx-4-11-0",
                         "values": "controller:\n  replicaCount: 2\n"}]),
            ),
            &[chart_template()],
        );
        assert!(r.diagnostics.is_empty(), "{:?}", messages(&r));
        let hr = &r.objects[0];
        assert_eq!(hr["metadata"]["name"], "dev-ingress");
        assert_eq!(hr["metadata"]["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(
            hr["spec"]["chartRef"],
            json!({"kind": "HelmChart", "name": "nginx-4-11-0", "namespace": "kcm-system"})
        );
        assert_eq!(
            hr["spec"]["values"],
            json!({"controller": {"replicaCount": 2}})
        );
        assert_eq!(
            hr["spec"]["kubeConfig"],
            json!({"secretRef": {"name": "dev-kubeconfig", "key": "value"}})
        );
        assert_eq!(hr["spec"]["releaseName"], "ingress");
        assert_eq!(hr["spec"]["storageNamespace"], "ingress");
        assert_eq!(r.services[0].outcome, Outcome::Rendered { index: 0 });
        assert_eq!(r.services[0].service_type, Some(ServiceType::Helm));
    }

    #[test]
    fn values_errors_point_inside_the_values_text() {
        let r = run(
            &set(
                json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0", "values": "a: 1\nb: [\n"},
                         {"name": "b", "namespace": "x", "template": "nginx-4-11-0", "values": "- 1\n- 2\n"}]),
            ),
            &[chart_template()],
        );
        let m = messages(&r);
        assert!(
            m[0].starts_with("KSM503 service \"a\": values are not valid YAML at line 3, column 1"),
            "{m:?}"
        );
        assert_eq!(
            m[1],
            "KSM503 service \"b\": values are a YAML sequence, not a mapping (Helm values are key: value pairs)"
        );
        assert!(r.objects.is_empty());
        assert!(
            matches!(&r.services[1].outcome, Outcome::Failed { message } if message.contains("not a mapping"))
        );
    }

    #[test]
    fn missing_invalid_and_elsewhere_templates() {
        let mut elsewhere = chart_template();
        elsewhere["metadata"]["namespace"] = json!("other");
        let mut invalid = chart_template();
        invalid["metadata"]["name"] = json!("broken");
        invalid["status"] = json!({"valid": false, "validationError": "chart not found"});
        let r = run(
            &set(
                json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0"},
                         {"name": "b", "namespace": "x", "template": "broken"}]),
            ),
            &[elsewhere, invalid],
        );
        let m = messages(&r);
        assert_eq!(
            m[0],
            "KSM501 service \"a\": ServiceTemplate kcm-system/nginx-4-11-0 not found"
        );
        assert!(
            r.diagnostics[0]
                .help
                .as_deref()
                .unwrap()
                .contains("namespace other")
        );
        assert_eq!(
            m[1],
            "KSM502 service \"b\": ServiceTemplate kcm-system/broken is not valid: chart not found"
        );
    }

    #[test]
    fn uninstall_paused_self_management_and_collisions() {
        let mut s = set(json!([
            {"name": "a", "namespace": "x", "template": "nginx-4-11-0", "helmAction": "Uninstall"},
            {"name": "b", "namespace": "x", "template": "nginx-4-11-0"},
            {"name": "b", "namespace": "y", "template": "nginx-4-11-0"}]));
        s["metadata"]["annotations"] = json!({ANNOTATION_PAUSED: ""});
        s["spec"]["cluster"] = json!("");
        s["spec"]["provider"]["selfManagement"] = json!(true);
        let r = run(&s, &[chart_template()]);
        assert_eq!(r.services[0].outcome, Outcome::Uninstall);
        assert_eq!(r.objects.len(), 1);
        assert_eq!(r.objects[0]["spec"]["suspend"], true);
        assert!(r.objects[0]["spec"].get("kubeConfig").is_none());
        let m = messages(&r);
        assert!(
            m.iter()
                .any(|m| m.starts_with("KSM508 service \"a\": helmAction is Uninstall")),
            "{m:?}"
        );
        assert!(
            m.iter().any(|m| m
                == "KSM507 service \"b\": object name \"dev-b\" is already used by service \"b\""),
            "{m:?}"
        );
    }

    #[test]
    fn release_name_limit_and_bad_provider_config() {
        let long = "a".repeat(54);
        let r = run(
            &set(json!([{"name": long, "namespace": "x", "template": "nginx-4-11-0"}])),
            &[chart_template()],
        );
        assert!(messages(&r)[0].contains("has 54 characters; Helm allows at most 53"));
        let mut s = set(json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0"}]));
        s["spec"]["provider"]["config"] = json!({"interval": "5 minutes"});
        let r = run(&s, &[chart_template()]);
        assert!(r.objects.is_empty());
        assert!(
            matches!(&r.services[0].outcome, Outcome::Failed { message } if message.starts_with("invalid provider config: spec.provider.config.interval"))
        );
    }

    #[test]
    fn helm_options_merge_and_map() {
        let mut t = chart_template();
        t["spec"]["helmOptions"] = json!({"atomic": true, "timeout": "10m", "labels": {"a": "1"}});
        let r = run(
            &set(
                json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0",
                "helmOptions": {"atomic": false, "wait": true, "skipCRDs": true, "labels": {"b": "2"},
                                "upgradeOptions": {"maxHistory": 3, "upgradeCRDs": true}}}]),
            ),
            &[t],
        );
        let spec = &r.objects[0]["spec"];
        assert_eq!(spec["timeout"], "10m");
        assert_eq!(
            spec["install"],
            json!({"disableWait": false, "remediation": {"remediateLastFailure": false},
                                          "crds": "Skip", "createNamespace": true})
        );
        assert_eq!(spec["upgrade"]["crds"], "CreateReplace");
        assert_eq!(spec["maxHistory"], 3);
        assert!(
            messages(&r)
                .iter()
                .any(|m| m.contains("helmOptions.labels has no HelmRelease equivalent"))
        );
    }

    #[test]
    fn kustomize_sources() {
        let git = template(
            "app",
            json!({"kustomize": {"deploymentType": "Remote", "path": "./deploy",
                   "localSourceRef": {"kind": "GitRepository", "name": "apps"}}}),
            json!({"valid": true}),
        );
        let cm = template(
            "cm",
            json!({"resources": {"deploymentType": "Local", "localSourceRef": {"kind": "ConfigMap", "name": "m"}}}),
            json!({"valid": true}),
        );
        let r = run(
            &set(
                json!([{"name": "a", "namespace": "apps", "template": "app"},
                         {"name": "b", "namespace": "apps", "template": "cm"}]),
            ),
            &[git, cm],
        );
        let k = &r.objects[0];
        assert_eq!(k["kind"], "Kustomization");
        assert_eq!(
            k["spec"]["sourceRef"],
            json!({"kind": "GitRepository", "name": "apps", "namespace": "kcm-system"})
        );
        assert_eq!(k["spec"]["prune"], true);
        assert_eq!(r.services[0].service_type, Some(ServiceType::Kustomize));
        assert!(messages(&r)[0].starts_with("KSM506 service \"b\": ServiceTemplate kcm-system/cm: a Flux Kustomization cannot use a ConfigMap"));
        assert_eq!(r.services[1].service_type, Some(ServiceType::Resource));
    }
}
