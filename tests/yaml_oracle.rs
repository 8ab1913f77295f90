//! Differential test of the YAML emitter against libyaml, the C library go-yaml v2 (which
//! kubectl uses through sigs.k8s.io/yaml) was ported from, through PyYAML's C loader: every
//! tricky string must read back as itself, as a value, a key and a list item.
//!
//! Needs a Python with PyYAML built with libyaml: KSM_PYTHON (set by .ci/run to the venv of
//! scripts/requirements.txt), else `python3`. Without one the test fails under CI=true and
//! says it was skipped elsewhere, so that `cargo test` works on a fresh machine.

use std::io::Write;
use std::process::{Command, Stdio};

use kubectl_ksm::output::yaml::{TRICKY_STRINGS, write_document, write_json_document};
use serde_json::{Value, json};

const CHECK: &str = r#"
import json, sys, yaml
assert yaml.__with_libyaml__, "PyYAML without libyaml"
docs = sys.stdin.read().split("\n---\n")
expected = json.loads(docs[0])
got = []
for d in docs[1:]:
    try:
        got.append(yaml.load(d, Loader=yaml.CSafeLoader))
    except yaml.YAMLError as e:
        got.append({"error": str(e).splitlines()[0], "doc": d})
bad = [(e, g) for e, g in zip(expected, got) if e != g]
if len(got) != len(expected) or bad:
    print(json.dumps({"count": [len(expected), len(got)], "bad": bad[:10]}))
    sys.exit(1)
print(len(got))
"#;

#[test]
fn emitted_yaml_reads_back_identically_in_libyaml() {
    let python = std::env::var("KSM_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_pyyaml = Command::new(&python)
        .args(["-c", "import yaml; assert yaml.__with_libyaml__"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_pyyaml {
        assert!(
            std::env::var_os("CI").is_none(),
            "{python} has no PyYAML with libyaml: .ci/run sets KSM_PYTHON to its venv"
        );
        // Straight to stderr, past the test harness's capture: a skip is seen.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED emitted_yaml_reads_back_identically_in_libyaml: {python} has no PyYAML with libyaml (pip install -r scripts/requirements.txt)"
        );
        return;
    }
    let mut docs: Vec<Value> = Vec::new();
    for s in TRICKY_STRINGS {
        docs.push(json!({ "value": s }));
        docs.push(Value::Object(
            [(s.to_string(), json!(1))].into_iter().collect(),
        ));
        docs.push(json!({ "list": [s, s] }));
    }
    docs.push(json!({"n": 1, "f": 1.5, "whole": 2.0, "big": 9.3e20, "small": 2.5e-7, "e": {}, "l": [], "null": null}));
    // The strings again as a `doctor --save` bundle writes objects: each document the
    // object's JSON on one line, which YAML reads as the same values.
    let as_json: Vec<Value> = docs[..3 * TRICKY_STRINGS.len()].to_vec();
    let expected: Vec<&Value> = docs.iter().chain(&as_json).collect();
    let mut text = serde_json::to_string(&expected).unwrap();
    for d in &docs {
        text.push_str("\n---\n");
        write_document(d, &mut text);
    }
    for d in &as_json {
        text.push_str("\n---\n");
        write_json_document(d, &mut text);
    }
    let child = Command::new(&python)
        .args(["-c", CHECK])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child =
        child.unwrap_or_else(|e| panic!("{python}: {e} (set KSM_PYTHON to a Python with PyYAML)"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "libyaml read back something else:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        expected.len().to_string()
    );
}
