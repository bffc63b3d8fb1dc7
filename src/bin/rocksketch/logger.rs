//! The server's log: the engine's `log` records on standard error, one line each,
//! `rocksketch: <level> <message>` with the Unix time in milliseconds.

struct Stderr;

static LOGGER: Stderr = Stderr;

impl log::Log for Stderr {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            eprintln!(
                "rocksketch: {} {} {}",
                rocksketch::now_ms(),
                record.level(),
                record.args()
            );
        }
    }

    fn flush(&self) {}
}

/// Installs the logger (warnings and errors) once; later calls do nothing.
pub fn install() {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
}
