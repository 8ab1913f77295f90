//! The server's end of MCP's stdio transport: one JSON-RPC message per line. A line that is
//! not JSON is answered with JSON-RPC's parse error (-32700), one that is JSON but no
//! JSON-RPC message of a client with an invalid-request error (-32600), both with a null id
//! as JSON-RPC 2.0 says, and the session goes on. A line is read up to [`MAX_LINE`] bytes: a
//! longer one is skipped to its end and answered with a parse error, so no input makes the
//! server hold more than that.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

/// The longest message read (the same bound as the SDK's own stdio transport).
pub const MAX_LINE: usize = 16 << 20;

/// JSON-RPC 2.0's codes for a message that cannot be read.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

pub struct LineTransport<R, W> {
    input: R,
    output: Arc<Mutex<W>>,
    line: Vec<u8>,
}

impl<R, W> LineTransport<R, W> {
    pub fn new(input: R, output: W) -> Self {
        LineTransport {
            input,
            output: Arc::new(Mutex::new(output)),
            line: Vec::new(),
        }
    }
}

/// One line read: its bytes, or how long it was when it passed the bound.
enum Line {
    Text,
    TooLong(usize),
    End,
}

impl<R: AsyncBufRead + Unpin, W> LineTransport<R, W> {
    /// Reads the next line into `self.line` (without its line break), keeping at most
    /// [`MAX_LINE`] bytes of it.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        self.line.clear();
        let mut length = 0usize;
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                return Ok(if length == 0 {
                    Line::End
                } else if length > MAX_LINE {
                    Line::TooLong(length)
                } else {
                    Line::Text
                });
            }
            let (part, done) = match memchr(buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            length += part.len();
            if length <= MAX_LINE {
                self.line.extend_from_slice(part);
            } else {
                self.line = Vec::new();
            }
            let used = done.unwrap_or(buf.len());
            self.input.consume(used);
            if done.is_some() {
                return Ok(if length > MAX_LINE {
                    Line::TooLong(length)
                } else {
                    Line::Text
                });
            }
        }
    }
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|b| *b == b'\n')
}

async fn write_line<W: AsyncWrite + Unpin>(
    out: &Mutex<W>,
    mut bytes: Vec<u8>,
) -> std::io::Result<()> {
    bytes.push(b'\n');
    // One writer at a time: replies to requests served at once never interleave.
    let mut out = out.lock().await;
    out.write_all(&bytes).await?;
    out.flush().await
}

/// JSON-RPC's error reply to a message that could not be read (so has no id).
fn unreadable(code: i64, message: String) -> Vec<u8> {
    let reply = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    reply.to_string().into_bytes()
}

/// What a line holds: a client's message, or the error reply it gets.
fn message_of(line: &[u8]) -> Result<ClientJsonRpcMessage, Vec<u8>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    let value: serde_json::Value = serde_json::from_slice(line)
        .map_err(|e| unreadable(PARSE_ERROR, format!("Parse error: {e}")))?;
    serde_json::from_value(value).map_err(|e| {
        unreadable(
            INVALID_REQUEST,
            format!("Invalid Request: not a JSON-RPC 2.0 request or notification of MCP: {e}"),
        )
    })
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.output.clone();
        async move { write_line(&out, serde_json::to_vec(&item)?).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let reply = match self.read_line().await {
                Ok(Line::End) | Err(_) => return None,
                Ok(Line::TooLong(n)) => unreadable(
                    PARSE_ERROR,
                    format!("Parse error: a message of {n} bytes, more than the {MAX_LINE} read"),
                ),
                Ok(Line::Text) if self.line.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(Line::Text) => match message_of(&self.line) {
                    Ok(message) => return Some(message),
                    Err(reply) => reply,
                },
            };
            if write_line(&self.output, reply).await.is_err() {
                return None;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Test = LineTransport<std::io::Cursor<Vec<u8>>, Vec<u8>>;

    fn transport(input: &[u8]) -> Test {
        LineTransport::new(std::io::Cursor::new(input.to_vec()), Vec::new())
    }

    async fn replies(t: &Test) -> Vec<serde_json::Value> {
        let out = t.output.lock().await;
        out.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn unreadable_lines_get_json_rpc_errors_and_the_messages_after_them_are_read() {
        let input = b"not json\n{\"foo\":1}\n\n\xff\xfe\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\r\n";
        runtime().block_on(async {
            let mut t = transport(input);
            let m = t.receive().await.expect("the ping");
            let v = serde_json::to_value(&m).unwrap();
            assert_eq!(v["id"], 7);
            assert_eq!(v["method"], "ping");
            assert!(t.receive().await.is_none(), "end of input ends the session");
            let r = replies(&t).await;
            let codes: Vec<_> = r
                .iter()
                .map(|r| r["error"]["code"].as_i64().unwrap())
                .collect();
            assert_eq!(codes, [PARSE_ERROR, INVALID_REQUEST, PARSE_ERROR]);
            assert!(r.iter().all(|r| r["id"].is_null() && r["jsonrpc"] == "2.0"));
        });
    }

    #[test]
    fn a_line_longer_than_the_bound_is_skipped_whole_and_not_kept() {
        let mut input = vec![b'['; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        runtime().block_on(async {
            let mut t = transport(&input);
            let m = t.receive().await.expect("the ping after the long line");
            assert_eq!(serde_json::to_value(&m).unwrap()["id"], 1);
            assert!(t.line.capacity() < 4096, "the long line is not kept");
            let r = replies(&t).await;
            assert_eq!(r.len(), 1);
            assert_eq!(r[0]["error"]["code"], PARSE_ERROR);
            let message = r[0]["error"]["message"].as_str().unwrap();
            assert!(message.contains(&format!("{}", MAX_LINE + 10)), "{message}");
        });
    }
}
