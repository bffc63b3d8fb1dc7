//! `REPLICAOF` (`SLAVEOF`), `ROLE`, `WAIT`, `REPLCONF`, `PSYNC` (`SYNC`) and `INFO
//! replication`, with Redis's replies (see [`crate::replication`] for the mechanism).

use super::*;
use crate::replication::{Handoff, Replication, Wait};
use std::time::Duration;

/// `REPLICAOF host port | NO ONE`.
pub(crate) fn replicaof(conn: &mut Connection, args: &mut Args) -> HostResult {
    let host = args.next_arg()?.to_vec();
    let port = args.next_arg()?.to_vec();
    args.finish()?;
    let shared = conn.shared.clone();
    if lower(&host) == "no" && lower(&port) == "one" {
        Replication::promote(&shared).map_err(|e| Reply::Error(format!("ERR {e}")))?;
        return Ok(Reply::ok());
    }
    let port = std::str::from_utf8(&port)
        .ok()
        .and_then(|p| p.parse::<u16>().ok())
        .filter(|p| *p > 0)
        .ok_or_else(|| err("ERR Invalid master port"))?;
    let host = String::from_utf8_lossy(&host).into_owned();
    if let Some((old_host, old_port, _)) = shared.replication.primary() {
        if old_host.eq_ignore_ascii_case(&host) && old_port == port {
            return Ok(Reply::Simple(
                "OK Already connected to specified master".to_owned(),
            ));
        }
    }
    if port == shared.addr.port() && is_this_host(&host) {
        return Err(err("ERR can't replicate from myself"));
    }
    Replication::follow(&shared, host, port);
    Ok(Reply::ok())
}

/// Whether `host` names this machine (a loopback or unspecified address).
pub(crate) fn is_this_host(host: &str) -> bool {
    use std::net::ToSocketAddrs;
    (host, 0)
        .to_socket_addrs()
        .is_ok_and(|mut addrs| addrs.any(|a| a.ip().is_loopback() || a.ip().is_unspecified()))
}

/// `ROLE`: `master offset [[ip port offset] ...]`, or `slave host port state offset`.
pub(crate) fn role(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    let shared = &conn.shared;
    let offset = shared.store.latest_sequence().unwrap_or(0) as i64;
    if let Some((host, port, link)) = shared.replication.primary() {
        return Ok(Reply::Array(vec![
            bulk("slave"),
            bulk(host),
            Reply::Int(i64::from(port)),
            bulk(link.phase()),
            Reply::Int(offset),
        ]));
    }
    let replicas = shared.replication.peers().into_iter().map(|p| {
        Reply::Array(vec![
            bulk(p.ip.clone()),
            bulk(p.port.to_string()),
            bulk(p.acked().to_string()),
        ])
    });
    Ok(Reply::Array(vec![
        bulk("master"),
        Reply::Int(offset),
        Reply::Array(replicas.collect()),
    ]))
}

/// `WAIT numreplicas timeout`: parks the client until `numreplicas` replicas have
/// acknowledged every write made so far, or `timeout` milliseconds (0: no limit).
pub(crate) fn wait(conn: &mut Connection, args: &mut Args) -> Result<Wait, Reply> {
    let needed = parse_i64(args.next_arg()?).ok_or_else(|| err(NOT_INTEGER))?;
    let timeout = parse_i64(args.next_arg()?).ok_or_else(|| err(NOT_INTEGER))?;
    args.finish()?;
    if timeout < 0 {
        return Err(err("ERR timeout is negative"));
    }
    if conn.shared.replication.is_replica() {
        return Err(err(
            "ERR WAIT cannot be used with replica instances. Please also note that since \
             Redis 4.0 if a replica is configured to be writable (which is not the default) \
             writes to replicas are just local and are not propagated.",
        ));
    }
    let offset = conn.shared.store.latest_sequence().unwrap_or(0);
    let timeout = (timeout > 0).then(|| Duration::from_millis(timeout as u64));
    let rep = &conn.shared.replication;
    Ok(Wait::new(rep, offset, needed.max(0) as usize, timeout))
}

/// `REPLCONF option value ...`: what a replica says before `PSYNC`. `listening-port`
/// is kept for `PSYNC`; the others are accepted.
pub(crate) fn replconf(conn: &mut Connection, args: &mut Args) -> HostResult {
    let pairs = args.rest();
    if pairs.is_empty() || pairs.len() % 2 != 0 {
        return Err(err(SYNTAX));
    }
    for pair in pairs.chunks(2) {
        match lower(&pair[0]).as_str() {
            "listening-port" => {
                let port = std::str::from_utf8(&pair[1])
                    .ok()
                    .and_then(|p| p.parse::<u16>().ok())
                    .ok_or_else(|| err(NOT_INTEGER))?;
                conn.replica_port = port;
            }
            "ack" | "getack" => return Ok(Reply::Nil),
            "capa" | "ip-address" | "rdb-only" | "rdb-filter-only" => {}
            other => {
                return Err(Reply::Error(format!(
                    "ERR Unrecognized REPLCONF option: {other}"
                )))
            }
        }
    }
    Ok(Reply::ok())
}

/// `PSYNC replid offset` (`SYNC`: from nothing): the connection becomes the replica's
/// feed; its thread answers `+CONTINUE` or `+FULLRESYNC`.
pub(crate) fn psync(conn: &mut Connection, request: &[Vec<u8>]) -> Result<Handoff, Reply> {
    if conn.transaction.is_some() {
        return Err(err("ERR Command not allowed inside a transaction"));
    }
    let (replid, offset) = match request {
        [_] => ("?".to_owned(), None),
        [_, replid, offset] => {
            let offset = std::str::from_utf8(offset)
                .ok()
                .and_then(|o| o.parse::<i64>().ok())
                .ok_or_else(|| err(NOT_INTEGER))?;
            (
                String::from_utf8_lossy(replid).into_owned(),
                u64::try_from(offset).ok(),
            )
        }
        _ => return Err(Reply::wrong_arity("psync")),
    };
    Ok(Handoff {
        replid,
        offset,
        port: conn.replica_port,
        entry: None,
    })
}

/// `INFO replication`.
pub(crate) fn info_section(conn: &Connection, text: &mut String) {
    let shared = &conn.shared;
    let rep = &shared.replication;
    let offset = shared.store.latest_sequence().unwrap_or(0);
    let ids = rep.ids();
    text.push_str("# Replication\r\n");
    if let Some((host, port, link)) = rep.primary() {
        let up = link.is_up();
        let _ = write!(
            text,
            "role:slave\r\nmaster_host:{host}\r\nmaster_port:{port}\r\n\
             master_link_status:{}\r\nmaster_last_io_seconds_ago:{}\r\n\
             master_sync_in_progress:{}\r\nslave_read_repl_offset:{offset}\r\n\
             slave_repl_offset:{offset}\r\nslave_priority:100\r\nslave_read_only:1\r\n\
             replica_announced:1\r\n",
            if up { "up" } else { "down" },
            link.last_io_seconds(),
            u8::from(link.phase() == "sync"),
        );
        if !up {
            let _ = write!(
                text,
                "master_link_down_since_seconds:{}\r\nmaster_link_error:{}\r\n",
                link.down_seconds(),
                link.error().replace(['\r', '\n'], " ")
            );
        }
    } else {
        text.push_str("role:master\r\n");
    }
    let peers = rep.peers();
    let _ = write!(text, "connected_slaves:{}\r\n", peers.len());
    for (i, peer) in peers.iter().enumerate() {
        let _ = write!(
            text,
            "slave{i}:ip={},port={},state={},offset={},lag={}\r\n",
            peer.ip,
            peer.port,
            peer.state(),
            peer.acked(),
            peer.lag()
        );
    }
    let (replid2, second) = match &ids.replid2 {
        Some((id, upto)) => (id.clone(), (*upto + 1).to_string()),
        None => ("0".repeat(40), "-1".to_owned()),
    };
    let _ = write!(
        text,
        "master_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:{replid2}\r\n\
         master_repl_offset:{offset}\r\nsecond_repl_offset:{second}\r\n\
         repl_backlog_active:1\r\nsync_full:{}\r\nsync_partial_ok:{}\r\n\
         sync_partial_err:{}\r\n",
        ids.replid,
        rep.full_syncs.load(Ordering::Relaxed),
        rep.partial_ok.load(Ordering::Relaxed),
        rep.partial_err.load(Ordering::Relaxed),
    );
}
