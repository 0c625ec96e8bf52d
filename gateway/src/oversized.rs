//! Lines from a stock server over the message limit. rmcp drops a line
//! longer than its transport's limit and reads on, so a reply over
//! `max_message_bytes` would leave its call waiting until `call_timeout`.
//! The server's output passes through [`Watched`], which counts such lines
//! as they stream by (nothing is kept); a forwarded call that sees the count
//! move ends at once, and the session goes on.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

/// A server's output, counting the lines longer than `max` bytes.
pub struct Watched<R> {
    inner: R,
    max: usize,
    /// Bytes of the current line so far (saturating), and whether it was counted.
    line: usize,
    counted: bool,
    seen: watch::Sender<u64>,
}

impl<R> Watched<R> {
    /// `inner`, watched for lines over `max` bytes; the receiver sees how many passed.
    pub fn new(inner: R, max: usize) -> (Watched<R>, watch::Receiver<u64>) {
        let (seen, count) = watch::channel(0);
        (Watched { inner, max, line: 0, counted: false, seen }, count)
    }

    fn account(&mut self, bytes: &[u8]) {
        for part in bytes.split_inclusive(|b| *b == b'\n') {
            let ends = part.last() == Some(&b'\n');
            let len = part.len() - usize::from(ends);
            self.line = self.line.saturating_add(len);
            if self.line > self.max && !self.counted {
                self.counted = true;
                self.seen.send_modify(|n| *n += 1);
            }
            if ends {
                (self.line, self.counted) = (0, false);
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.account(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    fn count(input: &[u8], max: usize, chunk: usize) -> u64 {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let (mut w, seen) = Watched::new(tokio_test_reader(input.to_vec(), chunk), max);
            let mut out = Vec::new();
            w.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, input, "everything passes through unchanged");
            *seen.borrow()
        })
    }

    /// A reader handing out `chunk` bytes at a time.
    fn tokio_test_reader(data: Vec<u8>, chunk: usize) -> impl AsyncRead + Unpin {
        struct Chunks(std::collections::VecDeque<u8>, usize);
        impl AsyncRead for Chunks {
            fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
                let n = self.1.min(buf.remaining()).min(self.0.len());
                let taken: Vec<u8> = self.0.drain(..n).collect();
                buf.put_slice(&taken);
                Poll::Ready(Ok(()))
            }
        }
        Chunks(data.into(), chunk)
    }

    #[test]
    fn each_line_over_the_limit_is_counted_once_however_it_arrives() {
        let mut input = Vec::new();
        input.extend_from_slice(b"short\n");
        input.extend(std::iter::repeat_n(b'x', 100));
        input.push(b'\n');
        input.extend_from_slice(b"0123456789\n"); // exactly the limit: not over
        input.extend(std::iter::repeat_n(b'y', 11));
        input.push(b'\n');
        for chunk in [1, 3, 7, 64, 4096] {
            assert_eq!(count(&input, 10, chunk), 2, "chunks of {chunk}");
        }
        assert_eq!(count(b"no newline at the end, but long", 10, 5), 1);
        assert_eq!(count(b"", 10, 5), 0);
    }
}
