//! A readiness rule and an object: `<rule bytes> NUL <JSON text>`. The rule is compiled
//! (parser, checker, planner); when the JSON parses, the rule is evaluated and explained
//! against it, directly and through `readiness::Rule` (what `eval`, `check` and `run` use).
#![no_main]

use kubectl_ksm::core::cel::{self, Limits, Object};
use kubectl_ksm::core::readiness::{Explain, Rule};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (rule, json) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let rule = String::from_utf8_lossy(rule);
    let json = String::from_utf8_lossy(json);
    let limits = Limits::default();

    let compiled = cel::compile(&rule, &limits);
    if let Err(errors) = &compiled {
        for e in errors {
            let _ = e.to_string();
        }
    }

    let Ok(value) = serde_json::from_str::<serde_json::Value>(&json) else {
        return;
    };
    let obj = Object::from_json(&value);
    if let Ok(c) = &compiled {
        let _ = c.result_type();
        let _ = c.estimated_cost(&obj);
        let _ = c.evaluate(&obj);
        let _ = c.explain(&obj);
    }

    let outcome = Rule::new(&rule, &limits).evaluate(&value, Explain::Always);
    if let Some(e) = &outcome.error {
        let _ = (&e.message, &e.kcm_message);
    }
});
