//! One connection's input: the bytes received, the requests parsed from them and not yet
//! taken, and the parser's progress through a request still arriving.
//!
//! Every consumer takes requests from here, never from the bytes: the host's normal path
//! and its cross-client batching pass look at the same parsed queue, so a request is
//! parsed exactly once, whichever of them runs it, and the parser's partial state always
//! belongs to the bytes it was made from. Consumed bytes are dropped from the front only
//! once they are at least half the buffer, so a pipeline of any length costs time in
//! proportion to its size.

use crate::{Limits, ProtocolError, RequestParser};
use std::collections::VecDeque;

/// A request: its arguments.
pub type Request = Vec<Vec<u8>>;

/// Buffers larger than this are given back once empty, so idle clients stay small.
const KEEP_CAPACITY: usize = 64 << 10;

/// The input of one connection (see the module documentation).
#[derive(Debug)]
pub struct Inbox {
    buf: Vec<u8>,
    /// Bytes of `buf` already parsed into requests.
    start: usize,
    parser: RequestParser,
    queue: VecDeque<Request>,
    /// The bytes each queued request took on the wire, in the queue's order.
    sizes: VecDeque<usize>,
    /// Their sum.
    queued_bytes: usize,
    /// A protocol error found after the queued requests.
    error: Option<ProtocolError>,
    /// Bytes moved to the front by compaction, for the tests' bound.
    #[cfg(test)]
    moved: usize,
}

impl Inbox {
    /// An empty inbox whose requests are parsed under `limits`.
    pub fn new(limits: Limits) -> Inbox {
        Inbox {
            buf: Vec::new(),
            start: 0,
            parser: RequestParser::new(limits),
            queue: VecDeque::new(),
            sizes: VecDeque::new(),
            queued_bytes: 0,
            error: None,
            #[cfg(test)]
            moved: 0,
        }
    }

    /// Replaces the limits, for the requests parsed from now on (a request in
    /// progress keeps the limits it was started under for what it has read).
    pub fn set_limits(&mut self, limits: Limits) {
        self.parser.set_limits(limits);
    }

    /// Appends bytes received.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The input held and not yet taken, in wire bytes: what a query buffer limit
    /// bounds.
    pub fn buffered(&self) -> usize {
        self.queued_bytes + self.unparsed()
    }

    /// Bytes received and not yet parsed into a request (a request still arriving).
    pub fn unparsed(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Parses requests until `most` are queued, more bytes are needed, or the input
    /// breaks the protocol (then [`Inbox::error`] says how, once the queue is taken).
    /// Empty inline lines are skipped, as Redis skips them.
    pub fn parse(&mut self, most: usize) {
        while self.queue.len() < most && self.error.is_none() && self.start < self.buf.len() {
            match self.parser.next(&self.buf[self.start..]) {
                Ok(Some((args, used))) => {
                    self.start += used;
                    if !args.is_empty() {
                        self.queued_bytes += used;
                        self.sizes.push_back(used);
                        self.queue.push_back(args);
                    }
                }
                Ok(None) => break,
                Err(e) => self.error = Some(e),
            }
        }
        self.compact();
    }

    /// Requests parsed and not yet taken.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Takes up to `most` queued requests, oldest first.
    pub fn take(&mut self, most: usize) -> Vec<Request> {
        let count = most.min(self.queue.len());
        let bytes: usize = self.sizes.drain(..count).sum();
        self.queued_bytes -= bytes;
        self.queue.drain(..count).collect()
    }

    /// Takes every queued request if the whole input is nothing but them (no request
    /// still arriving, no protocol error after them) and `accept` agrees; otherwise
    /// leaves everything where it is.
    pub fn take_whole_if(
        &mut self,
        accept: impl FnOnce(&[Request]) -> bool,
    ) -> Option<Vec<Request>> {
        if self.queue.is_empty() || self.unparsed() > 0 || self.error.is_some() {
            return None;
        }
        if !accept(self.queue.make_contiguous()) {
            return None;
        }
        self.sizes.clear();
        self.queued_bytes = 0;
        Some(self.queue.drain(..).collect())
    }

    /// The protocol error after the last queued request, once the queue is empty (the
    /// requests before it are run first, as Redis runs them).
    pub fn error(&self) -> Option<&ProtocolError> {
        if self.queue.is_empty() {
            self.error.as_ref()
        } else {
            None
        }
    }

    /// Whether nothing is queued and no byte waits to be parsed.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.unparsed() == 0
    }

    /// Drops everything: queued requests, bytes, the request in progress, the error.
    pub fn clear(&mut self) {
        let limits = self.parser.limits();
        *self = Inbox::new(limits);
    }

    /// Drops parsed bytes from the front once they are at least half the buffer
    /// (amortized: each byte is moved at most once per doubling).
    fn compact(&mut self) {
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            if self.buf.capacity() > KEEP_CAPACITY {
                self.buf = Vec::new();
            }
        } else if self.start > 0 && self.start >= self.buf.len() / 2 {
            #[cfg(test)]
            {
                self.moved += self.buf.len() - self.start;
            }
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(requests: &[Request]) -> Vec<u8> {
        let mut out = Vec::new();
        for request in requests {
            crate::encode_request(request, &mut out);
        }
        out
    }

    #[test]
    fn a_long_pipeline_taken_in_runs_moves_each_byte_a_bounded_number_of_times() {
        let requests: Vec<Request> = (0..200_000)
            .map(|n| vec![b"ECHO".to_vec(), format!("{n:08}").into_bytes()])
            .collect();
        let bytes = wire(&requests);
        let mut inbox = Inbox::new(Limits::default());
        inbox.extend(&bytes);
        let mut got = Vec::new();
        loop {
            inbox.parse(512);
            let run = inbox.take(512);
            if run.is_empty() {
                break;
            }
            got.extend(run);
        }
        assert_eq!(got, requests);
        assert!(inbox.is_empty());
        // Draining the front after every run moved about bytes^2 / (2 * run bytes):
        // here some 20 GB. Halving compaction moves at most the input once more.
        assert!(
            inbox.moved <= bytes.len(),
            "{} of {}",
            inbox.moved,
            bytes.len()
        );
    }

    #[test]
    fn a_batch_is_taken_only_from_complete_input_and_leaves_it_otherwise() {
        let mut inbox = Inbox::new(Limits::default());
        let first = vec![b"BF.ADD".to_vec(), b"k".to_vec(), b"a".to_vec()];
        let mut bytes = wire(&[first.clone(), first.clone()]);
        let half = wire(&[vec![b"CF.ADD".to_vec(), b"c".to_vec(), b"s".to_vec()]]);
        bytes.extend_from_slice(&half[..7]);
        inbox.extend(&bytes);
        inbox.parse(512);
        // A request still arriving: no batch, and nothing is lost or parsed twice.
        assert!(inbox.take_whole_if(|_| true).is_none());
        assert_eq!(inbox.queued(), 2);
        inbox.extend(&half[7..]);
        inbox.parse(512);
        assert!(
            inbox.take_whole_if(|q| q.len() == 2).is_none(),
            "refused by accept"
        );
        let all = inbox.take_whole_if(|_| true).expect("whole");
        assert_eq!(all.len(), 3);
        assert_eq!(
            all[2],
            vec![b"CF.ADD".to_vec(), b"c".to_vec(), b"s".to_vec()]
        );
        assert!(inbox.is_empty());
        assert_eq!(inbox.buffered(), 0);
    }

    #[test]
    fn requests_before_a_protocol_error_are_taken_first() {
        let mut inbox = Inbox::new(Limits::default());
        let mut bytes = wire(&[vec![b"PING".to_vec()]]);
        bytes.extend_from_slice(b"*1\r\n:5\r\n");
        inbox.extend(&bytes);
        inbox.parse(512);
        assert!(inbox.error().is_none(), "the PING comes first");
        assert_eq!(inbox.take(512), vec![vec![b"PING".to_vec()]]);
        assert!(inbox.error().is_some());
    }
}
