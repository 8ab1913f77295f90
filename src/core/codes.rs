//! One registry of every KSM code: loading (KSM0xx), lint (KSM1xx–KSM3xx), render (KSM5xx)
//! and doctor (KSM6xx), each with its name, severity, title and documentation. `--explain`,
//! the SARIF rules and the renderers' code names all read it.

pub use crate::diag::CodeInfo;

/// Every code, in code order.
pub fn all() -> Vec<&'static CodeInfo> {
    registry().to_vec()
}

/// The registry, gathered once (renderers look a code up for every finding).
fn registry() -> &'static [&'static CodeInfo] {
    static ALL: std::sync::OnceLock<Vec<&'static CodeInfo>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<&CodeInfo> = crate::core::lint::all_rules().to_vec();
        all.extend(crate::core::render::codes::ALL);
        all.extend(crate::core::doctor::codes::ALL);
        all
    })
}

/// A code by its code or its name (case-insensitive).
pub fn find(code: &str) -> Option<&'static CodeInfo> {
    static BY_CODE: std::sync::OnceLock<
        std::collections::HashMap<&'static str, &'static CodeInfo>,
    > = std::sync::OnceLock::new();
    let code = code.trim();
    // A finding's own code, as the renderers ask for it, is found at once.
    let by_code = BY_CODE.get_or_init(|| {
        let mut map = std::collections::HashMap::new();
        for r in registry() {
            map.entry(r.code).or_insert(*r);
        }
        map
    });
    if let Some(r) = by_code.get(code) {
        return Some(r);
    }
    registry()
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
