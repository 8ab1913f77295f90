//! serde_json's pretty layout (two spaces a level) for a document written a piece at a time:
//! the envelope's keys as the report begins, its items as they come (serialized on any
//! thread), the keys after them as it ends. Every piece goes through serde_json's serializer
//! with a formatter that knows its depth, so the document comes out byte for byte as
//! `serde_json::to_writer_pretty` lays out the whole.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

/// The indentation of one level.
const INDENT: &[u8] = b"  ";

/// serde_json's `PrettyFormatter`, starting `depth` levels in: a value serialized with it is
/// laid out as it is at that depth of a whole pretty-printed document.
#[derive(Debug, Clone, Copy)]
pub struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    pub fn at(depth: usize) -> Pretty {
        Pretty {
            depth,
            has_value: false,
        }
    }

    /// Serializes `value` into `out` as it is at this depth.
    pub fn write<W: Write, T: Serialize + ?Sized>(self, out: W, value: &T) -> io::Result<()> {
        value
            .serialize(&mut Serializer::with_formatter(out, self))
            .map_err(io::Error::from)
    }

    fn indent<W: ?Sized + Write>(&self, out: &mut W) -> io::Result<()> {
        for _ in 0..self.depth {
            out.write_all(INDENT)?;
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, out: &mut W, open: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        out.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, out: &mut W, close: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            out.write_all(b"\n")?;
            self.indent(out)?;
        }
        out.write_all(close)
    }

    fn member<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(out)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.begin(out, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.end(out, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.member(out, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.begin(out, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.end(out, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.member(out, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// An open object or array of a [`Document`], and whether it has a member yet.
#[derive(Debug, Clone, Copy)]
enum Open {
    Object { first: bool },
    Array { first: bool },
}

/// A pretty-printed JSON document written as it comes: objects and arrays opened and closed,
/// their members written whole. A member of an object is a [`Document::key`] then its value.
pub struct Document<'w> {
    out: &'w mut dyn Write,
    format: Pretty,
    open: Vec<Open>,
}

impl<'w> Document<'w> {
    pub fn new(out: &'w mut dyn Write) -> Document<'w> {
        Document {
            out,
            format: Pretty::at(0),
            open: Vec::new(),
        }
    }

    /// The depth of the innermost open object or array's members.
    pub fn depth(&self) -> usize {
        self.format.depth
    }

    /// Begins a member of the open object: its key.
    pub fn key(&mut self, key: &str) -> io::Result<()> {
        let Some(Open::Object { first }) = self.open.last_mut() else {
            return Err(io::Error::other("a key outside an object"));
        };
        let first = std::mem::replace(first, false);
        self.format.begin_object_key(self.out, first)?;
        Pretty::at(self.format.depth).write(&mut *self.out, key)?;
        self.format.end_object_key(self.out)?;
        self.format.begin_object_value(self.out)
    }

    /// A member of the open object, whole.
    pub fn entry<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> io::Result<()> {
        self.key(key)?;
        self.value(value)
    }

    /// A value, whole: the value of the key just written, or the next item of the open array.
    pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        self.begin_value()?;
        Pretty::at(self.format.depth).write(&mut *self.out, value)?;
        self.end_value()
    }

    /// The next item of the open array, already serialized at its depth with
    /// `Pretty::at(self.depth())` (on another thread, say).
    pub fn serialized(&mut self, item: &[u8]) -> io::Result<()> {
        self.begin_value()?;
        self.out.write_all(item)?;
        self.end_value()
    }

    /// Opens an object: the value of the key just written, the next item of the open array,
    /// or the document.
    pub fn begin_object(&mut self) -> io::Result<()> {
        self.begin_value()?;
        self.format.begin_object(self.out)?;
        self.open.push(Open::Object { first: true });
        Ok(())
    }

    /// Opens an array, as [`Document::begin_object`] does an object.
    pub fn begin_array(&mut self) -> io::Result<()> {
        self.begin_value()?;
        self.format.begin_array(self.out)?;
        self.open.push(Open::Array { first: true });
        Ok(())
    }

    /// Closes the innermost open object or array.
    pub fn end(&mut self) -> io::Result<()> {
        match self.open.pop() {
            Some(Open::Object { .. }) => self.format.end_object(self.out)?,
            Some(Open::Array { .. }) => self.format.end_array(self.out)?,
            None => return Err(io::Error::other("nothing open to close")),
        }
        self.end_value()
    }

    /// Ends the document, whole, with a line break.
    pub fn finish(self) -> io::Result<()> {
        if !self.open.is_empty() {
            return Err(io::Error::other(
                "the document ends with an object or array open",
            ));
        }
        self.out.write_all(b"\n")
    }

    fn begin_value(&mut self) -> io::Result<()> {
        match self.open.last_mut() {
            Some(Open::Array { first }) => {
                let first = std::mem::replace(first, false);
                self.format.begin_array_value(self.out, first)
            }
            // An object's value follows its key; the document's has nothing before it.
            Some(Open::Object { .. }) | None => Ok(()),
        }
    }

    fn end_value(&mut self) -> io::Result<()> {
        match self.open.last() {
            Some(Open::Array { .. }) => self.format.end_array_value(self.out),
            Some(Open::Object { .. }) => self.format.end_object_value(self.out),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn whole(v: &serde_json::Value) -> String {
        serde_json::to_string_pretty(v).unwrap()
    }

    #[test]
    fn a_value_at_depth_zero_is_laid_out_as_serde_json_lays_it_out() {
        for v in [
            json!({"a": [1, {"b": []}, {}], "c": {"d": "e\n\"f\""}, "g": null}),
            json!([]),
            json!({}),
            json!([[], [[1]], "x"]),
            json!("text"),
        ] {
            let mut out = Vec::new();
            Pretty::at(0).write(&mut out, &v).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), whole(&v));
        }
    }

    #[test]
    fn a_document_written_in_pieces_is_the_whole_pretty_printed() {
        let items = [
            json!({"x": 1, "y": [true, {"z": null}]}),
            json!([]),
            json!(2),
        ];
        for n in 0..=items.len() {
            let mut out = Vec::new();
            let mut doc = Document::new(&mut out);
            doc.begin_object().unwrap();
            doc.entry("kind", "Report").unwrap();
            doc.key("runs").unwrap();
            doc.begin_array().unwrap();
            doc.begin_object().unwrap();
            doc.entry("tool", &json!({"name": "t", "rules": []}))
                .unwrap();
            doc.key("results").unwrap();
            doc.begin_array().unwrap();
            let depth = doc.depth();
            for (i, item) in items[..n].iter().enumerate() {
                if i % 2 == 0 {
                    doc.value(item).unwrap();
                } else {
                    let mut text = Vec::new();
                    Pretty::at(depth).write(&mut text, item).unwrap();
                    doc.serialized(&text).unwrap();
                }
            }
            doc.end().unwrap();
            doc.end().unwrap();
            doc.end().unwrap();
            doc.entry("empty", &json!({})).unwrap();
            doc.end().unwrap();
            let want = json!({
                "kind": "Report",
                "runs": [{"tool": {"name": "t", "rules": []}, "results": items[..n]}],
                "empty": {},
            });
            assert_eq!(String::from_utf8(out).unwrap(), whole(&want), "{n} items");
        }
    }

    #[test]
    fn keys_are_escaped_and_misuse_is_an_error() {
        let mut out = Vec::new();
        let mut doc = Document::new(&mut out);
        doc.begin_object().unwrap();
        doc.entry("a\"b", &1).unwrap();
        doc.end().unwrap();
        assert!(doc.end().is_err());
        assert_eq!(String::from_utf8(out).unwrap(), whole(&json!({"a\"b": 1})));
        let mut out = Vec::new();
        let mut doc = Document::new(&mut out);
        doc.begin_array().unwrap();
        assert!(doc.key("k").is_err());
    }
}
