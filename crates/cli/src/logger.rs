//! The server's log: the engine's and the server's `log` records, one line each,
//! `rocksketch: <Unix time in ms> <level> <message>`, on standard error or appended to
//! a file (`--logfile`). Levels are Redis's (`--loglevel`, `CONFIG SET loglevel`):
//! `warning` (storage errors, degraded service), `notice` (start, shutdown; the
//! default), `verbose` (protocol errors, slow commands), `debug` (every connection).

use parking_lot::Mutex;
use std::fs::File;
use std::io::Write;

/// Where lines go: standard error until a file is configured.
static LOGGER: Logger = Logger {
    file: Mutex::new(None),
};

struct Logger {
    file: Mutex<Option<File>>,
}

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let line = format!(
            "rocksketch: {} {} {}\n",
            rocksketch::now_ms(),
            record.level(),
            record.args()
        );
        match &mut *self.file.lock() {
            // A log that cannot be written must not stop the server.
            Some(file) => drop(file.write_all(line.as_bytes())),
            None => drop(std::io::stderr().write_all(line.as_bytes())),
        }
    }

    fn flush(&self) {
        if let Some(file) = &mut *self.file.lock() {
            let _ = file.flush();
        }
    }
}

/// Installs the logger at `notice` on standard error; later calls do nothing.
pub fn install() {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level("notice").unwrap_or(log::LevelFilter::Info));
    }
}

/// The `log` level for a Redis level name.
pub fn level(name: &str) -> Option<log::LevelFilter> {
    Some(match name.to_ascii_lowercase().as_str() {
        "debug" => log::LevelFilter::Trace,
        "verbose" => log::LevelFilter::Debug,
        "notice" => log::LevelFilter::Info,
        "warning" => log::LevelFilter::Warn,
        _ => return None,
    })
}

/// Sets the level and, with a path, appends lines to that file from now on.
pub fn configure(level_name: &str, logfile: Option<&str>) -> Result<(), String> {
    let filter = level(level_name).ok_or(format!(
        "--loglevel: '{level_name}' is not one of debug, verbose, notice, warning"
    ))?;
    if let Some(path) = logfile.filter(|p| !p.is_empty()) {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("opening the log file {path}: {e}"))?;
        *LOGGER.file.lock() = Some(file);
    }
    log::set_max_level(filter);
    Ok(())
}
