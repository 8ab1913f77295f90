//! Diagnostics as GitHub Actions workflow commands (`::error file=...::message`), which the
//! runner shows as annotations of the files.

use std::io::{self, Write};

use crate::core::codes;
use crate::diag::{Diagnostic, Severity};

/// `diags` as workflow commands, one a line, with the code and its name as the title.
pub fn render(out: &mut dyn Write, diags: &[Diagnostic]) -> io::Result<()> {
    for d in diags {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props = Vec::new();
        if let Some(f) = d.file() {
            props.push(format!("file={}", escape_property(f)));
        }
        if let Some((s, e)) = d.position() {
            props.push(format!("line={}", s.line));
            props.push(format!("col={}", s.column));
            props.push(format!("endLine={}", e.line));
            props.push(format!("endColumn={}", e.column));
        }
        let name = codes::find(d.code).map_or("", |r| r.name);
        props.push(format!(
            "title={}",
            escape_property(format!("{} {name}", d.code).trim())
        ));
        let mut message = d.message.clone();
        if let (None, Some(subject)) = (d.file(), &d.subject) {
            message = format!("{}: {message}", subject.object);
        }
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(h);
        }
        writeln!(
            out,
            "::{level} {}::{}",
            props.join(","),
            escape_data(&message)
        )?;
    }
    Ok(())
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escapes_workflow_command_syntax() {
        assert_eq!(escape_data("50%\nx"), "50%25%0Ax");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
