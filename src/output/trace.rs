//! Rendering of `trace`: each service's chain as `flux trace` prints one (a block of aligned
//! `Key: value` lines per object, `---` between them), ending with the verdict; or the
//! versioned document as JSON or YAML.

use std::io::{self, Write};

use super::eval::Paint;
use crate::core::trace::{ServiceTrace, Trace};

pub fn json(out: &mut dyn Write, t: &Trace) -> io::Result<()> {
    super::write_report(out, "Trace", t, false)
}

pub fn yaml(out: &mut dyn Write, t: &Trace) -> io::Result<()> {
    super::write_report(out, "Trace", t, true)
}

pub fn human(out: &mut dyn Write, t: &Trace, color: bool) -> io::Result<()> {
    let p = Paint { color };
    for (i, s) in t.services.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        service(out, s, &p)?;
    }
    Ok(())
}

fn service(out: &mut dyn Write, s: &ServiceTrace, p: &Paint) -> io::Result<()> {
    let width = s
        .hops
        .iter()
        .flat_map(|h| {
            std::iter::once(h.kind.len()).chain(h.facts.0.iter().map(|(k, _)| words(k).len()))
        })
        .chain(["Service".len(), "Verdict".len(), "Hint".len()])
        .max()
        .unwrap_or(0)
        + 2;
    let line = |out: &mut dyn Write, key: &str, value: &str| -> io::Result<()> {
        let key = format!("{key}:");
        // Continuation lines of a long value line up under its first.
        let mut lines = value.lines();
        writeln!(out, "{key:<width$}{}", lines.next().unwrap_or(""))?;
        for l in lines {
            writeln!(out, "{:width$}{l}", "")?;
        }
        Ok(())
    };
    line(out, "Service", &p.bold(&s.service))?;
    for h in &s.hops {
        writeln!(out, "---")?;
        let name = if h.missing {
            format!("{} {}", h.name, p.red("(not found)"))
        } else {
            h.name.clone()
        };
        line(out, &h.kind, &name)?;
        for (k, v) in &h.facts.0 {
            let v = match *k {
                "state" => paint_state(p, v),
                _ => v.clone(),
            };
            line(out, &words(k), &v)?;
        }
    }
    writeln!(out, "---")?;
    let v = &s.verdict;
    let verdict = match (&v.finding, v.healthy) {
        (Some(f), false) => format!(
            "{} {}: {}",
            paint_severity(p, &f.severity),
            f.code,
            f.message
        ),
        (Some(f), true) => format!("{} ({}: {})", p.green("healthy"), f.code, f.message),
        (None, true) => match v.state.as_deref() {
            Some("Deployed") => p.green("healthy"),
            Some(state) => format!("no problem found (the service is {state})"),
            None => "no problem found (no state reported yet)".to_string(),
        },
        (None, false) => p.yellow("not healthy"),
    };
    line(out, "Verdict", &verdict)?;
    if let Some(hint) = v
        .finding
        .as_ref()
        .filter(|_| !v.healthy)
        .and_then(|f| f.hint.as_deref())
    {
        line(out, "Hint", hint)?;
    }
    Ok(())
}

/// A fact's key in words: `syncMode` is `Sync mode`.
fn words(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 2);
    for (i, c) in key.chars().enumerate() {
        if i == 0 {
            out.extend(c.to_uppercase());
        } else if c.is_ascii_uppercase() {
            out.push(' ');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn paint_state(p: &Paint, v: &str) -> String {
    let (word, rest) = v.split_once(' ').unwrap_or((v, ""));
    let word = match word {
        "Deployed" | "Provisioned" => p.green(word),
        "Failed" => p.red(word),
        _ => p.yellow(word),
    };
    if rest.is_empty() {
        word
    } else {
        format!("{word} {rest}")
    }
}

fn paint_severity(p: &Paint, severity: &str) -> String {
    match severity {
        "error" => p.red(severity),
        "warning" => p.yellow(severity),
        _ => severity.to_string(),
    }
}
