//! Silencing findings: codes disabled by the lint configuration, and inline suppressions in
//! the manifest, which must give a reason (as reviewers expect of every silenced check):
//!
//! ```yaml
//! # kubectl-ksm: ignore KSM204 -- the adapter Deployment is never scaled to zero
//! apiVersion: k0rdent.mirantis.com/v1beta1    # the comment above the document: whole document
//! kind: StateManagementProvider
//! metadata:
//!   name: ksm-flux  # kubectl-ksm: ignore KSM401 -- this line only (or the line below a
//!                   #   comment-only line)
//! ```
//!
//! Several codes are separated by commas; a name (`unguarded-omitted-field`) works as a code.
//! A suppression without a reason suppresses nothing and is itself reported (KSM407).

use crate::core::lint::{RuleInfo, find_rule};
use crate::diag::{Diagnostic, Severity, Source};

pub static NO_REASON: RuleInfo = RuleInfo {
    code: "KSM407",
    name: "suppression-without-reason",
    severity: Severity::Warning,
    title: "An inline suppression without a reason, or of an unknown code, suppresses nothing",
    docs: "\
## What it finds
A `# kubectl-ksm: ignore CODE` comment without ` -- reason`, or naming a code lint does not
have.

## Why it matters
A silenced check should say why, for the next reader and the reviewer; an unknown code is a
typo that silences nothing.

## Example
```yaml
# kubectl-ksm: ignore KSM204
```

## Fix
`# kubectl-ksm: ignore KSM204 -- the adapter Deployment is never scaled to zero`.
",
};

const MARKER: &str = "kubectl-ksm:";

/// One suppression comment: the codes, and the lines (1-based, inclusive) it covers.
#[derive(Debug)]
struct Suppression {
    codes: Vec<&'static str>,
    lines: std::ops::RangeInclusive<usize>,
}

/// Line numbers (1-based) where each YAML document starts (`---` or the first line).
fn document_ranges(text: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut starts = vec![1];
    for (i, l) in lines.iter().enumerate() {
        if (l.starts_with("---") && (l.len() == 3 || l[3..].starts_with([' ', '\t']))) && i > 0 {
            starts.push(i + 2);
        }
    }
    let mut out = Vec::new();
    for (k, s) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(lines.len().max(*s), |n| n - 2);
        out.push((*s, end.max(*s)));
    }
    out
}

fn parse(source: &std::sync::Arc<Source>, problems: &mut Vec<Diagnostic>) -> Vec<Suppression> {
    let text = source.text();
    let docs = document_ranges(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut offset = 0;
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        let line_start = offset;
        offset += line.len() + 1;
        let Some(hash) = line.find('#') else { continue };
        let comment = line[hash + 1..].trim_start();
        let Some(rest) = comment.strip_prefix(MARKER) else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("ignore") else {
            continue;
        };
        let span = line_start + hash..line_start + line.len();
        let (codes_text, reason) = match rest.split_once("--") {
            Some((c, r)) => (c, r.trim()),
            None => (rest, ""),
        };
        let mut codes = Vec::new();
        let mut unknown = Vec::new();
        for c in codes_text
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            match find_rule(c) {
                Some(r) => codes.push(r.code),
                None => unknown.push(c.to_string()),
            }
        }
        if reason.is_empty() || codes.is_empty() || !unknown.is_empty() {
            let why = if !unknown.is_empty() {
                format!("no lint code {}", unknown.join(", "))
            } else if codes.is_empty() {
                "no code named".to_string()
            } else {
                "no reason given after ` -- `".to_string()
            };
            problems.push(
                Diagnostic::new(
                    NO_REASON.code,
                    NO_REASON.severity,
                    format!("this suppression suppresses nothing: {why}"),
                )
                .at(source, span)
                .help("# kubectl-ksm: ignore KSM204 -- why the finding does not apply here"),
            );
            continue;
        }
        let comment_only = line[..hash].trim().is_empty();
        // A comment-only line before a document's first content line covers the document.
        let doc = docs.iter().find(|(s, e)| (*s..=*e).contains(&n));
        let header = comment_only
            && doc.is_some_and(|(s, _)| {
                lines[s - 1..i].iter().all(|l| {
                    l.trim().is_empty() || l.trim_start().starts_with('#') || l.starts_with("---")
                })
            });
        let covered = if header {
            let (s, e) = doc.copied().unwrap_or((n, n));
            s..=e
        } else if comment_only {
            n..=n + 1
        } else {
            n..=n
        };
        out.push(Suppression {
            codes,
            lines: covered,
        });
    }
    out
}

/// Drops the findings the configuration disables or a suppression covers; returns how many
/// were dropped. Problems of the suppressions themselves are added.
pub fn apply(
    source: &std::sync::Arc<Source>,
    disabled: &[&str],
    diags: &mut Vec<Diagnostic>,
) -> usize {
    let mut problems = Vec::new();
    let suppressions = if source.text().contains(MARKER) {
        parse(source, &mut problems)
    } else {
        Vec::new()
    };
    let before = diags.len();
    diags.retain(|d| {
        if disabled.contains(&d.code) {
            return false;
        }
        if suppressions.is_empty() {
            return true;
        }
        let Some((start, _)) = d.position() else {
            return true;
        };
        !suppressions
            .iter()
            .any(|s| s.codes.contains(&d.code) && s.lines.contains(&start.line))
    });
    let dropped = before - diags.len();
    diags.extend(problems.into_iter().filter(|p| !disabled.contains(&p.code)));
    dropped
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    const SMP: &str = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: ksm-flux\nspec:\n  selector: {matchLabels: {a: b}}\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: flux-adapter\n    namespace: kcm-system\n    readinessRule: self.status.readyReplicas > 0\n";

    #[test]
    fn suppressions_need_a_reason_and_cover_their_line_or_document() {
        let plain = lint_text(SMP);
        assert!(plain.iter().any(|l| l.starts_with("KSM204")), "{plain:?}");
        // The document's header comment covers the document.
        let doc = format!("# kubectl-ksm: ignore KSM204 -- never scaled to zero\n{SMP}");
        assert!(!lint_text(&doc).iter().any(|l| l.starts_with("KSM204")));
        // By name, on the line itself.
        let line = SMP.replace(
            "readinessRule: self.status.readyReplicas > 0",
            "readinessRule: self.status.readyReplicas > 0 # kubectl-ksm: ignore unguarded-omitted-field -- always set",
        );
        assert!(!lint_text(&line).iter().any(|l| l.starts_with("KSM204")));
        // Without a reason: nothing suppressed, and said so.
        let bare = format!("# kubectl-ksm: ignore KSM204\n{SMP}");
        let lines = lint_text(&bare);
        assert!(lines.iter().any(|l| l.starts_with("KSM204")), "{lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("KSM407 1:1 this suppression suppresses nothing: no reason")), "{lines:?}");
        let unknown = format!("# kubectl-ksm: ignore KSM999 -- typo\n{SMP}");
        assert!(
            lint_text(&unknown)
                .iter()
                .any(|l| l.contains("no lint code KSM999"))
        );
        // Another document of the file is not covered.
        let two = format!("{SMP}---\n# kubectl-ksm: ignore KSM204 -- only the second\n{SMP}");
        assert_eq!(
            lint_text(&two)
                .iter()
                .filter(|l| l.starts_with("KSM204"))
                .count(),
            1
        );
    }
}
