//! Writes `report.md` and `repro.sh` of a case directory from its `case.json` and inputs.

use std::path::Path;

use crate::case::{write_atomic, Case, CaseError};

/// The content of the case's reduction output, if it has one.
pub fn reduced_input(dir: &Path, case: &Case) -> Option<Vec<u8>> {
    let name = case.reduction.as_ref()?.get("output")?.as_str()?;
    std::fs::read(dir.join(name)).ok()
}

/// Renders and writes `DIR/report.md` and `DIR/repro.sh` (executable) for `case`.
pub fn write_files(dir: &Path, case: &Case) -> Result<(), CaseError> {
    let input = std::fs::read(dir.join(&case.input)).unwrap_or_default();
    let reduced = reduced_input(dir, case);
    let repro = dir.join("repro.sh");
    write_atomic(
        &repro,
        super::repro_script(case, &input, reduced.as_deref()).as_bytes(),
    )?;
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&repro, std::fs::Permissions::from_mode(0o755));
    }
    write_atomic(
        &dir.join("report.md"),
        super::markdown(case, reduced.as_deref()).as_bytes(),
    )
}
