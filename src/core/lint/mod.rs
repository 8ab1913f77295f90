//! `lint`: checks of k0rdent manifests, one file per check under `rules/`, each with a stable
//! code, a title and its documentation (shown by `kubectl ksm lint --explain CODE`).
//!
//! Objects are linted one at a time from their YAML node (for spans) and JSON value (for
//! semantics). Readiness rules are compiled once per object and shared by the rule checks.

pub mod across;
pub mod rules;
pub mod suppress;

use std::borrow::Borrow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;

use crate::core::cel;
use crate::core::fxhash::FxHasher;
use crate::core::objects::{self, LoadedObject};
use crate::core::schema::PathSeg;
use crate::core::threads::{Helpers, beside};
use crate::diag::yaml::{self, Node};
use crate::diag::{Diagnostic, Source};

/// A lint check's identity and documentation: an entry of the code registry.
pub use crate::diag::CodeInfo as RuleInfo;

/// Every check, in code order (loading problems first).
pub fn all_rules() -> &'static [&'static RuleInfo] {
    rules::ALL
}

pub fn find_rule(code: &str) -> Option<&'static RuleInfo> {
    let code = code.trim();
    all_rules()
        .iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code) || r.name.eq_ignore_ascii_case(code))
}

/// The kinds `lint` checks: every kind of the kcm group (its CRDs are embedded), the ones
/// with checks of their own named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    StateManagementProvider,
    ServiceSet,
    ServiceTemplate,
    ClusterDeployment,
    MultiClusterService,
    ServiceTemplateChain,
    ClusterTemplateChain,
    /// Another kcm kind (ClusterTemplate, Credential, Region...): schema and name checks.
    Other(&'static str),
}

pub use crate::api::kinds::KCM_GROUP;
pub use across::Across;
pub use rules::health_rules;

impl Target {
    pub fn of(json: &Value) -> Option<Target> {
        let api_version = json.get("apiVersion")?.as_str()?;
        let (group, _) = api_version.split_once('/')?;
        if group != KCM_GROUP {
            return None;
        }
        Target::of_kind(json.get("kind")?.as_str()?)
    }

    /// The target of a kcm kind name (None for a kind the kcm group does not have).
    pub fn of_kind(kind: &str) -> Option<Target> {
        Some(match kind {
            "StateManagementProvider" => Target::StateManagementProvider,
            "ServiceSet" => Target::ServiceSet,
            "ServiceTemplate" => Target::ServiceTemplate,
            "ClusterDeployment" => Target::ClusterDeployment,
            "MultiClusterService" => Target::MultiClusterService,
            "ServiceTemplateChain" => Target::ServiceTemplateChain,
            "ClusterTemplateChain" => Target::ClusterTemplateChain,
            other => Target::Other(crate::api::kinds::kcm_kind(other)?.kind),
        })
    }

    pub fn kind(self) -> &'static str {
        match self {
            Target::StateManagementProvider => "StateManagementProvider",
            Target::ServiceSet => "ServiceSet",
            Target::ServiceTemplate => "ServiceTemplate",
            Target::ClusterDeployment => "ClusterDeployment",
            Target::MultiClusterService => "MultiClusterService",
            Target::ServiceTemplateChain => "ServiceTemplateChain",
            Target::ClusterTemplateChain => "ClusterTemplateChain",
            Target::Other(kind) => kind,
        }
    }

    /// Every kind lint checks.
    pub fn all() -> impl Iterator<Item = Target> {
        crate::api::kinds::ALL
            .iter()
            .filter(|k| k.group == KCM_GROUP)
            .filter_map(|k| Target::of_kind(k.kind))
    }
}

/// Settings shared by every object of a run.
#[derive(Debug)]
pub struct Linter {
    pub cel_limits: cel::Limits,
    pub yaml_limits: yaml::Limits,
    /// The severity of template placeholders (KSM402); None ignores them.
    pub placeholders: Option<crate::diag::Severity>,
    /// Codes the lint configuration disables.
    pub disabled: Vec<&'static str>,
    /// Compile results by rule text (compiled under `cel_limits`).
    pub(crate) compiled: Memo<String, Rc<CompileResult>>,
    /// KSM204 findings by rule (the compile its sites share) and what the target may omit.
    pub(crate) unguarded: Memo<(ByAddress<CompileResult>, usize), Rc<rules::UnguardedAnalysis>>,
}

impl Linter {
    /// What makes a linter with these settings and memos of its own, on any thread (a
    /// linter's memos are its thread's).
    fn maker(&self) -> impl Fn() -> Linter + Sync + '_ {
        let (cel_limits, yaml_limits, placeholders, disabled) = (
            &self.cel_limits,
            self.yaml_limits,
            self.placeholders,
            &self.disabled,
        );
        move || Linter {
            cel_limits: cel_limits.clone(),
            yaml_limits,
            placeholders,
            disabled: disabled.clone(),
            ..Linter::default()
        }
    }
}

/// Prepares what linting needs before its first object, on threads that would otherwise wait
/// (a run's helpers while the walk reads a directory): the CEL declarations, the codes and
/// the StateManagementProvider CRD, one step at a time, each taken once across the threads
/// (`next`), until `stop` says there is work to do or nothing is left. The other CRDs are
/// parsed when a file needs them: a step cannot be cut short, and one started as the walk
/// yields its files held the helper back by up to its parse (ServiceTemplate's 1.2 ms, the
/// time of 50 files; BENCHMARKS.md, "Helpers off their starter's CPU").
pub fn prepare_ahead(next: &std::sync::atomic::AtomicUsize, stop: &dyn Fn() -> bool) {
    while !stop() {
        match next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
            0 => cel::declare_ahead(),
            1 => crate::core::codes::gather_ahead(),
            2 => {
                crate::core::crds::crd(crate::api::kinds::STATE_MANAGEMENT_PROVIDER.kind);
            }
            _ => return,
        }
    }
}

impl Default for Linter {
    fn default() -> Self {
        Linter {
            cel_limits: cel::Limits::default(),
            yaml_limits: yaml::Limits::default(),
            placeholders: Some(crate::diag::Severity::Warning),
            disabled: Vec::new(),
            compiled: Memo::default(),
            unguarded: Memo::default(),
        }
    }
}

/// A bounded memo of a deterministic function's results: SMPs repeat their rules (the
/// provisioners of one SMP, the SMPs of a repository), and compiling and analysing a rule are
/// the costliest steps of linting one. Only short keys are remembered, at most
/// [`MEMO_MAX_ENTRIES`] of them; the memo starts afresh when full.
///
/// A key is remembered the second time it is asked for: the first time, only its hash is
/// noted. Rules that never repeat (every rule text different) then cost no copy of their key
/// and are not kept alive by the memo, and a repeated rule costs one more run of `f`.
#[derive(Debug)]
pub(crate) struct Memo<K, V> {
    map: RefCell<HashMap<K, V, BuildHasherDefault<FxHasher>>>,
    /// The hashes of the keys asked for once (at most [`MEMO_MAX_SEEN`], then afresh).
    seen: RefCell<HashSet<u64, BuildHasherDefault<FxHasher>>>,
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo {
            map: RefCell::new(HashMap::default()),
            seen: RefCell::new(HashSet::default()),
        }
    }
}

/// Rule texts longer than this (in bytes) are not remembered.
pub(crate) const MEMO_MAX_RULE_BYTES: usize = 1024;
const MEMO_MAX_ENTRIES: usize = 256;
const MEMO_MAX_SEEN: usize = 4096;

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// The value of `key`, made by `f` if not remembered; the key is copied only when
    /// remembered.
    pub(crate) fn get_or_insert_with<Q>(&self, key: &Q, f: impl FnOnce() -> V) -> V
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(v) = self.map.borrow().get(key) {
            return v.clone();
        }
        let v = f();
        let hash = BuildHasherDefault::<FxHasher>::default().hash_one(key);
        let mut seen = self.seen.borrow_mut();
        if seen.len() >= MEMO_MAX_SEEN {
            seen.clear();
        }
        if seen.insert(hash) {
            return v;
        }
        let mut map = self.map.borrow_mut();
        if map.len() >= MEMO_MAX_ENTRIES {
            map.clear();
        }
        map.insert(key.to_owned(), v.clone());
        v
    }

    /// How many keys are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.borrow().len()
    }
}

/// A memo key that is the identity of a shared value (which the key keeps alive, so that its
/// address is not reused while remembered).
#[derive(Debug)]
pub(crate) struct ByAddress<T>(pub(crate) Rc<T>);

impl<T> Clone for ByAddress<T> {
    fn clone(&self) -> Self {
        ByAddress(self.0.clone())
    }
}

impl<T> PartialEq for ByAddress<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> Eq for ByAddress<T> {}

impl<T> Hash for ByAddress<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Rc::as_ptr(&self.0) as usize).hash(state);
    }
}

/// A readiness rule of an SMP with where it is and what it reads.
pub struct RuleSite<'a> {
    /// JSON path of the rule string, e.g. `spec.provisioner[1].readinessRule`.
    pub path: Vec<PathSeg>,
    /// The scalar node holding the rule.
    pub node: &'a Node,
    pub text: &'a str,
    /// apiVersion and kind of the object the rule is evaluated against.
    pub target_api_version: &'a str,
    pub target_kind: &'a str,
    /// Shared with the other sites of the same rule text (see [`compile_rule`]).
    pub compiled: Rc<CompileResult>,
}

/// What a check sees of one object.
pub struct Context<'a> {
    pub object: &'a LoadedObject,
    pub target: Target,
    pub rules: Vec<RuleSite<'a>>,
    pub linter: &'a Linter,
}

impl<'a> Context<'a> {
    pub fn source(&self) -> &'a Arc<Source> {
        &self.object.source
    }

    pub fn root(&self) -> &'a Node {
        &self.object.node
    }

    pub fn json(&self) -> &'a Value {
        &self.object.json
    }

    /// The node at a JSON path (None if absent).
    pub fn node_at(&self, path: &[PathSeg]) -> Option<&'a Node> {
        node_at(self.root(), path)
    }

    /// The span to show for a path: the value if present, otherwise the nearest present
    /// ancestor's key (so "missing field" points at the mapping that lacks it).
    pub fn span_at(&self, path: &[PathSeg]) -> Range<usize> {
        self.source().first_line(span_at(self.root(), path, false))
    }

    /// The span of the key of the last path segment (for unknown fields).
    pub fn key_span_at(&self, path: &[PathSeg]) -> Range<usize> {
        self.source().first_line(span_at(self.root(), path, true))
    }

    /// A diagnostic pointing at `span` of this object's source.
    pub fn diag(
        &self,
        info: &RuleInfo,
        message: impl Into<String>,
        span: Range<usize>,
    ) -> Diagnostic {
        Diagnostic::new(info.code, info.severity, message).at(self.source(), span)
    }

    /// Byte range in the source of a range inside a rule's text.
    pub fn rule_span(&self, site: &RuleSite, range: Range<usize>) -> Range<usize> {
        let source = self.source();
        let start = site.node.value_offset_in_source(source, range.start);
        let end = if range.end > range.start {
            site.node.value_offset_in_source(source, range.end - 1) + 1
        } else {
            start
        };
        start..end.max(start)
    }
}

pub fn node_at<'n>(root: &'n Node, path: &[PathSeg]) -> Option<&'n Node> {
    let mut node = root;
    for seg in path {
        node = match seg {
            PathSeg::Key(k) => node.get(k)?,
            PathSeg::Index(i) => node.index(*i)?,
        };
    }
    Some(node)
}

fn span_at(root: &Node, path: &[PathSeg], key: bool) -> Range<usize> {
    let mut node = root;
    let mut best = root.span.clone();
    for (i, seg) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        let next = match seg {
            PathSeg::Key(k) => node.entry(k).map(|(kn, vn)| {
                if last && !key {
                    (vn.span.clone(), vn)
                } else {
                    (kn.span.clone(), vn)
                }
            }),
            PathSeg::Index(idx) => node.index(*idx).map(|n| (n.span.clone(), n)),
        };
        let Some((span, n)) = next else { break };
        best = span;
        node = n;
    }
    best
}

/// The result of linting one source.
#[derive(Debug, Default)]
pub struct SourceReport {
    pub documents: usize,
    /// Objects checked (SMPs, ServiceSets, ...).
    pub linted: usize,
    /// Objects of other kinds.
    pub skipped: usize,
    pub diagnostics: Vec<Diagnostic>,
    /// The source could not be read to its end (syntax error): exit code 2.
    pub unreadable: bool,
    /// Names of the StateManagementProviders in the source, and the provider names its other
    /// objects reference: checked across every input (KSM406).
    pub providers: rules::provider_name::Providers,
    /// What the other checks across inputs need of this one (template chains,
    /// MultiClusterService dependencies).
    pub across: Across,
    /// Findings silenced by the configuration or an inline suppression.
    pub suppressed: usize,
}

/// Lints every object of a source, one document at a time (memory is bounded by the largest
/// document, not the file).
pub fn lint_source(source: &Arc<Source>, linter: &Linter) -> SourceReport {
    lint_source_on(source, linter, 1)
}

/// Sources smaller than this are linted on one thread whatever the jobs: a thread of its own
/// costs more than their objects.
pub const PARALLEL_SOURCE_BYTES: usize = 64 * 1024;

/// [`lint_source`] on `threads` threads: this one reads the source, collects what is
/// checked across objects, and checks objects whenever the others are busy; the others check
/// the objects it hands them, each with a [`Linter`] of its own. The report is the one
/// [`lint_source`] makes: the objects' findings are put back in the order of the objects.
pub fn lint_source_on(source: &Arc<Source>, linter: &Linter, threads: usize) -> SourceReport {
    let mut report = if let Some(report) = helm_template(source) {
        report
    } else if threads <= 1 || source.text().len() < PARALLEL_SOURCE_BYTES {
        let mut found = Vec::new();
        lint_objects(source, linter, &mut |seq, object| {
            found.push((seq, lint_object(&object, linter)));
        })
        .finish(source, found)
    } else if let Some(report) = lint_pieces(source, linter, threads) {
        report
    } else {
        lint_objects_on(source, linter, threads)
    };
    report.suppressed = suppress::apply(source, &linter.disabled, &mut report.diagnostics);
    crate::diag::sort_by_position(&mut report.diagnostics);
    report
}

/// The size of the pieces a large source is cut into for [`lint_pieces`]: small enough that
/// every thread has several, large enough that each holds many documents.
const PIECE_BYTES: usize = 32 * 1024;

/// A large source cut at its document markers into pieces that `threads` threads read and
/// check at once, each piece as a stream of its own (each thread with a [`Linter`] of its
/// own; the objects dropped where they were made). What the pieces contribute to the checks
/// across objects is taken in in their order, as the inputs of a run are. `None` when the
/// pieces would not be read as the stream is (not every offset a marker index, a budget
/// for the whole source, a syntax error, a document that is not an object) or a Secret is
/// among them (its values are hidden as the documents are read, so an excerpt kept across
/// objects hides those read before it: the order of the whole): [`lint_objects_on`] reads
/// it whole, with nothing the pieces hid.
fn lint_pieces(source: &Arc<Source>, linter: &Linter, threads: usize) -> Option<SourceReport> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let text = source.text();
    if !source.offsets_are_indices()
        || linter.yaml_limits.max_total_nodes != usize::MAX
        || text.contains("Secret")
    {
        return None;
    }
    // A Secret spelled otherwise (escapes) is found as it is read.
    let hidden = source.hidden_count();
    let pieces = yaml::split_at_documents(text, text.len() / PIECE_BYTES);
    if pieces.len() < 2 {
        return None;
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    // Each piece's report (its documents, what it contributes across objects) and its
    // objects' findings in order.
    type Piece = (SourceReport, Vec<Option<Vec<Diagnostic>>>);
    let read: Mutex<Vec<Option<Piece>>> = Mutex::new((0..pieces.len()).map(|_| None).collect());
    let work = |linter: &Linter| {
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(range) = pieces.get(i) else { return };
            let mut report = SourceReport::default();
            let mut found = Vec::new();
            let loaded = objects::for_each_object_in(
                source,
                range.clone(),
                &linter.yaml_limits,
                true,
                &mut collecting(&mut report, &mut |_, object| {
                    found.push(lint_object(&object, linter));
                }),
            );
            let Some(loaded) = loaded.filter(|_| source.hidden_count() == hidden) else {
                failed.store(true, Ordering::Relaxed);
                return;
            };
            report.documents = loaded.documents;
            read.lock().unwrap_or_else(|e| e.into_inner())[i] = Some((report, found));
        }
    };
    let helper = linter.maker();
    beside(
        || work(linter),
        (1..threads.min(pieces.len())).map(|_| || work(&helper())),
    );
    let read = read.into_inner().unwrap_or_else(|e| e.into_inner());
    // The checks across objects keep a file's first positions with an excerpt, the later
    // ones by their text: the pieces, each counting its own, agree with the whole only while
    // all of them keep fewer than a file's share.
    let excerpts: usize = read
        .iter()
        .flatten()
        .map(|(piece, _)| piece.across.excerpts_kept())
        .sum();
    if failed.into_inner() || excerpts >= Across::EXCERPTS {
        source.unhide_after(hidden);
        return None;
    }
    let mut report = SourceReport::default();
    let mut found = Vec::new();
    for piece in read {
        let (piece, piece_found) = piece?;
        report.documents += piece.documents;
        report.providers.absorb(piece.providers);
        report.across.absorb(piece.across);
        found.extend(piece_found);
    }
    let found = found.into_iter().enumerate().collect();
    let pending = Pending {
        report,
        loaded_diagnostics: Vec::new(),
    };
    Some(pending.finish(source, found))
}

/// Objects handed to a helper at once: one wake-up of a waiting helper costs about what
/// checking a small object does, so they go in batches.
const BATCH: usize = 8;
/// Batches in flight to the helpers, per helper: enough that none waits on the reader, few
/// enough that memory stays that of a few dozen documents.
const IN_FLIGHT_PER_HELPER: usize = 4;

type Batch = Vec<(usize, LoadedObject)>;
/// An object's findings (None: not an object lint checks), by its place in the source.
type Found = (usize, Option<Vec<Diagnostic>>);

fn lint_objects_on(source: &Arc<Source>, linter: &Linter, threads: usize) -> SourceReport {
    use std::sync::{Mutex, mpsc};

    let helpers = threads - 1;
    let (to_helpers, inbox) = mpsc::sync_channel::<Batch>(helpers * IN_FLIGHT_PER_HELPER);
    let inbox = Mutex::new(inbox);
    // A helper sends the objects back with their findings: they are dropped by the thread
    // that made them (a block freed on another thread's heap costs the allocator a
    // round trip through that heap).
    let (results, outbox) = mpsc::channel::<(Vec<Found>, Batch)>();
    // Each helper's linter has these settings and memos of its own (they are not shared).
    let helper = linter.maker();
    let started = Helpers::new();
    let check = |batch: &Batch, linter: &Linter| -> Vec<Found> {
        batch
            .iter()
            .map(|(seq, object)| (*seq, lint_object(object, linter)))
            .collect()
    };
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            let (inbox, results) = (&inbox, results.clone());
            let helper = &helper;
            started.spawn(scope, move || {
                let linter = helper();
                loop {
                    let next = inbox.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(batch) = next else { return };
                    if results.send((check(&batch, &linter), batch)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(results);
        started.settle();
        let mut found = Vec::new();
        let mut batch = Vec::with_capacity(BATCH);
        // A full batch goes to a helper, or is checked here when every helper is busy: this
        // thread never idles. What the helpers sent back is taken in as it comes.
        let hand_over = |batch: Batch, found: &mut Vec<Found>| {
            if let Err(mpsc::TrySendError::Full(batch) | mpsc::TrySendError::Disconnected(batch)) =
                to_helpers.try_send(batch)
            {
                found.extend(check(&batch, linter));
            }
            while let Ok((checked, objects)) = outbox.try_recv() {
                found.extend(checked);
                drop(objects);
            }
        };
        let pending = lint_objects(source, linter, &mut |seq, object| {
            batch.push((seq, object));
            if batch.len() == BATCH {
                hand_over(
                    std::mem::replace(&mut batch, Vec::with_capacity(BATCH)),
                    &mut found,
                );
            }
        });
        if !batch.is_empty() {
            hand_over(batch, &mut found);
        }
        drop(to_helpers);
        for (checked, objects) in outbox.iter() {
            found.extend(checked);
            drop(objects);
        }
        pending.finish(source, found)
    })
}

/// A source's report whose objects' findings are still to be put in.
struct Pending {
    report: SourceReport,
    loaded_diagnostics: Vec<Diagnostic>,
}

impl Pending {
    /// The report with every object's findings, in the order of the objects.
    fn finish(self, source: &Arc<Source>, mut found: Vec<Found>) -> SourceReport {
        // In order already when checked on one thread.
        found.sort_unstable_by_key(|(seq, _)| *seq);
        let mut report = self.report;
        let mut diagnostics = self.loaded_diagnostics;
        let count: usize = found.iter().flat_map(|(_, f)| f).map(Vec::len).sum();
        diagnostics.reserve_exact(count);
        for (_, found) in found {
            match found {
                Some(diags) => {
                    report.linted += 1;
                    diagnostics.extend(diags);
                }
                None => report.skipped += 1,
            }
        }
        report.diagnostics = diagnostics;
        finish_source_report(source, &mut report);
        report
    }
}

/// Reads a source's objects, collects what is checked across objects, and hands each object
/// with its place in the source to `check`.
fn lint_objects(
    source: &Arc<Source>,
    linter: &Linter,
    check: &mut dyn FnMut(usize, LoadedObject),
) -> Pending {
    let mut report = SourceReport::default();
    let loaded = objects::for_each_object(
        source,
        &linter.yaml_limits,
        true,
        &mut collecting(&mut report, check),
    );
    report.documents = loaded.documents;
    report.unreadable = loaded.syntax_error;
    Pending {
        report,
        loaded_diagnostics: loaded.diagnostics,
    }
}

/// What takes a source's (or a piece's) objects in order: collects in `report` what is
/// checked across objects, and hands each object with its place among them to `check`.
fn collecting<'a>(
    report: &'a mut SourceReport,
    check: &'a mut dyn FnMut(usize, LoadedObject),
) -> impl FnMut(LoadedObject) + 'a {
    let mut seq = 0;
    move |object| {
        report.providers.collect(&object);
        report.across.collect(&object);
        check(seq, object);
        seq += 1;
    }
}

/// A Helm chart's template is not linted as manifests: the report says so.
fn helm_template(source: &Arc<Source>) -> Option<SourceReport> {
    let note = rules::repository::helm_template(source)?;
    Some(SourceReport {
        skipped: 1,
        diagnostics: vec![note],
        ..SourceReport::default()
    })
}

/// A source that held nothing but documents that are not objects is said not to be
/// Kubernetes manifests (when its text says so); the findings in order.
fn finish_source_report(source: &Arc<Source>, report: &mut SourceReport) {
    let nothing_but_non_objects = report.linted + report.skipped == 0
        && !report.unreadable
        && report
            .diagnostics
            .iter()
            .all(|d| d.code == objects::CODE_NOT_OBJECT);
    if nothing_but_non_objects
        && !report.diagnostics.is_empty()
        && let Some(note) = rules::repository::not_kubernetes(source)
    {
        report.skipped = report.documents;
        report.diagnostics = vec![note];
    }
    crate::diag::sort_by_position(&mut report.diagnostics);
}

/// Lints one object; None when its kind is not one `lint` checks.
pub fn lint_object(object: &LoadedObject, linter: &Linter) -> Option<Vec<Diagnostic>> {
    if rules::health_rules::is_health_rule_config_map(&object.json) {
        let mut out = Vec::new();
        rules::health_rules::check(object, &mut out);
        return Some(out);
    }
    let Some(target) = Target::of(&object.json) else {
        // Not a kind lint checks; unless it is one misspelled.
        return rules::kind_typo::check(object).map(|d| vec![d]);
    };
    let ctx = Context {
        object,
        target,
        rules: readiness_rules(object, target, linter),
        linter,
    };
    let mut out = Vec::new();
    rules::check_all(&ctx, &mut out);
    Some(out)
}

fn readiness_rules<'a>(
    object: &'a LoadedObject,
    target: Target,
    linter: &Linter,
) -> Vec<RuleSite<'a>> {
    if target != Target::StateManagementProvider {
        return Vec::new();
    }
    let mut refs: Vec<(Vec<PathSeg>, &Value)> = Vec::new();
    let smp = crate::api::kcm::StateManagementProvider(&object.json);
    if let Some(adapter) = smp.adapter_json() {
        refs.push((vec![key("spec"), key("adapter")], adapter));
    }
    for (i, p) in smp.provisioner_items().iter().enumerate() {
        refs.push((vec![key("spec"), key("provisioner"), PathSeg::Index(i)], p));
    }
    let mut sites = Vec::new();
    for (mut path, reference) in refs {
        path.push(key("readinessRule"));
        let Some(text) = reference.get("readinessRule").and_then(Value::as_str) else {
            continue;
        };
        let Some(node) = node_at(&object.node, &path) else {
            continue;
        };
        let s = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or("");
        let compiled = compile_rule(text, linter);
        sites.push(RuleSite {
            compiled,
            path,
            node: node.resolved(),
            text,
            target_api_version: s("apiVersion"),
            target_kind: s("kind"),
        });
    }
    sites
}

/// Compiles a readiness rule under the linter's limits, remembering the result (see [`Memo`]).
pub fn compile_rule(text: &str, linter: &Linter) -> Rc<CompileResult> {
    let compile = || Rc::new(cel::compile(text, &linter.cel_limits));
    if text.len() > MEMO_MAX_RULE_BYTES {
        return compile();
    }
    linter.compiled.get_or_insert_with(text, compile)
}

/// What compiling a readiness rule gives.
pub type CompileResult = Result<cel::CompiledRule, Vec<cel::CompileError>>;

pub fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// Lints a YAML text and returns `code line:col message` lines.
    pub fn lint_text(text: &str) -> Vec<String> {
        let source = Source::new("test.yaml", text);
        let report = lint_source(&source, &Linter::default());
        report
            .diagnostics
            .iter()
            .map(|d| {
                let (start, _) = d.position().expect("positioned");
                format!("{} {}:{} {}", d.code, start.line, start.column, d.message)
            })
            .collect()
    }

    /// An SMP whose adapter rule is `rule` (YAML text after `readinessRule: `, line 11).
    pub fn smp_with_rule(rule: &str) -> String {
        format!(
            "\
apiVersion: k0rdent.mirantis.com/v1beta1
kind: StateManagementProvider
metadata:
  name: ksm-flux
spec:
  adapter:
    apiVersion: apps/v1
    kind: Deployment
    name: flux-adapter
    namespace: kcm-system
    readinessRule: {rule}
  provisioner: []
  provisionerCRDs: []
  selector:
    matchLabels:
      ksm.k0rdent.mirantis.com/adapter: flux-adapter
  suspend: false
"
        )
    }

    /// Only the lines of one code.
    pub fn lint_code(text: &str, code: &str) -> Vec<String> {
        lint_text(text)
            .into_iter()
            .filter(|l| l.starts_with(code))
            .collect()
    }
}

#[cfg(test)]
mod memo_tests {
    use std::cell::Cell;

    use super::Memo;

    #[test]
    fn a_key_is_remembered_the_second_time_it_is_asked_for() {
        let memo: Memo<String, usize> = Memo::default();
        let runs = Cell::new(0);
        let value = |k: &str| {
            memo.get_or_insert_with(k, || {
                runs.set(runs.get() + 1);
                k.len()
            })
        };
        assert_eq!(value("abc"), 3);
        assert_eq!((runs.get(), memo.len()), (1, 0));
        assert_eq!(value("abc"), 3);
        assert_eq!((runs.get(), memo.len()), (2, 1));
        assert_eq!(value("abc"), 3);
        assert_eq!(value("abc"), 3);
        assert_eq!(runs.get(), 2);
        // Keys asked for once are not kept (but for the few whose hash an earlier key had:
        // the hash is not keyed, and such keys are remembered the first time).
        for i in 0..10_000 {
            value(&format!("rule {i}"));
        }
        assert_eq!(runs.get(), 10_002);
        assert!(memo.len() <= 500, "{}", memo.len());
    }
}

#[cfg(test)]
mod parallel_tests {
    use super::*;

    /// What a report says, in a form to compare.
    fn said(report: &SourceReport) -> Vec<String> {
        let mut out = vec![format!(
            "documents {} linted {} skipped {} unreadable {} suppressed {}",
            report.documents, report.linted, report.skipped, report.unreadable, report.suppressed
        )];
        let findings = report
            .diagnostics
            .iter()
            .chain(&report.providers.findings())
            .chain(&report.across.findings())
            .map(|d| {
                let labels: Vec<_> = d
                    .labels
                    .iter()
                    .map(|l| (l.span.clone(), &l.message))
                    .collect();
                format!(
                    "{} {:?} {} {:?} {:?} {:?}",
                    d.code,
                    d.severity,
                    d.message,
                    labels,
                    d.help,
                    d.position()
                )
            })
            .collect::<Vec<_>>();
        out.extend(findings);
        out
    }

    /// Every manifest the tests lint, made one stream of documents, repeated past the size
    /// from which a source is linted on several threads.
    fn stream(files: &[&str], tail: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let mut one = String::new();
        for f in files {
            let text = std::fs::read_to_string(root.join(f)).unwrap();
            one.push_str("---\n");
            one.push_str(&text);
            if !text.ends_with('\n') {
                one.push('\n');
            }
        }
        let mut text = String::new();
        while text.len() < 3 * PARALLEL_SOURCE_BYTES {
            text.push_str(&one);
        }
        text.push_str(tail);
        text
    }

    const FILES: &[&str] = &[
        "examples/smp-flux.yaml",
        "examples/smp-ksm-projectsveltos.yaml",
        "examples/smp-flux-from-guide.yaml",
        "lint/smp-problems.yaml",
        "lint/health-rules.yaml",
        "lint/not-objects.yaml",
        "check/flux-system.yaml",
    ];

    fn assert_same_on_every_thread_count(text: &str) {
        let whole = Source::new("big.yaml", text);
        let one = said(&lint_source(&whole, &Linter::default()));
        assert!(one.len() > 100, "{}", one.len());
        for threads in [2, 3, 8] {
            let source = Source::new("big.yaml", text);
            let many = said(&lint_source_on(&source, &Linter::default(), threads));
            assert_eq!(one, many, "{threads} threads");
            // What is hidden, and so every excerpt of the report.
            assert_eq!(
                whole.masked_text(),
                source.masked_text(),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn a_large_source_is_linted_on_several_threads_as_on_one() {
        assert_same_on_every_thread_count(&stream(FILES, ""));
    }

    #[test]
    fn suppressions_a_syntax_error_and_disabled_codes_hold_on_several_threads() {
        let tail = "---\n# kubectl-ksm: ignore KSM101 -- kept on purpose\n\
                    apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\n\
                    metadata: {name: x}\nspec: {unknownField: 1}\n---\na: [1, 2\n";
        assert_same_on_every_thread_count(&stream(FILES, tail));
        let text = stream(FILES, "");
        let linter = || Linter {
            disabled: vec!["KSM204"],
            ..Linter::default()
        };
        let one = said(&lint_source(&Source::new("big.yaml", &*text), &linter()));
        let two = said(&lint_source_on(
            &Source::new("big.yaml", &*text),
            &linter(),
            2,
        ));
        assert_eq!(one, two);
        assert!(!one.iter().any(|l| l.starts_with("KSM204")));
    }

    /// Objects only, read by pieces, with what is checked across objects spread over them:
    /// ServiceSets naming providers defined before, after and never (the budget of excerpts
    /// per name passed), MultiClusterServices depending on each other in a cycle.
    fn objects_only() -> String {
        let mut tail = String::new();
        for i in 0..40 {
            tail.push_str(&format!(
                "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceSet\n\
                 metadata:\n  name: s{i}\n  namespace: n\nspec:\n  provider:\n    \
                 name: {}\n",
                ["ksm-flx", "late-smp", "ksm-flux"][i % 3]
            ));
            tail.push_str(&format!(
                "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\n\
                 metadata:\n  name: m{i}\nspec:\n  dependsOn: [m{}]\n  clusterSelector: {{}}\n",
                (i + 1) % 40
            ));
            if i == 30 {
                tail.push_str(&stream(&["examples/smp-flux.yaml"], ""));
            }
        }
        tail.push_str(
            "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\n\
             metadata: {name: late-smp}\nspec: {selector: {}}\n",
        );
        let files: Vec<&str> = FILES
            .iter()
            .copied()
            .filter(|f| *f != "lint/not-objects.yaml")
            .collect();
        stream(&files, &tail)
    }

    #[test]
    fn a_source_of_objects_is_read_in_pieces_on_every_thread_as_whole() {
        let text = objects_only();
        let source = Source::new("big.yaml", &*text);
        let whole = said(&lint_source(&source, &Linter::default()));
        let across = whole
            .iter()
            .filter(|l| {
                ["KSM406", "KSM424", "KSM425"]
                    .iter()
                    .any(|c| l.starts_with(c))
            })
            .count();
        assert!(across > 40, "{across} findings across objects");
        for threads in [2, 3, 8] {
            let source = Source::new("big.yaml", &*text);
            let pieces = lint_pieces(&source, &Linter::default(), threads)
                .expect("a source of objects is read in pieces");
            let mut pieces = pieces;
            pieces.suppressed = suppress::apply(&source, &[], &mut pieces.diagnostics);
            crate::diag::sort_by_position(&mut pieces.diagnostics);
            assert_eq!(whole, said(&pieces), "{threads} threads");
        }
        assert_same_on_every_thread_count(&text);
    }

    /// A Secret whose last value is the line before the next document's first.
    const SECRET: &str = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n\
                          stringData:\n  token: hunter2\n";

    #[test]
    fn a_source_its_pieces_would_read_otherwise_is_read_whole() {
        let ok = objects_only();
        // A document boundary in the middle, to put a document there.
        let mid = ok.len() / 2 + ok[ok.len() / 2..].find("\n---\n").unwrap() + 1;
        let at_mid = |doc: &str| format!("{}{doc}{}", &ok[..mid], &ok[mid..]);
        let escaped = SECRET.replace("kind: Secret", "kind: \"Secr\\x65t\"");
        let cases = [
            // A document that is not an object: its finding numbers it in the stream.
            stream(FILES, ""),
            // A syntax error, and one that a cut would move: a flow sequence open across a
            // document marker.
            format!("{ok}---\na: [1, 2\n"),
            at_mid("---\na: [1,\n---\n]\n"),
            // A directive, cut from the document it is for.
            at_mid("%YAML 1.2\n"),
            // Not every offset a marker index.
            format!("# é\n{ok}"),
            // A Secret, named as such or spelled with an escape, whose last value is the
            // line before the next document's first.
            at_mid(SECRET),
            at_mid(&escaped),
        ];
        for (i, text) in cases.iter().enumerate() {
            let source = Source::new("big.yaml", text.as_str());
            assert!(
                lint_pieces(&source, &Linter::default(), 2).is_none(),
                "case {i}"
            );
            // Nothing the pieces hid stays hidden: the whole is read in its own order.
            assert_eq!(source.hidden_count(), 0, "case {i}");
            assert_same_on_every_thread_count(text);
        }
        // The escaped one is a Secret to the reader, not to the search for its kind.
        let whole = Source::new("big.yaml", at_mid(&escaped));
        assert!(!whole.text().contains("Secret"));
        lint_source(&whole, &Linter::default());
        assert!(whole.hidden_count() > 0);
        let budget = Linter {
            yaml_limits: yaml::Limits {
                max_total_nodes: 1 << 30,
                ..yaml::Limits::default()
            },
            ..Linter::default()
        };
        assert!(lint_pieces(&Source::new("big.yaml", ok.as_str()), &budget, 2).is_none());
    }

    #[test]
    fn positions_past_a_files_excerpts_are_kept_as_by_the_whole() {
        // More positions kept across objects than a file keeps with excerpts: the pieces
        // would each keep theirs; the source is read whole.
        let mut text = objects_only();
        for i in 0..(Across::EXCERPTS + 10) {
            text.push_str(&format!(
                "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\n\
                 metadata:\n  name: x{i}\nspec:\n  dependsOn: [x{}]\n  clusterSelector: {{}}\n",
                (i + 1) % (Across::EXCERPTS + 10)
            ));
        }
        assert!(
            lint_pieces(
                &Source::new("big.yaml", text.as_str()),
                &Linter::default(),
                2
            )
            .is_none()
        );
        assert_same_on_every_thread_count(&text);
    }
}

#[cfg(test)]
mod prepare_tests {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn preparing_ahead_stops_when_told_and_ends_after_the_smp_crd() {
        let next = AtomicUsize::new(0);
        super::prepare_ahead(&next, &|| true);
        assert_eq!(next.load(Ordering::SeqCst), 0, "no step once told to stop");
        let asked = Cell::new(0);
        super::prepare_ahead(&next, &|| {
            asked.set(asked.get() + 1);
            asked.get() > 2
        });
        assert_eq!(
            next.load(Ordering::SeqCst),
            2,
            "a step between two questions"
        );
        super::prepare_ahead(&next, &|| false);
        // The declarations, the codes, the SMP CRD, and the step that found none left.
        assert_eq!(next.load(Ordering::SeqCst), 4);
    }
}
