//! Rendering of rule evaluations (`eval`, and the explanations of `check`).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::core::cel::{Clause, ClauseKind};
use crate::core::objects::ObjectId;
use crate::core::readiness::RuleOutcome;

pub struct Result {
    pub object: ObjectId,
    pub outcome: RuleOutcome,
}

/// A CEL value as shown in an explanation: booleans as JSON booleans, anything else as its
/// CEL text (`'abc'`, `3`, `[1, 2]`).
fn value_json(text: &str) -> Value {
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(text.to_string()),
    }
}

pub fn clause_json(c: &Clause) -> Value {
    let (value, error) = match &c.value {
        Ok(v) => (value_json(v), Value::Null),
        Err(e) => (Value::Null, Value::String(e.clone())),
    };
    json!({
        "depth": c.depth,
        "text": c.text,
        "kind": format!("{:?}", c.kind).to_lowercase(),
        "value": value,
        "error": error,
        "operands": c.operands.iter().map(|(text, v)| match v {
            Ok(v) => json!({"text": text, "value": value_json(v), "error": null}),
            Err(e) => json!({"text": text, "value": null, "error": e}),
        }).collect::<Vec<_>>(),
    })
}

pub fn outcome_json(o: &RuleOutcome) -> Value {
    json!({
        "result": o.result,
        "error": o.error.as_ref().map(|e| json!({"phase": e.phase, "message": e.message})),
        "explanation": o.explanation.iter().map(clause_json).collect::<Vec<_>>(),
    })
}

/// `-o json`: the rule, one result per object in input order, and the counts.
pub fn json(out: &mut dyn Write, rule: &str, results: &[Result]) -> io::Result<()> {
    let (t, f, e) = counts(results);
    let arr: Vec<Value> = results
        .iter()
        .map(|r| {
            let mut v = json!({"object": r.object});
            if let (Value::Object(m), Value::Object(o)) = (&mut v, outcome_json(&r.outcome)) {
                m.extend(o);
            }
            v
        })
        .collect();
    let report = super::envelope(
        "EvalReport",
        json!({
            "rule": rule,
            "results": arr,
            "summary": {"objects": results.len(), "true": t, "false": f, "failed": e},
        }),
    );
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

/// (true, false, failed) results.
fn counts(results: &[Result]) -> (usize, usize, usize) {
    let t = results
        .iter()
        .filter(|r| r.outcome.result == Some(true))
        .count();
    let f = results
        .iter()
        .filter(|r| r.outcome.result == Some(false))
        .count();
    (t, f, results.len() - t - f)
}

pub struct Paint {
    pub color: bool,
}

impl Paint {
    pub fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.wrap("31", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.wrap("33", s)
    }
    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// The verdict word of an outcome.
pub fn verdict(o: &RuleOutcome, p: &Paint) -> String {
    match (o.result, &o.error) {
        (Some(true), _) => p.green("true"),
        (Some(false), _) => p.red("false"),
        (None, Some(e)) => p.red(&format!("error ({}): {}", phase_word(e.phase), e.message)),
        (None, None) => p.red("error"),
    }
}

fn phase_word(p: crate::core::readiness::Phase) -> &'static str {
    match p {
        crate::core::readiness::Phase::Compile => "compile",
        crate::core::readiness::Phase::Evaluate => "evaluate",
    }
}

/// Writes the clause breakdown, indented by `indent` spaces.
pub fn explanation(
    out: &mut dyn Write,
    clauses: &[Clause],
    indent: usize,
    p: &Paint,
) -> io::Result<()> {
    for c in clauses {
        let pad = " ".repeat(indent + 2 * c.depth);
        let (mark, value) = match &c.value {
            Ok(v) if v == "true" => (p.green("✓"), p.green(v)),
            Ok(v) if v == "false" => (p.red("✗"), p.red(v)),
            Ok(v) => (p.dim("·"), v.clone()),
            Err(e) => (p.red("!"), p.red(&format!("error: {e}"))),
        };
        let text = one_line(&c.text);
        let operands = if c.kind == ClauseKind::Comparison && c.operands.len() == 2 {
            let show = |v: &std::result::Result<String, String>| match v {
                Ok(v) => v.clone(),
                Err(e) => format!("<error: {e}>"),
            };
            let op = comparison_operator(&c.text, &c.operands[0].0, &c.operands[1].0);
            format!(
                " {} {} {} {}",
                p.dim("→"),
                show(&c.operands[0].1),
                op,
                show(&c.operands[1].1)
            )
        } else {
            String::new()
        };
        writeln!(out, "{pad}{mark} {text}{operands} {} {value}", p.dim("→"))?;
    }
    Ok(())
}

/// The operator between two operands in a comparison's source text.
fn comparison_operator(text: &str, lhs: &str, rhs: &str) -> String {
    let after_lhs = text.find(lhs).map_or(0, |i| i + lhs.len());
    let before_rhs = text.rfind(rhs).unwrap_or(text.len());
    if after_lhs <= before_rhs {
        let op = text[after_lhs..before_rhs].trim();
        if !op.is_empty() && op.len() <= 3 {
            return op.to_string();
        }
    }
    "?".into()
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Human output of `eval`.
pub fn human(out: &mut dyn Write, rule: &str, results: &[Result], color: bool) -> io::Result<()> {
    let p = Paint { color };
    writeln!(out, "{} {}", p.bold("rule:"), one_line(rule))?;
    for r in results {
        writeln!(
            out,
            "{}: {}",
            p.bold(&r.object.to_string()),
            verdict(&r.outcome, &p)
        )?;
        explanation(out, &r.outcome.explanation, 2, &p)?;
    }
    let (t, f, e) = counts(results);
    writeln!(
        out,
        "{}: {t} true, {f} false, {e} failed",
        super::count(results.len(), "object")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_operator_between_operands() {
        assert_eq!(comparison_operator("a.b == c", "a.b", "c"), "==");
        assert_eq!(comparison_operator("x >= 2", "x", "2"), ">=");
        assert_eq!(comparison_operator("'a' in l", "'a'", "l"), "in");
    }
}
