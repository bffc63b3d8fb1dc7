//! The host under ordinary-but-messy traffic: many clients on few I/O threads send
//! random commands of every family, each client's byte stream cut at random points and
//! sent with random pauses, read back at random speeds, some clients half-closing once
//! they have sent everything. Each client works on keys of its own, so every reply it
//! gets must be byte for byte the reply the library gives to the same commands run one
//! at a time on a fresh store; the keys all clients share are checked by invariants
//! (one winner per Bloom item, count-min answers that are exactly 1..total, at most one
//! `PFADD` told it changed the HyperLogLog per item, and its registers those of every
//! item sent).

#[path = "common/cluster.rs"]
mod cluster;
#[path = "../../../tests/common/mod.rs"]
mod common;
#[path = "common/messy.rs"]
mod messy;
#[path = "common/resp_client.rs"]
mod resp_client;

use cluster::{slot_of, Node};
use messy::{read_messily, send_messily, wire};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use resp_client::TestServer;
use rocksketch::command::{execute, Reply};
use rocksketch::resp::{encode, Protocol};
use rocksketch::StoreOptions;
use rocksketch_server::ServerConfig;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The library's page size, in which every structure of the scripts is one page; and
/// pages so small that each is cut into many (the shared Bloom filter into 8, a client's
/// sketch into 13), as a hot filter of megabytes is at the server's 16 or 64 KiB: a
/// batch's items then fall in many pages, and the answers must not change.
const LIBRARY_PAGES: u32 = 16 << 10;
const SMALL_PAGES: u32 = 256;

/// One request and what is known of its reply beforehand.
#[derive(Debug, Clone)]
enum Expect {
    /// Run through the library on the client's own keys: the reply must equal it.
    Own,
    /// The host's own reply, fixed.
    Exactly(Vec<u8>),
    /// `BF.ADD hot item`: 0 or 1, and one client in all gets the 1.
    HotBloom(String),
    /// `CMS.INCRBY hot item 1`: the count after this add.
    HotCount,
    /// The same on the windowed sketch `hot:wcms` (its window outlasts the test).
    HotWindowCount,
    /// `PFADD hot item`: 0 or 1, and at most one client in all gets the 1.
    HotHll(String),
}

struct Script {
    requests: Vec<Vec<Vec<u8>>>,
    expect: Vec<Expect>,
}

fn words(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

/// A client's commands: creates for most of its keys (a missing one answers errors),
/// then runs of one command on one key (what the batching passes combine), host
/// commands, and adds to the shared keys.
fn script(client: usize, rng: &mut StdRng, len: usize) -> Script {
    // A client's keys share a hash tag: in cluster mode, one slot.
    let key = |name: &str| format!("{{c{client}}}:{name}");
    let mut requests = Vec::new();
    let mut expect = Vec::new();
    // Some clients' filters and sketches have a window, of one generation that no
    // run outlives, so the reference's answers are the host's whatever the time.
    let forever = ["WINDOW", "1099511627776", "SLICES", "1"].map(String::from);
    let windowed = |mut words: Vec<String>, on: bool| {
        if on {
            words.extend(forever.iter().cloned());
        }
        words
    };
    let creates = [
        windowed(
            vec![
                "BF.RESERVE".to_owned(),
                key("bf"),
                "0.01".into(),
                "200".into(),
            ],
            client % 2 == 1,
        ),
        vec![
            "CF.RESERVE".into(),
            key("cf"),
            "64".into(),
            "BUCKETSIZE".into(),
            "2".into(),
        ],
        windowed(
            vec!["CMS.INITBYDIM".into(), key("cms"), "200".into(), "4".into()],
            client % 3 == 1,
        ),
        vec![
            "TOPK.RESERVE".into(),
            key("tk"),
            "5".into(),
            "50".into(),
            "4".into(),
            "0.9".into(),
        ],
        vec![
            "TDIGEST.CREATE".into(),
            key("td"),
            "COMPRESSION".into(),
            "50".into(),
        ],
        vec![
            "RIBBON.RESERVE".into(),
            key("rb"),
            "0.01".into(),
            "500".into(),
        ],
    ];
    for create in creates {
        if rng.gen_ratio(9, 10) {
            requests.push(create.iter().map(|w| w.as_bytes().to_vec()).collect());
            expect.push(Expect::Own);
        }
    }
    while requests.len() < len {
        let run = rng.gen_range(1..=24);
        let kind = rng.gen_range(0..25);
        for _ in 0..run {
            let item = format!("i{}", rng.gen_range(0..300));
            let n = rng.gen_range(1..5).to_string();
            let (request, what) = match kind {
                0..=2 => (words(&["BF.ADD", &key("bf"), &item]), Expect::Own),
                3 => (words(&["BF.EXISTS", &key("bf"), &item]), Expect::Own),
                4 => (
                    words(&["BF.MADD", &key("bf"), &item, "x", "y"]),
                    Expect::Own,
                ),
                5 | 6 => (words(&["CF.ADD", &key("cf"), &item]), Expect::Own),
                7 => (words(&["CF.ADDNX", &key("cf"), &item]), Expect::Own),
                8 => (words(&["CF.DEL", &key("cf"), &item]), Expect::Own),
                9 | 10 => (words(&["CMS.INCRBY", &key("cms"), &item, &n]), Expect::Own),
                11 => (words(&["CMS.QUERY", &key("cms"), &item, "i1"]), Expect::Own),
                12 => (words(&["TOPK.ADD", &key("tk"), &item, "i7"]), Expect::Own),
                13 => (words(&["TDIGEST.ADD", &key("td"), &n, "2.5"]), Expect::Own),
                14 => (
                    words(&["TDIGEST.QUANTILE", &key("td"), "0.5", "0.9"]),
                    Expect::Own,
                ),
                15 => (words(&["RIBBON.ADD", &key("rb"), &item]), Expect::Own),
                16 => {
                    let text = format!("e{}", "x".repeat(rng.gen_range(0..3000)));
                    let mut reply = Vec::new();
                    encode(
                        &Reply::Bulk(text.clone().into_bytes()),
                        Protocol::Resp2,
                        &mut reply,
                    );
                    (words(&["ECHO", &text]), Expect::Exactly(reply))
                }
                17 => match rng.gen_range(0..4) {
                    0 | 1 => (words(&["PING"]), Expect::Exactly(b"+PONG\r\n".to_vec())),
                    // WAIT parks the client and runs what it pipelined after, later;
                    // with no replicas it answers 0, at once or when its 1 ms is up.
                    2 => (
                        words(&["WAIT", "0", "0"]),
                        Expect::Exactly(b":0\r\n".to_vec()),
                    ),
                    _ => (
                        words(&["WAIT", "1", "1"]),
                        Expect::Exactly(b":0\r\n".to_vec()),
                    ),
                },
                18 => {
                    let hot = format!("h{}", rng.gen_range(0..400));
                    (words(&["BF.ADD", "hot:bf", &hot]), Expect::HotBloom(hot))
                }
                19 => (words(&["PFADD", &key("hll"), &item, "i9"]), Expect::Own),
                20 => (words(&["PFCOUNT", &key("hll"), &key("hll2")]), Expect::Own),
                21 => {
                    let hot = format!("p{}", rng.gen_range(0..2000));
                    (words(&["PFADD", "hot:hll", &hot]), Expect::HotHll(hot))
                }
                22 => (
                    words(&["CMS.INCRBY", "hot:cms", "total", "1"]),
                    Expect::HotCount,
                ),
                23 => {
                    let hot = format!("wh{}", rng.gen_range(0..400));
                    (words(&["BF.ADD", "hot:wbf", &hot]), Expect::HotBloom(hot))
                }
                _ => (
                    words(&["CMS.INCRBY", "hot:wcms", "total", "1"]),
                    Expect::HotWindowCount,
                ),
            };
            requests.push(request);
            expect.push(what);
        }
    }
    Script { requests, expect }
}

/// Runs `clients` scripts of `len` requests each, on `threads` I/O threads, over a store
/// whose new structures have pages of `page_bytes`.
fn run_model(
    seed: u64,
    clients: usize,
    len: usize,
    threads: usize,
    cluster_mode: bool,
    page_bytes: u32,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let scripts: Vec<Script> = (0..clients).map(|c| script(c, &mut rng, len)).collect();

    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        threads,
        cluster_enabled: cluster_mode,
        ..ServerConfig::default()
    };
    // The host's store and the reference cut structures alike: where a Bloom filter's
    // page boundaries fall decides which items are false positives.
    let options = || StoreOptions {
        page_bytes,
        ..StoreOptions::default()
    };
    let server = TestServer::start_with_store(dir.path(), config, options());
    let mut setup = server.client();
    // In cluster mode, every fourth client's keys are in slots another node serves:
    // each of its keyed commands must be answered `MOVED`, whatever path it took.
    let moved_to: Vec<Option<Vec<u8>>> = match cluster_mode {
        true => elsewhere(&mut setup, server.addr, clients),
        false => vec![None; clients],
    };

    // What the library answers, each client's own commands run one at a time.
    let reference = common::TempStore::with_options(options());
    let ns = reference.store().ns(0);
    let expected: Vec<Vec<Option<Vec<u8>>>> = scripts
        .iter()
        .enumerate()
        .map(|(c, s)| {
            s.requests
                .iter()
                .zip(&s.expect)
                .map(|(request, what)| match what {
                    Expect::Own => {
                        let mut bytes = Vec::new();
                        encode(&execute(&ns, request), Protocol::Resp2, &mut bytes);
                        // Arity is checked before routing, as Redis does.
                        let arity = bytes.starts_with(b"-ERR wrong number of arguments");
                        match &moved_to[c] {
                            Some(moved) if !arity => Some(moved.clone()),
                            _ => Some(bytes),
                        }
                    }
                    Expect::Exactly(bytes) => Some(bytes.clone()),
                    Expect::HotBloom(_)
                    | Expect::HotCount
                    | Expect::HotWindowCount
                    | Expect::HotHll(_) => None,
                })
                .collect()
        })
        .collect();

    assert_eq!(
        setup.cmd(&["BF.RESERVE", "hot:bf", "0.001", "1000"]),
        resp_client::ok()
    );
    assert_eq!(
        setup.cmd(&["CMS.INITBYDIM", "hot:cms", "100", "3"]),
        resp_client::ok()
    );
    // Windowed hot keys, of slices a run crosses (7.5 s) and a window it does not.
    assert_eq!(
        setup.cmd(&["BF.RESERVE", "hot:wbf", "0.001", "1000", "WINDOW", "60000"]),
        resp_client::ok()
    );
    assert_eq!(
        setup.cmd(&["CMS.INITBYDIM", "hot:wcms", "100", "3", "WINDOW", "60000"]),
        resp_client::ok()
    );

    let handles: Vec<_> = scripts
        .iter()
        .enumerate()
        .map(|(c, s)| {
            let stream = TcpStream::connect(server.addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(60)))
                .unwrap();
            let half_close = c % 3 == 0;
            let bytes = wire(&s.requests);
            let count = s.requests.len();
            let writer = stream.try_clone().unwrap();
            let seed = seed ^ (c as u64) << 32;
            let sender = std::thread::spawn(move || send_messily(writer, bytes, seed, half_close));
            let reader =
                std::thread::spawn(move || read_messily(stream, count, seed + 1, half_close));
            (sender, reader)
        })
        .collect();
    let received: Vec<Vec<Vec<u8>>> = handles
        .into_iter()
        .map(|(sender, reader)| {
            sender.join().expect("sender");
            reader.join().expect("reader")
        })
        .collect();

    let mut bloom_winners: HashMap<String, usize> = HashMap::new();
    let mut hll_winners: HashMap<String, usize> = HashMap::new();
    let mut counts = Vec::new();
    let mut window_counts = Vec::new();
    for (c, script) in scripts.iter().enumerate() {
        for (i, what) in script.expect.iter().enumerate() {
            let got = &received[c][i];
            let shown = || String::from_utf8_lossy(got).into_owned();
            let request =
                || String::from_utf8_lossy(&script.requests[i].join(&b' ')[..]).into_owned();
            match what {
                Expect::HotBloom(item) => match got.as_slice() {
                    b":1\r\n" => *bloom_winners.entry(item.clone()).or_default() += 1,
                    b":0\r\n" => {
                        bloom_winners.entry(item.clone()).or_default();
                    }
                    _ => panic!("client {c} request {i} ({}) got {}", request(), shown()),
                },
                Expect::HotHll(item) => match got.as_slice() {
                    b":1\r\n" => *hll_winners.entry(item.clone()).or_default() += 1,
                    b":0\r\n" => {
                        hll_winners.entry(item.clone()).or_default();
                    }
                    _ => panic!("client {c} request {i} ({}) got {}", request(), shown()),
                },
                Expect::HotCount | Expect::HotWindowCount => {
                    // `*1\r\n:N\r\n`
                    let text = shown();
                    let n = text.trim_start_matches("*1\r\n:").trim_end().parse::<u64>();
                    let n = n.unwrap_or_else(|_| panic!("client {c}: {text:?}"));
                    match what {
                        Expect::HotCount => counts.push(n),
                        _ => window_counts.push(n),
                    }
                }
                _ => {
                    let want = expected[c][i].as_ref().unwrap();
                    assert!(
                        got == want,
                        "client {c} request {i} ({}): got {} want {}",
                        request(),
                        shown(),
                        String::from_utf8_lossy(want)
                    );
                }
            }
        }
    }
    for (item, winners) in &bloom_winners {
        assert_eq!(
            *winners, 1,
            "BF.ADD hot:bf {item}: {winners} clients were told it was new"
        );
    }
    let mut sent = rocksketch_merge::hll::Registers::new();
    for (item, winners) in &hll_winners {
        assert!(
            *winners <= 1,
            "PFADD hot:hll {item}: {winners} clients told it changed"
        );
        let (index, rank) = rocksketch_merge::hll::position(item.as_bytes());
        sent.raise(index, rank);
    }
    let registers = setup.cmd(&["PFDEBUG", "GETREG", "hot:hll"]);
    let want: Vec<_> = sent
        .as_bytes()
        .iter()
        .map(|r| resp_client::Value::Int(i64::from(*r)))
        .collect();
    if !hll_winners.is_empty() {
        assert!(
            registers == resp_client::Value::Array(want),
            "hot:hll lost an add"
        );
    }
    counts.sort_unstable();
    let total = counts.len() as u64;
    assert!(
        counts.iter().copied().eq(1..=total),
        "hot counts are not 1..{total}"
    );
    let query = setup.cmd(&["CMS.QUERY", "hot:cms", "total"]);
    assert_eq!(
        query,
        resp_client::Value::Array(vec![resp_client::Value::Int(total as i64)])
    );
    window_counts.sort_unstable();
    let total = window_counts.len() as u64;
    assert!(
        window_counts.iter().copied().eq(1..=total),
        "windowed hot counts are not 1..{total}"
    );
}

#[test]
fn many_messy_clients_on_one_io_thread_get_their_own_answers() {
    for seed in 0..3 {
        run_model(seed, 10, 1200, 1, false, LIBRARY_PAGES);
    }
}

#[test]
fn many_messy_clients_on_two_io_threads_get_their_own_answers() {
    run_model(100, 16, 1500, 2, false, LIBRARY_PAGES);
}

#[test]
fn many_messy_clients_get_their_own_answers_with_structures_over_many_pages() {
    run_model(300, 16, 1500, 2, false, SMALL_PAGES);
}

#[test]
fn many_messy_clients_of_a_cluster_node_get_their_answers_or_their_redirections() {
    run_model(200, 12, 1200, 1, true, LIBRARY_PAGES);
    run_model(201, 16, 1200, 2, true, LIBRARY_PAGES);
}

/// Pushes a topology in which this node serves every slot but those of every fourth
/// client's keys (unless the hot keys or another client's keys share them), served by
/// another node; what each client's keyed commands must be answered.
fn elsewhere(
    setup: &mut resp_client::Client,
    me: SocketAddr,
    clients: usize,
) -> Vec<Option<Vec<u8>>> {
    let hot = ["hot:bf", "hot:cms", "hot:wbf", "hot:wcms", "hot:hll"];
    let tags: Vec<u16> = (0..clients)
        .map(|c| slot_of(setup, &format!("c{c}")))
        .collect();
    let mut kept: Vec<u16> = hot.iter().map(|k| slot_of(setup, k)).collect();
    kept.extend((0..clients).filter(|c| c % 4 != 3).map(|c| tags[c]));
    let mut away: Vec<u16> = (0..clients)
        .filter(|c| c % 4 == 3 && !kept.contains(&tags[*c]))
        .map(|c| tags[c])
        .collect();
    away.sort_unstable();
    away.dedup();
    assert!(!away.is_empty(), "no client's keys are elsewhere");
    let other: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let mine: Vec<u16> = (0..16384).filter(|s| !away.contains(s)).collect();
    let nodes = [
        Node::primary('a', me, &cluster::ranges(&mine)),
        Node::primary('b', other, &cluster::ranges(&away)),
    ];
    assert_eq!(cluster::push(me, &nodes, 1), resp_client::ok());
    (0..clients)
        .map(|c| {
            away.contains(&tags[c])
                .then(|| format!("-MOVED {} {other}\r\n", tags[c]).into_bytes())
        })
        .collect()
}
