//! What a repository holds besides manifests: Helm chart templates (KSM404) and YAML that is
//! not Kubernetes objects, such as Chart.yaml and values.yaml (KSM405). Both are notes: the
//! file is skipped, said so, and the exit code is unchanged.

use std::ops::Range;

use crate::core::lint::{RuleInfo, key, node_at};
use crate::diag::yaml::{self, Node, NodeKind, Style};
use crate::diag::{Diagnostic, Severity, Source};

pub static HELM_TEMPLATE: RuleInfo = RuleInfo {
    code: "KSM404",
    name: "helm-template",
    severity: Severity::Info,
    title: "A Helm chart template: render it first, then lint the output",
    docs: "\
## What it finds
A file with Go template actions (`{{ .Values.x }}`, `{{- if ... }}`) outside YAML block
scalars: a template of a Helm chart (`templates/*.yaml`), not a manifest. Templated Helm
values inside a block scalar (`values: |` of a ClusterDeployment service, which kcm's Sveltos
provider instantiates) are not templates of the file and are linted as usual.

## Why it matters
A template is not YAML until Helm renders it: linting it as such reports syntax errors that
are not mistakes, and hides the mistakes of the objects it renders.

## Example
```yaml
metadata:
  name: {{ .Values.name }}
```

## Fix
Render the chart and lint the objects it produces:
`helm template my-release charts/my-chart | kubectl ksm lint -`.
",
};

pub static NOT_KUBERNETES: RuleInfo = RuleInfo {
    code: "KSM405",
    name: "not-kubernetes-yaml",
    severity: Severity::Info,
    title: "YAML that is not Kubernetes objects (Chart.yaml, values.yaml) is skipped",
    docs: "\
## What it finds
A YAML file whose documents are all mappings without `kind` and `metadata`: configuration,
not Kubernetes objects. Helm's `Chart.yaml` and `values.yaml`, CI configuration and the like sit next to
manifests in a repository.

## Why it matters
It is not for the API server, so lint has nothing to check; a directory walk notes it and
goes on. A document that does look like an object (it has `kind` or `metadata`) but lacks
`apiVersion` or `kind` is still an error (KSM002).

## Example
```yaml
# Chart.yaml
apiVersion: v2
name: my-chart
version: 0.1.0
```

## Fix
Nothing to fix. Exclude the path in the lint configuration to silence the note.
",
};

/// Spans of the block scalars (`|`, `>`) of a node.
fn block_scalars(node: &Node, out: &mut Vec<Range<usize>>) {
    match &node.kind {
        NodeKind::Scalar(s) if matches!(s.style, Style::Literal | Style::Folded) => {
            out.push(node.span.clone())
        }
        NodeKind::Seq(items) => items.iter().for_each(|n| block_scalars(n, out)),
        NodeKind::Map(entries) => entries.iter().for_each(|(k, v)| {
            block_scalars(k, out);
            block_scalars(v, out);
        }),
        _ => {}
    }
}

/// Offsets of `{{` outside comment lines.
fn template_actions(text: &str) -> Vec<usize> {
    text.match_indices("{{")
        .map(|(i, _)| i)
        .filter(|&i| {
            let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
            // The line has `{{`, so its first character that is not blank is on it.
            !text[line_start..].trim_start().starts_with('#')
        })
        .collect()
}

/// The note for a Helm template, if the source is one: it has `{{` outside block scalars
/// (or it is no YAML at all, and has `{{`).
pub fn helm_template(source: &std::sync::Arc<Source>) -> Option<Diagnostic> {
    let actions = template_actions(source.text());
    if actions.is_empty() || !source.text().contains("}}") {
        return None;
    }
    let (docs, err) = yaml::parse_documents(source);
    let mut blocks = Vec::new();
    for d in &docs {
        if let Some(root) = &d.root {
            block_scalars(root, &mut blocks);
        }
    }
    let outside = actions
        .iter()
        .copied()
        .find(|&a| err.is_some() || !blocks.iter().any(|b| b.contains(&a)))?;
    let end = source.text()[outside..]
        .find("}}")
        .map_or(outside + 2, |e| outside + e + 2);
    Some(
        Diagnostic::new(
            HELM_TEMPLATE.code,
            HELM_TEMPLATE.severity,
            "a Helm template, not a manifest: skipped",
        )
        .at(source, source.first_line(outside..end))
        .help("render it first: helm template RELEASE CHART | kubectl ksm lint -"),
    )
}

/// The note for a file of YAML that is not Kubernetes objects, if it is one.
pub fn not_kubernetes(source: &std::sync::Arc<Source>) -> Option<Diagnostic> {
    let (docs, err) = yaml::parse_documents(source);
    if err.is_some() {
        return None;
    }
    // Configuration is mappings; a list or a string where a manifest was expected stays an
    // error (KSM002), as does a mapping that looks like an object.
    let config = |n: &Node| {
        n.as_map().is_some()
            && node_at(n, &[key("kind")]).is_none()
            && node_at(n, &[key("metadata")]).is_none()
    };
    if !docs
        .iter()
        .filter_map(|d| d.root.as_ref())
        .all(|r| config(r.resolved()))
    {
        return None;
    }
    Some(
        Diagnostic::new(
            NOT_KUBERNETES.code,
            NOT_KUBERNETES.severity,
            "not Kubernetes objects (no document has a kind): skipped",
        )
        .in_file(source),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lint::test_support::lint_text;

    #[test]
    fn helm_templates_are_a_note_not_syntax_errors() {
        let t = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceTemplate\nmetadata:\n  name: {{ .Values.name }}\nspec:\n{{- if .Values.helm }}\n  helm: {}\n{{- end }}\n";
        assert_eq!(
            lint_text(t),
            ["KSM404 4:9 a Helm template, not a manifest: skipped"]
        );
        // Templated values in a block scalar are kcm's, not the file's.
        let values = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceSet\nmetadata:\n  name: x\n  namespace: y\nspec:\n  services:\n  - name: a\n    template: t\n    values: |\n      name: {{ .Cluster.metadata.name }}\n";
        assert!(helm_template(&Source::new("v.yaml", values)).is_none());
        assert!(helm_template(&Source::new("c.yaml", "# {{ not }}\na: 1\n")).is_none());
    }

    #[test]
    fn chart_and_values_files_are_skipped_with_a_note() {
        for text in [
            "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
            "replicaCount: 1\nimage: {repository: x}\n",
        ] {
            let source = Source::new("Chart.yaml", text);
            assert!(not_kubernetes(&source).is_some(), "{text}");
        }
        // Meant as an object: still an error.
        assert!(not_kubernetes(&Source::new("x.yaml", "metadata: {name: x}\n")).is_none());
        assert!(not_kubernetes(&Source::new("x.yaml", "- a\n- b\n")).is_none());
        assert!(lint_text("metadata: {name: x}\n")[0].starts_with("KSM002"));
    }
}
