//! Server commands: `MODULE`, `DEBUG` (`INFO` is in [`super::info`]).

use super::*;
use crate::persistence::Begun;

/// `DEBUG PANIC` (a panicking command: the client gets an error and its connection
/// closes, the server carries on) and `DEBUG SLEEP seconds`, when enabled.
pub(crate) fn debug(conn: &mut Connection, args: &mut Args) -> HostResult {
    if !conn.shared.config.enable_debug_command {
        return Err(err(
            "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", \
             you can run it from a local connection, otherwise you need to set this option in the \
             configuration file, and then restart the server.",
        ));
    }
    let sub = args.next_arg()?;
    match (lower(sub).as_str(), args.rest()) {
        ("panic", []) => panic!("DEBUG PANIC"),
        ("sleep", [secs]) => match std::str::from_utf8(secs)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
        {
            Some(secs) if (0.0..=60.0).contains(&secs) => {
                std::thread::sleep(std::time::Duration::from_secs_f64(secs));
                Ok(Reply::ok())
            }
            _ => Err(err("ERR DEBUG SLEEP takes seconds from 0 to 60")),
        },
        _ => Err(Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(sub)
        ))),
    }
}

pub(crate) fn module(_conn: &mut Connection, args: &mut Args) -> HostResult {
    let sub = args.next_arg()?;
    match lower(sub).as_str() {
        "list" => Ok(Reply::Array(vec![bloom_module()])),
        _ => Err(Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try MODULE HELP.",
            String::from_utf8_lossy(sub)
        ))),
    }
}

/// `SAVE`: makes a checkpoint of the store in the backup directory (see
/// [`crate::persistence`]) before answering.
pub(crate) fn save(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    conn.shared.saves.save(&conn.shared.store)?;
    Ok(Reply::ok())
}

/// `BGSAVE [SCHEDULE]`: the same checkpoint on a thread of its own.
pub(crate) fn bgsave(conn: &mut Connection, args: &mut Args) -> HostResult {
    let schedule = match args.rest() {
        [] => false,
        [arg] if lower(arg) == "schedule" => true,
        _ => return Err(err(SYNTAX)),
    };
    let shared = conn.shared.clone();
    match shared.saves.begin_background(schedule) {
        Begun::Start => {}
        Begun::Scheduled => return Ok(Reply::Simple("Background saving scheduled".to_owned())),
        Begun::Busy => return Err(err("ERR Background save already in progress")),
    }
    let started = std::thread::Builder::new()
        .name("bgsave".to_owned())
        .spawn(move || shared.saves.run_background(&shared.store));
    match started {
        Ok(_) => Ok(Reply::Simple("Background saving started".to_owned())),
        Err(e) => {
            conn.shared.saves.abandon_background();
            Err(Reply::Error(format!(
                "ERR could not start the background save: {e}"
            )))
        }
    }
}

/// `LASTSAVE`: Unix seconds of the last successful save.
pub(crate) fn lastsave(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    Ok(Reply::Int(conn.shared.saves.last() as i64))
}

/// `TIME`: the server's clock, seconds and microseconds since the epoch, as two bulk
/// strings.
pub(crate) fn time(_conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Ok(Reply::Array(vec![
        bulk(now.as_secs().to_string()),
        bulk(now.subsec_micros().to_string()),
    ]))
}
