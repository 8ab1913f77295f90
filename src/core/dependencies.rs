//! kcm's dependency rules, as pure functions over keys: the services of one `serviceSpec`
//! (`internal/util/validation/services.go`, `internal/serviceset/util.go`) and the
//! MultiClusterServices' `dependsOn` (`internal/util/validation/multiclusterservice.go`).
//! `lint` reports what they find at the entries; the facts are in docs/kcm-v1.12-behaviour.md.

use std::collections::{HashMap, HashSet};

use crate::api::kcm::{self, ServiceSource};

/// A service key: (effective namespace, name), see [`crate::api::kcm::service_key`].
pub type Key<'a> = (&'a str, &'a str);

/// One service of a `serviceSpec`: its key, the keys of its `dependsOn` entries (in order),
/// and whether it is disabled.
#[derive(Debug, Clone)]
pub struct Service<'a> {
    pub key: Key<'a>,
    pub depends_on: Vec<Key<'a>>,
    pub disabled: bool,
}

impl<'a> Service<'a> {
    /// A service of a `serviceSpec`, keyed as kcm keys it.
    pub fn of(s: kcm::Service<'a>) -> Self {
        Service {
            key: s.key(),
            depends_on: s.dependency_keys(),
            disabled: s.disabled(),
        }
    }

    /// The services of a ClusterDeployment's or MultiClusterService's `spec.serviceSpec`.
    pub fn all_of(source: ServiceSource<'a>) -> Vec<Self> {
        source.service_views().map(Self::of).collect()
    }
}

/// A `dependsOn` entry: (index of the service, index of the entry).
pub type Entry = (usize, usize);

/// `validateServiceDependency`: the entries naming no service of the list.
pub fn undefined(services: &[Service]) -> Vec<Entry> {
    let keys: HashSet<Key> = services.iter().map(|s| s.key).collect();
    let mut out = Vec::new();
    for (i, s) in services.iter().enumerate() {
        for (j, d) in s.depends_on.iter().enumerate() {
            if !keys.contains(d) {
                out.push((i, j));
            }
        }
    }
    out
}

/// The graph of the list: key → the keys it depends on (duplicated services add up, as in
/// `validateServiceDependencyCycle`).
fn graph<'a>(services: &[Service<'a>]) -> HashMap<Key<'a>, Vec<Key<'a>>> {
    let mut g: HashMap<Key, Vec<Key>> = HashMap::new();
    for s in services {
        g.entry(s.key)
            .or_default()
            .extend(s.depends_on.iter().copied());
    }
    g
}

/// A shortest path `from` → ... → `to` in the graph (both ends included), if any.
fn path<'a>(
    g: &HashMap<Key<'a>, Vec<Key<'a>>>,
    from: Key<'a>,
    to: Key<'a>,
) -> Option<Vec<Key<'a>>> {
    let mut prev: HashMap<Key, Key> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    let mut seen = HashSet::from([from]);
    while let Some(k) = queue.pop_front() {
        if k == to {
            let mut p = vec![k];
            let mut cur = k;
            while let Some(&b) = prev.get(&cur) {
                p.push(b);
                cur = b;
            }
            p.reverse();
            return Some(p);
        }
        for &n in g.get(&k).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(n) {
                prev.insert(n, k);
                queue.push_back(n);
            }
        }
    }
    None
}

/// The entries that lie on a dependency cycle (`hasCycle` fails the whole list on any of
/// them), each with its cycle: the service, the one the entry names, ..., the service again.
pub fn cycles<'a>(services: &[Service<'a>]) -> Vec<(Entry, Vec<Key<'a>>)> {
    let g = graph(services);
    let mut out = Vec::new();
    for (i, s) in services.iter().enumerate() {
        for (j, d) in s.depends_on.iter().enumerate() {
            if let Some(back) = path(&g, *d, s.key) {
                let mut cycle = vec![s.key];
                cycle.extend(back);
                out.push(((i, j), cycle));
            }
        }
    }
    out
}

/// The entries kcm can never satisfy on a cluster where nothing is deployed yet: the
/// service they name is disabled (`ServicesToDeploy` never writes a disabled service into the
/// ServiceSet, so it is never Deployed), or itself waits, through its own entries, on a
/// disabled service. Each with the disabled service at the end of the chain. Entries on a
/// cycle or naming no service are left to [`cycles`] and [`undefined`].
pub fn never_satisfied<'a>(services: &[Service<'a>]) -> Vec<(Entry, Key<'a>)> {
    let by_key: HashMap<Key, &Service> = services.iter().map(|s| (s.key, s)).collect();
    // The disabled service a key waits on forever, found depth first (None: it can deploy,
    // or it is on a cycle or undefined, reported otherwise).
    fn blocker<'a>(
        key: Key<'a>,
        by_key: &HashMap<Key<'a>, &Service<'a>>,
        memo: &mut HashMap<Key<'a>, Option<Key<'a>>>,
        stack: &mut HashSet<Key<'a>>,
    ) -> Option<Key<'a>> {
        if let Some(m) = memo.get(&key) {
            return *m;
        }
        let s = by_key.get(&key)?;
        if s.disabled {
            return Some(key);
        }
        if !stack.insert(key) {
            return None;
        }
        let found = s
            .depends_on
            .iter()
            .find_map(|d| blocker(*d, by_key, memo, stack));
        stack.remove(&key);
        memo.insert(key, found);
        found
    }
    let on_cycle: HashSet<Entry> = cycles(services).into_iter().map(|(e, _)| e).collect();
    let mut memo = HashMap::new();
    let mut out = Vec::new();
    for (i, s) in services.iter().enumerate() {
        if s.disabled {
            continue;
        }
        for (j, d) in s.depends_on.iter().enumerate() {
            if on_cycle.contains(&(i, j)) {
                continue;
            }
            if let Some(b) = blocker(*d, &by_key, &mut memo, &mut HashSet::new()) {
                out.push(((i, j), b));
            }
        }
    }
    out
}

/// `hasCycleFrom`: the cycle a depth-first search from `start` over the MultiClusterServices'
/// `dependsOn` finds (kcm refuses `start` when there is one, even if `start` itself is not
/// on it), as the path from `start` to the repeated MultiClusterService included.
pub fn mcs_cycle_from<'a>(
    start: &'a str,
    graph: &HashMap<&'a str, Vec<&'a str>>,
) -> Option<Vec<&'a str>> {
    fn dfs<'a>(
        node: &'a str,
        graph: &HashMap<&'a str, Vec<&'a str>>,
        visited: &mut HashSet<&'a str>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if stack.contains(&node) {
            let mut p = stack.clone();
            p.push(node);
            return Some(p);
        }
        if !visited.insert(node) {
            return None;
        }
        stack.push(node);
        for d in graph.get(node).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(p) = dfs(d, graph, visited, stack) {
                return Some(p);
            }
        }
        stack.pop();
        None
    }
    dfs(start, graph, &mut HashSet::new(), &mut Vec::new())
}

/// `a → b → a` for a path of keys.
pub fn path_text(path: &[Key]) -> String {
    path.iter()
        .map(|(ns, n)| format!("{ns}/{n}"))
        .collect::<Vec<_>>()
        .join(" → ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc<'a>(name: &'a str, deps: &[&'a str], disabled: bool) -> Service<'a> {
        Service {
            key: ("default", name),
            depends_on: deps.iter().map(|d| ("default", *d)).collect(),
            disabled,
        }
    }

    #[test]
    fn undefined_entries() {
        let s = [svc("a", &["b", "c"], false), svc("b", &[], false)];
        assert_eq!(undefined(&s), [(0, 1)]);
    }

    #[test]
    fn cycles_include_self_and_only_entries_on_them() {
        let s = [
            svc("a", &["a"], false),
            svc("b", &["c"], false),
            svc("c", &["b", "d"], false),
            svc("d", &[], false),
            svc("e", &["b"], false),
        ];
        let found: Vec<_> = cycles(&s)
            .into_iter()
            .map(|(e, p)| (e, path_text(&p)))
            .collect();
        assert_eq!(
            found,
            [
                ((0, 0), "default/a → default/a".to_string()),
                ((1, 0), "default/b → default/c → default/b".to_string()),
                ((2, 0), "default/c → default/b → default/c".to_string()),
            ]
        );
    }

    #[test]
    fn disabled_dependencies_are_never_satisfied_transitively() {
        let s = [
            svc("a", &["b"], false),
            svc("b", &["c"], false),
            svc("c", &[], true),
            svc("d", &["a", "e"], false),
            svc("e", &[], false),
            svc("f", &["c"], true),
        ];
        assert_eq!(
            never_satisfied(&s),
            [
                ((0, 0), ("default", "c")),
                ((1, 0), ("default", "c")),
                ((3, 0), ("default", "c"))
            ]
        );
    }

    #[test]
    fn mcs_cycles_are_found_from_the_start_only() {
        let g: HashMap<&str, Vec<&str>> = [
            ("a", vec!["b"]),
            ("b", vec!["c"]),
            ("c", vec!["b"]),
            ("d", vec![]),
            ("s", vec!["s"]),
        ]
        .into_iter()
        .collect();
        assert_eq!(mcs_cycle_from("a", &g), Some(vec!["a", "b", "c", "b"]));
        assert_eq!(mcs_cycle_from("d", &g), None);
        assert_eq!(mcs_cycle_from("s", &g), Some(vec!["s", "s"]));
        assert_eq!(mcs_cycle_from("x", &g), None);
    }
}
