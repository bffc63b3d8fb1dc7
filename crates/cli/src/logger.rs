//! The server's log: the engine's and the server's `log` records, one line each, in
//! Redis's format, `<pid>:M <DD Mon YYYY HH:MM:SS.mmm> <level> <message>` (the time in
//! UTC; the level `#` warning, `*` notice, `-` verbose, `.` debug), on standard error or
//! appended to a file (`--logfile`). Levels are Redis's (`--loglevel`, `CONFIG SET
//! loglevel`): `warning` (storage errors, degraded service), `notice` (start, shutdown;
//! the default), `verbose` (protocol errors, slow commands), `debug` (every connection).

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
            "{}:M {} {} {}\n",
            std::process::id(),
            timestamp(rocksketch::now_ms()),
            level_mark(record.level()),
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

/// Redis's mark for a level.
fn level_mark(level: log::Level) -> char {
    match level {
        log::Level::Error | log::Level::Warn => '#',
        log::Level::Info => '*',
        log::Level::Debug => '-',
        log::Level::Trace => '.',
    }
}

/// `DD Mon YYYY HH:MM:SS.mmm` in UTC for a Unix time in milliseconds, as Redis prints
/// its log's times (the civil date from the day number: Howard Hinnant's algorithm).
fn timestamp(ms: u64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, in_day) = ((ms / 86_400_000) as i64, ms % 86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, sec, milli) = (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    );
    format!(
        "{day:02} {} {year} {h:02}:{m:02}:{sec:02}.{milli:03}",
        MONTHS[(month - 1) as usize]
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_as_redis_prints_them() {
        for (ms, text) in [
            (0, "01 Jan 1970 00:00:00.000"),
            (1_796_167_960_123, "01 Dec 2026 23:32:40.123"),
            (951_782_400_000, "29 Feb 2000 00:00:00.000"),
            (4_102_444_799_999, "31 Dec 2099 23:59:59.999"),
        ] {
            assert_eq!(timestamp(ms), text);
        }
        assert_eq!(level_mark(log::Level::Warn), '#');
        assert_eq!(level_mark(log::Level::Info), '*');
    }
}
