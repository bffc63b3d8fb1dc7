//! Every command the host lists, subcommands included, sent seeded random arguments
//! drawn from what breaks parsers: integers at and past their limits, floats that are
//! not numbers, option words out of place, keys of every type, raw bytes. No reply may
//! be the internal error a panic is answered with, and the connection must stay up.

#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use resp_client::{temp_server, Client, Value};

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "10",
    "1000000",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "1e308",
    "-1e308",
    "inf",
    "-inf",
    "nan",
    "0.5",
    "1e-300",
    "0.999999",
    "-0",
    "0x10",
    " 1",
    "",
];
const WORDS: &[&str] = &[
    "CAPACITY",
    "EXPANSION",
    "NONSCALING",
    "ERROR",
    "ITEMS",
    "NOCREATE",
    "WEIGHTS",
    "COMPRESSION",
    "WITHCOUNT",
    "MATCH",
    "COUNT",
    "TYPE",
    "NX",
    "XX",
    "GT",
    "LT",
    "BUCKETSIZE",
    "MAXITERATIONS",
    "OVERRIDE",
    "ON",
    "OFF",
    "YES",
    "ALL",
    "WRITE",
    "ID",
    "SKIPME",
    "help",
    "*",
    "|",
];
const KEYS: &[&str] = &["bf", "cf", "cms", "tk", "td", "hll", "rb", "nokey"];
/// What would stop the server, make this connection a replica or silence it, or
/// wait: the probe leaves them to their own tests.
const SKIP: &[&str] = &[
    "shutdown",
    "debug",
    "replicaof",
    "slaveof",
    "psync",
    "sync",
    "wait",
    "clusterx",
    "replconf",
    "client|pause",
    "client|reply",
    "client|kill",
    "save",
    "bgsave",
    "quit",
];

fn setup(c: &mut Client) {
    for words in [
        &["FLUSHALL"][..],
        &["BF.RESERVE", "bf", "0.01", "1000"],
        &["CF.RESERVE", "cf", "1000"],
        &["CMS.INITBYDIM", "cms", "100", "5"],
        &["TOPK.RESERVE", "tk", "5"],
        &["TDIGEST.CREATE", "td"],
        &["PFADD", "hll", "a"],
        &["RIBBON.RESERVE", "rb", "0.01"],
    ] {
        assert!(!matches!(c.cmd(words), Value::Error(_)), "{words:?}");
    }
}

fn panicked(reply: &Value) -> bool {
    match reply {
        Value::Error(e) => e.contains("internal error"),
        Value::Array(items) | Value::Set(items) => items.iter().any(panicked),
        Value::Map(pairs) => pairs.iter().any(|(k, v)| panicked(k) || panicked(v)),
        _ => false,
    }
}

#[test]
fn no_arguments_make_a_command_panic() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    let Value::Array(listed) = c.cmd(&["COMMAND", "LIST"]) else {
        panic!("COMMAND LIST")
    };
    let names: Vec<String> = listed
        .iter()
        .map(|n| match n {
            Value::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
            other => panic!("{other:?}"),
        })
        .filter(|n| !SKIP.contains(&n.as_str()))
        .collect();
    setup(&mut c);
    let mut rng = StdRng::seed_from_u64(20261206);
    for i in 0..40_000 {
        let name = &names[rng.gen_range(0..names.len())];
        let mut args: Vec<Vec<u8>> = name.split('|').map(|p| p.as_bytes().to_vec()).collect();
        for _ in 0..[0, 1, 1, 2, 2, 3, 4, 5, 8][rng.gen_range(0..9)] {
            let arg = match rng.gen_range(0..10) {
                0..=3 => NUMBERS[rng.gen_range(0..NUMBERS.len())].as_bytes().to_vec(),
                4 | 5 => WORDS[rng.gen_range(0..WORDS.len())].as_bytes().to_vec(),
                6 | 7 => KEYS[rng.gen_range(0..KEYS.len())].as_bytes().to_vec(),
                8 => names[rng.gen_range(0..names.len())].as_bytes().to_vec(),
                _ => (0..rng.gen_range(0..12)).map(|_| rng.gen()).collect(),
            };
            args.push(arg);
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        c.send(&refs);
        let reply = c
            .try_read()
            .unwrap_or_else(|| panic!("connection lost at {args:?}"));
        assert!(!panicked(&reply), "{args:?}: {reply:?}");
        // Back to a plain connection now and then (a MULTI, HELLO 3 or SELECT stays).
        if i % 50 == 0 {
            assert!(!matches!(c.cmd(&["RESET"]), Value::Error(_)));
        }
        if i % 1000 == 999 {
            setup(&mut c);
        }
    }
    assert_eq!(c.cmd(&["RESET"]), Value::Simple("RESET".into()));
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}
