//! KSM406: a provider name that no StateManagementProvider has, close to one that does.
//! Checked across every input of a run (the SMPs may be in other files).

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use super::schema::edit_distance;
use crate::api::kcm::{self, DEFAULT_PROVIDER};
use crate::core::lint::{RuleInfo, Target, key, node_at};
use crate::core::objects::LoadedObject;
use crate::diag::{Diagnostic, LineCol, Severity, Source};

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

/// Full excerpts kept per distinct provider name, and in all: a reference beyond them keeps
/// only its position (its finding then names the position instead of showing the lines).
const EXCERPTS_PER_NAME: usize = 8;
const EXCERPTS: usize = 1024;

/// Lines of context kept around a reference: as many as the human report shows.
const EXCERPT_CONTEXT: usize = 2;

/// A provider name as an object gives it, and where, in a few bytes: names, file names and
/// the reference's text are indices into [`Providers::strings`]; the lines around it are kept
/// only within the excerpt budget.
#[derive(Debug, Clone, Copy)]
struct ProviderRef {
    name: u32,
    file: u32,
    text: u32,
    line: u32,
    column: u32,
    /// Index into [`Providers::excerpts`], if it has one.
    excerpt: Option<u32>,
}

/// The SMP names and provider references of the inputs, checked together once every input
/// is read. References are kept until then, after their files are dropped, so each keeps its
/// position (24 bytes), and a few of them an excerpt of their file (a few lines), never the
/// file. References to kcm's default provider or to an SMP already seen are never findings
/// and are not kept.
#[derive(Debug, Default)]
pub struct Providers {
    smps: BTreeSet<Arc<str>>,
    refs: Vec<ProviderRef>,
    /// Every name, file name and reference text kept, once each.
    strings: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
    excerpts: Vec<(Arc<Source>, Range<usize>)>,
    /// Excerpts kept per name (by string index).
    excerpts_of: HashMap<u32, usize>,
}

fn small(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Providers {
    fn intern(&mut self, text: &str) -> u32 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let t: Arc<str> = Arc::from(text);
        let i = small(self.strings.len());
        self.strings.push(Arc::clone(&t));
        self.index.insert(t, i);
        i
    }

    fn string(&self, i: u32) -> &str {
        &self.strings[i as usize]
    }

    fn known(&self, name: &str) -> bool {
        name == DEFAULT_PROVIDER || self.smps.contains(name)
    }

    fn add_smp(&mut self, name: &str) {
        if !self.smps.contains(name) {
            self.smps.insert(Arc::from(name));
        }
    }

    /// Keeps a reference, with its excerpt while the budget lasts.
    fn add_ref(&mut self, name: &str, source: &Arc<Source>, span: Range<usize>) {
        if self.known(name) {
            return;
        }
        let start = source.line_col(span.start);
        let name = self.intern(name);
        let file = self.intern(source.name());
        let text = self.intern(&source.text()[span.clone()]);
        let kept = self.excerpts_of.entry(name).or_default();
        let excerpt = (*kept < EXCERPTS_PER_NAME && self.excerpts.len() < EXCERPTS).then(|| {
            *kept += 1;
            self.excerpts.push(source.excerpt(span, EXCERPT_CONTEXT));
            small(self.excerpts.len() - 1)
        });
        self.refs.push(ProviderRef {
            name,
            file,
            text,
            line: small(start.line),
            column: small(start.column),
            excerpt,
        });
    }

    /// What an object contributes: an SMP its name, the others their provider reference.
    pub fn collect(&mut self, object: &LoadedObject) {
        let o = &object.json;
        let (name, path): (&str, &[&str]) = match Target::of(o) {
            Some(Target::StateManagementProvider) => {
                self.add_smp(kcm::StateManagementProvider(o).name());
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
        if name.is_empty() || self.known(name) {
            return;
        }
        let segs: Vec<_> = path.iter().map(|k| key(k)).collect();
        let Some(node) = node_at(&object.node, &segs) else {
            return;
        };
        let span = object.source.first_line(node.span.clone());
        self.add_ref(name, &object.source, span);
    }

    /// Takes in what another input contributed (in input order).
    pub fn absorb(&mut self, other: Providers) {
        for smp in &other.smps {
            self.add_smp(smp);
        }
        for r in &other.refs {
            let (name, file, text) = (
                other.string(r.name),
                other.string(r.file),
                other.string(r.text),
            );
            if self.known(name) {
                continue;
            }
            let name = self.intern(name);
            let kept = self.excerpts_of.entry(name).or_default();
            let excerpt = r
                .excerpt
                .filter(|_| *kept < EXCERPTS_PER_NAME && self.excerpts.len() < EXCERPTS);
            let excerpt = excerpt.map(|e| {
                *kept += 1;
                self.excerpts.push(other.excerpts[e as usize].clone());
                small(self.excerpts.len() - 1)
            });
            let (file, text) = (self.intern(file), self.intern(text));
            self.refs.push(ProviderRef {
                name,
                file,
                text,
                excerpt,
                ..*r
            });
        }
    }

    /// The findings of every reference whose name is a near miss of a known provider.
    pub fn findings(&self) -> Vec<Diagnostic> {
        let mut known: Vec<&str> = self.smps.iter().map(|s| &**s).collect();
        known.push(DEFAULT_PROVIDER);
        // Once per distinct name: the closest known one, if close enough.
        let mut closest: HashMap<u32, Option<&str>> = HashMap::new();
        self.refs
            .iter()
            .filter_map(|r| {
                let name = self.string(r.name);
                let best = *closest.entry(r.name).or_insert_with(|| {
                    if self.known(name) {
                        return None;
                    }
                    let (d, best) = known.iter().map(|k| (edit_distance(k, name), *k)).min()?;
                    (d <= 2).then_some(best)
                });
                let best = best?;
                let (source, span) = match r.excerpt {
                    Some(e) => self.excerpts[e as usize].clone(),
                    None => {
                        let text = self.string(r.text);
                        let start = LineCol {
                            line: r.line as usize,
                            column: r.column as usize,
                        };
                        (
                            Source::fragment(self.string(r.file), text, start),
                            0..text.len(),
                        )
                    }
                };
                Some(
                    Diagnostic::new(
                        INFO.code,
                        INFO.severity,
                        format!("no StateManagementProvider {name:?}: did you mean {best:?}?"),
                    )
                    .at(&source, span)
                    .help(format!("set the provider name to {best:?}")),
                )
            })
            .collect()
    }
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
        let found = report.providers.findings();
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

    fn service_set(i: usize, provider: &str) -> String {
        format!(
            "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceSet\nmetadata:\n  name: s{i}\n  namespace: n\nspec:\n  provider:\n    name: {provider}\n"
        )
    }

    #[test]
    fn references_beyond_the_excerpt_budget_keep_their_position_and_known_ones_are_dropped() {
        let mut text = String::new();
        for i in 0..EXCERPTS_PER_NAME + 3 {
            text.push_str(&service_set(i, "ksm-flx"));
            text.push_str(&service_set(i, "ksm-projectsveltos"));
        }
        let source = Source::new("sets.yaml", text.as_str());
        let mut all = Providers::default();
        all.absorb(lint_source(&source, &Linter::default()).providers);
        // A later file defines the SMP the references nearly name.
        let smp = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: ksm-flux\nspec: {}\n";
        all.absorb(lint_source(&Source::new("smp.yaml", smp), &Linter::default()).providers);
        // The references to kcm's default provider were not kept.
        assert_eq!(all.refs.len(), EXCERPTS_PER_NAME + 3);
        let found = all.findings();
        assert_eq!(found.len(), EXCERPTS_PER_NAME + 3);
        let excerpts = found
            .iter()
            .filter(|d| !d.source.as_ref().unwrap().is_partial());
        assert_eq!(excerpts.count(), EXCERPTS_PER_NAME);
        for (i, d) in found.iter().enumerate() {
            let (start, end) = d.position().unwrap();
            let line = 9 + 18 * i;
            assert_eq!((start.line, start.column), (line, 11), "finding {i}");
            assert_eq!((end.line, end.column), (line, 18), "finding {i}");
            assert_eq!(d.file(), Some("sets.yaml"));
        }
        // Once an SMP of that name is known, the same references are neither findings nor kept.
        let mut fixed = Providers::default();
        let smp = smp.replace("ksm-flux", "ksm-flx");
        fixed.absorb(lint_source(&Source::new("smp.yaml", smp), &Linter::default()).providers);
        fixed.absorb(lint_source(&source, &Linter::default()).providers);
        assert!(fixed.findings().is_empty());
        assert!(fixed.refs.is_empty());
    }
}
