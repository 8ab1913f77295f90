//! The server's end of MCP's stdio transport: one JSON-RPC message per line. A line that is
//! not JSON is answered with JSON-RPC's parse error (-32700), one that is JSON but no
//! JSON-RPC message of a client with an invalid-request error (-32600), both with a null id
//! as JSON-RPC 2.0 says, and the session goes on. A line is read up to [`MAX_LINE`] bytes: a
//! longer one is skipped to its end and answered with a parse error, so no input makes the
//! server hold more than that.
//!
//! The service loop polls [`Transport::receive`] against its other work and drops the read
//! whenever something else is ready first, so a read keeps everything it has taken in the
//! transport, not in the future: a line that came in two pieces, with the read dropped
//! between them, is still read whole. Lines go out through one writer task, each whole, so
//! a reply is neither cut nor interleaved by a dropped read or by replies sent at once.

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// The longest message read (the same bound as the SDK's own stdio transport).
pub const MAX_LINE: usize = 16 << 20;

/// JSON-RPC 2.0's codes for a message that cannot be read.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// How many lines wait for the writer before a sender waits too.
const QUEUED_LINES: usize = 16;

/// What the writer task is given: a line to write (or none: only the ones before it), and
/// where to say how that went.
struct Write {
    line: Option<Vec<u8>>,
    done: Option<oneshot::Sender<std::io::Result<()>>>,
}

pub struct LineTransport<R> {
    input: R,
    /// The line being read, kept across dropped reads.
    line: Vec<u8>,
    /// How long the line being read is so far (more than `line` holds once past the bound).
    length: usize,
    /// `line` holds a whole line already handed on: the next read starts a new one.
    taken: bool,
    /// An error reply not yet given to the writer.
    reply: Option<Vec<u8>>,
    writes: mpsc::Sender<Write>,
}

impl<R> LineTransport<R> {
    /// The transport reading `input` and writing `output`, whose writer runs as a task of
    /// the current runtime.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(input: R, output: W) -> Self {
        let (writes, queue) = mpsc::channel(QUEUED_LINES);
        tokio::spawn(write_lines(output, queue));
        LineTransport {
            input,
            line: Vec::new(),
            length: 0,
            taken: false,
            reply: None,
            writes,
        }
    }
}

/// Writes each line given, whole and flushed, in the order given. After a failed write the
/// rest fail with the same kind of error.
async fn write_lines<W: AsyncWrite + Unpin>(mut out: W, mut queue: mpsc::Receiver<Write>) {
    let mut failed: Option<std::io::ErrorKind> = None;
    while let Some(w) = queue.recv().await {
        let result = match (failed, w.line) {
            (Some(kind), _) => Err(kind.into()),
            (None, None) => Ok(()),
            (None, Some(mut line)) => {
                line.push(b'\n');
                match out.write_all(&line).await {
                    Ok(()) => out.flush().await,
                    Err(e) => Err(e),
                }
            }
        };
        if let Err(e) = &result {
            failed = Some(e.kind());
        }
        if let Some(done) = w.done {
            let _ = done.send(result);
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the output is closed")
}

/// Gives `line` to the writer and waits until it is written.
async fn written(writes: &mpsc::Sender<Write>, line: Option<Vec<u8>>) -> std::io::Result<()> {
    let (done, result) = oneshot::channel();
    writes
        .send(Write {
            line,
            done: Some(done),
        })
        .await
        .map_err(|_| closed())?;
    result.await.map_err(|_| closed())?
}

/// One line read: its bytes, or how long it was when it passed the bound.
enum Line {
    Text,
    TooLong(usize),
    End,
}

impl<R: AsyncBufRead + Unpin> LineTransport<R> {
    /// Reads the next line into `self.line` (without its line break), keeping at most
    /// [`MAX_LINE`] bytes of it. Dropped at its await, it has lost nothing: what it took from
    /// the input is in `self.line` and `self.length`, and the next call goes on from there.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        if self.taken {
            self.line.clear();
            self.length = 0;
            self.taken = false;
        }
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                // The input ended: a last line without its break still counts.
                self.taken = true;
                return Ok(if self.length == 0 {
                    Line::End
                } else if self.length > MAX_LINE {
                    Line::TooLong(self.length)
                } else {
                    Line::Text
                });
            }
            let (part, done) = match memchr(buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            self.length += part.len();
            if self.length <= MAX_LINE {
                self.line.extend_from_slice(part);
            } else {
                self.line = Vec::new();
            }
            let used = done.unwrap_or(buf.len());
            self.input.consume(used);
            if done.is_some() {
                self.taken = true;
                return Ok(if self.length > MAX_LINE {
                    Line::TooLong(self.length)
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

impl<R> Transport<RoleServer> for LineTransport<R>
where
    R: AsyncBufRead + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writes = self.writes.clone();
        async move { written(&writes, Some(serde_json::to_vec(&item)?)).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.reply.is_some() {
                // Waiting for room is the one await here, and a dropped wait leaves the
                // reply where it was.
                let permit = self.writes.reserve().await.ok()?;
                permit.send(Write {
                    line: self.reply.take(),
                    done: None,
                });
            }
            self.reply = Some(match self.read_line().await {
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
            });
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        written(&self.writes, None).await
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;
    use tokio::io::{AsyncReadExt, DuplexStream};

    use super::*;

    type Test = LineTransport<tokio::io::BufReader<DuplexStream>>;

    /// A transport whose input is what the returned writer writes, and whose output the
    /// returned reader reads.
    fn transport() -> (Test, DuplexStream, DuplexStream) {
        transport_with_room(64 << 10)
    }

    /// The same, with room for `room` bytes of output before the client reads them.
    fn transport_with_room(room: usize) -> (Test, DuplexStream, DuplexStream) {
        let (input, client_out) = tokio::io::duplex(64 << 10);
        let (output, client_in) = tokio::io::duplex(room);
        let t = LineTransport::new(tokio::io::BufReader::new(input), output);
        (t, client_out, client_in)
    }

    /// A client reading the transport's output to its end, as it comes.
    fn read_all(mut output: DuplexStream) -> tokio::task::JoinHandle<Vec<serde_json::Value>> {
        tokio::spawn(async move {
            let mut out = Vec::new();
            output.read_to_end(&mut out).await.unwrap();
            out.split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice(l).unwrap())
                .collect()
        })
    }

    /// Every reply the transport wrote, once it is dropped.
    async fn replies(t: Test, output: DuplexStream) -> Vec<serde_json::Value> {
        let client = read_all(output);
        drop(t);
        client.await.unwrap()
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
            let (mut t, mut client, output) = transport();
            client.write_all(input).await.unwrap();
            drop(client);
            let m = t.receive().await.expect("the ping");
            let v = serde_json::to_value(&m).unwrap();
            assert_eq!(v["id"], 7);
            assert_eq!(v["method"], "ping");
            assert!(t.receive().await.is_none(), "end of input ends the session");
            let r = replies(t, output).await;
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
        runtime().block_on(async {
            let (mut t, mut client, output) = transport();
            let writer = tokio::spawn(async move {
                client.write_all(&vec![b'['; MAX_LINE + 10]).await.unwrap();
                client
                    .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
                    .await
                    .unwrap();
            });
            let m = t.receive().await.expect("the ping after the long line");
            assert_eq!(serde_json::to_value(&m).unwrap()["id"], 1);
            assert!(t.line.capacity() < 4096, "the long line is not kept");
            writer.await.unwrap();
            let r = replies(t, output).await;
            assert_eq!(r.len(), 1);
            assert_eq!(r[0]["error"]["code"], PARSE_ERROR);
            let message = r[0]["error"]["message"].as_str().unwrap();
            assert!(message.contains(&format!("{}", MAX_LINE + 10)), "{message}");
        });
    }

    /// The service loop drops a read when other work is ready first; a line that came in
    /// pieces around that is still read whole, and an error reply owed is still sent once.
    #[test]
    fn a_read_dropped_part_way_through_a_line_loses_nothing() {
        let ping = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
        runtime().block_on(async {
            let (mut t, mut client, output) = transport();
            client.write_all(b"not json\n").await.unwrap();
            client.write_all(&ping[..10]).await.unwrap();
            // One poll: the bad line is answered, the first piece taken, then it must wait.
            assert!(t.receive().now_or_never().is_none());
            client.write_all(&ping[10..20]).await.unwrap();
            assert!(t.receive().now_or_never().is_none());
            client.write_all(&ping[20..]).await.unwrap();
            client.write_all(b"\n").await.unwrap();
            drop(client);
            let m = t.receive().await.expect("the ping, whole");
            assert_eq!(serde_json::to_value(&m).unwrap()["id"], 3);
            assert!(t.receive().await.is_none());
            let r = replies(t, output).await;
            assert_eq!(r.len(), 1, "{r:?}");
            assert_eq!(r[0]["error"]["code"], PARSE_ERROR);
        });
    }

    /// A client that does not read its replies fills the writer's queue; a read dropped
    /// while it waits for room keeps the reply it owes.
    #[test]
    fn a_read_dropped_while_the_output_is_full_still_sends_its_reply() {
        let lines = 3 * QUEUED_LINES;
        runtime().block_on(async {
            let (mut t, mut client, output) = transport_with_room(64);
            client
                .write_all("not json\n".repeat(lines).as_bytes())
                .await
                .unwrap();
            drop(client);
            // Polled once at a time, with the writer's task run in between, until every
            // line is read and the queue is full.
            for _ in 0..4 * lines {
                assert!(t.receive().now_or_never().is_none());
                tokio::task::yield_now().await;
            }
            let client = read_all(output);
            assert!(t.receive().await.is_none());
            drop(t);
            assert_eq!(client.await.unwrap().len(), lines);
        });
    }

    #[test]
    fn replies_sent_at_once_come_out_whole() {
        runtime().block_on(async {
            let (mut t, client, output) = transport();
            // What `send` does for each reply (its future does not borrow the transport).
            let sends: Vec<_> = (0..100)
                .map(|i| {
                    let line =
                        serde_json::json!({"jsonrpc": "2.0", "id": i, "text": "x".repeat(5000)});
                    let writes = t.writes.clone();
                    tokio::spawn(async move {
                        written(&writes, Some(line.to_string().into_bytes())).await
                    })
                })
                .collect();
            let reader = read_all(output);
            for r in futures::future::join_all(sends).await {
                r.unwrap().unwrap();
            }
            t.close().await.unwrap();
            drop(t);
            drop(client);
            let ids: Vec<i64> = reader
                .await
                .unwrap()
                .iter()
                .map(|r| r["id"].as_i64().unwrap())
                .collect();
            assert_eq!(ids.len(), 100);
        });
    }
}
