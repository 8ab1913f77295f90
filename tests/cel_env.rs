//! kcm's two CEL environments, side by side: every difference between the readiness
//! environment (StateManagementProvider rules: `self` of type map(string, dyn), the standard
//! library, programs built with OptOptimize) and the health environment (the Sveltos
//! adapter's verifier: `obj` of type dyn, the standard library and cel-go's string extension,
//! programs built without options) is pinned here, with the semantics of the string
//! extension's functions at their edges (cel-go ext/strings.go).

use kubectl_ksm::core::cel::{Environment, Limits};
use kubectl_ksm::core::readiness::{Explain, Phase, Rule, RuleOutcome};
use serde_json::{Value, json};

fn object() -> Value {
    json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "héllo wörld", "labels": {"app": "w"}},
        "spec": {"big": 9007199254740993i64, "two": 2, "items": ["a", "b"]},
        "status": {"phase": "Running"}
    })
}

fn run(env: Environment, rule: &str) -> RuleOutcome {
    Rule::in_env(rule, &Limits::default(), env).evaluate(&object(), Explain::Never)
}

/// `true`, `false`, `compile: <message>`, `program: <message>` or `eval: <message>`.
fn verdict(env: Environment, rule: &str) -> String {
    let o = run(env, rule);
    match (o.result, o.error) {
        (Some(b), _) => b.to_string(),
        (None, Some(e)) if e.phase == Phase::Compile => format!("compile: {}", e.message),
        (None, Some(e)) if e.kcm_message.contains("program: ") => {
            format!("program: {}", e.message)
        }
        (None, Some(e)) => format!("eval: {}", e.message),
        (None, None) => format!("budget: {:?}", o.budget_exceeded),
    }
}

fn readiness(rule: &str) -> String {
    verdict(Environment::Readiness, rule)
}

fn health(rule: &str) -> String {
    verdict(Environment::Health, rule)
}

#[test]
fn the_object_is_self_in_readiness_rules_and_obj_in_health_rules() {
    assert_eq!(readiness("self.status.phase == 'Running'"), "true");
    assert_eq!(health("obj.status.phase == 'Running'"), "true");
    assert!(
        readiness("obj.status.phase == 'Running'")
            .starts_with("compile: undeclared reference to 'obj'")
    );
    assert!(
        health("self.status.phase == 'Running'")
            .starts_with("compile: undeclared reference to 'self'")
    );
}

#[test]
fn self_is_a_map_of_string_to_dyn_and_obj_is_dyn() {
    // self's declared type rules out comparing it with an int; obj is dyn, so the checker
    // lets it through and the run time decides
    assert!(readiness("self == 1").starts_with("compile: found no matching overload for '_==_'"));
    assert_eq!(health("obj == 1"), "false");
    assert!(
        readiness("self[0] == 1").starts_with("compile: found no matching overload for '_[_]'")
    );
    assert_eq!(health("obj[0] == 1"), "eval: no such key: 0");
}

#[test]
fn only_health_rules_have_the_string_extension() {
    for rule in [
        "self.metadata.name.lowerAscii() == 'x'",
        "self.metadata.name.upperAscii() == 'x'",
        "self.metadata.name.charAt(0) == 'h'",
        "self.metadata.name.indexOf('l') == 2",
        "self.metadata.name.split(' ').size() == 2",
        "['a'].join() == 'a'",
        "strings.quote('a') == '\"a\"'",
        "'%s'.format(['a']) == 'a'",
    ] {
        assert!(readiness(rule).starts_with("compile: "), "{rule}");
        let in_health = rule.replace("self", "obj");
        assert!(!health(&in_health).starts_with("compile: "), "{in_health}");
    }
}

#[test]
fn readiness_programs_are_optimised_and_health_programs_are_not() {
    // a failing constant conversion fails the readiness program even where && absorbs it
    assert_eq!(
        readiness("false && int('x') == 1"),
        "program: type conversion error from 'string' to 'int'"
    );
    assert_eq!(health("false && int('x') == 1"), "false");
    // a constant bad pattern likewise
    assert_eq!(
        readiness("true || 'a'.matches(')')"),
        "program: error parsing regexp: unexpected ): `)`"
    );
    assert_eq!(health("true || 'a'.matches(')')"), "true");
    assert_eq!(
        health("'a'.matches(')')"),
        "eval: error parsing regexp: unexpected ): `)`"
    );
    // x in [] is folded to false without evaluating x
    assert_eq!(readiness("self.missing in []"), "false");
    assert_eq!(health("obj.missing in []"), "eval: no such key: missing");
    // x in <constant list> is a hash-set lookup: no numeric comparison across the keys
    assert_eq!(readiness("self.spec.big in [9007199254740992.0]"), "false");
    assert_eq!(health("obj.spec.big in [9007199254740992.0]"), "true");
}

#[test]
fn only_readiness_rules_treat_the_empty_rule_as_true() {
    assert_eq!(readiness(""), "true");
    assert!(health("").starts_with("compile: "), "{}", health(""));
}

#[test]
fn kcm_words_failures_of_each_environment_its_own_way() {
    let r = run(Environment::Readiness, "self.metadata.name");
    assert_eq!(
        r.error.unwrap().kcm_message,
        "CEL expression did not return a boolean value"
    );
    let h = run(Environment::Health, "obj.metadata.name");
    assert_eq!(
        h.error.unwrap().kcm_message,
        "healthy expression returned string, want bool"
    );
    let r = run(Environment::Readiness, "self.missing == 1");
    assert_eq!(
        r.error.unwrap().kcm_message,
        "failed to evaluate CEL expression: no such key: missing"
    );
    let h = run(Environment::Health, "obj.missing == 1");
    assert_eq!(
        h.error.unwrap().kcm_message,
        "evaluate healthy: no such key: missing"
    );
    let r = run(Environment::Readiness, "self.");
    assert!(
        r.error
            .unwrap()
            .kcm_message
            .starts_with("failed to compile CEL expression: ERROR: <input>:1:")
    );
    let h = run(Environment::Health, "obj.");
    assert!(
        h.error
            .unwrap()
            .kcm_message
            .starts_with("healthy: compile: ERROR: <input>:1:")
    );
    let r = run(Environment::Readiness, "int('x') == 1");
    assert!(
        r.error
            .unwrap()
            .kcm_message
            .starts_with("failed to create CEL program: ")
    );
    let h = run(Environment::Health, "int('x') == 1");
    assert!(
        h.error
            .unwrap()
            .kcm_message
            .starts_with("evaluate healthy: ")
    );
}

#[test]
fn a_failing_or_non_string_message_is_empty() {
    let o = object();
    let msg = |m: &str| Rule::in_env(m, &Limits::default(), Environment::Health).message_for(&o);
    assert_eq!(msg("'phase ' + obj.status.phase"), "phase Running");
    assert_eq!(msg("obj.status.missing"), "");
    assert_eq!(msg("obj.spec.two"), "");
    assert_eq!(msg("1 / 0 == 1"), "");
    assert_eq!(
        msg("'%s is %s'.format([obj.metadata.name, obj.status.phase])"),
        "héllo wörld is Running"
    );
}

#[test]
fn string_extension_indices_are_code_points_and_bounds_are_errors() {
    assert_eq!(health("obj.metadata.name.charAt(1) == 'é'"), "true");
    assert_eq!(health("'hello'.charAt(5) == ''"), "true");
    assert_eq!(
        health("'hello'.charAt(6) == ''"),
        "eval: index out of range: 6"
    );
    assert_eq!(
        health("'hello'.charAt(-1) == ''"),
        "eval: index out of range: -1"
    );
    assert_eq!(health("obj.metadata.name.indexOf('l') == 2"), "true");
    assert_eq!(health("'hello mellow'.indexOf('ello', 2) == 7"), "true");
    assert_eq!(health("'hello mellow'.indexOf('ello', 20) == -1"), "true");
    assert_eq!(health("'hello mellow'.indexOf('', 20) == 12"), "true");
    assert_eq!(
        health("'hello mellow'.indexOf('ello', -1) == -1"),
        "eval: index out of range: -1"
    );
    assert_eq!(health("'hello mellow'.lastIndexOf('ello') == 7"), "true");
    assert_eq!(health("'hello mellow'.lastIndexOf('ello', 6) == 1"), "true");
    assert_eq!(health("'hello mellow'.lastIndexOf('') == 12"), "true");
    assert_eq!(health("obj.metadata.name.lastIndexOf('ö') == 7"), "true");
    assert_eq!(health("'tacocat'.substring(4) == 'cat'"), "true");
    assert_eq!(health("'tacocat'.substring(0, 4) == 'taco'"), "true");
    assert_eq!(
        health("'tacocat'.substring(2, 1) == ''"),
        "eval: invalid substring range. start: 2, end: 1"
    );
    assert_eq!(
        health("'tacocat'.substring(8) == ''"),
        "eval: index out of range: 8"
    );
    assert_eq!(health("'héllo'.substring(1, 2) == 'é'"), "true");
}

#[test]
fn string_extension_case_trim_reverse_replace_split() {
    assert_eq!(
        health("'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'"),
        "true"
    );
    assert_eq!(
        health("'TacoCÆt Xii'.upperAscii() == 'TACOCÆT XII'"),
        "true"
    );
    assert_eq!(health("'  \\ttrim\\n    '.trim() == 'trim'"), "true");
    assert_eq!(health("'\\u00a0x\\u3000'.trim() == 'x'"), "true");
    assert_eq!(health("'\\u200bx'.trim() == '\\u200bx'"), "true");
    assert_eq!(health("'héllo'.reverse() == 'olléh'"), "true");
    assert_eq!(
        health("'hello hello'.replace('he', 'we') == 'wello wello'"),
        "true"
    );
    assert_eq!(
        health("'hello hello'.replace('he', 'we', 1) == 'wello hello'"),
        "true"
    );
    assert_eq!(
        health("'hello hello'.replace('he', 'we', 0) == 'hello hello'"),
        "true"
    );
    assert_eq!(
        health("'hello hello'.replace('he', 'we', -1) == 'wello wello'"),
        "true"
    );
    assert_eq!(health("'héy'.replace('', '_') == '_h_é_y_'"), "true");
    assert_eq!(health("'a,b,c'.split(',') == ['a', 'b', 'c']"), "true");
    assert_eq!(health("'a,b,c'.split(',', 0) == []"), "true");
    assert_eq!(health("'a,b,c'.split(',', 1) == ['a,b,c']"), "true");
    assert_eq!(health("'a,b,c'.split(',', 2) == ['a', 'b,c']"), "true");
    assert_eq!(health("'a,b,c'.split(',', -1) == ['a', 'b', 'c']"), "true");
    assert_eq!(health("'héy'.split('') == ['h', 'é', 'y']"), "true");
}

#[test]
fn string_extension_join_quote_format() {
    assert_eq!(health("['a', 'b'].join() == 'ab'"), "true");
    assert_eq!(health("['a', 'b'].join('/') == 'a/b'"), "true");
    assert_eq!(health("[].join('/') == ''"), "true");
    assert_eq!(health("obj.spec.items.join(',') == 'a,b'"), "true");
    // the run-time type guard looks at the first element; join looks at every element
    assert_eq!(
        health("dyn(['a', 1]).join() == ''"),
        "eval: join: invalid input: 1"
    );
    assert_eq!(
        health("dyn([1, 'a']).join() == ''"),
        "eval: no such overload: join(list)"
    );
    assert_eq!(
        health(r#"strings.quote('a"b\n\\') == '"a\\"b\\n\\\\"'"#),
        "true"
    );
    assert_eq!(health(r#"strings.quote('\x01') == '"\x01"'"#), "true");
    assert_eq!(
        health("'%d items, %s'.format([3, 'ok']) == '3 items, ok'"),
        "true"
    );
    assert_eq!(health("'%.2f'.format([2]) == '2.00'"), "true");
    assert_eq!(health("'%e'.format([2.5]) == '2.500000e+00'"), "true");
    assert_eq!(
        health("'%b %o %x %X'.format([5, 8, 255, 255]) == '101 10 ff FF'"),
        "true"
    );
    assert_eq!(health("'%x'.format(['hi']) == '6869'"), "true");
    assert_eq!(
        health("'%s'.format([[1, 'a', true, null]]) == '[1, a, true, null]'"),
        "true"
    );
    assert_eq!(
        health("'%s'.format([{'b': 1, 'a': 2}]) == '{a: 2, b: 1}'"),
        "true"
    );
    assert_eq!(health("'%s'.format([duration('90s')]) == '90s'"), "true");
    assert_eq!(health("'100%% %s'.format(['done']) == '100% done'"), "true");
    // checked at compile time when the string and the list are literals
    assert_eq!(
        health("'%d'.format(['a']) == ''"),
        "compile: error during formatting: decimal clause can only be used on ints, uints, and doubles, was given string"
    );
    assert_eq!(
        health("'%d'.format([1, 2]) == ''"),
        "compile: too many arguments supplied to string.format (expected 1, got 2)"
    );
    assert_eq!(
        health("'%s %s'.format(['a']) == ''"),
        "compile: index 1 out of range"
    );
    assert_eq!(
        health("'%y'.format([1]) == ''"),
        "compile: could not parse formatting clause: unrecognized formatting clause \"y\""
    );
    // ... and at run time otherwise
    assert_eq!(
        health("'%d'.format([obj.metadata.name]) == ''"),
        "eval: error during formatting: decimal clause can only be used on ints, uints, and doubles, was given string"
    );
    assert_eq!(
        health("'%d %d'.format(dyn([1])) == ''"),
        "eval: index 1 out of range"
    );
}

#[test]
fn string_extension_calls_narrowed_to_one_overload_are_guarded() {
    // obj is dyn: a single-overload function is bound to that overload, and a value of
    // another type is "no such overload" with its type
    assert_eq!(
        health("obj.spec.two.lowerAscii() == ''"),
        "eval: no such overload: lowerAscii(int)"
    );
    assert_eq!(
        health("obj.spec.items.charAt(0) == ''"),
        "eval: no such overload: charAt(list, int)"
    );
}
