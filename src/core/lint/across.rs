//! What the checks across inputs (a MultiClusterService and the ones it depends on, a service
//! and the template chain it names) keep of an object once its file is dropped: a few
//! facts, and the positions their findings point at, as excerpts of a few lines (never the
//! file), or, beyond a budget per file, the position and its text alone.

use std::ops::Range;
use std::sync::Arc;

use crate::diag::{Diagnostic, Severity, Source};

/// Excerpts kept per file; beyond them a position keeps only its text.
const EXCERPTS_PER_FILE: usize = 64;
/// Lines of context kept around a position: as many as the human report shows.
const CONTEXT: usize = 2;

/// A place in an input, kept after its source is dropped.
#[derive(Debug, Clone)]
pub struct Position {
    source: Arc<Source>,
    span: Range<usize>,
}

/// The excerpts one file may still keep.
#[derive(Debug)]
pub struct Budget(usize);

impl Default for Budget {
    fn default() -> Self {
        Budget(EXCERPTS_PER_FILE)
    }
}

impl Position {
    pub fn keep(source: &Arc<Source>, span: Range<usize>, budget: &mut Budget) -> Position {
        let span = source.first_line(span);
        if budget.0 > 0 {
            budget.0 -= 1;
            let (source, span) = source.excerpt(span, CONTEXT);
            return Position { source, span };
        }
        let text = &source.text()[span.clone()];
        Position {
            source: Source::fragment(source.name(), text, source.line_col(span.start)),
            span: 0..text.len(),
        }
    }

    /// A finding at this position.
    pub fn diag(&self, code: &'static str, severity: Severity, message: String) -> Diagnostic {
        Diagnostic::new(code, severity, message).at(&self.source, self.span.clone())
    }
}

/// Everything the checks across inputs keep of one input (KSM423 template chains, KSM424–KSM426
/// MultiClusterService dependencies), merged input by input and judged once all are read.
#[derive(Debug, Default)]
pub struct Across {
    chains: super::rules::template_chain::Chains,
    mcs: super::rules::mcs_dependencies::McsGraph,
    budget: Budget,
}

impl Across {
    /// What one object contributes.
    pub fn collect(&mut self, object: &crate::core::objects::LoadedObject) {
        self.chains.collect(object, &mut self.budget);
        self.mcs.collect(object, &mut self.budget);
    }

    /// Positions kept with their excerpt: at most [`EXCERPTS_PER_FILE`], the rest by their
    /// text alone.
    pub fn excerpts_kept(&self) -> usize {
        EXCERPTS_PER_FILE - self.budget.0
    }

    /// The excerpts one input keeps ([`Across::excerpts_kept`]).
    pub const EXCERPTS: usize = EXCERPTS_PER_FILE;

    /// Takes in what another input contributed (in input order).
    pub fn absorb(&mut self, other: Across) {
        self.chains.absorb(other.chains);
        self.mcs.absorb(other.mcs);
    }

    /// The findings, once every input is read.
    pub fn findings(&self) -> Vec<Diagnostic> {
        let mut out = self.chains.findings();
        out.extend(self.mcs.findings());
        out
    }
}
