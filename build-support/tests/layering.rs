//! The build side's layering, checked on the source (ARCHITECTURE.md, "Floors"):
//!
//! - the module import graph of `kiln-build` (one node per file; an edge for every path a
//!   file names into another: `use` trees, and paths in code such as
//!   `crate::op::kernel_fn(..)`) has no cycle;
//! - the operator contract (`src/op/`) imports nothing from the rest of the crate;
//! - an operator module (`src/ops/<op>.rs`) imports only the contract and sibling operator
//!   modules, never the table (`src/ops/mod.rs`) or the pipeline;
//! - outside `src/ops/`, only the table names an operator module;
//! - no hand-written Rust file in `planner/`, `build-support/` or `cli/` is over 1,000 lines
//!   (generated files, whose first line says `@generated`, are not counted).
//!
//! Files are parsed with `syn` (comments and strings never count as imports). Costs about
//! 0.1 s.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module of the crate as the path of its file's module: `[]` for `lib.rs`, `["emit"]`
/// for `emit/mod.rs`, `["emit", "calls"]` for `emit/calls.rs`.
type ModPath = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn module_path(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_string()),
    }
    parts
}

/// The paths a file names into the crate, each resolved against the module it appears in:
/// absolute module paths (`["op", "Cx"]`), not yet cut to a module.
struct Scan<'a> {
    /// The file modules of the crate, to tell a child module from an item of the same name.
    modules: &'a BTreeSet<ModPath>,
    paths: Vec<Vec<String>>,
}

impl Scan<'_> {
    /// The items of module `at` (a file's, or an inline module's within it).
    fn items(&mut self, at: &ModPath, items: &[syn::Item]) {
        // The module's children: its inline modules and its file modules.
        let children: BTreeSet<String> = items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Mod(m) => Some(m.ident.to_string()),
                _ => None,
            })
            .collect();
        for item in items {
            match item {
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        let mut sub = at.clone();
                        sub.push(m.ident.to_string());
                        self.items(&sub, inner);
                    }
                }
                syn::Item::Use(u) => {
                    let mut prefix = Vec::new();
                    self.use_tree(at, &children, &u.tree, &mut prefix);
                }
                other => self.tokens(at, &children, other.to_token_stream()),
            }
        }
    }

    fn use_tree(
        &mut self,
        at: &ModPath,
        children: &BTreeSet<String>,
        tree: &syn::UseTree,
        prefix: &mut Vec<String>,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(at, children, &p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.path(at, children, prefix, Some(n.ident.to_string())),
            syn::UseTree::Rename(r) => self.path(at, children, prefix, Some(r.ident.to_string())),
            syn::UseTree::Glob(_) => self.path(at, children, prefix, None),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(at, children, t, prefix);
                }
            }
        }
    }

    /// Records `prefix::last` if it starts in the crate (`crate`, `super`, `self`, a child).
    fn path(
        &mut self,
        at: &ModPath,
        children: &BTreeSet<String>,
        prefix: &[String],
        last: Option<String>,
    ) {
        let segments: Vec<String> = prefix.iter().cloned().chain(last).collect();
        if let Some(resolved) = resolve(at, children, &segments) {
            self.paths.push(resolved);
        }
    }

    /// Paths in code: `crate :: a :: b`, `super :: a`, `<child> :: a`, not after `::`.
    fn tokens(&mut self, at: &ModPath, children: &BTreeSet<String>, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let is_sep = |i: usize| {
            matches!((trees.get(i), trees.get(i + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && b.as_char() == ':')
        };
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.tokens(at, children, g.stream());
                i += 1;
                continue;
            }
            let after_sep = i >= 2 && is_sep(i - 2);
            let TokenTree::Ident(first) = &trees[i] else {
                i += 1;
                continue;
            };
            if after_sep || !is_sep(i + 1) {
                i += 1;
                continue;
            }
            let mut segments = vec![first.to_string()];
            let mut j = i + 1;
            while is_sep(j) {
                match trees.get(j + 2) {
                    Some(TokenTree::Ident(s)) => segments.push(s.to_string()),
                    _ => break,
                }
                j += 3;
            }
            if let Some(resolved) = resolve(at, children, &segments) {
                self.paths.push(resolved);
            }
            i = j;
        }
    }
}

/// `segments` as an absolute path in the crate, if it starts in the crate.
fn resolve(at: &ModPath, children: &BTreeSet<String>, segments: &[String]) -> Option<Vec<String>> {
    let first = segments.first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => at.clone(),
        "super" => {
            let mut b = at.clone();
            let mut rest = segments;
            while rest.first().is_some_and(|s| s == "super") {
                b.pop()?;
                rest = &rest[1..];
            }
            b.extend(rest.iter().cloned());
            return Some(b);
        }
        child if children.contains(child) => {
            let mut b = at.clone();
            b.push(child.to_string());
            b.extend(segments[1..].iter().cloned());
            return Some(b);
        }
        _ => return None,
    };
    base.extend(segments[1..].iter().cloned());
    Some(base)
}

/// The file module holding the item at `path`: its longest prefix that is a file module.
fn owner<'a>(modules: &'a BTreeSet<ModPath>, path: &[String]) -> &'a ModPath {
    (0..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n].to_vec()))
        .expect("the crate root is a module")
}

/// The import graph of the crate whose sources are in `src`: for every file module, the
/// file modules it names.
fn import_graph(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<ModPath> = files.iter().map(|f| module_path(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let at = module_path(src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut scan = Scan {
            modules: &modules,
            paths: Vec::new(),
        };
        scan.items(&at, &parsed.items);
        let targets: BTreeSet<ModPath> = scan
            .paths
            .iter()
            .map(|p| owner(scan.modules, p).clone())
            .filter(|m| *m != at)
            .collect();
        graph.insert(at, targets);
    }
    graph
}

/// A cycle of `graph`, if it has one (its modules in order, the first repeated at the end).
fn find_cycle(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        m: &ModPath,
        graph: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        mark: &mut BTreeMap<ModPath, Mark>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        mark.insert(m.clone(), Mark::Open);
        stack.push(m.clone());
        for next in graph.get(m).into_iter().flatten() {
            match mark.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = stack.iter().position(|s| s == next).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(next, graph, mark, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        mark.insert(m.clone(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for m in graph.keys() {
        if mark.get(m).copied().unwrap_or(Mark::New) == Mark::New
            && let Some(c) = visit(m, graph, &mut mark, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn m(path: &str) -> ModPath {
    path.split("::").map(String::from).collect()
}

#[test]
fn the_import_graph_has_no_cycle() {
    let graph = import_graph(&src());
    // The scan sees imports (else an empty graph would pass): a `use`, a path in code, a
    // child module named by its parent.
    assert!(
        graph[&m("lower")].contains(&m("ops")),
        "lower uses the table"
    );
    assert!(
        graph[&m("ops::add")].contains(&m("op")),
        "add uses the contract"
    );
    assert!(
        graph[&m("ops")].contains(&m("ops::add")),
        "the table names add"
    );
    if let Some(cycle) = find_cycle(&graph) {
        let names: Vec<String> = cycle.iter().map(name).collect();
        panic!("an import cycle in kiln-build: {}", names.join(" -> "));
    }
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    graph.insert(m("a"), [m("b")].into());
    graph.insert(m("b"), [m("c")].into());
    graph.insert(m("c"), [m("a")].into());
    graph.insert(m("d"), [m("a")].into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec![m("a"), m("b"), m("c"), m("a")])
    );
    graph.insert(m("c"), BTreeSet::new());
    assert_eq!(find_cycle(&graph), None);
}

#[test]
fn each_floor_imports_only_the_floors_below() {
    let graph = import_graph(&src());
    let under = |m: &ModPath, top: &str| m.first().is_some_and(|f| f == top);
    let mut wrong = Vec::new();
    for (from, targets) in &graph {
        for to in targets {
            // The operator contract imports nothing of the crate but itself.
            let contract = under(from, "op") && !under(to, "op");
            // An operator module imports only the contract and its siblings.
            let operator = under(from, "ops")
                && from.len() == 2
                && !(under(to, "op") || (under(to, "ops") && to.len() == 2));
            // Only the table names an operator module.
            let bypass = !under(from, "ops") && under(to, "ops") && to.len() == 2;
            if contract || operator || bypass {
                wrong.push(format!("{} -> {}", name(from), name(to)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports across floors (ARCHITECTURE.md, Floors): {}",
        wrong.join(", ")
    );
}

#[test]
fn no_hand_written_file_is_over_1000_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["planner", "build-support", "cli"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "the walk finds the sources");
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let generated = text
                .lines()
                .next()
                .is_some_and(|l| l.contains("@generated"));
            let n = text.lines().count();
            (!generated && n > 1000).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over 1,000 lines: {}",
        long.join(", ")
    );
}
