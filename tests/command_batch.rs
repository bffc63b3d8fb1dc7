//! Pipelined commands run in batches answer exactly as when run one by one: random
//! pipelines over a few keys, run through `execute_pipeline` on one store and through
//! `execute` command by command on another, must get identical replies, errors included.

mod common;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksketch::command::{execute, execute_pipeline};
use std::panic::AssertUnwindSafe;

#[derive(Debug, Clone)]
struct Pipeline(Vec<Vec<String>>);

fn pick<'a>(g: &mut Gen, choices: &[&'a str]) -> &'a str {
    g.choose(choices).copied().unwrap_or(choices[0])
}

impl Arbitrary for Pipeline {
    fn arbitrary(g: &mut Gen) -> Pipeline {
        let len = 1 + usize::arbitrary(g) % 60;
        let mut requests = Vec::with_capacity(len);
        // Runs of one command on one key are what gets batched: make them common.
        while requests.len() < len {
            let key = pick(
                g,
                &[
                    "bf", "cms", "fresh", "tiny", "cf", "cftiny", "td", "tk", "rb",
                ],
            )
            .to_owned();
            let run = 1 + usize::arbitrary(g) % 8;
            let kind = u8::arbitrary(g) % 25;
            for _ in 0..run {
                let item = format!("i{}", u8::arbitrary(g) % 30);
                let number = pick(g, &["1", "2", "7", "0", "-1", "x", "4294967295"]).to_owned();
                let request: Vec<String> = match kind {
                    0..=2 => vec!["BF.ADD".into(), key.clone(), item],
                    3 | 4 => vec!["bf.exists".into(), key.clone(), item],
                    5 | 6 => {
                        let mut r = vec!["CMS.INCRBY".into(), key.clone(), item, number];
                        if bool::arbitrary(g) {
                            r.extend(["i1".to_owned(), "3".to_owned()]);
                        }
                        r
                    }
                    7 => vec!["CMS.QUERY".into(), key.clone(), item, "i1".into()],
                    10 | 11 => vec!["CF.ADD".into(), key.clone(), item],
                    12 => vec!["CF.EXISTS".into(), key.clone(), item],
                    13 => vec!["CF.COUNT".into(), key.clone(), item],
                    14 => vec!["CF.ADDNX".into(), key.clone(), item],
                    15 | 16 => {
                        let value = pick(g, &["1", "2.5", "-7", "1e3", "x", "inf", "0"]);
                        let mut r = vec!["TDIGEST.ADD".into(), key.clone(), value.into()];
                        r.extend((0..u8::arbitrary(g) % 20).map(|v| v.to_string()));
                        r
                    }
                    17 if bool::arbitrary(g) => vec!["TDIGEST.INFO".into(), key.clone()],
                    17 => vec!["TDIGEST.QUANTILE".into(), key.clone(), "0.5".into()],
                    18 => vec!["TOPK.ADD".into(), key.clone(), item, "i2".into()],
                    19 => {
                        let n = pick(g, &["1", "3", "0", "100001", "x"]).to_owned();
                        vec![
                            "TOPK.INCRBY".into(),
                            key.clone(),
                            item,
                            n,
                            "i3".into(),
                            "2".into(),
                        ]
                    }
                    20 => vec!["TOPK.LIST".into(), key.clone(), "WITHCOUNT".into()],
                    // Of a valid arity for the table, but not for the command's own
                    // parser: each joins a batch and gets its own wrong-arity error.
                    21 => vec!["CMS.INCRBY".into(), key.clone(), item, number, "i2".into()],
                    22 => vec![
                        "TOPK.INCRBY".into(),
                        key.clone(),
                        item,
                        "1".into(),
                        "i2".into(),
                    ],
                    23 => vec!["RIBBON.ADD".into(), key.clone(), item, "i4".into()],
                    24 => vec!["RIBBON.EXISTS".into(), key.clone(), item],
                    8 => vec!["BF.ADD".into(), key.clone()],
                    9 => vec!["CMS.INCRBY".into(), key.clone(), item],
                    _ => unreachable!(),
                };
                // Names in any case join one run (`Cf.Add` after `CF.ADD`).
                let mut request = request;
                request[0] = match u8::arbitrary(g) % 3 {
                    0 => request[0].to_lowercase(),
                    1 => request[0]
                        .chars()
                        .enumerate()
                        .map(|(i, c)| {
                            if i % 2 == 0 {
                                c.to_ascii_lowercase()
                            } else {
                                c
                            }
                        })
                        .collect(),
                    _ => request[0].to_uppercase(),
                };
                requests.push(request);
            }
        }
        requests.truncate(len);
        Pipeline(requests)
    }
}

fn setup(store: &rocksketch::Store) {
    let ns = store.ns(0);
    for words in [
        &["BF.RESERVE", "bf", "0.01", "20"][..],
        &["BF.RESERVE", "tiny", "0.01", "4", "NONSCALING"],
        &["CMS.INITBYDIM", "cms", "8", "2"],
        &["CF.RESERVE", "cf", "100", "EXPANSION", "1"],
        &["CF.RESERVE", "cftiny", "8", "EXPANSION", "0"],
        &["TDIGEST.CREATE", "td", "COMPRESSION", "5"],
        &["TOPK.RESERVE", "tk", "3", "8", "3", "0.9"],
        &["RIBBON.RESERVE", "rb", "0.01"],
    ] {
        assert_eq!(
            execute(&ns, &common::args(words)),
            rocksketch::command::Reply::ok()
        );
    }
}

fn same_replies(pipeline: Pipeline) -> bool {
    let batched = common::TempStore::new();
    let single = common::TempStore::new();
    setup(batched.store());
    setup(single.store());
    let requests: Vec<Vec<Vec<u8>>> = pipeline
        .0
        .iter()
        .map(|r| r.iter().map(|w| w.as_bytes().to_vec()).collect())
        .collect();
    let got = execute_pipeline(&batched.store().ns(0), &requests);
    let ns = single.store().ns(0);
    let want: Vec<_> = requests.iter().map(|r| execute(&ns, r)).collect();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "request {i}: {:?}", pipeline.0[i]);
    }
    true
}

#[test]
fn batched_pipelines_answer_like_single_commands() {
    QuickCheck::new()
        .tests(60)
        .quickcheck(same_replies as fn(Pipeline) -> bool);
}

/// A request of a valid arity for the command table but not for its command's parser
/// (an odd number of `item increment` words) joins its neighbours' batch and is
/// answered its own wrong-arity error, before the key is looked at, as alone.
#[test]
fn a_request_its_parser_rejects_keeps_its_own_error_inside_a_batch() {
    let store = common::TempStore::new();
    let ns = store.store().ns(0);
    let requests: Vec<Vec<Vec<u8>>> = [
        &["CMS.INCRBY", "missing", "a", "1"][..],
        &["CMS.INCRBY", "missing", "a", "1", "b"],
        &["CMS.INCRBY", "missing", "a", "x"],
    ]
    .iter()
    .map(|words| common::args(words))
    .collect();
    let got = execute_pipeline(&ns, &requests);
    let missing = rocksketch::command::Reply::Error("CMS: key does not exist".into());
    let arity = rocksketch::command::Reply::wrong_arity("cms.incrby");
    assert_eq!(got, vec![missing.clone(), arity, missing]);
    assert_eq!(execute(&ns, &requests[1]), got[1]);
}

/// Every command `execute` answers, given arguments drawn from the words its parsers
/// look for (keys of every type, numbers at and past their limits, option keywords):
/// no request panics, every one is answered, and the store answers as before after
/// them all.
#[test]
fn any_arguments_to_any_command_are_answered_without_a_panic() {
    let store = common::TempStore::new();
    setup(store.store());
    let ns = store.store().ns(0);
    let words = [
        "bf",
        "cms",
        "cf",
        "td",
        "tk",
        "rb",
        "fresh",
        "",
        "0",
        "1",
        "2",
        "-1",
        "7",
        "0.5",
        "1e-320",
        "inf",
        "-inf",
        "nan",
        "x",
        "9223372036854775807",
        "4294967296",
        "100001",
        "ITEMS",
        "CAPACITY",
        "ERROR",
        "EXPANSION",
        "NOCREATE",
        "NONSCALING",
        "BUCKETSIZE",
        "MAXITERATIONS",
        "FINGERPRINT",
        "WEIGHTS",
        "COMPRESSION",
        "OVERRIDE",
        "WITHCOUNT",
        "withc",
        "SIZE",
        "FILTERS",
    ];
    let commands: Vec<&str> = rocksketch::command::commands().collect();
    assert!(commands.len() > 60, "{commands:?}");
    let mut g = Gen::new(8);
    for round in 0..40 {
        for name in &commands {
            let len = usize::arbitrary(&mut g) % 8;
            let mut request = vec![name.to_uppercase()];
            request.extend((0..len).map(|_| pick(&mut g, &words).to_owned()));
            let request: Vec<Vec<u8>> = request.into_iter().map(String::into_bytes).collect();
            let reply = std::panic::catch_unwind(AssertUnwindSafe(|| execute(&ns, &request)));
            let reply = reply.unwrap_or_else(|_| panic!("round {round}: {request:?} panicked"));
            if let rocksketch::command::Reply::Error(text) = &reply {
                assert!(!text.contains("internal"), "{request:?}: {text}");
            }
        }
    }
    let info = execute(&ns, &common::args(&["CMS.QUERY", "cms", "a"]));
    assert!(
        matches!(info, rocksketch::command::Reply::Array(_)),
        "{info:?}"
    );
}

#[test]
fn a_run_joins_its_command_in_any_case_on_its_key_at_a_valid_arity() {
    let requests: Vec<Vec<Vec<u8>>> = [
        &["CF.ADD", "cf", "a"][..],
        &["cf.add", "cf", "b"],
        &["Cf.Add", "cf", "c"],
        &["CF.ADD", "other", "d"],
        &["CF.ADD", "other", "e", "f"],
        &["CF.ADDNX", "other", "g"],
        &["CMS.INCRBY", "cms", "a", "1"],
        &["cms.incrby", "cms", "b", "1", "c", "2"],
        &["CMS.INCRBY", "cms", "b"],
    ]
    .iter()
    .map(|words| common::args(words))
    .collect();
    let lengths: Vec<usize> = (0..requests.len())
        .map(|at| rocksketch::command::batch::run_length(&requests, at))
        .collect();
    assert_eq!(lengths, [3, 2, 1, 1, 1, 1, 2, 1, 1]);
}
