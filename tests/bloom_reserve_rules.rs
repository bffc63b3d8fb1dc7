//! `BF.RESERVE`'s and the Bloom dump commands' checks, in RedisBloom 8's order and texts
//! (src/rebloom.c), where the live RedisBloom 2.8.2 answers otherwise (found by
//! `scripts/compare`; the 2.8 texts are listed in tests/compare/design.py).

mod common;

use common::args;
use rocksketch::command::{execute, Reply};

fn err(text: &str) -> Reply {
    Reply::Error(text.to_owned())
}

#[test]
fn reserve_checks_in_redisblooms_order() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let run = |words: &[&str]| execute(&ns, &args(words));
    // EXPANSION 0 is a non-scaling filter, with or without NONSCALING.
    assert_eq!(
        run(&["BF.RESERVE", "a", "0.01", "5", "EXPANSION", "0"]),
        Reply::ok()
    );
    assert_eq!(
        run(&[
            "BF.RESERVE",
            "b",
            "0.01",
            "5",
            "NONSCALING",
            "EXPANSION",
            "0"
        ]),
        Reply::ok()
    );
    for key in ["a", "b"] {
        assert_eq!(
            run(&["BF.INFO", key, "EXPANSION"]),
            Reply::Field(Box::new((
                Reply::Simple("Expansion rate".into()),
                Reply::Nil
            )))
        );
    }
    assert_eq!(
        run(&[
            "BF.RESERVE",
            "c",
            "0.01",
            "5",
            "NONSCALING",
            "EXPANSION",
            "3"
        ]),
        err("Nonscaling filters cannot expand")
    );
    assert_eq!(
        run(&["BF.RESERVE", "c", "0.01", "5", "EXPANSION"]),
        err("ERR no expansion")
    );
    assert_eq!(
        run(&["BF.RESERVE", "c", "0.01", "5", "EXPANSION", "32769"]),
        err("ERR expansion must be in the range [0, 32768]")
    );
    // The capacity's range before any option.
    assert_eq!(
        run(&["BF.RESERVE", "c", "0.01", "0", "EXPANSION", "x"]),
        err("ERR capacity must be in the range [1, 1073741824]")
    );
    // An existing key before the parameters are sized (RedisBloom creates only for a
    // missing key): an error rate too small to size a sub-filter finds it exists.
    assert_eq!(
        run(&["BF.RESERVE", "a", "4.9e-324", "1"]),
        err("ERR item exists")
    );
    assert_eq!(
        run(&["BF.RESERVE", "z", "4.9e-324", "1"]),
        err("ERR could not create filter")
    );
    // Options are found anywhere, other words passed over; at most 7 arguments.
    assert_eq!(run(&["BF.RESERVE", "c", "0.01", "5", "BOGUS"]), Reply::ok());
    assert_eq!(
        run(&["BF.RESERVE", "d", "0.01", "5", "x", "y", "z", "w"]),
        err("ERR wrong number of arguments for 'bf.reserve' command")
    );
}

#[test]
fn loadchunk_checks_the_key_before_the_chunk() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let run = |words: &[&str]| execute(&ns, &args(words));
    assert_eq!(
        run(&["BF.LOADCHUNK", "m", "x", "data"]),
        err("ERR Second argument must be numeric")
    );
    assert_eq!(
        run(&["BF.LOADCHUNK", "m", "9", "data"]),
        err("ERR not found")
    );
    assert_eq!(
        run(&["BF.LOADCHUNK", "m", "1", "data"]),
        err("ERR received bad data")
    );
    assert_eq!(run(&["BF.ADD", "f", "a"]), Reply::Bool(true));
    assert_eq!(
        run(&["BF.LOADCHUNK", "f", "1", "data"]),
        err("ERR received bad data")
    );
    assert_eq!(run(&["BF.SCANDUMP", "m", "x"]), err("ERR not found"));
    assert_eq!(
        run(&["BF.SCANDUMP", "f", "x"]),
        err("Second argument must be numeric")
    );
    assert_eq!(
        run(&["CF.LOADCHUNK", "m", "0", "data"]),
        err("Invalid position")
    );
    assert_eq!(
        run(&["CF.LOADCHUNK", "m", "1", "data"]),
        err("Invalid header")
    );
    assert_eq!(
        run(&["CF.LOADCHUNK", "m", "2", "data"]),
        err("ERR not found")
    );
    assert_eq!(run(&["CF.ADD", "c", "a"]), Reply::Bool(true));
    assert_eq!(
        run(&["CF.LOADCHUNK", "c", "1", "data"]),
        err("ERR item exists")
    );
    assert_eq!(
        run(&["CF.LOADCHUNK", "c", "2", "data"]),
        err("Couldn't load chunk!")
    );
    assert_eq!(run(&["CF.SCANDUMP", "c", "-1"]), err("Invalid position"));
    // CF.DEL answers "Not found" for a key of another type (RedisBloom's CFDel).
    assert_eq!(run(&["CF.DEL", "f", "a"]), err("Not found"));
    // Membership reads take a key of another type for an empty filter.
    assert_eq!(run(&["BF.EXISTS", "c", "a"]), Reply::Bool(false));
    assert_eq!(
        run(&["BF.MEXISTS", "c", "a", "b"]),
        Reply::Array(vec![Reply::Bool(false); 2])
    );
    assert_eq!(run(&["CF.EXISTS", "f", "a"]), Reply::Bool(false));
    assert_eq!(
        run(&["CF.MEXISTS", "f", "a"]),
        Reply::Array(vec![Reply::Bool(false)])
    );
    assert_eq!(run(&["CF.COUNT", "f", "a"]), Reply::Int(0));
    assert_eq!(
        run(&["BF.CARD", "c"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}
