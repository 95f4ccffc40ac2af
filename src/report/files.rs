//! Reads a case directory for its report, and writes `report.md` and `repro.sh` into it.

use std::path::Path;

use crate::case::fileio::{self, cap};
use crate::case::{Case, CaseError};

use super::redact::{redact_bytes, redact_case, Redactions};

/// The content of the case's reduction output, if it has one. A file under that name that is
/// not a regular file of the case (a link, a FIFO, a device) is an error, not an empty file.
pub fn reduced_input(dir: &Path, case: &Case) -> Result<Option<Vec<u8>>, CaseError> {
    let Some(r) = case.reduction_section() else {
        return Ok(None);
    };
    if r.output.is_empty() {
        return Ok(None);
    }
    fileio::read(dir, &r.output, cap::INPUT)
}

/// A case with the files its report shows: the reduction output and the preprocessed input.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub case: Case,
    pub reduced: Option<Vec<u8>>,
    pub input: Option<Vec<u8>>,
}

impl Report {
    /// Reads `DIR/case.json` and the files it names.
    pub fn load(dir: &Path) -> Result<Report, CaseError> {
        let case = Case::load(dir)?;
        Ok(Report {
            reduced: reduced_input(dir, &case)?,
            input: fileio::read(dir, &case.input, cap::INPUT)?,
            case,
        })
    }

    /// The same report with home, user, host and temporary paths removed from every string
    /// of the case and from the files, so that everything rendered from it, the Compiler
    /// Explorer link included, is redacted.
    pub fn redacted(&self, r: &Redactions) -> Result<Report, serde_json::Error> {
        Ok(Report {
            case: redact_case(&self.case, r)?,
            reduced: self.reduced.as_deref().map(|b| redact_bytes(b, r)),
            input: self.input.as_deref().map(|b| redact_bytes(b, r)),
        })
    }

    /// `report.md`.
    pub fn markdown(&self) -> String {
        super::markdown(&self.case, self.reduced.as_deref(), self.input.as_deref())
    }

    /// The JSON report.
    pub fn json(&self) -> super::JsonReport<'_> {
        super::json(&self.case, self.reduced.as_deref(), self.input.as_deref())
    }
}

/// Renders and writes `DIR/report.md` and `DIR/repro.sh` (executable) for `case`.
pub fn write_files(dir: &Path, case: &Case) -> Result<(), CaseError> {
    let input = fileio::read(dir, &case.input, cap::INPUT)?.unwrap_or_default();
    let reduced = reduced_input(dir, case)?;
    fileio::write_mode(
        dir,
        "repro.sh",
        super::repro_script(case, &input, reduced.as_deref()).as_bytes(),
        0o755,
    )?;
    super::chart::write_svg(dir, case)?;
    fileio::write(
        dir,
        "report.md",
        super::markdown(case, reduced.as_deref(), Some(&input)).as_bytes(),
    )
}

/// Renders `DIR/report.md` and `DIR/repro.sh` again from the case as saved. Stages write only
/// their section of `case.json`; whoever runs a stage (the CLI, `triage`) calls this after it.
pub fn rerender(dir: &Path) -> Result<(), CaseError> {
    let case = Case::load(dir)?;
    write_files(dir, &case)
}
