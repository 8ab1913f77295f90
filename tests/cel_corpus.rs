//! Differential test: every case of testdata/cel/golden.json, whose verdicts come from an
//! independent CEL implementation (Google's C++ CEL, cel-expr-python, through
//! scripts/cel_golden.py), must get the same verdict from the project's CEL core, except
//! where kcm's engine, cel-go, differs from it: those cases are pinned in the corpus with
//! kcm's verdict and the reason, and each difference is asserted here (the project gives
//! cel-go's verdict, and the oracle really gives another).

use std::collections::HashMap;

use kubectl_ksm::core::cel::Limits;
use kubectl_ksm::core::readiness::{Explain, Phase, Rule};
use kubectl_ksm::diag::Source;
use kubectl_ksm::diag::yaml::{self, parse_documents};
use serde_json::Value;

fn testdata(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn corpus_objects() -> HashMap<String, Value> {
    let source = Source::new("corpus.yaml", testdata("cel/corpus.yaml"));
    let (docs, err) = parse_documents(&source);
    assert!(err.is_none(), "{err:?}");
    let root = docs[0].root.as_ref().unwrap();
    let objects = root.get("objects").expect("objects");
    objects
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.key_text().unwrap().to_string(),
                v.to_json_exact(&yaml::Limits::default()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_golden_case_gets_the_oracles_verdict() {
    let golden: Value = serde_json::from_str(&testdata("cel/golden.json")).unwrap();
    let objects = corpus_objects();
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() >= 300, "the corpus has {} cases", cases.len());
    let limits = Limits::default();
    let mut compiled: HashMap<&str, Rule> = HashMap::new();
    let mut failures = Vec::new();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut differences = Vec::new();
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let rule_text = case["rule"].as_str().unwrap();
        let expect = case["expect"].as_str().unwrap();
        *counts.entry(expect).or_default() += 1;
        let object = objects
            .get(case["object"].as_str().unwrap())
            .unwrap_or_else(|| panic!("{id}: unknown object"));
        let rule = compiled
            .entry(rule_text)
            .or_insert_with(|| Rule::new(rule_text, &limits));
        let outcome = rule.evaluate(object, Explain::Never);
        let got = match (outcome.result, &outcome.error) {
            (Some(true), _) => "true",
            (Some(false), _) => "false",
            (None, Some(e)) if e.phase == Phase::Compile => "compile_error",
            (None, _) => "eval_error",
        };
        if let Some(oracle) = case.get("oracle").and_then(Value::as_str) {
            let why = case["why"].as_str().unwrap_or("");
            assert!(!why.is_empty(), "{id}: a difference without a reason");
            assert_ne!(oracle, expect, "{id}: a pinned difference that is not one");
            differences.push(format!("{id}: cel-go {expect}, C++ {oracle}: {why}"));
        }
        if got != expect {
            let detail = outcome.error.map(|e| e.message).unwrap_or_default();
            failures.push(format!(
                "{id}: expected {expect} ({}), got {got} {detail}\n    rule: {rule_text}",
                case["message"].as_str().unwrap_or("")
            ));
        }
    }
    println!("{} cases: {counts:?}", cases.len());
    println!(
        "{} deliberate differences from the C++ oracle:\n{}",
        differences.len(),
        differences.join("\n")
    );
    assert!(
        differences.len() >= 10,
        "the pinned differences are gone: {differences:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the oracle:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
