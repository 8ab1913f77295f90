//! `spec.serviceSpec` as kcm sees it: the CRD defaults the API server applies, the provider
//! config (`StateManagementProviderConfigFromServiceSpec`), and the services kcm writes into
//! the ServiceSet (`ResolveServicesToApply` + `BuildServicesList`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::gojson::{
    DRIFT_EXCLUSION, F, HELM_OPTIONS, PATCH_SELECTOR, POLICY_REF, TEMPLATE_RESOURCE_REF,
    VALUES_FROM, go_roundtrip,
};
use crate::api::kcm::{
    DEFAULT_PROVIDER, DEFAULT_SERVICE_NAMESPACE, ServiceSource, ServiceTemplate,
};
use crate::api::kinds;
use crate::api::meta::Object;

fn set_default(m: &mut Map<String, Value>, key: &str, v: Value) {
    // The API server prunes nulls of non-nullable fields before defaulting.
    if matches!(m.get(key), None | Some(Value::Null)) {
        m.insert(key.to_string(), v);
    }
}

fn for_each_item(m: &mut Map<String, Value>, key: &str, f: impl Fn(&mut Map<String, Value>)) {
    if let Some(Value::Array(items)) = m.get_mut(key) {
        for it in items {
            if let Value::Object(o) = it {
                f(o);
            }
        }
    }
}

fn sub_object<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    match m.get_mut(key) {
        Some(Value::Object(o)) => Some(o),
        _ => None,
    }
}

/// `spec.serviceSpec` with the CD/MCS CRD defaults applied.
///
/// The defaults (`priority: 100`, `syncMode: Continuous`, `stopOnConflict: false`,
/// `continueOnError: false`, service `namespace: default`, the helmOptions and
/// policyRefs/templateResourceRefs item defaults) are applied by the API server, so an
/// object read from the cluster always has them; a manifest from a file may not, so they
/// are applied here. `spec.serviceSpec` itself has no default: when it is absent, nothing
/// below it is defaulted (kcm then sees a zero ServiceSpec).
pub(super) fn defaulted_service_spec(
    obj: &Value,
    display: &str,
) -> Result<Map<String, Value>, String> {
    let mut ss = match ServiceSource(obj).service_spec() {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(format!("{display}: spec.serviceSpec must be an object")),
    };
    set_default(&mut ss, "syncMode", "Continuous".into());
    set_default(&mut ss, "priority", 100.into());
    set_default(&mut ss, "stopOnConflict", false.into());
    set_default(&mut ss, "continueOnError", false.into());
    for_each_item(&mut ss, "templateResourceRefs", |r| {
        set_default(r, "ignoreStatusChanges", false.into());
        set_default(r, "optional", false.into());
    });
    for_each_item(&mut ss, "policyRefs", |r| {
        set_default(r, "deploymentType", "Remote".into());
        set_default(r, "optional", false.into());
        set_default(r, "skipNamespaceCreation", false.into());
        set_default(r, "tier", 100.into());
    });
    for_each_item(&mut ss, "services", |s| {
        set_default(s, "namespace", "default".into());
        if let Some(ho) = sub_object(s, "helmOptions") {
            default_helm_options(ho);
        }
    });
    Ok(ss)
}

/// The `helmOptions` defaults; identical in the CD, MCS, ServiceTemplate and ServiceSet CRDs.
fn default_helm_options(ho: &mut Map<String, Value>) {
    if let Some(o) = sub_object(ho, "installOptions") {
        set_default(o, "createNamespace", true.into());
        set_default(o, "disableHooks", false.into());
        set_default(o, "replace", true.into());
        set_default(o, "takeOwnership", false.into());
    }
    if let Some(o) = sub_object(ho, "uninstallOptions") {
        set_default(o, "disableHooks", false.into());
    }
    if let Some(o) = sub_object(ho, "upgradeOptions") {
        for k in [
            "cleanupOnFail",
            "disableHooks",
            "force",
            "recreate",
            "resetThenReuseValues",
            "resetValues",
            "reuseValues",
            "subNotes",
            "takeOwnership",
            "upgradeCRDs",
        ] {
            set_default(o, k, false.into());
        }
        set_default(o, "maxHistory", 2.into());
    }
}

/// `StateManagementProviderConfigFromServiceSpec` (util.go). Returns the
/// `StateManagementProviderConfig` as JSON (`config`, `name`, `selfManagement`, all omitempty).
pub(super) fn provider_config(
    ss: &Map<String, Value>,
    ctx: &str,
) -> Result<Map<String, Value>, String> {
    let path = |f: &str| format!("{ctx}: spec.serviceSpec.{f}");
    let provider = match ss.get("provider") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(format!("{} must be an object", path("provider"))),
    };
    let name = match provider.get("name") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(format!("{} must be a string", path("provider.name"))),
    };
    // *apiextv1.JSON: a JSON null leaves the pointer nil.
    let config = provider.get("config").filter(|c| !c.is_null()).cloned();
    let self_management = match provider.get("selfManagement") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(format!(
                "{} must be a boolean",
                path("provider.selfManagement")
            ));
        }
    };

    let mut out = Map::new();
    match (name.is_empty(), config) {
        // Neither name nor config: default provider, config from the deprecated fields.
        (true, None) => {
            out.insert("config".into(), Value::Object(deprecated_config(ss, ctx)?));
            out.insert("name".into(), DEFAULT_PROVIDER.into());
        }
        // Config only: default provider, the user's config (deprecated fields dropped).
        (true, Some(c)) => {
            out.insert("config".into(), c);
            out.insert("name".into(), DEFAULT_PROVIDER.into());
        }
        // Name only: that provider, no config (deprecated fields dropped).
        (false, None) => {
            out.insert("name".into(), name.into());
        }
        // Both: the provider as given.
        (false, Some(c)) => {
            out.insert("config".into(), c);
            out.insert("name".into(), name.into());
        }
    }
    if self_management {
        out.insert("selfManagement".into(), true.into());
    }
    Ok(out)
}

/// The JSON kcm builds from the deprecated ServiceSpec fields (all omitempty; note
/// `reload` -> `reloader`).
fn deprecated_config(ss: &Map<String, Value>, ctx: &str) -> Result<Map<String, Value>, String> {
    let p = |f: &str| format!("{ctx}: spec.serviceSpec.{f}");
    let mut cfg = Map::new();
    let fields: [(&str, &str, &F); 9] = [
        ("syncMode", "syncMode", &F::Str),
        (
            "templateResourceRefs",
            "templateResourceRefs",
            &F::List(TEMPLATE_RESOURCE_REF),
        ),
        ("policyRefs", "policyRefs", &F::List(POLICY_REF)),
        ("driftIgnore", "driftIgnore", &F::List(PATCH_SELECTOR)),
        (
            "driftExclusions",
            "driftExclusions",
            &F::List(DRIFT_EXCLUSION),
        ),
        ("priority", "priority", &F::Int),
        ("stopOnConflict", "stopOnConflict", &F::Bool),
        ("reload", "reloader", &F::Bool),
        ("continueOnError", "continueOnError", &F::Bool),
    ];
    for (src, dst, f) in fields {
        if let Some(v) = go_roundtrip(ss.get(src), f, &p(src))? {
            cfg.insert(dst.to_string(), v);
        }
    }
    Ok(cfg)
}

struct Svc {
    name: String,
    namespace: String, // effective
    template: String,
    version: String,
    values: String,
    values_from: Option<Value>,
    helm_options: Option<Value>,
    helm_action: Option<Value>,
    depends_on: Vec<(String, String)>,
    disable: bool,
}

fn effective_namespace(ns: &str) -> String {
    if ns.is_empty() {
        DEFAULT_SERVICE_NAMESPACE.to_string()
    } else {
        ns.to_string()
    }
}

fn opt_str(m: &Map<String, Value>, key: &str, path: &str) -> Result<String, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{path}.{key} must be a string")),
    }
}

fn decode_service(v: &Value, path: &str) -> Result<Svc, String> {
    let Value::Object(m) = v else {
        return Err(format!("{path} must be an object"));
    };
    let name = opt_str(m, "name", path)?;
    if name.is_empty() {
        return Err(format!("{path}.name is required"));
    }
    let template = opt_str(m, "template", path)?;
    if template.is_empty() {
        return Err(format!("{path} ({name}): template is required"));
    }
    let mut depends_on = Vec::new();
    match m.get("dependsOn") {
        None | Some(Value::Null) => {}
        Some(Value::Array(deps)) => {
            for (i, d) in deps.iter().enumerate() {
                let dp = format!("{path}.dependsOn[{i}]");
                let Value::Object(dm) = d else {
                    return Err(format!("{dp} must be an object"));
                };
                depends_on.push((
                    effective_namespace(&opt_str(dm, "namespace", &dp)?),
                    opt_str(dm, "name", &dp)?,
                ));
            }
        }
        Some(_) => return Err(format!("{path}.dependsOn must be a list")),
    }
    let disable = match m.get("disable") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(format!("{path}.disable must be a boolean")),
    };
    Ok(Svc {
        namespace: effective_namespace(&opt_str(m, "namespace", path)?),
        version: opt_str(m, "version", path)?,
        values: opt_str(m, "values", path)?,
        values_from: go_roundtrip(
            m.get("valuesFrom"),
            &F::List(VALUES_FROM),
            &format!("{path}.valuesFrom"),
        )?,
        helm_options: go_roundtrip(
            m.get("helmOptions"),
            &F::OptObj(HELM_OPTIONS),
            &format!("{path}.helmOptions"),
        )?,
        helm_action: go_roundtrip(
            m.get("helmAction"),
            &F::OptStr,
            &format!("{path}.helmAction"),
        )?,
        name,
        template,
        depends_on,
        disable,
    })
}

/// `ResolveServiceVersions` for one service: `spec.version`, then
/// `spec.helm.chartSpec.version`, then the template name. The ServiceTemplate is looked
/// up in the ServiceSet namespace. A template without `metadata.namespace` is taken to
/// be in that namespace (a manifest file). `chartSpec.version` has the CRD default `*`.
fn resolve_version(svc: &Svc, ss_namespace: &str, templates: &[Value]) -> Result<String, String> {
    if !svc.version.is_empty() {
        return Ok(svc.version.clone());
    }
    let tpl = templates.iter().find(|t| {
        let kind_ok = t
            .get("kind")
            .and_then(Value::as_str)
            .is_none_or(|k| k == kinds::SERVICE_TEMPLATE.kind);
        let ns = Object(t).namespace();
        kind_ok && Object(t).name() == svc.template && (ns.is_empty() || ns == ss_namespace)
    });
    let Some(tpl) = tpl else {
        return Err(format!(
            "failed to fetch template {ss_namespace}/{}: ServiceTemplate not found among the {} \
             given (service {}/{} has no version, so kcm reads it from the template)",
            svc.template,
            templates.len(),
            svc.namespace,
            svc.name
        ));
    };
    let mut version = ServiceTemplate(tpl).version().to_string();
    if version.is_empty()
        && let Some(Value::Object(cs)) = ServiceTemplate(tpl).chart_spec()
    {
        version = match cs.get("version") {
            None | Some(Value::Null) => "*".to_string(), // CRD default
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(format!(
                    "ServiceTemplate {}: spec.helm.chartSpec.version must be a string",
                    svc.template
                ));
            }
        };
    }
    if version.is_empty() {
        version = svc.template.clone();
    }
    Ok(version)
}

/// `ResolveServicesToApply` + `BuildServicesList` with no stored ServiceSet, in the
/// converged state (every dependency eventually Deployed).
pub(super) fn resolve_services(
    ss: &Map<String, Value>,
    ss_namespace: &str,
    templates: &[Value],
    ctx: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Value>, String> {
    let items = match ss.get("services") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(format!("{ctx}: spec.serviceSpec.services must be a list")),
    };
    let mut desired = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let mut svc = decode_service(it, &format!("{ctx}: spec.serviceSpec.services[{i}]"))?;
        // Versions are resolved for every desired service, disabled ones included.
        svc.version = resolve_version(&svc, ss_namespace, templates)?;
        desired.push(svc);
    }

    // FilterServiceDependencies keys services by (effective namespace, name); a duplicate
    // key keeps the last definition.
    let mut by_key: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, s) in desired.iter().enumerate() {
        by_key.insert((s.namespace.clone(), s.name.clone()), i);
    }
    if by_key.len() != desired.len() {
        notes.push(
            "duplicate services (same namespace/name): kcm keeps the last of each".to_string(),
        );
    }
    for s in &desired {
        for d in &s.depends_on {
            if !by_key.contains_key(d) {
                return Err(format!(
                    "service {}/{} depends on {}/{} which is not present in the desired services list",
                    s.namespace, s.name, d.0, d.1
                ));
            }
        }
    }

    // Converged state: a service is deployed once all its dependencies are, and a disabled
    // service is never written (so never Deployed). Least fixpoint: cycles never deploy.
    let mut deployable: BTreeSet<(String, String)> = BTreeSet::new();
    loop {
        let before = deployable.len();
        for (k, &i) in &by_key {
            let s = &desired[i];
            if !s.disable && s.depends_on.iter().all(|d| deployable.contains(d)) {
                deployable.insert(k.clone());
            }
        }
        if deployable.len() == before {
            break;
        }
    }

    let mut out = Vec::new();
    let mut disabled = Vec::new();
    let mut blocked = Vec::new();
    let mut waits = false;
    // BTreeMap iteration = sorted by (namespace, name), as kcm sorts the eligible services.
    for (k, &i) in &by_key {
        let s = &desired[i];
        if s.disable {
            disabled.push(format!("{}/{}", k.0, k.1));
            continue;
        }
        if !deployable.contains(k) {
            blocked.push(format!("{}/{}", k.0, k.1));
            continue;
        }
        if !s.depends_on.is_empty() {
            waits = true;
        }
        out.push(make_service(s));
    }
    if !disabled.is_empty() {
        notes.push(format!("disabled, left out: {}", disabled.join(", ")));
    }
    if !blocked.is_empty() {
        notes.push(format!(
            "left out, their dependencies never deploy (disabled or cyclic): {}",
            blocked.join(", ")
        ));
    }
    if waits {
        notes.push(
            "services with dependsOn are shown as converged: kcm adds each only after its \
             dependencies are Deployed"
                .to_string(),
        );
    }
    Ok(out)
}

/// `makeService`: the `ServiceWithValues` kcm writes, as stored (ServiceSet CRD defaults
/// re-applied to helmOptions).
fn make_service(s: &Svc) -> Value {
    let mut m = Map::new();
    if let Some(Value::Object(ho)) = &s.helm_options {
        let mut ho = ho.clone();
        default_helm_options(&mut ho);
        m.insert("helmOptions".into(), Value::Object(ho));
    }
    m.insert("version".into(), s.version.clone().into());
    if let Some(a) = &s.helm_action {
        m.insert("helmAction".into(), a.clone());
    }
    m.insert("name".into(), s.name.clone().into());
    m.insert("namespace".into(), s.namespace.clone().into());
    m.insert("template".into(), s.template.clone().into());
    if !s.values.is_empty() {
        m.insert("values".into(), s.values.clone().into());
    }
    if let Some(vf) = &s.values_from {
        m.insert("valuesFrom".into(), vf.clone());
    }
    Value::Object(m)
}
