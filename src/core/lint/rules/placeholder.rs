//! KSM402: a template placeholder (`${VAR}`, `$VAR`, `<angle-bracket>`) left in a manifest.

use std::ops::Range;

use crate::core::lint::{Context, RuleInfo};
use crate::diag::yaml::{Node, NodeKind, Style};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM402",
    name: "template-placeholder",
    severity: Severity::Warning,
    title: "A template placeholder is left in the manifest: substitute it before applying",
    docs: "\
## What it finds
A value that is a template placeholder rather than a value: `${CLUSTER_NAME}`,
`$CREDENTIAL`, `<template-name>`. Repositories and documentation keep such manifests to be
filled by `envsubst`, a CI step or the reader. The finding replaces the schema or name error
the placeholder would otherwise cause (`${REPLICAS}` is not an integer), so that one cause is
reported once.

`--placeholders error|warning|ignore` (default `warning`) chooses its severity, or turns it
off: `error` for a directory of manifests meant to be applied as they are, `ignore` for a
repository of templates. Multi-line values (Helm values, scripts) are not read for
placeholders: `$VAR` is ordinary there.

## Why it matters
The API server takes `${CLUSTER_NAME}` as a name only where it is a valid one, and refuses
it elsewhere; a placeholder that does pass (a string field) deploys the placeholder itself.

## Example
```yaml
kind: ClusterDeployment
metadata:
  name: ${CLUSTER_NAME}
spec:
  template: <template-name>
```

## Fix
Substitute the values first (`envsubst < cd.yaml | kubectl ksm lint -`), or lint the
templates with `--placeholders ignore`.
",
};

/// The placeholder in a one-line string, if any: `${...}`, `$UPPER_CASE` or `<words>`.
pub fn find(text: &str) -> Option<&str> {
    if text.contains('\n') {
        return None;
    }
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'$' {
            if b.get(i + 1) == Some(&b'{') {
                if let Some(end) = text[i..].find('}') {
                    let inner = &text[i + 2..i + end];
                    if !inner.is_empty()
                        && inner.bytes().all(|c| {
                            c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'-' | b'=')
                        })
                    {
                        return Some(&text[i..=i + end]);
                    }
                }
            } else if i == 0 || !b[i - 1].is_ascii_alphanumeric() {
                let name_len = b[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b'_')
                    .count();
                if name_len >= 2 && b[i + 1].is_ascii_uppercase() {
                    return Some(&text[i..=i + name_len]);
                }
            }
        }
    }
    // `<name>` as the whole value or a word of it (not `a < b`, not HTML-like markup).
    let start = text.find('<')?;
    let end = start + text[start..].find('>')?;
    let inner = &text[start + 1..end];
    let word = inner
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b' '));
    let starts_alpha = inner
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic());
    (word && starts_alpha && !inner.ends_with(' ') && !text.contains(['\t']))
        .then(|| &text[start..=end])
}

/// Every one-line string scalar of an object holding a placeholder: (span, placeholder).
pub fn sites(root: &Node) -> Vec<(Range<usize>, String)> {
    let mut out = Vec::new();
    collect(root, &mut out);
    out
}

fn collect(node: &Node, out: &mut Vec<(Range<usize>, String)>) {
    match &node.kind {
        NodeKind::Scalar(s) if !matches!(s.style, Style::Literal | Style::Folded) => {
            if let Some(p) = find(&s.text) {
                out.push((node.span.clone(), p.to_string()));
            }
        }
        NodeKind::Seq(items) => items.iter().for_each(|n| collect(n, out)),
        NodeKind::Map(entries) => entries.iter().for_each(|(_, v)| collect(v, out)),
        _ => {}
    }
}

/// Reports each placeholder (at the severity chosen, or not at all), and drops the other
/// findings that point into a placeholder's value: the placeholder is their cause.
pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>, first_of_object: usize) {
    let sites = sites(ctx.root());
    if sites.is_empty() {
        return;
    }
    let inside = |d: &Diagnostic| {
        d.labels.first().is_some_and(|l| {
            sites
                .iter()
                .any(|(s, _)| l.span.start >= s.start && l.span.end <= s.end.max(s.start + 1))
        })
    };
    let mut i = first_of_object;
    while i < out.len() {
        if inside(&out[i]) {
            out.remove(i);
        } else {
            i += 1;
        }
    }
    let Some(severity) = ctx.linter.placeholders else {
        return;
    };
    for (span, p) in sites {
        out.push(
            Diagnostic::new(
                INFO.code,
                severity,
                format!("{p} is a template placeholder, not a value"),
            )
            .at(ctx.source(), ctx.source().first_line(span))
            .help("substitute it first (e.g. `envsubst < file | kubectl ksm lint -`), or lint templates with --placeholders ignore"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lint::test_support::lint_text;

    #[test]
    fn finds_the_usual_placeholders() {
        assert_eq!(find("${CLUSTER_NAME}"), Some("${CLUSTER_NAME}"));
        assert_eq!(find("prefix-${NAME}-x"), Some("${NAME}"));
        assert_eq!(find("$CREDENTIAL"), Some("$CREDENTIAL"));
        assert_eq!(find("<template-name>"), Some("<template-name>"));
        assert_eq!(find("<cluster name>-svc"), Some("<cluster name>"));
        for plain in [
            "dev-cluster",
            "a < b",
            "$lower",
            "price $5",
            "x\n${A}",
            "<>",
            "a<-b",
        ] {
            assert_eq!(find(plain), None, "{plain}");
        }
    }

    #[test]
    fn a_placeholder_is_one_finding_instead_of_schema_and_name_errors() {
        let text = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: ${CLUSTER_NAME}\n  namespace: kcm-system\nspec:\n  template: <template-name>\n  credential: aws-cred\n  dryRun: ${DRY_RUN}\n  config: {}\n";
        let lines = lint_text(text);
        assert_eq!(
            lines,
            [
                "KSM402 4:9 ${CLUSTER_NAME} is a template placeholder, not a value",
                "KSM402 7:13 <template-name> is a template placeholder, not a value",
                "KSM402 9:11 ${DRY_RUN} is a template placeholder, not a value",
            ]
        );
    }
}
