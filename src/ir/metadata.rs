//! Garbage collection of numbered metadata in textual IR.
//!
//! Why this exists: the textual cuts remove a debug-info field (`enums:`, `retainedTypes:`,
//! `imports:` of a `!DICompileUnit`) in one line, but the thousands of nodes that only that
//! field reached stay in the text as lines of their own. LLVM drops them when it parses the
//! file, so they change nothing, yet they are what the report would show. On a big TU (a
//! HIP host TU with rocPRIM) they are nearly all the lines left, and the line cuts would spend
//! their whole time budget on them one ddmin step at a time.
//! [`collect`] keeps a `!N = …` definition only when something outside the numbered
//! definitions reaches it: an instruction, a function or global, named metadata
//! (`!llvm.dbg.cu`, `!llvm.module.flags`), through any chain of other definitions.
//!
//! [`without_unit_lists`] is the one cut that makes most of them unreached at once: the
//! compile unit's lists of every enum, retained type, global and imported entity of the TU.
//!
//! Pure: text in, text out; the stage tests the result like any other candidate.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

static UNIT_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r", (?:enums|retainedTypes|globals|imports|macros): ![0-9]+").expect("valid regex")
});

/// `text` with the whole-TU lists (`enums:`, `retainedTypes:`, `globals:`, `imports:`,
/// `macros:`) left out of every `!DICompileUnit`, then [`collect`]ed; `None` when no unit has
/// one. A backend crash seldom needs them: what it needs of the debug info is reached from the
/// crashing function's own `!dbg` attachments and records.
pub fn without_unit_lists(text: &str) -> Option<String> {
    let mut changed = false;
    let cut: String = text
        .split_inclusive('\n')
        .map(|l| {
            if definition(l).is_some() && l.contains("!DICompileUnit(") {
                let c = UNIT_LIST.replace_all(l, "");
                changed |= c.len() != l.len();
                c.into_owned()
            } else {
                l.to_owned()
            }
        })
        .collect();
    changed.then(|| collect(&cut))
}

/// The numbered metadata definition on a line: `!12 = …` gives 12.
fn definition(line: &str) -> Option<u64> {
    let rest = line.strip_prefix('!')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !rest[digits..].starts_with(" = ") {
        return None;
    }
    rest[..digits].parse().ok()
}

/// Every `!N` reference in `text` (a `!` followed by digits, not by a name, string or `{`).
/// One inside a string constant counts too: that keeps a node it need not, never the reverse.
fn references(text: &str) -> impl Iterator<Item = u64> + '_ {
    reference_spans(text).map(|(_, n)| n)
}

/// [`references`] with the byte offset of each `!`; definitions' own `!N` included.
fn reference_spans(text: &str) -> impl Iterator<Item = (usize, u64)> + '_ {
    let b = text.as_bytes();
    b.iter().enumerate().filter_map(move |(i, &c)| {
        if c != b'!' {
            return None;
        }
        let digits = b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        // `!12abc` would be a name, not a number.
        if b.get(i + 1 + digits)
            .is_some_and(|&d| d.is_ascii_alphabetic() || d == b'_' || d == b'.')
        {
            return None;
        }
        text[i + 1..i + 1 + digits].parse().ok().map(|n| (i, n))
    })
}

/// `text` with its numbered metadata renumbered `!0`, `!1`, … in the order of their
/// definitions (what is left after the cuts keeps clang's numbers: `!2205`, `!2207`); `None`
/// when they already are.
pub fn renumber(text: &str) -> Option<String> {
    let mut map: HashMap<u64, u64> = HashMap::new();
    for l in text.split_inclusive('\n') {
        if let Some(n) = definition(l) {
            let next = map.len() as u64;
            map.entry(n).or_insert(next);
        }
    }
    if map.iter().all(|(a, b)| a == b) {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (i, n) in reference_spans(text) {
        if let Some(new) = map.get(&n) {
            out.push_str(&text[at..i + 1]);
            out.push_str(&new.to_string());
            at = i + 1 + b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
        }
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// `text` without the numbered metadata definitions nothing reaches. The same text when every
/// definition is reached (or there are none).
pub fn collect(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut defs: HashMap<u64, usize> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(n) = definition(l) {
            defs.insert(n, i);
        }
    }
    if defs.is_empty() {
        return text.to_owned();
    }
    let mut reached = vec![false; lines.len()];
    let mut work: Vec<u64> = Vec::new();
    for l in lines.iter().filter(|l| definition(l).is_none()) {
        work.extend(references(l));
    }
    while let Some(n) = work.pop() {
        let Some(&i) = defs.get(&n) else { continue };
        if !reached[i] {
            reached[i] = true;
            work.extend(references(lines[i]).filter(|&m| m != n));
        }
    }
    lines
        .iter()
        .enumerate()
        .filter(|&(i, l)| reached[i] || definition(l).is_none())
        .map(|(_, l)| *l)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of what the cuts left on corpus/big-hip-rv-gh75010 (cut down): the compile
    /// unit lost its `enums:`/`retainedTypes:`/`imports:` fields, so `!2`-`!5` are orphans;
    /// `!9` is reached only from the function, `!7` only through `!6` (a cycle with `!8`).
    const IR: &str =
        "; RUN: opt -mtriple=riscv64 -passes='declare-to-assign' -disable-output < %s\n\
define <vscale x 2 x i32> @f() {\n\
  %1 = alloca ptr, i32 0, align 8\n\
    #dbg_declare(ptr %1, !6, !DIExpression(), !9)\n\
  ret <vscale x 2 x i32> zeroinitializer\n\
}\n\
!llvm.dbg.cu = !{!0}\n\
!llvm.module.flags = !{!10}\n\
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1)\n\
!1 = !DIFile(filename: \"input.hipi\", directory: \"/c\")\n\
!2 = !{!3, !4}\n\
!3 = !DICompositeType(tag: DW_TAG_enumeration_type, elements: !5)\n\
!4 = !DIEnumerator(name: \"hipSuccess\", value: 0)\n\
!5 = !{!4}\n\
!6 = !DILocalVariable(name: \"x\", arg: 2, scope: !7, file: !1, line: 22)\n\
!7 = distinct !DISubprogram(name: \"f\", unit: !0, retainedNodes: !8)\n\
!8 = !{!6}\n\
!9 = !DILocation(line: 22, column: 42, scope: !7)\n\
!10 = !{i32 2, !\"Debug Info Version\", i32 3}\n\
!11 = !{!\"!3 in a string keeps !3\"}\n";

    #[test]
    fn unreached_definitions_go_and_reached_ones_stay_in_order() {
        let out = collect(IR);
        let defs: Vec<u64> = out.lines().filter_map(definition).collect();
        assert_eq!(defs, [0, 1, 6, 7, 8, 9, 10]);
        // Everything that is not a numbered definition is untouched.
        for l in IR.lines().filter(|l| definition(l).is_none()) {
            assert!(out.contains(l), "{l}");
        }
        // Collecting again changes nothing.
        assert_eq!(collect(&out), out);
    }

    #[test]
    fn references_are_numbers_only() {
        let refs: Vec<u64> =
            references("!{!3, !DIExpression(), !\"a\", !llvm.x, !12, !7abc} !{i32 2}").collect();
        assert_eq!(refs, [3, 12]);
        assert_eq!(definition("!12 = !{}\n"), Some(12));
        assert_eq!(definition("!llvm.dbg.cu = !{!0}\n"), None);
        assert_eq!(definition("  %1 = add i32 0, 1 ; !3 = x\n"), None);
    }

    #[test]
    fn the_units_lists_go_with_what_only_they_reach() {
        let ir = IR.replace(
            "file: !1)\n",
            "file: !1, enums: !2, retainedTypes: !5, imports: !11)\n",
        );
        // With the lists, the enum nodes and `!11` are reached.
        let kept: Vec<u64> = collect(&ir).lines().filter_map(definition).collect();
        assert_eq!(kept, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        let cut = without_unit_lists(&ir).expect("lists to cut");
        assert!(cut.contains(
            "!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1)\n"
        ));
        let kept: Vec<u64> = cut.lines().filter_map(definition).collect();
        assert_eq!(kept, [0, 1, 6, 7, 8, 9, 10]);
        assert_eq!(without_unit_lists(&cut), None);
    }

    #[test]
    fn renumbering_follows_the_definitions() {
        let ir = "define void @f() !dbg !2207 {\n  ret void, !dbg !12\n}\n\
!llvm.module.flags = !{!2205}\n\
!0 = distinct !DICompileUnit(file: !DIFile(filename: \"a\", directory: \"\"))\n\
!2205 = !{i32 2, !\"Debug Info Version\", i32 3}\n\
!2207 = distinct !DISubprogram(unit: !0)\n\
!12 = !DILocation(line: 1, scope: !2207)\n";
        let out = renumber(ir).expect("renumbered");
        assert_eq!(
            out,
            "define void @f() !dbg !2 {\n  ret void, !dbg !3\n}\n\
!llvm.module.flags = !{!1}\n\
!0 = distinct !DICompileUnit(file: !DIFile(filename: \"a\", directory: \"\"))\n\
!1 = !{i32 2, !\"Debug Info Version\", i32 3}\n\
!2 = distinct !DISubprogram(unit: !0)\n\
!3 = !DILocation(line: 1, scope: !2)\n"
        );
        assert_eq!(renumber(&out), None);
    }

    #[test]
    fn text_without_metadata_is_unchanged() {
        let ir = "define void @f() {\n  ret void\n}\n";
        assert_eq!(collect(ir), ir);
    }
}
