//! One registry of every KSM code: loading (KSM0xx), lint (KSM1xx–KSM3xx), render (KSM5xx)
//! and doctor (KSM6xx), each with its name, severity, title and documentation. `--explain`,
//! the SARIF rules and the renderers' code names all read it.

pub use crate::diag::CodeInfo;

/// Every code, in code order.
pub fn all() -> Vec<&'static CodeInfo> {
    registry().all.clone()
}

/// Every code, and each by its own code (renderers look one up for every finding).
struct Registry {
    all: Vec<&'static CodeInfo>,
    by_code: std::collections::HashMap<&'static str, &'static CodeInfo>,
}

/// Gathers the registry now (work done ahead by a thread that would otherwise wait).
pub fn gather_ahead() {
    registry();
}

/// The registry, gathered once.
fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut all: Vec<&CodeInfo> = crate::core::lint::all_rules().to_vec();
        all.extend(crate::core::render::codes::ALL);
        all.extend(crate::core::doctor::codes::ALL);
        let mut by_code = std::collections::HashMap::new();
        for r in &all {
            by_code.entry(r.code).or_insert(*r);
        }
        Registry { all, by_code }
    })
}

/// A code by its code or its name (case-insensitive).
pub fn find(code: &str) -> Option<&'static CodeInfo> {
    let code = code.trim();
    let registry = registry();
    if let Some(r) = registry.by_code.get(code) {
        return Some(r);
    }
    registry
        .all
        .iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code) || r.name.eq_ignore_ascii_case(code))
}

/// The text `--explain` prints.
pub fn explain(info: &CodeInfo) -> String {
    format!(
        "{} ({}): {}\nseverity: {}\n\n{}",
        info.code,
        info.name,
        info.title,
        info.severity.as_str(),
        info.docs.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_sorted_named_and_documented() {
        let all = all();
        for w in all.windows(2) {
            assert!(w[0].code < w[1].code, "{} before {}", w[0].code, w[1].code);
        }
        let mut names: Vec<&str> = all.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "names are unique");
        for c in &all {
            assert!(c.code.starts_with("KSM") && c.code.len() == 6, "{}", c.code);
            for section in ["## What it finds", "## Why it matters", "## Fix"] {
                assert!(c.docs.contains(section), "{} docs lack {section}", c.code);
            }
            assert!(!c.title.ends_with('.'), "{} title", c.code);
        }
    }

    #[test]
    fn every_family_can_be_explained() {
        for code in [
            "KSM001",
            "KSM204",
            "KSM505",
            "KSM609",
            "flux-object-missing",
        ] {
            let info = find(code).unwrap_or_else(|| panic!("{code}"));
            assert!(explain(info).contains("## What it finds"));
        }
        assert!(find("KSM999").is_none());
    }
}
