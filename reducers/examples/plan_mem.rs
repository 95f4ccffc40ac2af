//! Prints the peak heap the closure pass takes to plan its first candidate on generated main
//! files (see `tests/common/generate.rs`), in bytes and per byte of input, and a fingerprint
//! of its candidates (to check that a change to the planner's data keeps its results).
//!
//! ```text
//! cargo run -p reducers --release --example plan_mem              # main files of 2 and 8 MB
//! cargo run -p reducers --release --example plan_mem -- main:17 deep:100000 nest:300
//! ```
//!
//! The heap is counted by a global allocator that wraps the system's: the peak of live bytes
//! while the pass plans and yields its candidates, less what was live before (the input).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use reducers::passes::{CPass, Hints};

#[path = "../tests/common/generate.rs"]
mod generate;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            let live = LIVE.fetch_add(new_size, Relaxed) + new_size;
            PEAK.fetch_max(live, Relaxed);
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let mut inputs: Vec<String> = std::env::args().skip(1).collect();
    if inputs.is_empty() {
        inputs = vec!["main:2".into(), "main:8".into()];
    }
    for input in &inputs {
        let Some(text) = generate::named(input) else {
            eprintln!("unknown input {input:?}: expected main:MB, deep:N or nest:N");
            std::process::exit(2);
        };
        let before = LIVE.load(Relaxed);
        PEAK.store(before, Relaxed);
        let mut hash = 0u64;
        let mut count = 0usize;
        for cand in CPass::Closure.candidates(&text, &Hints::default()) {
            hash = hash.rotate_left(5) ^ reducers::content_hash(&cand) as u64;
            count += 1;
        }
        let peak = PEAK.load(Relaxed) - before;
        println!(
            "{input:>12} {:>9} B  peak {:>11} B  {:6.2} B/B  {count} candidates, fingerprint {hash:016x}",
            text.len(),
            peak,
            peak as f64 / text.len() as f64
        );
        // The closure located at a line of the main file (more candidates), for the fingerprint.
        let (file, line) = if input.starts_with("deep") {
            ("deep.cc", 12)
        } else if input.starts_with("nest") {
            ("nest.cc", 2)
        } else {
            ("big.c", 12)
        };
        let hints = Hints {
            location: Some((file.into(), line)),
            ..Hints::default()
        };
        let cands = CPass::Closure.candidates(&text, &hints).take(20);
        let hash = cands.fold(0u64, |h, c| {
            h.rotate_left(5) ^ reducers::content_hash(&c) as u64
        });
        println!("{:>12} located  fingerprint {hash:016x}", "");
    }
}
