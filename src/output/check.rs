//! Rendering of `check`: the conditions kcm would set, and the rule evaluations behind them.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::eval::{Paint, explanation, outcome_json, verdict};
use crate::core::readiness::{Skipped, SmpCheck, Status};

/// (condition type, what kcm recorded, what the evaluation gives now), per check.
pub type Disagreements = Vec<(String, String, String)>;

pub fn json(
    out: &mut dyn Write,
    checks: &[SmpCheck],
    disagreements: &[Disagreements],
) -> io::Result<()> {
    let arr: Vec<Value> = checks
        .iter()
        .zip(disagreements)
        .map(|(c, d)| {
            json!({
                "smp": c.smp,
                "skipped": c.skipped,
                "ready": c.ready,
                "conditions": c.conditions,
                "statusDisagreements": d.iter().map(|(t, then, now)| json!({"type": t, "recorded": then, "now": now})).collect::<Vec<_>>(),
                "evaluations": c.evaluations.iter().map(|e| {
                    let mut v = json!({"role": e.role, "reference": e.reference, "found": e.found});
                    if let (Some(o), Value::Object(m)) = (&e.outcome, &mut v)
                        && let Value::Object(om) = outcome_json(o) { m.extend(om); }
                    v
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let ready = checks.iter().filter(|c| c.ready).count();
    let report = super::envelope(
        "CheckReport",
        json!({
            "providers": arr,
            "summary": {"providers": checks.len(), "ready": ready, "notReady": checks.len() - ready},
        }),
    );
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

fn skipped_text(s: Skipped) -> &'static str {
    match s {
        Skipped::SelectorNotDefined => {
            "kcm does not reconcile it: spec.selector is not set (event StateManagementProviderSelectorNotDefined); its status is never written"
        }
        Skipped::Suspended => {
            "kcm does not reconcile it: spec.suspend is true (event StateManagementProviderSuspended); its status keeps its last values and adapters skip its ServiceSets"
        }
        Skipped::Deleting => "kcm does not reconcile it: it is being deleted",
    }
}

pub fn human(
    out: &mut dyn Write,
    checks: &[SmpCheck],
    disagreements: &[Disagreements],
    color: bool,
) -> io::Result<()> {
    let p = Paint { color };
    for (i, (c, disagree)) in checks.iter().zip(disagreements).enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let state = if c.ready {
            p.green("READY")
        } else {
            p.red("NOT READY")
        };
        writeln!(
            out,
            "{} {}: {state}",
            p.bold("StateManagementProvider"),
            p.bold(&c.smp.name)
        )?;
        if let Some(s) = c.skipped {
            writeln!(out, "  {}", skipped_text(s))?;
            continue;
        }
        let w_type = c
            .conditions
            .iter()
            .map(|c| c.type_.len())
            .max()
            .unwrap_or(9)
            .max(9);
        let w_reason = c
            .conditions
            .iter()
            .map(|c| c.reason.len())
            .max()
            .unwrap_or(6)
            .max(6);
        writeln!(
            out,
            "  {:<w_type$}  {:<7}  {:<w_reason$}  MESSAGE",
            "CONDITION", "STATUS", "REASON"
        )?;
        for cond in &c.conditions {
            let status = format!("{:<7}", format!("{:?}", cond.status));
            let status = match cond.status {
                Status::True => p.green(&status),
                Status::False => p.red(&status),
                Status::Unknown => p.yellow(&status),
            };
            let message = cond.message.lines().next().unwrap_or("");
            writeln!(
                out,
                "  {:<w_type$}  {status}  {:<w_reason$}  {message}",
                cond.type_, cond.reason
            )?;
        }
        for (t, then, now) in disagree {
            writeln!(
                out,
                "  {} {t}: kcm last wrote {then}, the evaluation now gives {now}",
                p.yellow("status differs:")
            )?;
        }
        for e in &c.evaluations {
            let r = &e.reference;
            let target = if r.namespace.is_empty() {
                format!("{}/{}", r.kind, r.name)
            } else {
                format!("{}/{}/{}", r.kind, r.namespace, r.name)
            };
            let v = match &e.outcome {
                None => p.red("not found"),
                Some(o) if r.readiness_rule.is_empty() => {
                    format!("{} (empty rule)", verdict(o, &p))
                }
                Some(o) => verdict(o, &p),
            };
            writeln!(out, "  {} {target}: {v}", e.role)?;
            if let Some(o) = &e.outcome {
                if o.result != Some(true) && !r.readiness_rule.is_empty() {
                    writeln!(
                        out,
                        "    rule: {}",
                        r.readiness_rule
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ")
                    )?;
                }
                explanation(out, &o.explanation, 4, &p)?;
            }
        }
        if c.conditions
            .first()
            .is_some_and(|r| r.reason == "NotEvaluatedOffline")
        {
            writeln!(out, "  {}", p.dim("RBACReady is not evaluated offline; READY assumes kcm creates the RBAC objects."))?;
        }
    }
    Ok(())
}
