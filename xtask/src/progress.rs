//! Progress of the release job: a bar on a terminal, plain lines elsewhere (CI).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: std::cell::Cell<u64>,
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar, total, done: std::cell::Cell::new(0) }
    }

    pub fn start(&self, what: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(what.to_owned()),
            None => eprintln!("[{}/{}] {what} …", self.done.get() + 1, self.total),
        }
    }

    pub fn done(&self, what: &str) {
        self.done.set(self.done.get() + 1);
        match &self.bar {
            Some(bar) => bar.inc(1),
            None => eprintln!("[{}/{}] {what}", self.done.get(), self.total),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
