//! KSM422–KSM423: template chains as kcm judges them: a chain's own spec
//! (`api/v1beta1/templatechain_common.go` `IsValid`, enforced by
//! `internal/webhook/templatechain_webhook.go` `ValidateCreate`), and a service whose chain
//! does not support its template (`internal/util/validation/services.go`
//! `validateServiceTemplateChain`), checked across every input (the chain is often in
//! another file).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::api::kcm::{ServiceSource, SupportedTemplate, TemplateChain};
use crate::api::meta::Object;
use crate::api::sveltos::DEFAULT_SYSTEM_NAMESPACE;
use crate::core::lint::across::{Budget, Position};
use crate::core::lint::{Context, RuleInfo, Target, key, node_at};
use crate::core::objects::LoadedObject;
use crate::core::schema::PathSeg;
use crate::diag::{Diagnostic, Severity};

pub static INVALID: RuleInfo = RuleInfo {
    code: "KSM422",
    name: "template-chain-invalid",
    severity: Severity::Error,
    title: "A template chain kcm's webhook rejects",
    docs: "\
## What it finds
A ServiceTemplateChain or ClusterTemplateChain whose `spec.supportedTemplates` offers an
upgrade (`availableUpgrades[].name`) to a template that is not itself supported, or whose
template mixes upgrades with and without `version`.

## Why it matters
kcm's admission webhook refuses the chain on create with kcm's own warnings (kcm
`api/v1beta1/templatechain_common.go` `TemplateChainSpec.IsValid`:
`template <name> is allowed for upgrade but is not present in the list of
'.spec.supportedTemplates'`, `template <name> has mixed version/no-version available
upgrades: either all or none should have version set`; `internal/webhook/
templatechain_webhook.go` `ValidateCreate`). The spec of a chain is immutable afterwards.

## Example
```yaml
kind: ServiceTemplateChain
spec:
  supportedTemplates:
  - name: ingress-nginx-4-12-0
    availableUpgrades:
    - name: ingress-nginx-4-13-0
```

## Fix
List every upgrade target in `supportedTemplates` too (`- name: ingress-nginx-4-13-0`), and
give all upgrades of a template a `version`, or none.
",
};

pub static UNSUPPORTED: RuleInfo = RuleInfo {
    code: "KSM423",
    name: "template-not-in-chain",
    severity: Severity::Error,
    title: "A service whose template its templateChain does not support",
    docs: "\
## What it finds
A ClusterDeployment's or MultiClusterService's service with `templateChain: <chain>` whose
`template` is not among the chain's `spec.supportedTemplates`, when the chain is among the
inputs: in the ClusterDeployment's namespace, or for a MultiClusterService in kcm's system
namespace (`kcm-system`). Checked across every input of a run.

## Why it matters
kcm checks that the chain supports the template (kcm `internal/util/validation/services.go`
`validateServiceTemplateChain`: `the ServiceTemplateChain <ns>/<chain> does not support
ServiceTemplate <template>`): the ClusterDeployment webhook rejects the object; a
MultiClusterService gets `ServicesReferencesValidation=False` and deploys nothing. The upgrade
paths kcm offers for the service come from that chain too.

## Example
```yaml
services:
- name: ingress-nginx
  namespace: ingress-nginx
  template: ingress-nginx-4-11-0
  templateChain: ingress-nginx      # supports 4-12-0 and 4-13-0 only
```

## Fix
Use a template the chain lists, or add it to a new chain (a chain's spec is immutable).
",
};

/// The `availableUpgrades` of a supported template, as (path, name, version).
fn upgrades(chain: &serde_json::Value, i: usize) -> Vec<(Vec<PathSeg>, &str, &str)> {
    let t = SupportedTemplate(&TemplateChain(chain).supported()[i]);
    t.available_upgrades()
        .enumerate()
        .map(|(j, (name, version))| {
            (
                vec![
                    key("spec"),
                    key("supportedTemplates"),
                    PathSeg::Index(i),
                    key("availableUpgrades"),
                    PathSeg::Index(j),
                    key("name"),
                ],
                name,
                version,
            )
        })
        .collect()
}

/// `IsValid`, each problem at the entry it is about.
pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let chain = TemplateChain(ctx.json());
    let supported: BTreeSet<&str> = chain.supported_templates().map(|t| t.name()).collect();
    let kind = ctx.target.kind();
    let reject = format!("kcm's {kind} webhook rejects the chain (the spec is invalid)");
    for (i, t) in chain.supported_templates().enumerate() {
        let ups = upgrades(ctx.json(), i);
        for (path, name, _) in &ups {
            if !supported.contains(name) {
                out.push(
                    ctx.diag(
                        &INVALID,
                        format!(
                            "template {name} is allowed for upgrade but is not present in the list of '.spec.supportedTemplates': {reject}"
                        ),
                        ctx.span_at(path),
                    )
                    .help(format!("add `- name: {name}` to spec.supportedTemplates")),
                );
            }
        }
        if let Some((_, _, first)) = ups.first()
            && ups.iter().any(|(_, _, v)| v.is_empty() != first.is_empty())
        {
            let name = t.name();
            out.push(
                ctx.diag(
                    &INVALID,
                    format!(
                        "template {name} has mixed version/no-version available upgrades: either all or none should have version set: {reject}"
                    ),
                    ctx.span_at(&[
                        key("spec"),
                        key("supportedTemplates"),
                        PathSeg::Index(i),
                        key("availableUpgrades"),
                    ]),
                )
                .help("give every availableUpgrades entry of this template a version, or none"),
            );
        }
    }
}

/// A service's reference to a ServiceTemplateChain.
#[derive(Debug, Clone)]
struct ChainRef {
    /// The namespace the chain is looked up in (the ClusterDeployment's; None for a
    /// MultiClusterService: kcm's system namespace). Empty: unknown (no namespace written).
    namespace: Option<String>,
    chain: String,
    template: String,
    /// Whose service: for the message.
    owner: Target,
    at: Position,
}

/// The ServiceTemplateChains of the inputs and the services that name one, checked together
/// once every input is read (KSM423).
#[derive(Debug, Default)]
pub struct Chains {
    /// (namespace, name) → supported template names (every definition, added up).
    chains: HashMap<(Arc<str>, Arc<str>), BTreeSet<String>>,
    refs: Vec<ChainRef>,
}

impl Chains {
    /// What an object contributes: a ServiceTemplateChain its templates, a ClusterDeployment
    /// or MultiClusterService its services' chain references.
    pub fn collect(&mut self, object: &LoadedObject, budget: &mut Budget) {
        let json = &object.json;
        match Target::of(json) {
            Some(Target::ServiceTemplateChain) => {
                let m = Object(json);
                let set = self
                    .chains
                    .entry((Arc::from(m.namespace()), Arc::from(m.name())))
                    .or_default();
                set.extend(
                    TemplateChain(json)
                        .supported_templates()
                        .map(|t| t.name().to_string()),
                );
            }
            Some(owner @ (Target::ClusterDeployment | Target::MultiClusterService)) => {
                for (i, svc) in ServiceSource(json).service_views().enumerate() {
                    let chain = svc.template_chain();
                    if chain.is_empty() {
                        continue;
                    }
                    let path = super::service_path(i, &["templateChain"]);
                    let Some(node) = node_at(&object.node, &path) else {
                        continue;
                    };
                    self.refs.push(ChainRef {
                        namespace: (owner == Target::ClusterDeployment)
                            .then(|| Object(json).namespace().to_string()),
                        chain: chain.to_string(),
                        template: svc.template().to_string(),
                        owner,
                        at: Position::keep(&object.source, node.span.clone(), budget),
                    });
                }
            }
            _ => {}
        }
    }

    /// Takes in what another input contributed.
    pub fn absorb(&mut self, other: Chains) {
        for (k, v) in other.chains {
            self.chains.entry(k).or_default().extend(v);
        }
        self.refs.extend(other.refs);
    }

    /// The services whose chain, among the inputs, does not support their template.
    pub fn findings(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for r in &self.refs {
            let matches = |ns: &str| match &r.namespace {
                Some(own) => ns.is_empty() || own.is_empty() || ns == own,
                None => ns.is_empty() || ns == DEFAULT_SYSTEM_NAMESPACE,
            };
            let candidates: Vec<(&str, &BTreeSet<String>)> = self
                .chains
                .iter()
                .filter(|((ns, name), _)| **name == *r.chain && matches(ns))
                .map(|((ns, _), t)| (&**ns, t))
                .collect();
            if candidates.is_empty() || candidates.iter().any(|(_, t)| t.contains(&r.template)) {
                continue;
            }
            let ns = match (&r.namespace, candidates[0].0) {
                (_, ns) if !ns.is_empty() => ns.to_string(),
                (Some(own), _) if !own.is_empty() => own.clone(),
                _ => DEFAULT_SYSTEM_NAMESPACE.to_string(),
            };
            let refusal = super::refusal(
                r.owner,
                crate::api::kcm::COND_SERVICES_REFERENCES_VALIDATION,
            );
            let supported: Vec<&str> = candidates
                .iter()
                .flat_map(|(_, t)| t.iter().map(String::as_str))
                .collect();
            out.push(
                r.at.diag(
                    UNSUPPORTED.code,
                    UNSUPPORTED.severity,
                    format!(
                        "the ServiceTemplateChain {ns}/{} does not support ServiceTemplate {}: {refusal}",
                        r.chain, r.template
                    ),
                )
                .help(format!(
                    "use a template the chain supports ({}), or a chain that lists {}",
                    supported.join(", "),
                    r.template
                )),
            );
        }
        out
    }
}

/// Lints `texts` as separate inputs and returns the cross-input findings (for tests).
#[cfg(test)]
pub(crate) fn across(texts: &[&str]) -> Vec<Diagnostic> {
    let mut all = crate::core::lint::Across::default();
    for (i, t) in texts.iter().enumerate() {
        let source = crate::diag::Source::new(format!("in{i}.yaml"), *t);
        let report = crate::core::lint::lint_source(&source, &crate::core::lint::Linter::default());
        all.absorb(report.across);
    }
    all.findings()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lint::test_support::lint_text;

    const CHAIN: &str = "\
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceTemplateChain
metadata: {name: ingress-nginx, namespace: kcm-system}
spec:
  supportedTemplates:
  - name: ingress-nginx-4-12-0
    availableUpgrades:
    - {name: ingress-nginx-4-13-0}
  - name: ingress-nginx-4-13-0
";

    #[test]
    fn a_chain_kcm_rejects() {
        assert_eq!(lint_text(CHAIN), Vec::<String>::new());
        let missing = CHAIN.replace("  - name: ingress-nginx-4-13-0\n", "");
        let found = lint_text(&missing);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM422 8:14 template ingress-nginx-4-13-0 is allowed for upgrade but is not present in the list of '.spec.supportedTemplates'"), "{found:?}");
        let mixed = CHAIN.replace(
            "    - {name: ingress-nginx-4-13-0}\n",
            "    - {name: ingress-nginx-4-13-0, version: 4.13.0}\n    - {name: ingress-nginx-4-13-1}\n  - name: ingress-nginx-4-13-1\n",
        );
        let found = lint_text(&mixed);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM422 8:7 template ingress-nginx-4-12-0 has mixed version/no-version available upgrades"), "{found:?}");
        let cluster = missing.replace("ServiceTemplateChain", "ClusterTemplateChain");
        assert!(lint_text(&cluster)[0].contains("ClusterTemplateChain webhook"));
    }

    fn cd(template: &str) -> String {
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata: {{name: dev, namespace: kcm-system}}\nspec:\n  template: t\n  credential: c\n  serviceSpec:\n    services:\n    - name: ingress-nginx\n      namespace: ingress-nginx\n      template: {template}\n      templateChain: ingress-nginx\n"
        )
    }

    #[test]
    fn a_template_its_chain_does_not_support() {
        let found = across(&[&cd("ingress-nginx-4-11-0"), CHAIN]);
        assert_eq!(found.len(), 1, "{found:?}");
        let d = &found[0];
        assert_eq!(
            d.message,
            "the ServiceTemplateChain kcm-system/ingress-nginx does not support ServiceTemplate ingress-nginx-4-11-0: kcm's ClusterDeployment webhook rejects the object"
        );
        assert_eq!(d.file(), Some("in0.yaml"));
        assert_eq!(d.position().unwrap().0.line, 12);
        // The clean twin; a chain in another namespace is not this one; an MCS looks in
        // kcm-system.
        assert!(across(&[&cd("ingress-nginx-4-12-0"), CHAIN]).is_empty());
        let other_ns = CHAIN.replace("namespace: kcm-system", "namespace: team-a");
        assert!(across(&[&cd("ingress-nginx-4-11-0"), &other_ns]).is_empty());
        let mcs = cd("ingress-nginx-4-11-0")
            .replace("kind: ClusterDeployment", "kind: MultiClusterService")
            .replace("{name: dev, namespace: kcm-system}", "{name: global}")
            .replace(
                "  template: t\n  credential: c\n",
                "  clusterSelector: {matchLabels: {a: b}}\n",
            );
        let found = across(&[CHAIN, &mcs]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .message
                .contains("ServicesReferencesValidation=False")
        );
        // Unknown chain: nothing to say.
        assert!(across(&[&cd("ingress-nginx-4-11-0")]).is_empty());
    }
}
