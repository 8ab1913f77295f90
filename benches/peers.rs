//! The project's side of the CEL comparison with cel-go (benches/peers/run.py): the same
//! command line and output as benches/peers/celgo, timed the same way.
//!
//! ```text
//! peers --env readiness|health --mode compile|eval|kcm --rule TEXT --object FILE.json --n N
//! ```
//!
//! compile: the rule compiled (parsed, checked, planned) in kcm's environment; eval: the
//! compiled rule on the object prepared once; kcm: what kcm does for one object, from the
//! rule text and the object as JSON: for readiness compile then evaluate on every call, for
//! health evaluate the rule compiled once on the object as it comes (converted on every
//! call).
use std::hint::black_box;
use std::time::Instant;

use kubectl_ksm::core::cel::{Environment, Limits, Verdict, compile_in};
use kubectl_ksm::core::readiness::{Explain, Rule};

fn main() {
    let mut env = Environment::Readiness;
    let (mut mode, mut rule, mut object, mut n) = (String::from("eval"), None, None, 10_000u32);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| fail(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--env" | "-env" => {
                env = match value().as_str() {
                    "readiness" => Environment::Readiness,
                    "health" => Environment::Health,
                    e => fail(&format!("unknown environment {e}")),
                }
            }
            "--mode" | "-mode" => mode = value(),
            "--rule" | "-rule" => rule = Some(value()),
            "--object" | "-object" => object = Some(value()),
            "--n" | "-n" => {
                n = value()
                    .parse()
                    .unwrap_or_else(|e| fail(&format!("-n: {e}")))
            }
            // cargo bench passes --bench to a harness-less bench.
            "--bench" => {}
            _ => fail(&format!("unknown argument {a}")),
        }
    }
    let rule = rule.unwrap_or_else(|| fail("--rule is required"));
    let object = object.unwrap_or_else(|| fail("--object is required"));
    let text = std::fs::read_to_string(&object).unwrap_or_else(|e| fail(&format!("{object}: {e}")));
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| fail(&format!("{object}: {e}")));
    let limits = Limits::default();

    // Each call gives its result without formatting it (cel-go's side gives its ref.Val):
    // the text is made once, for the first result.
    let mut op: Box<dyn FnMut() -> Out> = match mode.as_str() {
        "compile" => Box::new(|| match compile_in(black_box(&rule), &limits, env) {
            Ok(c) => Out::Text(black_box(c).result_type().to_string()),
            Err(e) => fail(&format!("{e:?}")),
        }),
        "eval" => {
            let compiled =
                compile_in(&rule, &limits, env).unwrap_or_else(|e| fail(&format!("{e:?}")));
            let obj = compiled.object_from_json(&json);
            Box::new(move || verdict(black_box(&compiled).evaluate(black_box(&obj))))
        }
        "kcm" if env == Environment::Readiness => Box::new(|| {
            let outcome =
                Rule::new(black_box(&rule), &limits).evaluate(black_box(&json), Explain::Never);
            outcome_text(outcome.result, outcome.error.map(|e| e.kcm_message))
        }),
        "kcm" => {
            let compiled = Rule::in_env(&rule, &limits, env);
            Box::new(move || {
                let outcome = compiled.evaluate(black_box(&json), Explain::Never);
                outcome_text(outcome.result, outcome.error.map(|e| e.kcm_message))
            })
        }
        m => fail(&format!("unknown mode {m}")),
    };
    let result = op().text();
    let start = Instant::now();
    for _ in 0..n {
        black_box(op());
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(n.max(1));
    println!("{}", serde_json::json!({"ns_per_op": ns, "result": result}));
}

/// A result as the harness prints it (cel-go's side prints its own the same way).
enum Out {
    Bool(bool),
    Text(String),
}

impl Out {
    fn text(self) -> String {
        match self {
            Out::Bool(b) => b.to_string(),
            Out::Text(t) => t,
        }
    }
}

fn verdict(v: Verdict) -> Out {
    match v {
        Verdict::True => Out::Bool(true),
        Verdict::False => Out::Bool(false),
        other => Out::Text(format!("{other:?}")),
    }
}

fn outcome_text(result: Option<bool>, error: Option<String>) -> Out {
    match (result, error) {
        (Some(r), _) => Out::Bool(r),
        (None, Some(e)) => Out::Text(e),
        (None, None) => Out::Text("no result".into()),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("peers: {msg}");
    std::process::exit(2)
}
