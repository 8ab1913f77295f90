//! KSM414–KSM416: the provider configuration of kcm's default provider `ksm-projectsveltos`
//! (`spec.serviceSpec.provider.config` of a ClusterDeployment or MultiClusterService whose
//! provider name is that or empty, `spec.provider.config` of its ServiceSets), read as kcm's
//! Sveltos adapter reads it (`internal/controller/adapters/sveltos/serviceset_controller.go`
//! `profileConfig`, `buildProfileSpec`, `priorityToTier`) and validated against the Profile
//! CRD it is written into. Other providers' configurations are theirs: not judged here.

use serde_json::Value;

use super::schema::closest;
use crate::api::kcm::{DEFAULT_PROVIDER, ServiceSet, ServiceSource};
use crate::api::naming::ANNOTATION_PAUSED;
use crate::api::sveltos::{CONFIG_KEYS, DEFAULT_PRIORITY, priority_to_tier};
use crate::core::lint::{Context, RuleInfo, Target, key};
use crate::core::profile::config::{self, IssueKind};
use crate::core::schema::{PathSeg, format_path};
use crate::diag::{Diagnostic, Severity};

pub static UNKNOWN_KEY: RuleInfo = RuleInfo {
    code: "KSM414",
    name: "provider-config-unknown-key",
    severity: Severity::Warning,
    title: "A key of ksm-projectsveltos's provider config that kcm ignores",
    docs: "\
## What it finds
A key of the provider config of kcm's default provider `ksm-projectsveltos` (the provider
of a ClusterDeployment or MultiClusterService whose `serviceSpec.provider.name` is that or
empty) that kcm's Sveltos adapter does not read, at any depth (`policyRefs[0].knd`), with
the key it was probably meant to be. Keys are case-sensitive. Configurations of other
providers are not judged.

## Why it matters
kcm decodes the config into its `profileConfig` struct with Go's JSON rules (kcm
`internal/controller/adapters/sveltos/serviceset_controller.go` `buildProfileSpec`, with
`k8s.io/apimachinery/pkg/util/json`): case-sensitive keys, and a key the struct does not have is
dropped without a word. `reload: true` (the name of the deprecated serviceSpec field) does
nothing: the key is `reloader`. Only `priority`, `stopOnConflict`, `continueOnError`,
`syncMode`, `driftIgnore`, `driftExclusions`, `patches`, `templateResourceRefs`, `policyRefs`,
`stopMatchingBehavior`, `reloader` and `maxConsecutiveFailures` are read; there is no pause
key (a ServiceSet is paused by its `k0rdent.mirantis.com/service-set-paused` annotation).

## Example
```yaml
serviceSpec:
  provider:
    config:
      reload: true
      Priority: 300
```

## Fix
Use the key the finding suggests (`reloader`, `priority`), or remove it.
",
};

pub static REJECTED: RuleInfo = RuleInfo {
    code: "KSM415",
    name: "provider-config-rejected",
    severity: Severity::Error,
    title: "A ksm-projectsveltos provider config value kcm refuses when it builds the Profile",
    docs: "\
## What it finds
A value of the default provider's config that kcm only refuses later, when its Sveltos
adapter builds or writes the Profile: a value of the wrong type (`priority: \"300\"`, `3.5`,
`stopOnConflict: \"true\"`), a priority outside 1…2147483646 (`0` included) or beyond an
int32, and a value the Profile CRD rejects (`syncMode: continuous`: the enum is
case-sensitive; `policyRefs[].kind: configmap`; a `policyRefs` entry with neither `kind` nor
`remoteURL`).

## Why it matters
Nothing checks the config on admission: it is free JSON in the ClusterDeployment, the
MultiClusterService and the ServiceSet. kcm fails only when it builds the Profile (kcm
`internal/controller/adapters/sveltos/serviceset_controller.go` `buildProfileSpec`:
`failed to unmarshal raw config to profile configuration: ...`, `priorityToTier`: `invalid
value N, priority has to be between 1 and 2147483646`; condition `ServiceSetProfile` False,
reason `ServiceSetProfileBuildFailed`), or the API server rejects the Profile it writes
(condition reason `ServiceSetProfileNotReady`, \"Profile is not ready\", the error only in an
event). No service of the ServiceSet is deployed or updated meanwhile.

## Example
```yaml
serviceSpec:
  provider:
    config:
      priority: \"300\"
      syncMode: continuous
```

## Fix
Write the value with the type and spelling the message asks for (`priority: 300`,
`syncMode: Continuous`).
",
};

pub static FALLBACK: RuleInfo = RuleInfo {
    code: "KSM416",
    name: "provider-config-fallback",
    severity: Severity::Warning,
    title: "A ksm-projectsveltos provider config value kcm silently replaces by a default",
    docs: "\
## What it finds
A value of the default provider's config that kcm accepts but does not use as written, and
the value it uses instead: a `stopMatchingBehavior` other than exactly `LeavePolicies` or
`WithdrawPolicies` (kcm compares it case-sensitively with `LeavePolicies` and uses
`WithdrawPolicies` otherwise: `leavePolicies` means WithdrawPolicies), an empty `syncMode`
(Continuous), and `null` values (the key's default: priority 100).

## Why it matters
kcm's Sveltos adapter (`internal/controller/adapters/sveltos/serviceset_controller.go`
`buildProfileSpec`) writes the Profile without an error: the setting looks applied, but the
Profile says otherwise. With `leavePolicies`, the services are withdrawn from a cluster that
stops matching, which the author meant to prevent.

## Example
```yaml
serviceSpec:
  provider:
    config:
      stopMatchingBehavior: leavePolicies
```

## Fix
Write the value exactly as the message shows (`LeavePolicies`), or remove the key to use the
default on purpose.
",
};

/// The path of the provider config of a ksm-projectsveltos object, and the config.
fn default_provider_config<'a>(ctx: &Context<'a>) -> Option<(Vec<PathSeg>, &'a Value)> {
    let json = ctx.json();
    match ctx.target {
        Target::ClusterDeployment | Target::MultiClusterService => {
            let s = ServiceSource(json);
            (s.provider_name() == DEFAULT_PROVIDER).then_some(())?;
            let c = s.provider_config()?;
            Some((
                vec![
                    key("spec"),
                    key("serviceSpec"),
                    key("provider"),
                    key("config"),
                ],
                c,
            ))
        }
        Target::ServiceSet => {
            let s = ServiceSet(json);
            (s.provider_name() == DEFAULT_PROVIDER).then_some(())?;
            let c = s.provider_config().filter(|c| !c.is_null())?;
            Some((vec![key("spec"), key("provider"), key("config")], c))
        }
        _ => None,
    }
}

/// What a key no Go field has was probably meant to be.
fn unknown_key_help(name: &str, known: &[&'static str], top: bool) -> String {
    if top && matches!(name, "paused" | "pause" | "suspend" | "suspended") {
        return format!(
            "kcm's Sveltos adapter has no pause setting: kcm pauses a ServiceSet that has the annotation {ANNOTATION_PAUSED}"
        );
    }
    if top {
        match name {
            "tier" => {
                return "kcm writes the Profile's tier from `priority` (tier = 2147483647 - priority)"
                    .into();
            }
            "continueOnConflict" => {
                return "kcm writes continueOnConflict from `stopOnConflict` (continueOnConflict = !stopOnConflict)".into();
            }
            "dependsOn" => {
                return "kcm sets no Sveltos dependsOn: order services with services[].dependsOn, MultiClusterServices with spec.dependsOn".into();
            }
            _ => {}
        }
    }
    if let Some(k) = closest(name, known.iter().copied()) {
        return format!("did you mean `{k}`? kcm drops `{name}` silently");
    }
    if top {
        let keys: Vec<&str> = CONFIG_KEYS.iter().map(|(k, _)| *k).collect();
        format!(
            "kcm's Sveltos adapter reads only these keys (case-sensitive): {}",
            keys.join(", ")
        )
    } else {
        format!("the keys here are: {}", known.join(", "))
    }
}

fn join(base: &[PathSeg], rest: &[PathSeg]) -> Vec<PathSeg> {
    base.iter().chain(rest).cloned().collect()
}

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let Some((base, cfg)) = default_provider_config(ctx) else {
        return;
    };
    let label = format_path(&base);
    let issues = config::issues(cfg);
    let mut invalid = false;
    for issue in &issues {
        let path = join(&base, &issue.path);
        match &issue.kind {
            IssueKind::UnknownKey { known } => {
                let Some(PathSeg::Key(name)) = issue.path.last() else {
                    continue;
                };
                out.push(
                    ctx.diag(
                        &UNKNOWN_KEY,
                        format!(
                            "{}: kcm's Sveltos adapter (ksm-projectsveltos) does not read `{name}`: it is ignored",
                            format_path(&path)
                        ),
                        ctx.key_span_at(&path),
                    )
                    .help(unknown_key_help(name, known, issue.path.len() == 1)),
                );
            }
            IssueKind::Invalid(message) => {
                invalid = true;
                out.push(
                    ctx.diag(
                        &REJECTED,
                        format!(
                            "{}: kcm fails to build the Profile: failed to unmarshal raw config to profile configuration: {message}",
                            format_path(&path)
                        ),
                        ctx.span_at(&path),
                    )
                    .help("ServiceSetProfile=False (ServiceSetProfileBuildFailed) and nothing of the ServiceSet is deployed: write the value with the Go type the message names"),
                );
            }
        }
    }
    if invalid || !cfg.is_object() {
        return;
    }
    let parsed = match config::parse(Some(cfg)) {
        Ok(p) => p,
        Err(e) => {
            let path = join(&base, &[key(e.key)]);
            out.push(
                ctx.diag(
                    &REJECTED,
                    format!("{}: kcm fails to build the Profile: {}", format_path(&path), e.message),
                    ctx.span_at(&path),
                )
                .help("ServiceSetProfile=False (ServiceSetProfileBuildFailed) and nothing of the ServiceSet is deployed: a priority is an integer from 1 to 2147483646 (tier = 2147483647 - priority)"),
            );
            return;
        }
    };
    for (path, message) in config::rejected(cfg, &parsed) {
        let path = join(&base, &path);
        out.push(
            ctx.diag(
                &REJECTED,
                format!(
                    "{}: the API server rejects the Profile kcm writes from {label}: {message}",
                    format_path(&path)
                ),
                ctx.span_at(&path),
            )
            .help("ServiceSetProfile=False (ServiceSetProfileNotReady, \"Profile is not ready\"; the error only in a Warning event) and nothing of the ServiceSet is deployed"),
        );
    }
    fallbacks(ctx, &base, cfg, out);
}

/// The values kcm replaces by a default without a word.
fn fallbacks(ctx: &Context, base: &[PathSeg], cfg: &Value, out: &mut Vec<Diagnostic>) {
    let Some(map) = cfg.as_object() else { return };
    for (k, v) in map {
        let uses = match (k.as_str(), v) {
            ("stopMatchingBehavior", Value::String(s))
                if !matches!(s.as_str(), "" | "LeavePolicies" | "WithdrawPolicies") =>
            {
                format!(
                    "{s:?} is not exactly LeavePolicies (kcm compares case-sensitively), so kcm uses WithdrawPolicies: the services are withdrawn from a cluster that stops matching"
                )
            }
            ("syncMode", Value::String(s)) if s.is_empty() => {
                "an empty syncMode is left out of the Profile, which then gets the default Continuous".to_string()
            }
            ("priority", Value::Null) => format!(
                "null is no priority: kcm uses {DEFAULT_PRIORITY} (tier {})",
                priority_to_tier(DEFAULT_PRIORITY).unwrap_or_default()
            ),
            ("stopOnConflict", Value::Null) => {
                "null is false: kcm writes continueOnConflict: true".to_string()
            }
            ("maxConsecutiveFailures", Value::Null) => {
                "null is no limit: Sveltos retries forever".to_string()
            }
            ("stopMatchingBehavior", Value::Null) => {
                "null: kcm uses WithdrawPolicies".to_string()
            }
            ("syncMode", Value::Null) => "null: the Profile gets the default Continuous".to_string(),
            ("continueOnError" | "reloader", Value::Null) => "null is false".to_string(),
            _ => continue,
        };
        let path = join(base, &[key(k)]);
        out.push(
            ctx.diag(
                &FALLBACK,
                format!("{}: {uses}", format_path(&path)),
                ctx.span_at(&path),
            )
            .help(match k.as_str() {
                "stopMatchingBehavior" => {
                    "write LeavePolicies or WithdrawPolicies exactly, or remove the key"
                }
                _ => "write the value meant, or remove the key to use the default on purpose",
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, lint_text};

    fn cd(provider: &str) -> String {
        let body: String = provider.lines().map(|l| format!("      {l}\n")).collect();
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: dev\n  namespace: kcm-system\nspec:\n  template: t\n  credential: c\n  serviceSpec:\n    provider:\n{body}"
        )
    }

    #[test]
    fn unknown_keys_with_did_you_mean_at_any_depth() {
        let text = cd(
            "config:\n  reload: true\n  Priority: 300\n  policyRefs:\n  - {knd: ConfigMap, name: x, kind: ConfigMap}\n  paused: true\n",
        );
        let found = lint_code(&text, "KSM414");
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[0].starts_with("KSM414 12:9 spec.serviceSpec.provider.config.reload: kcm's Sveltos adapter (ksm-projectsveltos) does not read `reload`"), "{found:?}");
        assert!(
            found[1].starts_with("KSM414 13:9 spec.serviceSpec.provider.config.Priority"),
            "{found:?}"
        );
        assert!(
            found[2].starts_with("KSM414 15:12 spec.serviceSpec.provider.config.policyRefs[0].knd"),
            "{found:?}"
        );
        let helps: Vec<String> = {
            let r = crate::core::lint::lint_source(
                &crate::diag::Source::new("t.yaml", text.as_str()),
                &crate::core::lint::Linter::default(),
            );
            r.diagnostics
                .iter()
                .filter_map(|d| d.help.clone())
                .collect()
        };
        assert!(helps[0].contains("did you mean `reloader`?"), "{helps:?}");
        assert!(helps[1].contains("did you mean `priority`?"), "{helps:?}");
        assert!(helps[2].contains("did you mean `kind`?"), "{helps:?}");
        assert!(helps[3].contains("no pause setting"), "{helps:?}");
        // The clean twin.
        let fixed = cd(
            "config:\n  reloader: true\n  priority: 300\n  policyRefs:\n  - {kind: ConfigMap, name: x}\n",
        );
        assert_eq!(lint_text(&fixed), Vec::<String>::new());
    }

    #[test]
    fn values_kcm_refuses_when_it_builds_the_profile() {
        for (config, col) in [
            ("priority: \"300\"", 26),
            ("priority: 3.5", 26),
            ("priority: 0", 26),
            ("priority: 2147483647", 26),
            ("priority: 3000000000", 26),
            ("stopOnConflict: \"true\"", 32),
            ("syncMode: continuous", 26),
        ] {
            let found = lint_code(&cd(&format!("config: {{{config}}}")), "KSM415");
            assert_eq!(found.len(), 1, "{config}: {found:?}");
            assert!(
                found[0].starts_with(&format!("KSM415 11:{col} ")),
                "{config}: {found:?}"
            );
        }
        let found = lint_code(
            &cd(
                "config:\n  policyRefs:\n  - {kind: configmap, name: x}\n  - {name: other, namespace: team}\n",
            ),
            "KSM415",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("KSM415 13:18 spec.serviceSpec.provider.config.policyRefs[0].kind: the API server rejects the Profile"), "{found:?}");
        assert!(found[1].starts_with("KSM415 14:11 spec.serviceSpec.provider.config.policyRefs[1]: the API server rejects the Profile"), "{found:?}");
        assert!(
            found[1].contains("either remoteURL or kind must be set"),
            "{found:?}"
        );
        assert_eq!(
            lint_text(&cd(
                "config: {priority: 1, syncMode: Continuous, stopOnConflict: true}"
            )),
            Vec::<String>::new()
        );
    }

    #[test]
    fn silent_fallbacks_name_the_value_kcm_uses() {
        let found = lint_code(
            &cd("config:\n  stopMatchingBehavior: leavePolicies\n  priority: null\n"),
            "KSM416",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("kcm uses WithdrawPolicies"), "{found:?}");
        assert!(
            found[1].contains("kcm uses 100 (tier 2147483547)"),
            "{found:?}"
        );
        assert_eq!(
            lint_text(&cd("config:\n  stopMatchingBehavior: LeavePolicies\n")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_default_provider_also_when_unnamed_and_only_it() {
        // Empty name: the default provider.
        let found = lint_code(&cd("config: {reload: true}"), "KSM414");
        assert_eq!(found.len(), 1, "{found:?}");
        // Another provider's keys are its own.
        assert_eq!(
            lint_text(&cd(
                "name: ksm-flux\nconfig: {interval: 5m, priority: \"x\", reload: true}"
            )),
            Vec::<String>::new()
        );
        // A ServiceSet of the default provider.
        let ss = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceSet\nmetadata: {name: s, namespace: n}\nspec:\n  cluster: dev\n  provider:\n    name: ksm-projectsveltos\n    config: {stopOnConflict: 1}\n";
        let found = lint_code(ss, "KSM415");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("cannot unmarshal number into Go struct field profileConfig.stopOnConflict of type bool"), "{found:?}");
    }
}
