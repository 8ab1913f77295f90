//! KSM413: a deprecated top-level `serviceSpec` field kcm drops because the provider has a
//! name or a config (`internal/serviceset/util.go`
//! `StateManagementProviderConfigFromServiceSpec`).

use crate::api::kcm::{DEFAULT_PROVIDER, DEPRECATED_SERVICE_SPEC_FIELDS, ServiceSource};
use crate::core::lint::{Context, RuleInfo, key};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM413",
    name: "deprecated-field-dropped",
    severity: Severity::Warning,
    title: "A deprecated serviceSpec field kcm drops because the provider has a name or a config",
    docs: "\
## What it finds
A ClusterDeployment's or MultiClusterService's deprecated `spec.serviceSpec` field
(`syncMode`, `templateResourceRefs`, `policyRefs`, `driftIgnore`, `driftExclusions`,
`priority`, `stopOnConflict`, `reload`, `continueOnError`) set to a value that matters, while
`spec.serviceSpec.provider` has a `name` or a `config`.

Values that carry nothing are not reported: the CRD defaults the API server fills in whenever
`serviceSpec` is present (`syncMode: Continuous`, `priority: 100`, `stopOnConflict: false`,
`continueOnError: false`), `false`, empty lists and null. An object as `kubectl get -o yaml`
returns it is clean.

## Why it matters
kcm uses these fields only in the legacy form, when the provider has neither a name nor a
config: it then writes them into the default provider's config (`reload` as `reloader`).
As soon as `provider.name` is set, or `provider.config` is given (even `{}`), it drops them
without a word (kcm `internal/serviceset/util.go`
`StateManagementProviderConfigFromServiceSpec`): the priority, the drift settings or the
policy references written there have no effect.

## Example
```yaml
spec:
  serviceSpec:
    priority: 500
    provider:
      name: ksm-projectsveltos
```

## Fix
Move the value into `spec.serviceSpec.provider.config` (for `ksm-projectsveltos`:
`priority: 500`; `reload` becomes `reloader`), or, to keep the legacy form, remove
`provider.name` and `provider.config`.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let source = ServiceSource(ctx.json());
    let Some(spec) = source.service_spec() else {
        return;
    };
    if source.deprecated_fields_used() {
        return;
    }
    let name = source.provider_name_as_written();
    let because = match (name.is_empty(), source.provider_config().is_some()) {
        (false, true) => format!("serviceSpec.provider has a name ({name}) and a config"),
        (false, false) => format!("serviceSpec.provider.name is set ({name})"),
        _ => "serviceSpec.provider.config is set".to_string(),
    };
    let provider = source.provider_name();
    for f in DEPRECATED_SERVICE_SPEC_FIELDS {
        let Some(value) = spec.get(f.field) else {
            continue;
        };
        if f.is_inert(value) {
            continue;
        }
        let help = if provider == DEFAULT_PROVIDER {
            format!(
                "move it to spec.serviceSpec.provider.config.{}, or remove provider.name and provider.config to keep the legacy form",
                f.config_key
            )
        } else {
            format!(
                "provider {provider} never receives it: configure it in spec.serviceSpec.provider.config as {provider} expects, or remove the field"
            )
        };
        out.push(
            ctx.diag(
                &INFO,
                format!(
                    "spec.serviceSpec.{} is deprecated and dropped: {because}, and kcm reads the deprecated fields only when the provider has neither a name nor a config",
                    f.field
                ),
                ctx.key_span_at(&[key("spec"), key("serviceSpec"), key(f.field)]),
            )
            .help(help),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    fn cd(service_spec: &str) -> String {
        let body: String = service_spec.lines().map(|l| format!("    {l}\n")).collect();
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: dev\n  namespace: kcm-system\nspec:\n  template: t\n  credential: c\n  serviceSpec:\n{body}"
        )
    }

    #[test]
    fn dropped_beside_a_provider_name_or_config() {
        let found = lint_text(&cd(
            "priority: 500\nreload: true\nprovider:\n  name: ksm-projectsveltos\n",
        ));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("KSM413 10:5 spec.serviceSpec.priority is deprecated and dropped: serviceSpec.provider.name is set (ksm-projectsveltos)"), "{found:?}");
        assert!(
            found[1].starts_with("KSM413 11:5 spec.serviceSpec.reload"),
            "{found:?}"
        );
        // An empty config is a config: the fields are dropped too.
        let found = lint_text(&cd("stopOnConflict: true\nprovider:\n  config: {}\n"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("serviceSpec.provider.config is set"),
            "{found:?}"
        );
        // Another provider: not told to move it into the Sveltos config.
        let text = cd("driftIgnore: [{kind: Secret}]\nprovider:\n  name: ksm-flux\n");
        let lint = crate::core::lint::lint_source(
            &crate::diag::Source::new("t.yaml", text.as_str()),
            &crate::core::lint::Linter::default(),
        );
        let d = &lint.diagnostics[0];
        assert!(
            d.help
                .as_deref()
                .unwrap()
                .contains("provider ksm-flux never receives it")
        );
    }

    #[test]
    fn the_legacy_form_and_server_defaults_are_clean() {
        // Legacy form: kcm honours them.
        assert_eq!(
            lint_text(&cd("priority: 500\nreload: true\nservices: []\n")),
            Vec::<String>::new()
        );
        // As `kubectl get -o yaml` returns it: the CRD defaults filled in beside a provider.
        let served = "continueOnError: false\npriority: 100\nstopOnConflict: false\nsyncMode: Continuous\nreload: false\ntemplateResourceRefs: []\nprovider:\n  name: ksm-projectsveltos\n  config:\n    priority: 500\n";
        assert_eq!(lint_text(&cd(served)), Vec::<String>::new());
        // The fix: moved into the config.
        assert_eq!(
            lint_text(&cd(
                "provider:\n  name: ksm-projectsveltos\n  config:\n    priority: 500\n    reloader: true\n"
            )),
            Vec::<String>::new()
        );
    }
}
