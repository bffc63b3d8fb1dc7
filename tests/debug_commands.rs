//! `BF.DEBUG`, `CF.DEBUG` and `CF.SCANDUMP` of an empty filter, as RedisBloom answers
//! them (the strings client test suites compare before and after a dump and restore).

mod common;

use common::args;
use rocksketch::command::{execute, Reply};

fn bulk(reply: &Reply) -> String {
    match reply {
        Reply::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
        other => panic!("not a bulk string: {other:?}"),
    }
}

/// Dumps `from` with `<family>.SCANDUMP` and restores it into `to`.
fn dump_and_restore(ns: &rocksketch::Namespace, family: &str, from: &str, to: &str) {
    let mut cursor = 0i64;
    loop {
        let reply = execute(
            ns,
            &args(&[&format!("{family}.SCANDUMP"), from, &cursor.to_string()]),
        );
        let Reply::Array(parts) = reply else {
            panic!("{reply:?}")
        };
        let (Reply::Int(next), Reply::Bulk(chunk)) = (&parts[0], &parts[1]) else {
            break;
        };
        if *next == 0 {
            break;
        }
        let mut load = args(&[&format!("{family}.LOADCHUNK"), to, &next.to_string()]);
        load.push(chunk.clone());
        assert_eq!(execute(ns, &load), Reply::ok());
        cursor = *next;
    }
}

#[test]
fn bf_debug_describes_each_sub_filter() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    execute(
        &ns,
        &args(&["BF.RESERVE", "b", "0.01", "100", "EXPANSION", "2"]),
    );
    for i in 0..250 {
        execute(&ns, &args(&["BF.ADD", "b", &format!("item{i}")]));
    }
    let Reply::Array(lines) = execute(&ns, &args(&["BF.DEBUG", "b"])) else {
        panic!()
    };
    let lines: Vec<String> = lines.iter().map(bulk).collect();
    let card = execute(&ns, &args(&["BF.CARD", "b"]));
    assert_eq!(
        lines[0],
        format!(
            "size:{}",
            match card {
                Reply::Int(n) => n,
                _ => -1,
            }
        )
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    // Bytes and bits as RedisBloom 2.8.2 sizes them (asked live): the bits of
    // `capacity x bits per item` rounded up to 64-bit words.
    assert!(
        lines[1].starts_with("bytes:144 bits:1152 hashes:8 hashwidth:64 capacity:100 size:"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("bytes:312 bits:2496 hashes:9 hashwidth:64 capacity:200 size:"),
        "{}",
        lines[2]
    );
    assert!(lines[1].ends_with(" ratio:0.005"), "{}", lines[1]);
    assert!(
        lines[2].contains(" capacity:200 ") && lines[2].ends_with(" ratio:0.0025"),
        "{}",
        lines[2]
    );
    execute(
        &ns,
        &args(&["BF.RESERVE", "small", "0.001", "7", "NONSCALING"]),
    );
    assert_eq!(
        execute(&ns, &args(&["BF.DEBUG", "small"])),
        Reply::Array(vec![
            Reply::Bulk(b"size:0".to_vec()),
            Reply::Bulk(
                b"bytes:16 bits:128 hashes:10 hashwidth:64 capacity:7 size:0 ratio:0.001".to_vec()
            ),
        ])
    );
    dump_and_restore(&ns, "BF", "b", "copy");
    assert_eq!(
        execute(&ns, &args(&["BF.DEBUG", "copy"])),
        execute(&ns, &args(&["BF.DEBUG", "b"]))
    );
    assert_eq!(
        execute(&ns, &args(&["BF.DEBUG", "missing"])),
        Reply::Error("ERR not found".into())
    );
    assert_eq!(
        execute(&ns, &args(&["BF.DEBUG"])),
        Reply::Error("ERR wrong number of arguments for 'bf.debug' command".into())
    );
}

#[test]
fn cf_debug_and_an_empty_filters_dump() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    execute(
        &ns,
        &args(&[
            "CF.RESERVE",
            "c",
            "1000",
            "BUCKETSIZE",
            "4",
            "MAXITERATIONS",
            "30",
            "EXPANSION",
            "2",
        ]),
    );
    // Nothing to dump yet: RedisBloom answers [0, nil] for any cursor.
    for cursor in ["0", "1", "77"] {
        assert_eq!(
            execute(&ns, &args(&["CF.SCANDUMP", "c", cursor])),
            Reply::Array(vec![Reply::Int(0), Reply::Nil])
        );
    }
    for i in 0..10 {
        execute(&ns, &args(&["CF.ADD", "c", &format!("x{i}")]));
    }
    execute(&ns, &args(&["CF.DEL", "c", "x3"]));
    let line = bulk(&execute(&ns, &args(&["CF.DEBUG", "c"])));
    assert_eq!(
        line,
        "bktsize:4 buckets:256 items:9 deletes:1 filters:1 max_iterations:30 expansion:2"
    );
    dump_and_restore(&ns, "CF", "c", "copy");
    assert_eq!(bulk(&execute(&ns, &args(&["CF.DEBUG", "copy"]))), line);
    assert_eq!(
        execute(&ns, &args(&["CF.DEBUG", "missing"])),
        Reply::Error("ERR not found".into())
    );
}
