//! The Flux adapter's provider configuration (`ServiceSet.spec.provider.config`): what the
//! ServiceSet's author can tune, validated strictly (an invalid value is an error, never
//! silently replaced).

use serde_json::Value;

use crate::api::duration::is_flux_duration;
use crate::api::names::is_dns1123_label;
use crate::api::sveltos::{MAX_PRIORITY, MIN_PRIORITY};

/// Keys the adapter understands, with what they do (for the error that lists them).
pub const KEYS: &[(&str, &str)] = &[
    (
        "interval",
        "reconcile interval of every Flux object (Go duration, default 10m)",
    ),
    (
        "timeout",
        "timeout of Helm actions and Kustomization applies (Go duration, default 5m)",
    ),
    (
        "prune",
        "Kustomization garbage collection (bool, default true)",
    ),
    (
        "wait",
        "Kustomization waits for its resources to be ready (bool, default false)",
    ),
    (
        "suspend",
        "suspend every rendered object (bool, default false)",
    ),
    (
        "targetNamespace",
        "namespace Kustomization resources go to (default: the service's)",
    ),
    (
        "priority",
        "who owns a release two ServiceSets deploy: the higher wins, a tie goes to the older ServiceSet (integer 1-2147483646, default 100; also the label ksm.k0rdent.mirantis.com/priority)",
    ),
];

pub const DEFAULT_INTERVAL: &str = "10m";
pub const DEFAULT_TIMEOUT: &str = "5m";

#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub interval: String,
    pub timeout: String,
    pub prune: bool,
    pub wait: bool,
    pub suspend: bool,
    pub target_namespace: Option<String>,
    pub priority: Option<i64>,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            interval: DEFAULT_INTERVAL.into(),
            timeout: DEFAULT_TIMEOUT.into(),
            prune: true,
            wait: false,
            suspend: false,
            target_namespace: None,
            priority: None,
        }
    }
}

/// Parses `spec.provider.config`; every problem is reported, not only the first.
pub fn parse(config: Option<&Value>) -> Result<ProviderConfig, Vec<String>> {
    let mut cfg = ProviderConfig::default();
    let map = match config {
        None | Some(Value::Null) => return Ok(cfg),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(vec![format!(
                "spec.provider.config must be an object, not {}",
                json_type(other)
            )]);
        }
    };
    let mut errors = Vec::new();
    for (key, value) in map {
        let mut bad =
            |what: &str| errors.push(format!("spec.provider.config.{key}: {what}, got {}", value));
        match key.as_str() {
            "interval" | "timeout" => match value.as_str() {
                Some(s) if is_flux_duration(s) => {
                    if key == "interval" {
                        cfg.interval = s.to_string();
                    } else {
                        cfg.timeout = s.to_string();
                    }
                }
                Some(_) => bad(
                    "must be a Go duration as Flux accepts it (e.g. 30s, 5m, 1h30m; no sign, no spaces)",
                ),
                None => bad("must be a duration string"),
            },
            "prune" | "wait" | "suspend" => match value.as_bool() {
                Some(b) => match key.as_str() {
                    "prune" => cfg.prune = b,
                    "wait" => cfg.wait = b,
                    _ => cfg.suspend = b,
                },
                None => bad("must be true or false"),
            },
            "targetNamespace" => match value.as_str() {
                Some(s) if is_dns1123_label(s) => cfg.target_namespace = Some(s.to_string()),
                _ => bad("must be a namespace name (DNS-1123 label)"),
            },
            "priority" => match value.as_i64() {
                Some(p) if (MIN_PRIORITY..=MAX_PRIORITY).contains(&p) => cfg.priority = Some(p),
                _ => bad(&format!(
                    "must be an integer from {MIN_PRIORITY} to {MAX_PRIORITY}, as in kcm"
                )),
            },
            _ => {
                let valid: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
                errors.push(format!(
                    "spec.provider.config.{key}: unknown key; valid keys: {}",
                    valid.join(", ")
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(cfg)
    } else {
        Err(errors)
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_valid_config() {
        assert_eq!(parse(None).unwrap(), ProviderConfig::default());
        let c = parse(Some(
            &json!({"interval": "1m", "timeout": "10m", "prune": false, "wait": true,
            "suspend": false, "targetNamespace": "apps", "priority": 200}),
        ))
        .unwrap();
        assert_eq!(c.interval, "1m");
        assert_eq!(c.timeout, "10m");
        assert!(!c.prune && c.wait && !c.suspend);
        assert_eq!(c.target_namespace.as_deref(), Some("apps"));
        assert_eq!(c.priority, Some(200));
    }

    #[test]
    fn priority_is_kcms_range() {
        for ok in [1, 100, 2147483646] {
            assert_eq!(
                parse(Some(&json!({ "priority": ok }))).unwrap().priority,
                Some(ok)
            );
        }
        for bad in [
            json!(0),
            json!(-5),
            json!(2147483647),
            json!("high"),
            json!(1.5),
        ] {
            let errs = parse(Some(&json!({ "priority": bad }))).unwrap_err();
            assert!(
                errs[0].contains("must be an integer from 1 to 2147483646"),
                "{errs:?}"
            );
        }
    }

    #[test]
    fn every_problem_is_reported_and_unknown_keys_list_the_valid_ones() {
        let errs = parse(Some(
            &json!({"interval": "5 minutes", "timeout": "-1m", "retries": 3}),
        ))
        .unwrap_err();
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert!(errs[0].starts_with("spec.provider.config.interval: must be a Go duration"));
        assert!(errs[1].contains("\"-1m\""));
        assert_eq!(
            errs[2],
            "spec.provider.config.retries: unknown key; valid keys: interval, timeout, prune, wait, suspend, targetNamespace, priority"
        );
        assert!(parse(Some(&json!("x"))).is_err());
    }
}
