//! Helm services → `spec.helmCharts[]` entries, as kcm's `helmChartFromSpecOrRef`,
//! `helmChartFromFluxSource` and `convertHelmOptions` build them.

use serde_json::{Map, Value, json};

use super::Objects;
use crate::api::duration;
use crate::api::flux::FluxSource;
use crate::api::kcm::{Service, ServiceTemplate, ServiceType};
use crate::api::kinds;
use crate::api::meta::ObjectRef;

/// Why a chart entry cannot be built: kcm's error text.
pub(super) struct ChartError {
    pub message: String,
    /// The object at fault (template, HelmChart, repository), for the diagnostic.
    pub object: Option<String>,
    /// A render code: template-invalid, source-unsupported, chart-version...
    pub code: &'static str,
}

/// kcm's not-found error of a client Get: `<plural>.<group> "<name>" not found`.
pub(super) fn not_found(kind: &kinds::Kind, name: &str) -> String {
    if kind.group.is_empty() {
        format!("{} \"{name}\" not found", kind.plural)
    } else {
        format!("{}.{} \"{name}\" not found", kind.plural, kind.group)
    }
}

/// The `helmCharts[]` entry of a Helm service.
pub(super) fn helm_chart(
    service_set_ns: &str,
    svc: Service,
    template: ServiceTemplate,
    objects: &dyn Objects,
) -> Result<Value, ChartError> {
    let (t_ns, t_name) = (template.namespace(), template.name());
    let helm = template.source_spec(ServiceType::Helm);
    let mut entry = if helm.get("chartRef").is_some_and(|v| !v.is_null())
        || helm.get("chartSpec").is_some_and(|v| !v.is_null())
    {
        from_spec_or_ref(service_set_ns, svc, template, objects)?
    } else if helm.get("chartSource").is_some_and(|v| !v.is_null()) {
        from_flux_source(svc, template)?
    } else {
        return Err(ChartError {
            message: format!("ServiceTemplate {t_ns}/{t_name} has no Helm chart defined"),
            object: Some(format!("ServiceTemplate/{t_ns}/{t_name}")),
            code: super::codes::TEMPLATE_INVALID,
        });
    };
    let values = svc.values();
    if !values.is_empty() {
        entry.insert("values".into(), values.into());
    }
    if let Some(vf) = values_from(svc, service_set_ns) {
        entry.insert("valuesFrom".into(), vf);
    }
    entry.insert("options".into(), options(template, svc)?);
    if let Some(action) = svc.helm_action() {
        entry.insert("helmChartAction".into(), action.into());
    }
    Ok(Value::Object(entry))
}

/// `valuesFrom`: kind and name of each, in the ServiceSet's namespace (omitted when empty).
pub(super) fn values_from(svc: Service, namespace: &str) -> Option<Value> {
    let items: Vec<Value> = svc
        .values_from_refs()
        .map(|v| json!({"kind": v.kind(), "name": v.name(), "namespace": namespace}))
        .collect();
    (!items.is_empty()).then_some(Value::Array(items))
}

fn from_spec_or_ref(
    namespace: &str,
    svc: Service,
    template: ServiceTemplate,
    objects: &dyn Objects,
) -> Result<Map<String, Value>, ChartError> {
    let (t_ns, t_name) = (template.namespace(), template.name());
    let template_disp = format!("ServiceTemplate/{t_ns}/{t_name}");
    let Some(chart_ref) = template.status_chart_ref() else {
        return Err(ChartError {
            message: format!("status for ServiceTemplate {t_ns}/{t_name} has not been updated yet"),
            object: Some(template_disp),
            code: super::codes::TEMPLATE_INVALID,
        });
    };
    let (c_ns, c_name) = (chart_ref.namespace(), chart_ref.name());
    let Some(chart) = objects.get(&kinds::HELM_CHART, c_ns, c_name) else {
        return Err(ChartError {
            message: format!(
                "failed to get HelmChart {c_ns}/{c_name} referenced by ServiceTemplate {t_ns}/{t_name}: {}",
                not_found(&kinds::HELM_CHART, c_name)
            ),
            object: Some(format!("HelmChart/{c_ns}/{c_name}")),
            code: super::codes::SOURCE_MISSING,
        });
    };
    let chart = FluxSource(chart);
    let mut version = chart.chart_version().to_string();
    let revision = chart.artifact_revision();
    if !revision.is_empty() && semver(revision).is_ok() {
        version = revision.to_string();
    }
    if let Err(e) = semver(&version) {
        return Err(ChartError {
            message: format!(
                "failed to determine version {version} of HelmChart {c_ns}/{c_name} referenced by ServiceTemplate {t_ns}/{t_name}: {e}"
            ),
            object: Some(format!("HelmChart/{c_ns}/{c_name}")),
            code: super::codes::CHART_VERSION,
        });
    }
    let chart_ns = chart.meta().namespace();
    let chart_name = chart.chart();
    let (src_kind, src_name) = (chart.chart_source().kind(), chart.chart_source().name());
    let (repo_url, repo_chart_name, creds) = match src_kind {
        "HelmRepository" => {
            let Some(repo) = objects.get(&kinds::HELM_REPOSITORY, chart_ns, src_name) else {
                return Err(missing_repo(&kinds::HELM_REPOSITORY, chart_ns, src_name));
            };
            let repo = FluxSource(repo);
            let chart_name_in_repo = if repo.is_oci() {
                chart_name.to_string()
            } else {
                format!("{chart_name}/{chart_name}")
            };
            let insecure = repo.insecure();
            let secret = repo.secret_ref();
            let cert = repo.cert_secret_ref();
            let creds = (insecure || secret.is_some() || cert.is_some())
                .then(|| registry_credentials(namespace, insecure, secret, cert));
            (repo.url().to_string(), chart_name_in_repo, creds)
        }
        "GitRepository" => {
            let Some(repo) = objects.get(&kinds::GIT_REPOSITORY, chart_ns, src_name) else {
                return Err(missing_repo(&kinds::GIT_REPOSITORY, chart_ns, src_name));
            };
            let secret = FluxSource(repo).secret_ref();
            (
                format!("gitrepository://{chart_ns}/{src_name}/{chart_name}"),
                chart_name.to_string(),
                Some(registry_credentials(namespace, false, secret, None)),
            )
        }
        _ => {
            return Err(ChartError {
                message: format!("unsupported HelmChart source kind {chart_ns}/{src_name}"),
                object: Some(format!("HelmChart/{c_ns}/{c_name}")),
                code: super::codes::SOURCE_UNSUPPORTED,
            });
        }
    };
    let svc_ns = svc.namespace_as_written();
    let mut entry = Map::new();
    entry.insert("repositoryURL".into(), repo_url.into());
    if !chart_name.is_empty() {
        entry.insert("repositoryName".into(), chart_name.into());
    }
    if !repo_chart_name.is_empty() {
        entry.insert("chartName".into(), repo_chart_name.into());
    }
    if !version.is_empty() {
        entry.insert("chartVersion".into(), version.into());
    }
    entry.insert("releaseName".into(), svc.name().into());
    entry.insert(
        "releaseNamespace".into(),
        if svc_ns.is_empty() {
            svc.name()
        } else {
            svc_ns
        }
        .into(),
    );
    if let Some(c) = creds {
        entry.insert("registryCredentialsConfig".into(), c);
    }
    Ok(entry)
}

fn missing_repo(kind: &kinds::Kind, ns: &str, name: &str) -> ChartError {
    ChartError {
        message: format!("failed to get {ns}/{name}: {}", not_found(kind, name)),
        object: Some(format!("{}/{ns}/{name}", kind.kind)),
        code: super::codes::SOURCE_MISSING,
    }
}

/// kcm's `generateRegistryCredentialsConfig`: an insecure repository is plain HTTP; the
/// secrets are read in the ServiceSet's namespace.
fn registry_credentials(
    namespace: &str,
    insecure: bool,
    secret: Option<ObjectRef>,
    cert: Option<ObjectRef>,
) -> Value {
    let mut c = Map::new();
    if insecure {
        c.insert("plainHTTP".into(), true.into());
    }
    if let Some(s) = secret {
        c.insert(
            "credentials".into(),
            json!({"name": s.name(), "namespace": namespace}),
        );
    }
    if let Some(s) = cert {
        c.insert(
            "ca".into(),
            json!({"name": s.name(), "namespace": namespace}),
        );
    }
    Value::Object(c)
}

fn from_flux_source(
    svc: Service,
    template: ServiceTemplate,
) -> Result<Map<String, Value>, ChartError> {
    let (t_ns, t_name) = (template.namespace(), template.name());
    let Some(status) = template.source_status() else {
        return Err(ChartError {
            message: format!("status for ServiceTemplate {t_ns}/{t_name} has not been updated yet"),
            object: Some(format!("ServiceTemplate/{t_ns}/{t_name}")),
            code: super::codes::TEMPLATE_INVALID,
        });
    };
    let path = template.chart_source_path();
    let path = path.strip_prefix('.').unwrap_or(path);
    let path = path.strip_prefix('/').unwrap_or(path);
    let url = format!(
        "{}://{}/{}/{path}",
        status.kind(),
        status.namespace(),
        status.name()
    );
    let mut entry = Map::new();
    entry.insert("repositoryURL".into(), url.into());
    entry.insert("releaseName".into(), svc.name().into());
    entry.insert("releaseNamespace".into(), svc.namespace_as_written().into());
    Ok(entry)
}

/// kcm's `convertHelmOptions` of the merged helmOptions (the template's, overridden field by
/// field by the service's): nil gives `{atomic: true}`; `atomic` is true unless set; the
/// deprecated `createNamespace`/`replace` and `disableHooks` also go into `installOptions`.
/// Go's encoding then leaves zero values out (and always writes the three option structs).
fn options(template: ServiceTemplate, svc: Service) -> Result<Value, ChartError> {
    let set = crate::core::render::merged_helm_options(template.0, svc.json());
    let template_set = template.helm_options().is_some_and(|v| !v.is_null());
    let svc_set = svc.helm_options().is_some_and(|v| !v.is_null());
    let mut out = Map::new();
    let mut install = Map::new();
    let mut upgrade = Map::new();
    let mut uninstall = Map::new();
    if !template_set && !svc_set {
        out.insert("atomic".into(), true.into());
    } else {
        let get = |k: &str| set.get(k).filter(|v| !v.is_null());
        let flag = |k: &str| get(k).and_then(Value::as_bool);
        if let Some(t) = get("timeout") {
            let text = t.as_str().unwrap_or("");
            match duration::parse_go(text) {
                Ok(ns) => {
                    out.insert("timeout".into(), duration::format_go(ns).into());
                }
                Err(e) => {
                    return Err(ChartError {
                        message: format!("helmOptions.timeout {t}: {e}"),
                        object: None,
                        code: super::codes::HELM_OPTION_INVALID,
                    });
                }
            }
        }
        if let Some(Value::Object(io)) = get("installOptions") {
            install = io.clone();
        }
        for key in [
            "skipCRDs",
            "skipSchemaValidation",
            "wait",
            "waitForJobs",
            "disableHooks",
            "disableOpenAPIValidation",
            "dependencyUpdate",
            "enableClientCache",
        ] {
            if let Some(b) = flag(key) {
                out.insert(key.into(), b.into());
            }
        }
        if let Some(b) = flag("createNamespace") {
            install.insert("createNamespace".into(), b.into());
        }
        out.insert("atomic".into(), flag("atomic").unwrap_or(true).into());
        if let Some(Value::Object(l)) = get("labels") {
            out.insert("labels".into(), Value::Object(l.clone()));
        }
        if let Some(d) = get("description").and_then(Value::as_str) {
            out.insert("description".into(), d.into());
        }
        if let Some(b) = flag("replace") {
            install.insert("replace".into(), b.into());
        }
        if let Some(b) = flag("disableHooks") {
            install.insert("disableHooks".into(), b.into());
        }
        if let Some(Value::Object(u)) = get("upgradeOptions") {
            upgrade = u.clone();
        }
        if let Some(Value::Object(u)) = get("uninstallOptions") {
            uninstall = u.clone();
        }
    }
    // Go's omitempty: false, 0 and "" are not sent (the pointers createNamespace and replace
    // are, even when false).
    let drop_zero = |m: &mut Map<String, Value>, keep: &[&str]| {
        m.retain(|k, v| {
            keep.contains(&k.as_str())
                || !matches!(v, Value::Bool(false) | Value::Null)
                    && v.as_i64() != Some(0)
                    && v.as_str() != Some("")
        })
    };
    drop_zero(&mut out, &[]);
    drop_zero(&mut install, &["createNamespace", "replace"]);
    drop_zero(&mut upgrade, &[]);
    drop_zero(&mut uninstall, &[]);
    out.insert("installOptions".into(), Value::Object(install));
    out.insert("upgradeOptions".into(), Value::Object(upgrade));
    out.insert("uninstallOptions".into(), Value::Object(uninstall));
    Ok(Value::Object(out))
}

/// Masterminds semver v3 `NewVersion` (with its default coercion, as kcm calls it): None if
/// valid, else its error.
pub fn semver(v: &str) -> Result<(), &'static str> {
    if v.is_empty() {
        return Err("invalid semantic version");
    }
    let s = v.strip_prefix('v').unwrap_or(v);
    let (core, meta) = match s.split_once('+') {
        Some((c, m)) => (c, Some(m)),
        None => (s, None),
    };
    let (nums, pre) = match core.split_once('-') {
        Some((n, p)) => (n, Some(p)),
        None => (core, None),
    };
    let parts: Vec<&str> = nums.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("invalid semantic version");
    }
    let ident_ok =
        |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if [pre, meta]
        .into_iter()
        .flatten()
        .any(|p| !p.split('.').all(ident_ok))
    {
        return Err("invalid semantic version");
    }
    if parts.iter().any(|p| p.parse::<u64>().is_err()) {
        return Err("error parsing version segment");
    }
    if let Some(p) = pre {
        for id in p.split('.') {
            if id.bytes().all(|b| b.is_ascii_digit()) && id.len() > 1 && id.starts_with('0') {
                return Err("version segment starts with 0");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_as_masterminds_coerces() {
        for ok in [
            "1.2.3",
            "v1.18.2",
            "4.13.0",
            "1.2",
            "1",
            "01.2.3",
            "1.0.0-rc.1",
            "1.0.0+build.5",
            "1.0.0-alpha-1",
        ] {
            assert_eq!(semver(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "latest",
            "1.2.3.4",
            "v",
            "1..2",
            "1.0.0-",
            "1.0.0-01",
            "1.0.0+",
            "1.0.0-a_b",
            ">=1.0.0",
            "*",
        ] {
            assert!(semver(bad).is_err(), "{bad}");
        }
        assert_eq!(semver("1.0.0-01"), Err("version segment starts with 0"));
    }
}
