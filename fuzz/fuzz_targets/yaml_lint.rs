//! Arbitrary bytes as a manifest file: input checks (size, NUL, UTF-8, BOM), the YAML loader,
//! every lint rule (including compiling the readiness rules of SMPs), and every diagnostics
//! renderer, so that the spans the loader and the rules produce are turned into line/column
//! positions and source excerpts.
#![no_main]

use std::io;

use kubectl_ksm::cli::input::source_from_bytes;
use kubectl_ksm::core::lint::{Linter, lint_source};
use kubectl_ksm::output::diagnostics::{self as render, Summary};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = source_from_bytes("fuzz.yaml".into(), data.to_vec()) else {
        return;
    };
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
    render::human(&mut sink, diags, false).unwrap();
    render::json_report(&mut sink, diags, &summary).unwrap();
    render::sarif(&mut sink, diags).unwrap();
    render::github(&mut sink, diags).unwrap();
});
