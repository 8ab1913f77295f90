//! KSM406: a provider name that no StateManagementProvider has, close to one that does.
//! Checked across every input of a run (the SMPs may be in other files).

use std::ops::Range;
use std::sync::Arc;

use super::schema::edit_distance;
use crate::api::kcm::{self, DEFAULT_PROVIDER};
use crate::core::lint::{RuleInfo, Target, key, node_at};
use crate::core::objects::LoadedObject;
use crate::diag::{Diagnostic, Severity, Source};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM406",
    name: "unknown-provider",
    severity: Severity::Warning,
    title: "A provider name no StateManagementProvider has, close to one that does",
    docs: "\
## What it finds
A ServiceSet's `spec.provider.name`, or a ClusterDeployment's or MultiClusterService's
`spec.serviceSpec.provider.name`, that names no StateManagementProvider of the input and is
not kcm's default `ksm-projectsveltos`, but is one or two edits away from one of them:
`kcm-projectsveltos`, `ksm-flx`.

## Why it matters
kcm hands the services to the provider of that name; no adapter answers to a misspelled one,
so the services stay unprocessed without an error on the object.

## Example
```yaml
spec:
  serviceSpec:
    provider:
      name: kcm-projectsveltos
```

## Fix
Use the name the finding suggests. A provider that exists in the cluster but not in the
input is not reported unless its name is this close to another.
",
};

/// A provider name as an object gives it, and where.
#[derive(Debug, Clone)]
pub struct ProviderRef {
    pub name: String,
    pub source: Arc<Source>,
    pub span: Range<usize>,
}

/// What an object contributes: an SMP its name, the others their provider reference.
pub fn collect(object: &LoadedObject, smps: &mut Vec<String>, refs: &mut Vec<ProviderRef>) {
    let o = &object.json;
    let (name, path): (&str, &[&str]) = match Target::of(o) {
        Some(Target::StateManagementProvider) => {
            smps.push(kcm::StateManagementProvider(o).name().to_string());
            return;
        }
        Some(Target::ServiceSet) => (
            kcm::ServiceSet(o).provider_name(),
            &["spec", "provider", "name"],
        ),
        // Unset, kcm's default: nothing to check.
        Some(Target::ClusterDeployment | Target::MultiClusterService) => (
            kcm::ServiceSource(o).provider_name(),
            &["spec", "serviceSpec", "provider", "name"],
        ),
        _ => return,
    };
    let segs: Vec<_> = path.iter().map(|k| key(k)).collect();
    let Some(node) = node_at(&object.node, &segs) else {
        return;
    };
    if name.is_empty() {
        return;
    }
    refs.push(ProviderRef {
        name: name.to_string(),
        source: object.source.clone(),
        span: object.source.first_line(node.span.clone()),
    });
}

/// The findings of every reference whose name is a near miss of a known provider.
pub fn check(smps: &[String], refs: &[ProviderRef]) -> Vec<Diagnostic> {
    let mut known: Vec<&str> = smps.iter().map(String::as_str).collect();
    known.push(DEFAULT_PROVIDER);
    refs.iter()
        .filter(|r| !known.contains(&r.name.as_str()))
        .filter_map(|r| {
            let (d, best) = known
                .iter()
                .map(|k| (edit_distance(k, &r.name), *k))
                .min()?;
            (d <= 2).then(|| {
                Diagnostic::new(
                    INFO.code,
                    INFO.severity,
                    format!(
                        "no StateManagementProvider {:?}: did you mean {best:?}?",
                        r.name
                    ),
                )
                .at(&r.source, r.span.clone())
                .help(format!("set the provider name to {best:?}"))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lint::{Linter, lint_source};

    #[test]
    fn near_misses_of_input_smps_and_the_default_are_answered() {
        let text = "\
apiVersion: k0rdent.mirantis.com/v1beta1
kind: StateManagementProvider
metadata:
  name: ksm-flux
spec: {}
---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: MultiClusterService
metadata:
  name: a
spec:
  serviceSpec:
    provider:
      name: kcm-projectsveltos
---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceSet
metadata:
  name: b
  namespace: c
spec:
  provider:
    name: ksm-flx
---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceSet
metadata:
  name: d
  namespace: c
spec:
  provider:
    name: my-own-provider
";
        let report = lint_source(&Source::new("t.yaml", text), &Linter::default());
        let found = check(&report.smps, &report.provider_refs);
        let msgs: Vec<_> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "no StateManagementProvider \"kcm-projectsveltos\": did you mean \"ksm-projectsveltos\"?",
                "no StateManagementProvider \"ksm-flx\": did you mean \"ksm-flux\"?",
            ]
        );
        assert_eq!(found[0].position().unwrap().0.line, 14);
    }
}
