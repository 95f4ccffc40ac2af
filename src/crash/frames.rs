//! Backtrace lines → [`Frame`]s, for every format LLVM and GCC print.
//!
//! Kept apart from `parse.rs` because there are five formats, each with its own quirks
//! (`docs/crash-formats.md` §1, §4):
//! 1. llvm-symbolizer output: ` #4 0x… name (module+0xOFF)` or ` #34 0x… name file:line:col`;
//! 2. the dladdr fallback of LLVM ≥ 15: `4  libclang-cpp.so.19.1 0x… name + 92` (bare module
//!    basename, decimal offset from the *symbol*, no module offset);
//! 3. glibc `backtrace_symbols_fd` (Debian's LLVM 14): `/path(_ZN…+0x31)[0x…]`, **mangled**;
//! 4. GCC's libbacktrace pairs: `0x… name` then `\tfile:line`.

use std::sync::LazyLock;

use regex::Regex;

use super::Frame;

/// ` #4 0x00007ff362e20eb9 name (/path/libclang-cpp.so.19.1+0xc20eb9)`; the name is optional.
static FRAME_MOD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*#(\d+) 0x([0-9a-fA-F]+) (?:(.*) )?\((\S+?)\+0x([0-9a-fA-F]+)\)$").unwrap()
});
/// ` #34 0x00007ff35a44524a __libc_start_call_main ./csu/../sysdeps/nptl/x.h:74:3`.
static FRAME_LOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*#(\d+) 0x([0-9a-fA-F]+) (.*) (\S+?):(\d+)(?::\d+)?$").unwrap()
});
/// ` #7 0x00007ff35a44524a` with nothing else (no module known).
static FRAME_BARE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*#(\d+) 0x([0-9a-fA-F]+)$").unwrap());
/// `5  libclang-cpp.so.19.1 0x00007f6eeec1a3fc clang::Preprocessor::Handle…(…) + 92`.
static FRAME_DLADDR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+)\s+(\S+)\s+0x([0-9a-fA-F]+)(?: (.*) \+ (\d+))?$").unwrap());
/// `/lib/x86_64-linux-gnu/libLLVM-14.so.1(_ZN4llvm3sys15PrintStackTraceERNS_11raw_ostreamEi+0x31)[0x7f252fea5291]`
/// or `(+0xdcb83f)` for a frame without a dynamic symbol.
static FRAME_GLIBC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(/\S+?)\((\S*?)(?:\+0x([0-9a-fA-F]+))?\)\[0x([0-9a-fA-F]+)\]$").unwrap()
});
/// `/usr/bin/clang-14[0x4120cc]`: glibc format for an executable frame without a symbol.
static FRAME_GLIBC_BARE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(/\S+?)\[0x([0-9a-fA-F]+)\]$").unwrap());
/// GCC: `0x7efd7440404f ???` (the location follows on the next line).
static GCC_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^0x([0-9a-fA-F]+) (\S.*)$").unwrap());
/// GCC: `\t./signal/../sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c:0`.
static GCC_LOC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\t(.+):(\d+)$").unwrap());

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s, 16).ok()
}

fn non_empty(s: Option<regex::Match<'_>>) -> Option<String> {
    s.map(|m| m.as_str().trim())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Itanium-demangles `name` when it is mangled (`_Z…`); other names are returned unchanged.
pub fn demangle(name: &str) -> String {
    if !name.starts_with("_Z") {
        return name.to_owned();
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_owned())
}

/// Parses every frame line of `lines`, innermost first (in printed order).
///
/// `gcc` enables GCC's `0x… name` format, which is too loose to look for in clang output
/// (SelectionDAG dumps print `0x…: node` lines).
pub(crate) fn parse_frames(lines: &[&str], gcc: bool) -> Vec<Frame> {
    let mut frames = Vec::new();
    // Formats without printed indices (glibc, GCC) are numbered in order.
    let mut next_unnumbered = 0u32;
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end_matches('\r');
        if let Some(frame) = parse_numbered(line) {
            frames.push(frame);
            continue;
        }
        let unnumbered = if let Some(c) = FRAME_GLIBC.captures(line) {
            let symbol = non_empty(c.get(2)).map(|s| demangle(&s));
            let rel = c.get(3).and_then(|m| hex(m.as_str()));
            Some(Frame {
                module: Some(c[1].to_owned()),
                // Without a symbol, the `+0x…` is relative to the module's load base.
                offset: if symbol.is_none() { rel } else { None },
                symbol_offset: if symbol.is_some() { rel } else { None },
                symbol,
                address: hex(&c[4]),
                ..Frame::default()
            })
        } else if let Some(c) = FRAME_GLIBC_BARE.captures(line) {
            Some(Frame {
                module: Some(c[1].to_owned()),
                address: hex(&c[2]),
                ..Frame::default()
            })
        } else if gcc {
            GCC_FRAME.captures(line).map(|c| {
                let name = c[2].trim();
                let loc = lines.get(i + 1).and_then(|l| GCC_LOC.captures(l));
                Frame {
                    symbol: (name != "???").then(|| demangle(name)),
                    address: hex(&c[1]),
                    file: loc.as_ref().map(|l| l[1].to_owned()).filter(|f| f != "???"),
                    line: loc
                        .as_ref()
                        .and_then(|l| l[2].parse().ok())
                        .filter(|&n| n > 0),
                    ..Frame::default()
                }
            })
        } else {
            None
        };
        if let Some(mut frame) = unnumbered {
            frame.index = next_unnumbered;
            next_unnumbered += 1;
            frames.push(frame);
        }
    }
    frames
}

/// The formats that print their own frame number (llvm-symbolizer, dladdr).
fn parse_numbered(line: &str) -> Option<Frame> {
    let index = |s: &str| s.parse::<u32>().ok();
    if let Some(c) = FRAME_MOD.captures(line) {
        return Some(Frame {
            index: index(&c[1])?,
            address: hex(&c[2]),
            symbol: non_empty(c.get(3)),
            module: Some(c[4].to_owned()),
            offset: hex(&c[5]),
            ..Frame::default()
        });
    }
    if let Some(c) = FRAME_LOC.captures(line) {
        return Some(Frame {
            index: index(&c[1])?,
            address: hex(&c[2]),
            symbol: non_empty(c.get(3)),
            file: Some(c[4].to_owned()),
            line: c[5].parse().ok(),
            ..Frame::default()
        });
    }
    if let Some(c) = FRAME_BARE.captures(line) {
        return Some(Frame {
            index: index(&c[1])?,
            address: hex(&c[2]),
            ..Frame::default()
        });
    }
    if let Some(c) = FRAME_DLADDR.captures(line) {
        return Some(Frame {
            index: index(&c[1])?,
            module: Some(c[2].to_owned()),
            address: hex(&c[3]),
            symbol: non_empty(c.get(4)),
            symbol_offset: c.get(5).and_then(|m| m.as_str().parse().ok()),
            ..Frame::default()
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str, gcc: bool) -> Frame {
        let frames = parse_frames(&[line, "\t../../gcc/cfgexpand.cc:1134"], gcc);
        assert_eq!(frames.len(), 1, "{line}");
        frames.into_iter().next().unwrap()
    }

    #[test]
    fn every_format() {
        // (line, gcc, index, symbol, module, offset, file, line, symbol_offset)
        type Row = (
            &'static str,
            bool,
            u32,
            Option<&'static str>,
            Option<&'static str>,
            Option<u64>,
            Option<&'static str>,
            Option<u32>,
            Option<u64>,
        );
        let rows: &[Row] = &[
            (
                " #5 0x00007ff362e1a3fc clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer) (/usr/lib/llvm-19/bin/../lib/libclang-cpp.so.19.1+0xc1a3fc)",
                false, 5,
                Some("clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer)"),
                Some("/usr/lib/llvm-19/bin/../lib/libclang-cpp.so.19.1"), Some(0xc1a3fc), None, None, None,
            ),
            (
                " #4 0x00007ff362e20eb9 (/usr/lib/llvm-19/bin/../lib/libclang-cpp.so.19.1+0xc20eb9)",
                false, 4, None, Some("/usr/lib/llvm-19/bin/../lib/libclang-cpp.so.19.1"), Some(0xc20eb9), None, None, None,
            ),
            (
                "#255 0x00007f39c6d1327e llvm::ScalarEvolution::computeSCEVAtScope(llvm::SCEV const*, llvm::Loop const*) (/usr/lib/llvm-19/bin/../lib/libLLVM.so.19.1+0x251327e)",
                false, 255, Some("llvm::ScalarEvolution::computeSCEVAtScope(llvm::SCEV const*, llvm::Loop const*)"),
                Some("/usr/lib/llvm-19/bin/../lib/libLLVM.so.19.1"), Some(0x251327e), None, None, None,
            ),
            (
                "#34 0x00007ff35a44524a __libc_start_call_main ./csu/../sysdeps/nptl/libc_start_call_main.h:74:3",
                false, 34, Some("__libc_start_call_main"), None, None,
                Some("./csu/../sysdeps/nptl/libc_start_call_main.h"), Some(74), None,
            ),
            (
                "5  libclang-cpp.so.19.1 0x00007f6eeec1a3fc clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer) + 92",
                false, 5, Some("clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer)"),
                Some("libclang-cpp.so.19.1"), None, None, None, Some(92),
            ),
            (
                "10 libclang-cpp.so.19.1 0x00007f6eeec36a51",
                false, 10, None, Some("libclang-cpp.so.19.1"), None, None, None, None,
            ),
            (
                "/lib/x86_64-linux-gnu/libLLVM-14.so.1(_ZN4llvm3sys15PrintStackTraceERNS_11raw_ostreamEi+0x31)[0x7f252fea5291]",
                false, 0, Some("llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)"),
                Some("/lib/x86_64-linux-gnu/libLLVM-14.so.1"), None, None, None, Some(0x31),
            ),
            (
                "/lib/x86_64-linux-gnu/libclang-cpp.so.14(+0xa4e3f3)[0x7f253644e3f3]",
                false, 0, None, Some("/lib/x86_64-linux-gnu/libclang-cpp.so.14"), Some(0xa4e3f3), None, None, None,
            ),
            (
                "/usr/bin/clang-14(main+0x2826)[0x411b36]",
                false, 0, Some("main"), Some("/usr/bin/clang-14"), None, None, None, Some(0x2826),
            ),
            (
                "/usr/bin/clang-14[0x4120cc]",
                false, 0, None, Some("/usr/bin/clang-14"), None, None, None, None,
            ),
            (
                "0x7efd74452eec expand_gimple_cond_expr(basic_block_def*)",
                true, 0, Some("expand_gimple_cond_expr(basic_block_def*)"), None, None,
                Some("../../gcc/cfgexpand.cc"), Some(1134), None,
            ),
            ("0x7efd7440404f ???", true, 0, None, None, None, Some("../../gcc/cfgexpand.cc"), Some(1134), None),
        ];
        for &(line, gcc, index, symbol, module, offset, file, lineno, symoff) in rows {
            let f = one(line, gcc);
            assert_eq!(f.index, index, "{line}");
            assert_eq!(f.symbol.as_deref(), symbol, "{line}");
            assert_eq!(f.module.as_deref(), module, "{line}");
            assert_eq!(f.offset, offset, "{line}");
            assert_eq!(f.file.as_deref(), file, "{line}");
            assert_eq!(f.line, lineno, "{line}");
            assert_eq!(f.symbol_offset, symoff, "{line}");
            assert!(f.address.is_some(), "{line}");
        }
    }

    #[test]
    fn not_frames() {
        let lines = [
            "  0x55cec7b1d4f0: i32 = Constant<0>",
            "0x55cec7b1d4f0: i32 = Constant<0>",
            "2.\tpragma_crash.c:1:19: parsing function body 'before'",
            "    2 | int ice_trigger(int y) { return helper(y) + 1; }",
            "56000 | }",
            "GH59446.cpp:5:10: error: no template named 'X'; did you mean 'N::X'?",
            "clang-19: error: clang frontend command failed with exit code 132 (use -v to see invocation)",
        ];
        assert_eq!(parse_frames(&lines, false), vec![]);
        // The SelectionDAG dump line has a colon right after the address: not a GCC frame
        // either, as long as GCC parsing is off; with it on, only `0x… name` lines count.
        assert_eq!(parse_frames(&lines[..2], true), vec![]);
    }
}
