//! The evaluation budget: one cost model that bounds both time and memory.
//!
//! Every sub-expression evaluated costs one unit; an operation that touches or creates
//! bytes or elements costs in proportion to them (a unit per [`BYTES_PER_UNIT`] bytes scanned,
//! copied or compared, a unit per element copied, compared or built). Every value an
//! evaluation creates is also counted against a memory ceiling. Running out of either stops
//! the evaluation with the distinct budget outcome: kcm has no budget and would keep going.

use std::fmt;

/// Bytes scanned, copied or compared for one cost unit: about the time of one node visit.
pub const BYTES_PER_UNIT: u64 = 64;

/// Memory of one value slot in a list (and of a key or a value in a map).
pub const VALUE_BYTES: u64 = std::mem::size_of::<super::value::Value>() as u64;

/// Which part of the budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// The cost units (time).
    Cost,
    /// The memory ceiling.
    Memory,
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Resource::Cost => "cost",
            Resource::Memory => "memory",
        })
    }
}

/// The budget of one rule on one object: evaluation and explanation draw from it together.
#[derive(Clone, Debug)]
pub struct Budget {
    pub cost: u64,
    pub max_cost: u64,
    pub memory: u64,
    pub max_memory: u64,
}

impl Budget {
    pub fn new(max_cost: u64, max_memory: u64) -> Budget {
        Budget {
            cost: 0,
            max_cost,
            memory: 0,
            max_memory,
        }
    }

    /// An unlimited budget (constant folding at compile time, of bounded constants).
    pub fn unlimited() -> Budget {
        Budget::new(u64::MAX, u64::MAX)
    }

    /// One unit.
    #[inline(always)]
    pub fn tick(&mut self) -> Result<(), Resource> {
        self.cost += 1;
        if self.cost > self.max_cost {
            return Err(Resource::Cost);
        }
        Ok(())
    }

    /// `units` more units.
    #[inline]
    pub fn charge(&mut self, units: u64) -> Result<(), Resource> {
        self.cost = self.cost.saturating_add(units);
        if self.cost > self.max_cost {
            return Err(Resource::Cost);
        }
        Ok(())
    }

    /// The time of scanning, copying or comparing `bytes` bytes.
    #[inline]
    pub fn scan(&mut self, bytes: usize) -> Result<(), Resource> {
        if bytes as u64 >= BYTES_PER_UNIT {
            self.charge(bytes as u64 / BYTES_PER_UNIT)
        } else {
            Ok(())
        }
    }

    /// A new value of `bytes` bytes: its memory, and the time of writing it.
    #[inline]
    pub fn alloc(&mut self, bytes: u64) -> Result<(), Resource> {
        self.memory = self.memory.saturating_add(bytes);
        if self.memory > self.max_memory {
            return Err(Resource::Memory);
        }
        self.charge(bytes / BYTES_PER_UNIT)
    }

    /// A new list or map of `n` slots.
    #[inline]
    pub fn alloc_slots(&mut self, n: usize) -> Result<(), Resource> {
        self.alloc((n as u64).saturating_mul(VALUE_BYTES))?;
        self.charge(n as u64)
    }
}
