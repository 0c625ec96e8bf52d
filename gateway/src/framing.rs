//! The client's stdio stream, read before rmcp sees it, so that every line
//! gets an answer and one request id runs once.
//!
//! rmcp drops a line that is not JSON without a word (to avoid error storms
//! between two peers that echo errors), and a line over its length limit
//! too; a client then waits for an answer that never comes. A gateway an
//! operator relies on answers instead, as JSON-RPC says: a line that does
//! not parse, or holds what no JSON value here can (a number past `f64`, a
//! lone surrogate, nesting past 128 levels), gets `-32700 Parse error`; a
//! line over `max_message_bytes` is read to its end without being kept and
//! gets `-32600 Invalid Request`; a request whose id is still in flight gets
//! `-32600` too, and is not run a second time (a response to it, or its
//! `notifications/cancelled`, ends its time in flight). Every reply names what was
//! wrong; the session goes on.
//!
//! [`Framing::judge`] is the decision for one line, a pure function the
//! property tests and the fuzz target drive; [`serve`] wires it between
//! the process's stdio and rmcp: lines it forwards go to rmcp through a
//! pipe, rmcp's output and the framing's own replies reach stdout whole,
//! one line at a time, and each response rmcp writes ends its request's
//! time in flight.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The default `max_message_bytes`: a message (one line) larger than this is refused.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// JSON-RPC's code for a line that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for a message that is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;

/// What to do with one line from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Pass it to rmcp as it is.
    Forward,
    /// Answer it with this JSON-RPC error response, and pass nothing on.
    Reply(Value),
    /// An empty line: nothing to do.
    Skip,
}

/// The framing state of one session: the requests in flight, by id, with
/// their method and when their line was read.
#[derive(Debug, Default)]
pub struct Framing {
    in_flight: BTreeMap<String, (String, Instant)>,
}

/// The parts of a message the framing reads (the rest is skipped, not kept).
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl Framing {
    /// The verdict on one complete line (without its newline) from the client.
    /// `oversized` says the line was longer than `max` bytes and only its
    /// first bytes were kept, if any.
    pub fn judge(&mut self, line: &[u8], oversized: bool, max: usize) -> Verdict {
        if oversized {
            return Verdict::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                format!("the message is larger than the gateway's max_message_bytes ({max} bytes); nothing of it was run"),
            ));
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Verdict::Skip;
        }
        // serde_json refuses what Value cannot hold: numbers past f64, lone
        // surrogates, and nesting past 128 levels, each a parse error here.
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => return Verdict::Reply(error(Value::Null, PARSE_ERROR, format!("Parse error: {e}"))),
        };
        // A cancelled request gets no response (rmcp drops it): its id is free again now.
        if value.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
            && let Some(id) = value.get("params").and_then(|p| p.get("requestId"))
        {
            self.in_flight.remove(&id.to_string());
        }
        let Ok(head) = serde_json::from_value::<Head>(value) else {
            // Valid JSON of another shape (a batch, a bare value): rmcp answers it as an invalid request.
            return Verdict::Forward;
        };
        if let (Some(id), Some(method)) = (&head.id, head.method) {
            match self.in_flight.entry(id.to_string()) {
                Entry::Occupied(_) => {
                    return Verdict::Reply(error(
                        id.clone(),
                        INVALID_REQUEST,
                        format!("a request with id {id} is still in flight: one id runs once at a time"),
                    ));
                }
                Entry::Vacant(v) => {
                    v.insert((method, Instant::now()));
                }
            }
        }
        Verdict::Forward
    }

    /// Reads one line the gateway writes to the client: a response ends its
    /// request's time in flight, logged as the time from its request's line
    /// read to its own written (what the gateway holds a request, all told).
    pub fn sent(&mut self, line: &[u8]) {
        if let Ok(head) = serde_json::from_slice::<Head>(line)
            && head.method.is_none()
            && (head.result.is_some() || head.error.is_some())
            && let Some(id) = head.id
            && let Some((method, read)) = self.in_flight.remove(&id.to_string())
        {
            let micros = u64::try_from(read.elapsed().as_micros()).unwrap_or(u64::MAX);
            tracing::info!(target: "fcd::gateway::framing", id = %id, method, micros, "answered");
        }
    }

    /// How many requests are in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

/// Reads one `\n`-terminated line into `buf`, keeping at most `max + 1`
/// bytes of it; the rest is read and dropped. `Ok(None)` at the end of the
/// stream, `Ok(Some(oversized))` otherwise.
async fn read_bounded<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut oversized = false;
    let mut any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // A last line without its newline is judged like any other.
            return Ok(if any && !buf.is_empty() && !oversized { Some(false) } else { None });
        }
        any = true;
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], i + 1),
            None => (available, available.len()),
        };
        if !oversized {
            if buf.len() + chunk.len() > max {
                oversized = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let end = done > chunk.len();
        reader.consume(done);
        if end {
            return Ok(Some(oversized));
        }
    }
}

/// The client's end of the stdio transport, framed: `(reader, writer)` for
/// rmcp, fed from `input` and drained to `output` by two tasks; the third
/// value ends when everything rmcp and the framing wrote has reached `output`.
pub fn serve<I, O>(input: I, output: O, max: usize) -> (DuplexStream, DuplexStream, tokio::task::JoinHandle<()>)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let framing = Arc::new(Mutex::new(Framing::default()));
    // rmcp reads forwarded lines from `to_rmcp` and writes to `from_rmcp`.
    let (mut forward, to_rmcp) = tokio::io::duplex(1 << 16);
    let (from_rmcp, rmcp_output) = tokio::io::duplex(1 << 16);
    let (replies, mut replied) = mpsc::unbounded_channel::<Vec<u8>>();

    let reading = framing.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(input);
        let mut line = Vec::new();
        while let Ok(Some(oversized)) = read_bounded(&mut reader, &mut line, max).await {
            let verdict = reading.lock().ok().map(|mut f| f.judge(&line, oversized, max));
            match verdict {
                Some(Verdict::Forward) => {
                    line.push(b'\n');
                    if forward.write_all(&line).await.is_err() {
                        break;
                    }
                }
                Some(Verdict::Reply(reply)) => {
                    let (id, code) = (reply["id"].to_string(), reply["error"]["code"].as_i64().unwrap_or_default());
                    let detail = reply["error"]["message"].as_str().unwrap_or_default();
                    tracing::warn!(target: "fcd::gateway::framing", id, code, detail, bytes = line.len(), "line refused");
                    if replies.send(reply.to_string().into_bytes()).is_err() {
                        break;
                    }
                }
                Some(Verdict::Skip) => {}
                None => break,
            }
        }
        // End of input: rmcp sees its end too, and the session closes.
        let _ = forward.shutdown().await;
    });

    let written = tokio::spawn(async move {
        let mut output = output;
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        let mut rmcp_open = true;
        loop {
            tokio::select! {
                read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => {
                    match read {
                        Ok(0) | Err(_) => rmcp_open = false,
                        Ok(_) => {
                            if let Ok(mut f) = framing.lock() {
                                f.sent(line.strip_suffix(b"\n").unwrap_or(&line));
                            }
                            if !line.ends_with(b"\n") {
                                line.push(b'\n');
                            }
                            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                                break;
                            }
                            line.clear();
                        }
                    }
                }
                reply = replied.recv() => {
                    let Some(mut reply) = reply else {
                        if rmcp_open { continue } else { break }
                    };
                    reply.push(b'\n');
                    if output.write_all(&reply).await.is_err() || output.flush().await.is_err() {
                        break;
                    }
                }
            }
            if !rmcp_open && replied.is_closed() && replied.is_empty() {
                break;
            }
        }
    });
    (to_rmcp, rmcp_output, written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply_code(v: &Verdict) -> Option<i64> {
        match v {
            Verdict::Reply(r) => r["error"]["code"].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn every_bad_line_gets_an_answer() {
        let mut f = Framing::default();
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"n\":1e400}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":\"\\ud800\"}",
            deep.as_bytes(),
            b"\xff\xfe",
            b"not json",
        ] {
            let v = f.judge(line, false, DEFAULT_MAX_MESSAGE_BYTES);
            assert_eq!(reply_code(&v), Some(PARSE_ERROR), "{}", String::from_utf8_lossy(&line[..line.len().min(60)]));
            if let Verdict::Reply(r) = v {
                assert_eq!(r["id"], Value::Null);
            }
        }
        assert_eq!(reply_code(&f.judge(b"", true, 10)), Some(INVALID_REQUEST));
        assert_eq!(f.judge(b"  \r", false, 10), Verdict::Skip);
        assert_eq!(f.in_flight(), 0, "nothing refused is in flight");
    }

    #[test]
    fn one_id_runs_once_at_a_time() {
        let mut f = Framing::default();
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#;
        assert_eq!(f.judge(call, false, 1 << 20), Verdict::Forward);
        let again = f.judge(call, false, 1 << 20);
        assert_eq!(reply_code(&again), Some(INVALID_REQUEST));
        let Verdict::Reply(r) = again else { unreachable!() };
        assert_eq!(r["id"], 7);
        // A string id "7" is another id; a notification has none.
        assert_eq!(f.judge(br#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#, false, 1 << 20), Verdict::Forward);
        assert_eq!(f.judge(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#, false, 1 << 20), Verdict::Forward);
        // A cancellation ends it too (a cancelled request gets no response).
        assert_eq!(f.judge(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}"#, false, 1 << 20), Verdict::Forward);
        assert_eq!(f.judge(br#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#, false, 1 << 20), Verdict::Forward);
        // The response ends it: the id may be used again.
        f.sent(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        assert_eq!(f.judge(call, false, 1 << 20), Verdict::Forward);
        // A request the gateway sends the client (with a method) ends nothing.
        f.sent(br#"{"jsonrpc":"2.0","id":"7","method":"roots/list"}"#);
        assert_eq!(f.in_flight(), 2);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_long_line_is_read_to_its_end_and_the_next_one_is_whole() {
        let input = format!("{}\n{{\"a\":1}}\nlast-without-newline", "x".repeat(100));
        let mut reader = BufReader::with_capacity(7, input.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(read_bounded(&mut reader, &mut buf, 50).await.unwrap(), Some(true));
        assert!(buf.is_empty(), "nothing of an oversized line is kept");
        assert_eq!(read_bounded(&mut reader, &mut buf, 50).await.unwrap(), Some(false));
        assert_eq!(buf, b"{\"a\":1}");
        assert_eq!(read_bounded(&mut reader, &mut buf, 50).await.unwrap(), Some(false));
        assert_eq!(read_bounded(&mut reader, &mut buf, 50).await.unwrap(), None);
    }
}
