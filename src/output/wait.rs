//! Rendering of `wait`: on a terminal every service's line redrawn in place, in a log one
//! line per change; then the outcome: deployed, the failures that will not heal, or each
//! service's state as last seen.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::Instant;

use super::eval::Paint;
use crate::core::wait::{self, Judgement, ServiceLine};

/// What has been shown: each service's last state, and on a terminal how many lines to
/// redraw.
pub struct Progress {
    tty: bool,
    /// The terminal's columns.
    width: usize,
    color: bool,
    /// When the first judgement was shown: log lines are timed from it (a dump's one
    /// judgement is at 0s however long reading it took).
    started: Option<Instant>,
    shown: BTreeMap<(String, String), Option<String>>,
    pending: Vec<String>,
    /// Lines drawn last on the terminal (redrawn in place).
    drawn: usize,
    last: Option<Judgement>,
}

impl Progress {
    pub fn new(tty: bool, color: bool, width: usize) -> Progress {
        Progress {
            tty,
            width,
            color,
            started: None,
            shown: BTreeMap::new(),
            pending: Vec::new(),
            drawn: 0,
            last: None,
        }
    }

    fn state(&self, s: &ServiceLine) -> String {
        let p = Paint { color: self.color };
        match s.state.as_deref() {
            Some(st @ wait::DEPLOYED) => p.green(st),
            Some(st @ "Failed") => p.red(st),
            Some(st) => p.yellow(st),
            None => p.dim("no state yet"),
        }
    }

    /// A terminal: every service's line, redrawn in place. A log: a line for each service
    /// whose state changed, and each new pending note.
    pub fn show(&mut self, out: &mut dyn Write, j: &Judgement) -> io::Result<()> {
        if self.tty {
            if self.drawn > 0 {
                write!(out, "\x1b[{}A", self.drawn)?;
            }
            // Each line within the terminal's width, so that moving up redraws exactly them.
            let fit = |text: String| -> String {
                text.chars().take(self.width.saturating_sub(1)).collect()
            };
            let mut lines = 0;
            for s in &j.services {
                let state = s.state.as_deref().unwrap_or("no state yet");
                let room = self.width.saturating_sub(state.chars().count() + 3);
                let head: String = format!("{}  {}", s.service_set, s.service)
                    .chars()
                    .take(room)
                    .collect();
                writeln!(out, "\x1b[2K{head}  {}", self.state(s))?;
                lines += 1;
            }
            for p in &j.pending {
                writeln!(out, "\x1b[2K{}", fit(p.clone()))?;
                lines += 1;
            }
            // Lines left from a longer drawing are cleared.
            let left = self.drawn.saturating_sub(lines);
            for _ in 0..left {
                writeln!(out, "\x1b[2K")?;
            }
            lines += left;
            self.drawn = lines;
        } else {
            let at = self
                .started
                .get_or_insert_with(Instant::now)
                .elapsed()
                .as_secs();
            for s in &j.services {
                let key = (s.service_set.clone(), s.service.clone());
                if self.shown.get(&key) != Some(&s.state) {
                    writeln!(
                        out,
                        "[{at:>4}s] ServiceSet {} service {}: {}",
                        s.service_set,
                        s.service,
                        self.state(s)
                    )?;
                    self.shown.insert(key, s.state.clone());
                }
            }
            for p in &j.pending {
                if !self.pending.contains(p) {
                    writeln!(out, "[{at:>4}s] {p}")?;
                }
            }
            self.pending = j.pending.clone();
        }
        self.last = Some(j.clone());
        out.flush()
    }

    /// Every service deployed.
    pub fn deployed(&self, out: &mut dyn Write, what: &str, j: &Judgement) -> io::Result<()> {
        let p = Paint { color: self.color };
        let n = super::count(j.services.len(), "service");
        writeln!(out, "{what}: {} deployed", p.green(&n))
    }

    /// The failures that will not heal, each with why and doctor's hint.
    pub fn failed(&self, out: &mut dyn Write, j: &Judgement) -> io::Result<()> {
        let p = Paint { color: self.color };
        for f in &j.failures {
            writeln!(out, "{} {}: {}", p.red("failed"), f.code, f.message)?;
            writeln!(out, "  will not heal by itself: {}", f.why)?;
            if let Some(h) = &f.hint {
                writeln!(out, "  hint: {h}")?;
            }
        }
        Ok(())
    }

    /// The timeout passed (or a dump is not deployed): each service's state as last seen.
    pub fn timed_out(&mut self, out: &mut dyn Write, why: &str) -> io::Result<()> {
        let p = Paint { color: self.color };
        writeln!(out, "{}; last seen:", p.yellow(why))?;
        match &self.last {
            Some(j) => {
                for s in &j.services {
                    writeln!(
                        out,
                        "  ServiceSet {} service {}: {}",
                        s.service_set,
                        s.service,
                        self.state(s)
                    )?;
                }
                for pending in &j.pending {
                    writeln!(out, "  {pending}")?;
                }
            }
            None => writeln!(out, "  nothing: the watches had not listed every kind yet")?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::wait::Outcome;

    fn judged(states: &[Option<&str>], pending: &[&str]) -> Judgement {
        Judgement {
            outcome: Outcome::Waiting,
            services: states
                .iter()
                .enumerate()
                .map(|(i, s)| ServiceLine {
                    service_set: "ns/set".into(),
                    service: format!("apps/s{i}"),
                    state: s.map(str::to_string),
                })
                .collect(),
            pending: pending.iter().map(|p| p.to_string()).collect(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn a_terminal_redraws_the_lines_in_place_within_its_width() {
        let mut p = Progress::new(true, false, 30);
        let mut out = Vec::new();
        p.show(
            &mut out,
            &judged(
                &[None, Some("Provisioning")],
                &["a pending note longer than the terminal"],
            ),
        )
        .unwrap();
        p.show(&mut out, &judged(&[Some("Deployed")], &[])).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], "\x1b[2Kns/set  apps/s0  no state yet");
        assert_eq!(lines[1], "\x1b[2Kns/set  apps/s1  Provisioning");
        assert_eq!(lines[2], "\x1b[2Ka pending note longer than th");
        // Up three lines, one drawn, two cleared.
        assert_eq!(lines[3], "\x1b[3A\x1b[2Kns/set  apps/s0  Deployed");
        assert_eq!(&lines[4..], ["\x1b[2K", "\x1b[2K", ""]);
    }

    #[test]
    fn a_log_gets_a_line_per_change_only() {
        let mut p = Progress::new(false, false, 100);
        let mut out = Vec::new();
        p.show(&mut out, &judged(&[None, Some("Provisioning")], &[]))
            .unwrap();
        p.show(
            &mut out,
            &judged(&[Some("Provisioning"), Some("Provisioning")], &[]),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let changes: Vec<&str> = text.lines().map(|l| &l[8..]).collect();
        assert_eq!(
            changes,
            [
                "ServiceSet ns/set service apps/s0: no state yet",
                "ServiceSet ns/set service apps/s1: Provisioning",
                "ServiceSet ns/set service apps/s0: Provisioning",
            ]
        );
    }
}
