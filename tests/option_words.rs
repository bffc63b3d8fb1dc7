//! Commands whose words a parser could take for something else: a lone option word of
//! `CF.INSERT` is RedisBloom's form cut short (its arity error, as RedisBloom answers),
//! not an item of the short `CF.INSERT key item`; and repeats of one item staged by
//! `RIBBON.ADD` are one hash, not many against a page's limit.

mod common;

use rocksketch::command::{execute, Reply};

fn run(ns: &rocksketch::Namespace, words: &[&str]) -> Reply {
    execute(ns, &common::args(words))
}

#[test]
fn a_lone_cf_insert_option_is_an_arity_error_and_creates_nothing() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let arity = Reply::Error("ERR wrong number of arguments for 'cf.insert' command".into());
    for word in ["NOCREATE", "capacity", "ITEMS"] {
        assert_eq!(run(&ns, &["CF.INSERT", "k", word]), arity, "{word}");
    }
    assert!(!ns.exists(b"k").unwrap(), "nothing was created");
    // The short form with an item that is no option word still adds it.
    assert_eq!(run(&ns, &["CF.INSERT", "k", "item"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.EXISTS", "k", "item"]), Reply::Bool(true));
}

#[test]
fn many_copies_of_one_item_stage_as_one() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let mut words = vec!["RIBBON.ADD", "r"];
    words.extend(std::iter::repeat_n("same", 140_000));
    assert_eq!(run(&ns, &words), Reply::Int(140_000));
    assert_eq!(run(&ns, &["RIBBON.EXISTS", "r", "same"]), Reply::Bool(true));
    // The build holds one distinct item.
    assert_eq!(run(&ns, &["RIBBON.BUILD", "r"]), Reply::Int(1));
    assert_eq!(run(&ns, &["RIBBON.EXISTS", "r", "same"]), Reply::Bool(true));
}
