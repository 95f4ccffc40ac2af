//! The new pass manager's textual pipeline as a tree, and its minimisation.
//!
//! Why this exists: `opt -passes=…` with clang's 4 KB pipeline reproduces a middle-end crash
//! but does not say which pass crashes. As LLVM's `utils/reduce_pipeline.py` does, the
//! pipeline is cut to a minimal one that still crashes: every pass and every adaptor
//! (`function(…)`, `loop(…)`, `cgscc(…)`) is a unit of [`crate::ddmin::minimize`];
//! an adaptor dropped drops its passes, and an adaptor left with no pass is dropped. The
//! crashing pass is then the innermost pass of what remains. Pure: parsing and rendering.

/// One pipeline element: `name<params>` and, for an adaptor, its nested pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub text: String,
    pub children: Option<Vec<Node>>,
}

/// Parses `a,b<x;y>,c(d,e(f))`. `None` when the brackets do not balance.
pub fn parse(s: &str) -> Option<Vec<Node>> {
    let bytes: Vec<char> = s.chars().collect();
    let mut pos = 0;
    let nodes = parse_list(&bytes, &mut pos)?;
    (pos == bytes.len()).then_some(nodes)
}

fn parse_list(s: &[char], pos: &mut usize) -> Option<Vec<Node>> {
    let mut out = Vec::new();
    loop {
        let mut text = String::new();
        let mut angle = 0i32;
        while *pos < s.len() {
            let c = s[*pos];
            match c {
                '<' => angle += 1,
                '>' => angle -= 1,
                ',' | '(' | ')' if angle == 0 => break,
                _ => {}
            }
            text.push(c);
            *pos += 1;
        }
        if angle != 0 {
            return None;
        }
        let mut children = None;
        if *pos < s.len() && s[*pos] == '(' {
            *pos += 1;
            children = Some(parse_list(s, pos)?);
            if *pos >= s.len() || s[*pos] != ')' {
                return None;
            }
            *pos += 1;
        }
        if !text.is_empty() || children.is_some() {
            out.push(Node { text, children });
        }
        if *pos < s.len() && s[*pos] == ',' {
            *pos += 1;
            continue;
        }
        return Some(out);
    }
}

/// Renders a pipeline.
pub fn render(nodes: &[Node]) -> String {
    nodes
        .iter()
        .map(|n| match &n.children {
            Some(c) => format!("{}({})", n.text, render(c)),
            None => n.text.clone(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// How many units (nodes, adaptors included) a pipeline has: pre-order numbering.
pub fn count(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| 1 + n.children.as_deref().map_or(0, count))
        .sum()
}

/// The pipeline keeping only the units in `kept` (sorted pre-order indices); an adaptor
/// not kept drops its subtree, an adaptor with nothing left in it is dropped.
pub fn keep(nodes: &[Node], kept: &[usize]) -> Vec<Node> {
    let mut i = 0;
    keep_rec(nodes, kept, &mut i)
}

fn keep_rec(nodes: &[Node], kept: &[usize], i: &mut usize) -> Vec<Node> {
    let mut out = Vec::new();
    for n in nodes {
        let me = *i;
        *i += 1;
        let is_kept = kept.binary_search(&me).is_ok();
        match &n.children {
            None => {
                if is_kept {
                    out.push(n.clone());
                }
            }
            Some(c) => {
                let inner = keep_rec(c, kept, i);
                if is_kept && !inner.is_empty() {
                    out.push(Node {
                        text: n.text.clone(),
                        children: Some(inner),
                    });
                }
            }
        }
    }
    out
}

/// The pipeline with the adaptor at pre-order index `target` replaced by its passes
/// (`cgscc(devirt<4>(function(x)))` → `cgscc(function(x))` at index 1): ddmin cannot drop
/// an adaptor and keep what it holds.
pub fn unwrap_at(nodes: &[Node], target: usize) -> Vec<Node> {
    let mut i = 0;
    unwrap_rec(nodes, target, &mut i)
}

fn unwrap_rec(nodes: &[Node], target: usize, i: &mut usize) -> Vec<Node> {
    let mut out = Vec::new();
    for n in nodes {
        let me = *i;
        *i += 1;
        match &n.children {
            None => out.push(n.clone()),
            Some(c) => {
                let inner = unwrap_rec(c, target, i);
                if me == target {
                    out.extend(inner);
                } else {
                    out.push(Node {
                        text: n.text.clone(),
                        children: Some(inner),
                    });
                }
            }
        }
    }
    out
}

/// The pipeline with the `<parameters>` of the unit at pre-order index `target` dropped
/// (`devirt<4>(function<eager-inv;no-rerun>(x))` → `devirt<4>(function(x))` at index 1): a
/// `no-rerun` function adaptor cannot stand at the top, so it loses its parameters before the
/// `devirt<4>` around it can go.
pub fn without_params_at(nodes: &[Node], target: usize) -> Vec<Node> {
    let mut i = 0;
    params_rec(nodes, target, &mut i)
}

fn params_rec(nodes: &[Node], target: usize, i: &mut usize) -> Vec<Node> {
    nodes
        .iter()
        .map(|n| {
            let me = *i;
            *i += 1;
            let text = if me == target {
                n.text.split('<').next().unwrap_or(&n.text).to_owned()
            } else {
                n.text.clone()
            };
            Node {
                text,
                children: n.children.as_deref().map(|c| params_rec(c, target, i)),
            }
        })
        .collect()
}

/// The pipeline with every `<parameters>` dropped (`instcombine<max-iterations=1>` →
/// `instcombine`): the defaults, which read better in a test when they keep the crash.
pub fn without_params(nodes: &[Node]) -> Vec<Node> {
    nodes
        .iter()
        .map(|n| Node {
            text: n.text.split('<').next().unwrap_or(&n.text).to_owned(),
            children: n.children.as_deref().map(without_params),
        })
        .collect()
}

/// The pass that crashes in a minimal pipeline: its last innermost pass, without parameters
/// (`loop(indvars)` → `indvars`).
pub fn crashing_pass(nodes: &[Node]) -> Option<String> {
    let last = nodes.last()?;
    match &last.children {
        Some(c) => crashing_pass(c),
        None => Some(last.text.split('<').next().unwrap_or(&last.text).to_owned()),
    }
}

/// The pipeline split before its `at`-th pass (pre-order, adaptors not counted): the passes
/// before it and the passes from it on, each in the adaptors it had (empty ones dropped).
/// `None` when `at` is not inside the pipeline.
pub fn split_at(nodes: &[Node], at: usize) -> Option<(Vec<Node>, Vec<Node>)> {
    let mut leaves = Vec::new();
    let mut adaptors = Vec::new();
    let mut i = 0;
    classify(nodes, &mut i, &mut leaves, &mut adaptors);
    if at == 0 || at >= leaves.len() {
        return None;
    }
    let with = |range: &[usize]| {
        let mut kept: Vec<usize> = adaptors.iter().chain(range).copied().collect();
        kept.sort_unstable();
        keep(nodes, &kept)
    };
    Some((with(&leaves[..at]), with(&leaves[at..])))
}

/// The pipeline with only its `k`-th pass (pre-order, adaptors not counted) in the adaptors
/// that hold it. `None` when there is no such pass.
pub fn only_pass(nodes: &[Node], k: usize) -> Option<Vec<Node>> {
    let mut leaves = Vec::new();
    let mut adaptors = Vec::new();
    let mut i = 0;
    classify(nodes, &mut i, &mut leaves, &mut adaptors);
    let leaf = *leaves.get(k)?;
    let mut kept = adaptors;
    kept.push(leaf);
    kept.sort_unstable();
    Some(keep(nodes, &kept))
}

/// How many passes (not adaptors) a pipeline has.
pub fn passes(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| n.children.as_deref().map_or(1, passes))
        .sum()
}

fn classify(nodes: &[Node], i: &mut usize, leaves: &mut Vec<usize>, adaptors: &mut Vec<usize>) {
    for n in nodes {
        let me = *i;
        *i += 1;
        match &n.children {
            None => leaves.push(me),
            Some(c) => {
                adaptors.push(me);
                classify(c, i, leaves, adaptors);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitting_keeps_each_side_in_its_adaptors() {
        let n = parse("cgscc(function(a,loop(b,c))),d").unwrap();
        assert_eq!(passes(&n), 4);
        let (pre, post) = split_at(&n, 2).unwrap();
        assert_eq!(render(&pre), "cgscc(function(a,loop(b)))");
        assert_eq!(render(&post), "cgscc(function(loop(c))),d");
        let (pre, post) = split_at(&n, 3).unwrap();
        assert_eq!(render(&pre), "cgscc(function(a,loop(b,c)))");
        assert_eq!(render(&post), "d");
        assert!(split_at(&n, 0).is_none() && split_at(&n, 4).is_none());
    }

    #[test]
    fn parse_render_round_trip() {
        let p = "annotation2metadata,function<eager-inv>(sroa<modify-cfg>,early-cse<>),cgscc(devirt<4>(inline,function(loop(indvars)))),x";
        let n = parse(p).unwrap();
        assert_eq!(render(&n), p);
        assert_eq!(n.len(), 4);
        assert_eq!(count(&n), 11);
        assert!(parse("a(b").is_none());
        assert!(parse("a<b").is_none());
    }

    #[test]
    fn keeping_drops_empty_adaptors_and_dropped_subtrees() {
        let n = parse("a,function(b,loop(c,d)),e").unwrap();
        // Pre-order: 0 a, 1 function, 2 b, 3 loop, 4 c, 5 d, 6 e.
        assert_eq!(render(&keep(&n, &[1, 3, 5])), "function(loop(d))");
        assert_eq!(render(&keep(&n, &[0, 3, 4, 6])), "a,e");
        assert_eq!(render(&keep(&n, &[1, 2])), "function(b)");
        assert_eq!(render(&keep(&n, &[1, 3])), "");
    }

    #[test]
    fn unwrapping_keeps_the_passes_and_params_can_go() {
        let n = parse("cgscc(devirt<4>(function<eager-inv>(sroa<x>,loop(indvars))))").unwrap();
        assert_eq!(
            render(&unwrap_at(&n, 1)),
            "cgscc(function<eager-inv>(sroa<x>,loop(indvars)))"
        );
        assert_eq!(
            render(&unwrap_at(&n, 4)),
            "cgscc(devirt<4>(function<eager-inv>(sroa<x>,indvars)))"
        );
        assert_eq!(
            render(&without_params(&n)),
            "cgscc(devirt(function(sroa,loop(indvars))))"
        );
        assert_eq!(
            render(&without_params_at(&n, 2)),
            "cgscc(devirt<4>(function(sroa<x>,loop(indvars))))"
        );
        assert_eq!(
            render(&without_params_at(&n, 3)),
            "cgscc(devirt<4>(function<eager-inv>(sroa,loop(indvars))))"
        );
        assert_eq!(render(&without_params_at(&n, 9)), render(&n));
    }

    #[test]
    fn the_crashing_pass_is_the_last_innermost() {
        let n = parse("function(sroa<modify-cfg>,loop(indvars<x>))").unwrap();
        assert_eq!(crashing_pass(&n).as_deref(), Some("indvars"));
        assert_eq!(crashing_pass(&[]), None);
    }
}
