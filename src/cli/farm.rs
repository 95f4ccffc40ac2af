//! `--executor` and its options, shared by the commands that run the compiler on many
//! candidates (`reduce`, `flags`): where those tests run (src/executor, docs/farm.md).

use clap::Args;

use crate::executor::{Choice, Kind};

/// Where compiler tests run.
#[derive(Debug, Args)]
pub struct FarmArgs {
    /// Where the compiler tests run: here, or on an icecream or distcc farm (default: the
    /// ICEPICK_EXECUTOR environment variable, else local). The case's input must crash the
    /// same way on the farm first, else the tests stay local; a classification that says
    /// the crash depends on this host keeps them local too. `reduce --test SCRIPT` always
    /// runs locally (the script runs the compiler itself).
    #[arg(long, value_enum, value_name = "NAME")]
    executor: Option<Kind>,
    /// distcc's host list, in DISTCC_HOSTS syntax (default: $DISTCC_HOSTS).
    #[arg(long, value_name = "HOSTS")]
    distcc_hosts: Option<String>,
}

impl FarmArgs {
    /// The executor asked for: the option, else `ICEPICK_EXECUTOR`, else local.
    pub fn choice(&self) -> Result<Choice, String> {
        let kind = match self.executor {
            Some(k) => k,
            None => match std::env::var("ICEPICK_EXECUTOR") {
                Ok(v) if !v.is_empty() => {
                    <Kind as clap::ValueEnum>::from_str(&v, true).map_err(|_| {
                        format!("ICEPICK_EXECUTOR={v}: expected local, icecream or distcc")
                    })?
                }
                _ => Kind::Local,
            },
        };
        Ok(Choice {
            kind,
            distcc_hosts: self.distcc_hosts.clone(),
        })
    }
}
