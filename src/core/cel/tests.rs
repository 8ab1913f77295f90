use super::*;
use serde_json::json;

fn deployment() -> Object {
    Object::from_json(&json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": 3},
        "spec": {"replicas": 2},
        "status": {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 1,
                   "observedGeneration": 3,
                   "conditions": [{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]}
    }))
}

fn run(rule: &str) -> Verdict {
    compile(rule, &Limits::default())
        .unwrap_or_else(|e| panic!("{rule}: {e:?}"))
        .evaluate(&deployment())
}

fn compile_err(rule: &str) -> String {
    match compile(rule, &Limits::default()) {
        Ok(_) => panic!("{rule} compiled"),
        Err(e) => e
            .iter()
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn eval_err(rule: &str) -> String {
    match run(rule) {
        Verdict::Error(e) => e.message,
        v => panic!("{rule}: expected error, got {v:?}"),
    }
}

#[test]
fn basic_verdicts() {
    assert_eq!(
        run("self.status.availableReplicas == self.status.replicas"),
        Verdict::False
    );
    assert_eq!(
        run("self.status.readyReplicas == self.status.replicas"),
        Verdict::True
    );
    assert_eq!(run("self.status.replicas == 2.0"), Verdict::True);
    assert_eq!(run("self.status.replicas > 1.5"), Verdict::True);
    assert_eq!(run("self.status.replicas - 1 == 1"), Verdict::True);
    assert_eq!(run("type(self.status.replicas) == int"), Verdict::True);
    assert_eq!(
        run("self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"),
        Verdict::True
    );
    assert_eq!(
        run("self.status.conditions.all(c, c.status == 'True')"),
        Verdict::True
    );
    assert_eq!(
        run("self.status.conditions.exists_one(c, c.status == 'True')"),
        Verdict::False
    );
    assert_eq!(
        run("self.status.conditions.map(c, c.type) == ['Available', 'Progressing']"),
        Verdict::True
    );
    assert_eq!(
        run("size(self.status.conditions.filter(c, c.type.startsWith('P'))) == 1"),
        Verdict::True
    );
    assert_eq!(
        run("has(self.status.readyReplicas) && !has(self.status.foo)"),
        Verdict::True
    );
    assert_eq!(
        run("'Available' in self.status.conditions.map(c, c.type)"),
        Verdict::True
    );
    assert_eq!(run("'replicas' in self.status"), Verdict::True);
    assert_eq!(run("self.metadata.name.matches('^w.b$')"), Verdict::True);
    assert_eq!(
        run("self.metadata.generation == self.status.observedGeneration ? true : false"),
        Verdict::True
    );
    assert_eq!(
        run("string(self.status.replicas) + 'x' == '2x'"),
        Verdict::True
    );
    assert_eq!(
        run(
            "duration('1h30m') > duration('90m') || timestamp('2024-01-01T00:00:00Z').getFullYear() == 2024"
        ),
        Verdict::True
    );
}

#[test]
fn missing_key_is_an_error_and_logic_absorbs_errors() {
    assert_eq!(eval_err("self.status.foo > 0"), "no such key: foo");
    assert_eq!(run("false && self.status.foo > 0"), Verdict::False);
    assert_eq!(run("self.status.foo > 0 && false"), Verdict::False);
    assert_eq!(run("self.status.foo > 0 || true"), Verdict::True);
    assert_eq!(eval_err("self.status.foo > 0 || false"), "no such key: foo");
    assert_eq!(eval_err("true && self.status.foo > 0"), "no such key: foo");
}

#[test]
fn runtime_errors_use_cel_go_wording() {
    assert_eq!(
        eval_err("self.status.replicas / 0 == 1"),
        "division by zero"
    );
    assert_eq!(eval_err("self.status.replicas % 0 == 1"), "modulus by zero");
    assert_eq!(
        eval_err("self.status.replicas + 9223372036854775807 > 0"),
        "integer overflow"
    );
    assert_eq!(
        eval_err("self.status.replicas + self.metadata.name == 1"),
        "no such overload"
    );
    assert_eq!(
        eval_err("self.status.conditions[5].type == 'x'"),
        "index out of bounds: 5"
    );
    assert!(eval_err("self.status.replicas").contains("expected bool"));
}

#[test]
fn checker_rejects_like_cel_go() {
    assert_eq!(
        compile_err("status.replicas == 1"),
        "undeclared reference to 'status' (in container '')"
    );
    assert_eq!(
        compile_err("1 == 1.0"),
        "found no matching overload for '_==_' applied to '(int, double)'"
    );
    assert_eq!(
        compile_err("1 < 1.5"),
        "found no matching overload for '_<_' applied to '(int, double)'"
    );
    assert_eq!(
        compile_err("1 == 1u"),
        "found no matching overload for '_==_' applied to '(int, uint)'"
    );
    assert_eq!(
        compile_err("'a' + 1 == 'a1'"),
        "found no matching overload for '_+_' applied to '(string, int)'"
    );
    assert_eq!(
        compile_err("self.metadata.name.lowerAscii() == 'x'"),
        "undeclared reference to 'lowerAscii' (in container '')"
    );
    assert!(
        compile_err("math.greatest(1, 2) == 2")
            .contains("undeclared reference to 'math' (in container '')")
    );
    assert_eq!(
        compile_err("now() > 1"),
        "undeclared reference to 'now' (in container '')"
    );
    assert!(compile_err("self.?status").contains("unsupported syntax"));
    assert!(compile_err("optional.of(1) == 1").contains("undeclared reference to 'optional'"));
    assert!(compile_err("has(self)").contains("invalid argument to has() macro"));
    assert_eq!(
        compile_err("size(1, 2) == 1"),
        "found no matching overload for 'size' applied to '(int, int)'"
    );
    assert_eq!(
        compile_err("'abc'.split('b') == []"),
        "undeclared reference to 'split' (in container '')"
    );
    assert_eq!(
        compile_err("max(1, 2) == 2"),
        "undeclared reference to 'max' (in container '')"
    );
    // heterogeneous list literals become list(dyn)
    assert!(compile("[1, 'a'] == [1, 'a']", &Limits::default()).is_ok());
    assert!(compile("[1] + ['a'] == [1, 'a']", &Limits::default()).is_err());
}

#[test]
fn result_type_is_deduced() {
    let l = Limits::default();
    assert_eq!(
        compile("self.status.replicas + 1", &l)
            .unwrap()
            .result_type(),
        CelType::Int
    );
    assert_eq!(
        compile("self.status.ready", &l).unwrap().result_type(),
        CelType::Dyn
    );
    assert_eq!(
        compile("self.a == 1", &l).unwrap().result_type(),
        CelType::Bool
    );
    assert_eq!(
        compile("[1, 2].map(x, x * 2)", &l).unwrap().result_type(),
        CelType::list(CelType::Int)
    );
    assert_eq!(
        compile("{'a': 1}", &l).unwrap().result_type(),
        CelType::map(CelType::String, CelType::Int)
    );
    assert_eq!(
        compile("type(1)", &l).unwrap().result_type(),
        CelType::type_of(CelType::Int)
    );
    assert!(
        !compile("self.status.replicas + 1", &l)
            .unwrap()
            .result_type()
            .may_be_bool()
    );
}

#[test]
fn limits_refuse_deep_and_long_rules_cleanly() {
    let l = Limits::default();
    let parens = format!("{}1{} == 1", "(".repeat(10_000), ")".repeat(10_000));
    assert!(compile(&parens, &l).is_err());
    let nots = format!("{}true", "!".repeat(10_000));
    let _ = compile(&nots, &l);
    let plus = vec!["1"; 10_000].join(" + ") + " == 1";
    assert!(compile(&plus, &l).is_err());
    let long = format!("self.a == '{}'", "x".repeat(100_001));
    let e = compile(&long, &l).unwrap_err();
    assert_eq!(
        e[0].message,
        "expression code point size exceeds limit: size: 100013, limit 100000"
    );
    let big = vec!["self.a == 1"; 8_000].join(" && ");
    assert!(big.len() > 90_000);
    let _ = compile(&big, &l);
    let sel = format!("self{} == 1", ".a".repeat(10_000));
    assert!(compile(&sel, &l).is_err());
    let lists = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(compile(&lists, &l).is_err());
}

#[test]
fn budget_refuses_expensive_evaluations() {
    let items: Vec<i64> = (0..2000).collect();
    let obj = Object::from_json(&json!({"items": items}));
    let limits = Limits {
        max_cost: 1_000_000,
        ..Limits::default()
    };
    let rule = compile("self.items.all(x, self.items.all(y, x + y >= 0))", &limits).unwrap();
    match rule.evaluate(&obj) {
        Verdict::BudgetExceeded(b) => {
            assert_eq!(b.resource, Resource::Cost);
            assert_eq!(
                b.message(),
                "exceeds the evaluation budget (1000000 cost units); kcm would keep evaluating"
            );
        }
        v => panic!("{v:?}"),
    }
    let rule = compile("self.items.all(x, x >= 0)", &Limits::default()).unwrap();
    assert_eq!(rule.evaluate(&obj), Verdict::True);
    let rule = compile("size(self.items.map(x, x * 2)) == 2000", &Limits::default()).unwrap();
    assert_eq!(rule.evaluate(&obj), Verdict::True);
    let tight = Limits {
        max_cost: 100,
        ..Limits::default()
    };
    let rule = compile("self.items.all(x, x >= 0)", &tight).unwrap();
    assert!(matches!(
        rule.evaluate(&obj),
        Verdict::BudgetExceeded(BudgetExceeded {
            resource: Resource::Cost,
            limit: 100
        })
    ));
}

#[test]
fn explain_flattens_conjuncts_with_operand_values() {
    let rule = "self.status.availableReplicas == self.status.replicas && self.status.readyReplicas == self.status.replicas && has(self.status.foo)";
    let c = compile(rule, &Limits::default())
        .unwrap()
        .explain(&deployment());
    assert_eq!(c[0].kind, ClauseKind::And);
    assert_eq!(c[0].value, Ok("false".into()));
    assert_eq!(c.len(), 4);
    assert_eq!(c[1].depth, 1);
    assert_eq!(
        c[1].text,
        "self.status.availableReplicas == self.status.replicas"
    );
    assert_eq!(c[1].kind, ClauseKind::Comparison);
    assert_eq!(
        c[1].operands,
        vec![
            (
                "self.status.availableReplicas".to_string(),
                Ok("1".to_string())
            ),
            ("self.status.replicas".to_string(), Ok("2".to_string())),
        ]
    );
    assert_eq!(c[1].value, Ok("false".into()));
    assert_eq!(c[2].value, Ok("true".into()));
    assert_eq!(c[3].text, "has(self.status.foo)");
    assert_eq!(&rule[c[3].span.clone()], "has(self.status.foo)");
    let m = compile(
        "self.status.conditions.exists(c, c.type == 'Ready')",
        &Limits::default(),
    )
    .unwrap()
    .explain(&deployment());
    assert_eq!(m[0].kind, ClauseKind::Macro);
    assert_eq!(
        m[0].text,
        "self.status.conditions.exists(c, c.type == 'Ready')"
    );
    assert_eq!(m[0].value, Ok("false".into()));
    let e = compile(
        "!(self.status.missing == 1) || 'ü' == \"x\"",
        &Limits::default(),
    )
    .unwrap()
    .explain(&deployment());
    assert_eq!(e[0].kind, ClauseKind::Or);
    assert_eq!(e[1].kind, ClauseKind::Not);
    assert_eq!(e[1].value, Err("no such key: missing".into()));
    assert_eq!(e[1].text, "!(self.status.missing == 1)");
    assert_eq!(e[2].text, "(self.status.missing == 1)");
    assert_eq!(e[3].text, "'ü' == \"x\"");
}

#[test]
fn clause_texts_keep_their_parentheses_and_function_names() {
    let rule = "((1 + 2)) * 3 == 0 || (1 > 2 || -(1) > 0) || string((1)) == '' || int ( 2 ) == 3 \
                || 1 in ([2]) || size([1]) == 0";
    let c = compile(rule, &Limits::default())
        .unwrap()
        .explain(&deployment());
    let texts: Vec<&str> = c.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts[1..],
        [
            "((1 + 2)) * 3 == 0",
            "1 > 2",
            "-(1) > 0",
            "string((1)) == ''",
            "int ( 2 ) == 3",
            "1 in ([2])",
            "size([1]) == 0",
        ]
    );
    for c in &c {
        assert_eq!(&rule[c.span.clone()], c.text);
    }
    assert_eq!(c[1].operands[0].0, "((1 + 2)) * 3");
    assert_eq!(c[3].operands[0].0, "-(1)");
    assert_eq!(c[4].operands[0].0, "string((1))");
    assert_eq!(c[4].operands[0].1, Ok("\"1\"".into()));
}

#[test]
fn compile_error_spans_are_byte_offsets() {
    let rule = "'ü' == 'x' && status.replicas == 1";
    let e = compile(rule, &Limits::default()).unwrap_err();
    let span = e[0].span.clone().unwrap();
    assert_eq!(&rule[span], "status");
    let rule = "'ü' == 'x' &&";
    let e = compile(rule, &Limits::default()).unwrap_err();
    assert!(e[0].span.is_some());
}

#[test]
fn compiled_rule_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CompiledRule>();
    assert_send_sync::<Object>();
}

#[test]
fn deepest_accepted_rule_evaluates_on_a_small_stack() {
    // runs on the 2 MiB test thread: the evaluator recursion stays within it
    let rule = vec!["self.spec.replicas"; 240].join(" + ") + " == 480";
    let r = compile(&rule, &Limits::default()).expect("within the depth limit");
    assert_eq!(r.evaluate(&deployment()), Verdict::True);
    let nested = format!(
        "{}self.spec.replicas{} == 2",
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(compile(&nested, &Limits::default()).is_err());
    let lists = format!(
        "{}1{} == {}1{}",
        "[".repeat(100),
        "]".repeat(100),
        "[".repeat(100),
        "]".repeat(100)
    );
    assert_eq!(
        compile(&lists, &Limits::default())
            .unwrap()
            .evaluate(&deployment()),
        Verdict::True
    );
}

#[test]
fn a_long_rule_with_a_syntax_error_is_explained_without_the_crates_parser() {
    // Past CRATE_PARSER_MAX_BYTES the crate's parser (2.6 KB of memory per byte) is not run:
    // the error names where our parser stopped.
    let items = vec!["1"; 20_000].join(",");
    let rule = format!("[{items}]==[]]");
    assert!(rule.len() > super::compile::CRATE_PARSER_MAX_BYTES);
    let errs = compile(&rule, &Limits::default()).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0]
            .message
            .starts_with("syntax error at \"]\" (the rule is 40006 bytes long"),
        "{}",
        errs[0].message
    );
    assert_eq!(errs[0].span, Some(rule.len() - 1..rule.len()));
    let unfinished = format!("[{items}");
    let errs = compile(&unfinished, &Limits::default()).unwrap_err();
    assert!(
        errs[0]
            .message
            .starts_with("syntax error: unexpected end of the rule"),
        "{}",
        errs[0].message
    );
    assert_eq!(errs[0].span, None);
    // A short rule keeps cel-go's message.
    assert!(compile_err("[1]==[]]").contains("extraneous input"));
}

#[test]
fn each_field_name_is_one_shared_text_and_a_projected_object_keys_by_it() {
    let rule = "has(self.status.replicas) && self.status.replicas == self.status.readyReplicas \
                && self.spec.replicas >= 1 && self.status.replicas == self.spec.replicas";
    let c = compile(rule, &Limits::default()).expect("compiles");
    use std::sync::Arc;
    let mut names: Vec<Arc<str>> = Vec::new();
    let mut stack = vec![c.tree()];
    while let Some(n) = stack.pop() {
        match &n.kind {
            ast::Kind::Path { fields, .. } => names.extend(fields.iter().cloned()),
            ast::Kind::Select { operand, field, .. } => {
                names.push(field.clone());
                stack.push(operand);
            }
            ast::Kind::Call { target, args, .. } => {
                stack.extend(target.as_deref());
                stack.extend(args);
            }
            _ => {}
        }
    }
    assert!(names.iter().filter(|n| &***n == "replicas").count() >= 4);
    for a in &names {
        for b in &names {
            assert_eq!(a == b, Arc::ptr_eq(a, b), "{a} and {b}");
        }
    }
    // The projected object's keys are the rule's own texts.
    let object =
        serde_json::json!({"spec": {"replicas": 2}, "status": {"replicas": 2, "readyReplicas": 2}});
    let projected = c.object_from_json(&object);
    let Value::Map(root) = projected.value() else {
        panic!("a map")
    };
    let Some(Value::Map(status)) = root.get_str("status") else {
        panic!("status")
    };
    for (k, _) in status.entries() {
        let Value::String(k) = k.value() else {
            panic!("a string key")
        };
        assert!(names.iter().any(|n| Arc::ptr_eq(n, k)), "{k} is not shared");
    }
    assert_eq!(c.evaluate(&projected), Verdict::True);
}

#[test]
fn an_object_read_in_place_gives_the_verdict_of_the_object_converted() {
    let object = serde_json::json!({
        "metadata": {"name": "web", "labels": {"app": "web"}, "generation": 2},
        "spec": {"replicas": 3, "list": [1, 2, 3], "text": "abc", "big": 1e300, "n": null},
        "status": {"replicas": 3, "conditions": [{"type": "Ready", "status": "True"}]}
    });
    let rules = [
        "self.status.replicas == self.spec.replicas",
        "has(self.status.replicas) && has(self.status.missing) == false",
        "has(self.status)",
        "has(self.missing)",
        "has(self.spec.replicas.x)",
        "has(self.spec.list.x)",
        "self.spec.list.x == 1",
        "self.spec.replicas.x == 1",
        "self.spec.nothing == 1",
        "self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
        "self.spec.list.all(i, self.spec.text.size() == 3 && i > 0)",
        "self.spec.big > 1.0 && self.spec.n == null",
        "self.metadata.labels == {'app': 'web'}",
        "self == self",
        "self.spec",
        "size(self.metadata.labels) == 1 && 'app' in self.metadata.labels",
        "self.metadata.generation + 1 == 3 ? self.metadata.name.startsWith('w') : false",
        "self.spec.list.map(x, self.spec.text + string(x)).size() == 3",
    ];
    for rule in rules {
        let c = compile(rule, &Limits::default()).unwrap_or_else(|e| panic!("{rule}: {e:?}"));
        assert_eq!(
            c.evaluate_json(&object),
            c.evaluate(&c.object_from_json(&object)),
            "{rule}"
        );
        assert_eq!(
            c.evaluate_json(&object),
            c.evaluate(&Object::from_json(&object)),
            "{rule}"
        );
    }
    // The budget runs out at the same step both ways.
    let rule = "self.spec.list.all(i, has(self.status.replicas) && has(self.spec) \
                && self.spec.list.all(j, self.spec.text.size() == 3))";
    // (it needs 159 units)
    for max_cost in 1..=200 {
        let limits = Limits {
            max_cost,
            ..Limits::default()
        };
        let c = compile(rule, &limits).expect("compiles");
        assert_eq!(
            c.evaluate_json(&object),
            c.evaluate(&c.object_from_json(&object)),
            "{max_cost}"
        );
    }
}

#[test]
fn a_path_finds_its_fields_whatever_the_order_of_the_last_objects_keys() {
    let c = compile(
        "self.status.replicas == 2 && self.status.ready == 1",
        &Limits::default(),
    )
    .expect("compiles");
    let many: serde_json::Map<String, serde_json::Value> = (0..40)
        .map(|i| (format!("k{i}"), serde_json::json!(i)))
        .chain([
            ("ready".to_string(), serde_json::json!(1)),
            ("replicas".to_string(), serde_json::json!(2)),
        ])
        .collect();
    let objects = [
        (
            serde_json::json!({"status": {"replicas": 2, "ready": 1}}),
            Verdict::True,
        ),
        (
            serde_json::json!({"status": {"ready": 1, "x": 0, "replicas": 2}}),
            Verdict::True,
        ),
        (
            serde_json::json!({"a": 0, "status": {"replicas": 3, "ready": 1}}),
            Verdict::False,
        ),
        (serde_json::json!({"status": many}), Verdict::True),
        (
            serde_json::json!({"status": {"ready": 1, "replicas": 2}}),
            Verdict::True,
        ),
    ];
    // Twice over, so that every object meets the hints another one left.
    for (object, want) in objects.iter().chain(objects.iter()) {
        assert_eq!(&c.evaluate(&c.object_from_json(object)), want, "{object}");
        assert_eq!(&c.evaluate(&Object::from_json(object)), want, "{object}");
        assert_eq!(&c.evaluate_json(object), want, "{object}");
    }
    let missing = serde_json::json!({"status": {"ready": 1}});
    for v in [
        c.evaluate(&c.object_from_json(&missing)),
        c.evaluate_json(&missing),
    ] {
        assert!(
            matches!(&v, Verdict::Error(e) if e.message == "no such key: replicas"),
            "{v:?}"
        );
    }
}
