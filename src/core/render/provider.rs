//! The Flux adapter's provider configuration (`ServiceSet.spec.provider.config`): what the
//! ServiceSet's author can tune, validated strictly (an invalid value is an error, never
//! silently replaced).

use serde_json::Value;

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
        "a label for the objects, ksm.k0rdent.mirantis.com/priority (integer)",
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
                Some(p) => cfg.priority = Some(p),
                None => bad("must be an integer"),
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

/// Flux's duration grammar, as the HelmRelease and Kustomization CRDs validate it:
/// `^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$` (stricter than Go's time.ParseDuration: no sign, no
/// `ns`/`us`, no bare `0`).
pub fn is_flux_duration(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let frac = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == frac {
                return false;
            }
        }
        if b[i..].starts_with(b"ms") {
            i += 2;
        } else if i < b.len() && matches!(b[i], b's' | b'm' | b'h') {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// Parses a duration in Flux's grammar (`30s`, `5m`, `1h30m`, `1.5h`, `300ms`).
pub fn parse_duration(s: &str) -> Option<std::time::Duration> {
    if !is_flux_duration(s) {
        return None;
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let value: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let (unit, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else {
            match rest.as_bytes().first()? {
                b's' => (1.0, 1),
                b'm' => (60.0, 1),
                b'h' => (3600.0, 1),
                _ => return None,
            }
        };
        total += value * unit;
        rest = &rest[len..];
    }
    Some(std::time::Duration::from_secs_f64(total))
}

/// A DNS-1123 label: lowercase alphanumerics and `-`, starting and ending alphanumeric, ≤ 63.
pub fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A DNS-1123 subdomain: labels joined by `.`, ≤ 253 (Kubernetes object names).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
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
    fn flux_durations() {
        for ok in ["5m", "1h30m", "300ms", "1.5h", "5m0s", "10s", "0s"] {
            assert!(is_flux_duration(ok), "{ok}");
        }
        for bad in [
            "",
            "5",
            "-5m",
            "+5m",
            "5 minutes",
            ".5s",
            "5ns",
            "5us",
            "1d",
            "5m ",
            "m",
        ] {
            assert!(!is_flux_duration(bad), "{bad}");
        }
    }

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

    #[test]
    fn parses_durations() {
        assert_eq!(
            parse_duration("1h30m"),
            Some(std::time::Duration::from_secs(5400))
        );
        assert_eq!(
            parse_duration("300ms"),
            Some(std::time::Duration::from_millis(300))
        );
        assert_eq!(
            parse_duration("1.5h"),
            Some(std::time::Duration::from_secs(5400))
        );
        assert_eq!(parse_duration("5 minutes"), None);
    }

    #[test]
    fn names() {
        assert!(is_dns1123_label("dev-cluster-ingress"));
        assert!(!is_dns1123_label("Dev"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(is_dns1123_subdomain("a.b-c"));
        assert!(!is_dns1123_subdomain("a..b"));
    }
}
