//! Compiling a rule: parse (our parser, which builds our tree; the `cel` crate's only for the
//! messages of a rule ours rejects), resolve its names, type-check, and plan. A short and shallow rule, as
//! readiness rules are, is compiled on the caller's thread; any other on a thread with a large
//! stack.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{
    CompileError, CompileErrorKind, CompiledRule, Declarations, Limits, Options, ast, checker,
    parse, plan, types::CelType,
};

/// What a compile gives.
pub type Output = Result<CompiledRule, Vec<CompileError>>;

/// Stack size of the thread that parses and checks a rule: deep trees are refused cleanly
/// by the limits, but the parser itself recurses before it can refuse.
const COMPILE_STACK: usize = 256 << 20;

/// Hard ceiling of the tree depth evaluated on the caller's stack.
const MAX_DEPTH_CEILING: u16 = 1000;

/// Rules up to this many code points are compiled on the caller's thread when shallow (see
/// [`compile_here`]), otherwise on the long-lived compiler thread (readiness rules are a few
/// hundred); longer ones, whose parse may go deep into the stack, get a thread of their own,
/// so the long-lived thread never keeps a large stack resident.
const WORKER_MAX_CODE_POINTS: usize = 1024;

/// The nesting (`expr` rules open, as the recursion limit counts them) our parser may reach
/// on the caller's stack, and the depth of the tree then converted and checked there. Deeper
/// rules go to the compiler thread.
const HERE_MAX_NESTING: u16 = 32;
const HERE_MAX_DEPTH: usize = 64;

/// Compiles `rule`.
pub fn compile_with(rule: &str, limits: &Limits, decls: &Declarations, options: Options) -> Output {
    let size = rule.chars().count();
    if size > limits.max_code_points {
        let error = vec![CompileError {
            kind: CompileErrorKind::Syntax,
            message: format!(
                "expression code point size exceeds limit: size: {size}, limit {}",
                limits.max_code_points
            ),
            span: None,
        }];
        return Err(error);
    }
    if size <= WORKER_MAX_CODE_POINTS
        && let Some(compiled) = compile_here(rule, limits, decls, options)
    {
        return compiled;
    }
    let source = rule.to_string();
    let limits = limits.clone();
    let decls = decls.clone();
    let job = move || compile_inner(source, &limits, &decls, options);
    // Parse and check on a thread with a large stack; the parser's tree is dropped there too.
    // Short rules go to a long-lived compiler thread (starting a thread per rule costs more
    // than compiling it); long ones, and callers that find it busy, get a thread of their own.
    let job: Box<dyn FnOnce() -> Output + Send> = if size <= WORKER_MAX_CODE_POINTS {
        match worker::run(job) {
            Ok(Ok(result)) => return result,
            Ok(Err(_panicked)) => return internal_error(),
            Err(job) => job,
        }
    } else {
        Box::new(job)
    };
    match std::thread::Builder::new()
        .name("cel-compile".into())
        .stack_size(COMPILE_STACK)
        .spawn(job)
    {
        Ok(handle) => handle.join().unwrap_or_else(|_| internal_error()),
        Err(_) => {
            let error = vec![CompileError {
                kind: CompileErrorKind::Syntax,
                message: "cannot start the compiler thread".into(),
                span: None,
            }];
            Err(error)
        }
    }
}

fn internal_error() -> Output {
    let error = vec![CompileError {
        kind: CompileErrorKind::Syntax,
        message: "internal error while compiling the expression".into(),
        span: None,
    }];
    Err(error)
}

/// Compiles a rule our parser accepts within [`HERE_MAX_NESTING`], into a tree no deeper than
/// [`HERE_MAX_DEPTH`], on the caller's thread: the stack that takes is small and bounded, and
/// the rule is spared the hand-over to the compiler thread (most of a short rule's compile
/// time on one core). None for any other rule (not parsed, or deeper): it goes to the
/// compiler thread, which parses it again with the real limits.
fn compile_here(
    rule: &str,
    limits: &Limits,
    decls: &Declarations,
    options: Options,
) -> Option<Output> {
    let max_depth = limits.max_recursion_depth.min(MAX_DEPTH_CEILING);
    let nesting = max_depth.min(HERE_MAX_NESTING);
    let parsed = parse::parse(rule, options.macros, decls.strings_ext, nesting).ok()?;
    if parsed.depth > HERE_MAX_DEPTH {
        return None;
    }
    let compile = || compile_parsed(rule, parsed, limits, decls, options);
    Some(catch_unwind(AssertUnwindSafe(compile)).unwrap_or_else(|_| internal_error()))
}

/// The long-lived compiler threads: one per calling thread (so threads that lint or
/// reconcile at once never wait for each other nor start a thread per rule), jobs handed
/// over and waited for. A compiler thread ends with the thread it serves.
mod worker {
    use std::cell::RefCell;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

    use super::{COMPILE_STACK, Output};

    /// A job returns its result, or `Err` if it panicked.
    type Job = Box<dyn FnOnce() -> Output + Send>;
    type Reply = std::thread::Result<Output>;

    struct Worker {
        jobs: SyncSender<Job>,
        replies: Receiver<Reply>,
    }

    thread_local! {
        /// This thread's compiler thread, started on its first compile.
        static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
    }

    fn start() -> Option<Worker> {
        let (jobs, job_rx) = sync_channel::<Job>(0);
        let (reply_tx, replies) = sync_channel::<Reply>(1);
        std::thread::Builder::new()
            .name("cel-compile".into())
            .stack_size(COMPILE_STACK)
            .spawn(move || {
                for job in job_rx {
                    let reply = catch_unwind(AssertUnwindSafe(job));
                    if reply_tx.send(reply).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Worker { jobs, replies })
    }

    /// Runs `job` on this thread's compiler thread. Gives the job back when that thread is
    /// busy (a compile within a compile) or cannot be started.
    pub(super) fn run(
        job: impl FnOnce() -> Output + Send + 'static,
    ) -> Result<Reply, Box<dyn FnOnce() -> Output + Send>> {
        let job: Job = Box::new(job);
        WORKER.with(|cell| match cell.try_borrow_mut() {
            Ok(mut guard) => run_on(&mut guard, job),
            Err(_) => Err(job),
        })
    }

    fn run_on(
        guard: &mut Option<Worker>,
        job: Job,
    ) -> Result<Reply, Box<dyn FnOnce() -> Output + Send>> {
        if guard.is_none() {
            *guard = start();
        }
        let Some(worker) = guard.as_ref() else {
            return Err(job);
        };
        if let Err(returned) = worker.jobs.send(job) {
            // The thread is gone: start afresh next time, and compile elsewhere now.
            *guard = None;
            return Err(returned.0);
        }
        match worker.replies.recv() {
            Ok(reply) => Ok(reply),
            Err(_) => {
                *guard = None;
                Ok(Err(Box::new("the compiler thread stopped")))
            }
        }
    }
}

fn line_col_to_offset(source: &str, line: isize, col: isize) -> Option<usize> {
    if line < 1 || col < 0 {
        return None;
    }
    let mut offset = 0usize;
    for (i, l) in source.split_inclusive('\n').enumerate() {
        if i as isize + 1 == line {
            // the column counts characters
            let byte = l
                .char_indices()
                .nth(col as usize)
                .map(|(b, _)| b)
                .unwrap_or(l.len());
            return Some(offset + byte);
        }
        offset += l.len();
    }
    Some(source.len())
}

fn compile_inner(
    source: String,
    limits: &Limits,
    decls: &Declarations,
    options: Options,
) -> Output {
    let max_depth = limits.max_recursion_depth.min(MAX_DEPTH_CEILING);
    match parse::parse(&source, options.macros, decls.strings_ext, max_depth) {
        Ok(parsed) => compile_parsed(&source, parsed, limits, decls, options),
        Err(_) => Err(crate_parse_rule(&source, options.macros, max_depth)),
    }
}

/// The errors of a rule our parser rejects, from the `cel` crate's parser, whose messages
/// are cel-go's. Should the crate accept it (the two parsers disagree, which the
/// differential tests look for), an error saying so.
fn crate_parse_rule(source: &str, macros: bool, max_depth: u16) -> Vec<CompileError> {
    if source.len() > CRATE_PARSER_MAX_BYTES {
        return vec![long_rule_syntax_error(source, macros, max_depth)];
    }
    let parser = if macros {
        ::cel::parser::Parser::new()
    } else {
        ::cel::Env::default().parser()
    };
    let parsed = parser
        .enable_optional_syntax(false)
        .enable_ident_escape_syntax(true)
        .max_recursion_depth(max_depth)
        .parse_with_source_info(source);
    match parsed {
        Ok(_) => {
            let at = parse::rejected_at(source, macros, max_depth).filter(|s| !s.is_empty());
            vec![CompileError {
                kind: CompileErrorKind::Syntax,
                message: "kubectl-ksm's CEL parser rejects this rule, which cel-go's grammar \
                          accepts: please report it"
                    .into(),
                span: at,
            }]
        }
        Err(errs) => {
            let mut out: Vec<CompileError> = Vec::new();
            for e in errs.errors {
                let (message, span) = if e.msg.contains("Recursion limit of") {
                    (
                        format!("expression recursion limit exceeded: {max_depth}"),
                        None,
                    )
                } else {
                    let at = line_col_to_offset(source, e.pos.0, e.pos.1);
                    let span = at.map(|a| {
                        let end = source[a..].chars().next().map_or(a, |c| a + c.len_utf8());
                        a..end
                    });
                    (e.msg.clone(), span)
                };
                if !out.iter().any(|o| o.message == message) {
                    out.push(CompileError {
                        message,
                        span,
                        kind: CompileErrorKind::Syntax,
                    });
                }
            }
            if out.is_empty() {
                out.push(CompileError {
                    kind: CompileErrorKind::Syntax,
                    message: "syntax error".into(),
                    span: None,
                });
            }
            out
        }
    }
}

/// The longest rule whose syntax errors the `cel` crate's parser explains (cel-go's messages):
/// it takes about 2.6 KB of memory per byte of a rule (a list literal), so a longer rule
/// with an error would take it past the memory budget. Such a rule gets our parser's word
/// instead: where it stopped.
pub const CRATE_PARSER_MAX_BYTES: usize = 32 * 1024;

fn long_rule_syntax_error(source: &str, macros: bool, max_depth: u16) -> CompileError {
    let span = parse::rejected_at(source, macros, max_depth);
    let why = format!(
        "(the rule is {} bytes long: cel-go's own message is given for rules of up to {} bytes)",
        source.len(),
        CRATE_PARSER_MAX_BYTES
    );
    let message = match &span {
        Some(s) if s.is_empty() => format!("syntax error: unexpected end of the rule {why}"),
        Some(s) => {
            let token: String = source[s.clone()].chars().take(40).collect();
            format!("syntax error at {token:?} {why}")
        }
        None => format!("syntax error: a token cannot be read {why}"),
    };
    CompileError {
        kind: CompileErrorKind::Syntax,
        message,
        span: span.filter(|s| !s.is_empty()),
    }
}

/// What [`build`] makes of a tree.
#[derive(Debug)]
pub(crate) struct Built {
    pub root: ast::Node,
    pub slot_count: usize,
    pub result_type: CelType,
    pub plan_error: Option<String>,
}

/// Resolves the names of a parsed rule, checks and plans it. `direct_paths` makes the paths
/// from declared variables in the resolution (the compile's way) instead of after the check
/// only (the tests compare the two).
pub(crate) fn build(
    source: &str,
    parsed: parse::Parse,
    decls: &Declarations,
    options: Options,
    direct_paths: bool,
) -> Result<Built, Vec<CompileError>> {
    let parse::Parse {
        mut root,
        names,
        errors,
        ..
    } = parsed;
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut resolver = ast::resolve::Resolver::new(source, &names, &decls.variables);
    resolver.direct_paths = direct_paths;
    resolver.resolve(&mut root);
    let slot_count = resolver.slot_count;
    let result_type = if options.check {
        let declared = decls.variables.iter().map(|(_, t)| t.clone());
        let mut checker = checker::Checker::new(declared, slot_count, decls.strings_ext);
        let t = checker.check_root(&mut root);
        if !checker.errors.is_empty() {
            let mut errs = checker.errors;
            errs.sort_by_key(|e| e.span.as_ref().map_or(0, |s| s.start));
            return Err(errs);
        }
        t
    } else {
        CelType::Dyn
    };
    ast::fuse_paths(&mut root);
    ast::share_field_names(&mut root);
    let plan_error = if options.optimize {
        plan::plan(&mut root, slot_count)
    } else {
        None
    };
    Ok(Built {
        root,
        slot_count,
        result_type,
        plan_error,
    })
}

/// Resolves, checks and plans a parsed rule.
fn compile_parsed(
    source: &str,
    parsed: parse::Parse,
    limits: &Limits,
    decls: &Declarations,
    options: Options,
) -> Output {
    let max_depth = limits.max_recursion_depth.min(MAX_DEPTH_CEILING);
    if parsed.depth > max_depth as usize {
        let error = vec![CompileError {
            kind: CompileErrorKind::Syntax,
            message: "max recursion depth exceeded".into(),
            span: None,
        }];
        return Err(error);
    }
    let built = build(source, parsed, decls, options, true);
    let Built {
        root,
        slot_count,
        result_type,
        plan_error,
    } = built?;
    let compiled = CompiledRule {
        source: source.to_string(),
        root,
        slot_count,
        reads: std::sync::OnceLock::new(),
        declared: decls.variables.len(),
        result_type,
        limits: limits.clone(),
        plan_error,
    };
    Ok(compiled)
}
