//! `INFO stats`' `instantaneous_ops_per_sec`.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::time::Instant;

/// Instantaneous operations per second as Redis computes them: the mean rate over the
/// last 16 samples, taken every 100 ms (by the expiry sweeper's loop).
#[derive(Default)]
pub(crate) struct OpsMeter {
    samples: Mutex<Samples>,
}

/// The last sample (when, the command count then) and the rates between samples.
#[derive(Default)]
struct Samples {
    last: Option<(Instant, u64)>,
    rates: VecDeque<f64>,
}

impl OpsMeter {
    /// Takes a sample of the total command count.
    pub(crate) fn sample(&self, commands: u64) {
        let now = Instant::now();
        let mut samples = self.samples.lock();
        let Samples { last, rates } = &mut *samples;
        if let Some((at, count)) = *last {
            let secs = now.duration_since(at).as_secs_f64();
            if secs > 0.0 {
                if rates.len() == 16 {
                    rates.pop_front();
                }
                rates.push_back(commands.saturating_sub(count) as f64 / secs);
            }
        }
        *last = Some((now, commands));
    }

    pub(crate) fn ops_per_sec(&self) -> u64 {
        let samples = self.samples.lock();
        let rates = &samples.rates;
        match rates.len() {
            0 => 0,
            n => (rates.iter().sum::<f64>() / n as f64).round() as u64,
        }
    }
}
