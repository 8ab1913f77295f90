//! Arbitrary bytes as a manifest file, through every path that reads one: input checks (size,
//! NUL, UTF-8, BOM), the YAML loader and its limits (its block reader against saphyr alone), every lint rule (including compiling the
//! readiness rules of SMPs) and every diagnostics renderer (spans turned into positions and
//! excerpts); the loader of `eval`/`check`/`render` and, against it, the reader of dumps
//! without positions (`doctor`/`tree`/`trace`/`wait --from`); `render` of every
//! ServiceSet (its Helm values are YAML of their own) and its emitters; `doctor`'s diagnosis;
//! and `doctor --save`'s scrubbing, checked: no Secret of the bundle, at any depth of lists,
//! keeps its data.
//!
//! Small inputs reach hostile sizes through one macro, so that the fuzzer can write deep
//! nesting and long alias chains in a few bytes: `\x01 H L segment \x02` stands for the
//! segment repeated `H * 256 + L` times (the expansion is capped at 256 KiB, which keeps an execution under AddressSanitizer well inside the 5 s timeout). C0 control bytes
//! are not valid YAML, so the macro takes nothing from what a manifest can say.
#![no_main]

use std::io;

use chrono::{TimeZone, Utc};
use kubectl_ksm::cli::input::source_from_bytes;
use kubectl_ksm::core::lint::{Linter, lint_source};
use kubectl_ksm::core::{doctor, objects, render, secret};
use kubectl_ksm::output::stream::Summary;
use kubectl_ksm::output::{DEFAULT_WIDTH, github, human, json, render as render_out, sarif, yaml};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const MAX_EXPANDED: usize = 256 << 10;

/// Expands the repetition macro (see the module documentation).
fn expand(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() && out.len() < MAX_EXPANDED {
        if data[i] == 0x01 && i + 3 <= data.len() {
            let times = usize::from(data[i + 1]) * 256 + usize::from(data[i + 2]);
            let rest = &data[i + 3..];
            let end = rest.iter().position(|&b| b == 0x02).unwrap_or(rest.len());
            let segment = &rest[..end];
            for _ in 0..times {
                if out.len() + segment.len() > MAX_EXPANDED {
                    break;
                }
                out.extend_from_slice(segment);
            }
            i += 3 + end + 1;
        } else {
            out.push(data[i]);
            i += 1;
        }
    }
    out
}

/// The oracle of `doctor --save`: an independent walk (recursive, over a tree whose depth
/// the loader bounds) that finds any Secret keeping data, in lists at any depth.
fn leaks(v: &Value, in_secret_list: bool) -> bool {
    let Some(m) = v.as_object() else { return false };
    let kind = m.get("kind").and_then(Value::as_str);
    let is_secret = kind == Some("Secret") || (kind.is_none() && in_secret_list);
    if is_secret {
        let annotated = m
            .get("metadata")
            .and_then(|meta| meta.get("annotations"))
            .and_then(|a| a.get(secret::LAST_APPLIED))
            .is_some();
        return m.contains_key("data") || m.contains_key("stringData") || annotated;
    }
    let of_secrets = kind == Some("SecretList");
    m.get("items")
        .and_then(Value::as_array)
        .is_some_and(|items| items.iter().any(|i| leaks(i, of_secrets)))
}

fuzz_target!(|data: &[u8]| {
    let bytes = expand(data);
    let Ok(source) = source_from_bytes("fuzz.yaml".into(), bytes) else {
        return;
    };

    // The block reader reads what saphyr reads alone: the same documents, trees and error
    // (with anchors, only where each document starts: the trees print aliases expanded).
    let (ours, our_err) = kubectl_ksm::diag::yaml::parse_documents(&source);
    let (saphyr, saphyr_err) = kubectl_ksm::diag::yaml::parse_documents_by_saphyr(&source);
    assert_eq!(our_err, saphyr_err, "the block reader's error");
    if source.text().contains('&') {
        let starts = |d: &[kubectl_ksm::diag::yaml::Document]| -> Vec<usize> {
            d.iter().map(|d| d.start).collect()
        };
        assert_eq!(starts(&ours), starts(&saphyr), "the block reader's documents");
    } else {
        assert_eq!(format!("{ours:?}"), format!("{saphyr:?}"), "the block reader's trees");
    }

    // lint and every renderer of its report.
    let report = lint_source(&source, &Linter::default());
    let mut summary = Summary {
        files: 1,
        documents: report.documents,
        objects: report.linted,
        skipped: report.skipped,
        ..Summary::default()
    };
    summary.count(&report.diagnostics);
    let _ = summary.line();
    let diags = &report.diagnostics;
    let mut sink = io::sink();
    human::render(&mut sink, diags, false, DEFAULT_WIDTH).unwrap();
    json::render(&mut sink, diags, &summary).unwrap();
    sarif::render(&mut sink, diags, kubectl_ksm::core::lint::all_rules()).unwrap();
    github::render(&mut sink, diags).unwrap();

    // The loader of the other subcommands (they refuse a source with any problem).
    let loaded = objects::load_values(&source);
    // The reader of dumps without positions (doctor, tree, trace, wait --from) reads what
    // this one reads, the same objects, or leaves the file to it; a YAML file never past a
    // problem. (JSON it reads as JSON, as kubectl does: text this YAML reader refuses, a
    // surrogate pair in an escape for one, may be valid JSON.)
    let dump = objects::load_dump_values(&source);
    if !loaded.diagnostics.is_empty() {
        assert!(
            dump.is_none() || kubectl_ksm::diag::json::looks_like_json(source.text()),
            "the dump reader read past {:?}",
            loaded.diagnostics[0].message
        );
        return;
    }
    let values: Vec<Value> = loaded.objects.into_iter().map(|o| o.json).collect();
    if let Some(dump) = dump {
        assert_eq!(dump, values, "the dump reader read other objects");
    }

    // render: every ServiceSet against the templates of the same file, and the emitters.
    let templates: Vec<Value> = values
        .iter()
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some("ServiceTemplate"))
        .cloned()
        .collect();
    for set in values
        .iter()
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some("ServiceSet"))
    {
        let rendered = render::render(&render::Inputs {
            service_set: set,
            templates: &templates,
        });
        render_out::yaml_stream(&mut sink, &rendered.objects).unwrap();
        render_out::json_list(&mut sink, &rendered.objects).unwrap();
    }

    // doctor --from and its bundle.
    let options = doctor::Options {
        now: Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap(),
        stuck_after: std::time::Duration::from_secs(600),
        namespace: None,
        service_set: None,
        secrets_collected: true,
        unread: Vec::new(),
    };
    let mut bundle = values;
    for o in &mut bundle {
        secret::scrub(o);
    }
    let _ = doctor::diagnose(&bundle, &options);
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": bundle});
    assert!(
        !leaks(&list, false),
        "a Secret keeps its data in the bundle"
    );
    let mut text = String::new();
    yaml::write_document(&list, &mut text);
});
