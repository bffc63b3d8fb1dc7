//! A key holding one structure answers WRONGTYPE to every other structure's commands,
//! through the library and through the command layer with Redis's exact text.

mod common;

use common::args;
use rocksketch::command::{execute, Reply};
use rocksketch::{Error, KeyType};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

#[test]
fn library_reports_wrong_type_both_ways() {
    let t = common::TempStore::new();
    let s = t.store();
    s.cms("sketch").init_by_dim(10, 2).unwrap();
    assert!(s.bloom("filter").add("x").unwrap());
    assert_eq!(s.ns(0).key_type(b"filter").unwrap(), Some(KeyType::Bloom));

    let cms = s.cms("filter");
    assert!(matches!(cms.query(&["x"]), Err(Error::WrongType)));
    assert!(matches!(cms.incr_by(&[("x", 1)]), Err(Error::WrongType)));
    assert!(matches!(cms.info(), Err(Error::WrongType)));
    assert!(matches!(
        s.cms("sketch").merge(&[("filter", 1)]),
        Err(Error::WrongType)
    ));

    let bloom = s.bloom("sketch");
    assert!(matches!(bloom.add("x"), Err(Error::WrongType)));
    assert!(matches!(bloom.exists("x"), Err(Error::WrongType)));
    assert!(matches!(bloom.card(), Err(Error::WrongType)));
    // Nothing was written to either key by the refused commands.
    assert_eq!(s.cms("sketch").info().unwrap().count, 0);
    assert_eq!(s.bloom("filter").card().unwrap(), 1);
}

#[test]
fn commands_answer_redis_texts() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let run = |words: &[&str]| execute(&ns, &args(words));
    assert_eq!(run(&["CMS.INITBYDIM", "sketch", "10", "2"]), Reply::ok());
    assert_eq!(run(&["BF.ADD", "filter", "x"]), Reply::Bool(true));
    let wrong = Reply::Error(WRONGTYPE.to_owned());
    for cmd in [
        &["CMS.QUERY", "filter", "x"][..],
        &["CMS.INCRBY", "filter", "x", "1"],
        &["CMS.INFO", "filter"],
        &["CMS.MERGE", "sketch", "1", "filter"],
        &["BF.ADD", "sketch", "x"],
        &["BF.MADD", "sketch", "x", "y"],
        &["BF.CARD", "sketch"],
        &["BF.INFO", "sketch"],
    ] {
        assert_eq!(run(cmd), wrong, "{cmd:?}");
    }
    // But membership reads take it for an empty filter, as RedisBloom does (live 2.8.2,
    // and BFCheck_RedisCommand in 8's source): 0, not WRONGTYPE.
    assert_eq!(run(&["BF.EXISTS", "sketch", "x"]), Reply::Bool(false));
    assert_eq!(
        run(&["BF.MEXISTS", "sketch", "x"]),
        Reply::Array(vec![Reply::Bool(false)])
    );
    // CMS.INITBYDIM over an existing key of another type is its "exists" error.
    assert_eq!(
        run(&["CMS.INITBYDIM", "filter", "10", "2"]),
        Reply::Error("CMS: key already exists".to_owned())
    );
    // RedisBloom's BF.RESERVE and CF.RESERVE answer WRONGTYPE instead (live 2.8.2).
    assert_eq!(run(&["BF.RESERVE", "sketch", "0.01", "100"]), wrong);
    assert_eq!(run(&["CF.RESERVE", "sketch", "100"]), wrong);
}
