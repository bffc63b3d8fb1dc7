//! `INFO`'s shape against Redis itself (Debian's `redis-server` 7.0): the sections each
//! form prints come in Redis's order (less those this host does not keep, `errorstats`
//! and `latencystats`, plus its own `rocksketch`), and the CPU section has Redis's
//! fields, as seconds that add up.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use redis_server::RedisServer;
use resp_client::{temp_server, Client, Value};

fn text(c: &mut Client, words: &[&str]) -> String {
    match c.cmd(words) {
        Value::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("{words:?}: {other:?}"),
    }
}

fn headers(info: &str) -> Vec<String> {
    info.lines()
        .filter_map(|l| l.strip_prefix("# "))
        .map(|h| h.trim().to_owned())
        .collect()
}

/// `field:value` pairs of one section.
fn fields(info: &str) -> Vec<(String, String)> {
    info.lines()
        .filter_map(|l| l.trim_end().split_once(':'))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn sections_come_in_redis_order_and_cpu_has_redis_fields() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
    for form in [
        &["INFO"][..],
        &["INFO", "all"],
        &["INFO", "default"],
        &["INFO", "everything"],
    ] {
        let (mine, redis) = (headers(&text(&mut a, form)), headers(&text(&mut b, form)));
        let kept: Vec<&String> = redis
            .iter()
            .filter(|h| !["Errorstats", "Latencystats"].contains(&h.as_str()))
            .collect();
        let own: Vec<&String> = mine.iter().filter(|h| *h != "Rocksketch").collect();
        // Redis's `all` prints commandstats after modules; the host after keyspace.
        let unordered = |v: Vec<&String>| {
            let mut v: Vec<String> = v.into_iter().cloned().collect();
            if form.len() > 1 && form[1] != "default" {
                v.retain(|h| h != "Commandstats");
            }
            v
        };
        assert_eq!(unordered(own), unordered(kept), "{form:?}");
        assert!(mine.contains(&"CPU".to_owned()), "{form:?}: {mine:?}");
    }
    let names = |info: &str| fields(info).into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    let before = text(&mut a, &["INFO", "cpu"]);
    assert_eq!(names(&before), names(&text(&mut b, &["INFO", "cpu"])));
    for _ in 0..3000 {
        a.cmd(&["PING"]);
    }
    let after = text(&mut a, &["INFO", "cpu"]);
    let seconds = |info: &str, name: &str| -> f64 {
        let (_, v) = fields(info).into_iter().find(|(k, _)| k == name).unwrap();
        v.parse().unwrap()
    };
    for name in ["used_cpu_sys", "used_cpu_user"] {
        assert!(
            seconds(&after, name) >= seconds(&before, name),
            "{name} grows"
        );
        let thread = format!("{name}_main_thread");
        assert!(
            seconds(&after, &thread) <= seconds(&after, name),
            "{thread} within it"
        );
    }
    let total = |info: &str| seconds(info, "used_cpu_sys") + seconds(info, "used_cpu_user");
    assert!(total(&after) > 0.0, "{after}");
}
