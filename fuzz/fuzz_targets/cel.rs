//! A readiness rule and an object: `<rule bytes> NUL <JSON text>`. The rule is compiled
//! (parser, checker, planner); when the JSON parses, the rule is evaluated and explained
//! against it, directly and through `readiness::Rule` (what `eval`, `check` and `run` use), in
//! the readiness and in the health environment.
//!
//! A rule starting with a byte 0x01 to 0x05 is first put into a hostile shape, with the next
//! byte as a count: doubled as a string or a list, looped over a list, scanned as a pattern
//! or nested in comprehensions, so the fuzzer reaches the rules that grow values and loop over
//! strings (time and memory must stay bounded: libFuzzer's -timeout, -rss_limit_mb and
//! -malloc_limit_mb catch what does not).
#![no_main]

use kubectl_ksm::core::cel::{self, Environment, Limits, Object};
use kubectl_ksm::core::readiness::{Explain, Rule};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (rule, json) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let rule = String::from_utf8_lossy(rule);
    let shaped = hostile(&rule);
    let json = String::from_utf8_lossy(json);
    // A hostile shape runs into the budget on purpose: a smaller cost limit keeps each run
    // short, and the memory ceiling stays the default one.
    let limits = if shaped != rule {
        Limits {
            max_cost: 2_000_000,
            ..Limits::default()
        }
    } else {
        Limits::default()
    };
    let rule = shaped;

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
        let _ = c.value(&obj);
        let _ = c.evaluate(&obj);
        let _ = c.explain(&obj);
    }

    let outcome = Rule::new(&rule, &limits).evaluate(&value, Explain::Always);
    if let Some(e) = &outcome.error {
        let _ = (&e.message, &e.kcm_message);
    }
    // the same text as a health rule (`obj`, the string extension, no constant folding)
    let health = Rule::in_env(&rule, &limits, Environment::Health);
    let _ = health.evaluate(&value, Explain::WhenNotTrue);
    let _ = health.message_for(&value);
});

/// The rule in the shape its first byte asks for (see the module's documentation).
fn hostile(rule: &str) -> String {
    let mut chars = rule.chars();
    let (shape, count) = match (chars.next(), chars.next()) {
        (Some(s @ '\u{1}'..='\u{5}'), Some(n)) => (s as u32, (n as u32 % 40) as usize),
        _ => return rule.to_string(),
    };
    let inner = chars.as_str();
    match shape {
        // a string doubled `count` times
        1 => format!(
            "[string({inner})]{}.size() > 0",
            ".map(s, s + s)".repeat(count)
        ),
        // a list doubled, or nested
        2 => format!("[[{inner}]]{}.size() > 0", ".map(l, l + l)".repeat(count)),
        3 => format!("[{inner}]{}.size() > 0", ".map(l, [l, l])".repeat(count)),
        // the rule evaluated for every element of nested ranges
        4 => {
            let mut r = inner.to_string();
            for i in 0..count.min(6) {
                r = format!("[{}].all(x{i}, {r})", "0, ".repeat(count * 8) + "0");
            }
            r
        }
        // a pattern built from the rule's value, matched against a long text
        _ => format!(
            "'{}'.matches(string({inner}) + string({count}))",
            "ab".repeat(count * 1000)
        ),
    }
}
