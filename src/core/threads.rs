//! Helper threads that run at once: each leaves the CPU of the thread that started it.
//!
//! Linux places a new thread by its CPUs' load averages, which lag behind: on a machine of
//! few CPUs it often queues the thread on its starter's CPU, which is busy, while another
//! CPU idles; the two then share one CPU until a balancing tick moves one of them (4 ms at
//! 250 Hz, a fifth of a lint of 1,000 files; BENCHMARKS.md, "Helpers off their starter's
//! CPU"). A helper started through [`Helpers`] first moves itself off its starter's CPU when
//! it finds itself there (and another CPU is allowed; as many helpers move as there are
//! other CPUs), then allows itself every CPU it was allowed before; the starter waits in
//! [`Helpers::settle`] until every helper has run that far, which gives a helper queued
//! behind it that CPU at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::{Scope, ScopedJoinHandle, Thread};

/// The helpers one thread starts (in scoped threads); [`Helpers::settle`] on that thread.
pub struct Helpers {
    starter: Thread,
    spawned: AtomicUsize,
    started: AtomicUsize,
}

impl Default for Helpers {
    fn default() -> Self {
        Self::new()
    }
}

impl Helpers {
    /// The helpers of the calling thread.
    pub fn new() -> Self {
        Helpers {
            starter: std::thread::current(),
            spawned: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
        }
    }

    /// Starts `work` on a helper of `scope`, which first leaves the caller's CPU.
    pub fn spawn<'scope, 'env, T: Send + 'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, 'env>,
        work: impl FnOnce() -> T + Send + 'scope,
    ) -> ScopedJoinHandle<'scope, T> {
        let here = current_cpu();
        let nth = self.spawned.fetch_add(1, Ordering::Relaxed);
        scope.spawn(move || {
            if let Some(here) = here {
                leave(here, nth);
            }
            self.started.fetch_add(1, Ordering::Release);
            self.starter.unpark();
            work()
        })
    }

    /// Waits until every helper started so far runs off this thread's CPU (or on it, when it
    /// may run nowhere else). Called on the thread that made these helpers.
    pub fn settle(&self) {
        debug_assert_eq!(std::thread::current().id(), self.starter.id());
        while self.started.load(Ordering::Acquire) < self.spawned.load(Ordering::Relaxed) {
            std::thread::park();
        }
    }
}

/// Runs `mine` on this thread beside `others`, each on a helper started through [`Helpers`]
/// (settled before `mine` starts): their results in order, `mine`'s first. A helper's panic
/// is resumed here.
pub fn beside<T: Send, F: FnOnce() -> T + Send>(
    mine: impl FnOnce() -> T,
    others: impl IntoIterator<Item = F>,
) -> Vec<T> {
    let helpers = Helpers::new();
    std::thread::scope(|scope| {
        let started: Vec<_> = others
            .into_iter()
            .map(|work| helpers.spawn(scope, work))
            .collect();
        helpers.settle();
        let first = mine();
        std::iter::once(first)
            .chain(started.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }))
            .collect()
    })
}

#[cfg(target_os = "linux")]
fn current_cpu() -> Option<usize> {
    Some(rustix::thread::sched_getcpu())
}

#[cfg(not(target_os = "linux"))]
fn current_cpu() -> Option<usize> {
    None
}

/// Moves the calling thread, the `nth` helper (from 0), off CPU `here` when it is on it and
/// may run elsewhere, then lets it run on every CPU it was allowed (the scheduler keeps it
/// where it now runs). Only as many helpers as there are other CPUs move: more would all
/// crowd the others while `here` has room. A failure leaves the thread where it is, or (when
/// only the second call fails) off `here`.
#[cfg(target_os = "linux")]
fn leave(here: usize, nth: usize) {
    if let Some(allowed) = move_off(here, nth) {
        let _ = rustix::thread::sched_setaffinity(None, &allowed);
    }
}

/// Restricts the calling thread to the CPUs it is allowed but `here`, when it runs on `here`
/// and more than `nth` others are allowed (the kernel moves it before this returns); the CPUs
/// it was allowed.
#[cfg(target_os = "linux")]
fn move_off(here: usize, nth: usize) -> Option<rustix::thread::CpuSet> {
    use rustix::thread::{sched_getaffinity, sched_getcpu, sched_setaffinity};
    if sched_getcpu() != here {
        return None;
    }
    let allowed = sched_getaffinity(None).ok()?;
    let mut away = allowed;
    away.unset(here);
    if away.count() as usize <= nth {
        return None;
    }
    sched_setaffinity(None, &away).ok()?;
    Some(allowed)
}

#[cfg(not(target_os = "linux"))]
fn leave(_here: usize, _nth: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settle_waits_for_every_helper_and_work_runs() {
        let helpers = Helpers::new();
        let done = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..3 {
                helpers.spawn(scope, || done.fetch_add(1, Ordering::Relaxed));
            }
            helpers.settle();
            assert_eq!(helpers.started.load(Ordering::Acquire), 3);
            assert_eq!(helpers.spawned.load(Ordering::Relaxed), 3);
        });
        assert_eq!(done.into_inner(), 3);
    }

    #[test]
    fn beside_gives_every_result_in_order_and_resumes_a_helpers_panic() {
        let got = beside(|| 0, (1..4).map(|i| move || i));
        assert_eq!(got, [0, 1, 2, 3]);
        assert_eq!(
            beside(|| "mine", std::iter::empty::<fn() -> &'static str>()),
            ["mine"]
        );
        let panicked =
            std::panic::catch_unwind(|| beside(|| 0, [|| -> i32 { panic!("a helper") }]));
        assert!(panicked.is_err());
    }

    #[test]
    fn settle_without_helpers_returns() {
        Helpers::new().settle();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_on_the_cpu_it_leaves_moves_off_it_and_gets_every_cpu_back() {
        use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
        // On a thread of its own: the test changes the affinity of the thread it runs on.
        std::thread::spawn(|| {
            let allowed = sched_getaffinity(None).expect("affinity");
            let cpus: Vec<usize> = (0..CpuSet::MAX_CPU)
                .filter(|&c| allowed.is_set(c))
                .collect();
            let here = sched_getcpu();
            if cpus.len() < 2 {
                // One CPU: nowhere to go, the thread stays.
                assert!(move_off(here, 0).is_none());
                return;
            }
            // Two CPUs allowed, this one and another.
            let other = *cpus.iter().find(|&&c| c != here).expect("another CPU");
            let mut two = CpuSet::new();
            two.set(here);
            two.set(other);
            sched_setaffinity(None, &two).expect("affinity");
            let before = sched_getcpu();
            // The second helper would stay: one other CPU, taken by the first.
            assert!(move_off(before, 1).is_none());
            let restored = move_off(before, 0).expect("moved");
            // Off `before` for as long as the restriction holds: preemption cannot bring it back.
            assert_eq!(sched_getcpu(), if before == here { other } else { here });
            assert_eq!(restored, two);
            assert!(!sched_getaffinity(None).expect("affinity").is_set(before));
            // A thread not on the CPU named stays as it is.
            assert!(move_off(before, 0).is_none());
            sched_setaffinity(None, &restored).expect("affinity");
            assert_eq!(sched_getaffinity(None).expect("affinity"), two);
        })
        .join()
        .expect("test thread");
    }
}
