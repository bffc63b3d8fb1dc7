use super::*;

fn enc(reply: &Reply, p: Protocol) -> String {
    let mut out = Vec::new();
    encode(reply, p, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn replies_in_both_protocols() {
    let info = Reply::Map(vec![(Reply::Simple("width".into()), Reply::Int(5))]);
    assert_eq!(enc(&info, Protocol::Resp2), "*2\r\n+width\r\n:5\r\n");
    assert_eq!(enc(&info, Protocol::Resp3), "%1\r\n+width\r\n:5\r\n");
    assert_eq!(enc(&Reply::Bool(true), Protocol::Resp2), ":1\r\n");
    assert_eq!(enc(&Reply::Bool(false), Protocol::Resp3), "#f\r\n");
    assert_eq!(enc(&Reply::Nil, Protocol::Resp2), "$-1\r\n");
    assert_eq!(enc(&Reply::Nil, Protocol::Resp3), "_\r\n");
    assert_eq!(
        enc(&Reply::Bulk(b"a\r\nb".to_vec()), Protocol::Resp2),
        "$4\r\na\r\nb\r\n"
    );
    assert_eq!(
        enc(
            &Reply::Array(vec![Reply::Int(-1), Reply::Error("ERR x\r\ny".into())]),
            Protocol::Resp3
        ),
        "*2\r\n:-1\r\n-ERR x  y\r\n"
    );
    // As Redis 7 sends `CLUSTER NODES` and `CLUSTER INFO`.
    let text = Reply::Verbatim(b"a:1\r\n".to_vec());
    assert_eq!(enc(&text, Protocol::Resp2), "$5\r\na:1\r\n\r\n");
    assert_eq!(enc(&text, Protocol::Resp3), "=9\r\ntxt:a:1\r\n\r\n");
    // As Redis 7 sends `CLIENT TRACKINGINFO`'s flags.
    let set = Reply::Set(vec![Reply::Bulk(b"off".to_vec())]);
    assert_eq!(enc(&set, Protocol::Resp2), "*1\r\n$3\r\noff\r\n");
    assert_eq!(enc(&set, Protocol::Resp3), "~1\r\n$3\r\noff\r\n");
}

#[test]
fn pipelined_and_partial_requests() {
    let limits = Limits::default();
    let wire = b"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\nECHO  a b\r\n";
    let (first, used) = parse(wire, &limits).unwrap().unwrap();
    assert_eq!(first, vec![b"PING".to_vec(), b"hi".to_vec()]);
    let (second, used2) = parse(&wire[used..], &limits).unwrap().unwrap();
    assert_eq!(second, vec![b"ECHO".to_vec(), b"a".to_vec(), b"b".to_vec()]);
    assert_eq!(used + used2, wire.len());
    // Every cut of a complete request asks for more bytes, never errs.
    for cut in 0..used {
        assert_eq!(parse(&wire[..cut], &limits), Ok(None), "cut at {cut}");
    }
    // Bulk strings may hold CRLF and any byte.
    let binary = b"*1\r\n$4\r\n\r\n\0\xff\r\n";
    assert_eq!(
        parse(binary, &limits).unwrap().unwrap().0,
        vec![b"\r\n\0\xff".to_vec()]
    );
}

quickcheck::quickcheck! {
    /// Any bytes parse to a request, a need for more, or an error: never a panic,
    /// and a parsed request never claims more bytes than it was given.
    fn arbitrary_bytes_never_panic(bytes: Vec<u8>, star: bool) -> bool {
        let mut wire = bytes;
        if star {
            wire.insert(0, b'*');
        }
        match parse(&wire, &Limits { max_bulk: 64, max_args: 8, max_inline: 64 }) {
            Ok(Some((_, used))) => used <= wire.len(),
            Ok(None) | Err(_) => true,
        }
    }
}

/// Encodes `requests` as multi-bulk arrays, one after another.
fn wire_of(requests: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let mut wire = Vec::new();
    for args in requests {
        encode_request(args, &mut wire);
    }
    wire
}

quickcheck::quickcheck! {
    /// Requests fed in arbitrary pieces to one parser come out exactly as sent.
    fn pieces_parse_like_the_whole(requests: Vec<Vec<Vec<u8>>>, cuts: Vec<u8>) -> bool {
        let requests: Vec<Vec<Vec<u8>>> =
            requests.into_iter().filter(|r| !r.is_empty()).collect();
        let wire = wire_of(&requests);
        let mut parser = RequestParser::new(Limits::default());
        let (mut buf, mut got, mut fed) = (Vec::new(), Vec::new(), 0);
        let mut cuts = cuts.into_iter().map(|c| 1 + usize::from(c) % 7).cycle();
        while fed < wire.len() {
            let take = cuts.next().unwrap_or(wire.len()).min(wire.len() - fed);
            buf.extend_from_slice(&wire[fed..fed + take]);
            fed += take;
            while let Some((args, used)) = parser.next(&buf).unwrap() {
                got.push(args);
                buf.drain(..used);
            }
        }
        buf.is_empty() && got == requests
    }
}

#[test]
fn malformed_and_oversized_requests_are_errors() {
    let limits = Limits {
        max_bulk: 16,
        max_args: 4,
        max_inline: 32,
    };
    for bad in [
        &b"*x\r\n"[..],
        b"*1\r\n:5\r\n",
        b"*1\r\n$-3\r\n",
        b"*1\r\n$17\r\n",
        b"*5\r\n",
        b"*1\r\n$2\r\nabXY",
    ] {
        assert!(
            parse(bad, &limits).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    assert!(parse(&[b'a'; 40], &limits).is_err());
    // Over the limit with its end in sight too: the answer must not depend on how
    // the bytes arrived (found by the `resp` fuzz target).
    let mut long = vec![b'a'; 40];
    long.push(b'\n');
    assert!(parse(&long, &limits).is_err());
    let mut header = b"*1\r\n$".to_vec();
    header.extend(vec![b'1'; 40]);
    header.extend_from_slice(b"\r\n");
    assert!(parse(&header, &limits).is_err());
    assert!(parse(b"a b c d e\n", &limits).is_err());
    assert_eq!(parse(b"\r\n", &limits), Ok(Some((vec![], 2))));
}

#[test]
fn lengths_parse_as_i64_from_str_does() {
    let cases: [&[u8]; 16] = [
        b"0",
        b"7",
        b"-1",
        b"+3",
        b"",
        b"-",
        b"+",
        b"12a",
        b" 1",
        b"1 ",
        b"9223372036854775807",
        b"9223372036854775808",
        b"-9223372036854775808",
        b"-9223372036854775809",
        b"00012",
        b"\xff1",
    ];
    for text in cases {
        let expected = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<i64>().ok());
        assert_eq!(super::parse_count(text, "bulk").ok(), expected, "{text:?}");
    }
}

quickcheck::quickcheck! {
    fn lengths_parse_as_i64_from_str_does_for_any_bytes(text: Vec<u8>) -> bool {
        let expected = std::str::from_utf8(&text).ok().and_then(|t| t.parse::<i64>().ok());
        super::parse_count(&text, "bulk").ok() == expected
    }

    fn numbers_and_their_overflows_parse_as_i64_from_str_does(n: i64, digit: u8, plus: bool) -> bool {
        let text = match plus && n >= 0 {
            true => format!("+{n}"),
            false => n.to_string(),
        };
        let longer = format!("{text}{}", digit % 10);
        [text, longer].iter().all(|t| {
            super::parse_count(t.as_bytes(), "bulk").ok() == t.parse::<i64>().ok()
        })
    }
}
