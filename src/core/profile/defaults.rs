//! What render says of the values kcm's adapter defaults in the Profile it writes (kcm
//! `internal/controller/adapters/sveltos/serviceset_controller.go` `buildProfileSpec`,
//! `applyProfileSpecDefaults`, `convertHelmOptions`): each value the ServiceSet leaves out,
//! and the default that stands in for it.

use serde_json::Value;

use super::config::ProfileConfig;
use crate::api::kcm::{ServiceSet, ServiceTemplate, ServiceType};
use crate::api::kinds;
use crate::api::sveltos::{
    DEFAULT_HELM_CHART_ACTION, DEFAULT_PRIORITY, DEFAULT_STOP_MATCHING_BEHAVIOR, DEFAULT_SYNC_MODE,
    DEFAULT_TIER, LEAVE_POLICIES, priority_to_tier,
};

/// The defaulted values of the Profile of `ss`, in words (empty when the ServiceSet sets
/// everything).
pub(super) fn defaulted(
    ss: ServiceSet,
    config: &ProfileConfig,
    objects: &dyn super::Objects,
) -> Vec<String> {
    let raw = ss.provider_config().filter(|c| !c.is_null());
    let unset = |k: &str| raw.and_then(|c| c.get(k)).is_none_or(Value::is_null);
    let mut out = Vec::new();
    if config.nil {
        out.push(format!(
            "tier {DEFAULT_TIER} and continueOnConflict false (the Profile CRD's defaults: kcm leaves the spec of a nil provider config zero)"
        ));
    } else {
        if unset("priority") {
            out.push(format!(
                "tier {} (priority unset: kcm's default {DEFAULT_PRIORITY})",
                priority_to_tier(DEFAULT_PRIORITY).unwrap_or_default()
            ));
        }
        if unset("stopOnConflict") {
            out.push(
                "continueOnConflict true (kcm writes !stopOnConflict; stopOnConflict unset)".into(),
            );
        }
    }
    if unset("syncMode") || raw.and_then(|c| c.get("syncMode")) == Some(&Value::from("")) {
        out.push(format!("syncMode {DEFAULT_SYNC_MODE} (unset)"));
    }
    match raw.and_then(|c| c.get("stopMatchingBehavior")).and_then(Value::as_str) {
        Some(LEAVE_POLICIES) | Some(DEFAULT_STOP_MATCHING_BEHAVIOR) => {}
        Some(v) if !v.is_empty() => out.push(format!(
            "stopMatchingBehavior {DEFAULT_STOP_MATCHING_BEHAVIOR} ({v:?} is not exactly {LEAVE_POLICIES})"
        )),
        _ => out.push(format!(
            "stopMatchingBehavior {DEFAULT_STOP_MATCHING_BEHAVIOR} (unset: services are withdrawn from a cluster that stops matching)"
        )),
    }
    if unset("continueOnError") {
        out.push("continueOnError false (unset: a failing chart stops the charts after it)".into());
    }
    if unset("maxConsecutiveFailures") {
        out.push("maxConsecutiveFailures unset (Sveltos retries a failing chart forever)".into());
    }
    let ns = ss.namespace();
    for svc in ss.services() {
        let Some(t) = objects.get(&kinds::SERVICE_TEMPLATE, ns, svc.template()) else {
            continue;
        };
        let template = ServiceTemplate(t);
        if template.service_type() != Some(ServiceType::Helm) {
            continue;
        }
        let set = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
        let template_options = template.helm_options();
        let svc_options = svc.helm_options();
        let mut chart = Vec::new();
        if !set(template_options) && !set(svc_options) {
            chart.push("options {atomic: true} (no helmOptions: kcm's default)".to_string());
        } else if !set(template_options.and_then(|o| o.get("atomic")))
            && !set(svc_options.and_then(|o| o.get("atomic")))
        {
            chart.push("options.atomic true (unset: kcm's default)".to_string());
        }
        if !set(svc.json().get("helmAction")) {
            chart.push(format!(
                "helmChartAction {DEFAULT_HELM_CHART_ACTION} (unset)"
            ));
        }
        if !chart.is_empty() {
            out.push(format!("{}: {}", svc.name(), chart.join(", ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::profile::Index;

    fn notes(config: Value) -> Vec<String> {
        let ss = json!({"kind": "ServiceSet", "metadata": {"name": "s", "namespace": "n"},
            "spec": {"cluster": "c", "provider": {"name": "ksm-projectsveltos", "config": config}}});
        let parsed = super::super::config::parse(ss.pointer("/spec/provider/config")).unwrap();
        defaulted(ServiceSet(&ss), &parsed, &Index::new(&[]))
    }

    #[test]
    fn each_value_left_out_names_its_default() {
        let all = notes(json!({}));
        assert_eq!(
            all,
            [
                "tier 2147483547 (priority unset: kcm's default 100)",
                "continueOnConflict true (kcm writes !stopOnConflict; stopOnConflict unset)",
                "syncMode Continuous (unset)",
                "stopMatchingBehavior WithdrawPolicies (unset: services are withdrawn from a cluster that stops matching)",
                "continueOnError false (unset: a failing chart stops the charts after it)",
                "maxConsecutiveFailures unset (Sveltos retries a failing chart forever)",
            ]
        );
        let some = notes(
            json!({"priority": 5, "stopOnConflict": false, "syncMode": "OneTime",
            "stopMatchingBehavior": "leavePolicies", "continueOnError": true, "maxConsecutiveFailures": 3}),
        );
        assert_eq!(
            some,
            [
                "stopMatchingBehavior WithdrawPolicies (\"leavePolicies\" is not exactly LeavePolicies)"
            ]
        );
    }
}
