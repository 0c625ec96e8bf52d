//! Where a call's time goes. Each call's log event carries, besides its
//! total, the microseconds of its four steps: `decide` (the schema check,
//! the decision on the source's summary and the capture of a successor),
//! `admit` (a free server, the final-hop measurement and the runtime's
//! formation, admission and fence), `forward` (the stock server's round
//! trip) and `complete` (the runtime's record of the reply). What the total
//! holds beyond them is the gateway's own bookkeeping; the transports'
//! time (reading and writing the client's and the server's messages) lies
//! outside the event. `cargo xtask bench-gateway` reads them from the log.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The moments a call reaches, in order.
#[derive(Clone, Copy)]
pub enum Step {
    /// Decided (or passed by policy): formation comes next.
    Decided = 0,
    /// Admitted and fenced: the request goes to the server now.
    Forwarded = 1,
    /// The server's reply arrived: the completion is recorded next.
    Answered = 2,
}

/// The moments one call reached, in microseconds since it started (0: not reached).
pub struct Steps {
    started: Instant,
    at: [AtomicU64; 3],
}

impl Steps {
    pub fn new() -> Steps {
        Steps { started: Instant::now(), at: Default::default() }
    }

    /// Microseconds since the call started.
    pub fn since_start(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX).max(1)
    }

    pub fn mark(&self, step: Step) {
        self.at[step as usize].store(self.since_start(), Ordering::Relaxed);
    }

    /// `decide`, `admit`, `forward` and `complete` for a call that ended at
    /// `end`: the step a call ended in runs to `end`, the steps after it are 0.
    pub fn durations(&self, end: u64) -> [u64; 4] {
        let at = self.at.each_ref().map(|a| a.load(Ordering::Relaxed));
        let mut out = [0; 4];
        let mut from = 0;
        for (i, moment) in at.iter().chain(std::iter::once(&end)).enumerate() {
            out[i] = if *moment == 0 { end } else { *moment }.saturating_sub(from);
            if *moment == 0 {
                break;
            }
            from = *moment;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_the_gaps_between_the_moments_reached() {
        let steps = Steps::new();
        for (i, v) in [10, 25, 60].iter().enumerate() {
            steps.at[i].store(*v, Ordering::Relaxed);
        }
        assert_eq!(steps.durations(70), [10, 15, 35, 10]);
        let refused = Steps::new();
        refused.at[0].store(12, Ordering::Relaxed);
        assert_eq!(refused.durations(30), [12, 18, 0, 0], "refused at the fence: no forward, no completion");
        assert_eq!(Steps::new().durations(5), [5, 0, 0, 0], "refused in the decision");
    }
}
