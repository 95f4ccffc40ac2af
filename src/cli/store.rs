//! `icepick store flush|status`: the store itself. `flush` sends the occurrences that
//! `icepick wrap` spooled while the store could not be reached (see
//! [`crate::store::spool`]); `status` names the store (redacted), its schema and what waits.

use std::io::Write;

use clap::{Args, Subcommand};

use crate::error;
use crate::store::{self, spool, Store};

/// Arguments of `icepick store`.
#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    action: Action,
    /// Print one JSON object on stdout.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Send the spooled occurrences to the store.
    Flush,
    /// Where the store is, whether it answers, and how many occurrences wait in the spool.
    Status,
}

/// Runs `icepick store`.
pub fn run(args: StoreArgs) -> anyhow::Result<u8> {
    let loc = store::default_location()?;
    let mut out = crate::cli::term::stdout();
    match args.action {
        Action::Flush => {
            let mut s = Store::open_at(&loc)?;
            let f = spool::flush(&mut s)?;
            if args.json {
                let v =
                    serde_json::json!({"store": loc.to_string(), "sent": f.sent, "left": f.left});
                writeln!(out, "{v}")?;
            } else {
                writeln!(
                    out,
                    "sent {} to {loc}{}",
                    super::show::count(f.sent, "spooled occurrence", "spooled occurrences"),
                    if f.left > 0 {
                        format!("; {} left in {}", f.left, spool::dir(&loc).display())
                    } else {
                        String::new()
                    }
                )?;
            }
            Ok(if f.left > 0 { error::FAILED } else { error::OK })
        }
        Action::Status => {
            let reachable = Store::open_existing_at(&loc);
            let waiting = spool::pending(&loc);
            let (state, code) = match &reachable {
                Ok(Some(_)) => ("ok".to_string(), error::OK),
                Ok(None) => ("does not exist yet".to_string(), error::OK),
                Err(e) => (e.to_string(), error::FAILED),
            };
            if args.json {
                let v = serde_json::json!({
                    "store": loc.to_string(),
                    "state": state,
                    "schema_version": store::SCHEMA_VERSION,
                    "spooled": waiting,
                    "spool": spool::dir(&loc).to_string_lossy(),
                });
                writeln!(out, "{v}")?;
            } else {
                writeln!(out, "store:   {loc}")?;
                writeln!(out, "state:   {state}")?;
                writeln!(
                    out,
                    "spooled: {} in {}",
                    super::show::count(waiting, "occurrence", "occurrences"),
                    spool::dir(&loc).display()
                )?;
            }
            Ok(code)
        }
    }
}
