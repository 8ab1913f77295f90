//! Helm services → HelmRelease (helm.toolkit.fluxcd.io/v2).
//!
//! The chart: `chartRef` to the template's HelmChart (`status.chartRef`, for chartSpec and
//! chartRef templates) or to an OCIRepository (chartSource), `chart.spec` for charts in a
//! GitRepository or Bucket. The release: `releaseName` = service name, `targetNamespace` =
//! `storageNamespace` = service namespace (as Helm and kcm's sveltos adapter store it).
//! `helmOptions` (the template's, overridden field by field by the service's) map as in the
//! table of docs/helm-options.md.

use serde_json::{Map, Value, json};

use super::{Problem, SetContext, codes, kube_config};
use crate::api::duration::is_flux_duration;
use crate::api::kcm::{Service, ServiceTemplate, ServiceType, TemplateSource};
use crate::api::kinds;
use crate::diag::source::Source;
use crate::diag::yaml;
use crate::diag::{Diagnostic, Severity};

pub(super) fn helm_release(
    ctx: &SetContext,
    svc: &Value,
    template: &Value,
    metadata: Map<String, Value>,
    diags: &mut Vec<Diagnostic>,
    label: &str,
) -> Result<Value, Vec<Problem>> {
    let mut problems = Vec::new();
    let name = Service(svc).name();
    let namespace = Service(svc).namespace();
    if name.len() > 53 {
        problems.push(
            Problem::new(
                codes::NAME_INVALID,
                format!(
                    "release name {name:?} has {} characters; Helm allows at most 53",
                    name.len()
                ),
            )
            .help("shorten the service name: it is the Helm release name"),
        );
    }
    let chart = match chart_source(template) {
        Ok(c) => Some(c),
        Err(p) => {
            problems.push(p);
            None
        }
    };
    let values = match parse_values(svc, diags, label) {
        Ok(v) => v,
        Err(p) => {
            problems.push(p);
            None
        }
    };
    let options = merged_helm_options(template, svc);
    let mapped = match map_options(&options, diags, label) {
        Ok(m) => Some(m),
        Err(mut p) => {
            problems.append(&mut p);
            None
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let (chart_key, chart_value) = chart.expect("checked above");
    let mapped = mapped.expect("checked above");

    let mut spec = Map::new();
    spec.insert("interval".into(), ctx.config.interval.clone().into());
    spec.insert(
        "timeout".into(),
        mapped
            .timeout
            .clone()
            .unwrap_or_else(|| ctx.config.timeout.clone())
            .into(),
    );
    spec.insert("releaseName".into(), name.into());
    spec.insert("targetNamespace".into(), namespace.into());
    spec.insert("storageNamespace".into(), namespace.into());
    spec.insert(chart_key.into(), chart_value);
    for (key, value) in mapped.sections {
        spec.insert(key, value);
    }
    if let Some(kc) = kube_config(ctx) {
        spec.insert("kubeConfig".into(), kc);
    }
    if ctx.paused || ctx.config.suspend {
        spec.insert("suspend".into(), true.into());
    }
    if let Some(v) = values {
        spec.insert("values".into(), v);
    }
    if let Some(vf) = values_from(svc) {
        spec.insert("valuesFrom".into(), vf);
    }
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), kinds::HELM_RELEASE.api_version.into());
    obj.insert("kind".into(), "HelmRelease".into());
    obj.insert("metadata".into(), Value::Object(metadata));
    obj.insert("spec".into(), Value::Object(spec));
    Ok(Value::Object(obj))
}

/// `("chartRef", {...})` or `("chart", {"spec": {...}})` for the template.
fn chart_source(template: &Value) -> Result<(&'static str, Value), Problem> {
    let t = ServiceTemplate(template);
    let (t_name, t_ns) = (t.name(), t.namespace());
    let helm = t.source_spec(ServiceType::Helm);
    if helm.get("chartSpec").is_some() || helm.get("chartRef").is_some() {
        // kcm reconciles both into a HelmChart and records it in status.chartRef.
        let Some(r) = t.status_chart_ref() else {
            return Err(Problem::new(
                codes::TEMPLATE_INVALID,
                format!(
                    "ServiceTemplate {t_ns}/{t_name} has no status.chartRef yet (kcm has not reconciled its HelmChart)"
                ),
            ));
        };
        let ns = non_empty(r.namespace()).unwrap_or(t_ns);
        let kind = non_empty(r.kind()).unwrap_or("HelmChart");
        return Ok((
            "chartRef",
            json!({"kind": kind, "name": r.name(), "namespace": ns}),
        ));
    }
    let Some(source) = helm.get("chartSource") else {
        return Err(Problem::new(
            codes::TEMPLATE_INVALID,
            format!(
                "ServiceTemplate {t_ns}/{t_name}: spec.helm has none of chartSpec, chartRef, chartSource"
            ),
        ));
    };
    let (kind, name, ns) = source_ref(template, source)?;
    match kind.as_str() {
        "OCIRepository" => Ok((
            "chartRef",
            json!({"kind": kind, "name": name, "namespace": ns}),
        )),
        "GitRepository" | "Bucket" => {
            let path = TemplateSource(source).path();
            if path.is_empty() {
                return Err(Problem::new(
                    codes::TEMPLATE_INVALID,
                    format!(
                        "ServiceTemplate {t_ns}/{t_name}: a chart in a {kind} needs spec.helm.chartSource.path"
                    ),
                ));
            }
            Ok((
                "chart",
                json!({"spec": {
                    "chart": path,
                    "sourceRef": {"kind": kind, "name": name, "namespace": ns},
                }}),
            ))
        }
        other => Err(Problem::new(
            codes::SOURCE_UNSUPPORTED,
            format!(
                "ServiceTemplate {t_ns}/{t_name}: a HelmRelease cannot take its chart from a {other}"
            ),
        )),
    }
}

/// The Flux source of a template's SourceSpec: (kind, name, namespace).
pub(super) fn source_ref(
    template: &Value,
    source: &Value,
) -> Result<(String, String, String), Problem> {
    let t = ServiceTemplate(template);
    let (t_name, t_ns) = (t.name(), t.namespace());
    let source = TemplateSource(source);
    if let Some(local) = source.local_source_ref() {
        let ns = non_empty(local.namespace()).unwrap_or(t_ns);
        return Ok((local.kind().into(), local.name().into(), ns.into()));
    }
    if let Some(remote) = source.remote_source_spec() {
        // kcm creates the source named like the template, in its namespace, and records it in
        // status.sourceStatus once it exists.
        if let Some(st) = t.source_status() {
            return Ok((
                st.kind().into(),
                st.name().into(),
                non_empty(st.namespace()).unwrap_or(t_ns).into(),
            ));
        }
        let kind = if remote.get("git").is_some() {
            "GitRepository"
        } else if remote.get("bucket").is_some() {
            "Bucket"
        } else if remote.get("oci").is_some() {
            "OCIRepository"
        } else {
            return Err(Problem::new(
                codes::TEMPLATE_INVALID,
                format!(
                    "ServiceTemplate {t_ns}/{t_name}: remoteSourceSpec has none of git, bucket, oci"
                ),
            ));
        };
        return Ok((kind.into(), t_name.into(), t_ns.into()));
    }
    Err(Problem::new(
        codes::TEMPLATE_INVALID,
        format!(
            "ServiceTemplate {t_ns}/{t_name}: the source has neither localSourceRef nor remoteSourceSpec"
        ),
    ))
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The service's `values` YAML text as a JSON object.
fn parse_values(
    svc: &Value,
    diags: &mut Vec<Diagnostic>,
    label: &str,
) -> Result<Option<Value>, Problem> {
    let text = Service(svc).values();
    if text.trim().is_empty() {
        return Ok(None);
    }
    let templated = text.contains("{{");
    let source = Source::new("values", text);
    let (docs, err) = yaml::parse_documents(&source);
    let position = |offset: usize| {
        let lc = source.line_col(offset);
        format!("line {}, column {}", lc.line, lc.column)
    };
    let hint = if templated {
        " (the values use Go templates ({{ }}), which sveltos fills in per cluster; Flux does not)"
    } else {
        ""
    };
    if let Some(e) = err {
        return Err(Problem::new(
            codes::VALUES_INVALID,
            format!(
                "values are not valid YAML at {}: {}{hint}",
                position(e.offset),
                e.message
            ),
        ));
    }
    let roots: Vec<_> = docs.into_iter().filter_map(|d| d.root).collect();
    let root = match roots.as_slice() {
        [] => return Ok(None),
        [r] => r,
        _ => {
            return Err(Problem::new(
                codes::VALUES_INVALID,
                "values hold several YAML documents; Helm values are one mapping",
            ));
        }
    };
    let value = root.to_json(&yaml::Limits::default()).map_err(|e| {
        Problem::new(
            codes::VALUES_INVALID,
            format!("values at {}: {}", position(e.offset), e.message),
        )
    })?;
    if !value.is_object() {
        return Err(Problem::new(
            codes::VALUES_INVALID,
            format!(
                "values are a YAML {}, not a mapping (Helm values are key: value pairs)",
                root.type_name()
            ),
        ));
    }
    if templated {
        diags.push(
            Diagnostic::warning(
                codes::VALUES_TEMPLATED,
                format!("{label}: values contain Go template syntax ({{{{ }}}}): Flux passes them to the chart as literal text"),
            )
            .help("kcm's sveltos adapter fills these templates in per cluster; with Flux use valuesFrom or postRenderers instead"),
        );
    }
    Ok(Some(value))
}

fn values_from(svc: &Value) -> Option<Value> {
    // Flux reads the key values.yaml of each object, in the HelmRelease's namespace (the
    // ServiceSet's, where kcm expects them).
    let items: Vec<Value> = Service(svc)
        .values_from_refs()
        .map(|v| json!({"kind": v.kind(), "name": v.name()}))
        .collect();
    (!items.is_empty()).then_some(Value::Array(items))
}

/// The template's helmOptions overridden by the service's: every field the service sets
/// wins (an explicit false too), `labels` merge key by key, and installOptions,
/// upgradeOptions, uninstallOptions are replaced whole (kcm's mergeHelmOptions). Both
/// providers' translations start from it.
pub fn merged_helm_options(template: &Value, svc: &Value) -> Map<String, Value> {
    let mut merged = ServiceTemplate(template)
        .helm_options()
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(own) = svc.get("helmOptions").and_then(Value::as_object) {
        for (k, v) in own {
            if v.is_null() {
                continue;
            }
            if k == "labels"
                && let (Some(Value::Object(base)), Value::Object(add)) =
                    (merged.get_mut("labels"), v)
            {
                for (lk, lv) in add {
                    base.insert(lk.clone(), lv.clone());
                }
                continue;
            }
            merged.insert(k.clone(), v.clone());
        }
    }
    merged
}

struct Mapped {
    timeout: Option<String>,
    /// install, upgrade, rollback, uninstall, maxHistory, in that order.
    sections: Vec<(String, Value)>,
}

/// helmOptions → HelmRelease fields. Only what is set is mapped (Flux's defaults apply to the
/// rest), except `install.createNamespace`, which kcm defaults to true.
fn map_options(
    o: &Map<String, Value>,
    diags: &mut Vec<Diagnostic>,
    label: &str,
) -> Result<Mapped, Vec<Problem>> {
    let mut problems = Vec::new();
    let get = |path: &str| -> Option<&Value> {
        let mut v = o.get(path.split('.').next()?)?;
        for part in path.split('.').skip(1) {
            v = v.get(part)?;
        }
        (!v.is_null()).then_some(v)
    };
    let flag = |path: &str| get(path).and_then(Value::as_bool);
    let mut install = Map::new();
    let mut upgrade = Map::new();
    let mut rollback = Map::new();
    let mut uninstall = Map::new();
    let mut max_history = None;

    let timeout = match get("timeout") {
        None => None,
        Some(Value::String(t)) if is_flux_duration(t) => Some(t.clone()),
        Some(t) => {
            problems.push(Problem::new(
                codes::HELM_OPTION_INVALID,
                format!(
                    "helmOptions.timeout {t} is not a duration Flux accepts (e.g. 30s, 5m, 1h30m)"
                ),
            ));
            None
        }
    };
    if let Some(wait) = flag("wait") {
        for sec in [&mut install, &mut upgrade, &mut rollback, &mut uninstall] {
            sec.insert("disableWait".into(), (!wait).into());
        }
    }
    if let Some(w) = flag("waitForJobs") {
        for sec in [&mut install, &mut upgrade, &mut rollback] {
            sec.insert("disableWaitForJobs".into(), (!w).into());
        }
    }
    if let Some(atomic) = flag("atomic") {
        // Helm's --atomic: a failed install is uninstalled, a failed upgrade rolled back.
        install.insert(
            "remediation".into(),
            json!({"remediateLastFailure": atomic}),
        );
        let mut rem = json!({"remediateLastFailure": atomic});
        if atomic {
            rem["strategy"] = "rollback".into();
        }
        upgrade.insert("remediation".into(), rem);
    }
    if let Some(skip) = flag("skipCRDs") {
        let policy = if skip { "Skip" } else { "Create" };
        install.insert("crds".into(), policy.into());
        upgrade.insert("crds".into(), policy.into());
    }
    if flag("upgradeOptions.upgradeCRDs") == Some(true) {
        upgrade.insert("crds".into(), "CreateReplace".into());
    }
    if let Some(h) = flag("disableHooks") {
        for sec in [&mut install, &mut upgrade, &mut rollback, &mut uninstall] {
            sec.insert("disableHooks".into(), h.into());
        }
    }
    for (path, sec) in [
        ("installOptions.disableHooks", &mut install),
        ("upgradeOptions.disableHooks", &mut upgrade),
        ("uninstallOptions.disableHooks", &mut uninstall),
    ] {
        if let Some(h) = flag(path) {
            sec.insert("disableHooks".into(), h.into());
        }
    }
    if let Some(v) = flag("disableOpenAPIValidation") {
        install.insert("disableOpenAPIValidation".into(), v.into());
        upgrade.insert("disableOpenAPIValidation".into(), v.into());
    }
    if let Some(v) = flag("skipSchemaValidation") {
        install.insert("disableSchemaValidation".into(), v.into());
        upgrade.insert("disableSchemaValidation".into(), v.into());
    }
    // The deprecated top-level fields win over installOptions, as in kcm.
    let create_ns = flag("createNamespace")
        .or_else(|| flag("installOptions.createNamespace"))
        .unwrap_or(true);
    install.insert("createNamespace".into(), create_ns.into());
    if let Some(r) = flag("replace").or_else(|| flag("installOptions.replace")) {
        install.insert("replace".into(), r.into());
    }
    if let Some(t) = flag("installOptions.takeOwnership") {
        install.insert("disableTakeOwnership".into(), (!t).into());
    }
    if let Some(t) = flag("upgradeOptions.takeOwnership") {
        upgrade.insert("disableTakeOwnership".into(), (!t).into());
    }
    if let Some(f) = flag("upgradeOptions.force") {
        upgrade.insert("force".into(), f.into());
    }
    if let Some(c) = flag("upgradeOptions.cleanupOnFail") {
        upgrade.insert("cleanupOnFail".into(), c.into());
    }
    if let Some(m) = get("upgradeOptions.maxHistory") {
        match m.as_i64() {
            Some(n) if n >= 0 => max_history = Some(n),
            _ => problems.push(Problem::new(
                codes::HELM_OPTION_INVALID,
                format!("helmOptions.upgradeOptions.maxHistory {m} is not a non-negative integer"),
            )),
        }
    }
    match (
        flag("upgradeOptions.resetValues"),
        flag("upgradeOptions.reuseValues"),
        flag("upgradeOptions.resetThenReuseValues"),
    ) {
        (_, Some(true), _) | (_, _, Some(true)) => {
            upgrade.insert("preserveValues".into(), true.into());
        }
        (Some(true), _, _) => {
            upgrade.insert("preserveValues".into(), false.into());
        }
        _ => {}
    }
    if flag("upgradeOptions.resetThenReuseValues") == Some(true) {
        note(
            diags,
            label,
            "upgradeOptions.resetThenReuseValues",
            "mapped to upgrade.preserveValues: true (Flux has no reset-then-reuse; the release's values are kept)",
        );
    }
    if let Some(r) = flag("upgradeOptions.recreate") {
        rollback.insert("recreate".into(), r.into());
    }
    if let Some(k) = flag("uninstallOptions.keepHistory") {
        uninstall.insert("keepHistory".into(), k.into());
    }
    if let Some(p) = get("uninstallOptions.deletionPropagation").and_then(Value::as_str) {
        uninstall.insert("deletionPropagation".into(), p.into());
    }
    // Fields Flux has no equivalent for: said, not silently dropped.
    for (path, why) in [
        (
            "dependencyUpdate",
            "source-controller builds chart dependencies itself",
        ),
        (
            "enableClientCache",
            "helm-controller manages its own clients",
        ),
        (
            "description",
            "helm-controller writes its own release descriptions",
        ),
        (
            "upgradeOptions.subNotes",
            "helm-controller does not render notes",
        ),
    ] {
        let set = match get(path) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => !s.is_empty(),
            Some(_) => true,
            None => false,
        };
        if set {
            no_equivalent(diags, label, path, why);
        }
    }
    if get("labels")
        .and_then(Value::as_object)
        .is_some_and(|l| !l.is_empty())
    {
        no_equivalent(
            diags,
            label,
            "labels",
            "helm-controller does not set Helm release labels",
        );
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut sections = Vec::new();
    for (key, sec) in [
        ("install", install),
        ("upgrade", upgrade),
        ("rollback", rollback),
        ("uninstall", uninstall),
    ] {
        if !sec.is_empty() {
            sections.push((key.to_string(), Value::Object(sec)));
        }
    }
    if let Some(n) = max_history {
        sections.push(("maxHistory".into(), n.into()));
    }
    Ok(Mapped { timeout, sections })
}

fn no_equivalent(diags: &mut Vec<Diagnostic>, label: &str, path: &str, why: &str) {
    diags.push(Diagnostic::new(
        codes::NO_EQUIVALENT,
        Severity::Warning,
        format!("{label}: helmOptions.{path} has no HelmRelease equivalent and is ignored ({why})"),
    ));
}

fn note(diags: &mut Vec<Diagnostic>, label: &str, path: &str, what: &str) {
    diags.push(Diagnostic::new(
        codes::NO_EQUIVALENT,
        Severity::Info,
        format!("{label}: helmOptions.{path} {what}"),
    ));
}
