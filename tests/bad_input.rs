//! Hostile and broken inputs: each gets a clear error naming the file (and position where
//! there is one) and exit code 2 (or a diagnostic), never a panic or a hang, and the process
//! stays under 256 MiB of memory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ksm() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"));
    cmd.env_clear().current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

fn run(args: &[&str]) -> Output {
    let out = ksm().args(args).output().unwrap();
    // A panic exits with 101 and prints "panicked"; a crash has no exit code.
    assert!(
        out.status.code().is_some(),
        "{args:?} was killed: {:?}",
        out.status
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{args:?} panicked: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kubectl-ksm-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

fn smp_with_rule(rule: &str) -> String {
    format!(
        "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata: {{name: x}}\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: a\n    namespace: kcm-system\n    readinessRule: {rule:?}\n  provisioner: []\n  provisionerCRDs: []\n  selector: {{matchLabels: {{a: b}}}}\n  suspend: false\n"
    )
}

/// Every bad input in one test, so that the peak memory of all the child processes can be
/// read at the end (getrusage reports the largest child).
#[test]
fn bad_inputs_fail_cleanly_within_256_mib() {
    let dir = scratch();

    // A 100 MB file: refused before it is read.
    let big = write(&dir, "big.yaml", "a: b\n".repeat(20 * 1024 * 1024));
    let o = run(&["lint", &big]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("file is too large (100.0 MiB; the limit is 32 MiB)"),
        "{}",
        text(&o)
    );
    let o = run(&["eval", "true", "-f", &big]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("big.yaml: file is too large"),
        "{}",
        text(&o)
    );

    // A document of millions of tiny nodes just under the size limit: refused by the node budget.
    let nodes = write(&dir, "nodes.yaml", "- a\n".repeat(7 * 1024 * 1024));
    let o = run(&["lint", &nodes]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("the document holds more than 750000 YAML nodes"),
        "{}",
        text(&o)
    );
    let o = run(&["eval", "true", "-f", &nodes]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("nodes.yaml:"), "{}", text(&o));

    // Many small documents are fine: lint streams them.
    let many = write(
        &dir,
        "many.yaml",
        (0..40_000)
            .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata: {{a: b}}\n"))
            .collect::<String>(),
    );
    let o = run(&["lint", &many]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("1 file, 40000 documents: 0 errors, 0 warnings, 40000 skipped"));

    // An alias bomb.
    let o = run(&["lint", "testdata/lint/alias-bomb.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("billion laughs"));
    let o = run(&["eval", "true", "-f", "testdata/lint/alias-bomb.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("testdata/lint/alias-bomb.yaml:11:12:"),
        "{}",
        text(&o)
    );

    // Malformed YAML, binary, non-UTF-8, not a mapping.
    for (file, code, needle) in [
        (
            "testdata/lint/invalid-yaml.yaml",
            2,
            "invalid-yaml.yaml:5:18]",
        ),
        (
            "testdata/lint/binary.yaml",
            2,
            "binary file (NUL byte at offset 15)",
        ),
        (
            "testdata/lint/latin1.yaml",
            2,
            "not valid UTF-8 at line 4, column 12",
        ),
        (
            "testdata/lint/not-objects.yaml",
            1,
            "document 1 is a sequence, not a Kubernetes object",
        ),
    ] {
        let o = run(&["lint", file]);
        assert_eq!(o.status.code(), Some(code), "{file}: {}", text(&o));
        assert!(text(&o).contains(needle), "{file}: {}", text(&o));
        let o = run(&["eval", "true", "-f", file]);
        assert_eq!(o.status.code(), Some(2), "{file}: {}", text(&o));
        assert!(text(&o).contains(file), "{file}: {}", text(&o));
    }

    // Deep nesting.
    let deep = write(&dir, "deep.yaml", format!("a: {}\n", "[".repeat(100_000)));
    let o = run(&["lint", &deep]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("more than 128 levels deep"),
        "{}",
        text(&o)
    );

    // A rule of 100 KB: cel-go's code point limit, reported inside the file.
    let rule = vec!["self.a == 1"; 100 * 1024 / 15].join(" && ");
    assert!(rule.len() > 100_000);
    let smp = write(&dir, "long-rule.yaml", smp_with_rule(&rule));
    let o = run(&["lint", &smp]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("expression code point size exceeds limit: size: "),
        "{}",
        text(&o)
    );
    let o = run(&[
        "eval",
        &rule,
        "-f",
        "testdata/check/flux-system.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("\"phase\": \"compile\""));

    // Deeply nested CEL: a compile error, not a stack overflow.
    let nested = format!("{}true{}", "(".repeat(50_000), ")".repeat(50_000));
    let o = run(&[
        "eval",
        &nested,
        "-f",
        "testdata/check/flux-system.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("\"phase\": \"compile\""), "{}", text(&o));

    let _ = std::fs::remove_dir_all(&dir);

    // The largest child stayed under 256 MiB.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    let max_rss_kib = usage.ru_maxrss;
    println!("peak RSS of the largest child: {max_rss_kib} KiB");
    assert!(max_rss_kib < 256 * 1024, "a child used {max_rss_kib} KiB");
}
