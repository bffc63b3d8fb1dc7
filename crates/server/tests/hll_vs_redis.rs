//! HyperLogLogs against Redis itself: Debian's `redis-server` (HyperLogLog is in Redis's
//! core) and `rocksketch serve` get the same commands, and every reply must be the same,
//! in RESP2 and RESP3: `PFCOUNT` at log-spaced sizes up to ten million distinct
//! elements and over unions of up to 16 keys, random command streams, and HyperLogLogs
//! copied both ways with `GET` and `SET`.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis_server::RedisServer;
use resp_client::{temp_server, Client, Value};
use rocksketch_merge::hll::redis;
use std::net::SocketAddr;

/// One connection to each server, in one protocol.
struct Pair {
    ours: Client,
    theirs: Client,
}

impl Pair {
    fn new(ours: SocketAddr, theirs: SocketAddr, resp: u8) -> Pair {
        let mut pair = Pair {
            ours: Client::connect(ours),
            theirs: Client::connect(theirs),
        };
        if resp == 3 {
            for c in [&mut pair.ours, &mut pair.theirs] {
                assert!(matches!(c.cmd(&["HELLO", "3"]), Value::Map(_)));
            }
        }
        pair
    }

    /// Sends `args` to both; both replies.
    fn both(&mut self, args: &[Vec<u8>]) -> (Value, Value) {
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        self.ours.send(&args);
        self.theirs.send(&args);
        (self.ours.read(), self.theirs.read())
    }

    /// Sends `args` to both and checks the replies are the same (a `GET`'s strings by
    /// the registers they hold: see `rocksketch_merge::hll::redis`).
    fn same(&mut self, args: &[Vec<u8>]) -> Value {
        let (ours, theirs) = self.both(args);
        let shown = String::from_utf8_lossy(&args.concat())
            .chars()
            .take(80)
            .collect::<String>();
        match (&ours, &theirs) {
            (Value::Bulk(a), Value::Bulk(b)) if args[0].eq_ignore_ascii_case(b"GET") => {
                let (a, b) = (redis::import(a), redis::import(b));
                assert!(a.is_ok() && a == b, "{shown}: GET's registers differ");
            }
            _ => assert_eq!(ours, theirs, "{shown}"),
        }
        ours
    }

    /// Pipelines `commands` to both and checks every reply is the same.
    fn same_pipelined(&mut self, commands: &[Vec<Vec<u8>>]) {
        for command in commands {
            let args: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
            self.ours.send(&args);
            self.theirs.send(&args);
        }
        for command in commands {
            let (ours, theirs) = (self.ours.read(), self.theirs.read());
            assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(&command[0]));
        }
    }
}

fn words(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn servers() -> (tempfile::TempDir, resp_client::TestServer, RedisServer) {
    let (dir, ours) = temp_server();
    (dir, ours, RedisServer::start())
}

#[test]
fn counts_equal_redis_at_log_spaced_sizes_up_to_ten_million() {
    let (_dir, ours, theirs) = servers();
    let mut pair = Pair::new(ours.addr, theirs.addr, 2);
    let mut added = 0u64;
    let mut checked = 0;
    // Sizes 10^(k/4): 1, 2, 3, 6, 10, 18, 32, 56, 100, ... 10^7.
    for k in 0..=28 {
        let size = 10f64.powf(f64::from(k) / 4.0).round() as u64;
        let mut batch = Vec::new();
        while added < size {
            let end = size.min(added + 1000);
            let mut cmd = words(&["PFADD", "big"]);
            cmd.extend((added..end).map(|i| format!("el:{i}").into_bytes()));
            batch.push(cmd);
            added = end;
            if batch.len() == 64 {
                pair.same_pipelined(&batch);
                batch.clear();
            }
        }
        pair.same_pipelined(&batch);
        let count = pair.same(&words(&["PFCOUNT", "big"]));
        let Value::Int(count) = count else {
            panic!("PFCOUNT answered {count:?}");
        };
        // The estimate stays within a few standard errors (1.04/sqrt(16384) = 0.81 %).
        assert!((count as f64 - size as f64).abs() <= 0.05 * size as f64 + 2.0);
        checked += 1;
    }
    assert_eq!((checked, added), (29, 10_000_000));
    pair.same(&words(&["GET", "big"]));
    pair.same(&words(&["PFDEBUG", "GETREG", "big"]));
}

#[test]
fn union_counts_and_merges_of_up_to_16_keys_equal_redis() {
    let (_dir, ours, theirs) = servers();
    let mut rng = StdRng::seed_from_u64(16);
    for resp in [2, 3] {
        let mut pair = Pair::new(ours.addr, theirs.addr, resp);
        pair.same(&words(&["FLUSHALL"]));
        let mut commands = Vec::new();
        for k in 0..16 {
            // Overlapping ranges of very different sizes: sparse and dense keys.
            let size = [3, 40, 700, 2000, 30_000][rng.gen_range(0..5)];
            let start = rng.gen_range(0..50_000u32);
            for chunk in (start..start + size).collect::<Vec<_>>().chunks(500) {
                let mut cmd = words(&["PFADD", &format!("u{k}")]);
                cmd.extend(chunk.iter().map(|i| i.to_string().into_bytes()));
                commands.push(cmd);
            }
        }
        pair.same_pipelined(&commands);
        for n in 1..=16 {
            let mut count = words(&["PFCOUNT"]);
            count.extend((0..n).map(|k| format!("u{k}").into_bytes()));
            pair.same(&count);
            let mut merge = words(&["PFMERGE", &format!("m{n}")]);
            merge.extend((0..n).map(|k| format!("u{k}").into_bytes()));
            pair.same(&merge);
            pair.same(&words(&["PFCOUNT", &format!("m{n}")]));
            pair.same(&words(&["PFCOUNT", &format!("m{n}"), "missing", "u3"]));
            pair.same(&words(&["GET", &format!("m{n}")]));
        }
    }
}

/// A random PFADD / PFCOUNT / PFMERGE / PFDEBUG / GET / TYPE / DEL stream, replies
/// compared one by one, in both protocols; with keys of another type on each side
/// (a list in Redis, a Bloom filter here: neither a HyperLogLog).
#[test]
fn random_streams_answer_as_redis() {
    let (_dir, ours, theirs) = servers();
    for resp in [2, 3] {
        let mut rng = StdRng::seed_from_u64(u64::from(resp));
        let mut pair = Pair::new(ours.addr, theirs.addr, resp);
        pair.same(&words(&["FLUSHALL"]));
        pair.ours.cmd(&["BF.ADD", "other", "x"]);
        pair.theirs.cmd(&["LPUSH", "other", "x"]);
        let key = |rng: &mut StdRng| ["h0", "h1", "h2", "h3", "other"][rng.gen_range(0..5)];
        for _ in 0..3000 {
            let k = key(&mut rng);
            let cmd: Vec<Vec<u8>> = match rng.gen_range(0..100) {
                0..=44 => {
                    let n = [0, 1, 1, 3, 8, 50, 600][rng.gen_range(0..7)];
                    let mut cmd = words(&["PFADD", k]);
                    cmd.extend(
                        (0..n).map(|_| format!("e{}", rng.gen_range(0..20_000)).into_bytes()),
                    );
                    cmd
                }
                45..=64 => {
                    let n = rng.gen_range(0..4);
                    let mut cmd = words(&["PFCOUNT", k]);
                    cmd.extend((0..n).map(|_| key(&mut rng).as_bytes().to_vec()));
                    cmd
                }
                65..=74 => {
                    let n = rng.gen_range(0..3);
                    let mut cmd = words(&["PFMERGE", k]);
                    cmd.extend((0..n).map(|_| key(&mut rng).as_bytes().to_vec()));
                    cmd
                }
                75..=81 => words(&["GET", k]),
                82..=85 => words(&[
                    "PFDEBUG",
                    ["GETREG", "getreg", "NOPE"][rng.gen_range(0..3)],
                    k,
                ]),
                86..=89 if k != "other" => words(&["TYPE", k]),
                90..=92 if k != "other" => words(&["DEL", k]),
                93..=95 => {
                    words(&[["PFADD", "PFCOUNT", "PFMERGE", "PFDEBUG"][rng.gen_range(0..4)]])
                }
                96..=97 => {
                    let mut cmd = words(&["TOUCH", k]);
                    cmd.extend((0..rng.gen_range(0..3)).map(|_| key(&mut rng).as_bytes().to_vec()));
                    cmd
                }
                _ => words(&["EXISTS", k]),
            };
            pair.same(&cmd);
        }
    }
}

#[test]
fn strings_copy_both_ways_with_get_and_set() {
    let (_dir, ours, theirs) = servers();
    let mut pair = Pair::new(ours.addr, theirs.addr, 2);
    for (n, key) in [
        (0, "empty"),
        (5, "few"),
        (1500, "sparse"),
        (40_000, "dense"),
    ] {
        let mut cmd = words(&["PFADD", key]);
        cmd.extend((0..n).map(|i| format!("{key}{i}").into_bytes()));
        pair.same(&cmd);
        // Few registers set: Redis's sparse text and ours are the same opcodes (it is
        // after runs of equal registers that Redis's grouping can differ).
        if n <= 5 {
            pair.same(&words(&["PFDEBUG", "DECODE", key]));
            pair.same(&words(&["PFDEBUG", "ENCODING", key]));
        }
        // Redis's string into rocksketch, and rocksketch's into Redis.
        let Value::Bulk(from_redis) = pair.theirs.cmd(&["GET", key]) else {
            panic!("Redis has no {key}");
        };
        let Value::Bulk(from_ours) = pair.ours.cmd(&["GET", key]) else {
            panic!("rocksketch has no {key}");
        };
        let copy = format!("{key}-copy");
        let set_ours: Vec<&[u8]> = vec![b"SET", copy.as_bytes(), &from_redis];
        pair.ours.send(&set_ours);
        assert_eq!(pair.ours.read(), resp_client::ok());
        let set_theirs: Vec<&[u8]> = vec![b"SET", copy.as_bytes(), &from_ours];
        pair.theirs.send(&set_theirs);
        assert_eq!(pair.theirs.read(), resp_client::ok());
        pair.same(&words(&["PFCOUNT", &copy]));
        pair.same(&words(&["PFDEBUG", "GETREG", &copy]));
        pair.same(&words(&["PFADD", &copy, "one more", "and another"]));
        pair.same(&words(&["PFCOUNT", &copy, key]));
        pair.same(&words(&["TYPE", &copy]));
    }
}
