//! Rendering of `tree`: the MultiClusterServices with their clusters, then each cluster with
//! its ServiceSets and services (human, drawn as `flux tree` draws), or the versioned
//! document as JSON or YAML.

use std::io::{self, Write};

use super::eval::Paint;
use crate::core::tree::{ServiceNode, SetNode, Tree};

pub fn json(out: &mut dyn Write, t: &Tree) -> io::Result<()> {
    super::write_report(out, "Tree", t, false)
}

pub fn yaml(out: &mut dyn Write, t: &Tree) -> io::Result<()> {
    super::write_report(out, "Tree", t, true)
}

/// The branch and the continuation of the item `i` of `n`.
fn branch(i: usize, n: usize) -> (&'static str, &'static str) {
    if i + 1 == n {
        ("└── ", "    ")
    } else {
        ("├── ", "│   ")
    }
}

fn state_word(p: &Paint, state: Option<&str>) -> String {
    match state {
        Some("Deployed") => p.green("Deployed"),
        Some(s @ "Failed") => p.red(s),
        Some(s) => p.yellow(s),
        None => p.dim("no state yet"),
    }
}

pub fn human(out: &mut dyn Write, t: &Tree, color: bool) -> io::Result<()> {
    let p = Paint { color };
    if t.multi_cluster_services.is_empty() && t.clusters.is_empty() {
        return writeln!(
            out,
            "No MultiClusterServices, ClusterDeployments or ServiceSets found."
        );
    }
    for (k, m) in t.multi_cluster_services.iter().enumerate() {
        let selector = if m.selector.is_empty() {
            "selects no ClusterDeployment".to_string()
        } else {
            format!("selector {}", m.selector)
        };
        let mut head = format!(
            "{} ({selector}",
            p.bold(&format!("MultiClusterService/{}", m.name))
        );
        if m.self_management {
            head.push_str(", self-management");
        }
        if !m.depends_on.is_empty() {
            head.push_str(&format!(", depends on {}", m.depends_on.join(", ")));
        }
        writeln!(out, "{head})")?;
        let n = m.targets.len() + m.not_matched.len();
        for (i, target) in m.targets.iter().enumerate() {
            let (b, cont) = branch(i, n);
            let deployed = match target.deployed {
                Some(true) => p.green("deployed"),
                Some(false) => p.yellow("not deployed"),
                None => p.dim("not in kcm's status yet"),
            };
            writeln!(
                out,
                "{b}{} {deployed} {}",
                target.cluster,
                p.dim(&format!("(ServiceSet {})", target.service_set))
            )?;
            if !target.reason.is_empty() || !target.message.is_empty() {
                writeln!(out, "{cont}    {}: {}", target.reason, target.message)?;
            }
        }
        for (j, nm) in m.not_matched.iter().enumerate() {
            let (b, _) = branch(m.targets.len() + j, n);
            let has = match &nm.has {
                Some(v) => format!("it has {v:?}"),
                None => "it has no such label".to_string(),
            };
            writeln!(
                out,
                "{b}{} {}",
                nm.cluster,
                p.dim(&format!("not matched: {} ({has})", nm.requirement))
            )?;
        }
        // A blank line between sections, none after the last.
        if k + 1 < t.multi_cluster_services.len() || !t.clusters.is_empty() {
            writeln!(out)?;
        }
    }
    for (k, c) in t.clusters.iter().enumerate() {
        let missing = if c.missing {
            format!(" {}", p.yellow("(not found; its ServiceSets name it)"))
        } else {
            String::new()
        };
        writeln!(out, "{}{missing}", p.bold(&c.cluster))?;
        if c.service_sets.is_empty() {
            writeln!(out, "└── {}", p.dim("no ServiceSet"))?;
        }
        for (i, s) in c.service_sets.iter().enumerate() {
            let (b, cont) = branch(i, c.service_sets.len());
            set(out, &p, s, b, cont)?;
        }
        if k + 1 < t.clusters.len() {
            writeln!(out)?;
        }
    }
    Ok(())
}

fn set(out: &mut dyn Write, p: &Paint, s: &SetNode, b: &str, cont: &str) -> io::Result<()> {
    let from = s
        .multi_cluster_service
        .as_deref()
        .map(|m| format!(", from MultiClusterService/{m}"))
        .unwrap_or_default();
    writeln!(
        out,
        "{b}ServiceSet/{}/{} {}",
        s.namespace,
        s.name,
        p.dim(&format!(
            "(provider {}, {}{from})",
            s.provider, s.translation
        ))
    )?;
    for problem in &s.problems {
        writeln!(out, "{cont}│ {}", p.red(problem))?;
    }
    let width = s
        .services
        .iter()
        .map(|v| v.namespace.len() + v.name.len() + 1)
        .max();
    for (i, v) in s.services.iter().enumerate() {
        let (b2, cont2) = branch(i, s.services.len());
        service(
            out,
            p,
            v,
            &format!("{cont}{b2}"),
            &format!("{cont}{cont2}"),
            width.unwrap_or(0),
        )?;
    }
    Ok(())
}

fn service(
    out: &mut dyn Write,
    p: &Paint,
    v: &ServiceNode,
    b: &str,
    cont: &str,
    width: usize,
) -> io::Result<()> {
    let name = format!("{}/{}", v.namespace, v.name);
    let mut line = format!("{b}{name:<width$}  {}", state_word(p, v.state.as_deref()));
    if let Some(age) = &v.age {
        line.push_str(&format!(" {}", p.dim(&format!("for {age}"))));
    }
    if let Some(observed) = v
        .observed
        .as_deref()
        .filter(|o| Some(*o) != v.state.as_deref())
    {
        line.push_str(&format!(" {}", p.dim(&format!("(objects say {observed})"))));
    }
    if !v.template.is_empty() {
        line.push_str(&format!(" {}", p.dim(&format!("template {}", v.template))));
    }
    writeln!(out, "{line}")?;
    if !v.depends_on.is_empty() {
        writeln!(out, "{cont}  depends on {}", v.depends_on.join(", "))?;
    }
    if let Some(owner) = &v.owner {
        writeln!(
            out,
            "{cont}  {}",
            p.yellow(&format!("release owned by {owner}"))
        )?;
    }
    if let Some(problem) = &v.problem {
        writeln!(out, "{cont}  {}", p.red(problem))?;
    }
    Ok(())
}
