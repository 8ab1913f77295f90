//! Rendering of `doctor`: a summary table, a tree per ServiceSet and the findings of each
//! MultiClusterService (human), a versioned JSON report, or the same as YAML.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::eval::Paint;
use super::yaml;
use crate::core::doctor::{Report, ServiceSetView, ServiceView, Severity};
use crate::diag::Diagnostic;

/// A finding in the JSON report: its object and chain, its message and the next step.
fn finding_json(d: &Diagnostic) -> Value {
    let (object, chain) = match &d.subject {
        Some(s) => (json!(s.object), json!(s.chain)),
        None => (Value::Null, json!([])),
    };
    json!({"severity": d.severity, "code": d.code, "object": object, "chain": chain,
           "message": d.message, "hint": d.help})
}

/// The worst severity of a list of findings (None: no finding).
pub(super) fn worst(r: &Report, ids: &[usize]) -> Option<Severity> {
    ids.iter().map(|i| r.findings[*i].severity).min()
}

pub(super) fn status_word(sev: Option<Severity>) -> &'static str {
    match sev {
        Some(Severity::Error) => "problems",
        Some(Severity::Warning) => "warnings",
        _ => "healthy",
    }
}

/// A ServiceSet's status word and its healthy services, as the summary counts them: no
/// service is healthy under a set with a problem of its own.
pub(super) fn set_status(r: &Report, v: &ServiceSetView) -> (&'static str, usize) {
    let only_info = |ids: &[usize]| {
        ids.iter()
            .all(|i| r.findings[*i].severity == Severity::Info)
    };
    let ok = if only_info(&v.findings) {
        v.services.iter().filter(|s| only_info(&s.findings)).count()
    } else {
        0
    };
    (status_word(worst(r, &all_findings(v))), ok)
}

/// The findings of a ServiceSet and of its services.
pub(super) fn all_findings(v: &ServiceSetView) -> Vec<usize> {
    v.findings
        .iter()
        .chain(v.services.iter().flat_map(|s| s.findings.iter()))
        .copied()
        .collect()
}

/// A service's state: what its ServiceSet reports, and what the provider's objects say when
/// they say otherwise (None: neither says anything).
pub(super) fn state_words(v: &ServiceSetView, s: &ServiceView) -> Option<String> {
    match (&s.reported, &s.observed) {
        (Some(a), Some(b)) if a == b => Some(a.clone()),
        (Some(a), Some(b)) => Some(format!("{a} ({}: {b})", v.translation)),
        (Some(a), None) => Some(a.clone()),
        (None, Some(b)) => Some(format!("{}: {b}", v.translation)),
        (None, None) => None,
    }
}

pub fn report_json(r: &Report) -> Value {
    let findings: Vec<Value> = r.findings.iter().map(finding_json).collect();
    let sets: Vec<Value> = r
        .service_sets
        .iter()
        .map(|v| {
            let (status, healthy) = set_status(r, v);
            let services: Vec<Value> = v
                .services
                .iter()
                .map(|s| {
                    json!({"name": s.name, "namespace": s.namespace, "reported": s.reported,
                        "observed": s.observed, "object": s.flux_object, "source": s.source,
                        "status": status_word(worst(r, &s.findings)), "findings": s.findings})
                })
                .collect();
            json!({"namespace": v.service_set.namespace, "name": v.service_set.name,
                "provider": v.provider, "translation": v.translation, "status": status,
                "healthyServices": healthy, "findings": v.findings, "services": services})
        })
        .collect();
    let mcs: Vec<Value> = r
        .multi_cluster_services
        .iter()
        .map(|m| {
            json!({"name": m.name, "status": status_word(worst(r, &m.findings)),
                "findings": m.findings})
        })
        .collect();
    super::envelope(
        "DoctorReport",
        json!({"findings": findings, "summary": r.summary, "serviceSets": sets,
            "multiClusterServices": mcs}),
    )
}

pub fn json(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &report_json(r))?;
    writeln!(out)
}

pub fn yaml(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let mut text = String::new();
    yaml::write_document(&report_json(r), &mut text);
    out.write_all(text.as_bytes())
}

fn mark(p: &Paint, sev: Option<Severity>) -> String {
    match sev {
        Some(Severity::Error) => p.red("✗"),
        Some(Severity::Warning) => p.yellow("!"),
        Some(Severity::Info) => p.dim("i"),
        None => p.green("✓"),
    }
}

pub fn human(out: &mut dyn Write, r: &Report, color: bool) -> io::Result<()> {
    let p = Paint { color };
    if r.service_sets.is_empty() {
        writeln!(out, "No ServiceSets found.")?;
        if r.multi_cluster_services
            .iter()
            .any(|m| !m.findings.is_empty())
        {
            writeln!(out)?;
        }
    }
    // Summary table.
    if !r.service_sets.is_empty() {
        let rows: Vec<[String; 5]> = r
            .service_sets
            .iter()
            .map(|v| {
                let (status, ok) = set_status(r, v);
                [
                    v.service_set.namespace.clone(),
                    v.service_set.name.clone(),
                    v.provider.clone(),
                    format!("{ok}/{}", v.services.len()),
                    status.to_string(),
                ]
            })
            .collect();
        let header = ["NAMESPACE", "SERVICESET", "PROVIDER", "HEALTHY", "STATUS"];
        let widths: Vec<usize> = (0..5)
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].len())
                    .chain([header[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i + 1 == cells.len() {
                        c.clone()
                    } else {
                        format!("{c:<w$}", w = widths[i])
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        writeln!(out, "{}", p.bold(&line(&header.map(String::from))))?;
        for row in &rows {
            writeln!(out, "{}", line(row))?;
        }
        writeln!(out)?;
    }
    // What holds for the whole diagnosis (a kind it could not read), before the trees.
    for i in &r.general {
        finding(out, &p, r, *i, "")?;
    }
    if !r.general.is_empty() {
        writeln!(out)?;
    }
    // One tree per ServiceSet with problems (or every one with -v is left to JSON).
    for v in &r.service_sets {
        // A set is as bad as its worst finding, its services' included: never a ✓ on a set
        // with a failed service.
        let set_worst = v
            .findings
            .iter()
            .chain(v.services.iter().flat_map(|s| s.findings.iter()))
            .map(|i| r.findings[*i].severity)
            .min();
        writeln!(
            out,
            "{} ServiceSet {}/{} (provider {})",
            mark(&p, set_worst),
            v.service_set.namespace,
            v.service_set.name,
            v.provider
        )?;
        for i in &v.findings {
            finding(out, &p, r, *i, "│   ")?;
        }
        for (n, s) in v.services.iter().enumerate() {
            let last = n + 1 == v.services.len();
            let (branch, cont) = if last {
                ("└── ", "    ")
            } else {
                ("├── ", "│   ")
            };
            let worst = s.findings.iter().map(|i| r.findings[*i].severity).min();
            let state = state_words(v, s).unwrap_or_else(|| "-".into());
            writeln!(
                out,
                "{branch}{} {}/{}: {state}",
                mark(&p, worst),
                s.namespace,
                s.name
            )?;
            if let Some(obj) = &s.flux_object {
                let src = s
                    .source
                    .as_deref()
                    .map(|x| format!(" ← {x}"))
                    .unwrap_or_default();
                writeln!(out, "{cont}    {}", p.dim(&format!("{obj}{src}")))?;
            }
            for i in &s.findings {
                finding(out, &p, r, *i, &format!("{cont}    "))?;
            }
        }
        writeln!(out)?;
    }
    // A MultiClusterService with findings: blocked targets may have no ServiceSet to show.
    for m in r
        .multi_cluster_services
        .iter()
        .filter(|m| !m.findings.is_empty())
    {
        writeln!(
            out,
            "{} MultiClusterService {}",
            mark(&p, worst(r, &m.findings)),
            m.name
        )?;
        for i in &m.findings {
            finding(out, &p, r, *i, "    ")?;
        }
        writeln!(out)?;
    }
    writeln!(out, "{}", summary_line(r))
}

/// `2 ServiceSets, 3 services: 2 healthy; 1 error, 0 warnings`
pub fn summary_line(r: &Report) -> String {
    use super::count;
    format!(
        "{}, {}: {} healthy; {}, {}",
        count(r.summary.service_sets, "ServiceSet"),
        count(r.summary.services, "service"),
        r.summary.healthy_services,
        count(r.summary.errors, "error"),
        count(r.summary.warnings, "warning")
    )
}

fn finding(out: &mut dyn Write, p: &Paint, r: &Report, i: usize, indent: &str) -> io::Result<()> {
    let f = &r.findings[i];
    // A finding about the whole diagnosis, cited where a chain stops on it: said above.
    if !indent.is_empty() && r.general.contains(&i) {
        let what = f.subject.as_ref().map_or("", |s| s.object.kind.as_str());
        return writeln!(
            out,
            "{indent}{} {} not followed: {what} could not be read (above)",
            mark(p, Some(f.severity)),
            p.bold(f.code)
        );
    }
    writeln!(
        out,
        "{indent}{} {} {}",
        mark(p, Some(f.severity)),
        p.bold(f.code),
        f.message
    )?;
    writeln!(
        out,
        "{indent}  {} {}",
        p.dim("hint:"),
        f.help.as_deref().unwrap_or("")
    )
}

/// One line of `doctor --watch`'s timeline: when, about what, what happened (a Warning Event
/// or a failing link in yellow).
pub fn timeline_entry(
    out: &mut dyn Write,
    e: &crate::core::timeline::Entry,
    color: bool,
) -> io::Result<()> {
    let p = super::eval::Paint { color };
    let text = if e.warning {
        p.yellow(&e.text)
    } else {
        e.text.clone()
    };
    writeln!(out, "{}  {}  {text}", p.dim(&e.time), e.object)
}
