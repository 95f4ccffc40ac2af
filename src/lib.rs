//! icepick: turns a compiler crash buried in a huge build into a small, verified, classified
//! bug report.
//!
//! Stages meet only through the case directory ([`case`]); [`exec`] is the only module that
//! spawns processes; [`crash`], [`command`] and the `reducers` crate are pure.

pub mod capture;
pub mod case;
pub mod classify;
pub mod cli;
pub mod command;
pub mod crash;
pub mod dashboard;
pub mod ddmin;
pub mod elf;
pub mod error;
pub mod exec;
pub mod executor;
pub mod flags;
pub mod host;
pub mod interrupt;
pub mod ir;
pub mod pipeline;
pub mod reduce;
pub mod report;
pub mod scanlog;
pub mod store;
pub mod versions;
