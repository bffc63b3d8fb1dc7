//! Server commands: `MODULE`, `DEBUG` (`INFO` is in [`super::info`]).

use super::*;
use crate::server::persistence::Begun;

/// `DEBUG PANIC` (a panicking command: the client gets an error and its connection
/// closes, the server carries on) and `DEBUG SLEEP seconds`, when enabled.
pub(super) fn debug(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    if !conn.shared.config.enable_debug_command {
        return err(
            "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", \
             you can run it from a local connection, otherwise you need to set this option in the \
             configuration file, and then restart the server.",
        );
    }
    match (lower(&args[1]).as_str(), args.len()) {
        ("panic", 2) => panic!("DEBUG PANIC"),
        ("sleep", 3) => match std::str::from_utf8(&args[2])
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
        {
            Some(secs) if (0.0..=60.0).contains(&secs) => {
                std::thread::sleep(std::time::Duration::from_secs_f64(secs));
                Reply::ok()
            }
            _ => err("ERR DEBUG SLEEP takes seconds from 0 to 60"),
        },
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

pub(super) fn module(args: &[Vec<u8>]) -> Reply {
    match lower(&args[1]).as_str() {
        "list" => Reply::Array(vec![bloom_module()]),
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try MODULE HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

/// `SAVE`: flushes the memtables to table files (every acknowledged write is already in
/// the write-ahead log; the flush shortens what a restart replays).
pub(super) fn save(conn: &Connection) -> Reply {
    match conn.shared.flushes.flush(&conn.shared.store) {
        Ok(()) => Reply::ok(),
        Err(e) => Reply::from(&e),
    }
}

/// `BGSAVE [SCHEDULE]`: the same flush on a thread of its own.
pub(super) fn bgsave(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    let schedule = match args {
        [_] => false,
        [_, arg] if lower(arg) == "schedule" => true,
        _ => return err("ERR syntax error"),
    };
    let shared = conn.shared.clone();
    match shared.flushes.begin_background(schedule) {
        Begun::Start => {}
        Begun::Scheduled => return Reply::Simple("Background saving scheduled".to_owned()),
        Begun::Busy => return err("ERR Background save already in progress"),
    }
    let started = std::thread::Builder::new()
        .name("bgsave".to_owned())
        .spawn(move || shared.flushes.run_background(&shared.store));
    match started {
        Ok(_) => Reply::Simple("Background saving started".to_owned()),
        Err(e) => {
            conn.shared.flushes.abandon_background();
            Reply::Error(format!("ERR could not start the background flush: {e}"))
        }
    }
}

/// `LASTSAVE`: Unix seconds of the last flush (ours or RocksDB's own).
pub(super) fn lastsave(conn: &Connection) -> Reply {
    Reply::Int(conn.shared.flushes.last() as i64)
}
