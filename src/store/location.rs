//! Where a store is: a directory holding `store.sqlite` (one machine), or a PostgreSQL URL
//! (a fleet). `ICEPICK_STORE` or `--store` says which; the URL's password is a secret, so a
//! location prints only as its redacted form ([`Location`]'s `Display`), and every message
//! that could quote a connection string goes through [`Location::scrub`].
//!
//! Credentials come from the URL, `PGPASSWORD`, or the password file (`PGPASSFILE`, else
//! `~/.pgpass`, libpq's format), never from a command-line flag of icepick's own.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A store's location.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A directory: `store.sqlite` and `cases/`.
    Dir(PathBuf),
    /// A PostgreSQL database.
    Postgres(PgUrl),
}

/// A PostgreSQL URL. `Debug` and `Display` show it redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl {
    url: String,
    shown: String,
    /// Every secret the URL holds (the password as written and as decoded), found once by
    /// [`parse_url`] when the location is parsed.
    secrets: Vec<String>,
}

impl std::fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgUrl({})", self.shown)
    }
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Dir(p) => write!(f, "Dir({})", p.display()),
            Location::Postgres(u) => write!(f, "{u:?}"),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Dir(p) => write!(f, "{}", p.display()),
            Location::Postgres(u) => f.write_str(&u.shown),
        }
    }
}

/// Whether `s` names a PostgreSQL database rather than a directory.
pub fn is_url(s: &str) -> bool {
    s.starts_with("postgresql://") || s.starts_with("postgres://")
}

impl Location {
    /// `s` as a location: a `postgres[ql]://` URL, else a directory.
    pub fn parse(s: &std::ffi::OsStr) -> Location {
        match s.to_str().filter(|s| is_url(s)) {
            Some(url) => {
                let parsed = parse_url(url);
                Location::Postgres(PgUrl {
                    url: url.to_string(),
                    shown: parsed.shown,
                    secrets: parsed.secrets,
                })
            }
            None => Location::Dir(PathBuf::from(s)),
        }
    }

    /// `text` with this location's secrets (the password of its URL, the URL itself)
    /// replaced: for messages from clients that might quote them.
    pub fn scrub(&self, text: &str) -> String {
        let Location::Postgres(u) = self else {
            return text.to_string();
        };
        let mut t = text.replace(&u.url, &u.shown);
        for s in &u.secrets {
            t = t.replace(s, "***");
        }
        if let Ok(pw) = std::env::var("PGPASSWORD") {
            if !pw.is_empty() {
                t = t.replace(&pw, "***");
            }
        }
        t
    }
}

/// A URL split the way the driver splits it: what may be shown, and what may not.
#[derive(Debug, PartialEq)]
struct ParsedUrl {
    shown: String,
    secrets: Vec<String>,
}

/// `url` with the password (in the user info or a `password=` parameter) replaced by `***`.
pub fn redact_url(url: &str) -> String {
    parse_url(url).shown
}

/// Splits `url` with the rules of the driver that connects with it (tokio-postgres'
/// `UrlParser`), not those of a generic URL: the user info runs to the *first* `@` anywhere,
/// so a password may hold `/`, `?` or `#`; the host runs to `/` or `?`, the path to `?`; each
/// parameter's key runs to `=` and its value to `&`. A password is then exactly what the
/// driver would send, and redacting it leaves nothing of it in view. Larger cuts are made
/// where the driver's split could surprise a reader (an `@` in the host part): over-hiding
/// costs a less precise message, under-hiding a leaked password.
fn parse_url(url: &str) -> ParsedUrl {
    let Some((scheme, rest)) = url.split_once("://") else {
        return ParsedUrl {
            shown: url.to_string(),
            secrets: Vec::new(),
        };
    };
    let mut secrets = Vec::new();
    let mut secret = |raw: &str| {
        if !raw.is_empty() {
            secrets.push(raw.to_string());
            let decoded = percent_decode(raw);
            if decoded != raw && !decoded.is_empty() {
                secrets.push(decoded);
            }
        }
    };
    let mut shown = format!("{scheme}://");
    let mut s = rest;
    if let Some(at) = s.find('@') {
        let creds = &s[..at];
        match creds.split_once(':') {
            Some((user, pw)) => {
                secret(pw);
                shown.push_str(user);
                shown.push_str(":***@");
            }
            None => {
                shown.push_str(creds);
                shown.push('@');
            }
        }
        s = &s[at + 1..];
    }
    let host_end = s.find(['/', '?']).unwrap_or(s.len());
    let (host, tail) = s.split_at(host_end);
    match host.rsplit_once('@') {
        // The driver would take this as a host name; to a reader it looks like the rest of
        // a password with an `@`: hidden.
        Some((hidden, h)) => {
            secret(hidden);
            shown.push_str("***@");
            shown.push_str(h);
        }
        None => shown.push_str(host),
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    shown.push_str(path);
    if let Some(mut q) = query {
        shown.push('?');
        while !q.is_empty() {
            let Some(eq) = q.find('=') else {
                // The driver refuses an unterminated parameter; its text is not shown.
                shown.push_str("***");
                secret(q);
                break;
            };
            let key = &q[..eq];
            q = &q[eq + 1..];
            let (value, next, amp) = match q.find('&') {
                Some(amp) => (&q[..amp], &q[amp + 1..], true),
                None => (q, "", false),
            };
            shown.push_str(key);
            shown.push('=');
            if percent_decode(key)
                .to_ascii_lowercase()
                .contains("password")
            {
                secret(value);
                shown.push_str("***");
            } else {
                shown.push_str(value);
            }
            if amp {
                shown.push('&');
            }
            q = next;
        }
    }
    ParsedUrl { shown, secrets }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() && s.is_char_boundary(i + 3) {
            if let Ok(n) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(n);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How long connecting may take before the store counts as unreachable (a build waits).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

impl PgUrl {
    /// The client configuration: the URL, then the environment for what it leaves out
    /// (`PGUSER`/`USER`, `PGPASSWORD`, the password file), and a connect timeout.
    pub fn config(&self) -> Result<postgres::Config, String> {
        let mut c: postgres::Config = self
            .url
            .parse()
            .map_err(|e: postgres::Error| format!("invalid PostgreSQL URL {}: {e}", self.shown))?;
        if c.get_user().is_none() {
            if let Some(u) = env("PGUSER").or_else(|| env("USER")) {
                c.user(&u);
            }
        }
        if c.get_dbname().is_none() {
            if let Some(d) = env("PGDATABASE") {
                c.dbname(&d);
            }
        }
        if c.get_hosts().is_empty() {
            match env("PGHOST") {
                Some(h) => {
                    c.host(&h);
                }
                None => {
                    c.host_path("/var/run/postgresql");
                }
            }
        }
        if c.get_password().is_none() {
            if let Some(pw) = env("PGPASSWORD").or_else(|| pgpass_lookup(&c)) {
                c.password(pw);
            }
        }
        if c.get_connect_timeout().is_none() {
            c.connect_timeout(CONNECT_TIMEOUT);
        }
        c.application_name("icepick");
        Ok(c)
    }
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// The password for `c` in the password file, libpq's format: `host:port:db:user:password`,
/// `*` matching anything, `\:` and `\\` escaped; a Unix socket matches `localhost`.
fn pgpass_lookup(c: &postgres::Config) -> Option<String> {
    let file = env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let host = match c.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".to_string(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432).to_string();
    let db = c.get_dbname().unwrap_or("").to_string();
    let user = c.get_user().unwrap_or("").to_string();
    let want = [host, port, db, user];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|l| {
            let f = pgpass_fields(l);
            (f.len() == 5 && f[..4].iter().zip(&want).all(|(a, b)| a == "*" || a == b))
                .then(|| f[4].clone())
        })
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut().expect("one field").push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().expect("one field").push(c),
        }
    }
    out
}

/// This user's cache directory for icepick (`$XDG_CACHE_HOME/icepick`, else
/// `~/.cache/icepick`, else under the temporary directory): the spool, and the local copies
/// of cases of a PostgreSQL store.
pub fn cache_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("ICEPICK_CACHE").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        return p.join("icepick");
    }
    match env("HOME") {
        Some(h) => Path::new(&h).join(".cache/icepick"),
        None => std::env::temp_dir().join(format!("icepick-cache-{}", unsafe_uid())),
    }
}

fn unsafe_uid() -> u32 {
    // SAFETY: getuid cannot fail and touches no memory of ours.
    unsafe { libc::getuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_redacted() {
        assert_eq!(
            redact_url("postgresql://fleet:s3cr%40t@db.example:5432/icepick?sslmode=disable"),
            "postgresql://fleet:***@db.example:5432/icepick?sslmode=disable"
        );
        assert_eq!(
            redact_url("postgres://u@h/d?host=/tmp/s&password=hunter2"),
            "postgres://u@h/d?host=/tmp/s&password=***"
        );
        assert_eq!(redact_url("postgresql:///d"), "postgresql:///d");
        let l = Location::parse("postgresql://u:pa%3Ass@h/d".as_ref());
        assert_eq!(l.to_string(), "postgresql://u:***@h/d");
        assert!(!format!("{l:?}").contains("pa%3Ass"));
        assert_eq!(
            l.scrub("failed for u:pa:ss and pa%3Ass"),
            "failed for u:*** and ***"
        );
    }

    /// The driver itself, given each URL, must find no password that the shown form still
    /// holds, and the secrets scrub must replace cover it.
    #[test]
    fn redaction_follows_the_drivers_split() {
        for (url, want) in [
            (
                "postgresql://u:S3cr/et?Pw@host/db",
                "postgresql://u:***@host/db",
            ),
            (
                "postgresql://u:a#b?c=d&e@h:5432/db?sslmode=disable",
                "postgresql://u:***@h:5432/db?sslmode=disable",
            ),
            ("postgres://u:p%2Fw@h/d", "postgres://u:***@h/d"),
            ("postgres://u:pw1@ss2@h/d", "postgres://u:***@***@h/d"),
            (
                "postgres://u@h/d?p%61ssword=x%26y&sslmode=disable",
                "postgres://u@h/d?p%61ssword=***&sslmode=disable",
            ),
            (
                "postgres://u@h/d?host=/tmp/s&password=a/b?c#d",
                "postgres://u@h/d?host=/tmp/s&password=***",
            ),
            ("postgres://u@h/d?password", "postgres://u@h/d?***"),
        ] {
            let shown = redact_url(url);
            assert_eq!(shown, want, "{url}");
            let l = Location::parse(url.as_ref());
            if let Ok(c) = url.parse::<postgres::Config>() {
                if let Some(pw) = c.get_password() {
                    let pw = String::from_utf8_lossy(pw);
                    assert!(!shown.contains(pw.as_ref()), "{url}: {shown}");
                    assert_eq!(l.scrub(&format!("<{pw}>")), "<***>", "{url}");
                }
            }
            assert!(!format!("{l:?} {l}").contains("S3cr"), "{url}");
        }
    }

    #[test]
    fn pgpass_lines() {
        assert_eq!(
            pgpass_fields(r"localhost:*:db:u:p\:w\\d:x"),
            ["localhost", "*", "db", "u", r"p:w\d:x"]
        );
    }

    #[test]
    fn paths_are_directories() {
        assert_eq!(
            Location::parse("/var/lib/icepick".as_ref()),
            Location::Dir("/var/lib/icepick".into())
        );
        assert!(matches!(
            Location::parse("postgres://x/y".as_ref()),
            Location::Postgres(_)
        ));
    }
}
