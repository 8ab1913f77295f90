//! cel-go parity: every case of testdata/cel-go (verdicts of the real cel-go, set up exactly as
//! kcm's StateManagementProvider controller sets it up) must get cel-go's verdict from the
//! project, at the same stage (`empty`, `compile`, `program`, `eval`, `result`), with kcm's
//! wording of the failure.
//!
//! The objects are read the way `eval -f` reads them (YAML loader, then the API server round
//! trip of numbers), so this is the path a user's saved object takes.
//!
//! A rule the evaluation budget stops is not a verdict: kcm has no budget and would keep
//! evaluating. Only cases of the `big-nested-` family (rules that run for seconds in cel-go) may
//! come out that way, and when they do it must be the distinct budget outcome.

use std::collections::{BTreeMap, HashMap};

use kubectl_ksm::core::cel::Limits;
use kubectl_ksm::core::readiness::{Explain, Phase, Rule, RuleOutcome};
use kubectl_ksm::diag::Source;
use kubectl_ksm::diag::yaml::{self, parse_documents};
use serde_json::Value;

fn testdata(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cel-go")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn jsonl(path: &str) -> Vec<Value> {
    testdata(path)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
        .collect()
}

/// cel-go's verdicts by case id.
fn expected() -> HashMap<String, Value> {
    jsonl("expected.jsonl")
        .into_iter()
        .map(|e| (e["id"].as_str().unwrap().to_string(), e))
        .collect()
}

/// The objects by name, converted as `eval -f` converts them.
fn objects() -> HashMap<String, Value> {
    let source = Source::new("objects.yaml", testdata("objects.yaml"));
    let (docs, err) = parse_documents(&source);
    assert!(err.is_none(), "{err:?}");
    docs.iter()
        .filter_map(|d| d.root.as_ref())
        .map(|root| {
            let v = root
                .to_json(&yaml::Limits::default())
                .expect("object converts");
            let name = v["metadata"]["name"].as_str().expect("named").to_string();
            (name, v)
        })
        .collect()
}

/// `(verdict, stage)` of an outcome, in the corpus's words; `None` for the budget outcome.
fn verdict_and_stage(rule: &str, o: &RuleOutcome) -> Option<(&'static str, &'static str)> {
    if o.budget_exceeded.is_some() {
        assert!(o.result.is_none() && o.error.is_none(), "{o:?}");
        return None;
    }
    Some(match (o.result, &o.error) {
        (Some(true), None) if rule.is_empty() => ("true", "empty"),
        (Some(true), None) => ("true", "eval"),
        (Some(false), None) => ("false", "eval"),
        (None, Some(e)) if e.phase == Phase::Compile => ("compile_error", "compile"),
        (None, Some(e)) => {
            let stage = if e.kcm_message.starts_with("failed to create CEL program: ") {
                "program"
            } else if e.kcm_message == "CEL expression did not return a boolean value" {
                "result"
            } else {
                assert!(
                    e.kcm_message
                        .starts_with("failed to evaluate CEL expression: "),
                    "{e:?}"
                );
                "eval"
            };
            ("eval_error", stage)
        }
        other => panic!("inconsistent outcome {other:?}"),
    })
}

#[test]
fn every_case_gets_cel_gos_verdict_at_the_same_stage() {
    let cases = jsonl("cases.jsonl");
    let expected = expected();
    let objects = objects();
    assert!(cases.len() >= 639, "{} cases", cases.len());
    let limits = Limits::default();
    let mut rules: HashMap<&str, Rule> = HashMap::new();
    let mut failures = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        let text = case["rule"].as_str().unwrap();
        let want = &expected[id];
        let (want_verdict, want_stage) = (
            want["verdict"].as_str().unwrap(),
            want["stage"].as_str().unwrap(),
        );
        let object = &objects[case["object_name"].as_str().unwrap()];
        let rule = rules
            .entry(text)
            .or_insert_with(|| Rule::new(text, &limits));
        let outcome = rule.evaluate(object, Explain::Never);
        let got = verdict_and_stage(text, &outcome);
        *counts
            .entry(match got {
                Some((v, s)) => format!("{v}@{s}"),
                None => "budget".into(),
            })
            .or_default() += 1;
        match got {
            Some((v, s)) if v == want_verdict && s == want_stage => {}
            None if id.starts_with("big-nested-") => {}
            _ => failures.push(format!(
                "{id}: cel-go {want_verdict}@{want_stage} ({}), project {got:?} ({})\n    rule: {text}",
                want["message"].as_str().unwrap_or(""),
                outcome
                    .error
                    .as_ref()
                    .map(|e| e.kcm_message.clone())
                    .or(outcome.budget_exceeded.as_ref().map(|b| b.message()))
                    .unwrap_or_default()
            )),
        }
    }
    println!("{} cases: {counts:?}", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from cel-go:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn kcm_wording_of_failures_matches_cel_go() {
    // The message after kcm's prefix names the same problem as cel-go's (compile errors are
    // compared on their first line: cel-go appends the source line and a caret).
    let cases = jsonl("cases.jsonl");
    let expected = expected();
    let objects = objects();
    let limits = Limits::default();
    let mut differ = Vec::new();
    let mut compared = 0;
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        let want = expected[id]["message"].as_str().unwrap();
        if !want.starts_with("failed to evaluate CEL expression: ")
            && !want.starts_with("failed to create CEL program: ")
        {
            continue;
        }
        let text = case["rule"].as_str().unwrap();
        let object = &objects[case["object_name"].as_str().unwrap()];
        let outcome = Rule::new(text, &limits).evaluate(object, Explain::Never);
        let Some(e) = outcome.error else { continue };
        compared += 1;
        if e.kcm_message != want {
            differ.push(format!(
                "{id}:\n    cel-go:  {want}\n    project: {}",
                e.kcm_message
            ));
        }
    }
    assert!(compared > 100, "{compared}");
    assert!(
        differ.is_empty(),
        "{} of {compared} messages differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

#[test]
fn a_rule_stopped_by_the_budget_is_its_own_outcome() {
    let objects = objects();
    let text = "self.spec.strs.all(s, self.spec.strs.exists(t, t == s))";
    let limits = Limits {
        max_cost: 100_000,
        ..Limits::default()
    };
    let outcome = Rule::new(text, &limits).evaluate(&objects["widget-big"], Explain::Never);
    assert_eq!(outcome.result, None);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let message = outcome
        .budget_exceeded
        .expect("the budget outcome")
        .message();
    assert!(
        message.contains("exceeds the evaluation budget")
            && message.contains("kcm would keep evaluating"),
        "{message}"
    );
}
