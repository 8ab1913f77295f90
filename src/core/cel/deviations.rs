//! Deviations of the `cel` crate (0.15) from cel-go that this module fixes, each shown against
//! the crate's own interpreter. They are why this module evaluates with its own evaluator and
//! only uses the crate's parser.

use ::cel::{Context, Program};

use super::{Limits, Object, Verdict, compile};

fn cel_crate(expr: &str, ctx: &Context) -> Result<String, String> {
    Program::compile(expr)
        .map_err(|e| e.to_string())?
        .execute(ctx)
        .map(|v| format!("{v:?}"))
        .map_err(|e| e.to_string())
}

fn ours(expr: &str, obj: &Object) -> String {
    match compile(expr, &Limits::default()) {
        Err(e) => format!("compile: {}", e[0].message),
        Ok(r) => match r.evaluate(obj) {
            Verdict::True => "true".into(),
            Verdict::False => "false".into(),
            Verdict::Error(e) => format!("error: {}", e.message),
            Verdict::BudgetExceeded(b) => format!("budget: {b}"),
        },
    }
}

/// (deviation, expression, the cel crate's result, ours = cel-go's).
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "serde conversion makes JSON integers uint",
        "type(self.status.replicas) == int",
        "Ok(\"Bool(false)\")",
        "true",
    ),
    (
        "error wording: capitalised no such key",
        "self.status.missing == 1",
        "Err(\"No such key: missing\")",
        "error: no such key: missing",
    ),
    (
        "no type checker: int == double literal accepted",
        "1 == 1.0",
        "Ok(\"Bool(true)\")",
        "compile: found no matching overload for '_==_' applied to '(int, double)'",
    ),
    (
        "no type checker: cross-type literal ordering accepted",
        "1 < 1.5",
        "Ok(\"Bool(true)\")",
        "compile: found no matching overload for '_<_' applied to '(int, double)'",
    ),
    (
        "Env::stdlib registers the optional library",
        "optional.of(1).hasValue()",
        "Ok(\"Bool(true)\")",
        "compile: undeclared reference to 'optional' (in container '')",
    ),
    (
        "error wording: overflow",
        "9223372036854775807 + 1 == 0",
        "Err(\"Overflow from binary operator 'add': Int(9223372036854775807), Int(1)\")",
        "error: integer overflow",
    ),
    (
        "error wording: division by zero",
        "1 / 0 == 0",
        "Err(\"Division by zero of Int(1)\")",
        "error: division by zero",
    ),
    (
        "error wording: modulus by zero",
        "1 % 0 == 0",
        "Err(\"Remainder by zero of Int(1)\")",
        "error: modulus by zero",
    ),
    (
        "error wording: list index",
        "[1][3] == 1",
        "Err(\"Index out of bounds: Int(3)\")",
        "error: index out of bounds: 3",
    ),
    (
        "string(double) is not Go's %g",
        "string(1e6) == '1e+06'",
        "Ok(\"Bool(false)\")",
        "true",
    ),
    (
        "no type checker: string + int reaches run time",
        "'a' + 1 == 'a1'",
        "Err(\"Unsupported binary operator 'add': String(\\\"a\\\"), Int(1)\")",
        "compile: found no matching overload for '_+_' applied to '(string, int)'",
    ),
];

#[test]
fn cel_crate_deviations_are_fixed() {
    let obj = serde_json::json!({"status": {"replicas": 2}});
    let mut ctx = Context::default();
    ctx.add_variable("self", ::cel::to_value(&obj).unwrap())
        .unwrap();
    let object = Object::from_json(&obj);
    for (deviation, expr, theirs, want) in CASES {
        assert_eq!(
            format!("{:?}", cel_crate(expr, &ctx)),
            *theirs,
            "{deviation}: the cel crate changed"
        );
        assert_eq!(ours(expr, &object), *want, "{deviation}");
    }
}
