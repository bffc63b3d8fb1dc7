//! A client's byte stream as messy networks and clients make it: requests cut at
//! random points and sent with random pauses, replies read at a random pace, and a
//! half-close once everything is sent.
#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rocksketch::resp::encode_request;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

/// The requests as a client writes them.
pub fn wire(requests: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let mut out = Vec::new();
    for request in requests {
        encode_request(request, &mut out);
    }
    out
}

/// The length of the RESP2 reply at the start of `buf`, if it is complete.
pub fn reply_len(buf: &[u8]) -> Option<usize> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    let number = || -> i64 { std::str::from_utf8(&buf[1..end]).unwrap().parse().unwrap() };
    let head = end + 2;
    match buf[0] {
        b'+' | b'-' | b':' => Some(head),
        b'$' if number() < 0 => Some(head),
        b'$' => {
            let total = head + number() as usize + 2;
            (buf.len() >= total).then_some(total)
        }
        b'*' => {
            let mut at = head;
            for _ in 0..number().max(0) {
                at += reply_len(&buf[at..])?;
            }
            Some(at)
        }
        other => panic!("unexpected reply type {:?}", other as char),
    }
}

/// Sends `bytes` cut at random points with random pauses; half-closes if asked.
pub fn send_messily(mut stream: TcpStream, bytes: Vec<u8>, seed: u64, half_close: bool) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut at = 0;
    while at < bytes.len() {
        // Mostly small pieces, some as large as a client library's 8 KiB buffer.
        let size = match rng.gen_range(0..10) {
            0..=5 => rng.gen_range(1..64),
            6..=8 => rng.gen_range(64..2048),
            _ => 8192,
        };
        let end = (at + size).min(bytes.len());
        stream.write_all(&bytes[at..end]).expect("sends");
        at = end;
        if rng.gen_ratio(1, 8) {
            std::thread::sleep(Duration::from_micros(rng.gen_range(0..1500)));
        }
    }
    if half_close {
        stream.shutdown(Shutdown::Write).expect("half-closes");
    }
}

/// Reads `count` replies at a random pace; for a half-closed client, also the close.
pub fn read_messily(
    mut stream: TcpStream,
    count: usize,
    seed: u64,
    half_closed: bool,
) -> Vec<Vec<u8>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut buf, mut replies) = (Vec::new(), Vec::new());
    let mut piece = vec![0u8; 4096];
    while replies.len() < count {
        let want = rng.gen_range(1..=piece.len());
        let n = stream.read(&mut piece[..want]).expect("reads");
        assert!(n > 0, "closed after {} of {count} replies", replies.len());
        buf.extend_from_slice(&piece[..n]);
        while let Some(len) = (!buf.is_empty()).then(|| reply_len(&buf)).flatten() {
            replies.push(buf.drain(..len).collect());
        }
        if rng.gen_ratio(1, 16) {
            std::thread::sleep(Duration::from_micros(rng.gen_range(0..2000)));
        }
    }
    assert!(buf.is_empty(), "bytes past the last reply");
    if half_closed {
        assert_eq!(
            stream.read(&mut piece).expect("reads"),
            0,
            "closed after the replies"
        );
    }
    replies
}

/// One client sending `requests` to `addr` messily (cut, paused, half-closed) while it
/// reads their replies at a random pace: every reply, in order.
pub fn run_messily(addr: SocketAddr, requests: &[Vec<Vec<u8>>], seed: u64) -> Vec<Vec<u8>> {
    let stream = TcpStream::connect(addr).expect("connects");
    let reader = stream.try_clone().expect("clones");
    let bytes = wire(requests);
    let sender = std::thread::spawn(move || send_messily(stream, bytes, seed, true));
    let replies = read_messily(reader, requests.len(), seed + 1, true);
    sender.join().expect("sender");
    replies
}
