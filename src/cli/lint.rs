//! `kubectl ksm lint PATH...`

use std::path::PathBuf;

use clap::Args;

use super::input::{self, InputError};
use super::{CliResult, EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, formats};
use crate::core::lint::{self, Linter};
use crate::core::threads::Helpers;
use crate::diag::{Diagnostic, Severity, Source};
use crate::output::stream::{self as render, Rendered, Renderer, Summary};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm lint smp.yaml
  kubectl ksm lint manifests/ -o sarif > lint.sarif
  kubectl ksm lint --explain KSM204

Exit codes: 0 no errors, 1 errors (or warnings with --strict), 2 unreadable input.")]
pub struct LintArgs {
    /// Files or directories (searched recursively for *.yaml, *.yml, *.json); `-` reads stdin
    #[arg(value_name = "PATH", required_unless_present_any = ["explain", "list_rules"])]
    pub paths: Vec<PathBuf>,
    /// Fail (exit 1) on warnings too
    #[arg(long)]
    pub strict: bool,
    /// The lint configuration (default: the nearest .kubectl-ksm.yaml from the current
    /// directory up): excluded paths, disabled codes, the placeholders' severity
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Template placeholders (`${VAR}`, `$VAR`, `<name>`, KSM402): report them as errors, as
    /// warnings, or not at all (a repository of templates)
    /// [default: warning, or the configuration's lint.placeholders]
    #[arg(long, value_name = "SEVERITY", value_parser = ["error", "warning", "ignore"])]
    pub placeholders: Option<String>,
    /// Print the documentation of a code (lint, render or doctor: KSM204, KSM609, or its name)
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
    /// List every check with its code and title
    #[arg(long)]
    pub list_rules: bool,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
    /// Files linted at once (default: the CPUs this process may use); the report is the same
    /// whatever the number, in input order
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

/// The formats of `lint -o`.
pub const FORMATS: &[OutputFormat] = &[
    OutputFormat::Human,
    OutputFormat::Json,
    OutputFormat::Sarif,
    OutputFormat::Github,
];

/// One input, read, linted and its findings rendered for the report: what the thread that
/// writes the report needs of it (its findings stay where they were found, and are dropped
/// there).
struct Linted {
    name: String,
    /// Its totals (one file).
    summary: Summary,
    /// What is checked across inputs (None: it could not be read).
    across: Option<(lint::rules::provider_name::Providers, lint::Across)>,
    /// The input could not be read to its end.
    unreadable: bool,
    rendered: Rendered,
    /// The bytes of the input read.
    read: usize,
}

impl Linted {
    /// About what it holds while it waits to be handed over: its input's size (what its
    /// findings keep of it is smaller), its report's, and a share for the rest.
    fn weight(&self) -> usize {
        self.read + self.rendered.size() + 2048
    }
}

/// Lints one input and renders its findings, on `threads` threads when it is large (the
/// files of a run linted one at a time: [`lint::lint_source_on`], [`Renderer::render_on`]).
fn lint_input(
    input: Result<PathBuf, InputError>,
    linter: &Linter,
    renderer: &Renderer,
    stdin: &mut dyn std::io::Read,
    threads: usize,
) -> std::io::Result<Linted> {
    let mut summary = Summary {
        files: 1,
        ..Summary::default()
    };
    let (name, across, unreadable, diagnostics, read) = match input
        .and_then(|p| input::read_source(&p, stdin))
    {
        Ok(source) => {
            let r = lint::lint_source_on(&source, linter, threads);
            summary.documents = r.documents;
            summary.objects = r.linted;
            summary.skipped = r.skipped;
            summary.suppressed = r.suppressed;
            let read = source.text().len();
            let name = source.name().to_string();
            (
                name,
                Some((r.providers, r.across)),
                r.unreadable,
                r.diagnostics,
                read,
            )
        }
        Err(InputError { path, message }) => {
            let d = Diagnostic::error(UNREADABLE, message).in_file(&Source::new(path.clone(), ""));
            (path, None, true, vec![d], 0)
        }
    };
    summary.count(&diagnostics);
    let rendered = renderer.render_on(&diagnostics, threads)?;
    Ok(Linted {
        name,
        summary,
        across,
        unreadable,
        rendered,
        read,
    })
}

/// The CPUs this process may run on (its affinity, cgroup quota), as the standard library
/// reads them; 1 when unknown.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The inputs of a run found by `fill` (the walk, on this thread), linted on `jobs` threads as
/// they are found: this one (once the walk is done) and `jobs - 1` helpers (started with the
/// second input), each with its own [`Linter`] (its memos are per thread). Each file's
/// findings are rendered where it is linted, and the results handed to `each` in input order,
/// on this thread: between two files of its own it takes in what the helpers sent and hands
/// over what is next in order (no thread waits for every file's result, which cost a wake-up
/// and a switch per file). A thread takes the next input while it is at most `jobs` ahead of
/// the last one handed over (one of slack, so a thread done early does not wait for a slower
/// one), or further while the results waiting to be handed over weigh less than
/// [`WAITING_BYTES`] together (small files: a thread kept within `jobs` of the others
/// waited, and was woken, every few files); otherwise a helper waits and this thread takes
/// in the helpers' results. Memory stays bounded by that weight and `jobs + 1` times the
/// largest file, not by the sum of the files. A run of one input lints it on every job. A
/// failing `each` (stdout closed) stops the helpers after their current file. Helpers
/// started before the walk finds two inputs (`eager`) prepare what linting needs meanwhile
/// ([`lint::prepare_ahead`]). The helpers start off this thread's CPU ([`Helpers`]).
fn lint_parallel(
    jobs: usize,
    eager: bool,
    fill: &mut Fill<'_, Result<PathBuf, InputError>>,
    make_linter: &(dyn Fn() -> Linter + Sync),
    renderer: &Renderer,
    each: &mut dyn FnMut(Linted) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let lint = |linter: &Linter, input, threads| {
        lint_input(input, linter, renderer, &mut std::io::empty(), threads)
    };
    // While the walk reads a directory, the helpers prepare what the first file needs.
    let prepared = std::sync::atomic::AtomicUsize::new(0);
    let prepare = |ready: &dyn Fn() -> bool| lint::prepare_ahead(&prepared, ready);
    let walk = Walk {
        eager,
        fill,
        idle: &prepare,
    };
    in_order_on(jobs, walk, make_linter, &lint, &Linted::weight, each)
}

/// A walk: hands each input it finds to the function it is given, in order.
type Fill<'a, I> = dyn FnMut(&mut dyn FnMut(I)) -> std::io::Result<()> + 'a;

/// Where the inputs of [`in_order_on`] come from: `fill`, the walk (on the calling thread),
/// and whether the helpers start before it (`eager`: it takes a while), in which case they
/// first run `idle(ready)`, which is to return soon after `ready()` turns true.
struct Walk<'a, I> {
    eager: bool,
    fill: &'a mut Fill<'a, I>,
    idle: &'a (dyn Fn(&dyn Fn() -> bool) + Sync),
}

/// Inputs that arrive while they are worked on: pushed by the thread that finds them, each
/// taken once, by index, by any thread, which waits for one not found yet.
struct Feed<I> {
    state: std::sync::Mutex<FeedState<I>>,
    arrived: std::sync::Condvar,
}

struct FeedState<I> {
    items: Vec<Option<I>>,
    /// No more inputs will come.
    closed: bool,
    /// The threads waiting for an input (woken only when one waits: a wake-up is a system
    /// call).
    waiting: usize,
}

impl<I> Feed<I> {
    fn new() -> Self {
        Feed {
            state: std::sync::Mutex::new(FeedState {
                items: Vec::new(),
                closed: false,
                waiting: 0,
            }),
            arrived: std::sync::Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FeedState<I>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds an input; how many there are now.
    fn push(&self, item: I) -> usize {
        let mut st = self.lock();
        st.items.push(Some(item));
        let n = st.items.len();
        if st.waiting > 0 {
            drop(st);
            self.arrived.notify_all();
        }
        n
    }

    /// No more inputs: the threads waiting for one are let go.
    fn close(&self) {
        self.lock().closed = true;
        self.arrived.notify_all();
    }

    fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// Input `i`, once it and another are found (no other call gets it); None when the
    /// inputs end before it, or when it is the only one (which is the thread's that found
    /// it: [`in_order_on`]).
    fn take(&self, i: usize) -> Option<I> {
        let mut st = self.lock();
        while st.items.len() <= i.max(1) && !st.closed {
            st.waiting += 1;
            st = self.arrived.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiting -= 1;
        }
        if st.items.len() < 2 {
            return None;
        }
        st.items.get_mut(i).and_then(Option::take)
    }

    /// Inputs may be taken (there are two), or none will come.
    fn ready(&self) -> bool {
        let st = self.lock();
        st.items.len() >= 2 || st.closed
    }

    /// The only input, when the inputs ended with one.
    fn only(&self) -> Option<I> {
        let mut st = self.lock();
        if st.closed && st.items.len() == 1 {
            st.items[0].take()
        } else {
            None
        }
    }
}

/// `work(state, input, threads)` for every input the walk finds, on `jobs` threads, each
/// with its own `state`, the results handed to `each` in order on this thread, held at most
/// as [`lint_parallel`] says (`weight`: what a result holds). `threads` is how many threads
/// the work may use: all `jobs` when it is the run's only input, else one.
fn in_order_on<I: Send, S, T: Send>(
    jobs: usize,
    walk: Walk<'_, I>,
    state: &(dyn Fn() -> S + Sync),
    work: &(dyn Fn(&S, I, usize) -> std::io::Result<T> + Sync),
    weight: &(dyn Fn(&T) -> usize + Sync),
    each: &mut dyn FnMut(T) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex, mpsc};

    let window = jobs + 1;
    // What the results produced and not yet handed over weigh.
    let waiting_bytes = AtomicUsize::new(0);
    // Input `i` may be taken once `done` are handed over.
    let may_take = |i: usize, done: usize| {
        i < done + window || waiting_bytes.load(Ordering::Relaxed) < WAITING_BYTES
    };
    let produce = |state: &S, input: I, threads: usize| {
        let result = work(state, input, threads);
        if let Ok(r) = &result {
            waiting_bytes.fetch_add(weight(r), Ordering::Relaxed);
        }
        result
    };
    let feed = Feed::new();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let helpers = Helpers::new();
    // How many results were handed over and how many helpers wait on the window, and their
    // wake-up (only when one waits: a wake-up is a system call).
    let handed = (Mutex::new((0usize, 0usize)), Condvar::new());
    // Stops every thread, waking those that wait on the window (under the lock, so that none
    // is between its look at `stop` and its wait) or for an input.
    let stop_all = || {
        stop.store(true, Ordering::Relaxed);
        drop(handed.0.lock().unwrap_or_else(|e| e.into_inner()));
        handed.1.notify_all();
        feed.close();
    };
    // A thread that panics stops the others (then the panic is the run's, not a hang).
    struct OnPanic<F: Fn()>(F);
    impl<F: Fn()> Drop for OnPanic<F> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                (self.0)();
            }
        }
    }
    let Walk { eager, fill, idle } = walk;
    let (tx, rx) = mpsc::channel::<(usize, std::io::Result<T>)>();
    std::thread::scope(|scope| {
        let _stops = OnPanic(&stop_all);
        let spawn_helpers = || {
            for _ in 1..jobs {
                let tx = tx.clone();
                let (feed, next, stop, handed) = (&feed, &next, &stop, &handed);
                let (may_take, produce, stop_all) = (&may_take, &produce, &stop_all);
                helpers.spawn(scope, move || {
                    let _stops = OnPanic(stop_all);
                    let state = state();
                    idle(&|| stop.load(Ordering::Relaxed) || feed.ready());
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(input) = feed.take(i) else {
                            return;
                        };
                        {
                            let (lock, wake) = handed;
                            let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
                            while !may_take(i, st.0) && !stop.load(Ordering::Relaxed) {
                                st.1 += 1;
                                st = wake.wait(st).unwrap_or_else(|e| e.into_inner());
                                st.1 -= 1;
                            }
                        }
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        if tx.send((i, produce(&state, input, 1))).is_err() {
                            return;
                        }
                    }
                });
            }
            helpers.settle();
        };
        // The helpers start with the second input, or before the walk when it is `eager`
        // (they take none until there are two: a run of one input lints it on every job).
        let mut started = false;
        if eager && jobs > 1 {
            spawn_helpers();
            started = true;
        }
        let filled = fill(&mut |input| {
            if feed.push(input) == 2 && !started && jobs > 1 {
                spawn_helpers();
                started = true;
            }
        });
        feed.close();
        drop(tx);
        if let Err(e) = filled {
            stop_all();
            return Err(e);
        }
        let count = feed.len();
        if let Some(only) = feed.only() {
            let result = work(&state(), only, jobs).and_then(&mut *each);
            if result.is_err() {
                stop_all();
            }
            return result;
        }
        let mut waiting: BTreeMap<usize, std::io::Result<T>> = BTreeMap::new();
        let mut written = 0;
        // Hands over the results that are next in order; how many are handed over by now.
        let mut hand_over =
            |waiting: &mut BTreeMap<usize, std::io::Result<T>>| -> std::io::Result<usize> {
                let before = written;
                while let Some(result) = waiting.remove(&written) {
                    if let Ok(r) = &result {
                        waiting_bytes.fetch_sub(weight(r), Ordering::Relaxed);
                    }
                    result.and_then(&mut *each)?;
                    written += 1;
                }
                if written != before {
                    let (lock, wake) = &handed;
                    let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
                    st.0 = written;
                    if st.1 > 0 {
                        drop(st);
                        wake.notify_all();
                    }
                }
                Ok(written)
            };
        let state = state();
        let result = (|| -> std::io::Result<()> {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count || stop.load(Ordering::Relaxed) {
                    break;
                }
                // Past the window: an earlier input is still on a helper; take in results
                // until this one is within it.
                loop {
                    waiting.extend(rx.try_iter());
                    if may_take(i, hand_over(&mut waiting)?) {
                        break;
                    }
                    match rx.recv() {
                        Ok((j, result)) => {
                            waiting.insert(j, result);
                        }
                        Err(_) => break,
                    }
                }
                let Some(input) = feed.take(i) else {
                    break;
                };
                waiting.insert(i, produce(&state, input, 1));
                waiting.extend(rx.try_iter());
                hand_over(&mut waiting)?;
            }
            for (i, result) in rx.iter() {
                waiting.insert(i, result);
                hand_over(&mut waiting)?;
            }
            hand_over(&mut waiting).map(|_| ())
        })();
        if result.is_err() {
            stop_all();
        }
        result
    })
}

/// What the results of a run waiting to be handed over may weigh before a thread that would
/// take an input more than `jobs` ahead waits ([`lint_parallel`]).
const WAITING_BYTES: usize = 1 << 20;

/// The problems of unreadable inputs get this code (documented with KSM001).
const UNREADABLE: &str = "KSM000"; // documented in core::lint::rules::load

pub fn run(args: &LintArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    if let Some(code) = &args.explain {
        return super::explain(code, io);
    }
    if args.list_rules {
        for r in lint::all_rules() {
            writeln!(
                io.stdout,
                "{}  {:<8} {:<32} {}",
                r.code,
                r.severity.as_str(),
                r.name,
                r.title
            )?;
        }
        return Ok(EXIT_OK);
    }
    let config = super::lint_config::LintConfig::find(args.config.as_deref())?;
    let placeholders = args
        .placeholders
        .as_deref()
        .or(config.placeholders.as_deref())
        .unwrap_or("warning");
    let disabled = config.disabled.clone();
    let placeholders = match placeholders {
        "error" => Some(Severity::Error),
        "ignore" => None,
        _ => Some(Severity::Warning),
    };
    let make_linter = || Linter {
        disabled: disabled.clone(),
        placeholders,
        ..Linter::default()
    };
    let mut summary = Summary::default();
    let mut warnings = false;
    let mut unreadable = false;
    let format = match args.output {
        OutputFormat::Json => render::Format::Json,
        OutputFormat::Sarif => render::Format::Sarif,
        OutputFormat::Github => render::Format::Github,
        _ => render::Format::Human {
            color: io.color,
            width: io.width,
        },
    };
    // Each file's diagnostics are written once it is linted, and dropped with its source:
    // memory is bounded by the largest file, not by the sum of them.
    let mut report = render::Stream::begin(io.stdout, format)?;
    let walker = config.walker()?;
    // The notes of the walk and the per-file lines of -v.
    let stderr = std::cell::RefCell::new(&mut *io.stderr);
    // The SMPs and provider references of every input, checked together at the end.
    let mut providers = lint::rules::provider_name::Providers::default();
    let mut across_inputs = lint::Across::default();
    let verbose = global.verbosity > 0;
    let renderer = report.renderer();
    let mut each = |linted: Linted| -> std::io::Result<()> {
        let file = &linted.summary;
        if verbose && linted.across.is_some() {
            use crate::output::count;
            writeln!(
                stderr.borrow_mut(),
                "{}: {}, {} checked, {} skipped, {}",
                linted.name,
                count(file.documents, "document"),
                count(file.objects, "object"),
                file.skipped,
                count(file.errors + file.warnings + file.notes, "finding")
            )?;
        }
        if let Some((p, a)) = linted.across {
            providers.absorb(p);
            across_inputs.absorb(a);
        }
        summary.add(file);
        unreadable |= linted.unreadable;
        warnings |= file.warnings > 0;
        report.write_rendered(&linted.rendered)
    };
    // The inputs as the walk finds them; its notes once it is done, before any report.
    let mut fill = |push: &mut dyn FnMut(Result<PathBuf, InputError>)| -> std::io::Result<()> {
        let mut notes = Vec::new();
        walker.walk(&args.paths, push, &mut notes);
        for note in &notes {
            writeln!(stderr.borrow_mut(), "note: {note}")?;
        }
        Ok(())
    };
    let jobs = usize::from(args.jobs.unwrap_or(0));
    let jobs = if jobs == 0 { default_jobs() } else { jobs };
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        // Standard input is read by this thread: one input at a time, each on every job.
        let linter = make_linter();
        let mut inputs = Vec::new();
        fill(&mut |input| inputs.push(input))?;
        for input in inputs {
            each(lint_input(input, &linter, &renderer, io.stdin, jobs)?)?;
        }
    } else {
        // A directory or several paths: the helpers start before the walk, which takes a
        // while, and are ready when it finds the second input.
        let eager = args.paths.len() > 1 || args.paths.iter().any(|p| p.is_dir());
        lint_parallel(jobs, eager, &mut fill, &make_linter, &renderer, &mut each)?;
    }
    let mut across = providers.findings();
    across.extend(across_inputs.findings());
    // The configuration's disabled codes hold across inputs too.
    across.retain(|d| !disabled.contains(&d.code));
    summary.count(&across);
    warnings |= across.iter().any(|d| d.severity == Severity::Warning);
    report.write(&across)?;
    report.finish(&summary)?;
    Ok(if unreadable {
        EXIT_ERROR
    } else if summary.errors > 0 || (args.strict && warnings) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files to lint: the first large (slow), the others small, and one unreadable.
    fn inputs(dir: &std::path::Path) -> Vec<Result<PathBuf, InputError>> {
        std::fs::create_dir_all(dir).unwrap();
        let smp = |i: usize| {
            format!(
                "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\n\
                 metadata:\n  name: p{i}\nspec:\n  selector: {{}}\n  unknownField: {i}\n"
            )
        };
        (0..120)
            .map(|i| {
                if i == 7 {
                    return Err(InputError {
                        path: "gone.yaml".into(),
                        message: "no such file".into(),
                    });
                }
                let path = dir.join(format!("f{i:03}.yaml"));
                let text = if i == 0 {
                    (0..2_000).map(smp).collect()
                } else {
                    smp(i)
                };
                std::fs::write(&path, text).unwrap();
                Ok(path)
            })
            .collect()
    }

    fn walk<'a, I>(
        eager: bool,
        fill: &'a mut Fill<'a, I>,
        idle: &'a (dyn Fn(&dyn Fn() -> bool) + Sync),
    ) -> Walk<'a, I> {
        Walk { eager, fill, idle }
    }

    /// The walk of a run that finds `inputs`.
    fn given(
        inputs: &[Result<PathBuf, InputError>],
    ) -> impl FnMut(&mut dyn FnMut(Result<PathBuf, InputError>)) -> std::io::Result<()> + '_ {
        |push| {
            inputs.iter().cloned().for_each(push);
            Ok(())
        }
    }

    /// The walk of a run of `n` inputs, 0 to `n - 1`.
    fn count(n: usize) -> impl FnMut(&mut dyn FnMut(usize)) -> std::io::Result<()> {
        move |push| {
            (0..n).for_each(push);
            Ok(())
        }
    }

    #[test]
    fn results_are_handed_over_in_input_order_and_a_failure_stops_the_run() {
        let dir = std::env::temp_dir().join(format!("ksm-parallel-{}", std::process::id()));
        let inputs = inputs(&dir);
        let mut out = Vec::new();
        let stream = render::Stream::begin(&mut out, render::Format::Github).unwrap();
        let renderer = stream.renderer();
        for (jobs, eager) in [(2, false), (3, true), (8, false), (2, true)] {
            let mut names = Vec::new();
            lint_parallel(
                jobs,
                eager,
                &mut given(&inputs),
                &Linter::default,
                &renderer,
                &mut |l| {
                    names.push(l.name);
                    Ok(())
                },
            )
            .unwrap();
            let want: Vec<String> = inputs
                .iter()
                .map(|i| match i {
                    Ok(p) => p.display().to_string(),
                    Err(e) => e.path.clone(),
                })
                .collect();
            assert_eq!(names, want, "{jobs} jobs");
            // A failure (stdout closed) is returned, and nothing is handed over after it.
            let mut handed = 0;
            let err = lint_parallel(
                jobs,
                eager,
                &mut given(&inputs),
                &Linter::default,
                &renderer,
                &mut |_| {
                    handed += 1;
                    if handed == 50 {
                        Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
                    } else {
                        Ok(())
                    }
                },
            )
            .unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
            assert_eq!(handed, 50, "{jobs} jobs");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn light_results_let_threads_run_ahead_and_heavy_ones_do_not() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Condvar, Mutex};
        for (jobs, eager) in [(2, false), (3, true), (2, true)] {
            // Light results: input 0 is held until input 40 has started, which only threads
            // running more than `jobs + 1` ahead of the results handed over reach. (The wait's
            // limit only ends a run in which they never do.)
            let started = (Mutex::new(0usize), Condvar::new());
            let work = |_: &(), i: usize, _| -> std::io::Result<usize> {
                let (max, moved) = &started;
                let mut m = max.lock().unwrap();
                *m = (*m).max(i);
                moved.notify_all();
                if i == 0 {
                    let limit = std::time::Duration::from_secs(120);
                    let (m, waited) = moved.wait_timeout_while(m, limit, |m| *m < 40).unwrap();
                    drop(m);
                    assert!(!waited.timed_out(), "{jobs} jobs: input 40 never started");
                }
                Ok(i)
            };
            let mut got = Vec::new();
            in_order_on(
                jobs,
                walk(eager, &mut count(100), &|_| ()),
                &|| (),
                &work,
                &|_| 100,
                &mut |i| {
                    got.push(i);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(got, (0..100).collect::<Vec<_>>());

            // Heavy results (each past the weight allowed): no input starts more than `jobs`
            // ahead of those handed over.
            let handed = AtomicUsize::new(0);
            let lead = AtomicUsize::new(0);
            let work = |_: &(), i: usize, _| -> std::io::Result<usize> {
                lead.fetch_max(
                    i.saturating_sub(handed.load(Ordering::SeqCst)),
                    Ordering::SeqCst,
                );
                Ok(i)
            };
            in_order_on(
                jobs,
                walk(eager, &mut count(300), &|_| ()),
                &|| (),
                &work,
                &|_| WAITING_BYTES,
                &mut |_| {
                    handed.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                },
            )
            .unwrap();
            assert!(lead.load(Ordering::SeqCst) <= jobs, "{jobs} jobs");
        }
    }

    #[test]
    fn a_run_of_one_input_works_it_on_every_job_and_a_failed_walk_stops_the_run() {
        use std::sync::Mutex;
        use std::sync::atomic::{AtomicUsize, Ordering};
        for (jobs, eager) in [(1, false), (2, false), (2, true), (4, true)] {
            for n in [0usize, 1, 2, 5] {
                let threads = Mutex::new(Vec::new());
                let work = |_: &(), i: usize, t: usize| -> std::io::Result<usize> {
                    threads.lock().unwrap().push((i, t));
                    Ok(i)
                };
                // A helper waits in `idle` until inputs may be taken or none will come.
                let idled = AtomicUsize::new(0);
                let idle = |ready: &dyn Fn() -> bool| {
                    idled.fetch_add(1, Ordering::SeqCst);
                    while !ready() {
                        std::thread::yield_now();
                    }
                };
                let mut got = Vec::new();
                in_order_on(
                    jobs,
                    walk(eager, &mut count(n), &idle),
                    &|| (),
                    &work,
                    &|_| 0,
                    &mut |i| {
                        got.push(i);
                        Ok(())
                    },
                )
                .unwrap();
                assert_eq!(got, (0..n).collect::<Vec<_>>(), "{jobs} jobs, {n} inputs");
                let helpers = if eager || n >= 2 { jobs - 1 } else { 0 };
                assert_eq!(
                    idled.load(Ordering::SeqCst),
                    helpers,
                    "{jobs} jobs, {n} inputs"
                );
                let threads = threads.into_inner().unwrap();
                if n == 1 {
                    assert_eq!(threads, [(0, jobs)], "{jobs} jobs");
                } else {
                    assert!(
                        threads.iter().all(|&(_, t)| t == 1),
                        "{jobs} jobs, {n} inputs"
                    );
                }
            }
            // The walk fails after three inputs: its error is the run's, nothing is handed
            // over, and no thread waits for a fourth.
            let mut handed = 0;
            let err = in_order_on(
                jobs,
                walk(
                    eager,
                    &mut |push: &mut dyn FnMut(usize)| {
                        (0..3).for_each(push);
                        Err(std::io::Error::other("walk"))
                    },
                    &|_| (),
                ),
                &|| (),
                &|_: &(), i: usize, _| Ok(i),
                &|_| 0,
                &mut |_| {
                    handed += 1;
                    Ok(())
                },
            )
            .unwrap_err();
            assert_eq!(err.to_string(), "walk");
            assert_eq!(handed, 0, "{jobs} jobs");
        }
    }

    #[test]
    fn a_panic_on_any_thread_is_the_runs_not_a_hang() {
        // Input 5 panics on whichever thread takes it; the others wait on the window (heavy
        // results) or are taking in results: all are let go, and the panic reaches the caller.
        for (jobs, eager) in [(2, false), (3, true), (8, false), (2, true)] {
            for weight in [0, WAITING_BYTES] {
                let work = |_: &(), i: usize, _| -> std::io::Result<usize> {
                    assert_ne!(i, 5, "the input that panics");
                    Ok(i)
                };
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    in_order_on(
                        jobs,
                        walk(eager, &mut count(200), &|_| ()),
                        &|| (),
                        &work,
                        &|_| weight,
                        &mut |_| Ok(()),
                    )
                }));
                assert!(run.is_err(), "{jobs} jobs");
            }
        }
    }
}
