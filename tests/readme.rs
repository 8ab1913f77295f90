//! The README's `console` examples are real: each `$ kubectl ksm ...` line is run against the
//! binary and its output must be the text that follows it in the README.

use std::process::Command;

/// Splits a command line like a POSIX shell for the quoting the README uses ('...' and "...").
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        c => cur.push(c),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

#[test]
fn readme_console_examples_match_the_binary() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut examples = 0;
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```console" {
            continue;
        }
        let mut command: Option<String> = None;
        let mut expected = String::new();
        for l in lines.by_ref() {
            if l.trim() == "```" {
                break;
            }
            if let Some(c) = l.strip_prefix("$ ") {
                assert!(command.is_none(), "one command per console block: {c}");
                command = Some(c.to_string());
            } else {
                expected.push_str(l);
                expected.push('\n');
            }
        }
        let command = command.expect("a console block starts with `$ kubectl ksm ...`");
        let words = shell_words(&command);
        assert_eq!(&words[..2], ["kubectl", "ksm"], "{command}");
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(&words[2..])
            .env_clear()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            got.trim_end(),
            expected.trim_end(),
            "README example `{command}` no longer matches the binary's output"
        );
        examples += 1;
    }
    assert!(examples >= 5, "found {examples} examples");
}

#[test]
fn shell_words_handles_quotes() {
    assert_eq!(
        shell_words(r#"kubectl ksm eval 'a == "b"' -f "x y.yaml""#),
        ["kubectl", "ksm", "eval", "a == \"b\"", "-f", "x y.yaml"]
    );
}
