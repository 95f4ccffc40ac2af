//! [`Crash`] → [`Signature`]. (Stub: being written.)

use super::{Crash, Signature};

/// Computes the SIGNATURE v1 of a crash.
pub fn signature(_crash: &Crash) -> Signature {
    Signature {
        id: String::new(),
        coarse_id: String::new(),
        text: String::new(),
        kind: String::new(),
        message: String::new(),
        phase: String::new(),
        frames: Vec::new(),
        unnamed_frames: 0,
        weak: true,
    }
}
