//! Rendered objects: a multi-document YAML stream or a JSON `kind: List`, both ready for
//! `kubectl apply -f -`.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::yaml;

/// `-o yaml`: one document per object, in render order.
pub fn yaml_stream(out: &mut dyn Write, objects: &[Value]) -> io::Result<()> {
    let mut text = String::new();
    for o in objects {
        text.push_str("---\n");
        yaml::write_document(o, &mut text);
    }
    out.write_all(text.as_bytes())
}

/// `-o json`: a `v1` List.
pub fn json_list(out: &mut dyn Write, objects: &[Value]) -> io::Result<()> {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    serde_json::to_writer_pretty(&mut *out, &list)?;
    writeln!(out)
}
