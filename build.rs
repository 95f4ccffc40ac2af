//! Links the `icepick` and `icepick-wrap` binaries as a position-dependent executable. As a compiler launcher
//! (`icepick wrap`) it starts once per compile; a PIE makes the loader apply ~17,800 relative
//! relocations (76 pages of copy-on-write faults) at every start, which dominated the
//! launcher's overhead (docs/design/launcher.md).
fn main() {
    println!("cargo:rustc-link-arg-bin=icepick=-no-pie");
    println!("cargo:rustc-link-arg-bin=icepick-wrap=-no-pie");
    println!("cargo:rerun-if-changed=build.rs");
}
