//! Runs the google/cel-spec "simple" conformance tests through this crate's compile + evaluate.
//!
//! The files are read from `KSM_CEL_SPEC_DIR`, defaulting to `testdata/cel-spec` relative to the
//! crate. Tests whose inputs are not JSON-like (protobuf messages, containers, function
//! declarations, enums, unknowns) are not relevant to readiness rules and are not run; each such
//! test is counted with its reason. Relevant tests listed in `SKIP` are known deviations.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use kubectl_ksm::core::cel::{
    self, CelType, Declarations, Limits, MapKey, MapValue, Options, TypeValue, Value,
};
use support::textproto::{self, Field, Msg};

/// Relevant tests this crate knowingly does not pass: `file/section/test` -> reason.
const CEL_GO_MAP_KEYS: &str = "cel-go (kcm's engine) keeps a map literal in a Go map keyed by \
     the value: any hashable key is accepted (double, null), a repeated key keeps the last value, \
     and 0 and 0u are two keys; testdata/cel-go's het-map- cases hold its verdicts";

const SKIP: &[(&str, &str)] = &[
    (
        "fields/qualified_identifier_resolution/map_key_float",
        CEL_GO_MAP_KEYS,
    ),
    (
        "fields/qualified_identifier_resolution/map_key_null",
        CEL_GO_MAP_KEYS,
    ),
    (
        "fields/qualified_identifier_resolution/map_value_repeat_key",
        CEL_GO_MAP_KEYS,
    ),
    (
        "fields/qualified_identifier_resolution/map_value_repeat_key_heterogeneous",
        CEL_GO_MAP_KEYS,
    ),
];

fn spec_dir() -> PathBuf {
    match std::env::var_os("KSM_CEL_SPEC_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/cel-spec"),
    }
}

fn parse_type(m: &Msg) -> Result<CelType, &'static str> {
    if let Some(p) = m.token("primitive") {
        return Ok(match p {
            "BOOL" => CelType::Bool,
            "INT64" => CelType::Int,
            "UINT64" => CelType::Uint,
            "DOUBLE" => CelType::Double,
            "STRING" => CelType::String,
            "BYTES" => CelType::Bytes,
            _ => return Err("unsupported primitive type"),
        });
    }
    if let Some(l) = m.msg("list_type") {
        return Ok(CelType::list(parse_type(
            l.msg("elem_type").ok_or("bad list type")?,
        )?));
    }
    if let Some(mt) = m.msg("map_type") {
        return Ok(CelType::map(
            parse_type(mt.msg("key_type").ok_or("bad map type")?)?,
            parse_type(mt.msg("value_type").ok_or("bad map type")?)?,
        ));
    }
    if m.get("dyn").is_some() {
        return Ok(CelType::Dyn);
    }
    if m.get("null").is_some() {
        return Ok(CelType::Null);
    }
    if let Some(w) = m.token("well_known") {
        return match w {
            "TIMESTAMP" => Ok(CelType::Timestamp),
            "DURATION" => Ok(CelType::Duration),
            _ => Err("declares a protobuf well-known type"),
        };
    }
    if let Some(t) = m.msg("type") {
        if t.fields.is_empty() {
            return Ok(CelType::Type(None));
        }
        return Ok(CelType::type_of(parse_type(t)?));
    }
    if m.get("message_type").is_some() {
        return Err("uses protobuf message types");
    }
    if m.get("wrapper").is_some() {
        return Err("uses protobuf wrapper types");
    }
    if m.get("abstract_type").is_some() {
        return Err("uses abstract (e.g. optional) types");
    }
    if m.get("type_param").is_some() {
        return Err("uses type parameters");
    }
    if m.get("error").is_some() {
        return Err("expects the error type");
    }
    Err("unsupported type")
}

fn parse_value(m: &Msg) -> Result<Value, &'static str> {
    if let Some(v) = m.token("int64_value") {
        return v.parse().map(Value::Int).map_err(|_| "bad int");
    }
    if let Some(v) = m.token("uint64_value") {
        return v.parse().map(Value::Uint).map_err(|_| "bad uint");
    }
    if let Some(v) = m.token("double_value") {
        return v.parse().map(Value::Double).map_err(|_| "bad double");
    }
    if let Some(v) = m.bytes("string_value") {
        return Ok(Value::string(&String::from_utf8_lossy(&v)));
    }
    if let Some(v) = m.bytes("bytes_value") {
        return Ok(Value::Bytes(Arc::from(v.as_slice())));
    }
    if let Some(v) = m.token("bool_value") {
        return Ok(Value::Bool(v == "true"));
    }
    if m.get("null_value").is_some() {
        return Ok(Value::Null);
    }
    if let Some(l) = m.msg("list_value") {
        let mut out = Vec::new();
        for v in l.msgs("values") {
            out.push(parse_value(v)?);
        }
        return Ok(Value::list(out));
    }
    if let Some(mv) = m.msg("map_value") {
        let mut entries = Vec::new();
        for e in mv.msgs("entries") {
            let k = parse_value(e.msg("key").ok_or("bad entry")?)?;
            let v = parse_value(e.msg("value").ok_or("bad entry")?)?;
            entries.push((MapKey::from_value(&k).ok_or("bad key")?, v));
        }
        return Ok(Value::Map(Arc::new(MapValue::from_entries(entries))));
    }
    if let Some(t) = m.str("type_value") {
        let tv = match t.as_str() {
            "bool" => TypeValue::Bool,
            "int" => TypeValue::Int,
            "uint" => TypeValue::Uint,
            "double" => TypeValue::Double,
            "string" => TypeValue::String,
            "bytes" => TypeValue::Bytes,
            "list" => TypeValue::List,
            "map" => TypeValue::Map,
            "null_type" => TypeValue::Null,
            "type" => TypeValue::Type,
            "google.protobuf.Timestamp" => TypeValue::Timestamp,
            "google.protobuf.Duration" => TypeValue::Duration,
            _ => return Err("names a protobuf type"),
        };
        return Ok(Value::Type(tv));
    }
    if m.get("enum_value").is_some() {
        return Err("uses protobuf enums");
    }
    if m.get("object_value").is_some() {
        return Err("uses protobuf message values");
    }
    Err("unsupported value")
}

/// Exact equality for test expectations: same kinds, NaN equal to NaN.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => (x.is_nan() && y.is_nan()) || x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.entries()
                    .iter()
                    .all(|(k, v)| match y.find(k.value()).ok().flatten() {
                        Some(w) => same(v, w),
                        None => false,
                    })
        }
        (Value::Int(_), Value::Int(_))
        | (Value::Uint(_), Value::Uint(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bytes(_), Value::Bytes(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null)
        | (Value::Timestamp(_), Value::Timestamp(_))
        | (Value::Duration(_), Value::Duration(_))
        | (Value::Type(_), Value::Type(_)) => a.cel_eq(b),
        _ => false,
    }
}

enum Expect {
    Value(Value),
    Typed(Value, CelType),
    Type(CelType),
    Error,
    True,
}

struct Case {
    decls: Declarations,
    bindings: Vec<(String, Value)>,
    options: Options,
    check_only: bool,
    expect: Expect,
}

/// Builds a runnable case, or says why the test is not relevant to readiness rules.
fn prepare(t: &Msg) -> Result<Case, &'static str> {
    if t.str("container").is_some_and(|c| !c.is_empty()) {
        return Err("sets a container (qualified protobuf names)");
    }
    if let Some(Field::Str(e)) = t.get("expr") {
        let e = String::from_utf8_lossy(e);
        let message = regex::Regex::new(r"(TestAllTypes|protobuf\.[A-Za-z0-9]+\s*\{|proto[23]\.)")
            .expect("valid pattern");
        if message.is_match(&e) {
            return Err("constructs or names protobuf messages");
        }
    }
    if t.contains_field("object_value") {
        return Err("uses protobuf message values");
    }
    if t.contains_field("enum_value") {
        return Err("uses protobuf enums");
    }
    if t.get("unknown").is_some() || t.get("any_unknowns").is_some() {
        return Err("expects unknown values");
    }
    let mut decls = Declarations {
        variables: Vec::new(),
        strings_ext: false,
    };
    for d in t.msgs("type_env") {
        if d.get("function").is_some() {
            return Err("declares functions in type_env");
        }
        let name = d.str("name").ok_or("unnamed declaration")?;
        let ident = d.msg("ident").ok_or("unsupported declaration")?;
        let ty = parse_type(ident.msg("type").ok_or("untyped declaration")?)?;
        decls.variables.push((name, ty));
    }
    let mut bindings = Vec::new();
    for b in t.msgs("bindings") {
        let key = b.str("key").ok_or("bad binding")?;
        let v = b
            .msg("value")
            .and_then(|v| v.msg("value"))
            .ok_or("binding is not a value")?;
        bindings.push((key, parse_value(v)?));
    }
    // undeclared but bound variables (disable_check tests) are declared as dyn
    for (k, _) in &bindings {
        if !decls.variables.iter().any(|(n, _)| n == k) {
            decls.variables.push((k.clone(), CelType::Dyn));
        }
    }
    let expect = if let Some(v) = t.msg("value") {
        Expect::Value(parse_value(v)?)
    } else if let Some(tr) = t.msg("typed_result") {
        let ty = parse_type(tr.msg("deduced_type").ok_or("no deduced type")?)?;
        match tr.msg("result") {
            Some(r) => Expect::Typed(parse_value(r)?, ty),
            None => Expect::Type(ty),
        }
    } else if let Some(ty) = t.msg("deduced_type") {
        Expect::Type(parse_type(ty)?)
    } else if t.get("eval_error").is_some() || t.get("any_eval_errors").is_some() {
        Expect::Error
    } else {
        Expect::True
    };
    Ok(Case {
        decls,
        bindings,
        options: Options {
            check: !t.flag("disable_check"),
            macros: !t.flag("disable_macros"),
            // The conformance suite describes CEL without cel-go's OptOptimize plan step.
            optimize: false,
        },
        check_only: t.flag("check_only"),
        expect,
    })
}

fn run_case(expr: &str, c: &Case) -> Result<(), String> {
    let limits = Limits::default();
    let rule = match cel::compile_with(expr, &limits, &c.decls, c.options) {
        Ok(r) => r,
        Err(e) => {
            return Err(format!(
                "compile error: {}",
                e.iter()
                    .map(|e| e.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    };
    match &c.expect {
        Expect::Type(t) | Expect::Typed(_, t) if rule.result_type() != *t => {
            return Err(format!(
                "deduced type {} , expected {t}",
                rule.result_type()
            ));
        }
        _ => {}
    }
    if c.check_only || matches!(c.expect, Expect::Type(_)) {
        return Ok(());
    }
    let values: Vec<&Value> = c
        .decls
        .variables
        .iter()
        .map(|(n, _)| {
            c.bindings
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v)
                .unwrap_or(&Value::Null)
        })
        .collect();
    let got = rule.evaluate_values(&values);
    match (&c.expect, got) {
        (Expect::Error, Err(_)) => Ok(()),
        (Expect::Error, Ok(v)) => Err(format!("expected an error, got {}", v.render())),
        (_, Err(e)) => Err(format!("evaluation error: {e}")),
        (Expect::True, Ok(v)) if same(&v, &Value::Bool(true)) => Ok(()),
        (Expect::Value(want) | Expect::Typed(want, _), Ok(v)) if same(&v, want) => Ok(()),
        (Expect::Value(want) | Expect::Typed(want, _), Ok(v)) => {
            Err(format!("got {}, expected {}", v.render(), want.render()))
        }
        (_, Ok(v)) => Err(format!("got {}, expected true", v.render())),
    }
}

#[test]
fn cel_spec_conformance() {
    let dir = spec_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "textproto"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no textproto files in {}", dir.display());

    let mut total = 0usize;
    let mut irrelevant: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut relevant = 0usize;
    let mut passed = 0usize;
    let mut skipped: Vec<(String, &str, Option<String>)> = Vec::new();
    let mut failed: Vec<(String, String)> = Vec::new();

    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable test file");
        let file = textproto::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let fname = file.str("name").unwrap_or_default();
        for section in file.msgs("section") {
            let sname = section.str("name").unwrap_or_default();
            for t in section.msgs("test") {
                total += 1;
                let tname = t.str("name").unwrap_or_default();
                let id = format!("{fname}/{sname}/{tname}");
                let expr = match t.get("expr") {
                    Some(Field::Str(b)) => String::from_utf8_lossy(b).into_owned(),
                    _ => String::new(),
                };
                let case = match prepare(t) {
                    Ok(c) => c,
                    Err(reason) => {
                        *irrelevant.entry(reason).or_default() += 1;
                        continue;
                    }
                };
                relevant += 1;
                let result = run_case(&expr, &case);
                if let Some((_, reason)) = SKIP.iter().find(|(n, _)| *n == id) {
                    skipped.push((id, reason, result.err()));
                    continue;
                }
                match result {
                    Ok(()) => passed += 1,
                    Err(e) => failed.push((id, format!("{expr}  =>  {e}"))),
                }
            }
        }
    }

    println!("cel-spec: {total} tests in {} files", files.len());
    println!(
        "not relevant to readiness rules over JSON-like data: {}",
        total - relevant
    );
    for (reason, n) in &irrelevant {
        println!("  {n:4}  {reason}");
    }
    println!("relevant: {relevant}");
    println!("passed: {passed}");
    println!("skipped: {}", skipped.len());
    for (id, reason, outcome) in &skipped {
        let now = if outcome.is_none() {
            " (now passes: remove from SKIP)"
        } else {
            ""
        };
        println!("  {id}: {reason}{now}");
    }
    println!("failed: {}", failed.len());
    for (id, e) in &failed {
        println!("  FAIL {id}: {e}");
    }
    let rate = passed as f64 / relevant.max(1) as f64;
    println!("pass rate: {:.2}% of relevant tests", rate * 100.0);
    for (id, _) in SKIP {
        assert!(
            skipped.iter().any(|(s, _, _)| s == id),
            "SKIP entry {id} matches no relevant test"
        );
    }
    assert!(
        failed.is_empty(),
        "{} relevant tests outside the skip list failed",
        failed.len()
    );
    assert!(rate >= 0.98, "pass rate {:.2}% is below 98%", rate * 100.0);
}
