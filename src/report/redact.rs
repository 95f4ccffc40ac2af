//! Redaction of local names and paths before a report or a dashboard leaves the machine
//! (`icepick report --redact`, `icepick dashboard --redact`).
//!
//! Why this exists: a case is often captured on one machine (a colleague's, a CI runner) and
//! reported from another, so the names to remove are those of both: this machine's home
//! directory, user and host name, and the ones the case itself recorded (its `host` facts,
//! and the home directories its paths run through). Home directories become `~`, user names
//! `USER`, host names `HOST` (as whole words: a host called `ab` is not removed from `grab`,
//! however short it is), explicitly named paths (the crash store) their label, and the names
//! of temporary files and directories `…`.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::case::host::HostFacts;
use crate::case::Case;

/// Local facts to remove from a report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactions {
    /// Home directories (`/home/alice`), replaced by `~`.
    pub homes: Vec<String>,
    /// User names, replaced by `USER`.
    pub users: Vec<String>,
    /// Host names (each also without its domain), replaced by `HOST`.
    pub hosts: Vec<String>,
    /// Other paths and what replaces them (`/srv/ci/icepick-store` → `STORE`).
    pub paths: Vec<(String, String)>,
}

impl Redactions {
    /// This machine's home directory, user and host name.
    pub fn of_this_machine() -> Self {
        let mut r = Redactions::default();
        if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
            r.add_host(h.trim());
        }
        if let Some(home) = std::env::var_os("HOME") {
            r.add_home(&home.to_string_lossy());
        }
        for var in ["USER", "LOGNAME"] {
            if let Ok(u) = std::env::var(var) {
                r.add_user(&u);
            }
        }
        r
    }

    /// The names a case recorded: host name, user and home from its `host` facts, and every
    /// home directory (`/home/NAME`, `/Users/NAME`, `/root`) that one of its strings (the
    /// working directory, paths, commands) runs through, with its user.
    pub fn of_case(case: &Case) -> Self {
        serde_json::to_value(case)
            .map(|v| Self::of_case_value(&v))
            .unwrap_or_default()
    }

    /// [`Redactions::of_case`] over `case.json`'s value.
    pub fn of_case_value(case: &Value) -> Self {
        let mut r = Redactions::default();
        if let Some(h) = HostFacts::of_case_json(case) {
            let kernel_node = h.kernel.as_ref().and_then(|k| k.nodename.as_ref());
            for s in [
                h.hostname.as_ref(),
                h.nodename.as_ref(),
                kernel_node,
                h.host.as_ref(),
            ]
            .into_iter()
            .flatten()
            {
                r.add_host(s);
            }
            for s in [&h.user, &h.username, &h.login].into_iter().flatten() {
                r.add_user(s);
            }
            if let Some(s) = &h.home {
                r.add_home(s);
            }
        }
        r.add_homes_in(case);
        r
    }

    /// Adds every home directory (and its user) that a string in `v` runs through.
    pub fn add_homes_in(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.add_homes_in_text(s),
            Value::Array(a) => a.iter().for_each(|x| self.add_homes_in(x)),
            Value::Object(o) => o.values().for_each(|x| self.add_homes_in(x)),
            _ => {}
        }
    }

    /// Adds every home directory (and its user) that `text` names.
    pub fn add_homes_in_text(&mut self, text: &str) {
        // `/home/NAME` anywhere (`-I/home/bob/inc`); `/root` only where a path starts.
        static HOME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(
                r#"(/(?:home|Users)/([^/\s'"`\\:;=,]+)|(?:^|[\s'"=])/root)(?:[/\s'"`:;=,]|$)"#,
            )
            .expect("valid")
        });
        let found: Vec<(String, Option<String>)> = HOME
            .captures_iter(text)
            .map(|c| {
                let home = c[1].trim_start_matches(|c: char| c != '/').to_string();
                (home, c.get(2).map(|u| u.as_str().to_string()))
            })
            .collect();
        for (home, user) in found {
            self.add_home(&home);
            if let Some(u) = user {
                self.add_user(&u);
            }
        }
    }

    /// Adds a host name, and its first label when it has a domain.
    pub fn add_host(&mut self, host: &str) {
        let host = host.trim();
        push_new(&mut self.hosts, host);
        if let Some((short, _)) = host.split_once('.') {
            push_new(&mut self.hosts, short);
        }
    }

    /// Adds a user name.
    pub fn add_user(&mut self, user: &str) {
        push_new(&mut self.users, user.trim());
    }

    /// Adds a home directory (`/` and relative paths are not homes).
    pub fn add_home(&mut self, home: &str) {
        let home = home.trim_end_matches('/');
        if home.starts_with('/') && home.len() > 1 {
            push_new(&mut self.homes, home);
        }
    }

    /// Adds a path to replace by `label`.
    pub fn add_path(&mut self, path: &str, label: &str) {
        let path = path.trim_end_matches('/');
        if path.starts_with('/') && path.len() > 1 && !self.paths.iter().any(|(p, _)| p == path) {
            self.paths.push((path.to_string(), label.to_string()));
        }
    }

    /// Everything of `other` too.
    pub fn merge(&mut self, other: &Redactions) {
        other.homes.iter().for_each(|h| self.add_home(h));
        other.users.iter().for_each(|u| self.add_user(u));
        other.hosts.iter().for_each(|h| self.add_host(h));
        other.paths.iter().for_each(|(p, l)| self.add_path(p, l));
    }

    /// This machine's names and the case's: what `report --redact` removes.
    pub fn for_case(case: &Case) -> Self {
        let mut r = Redactions::of_this_machine();
        r.merge(&Redactions::of_case(case));
        r
    }
}

fn push_new(v: &mut Vec<String>, s: &str) {
    if !s.is_empty() && !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Replaces the home directories by `~`, the user and host names by `USER` and `HOST`, and
/// the name under `/tmp` of temporary directories and files (`/tmp/icepick-x1/a.c`,
/// `/tmp/widget-205623.sh`) by `…`.
pub fn redact(text: &str, r: &Redactions) -> String {
    Redactor::new(r).apply(text, false)
}

/// Whether a character continues a word (so a name next to it is part of a longer word).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether a character continues a path component or host name.
fn name_char(c: char) -> bool {
    word_char(c) || c == '-' || c == '.'
}

/// `text` with every whole-word occurrence of `name` replaced by `with`. Names of three
/// characters or more are words between non-word characters (`build-pioneer` →
/// `build-HOST`); shorter ones must not follow `-` or `.` either (`-x c`, `a.x`), and in
/// source code (`source`) are replaced only next to a `/`, as a path component: a host
/// called `x` must not turn `int x;` into `int HOST;`.
fn replace_name(text: &str, name: &str, with: &str, source: bool) -> String {
    if name.is_empty() {
        return text.to_string();
    }
    let short = name.chars().count() < 3;
    // A name ends at a non-word character; a short one is also not preceded by `-` or `.`
    // (`-x` is an option, `.x` an extension; `x.example.com` and `x-build` are host `x`).
    let ends = |c: Option<char>, before: bool| match c {
        None => true,
        Some(c) if short && before => !name_char(c),
        Some(c) => !word_char(c),
    };
    let mut out = String::with_capacity(text.len());
    let (mut emitted, mut from) = (0, 0);
    while let Some(off) = text[from..].find(name) {
        let i = from + off;
        let end = i + name.len();
        let before = text[..i].chars().next_back();
        let after = text[end..].chars().next();
        let mut whole = ends(before, true) && ends(after, false);
        if whole && short && source {
            whole = before == Some('/') || after == Some('/');
        }
        if whole {
            out.push_str(&text[emitted..i]);
            out.push_str(with);
            emitted = end;
            from = end;
        } else {
            from = i + text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out.push_str(&text[emitted..]);
    out
}

/// `text` with `path` replaced by `with` where it is a whole path (the next character does
/// not continue its last component).
fn replace_path(text: &str, path: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(path) {
        let end = i + path.len();
        let whole = !rest[end..].chars().next().is_some_and(name_char);
        out.push_str(&rest[..i]);
        out.push_str(if whole { with } else { path });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// [`redact`]'s replacements, prepared once for many strings.
pub(crate) struct Redactor {
    /// Paths (longest first) and what replaces them.
    paths: Vec<(String, String)>,
    /// Names and what replaces them.
    names: Vec<(String, &'static str)>,
    tmp: regex::Regex,
}

impl Redactor {
    pub(crate) fn new(r: &Redactions) -> Self {
        let mut paths: Vec<(String, String)> = r.paths.clone();
        paths.extend(r.homes.iter().map(|h| (h.clone(), "~".to_string())));
        // A longer path first: `/home/alice/store` is the store, not `~/store`.
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        let mut names: Vec<(String, &'static str)> = Vec::new();
        let mut seen = BTreeSet::new();
        for (list, with) in [(&r.users, "USER"), (&r.hosts, "HOST")] {
            for n in list {
                if seen.insert(n.clone()) {
                    names.push((n.clone(), with));
                }
            }
        }
        // Longer names first, so `pioneer-2` goes before `pioneer`.
        names.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
        Redactor {
            paths,
            names,
            tmp: regex::Regex::new(r"/tmp/[^/\s'`]+").expect("valid"),
        }
    }

    /// `text` redacted; `source` for program text (see [`replace_name`]).
    pub(crate) fn apply(&self, text: &str, source: bool) -> String {
        let mut out = text.to_string();
        for (p, with) in &self.paths {
            out = replace_path(&out, p, with);
        }
        for (n, with) in &self.names {
            out = replace_name(&out, n, with, source);
        }
        self.tmp.replace_all(&out, "/tmp/…").into_owned()
    }

    /// Whether `s` is one of the names, and nothing else.
    fn is_name(&self, s: &str) -> bool {
        self.names.iter().any(|(n, _)| n == s)
    }
}

/// [`redact`] applied to every string of a case (keys and numbers are left alone). A string
/// that is a user or host name and nothing else is kept only when replacing it would make the
/// case unreadable (a user called `clang` is not the compiler family `clang`); any other
/// failure is an error, never an unredacted case.
pub fn redact_case(case: &Case, r: &Redactions) -> Result<Case, serde_json::Error> {
    fn walk(v: &mut Value, red: &Redactor, keep_names: bool) {
        match v {
            Value::String(s) if !(keep_names && red.is_name(s)) => *s = red.apply(s, false),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, red, keep_names)),
            Value::Object(o) => o.values_mut().for_each(|x| walk(x, red, keep_names)),
            _ => {}
        }
    }
    let red = Redactor::new(r);
    let value = serde_json::to_value(case)?;
    let mut v = value.clone();
    walk(&mut v, &red, false);
    serde_json::from_value(v).or_else(|_| {
        let mut v = value;
        walk(&mut v, &red, true);
        serde_json::from_value(v)
    })
}

/// [`redact`] applied to a source file's text (bytes that are not UTF-8 are replaced).
pub fn redact_bytes(b: &[u8], r: &Redactions) -> Vec<u8> {
    Redactor::new(r)
        .apply(&String::from_utf8_lossy(b), true)
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::sample_case;

    fn alice() -> Redactions {
        Redactions {
            homes: vec!["/home/alice".into()],
            users: vec!["alice".into()],
            hosts: vec!["pioneer".into()],
            paths: Vec::new(),
        }
    }

    #[test]
    fn a_redacted_case_is_still_a_case() {
        let mut case = sample_case();
        case.cwd = "/home/clang/src".into();
        let r = Redactions {
            homes: vec!["/home/clang".into()],
            users: vec!["clang".into()],
            hosts: vec!["pioneer".into()],
            paths: Vec::new(),
        };
        // The user name is also the compiler family: a whole-string `clang` stays.
        let red = redact_case(&case, &r).unwrap();
        assert_eq!(red.cwd, "~/src");
        assert_eq!(red.crash.family, crate::crash::Family::Clang);
        assert_eq!(red.compiler.version, "Debian USER version 19.1.7");
        case.compiler.path = "/opt/pioneer/bin/clang".into();
        let red = redact_case(
            &case,
            &Redactions {
                users: Vec::new(),
                ..r
            },
        )
        .unwrap();
        assert_eq!(red.compiler.path, "/opt/HOST/bin/clang");
    }

    #[test]
    fn redaction_removes_home_user_host_and_temp_dirs() {
        let text = "cd /home/alice/src on pioneer by alice; /tmp/icepick-demo.x1/project/a.c";
        assert_eq!(
            redact(text, &alice()),
            "cd ~/src on HOST by USER; /tmp/…/project/a.c"
        );
        assert_eq!(
            redact("'/tmp/widget-205623.sh' /tmp/", &alice()),
            "'/tmp/…' /tmp/"
        );
        // Another home that starts the same way is not this one.
        assert_eq!(redact("/home/alicex/a", &alice()), "/home/alicex/a");
    }

    #[test]
    fn short_host_names_are_removed_as_whole_names_only() {
        let r = Redactions {
            hosts: vec!["ab".into(), "x".into()],
            ..Default::default()
        };
        assert_eq!(
            redact(
                "ab grab ab.example.com lab-ab ab-ci x /srv/x/y x86 -x c -DX=x",
                &r
            ),
            "HOST grab HOST.example.com lab-ab HOST-ci HOST /srv/HOST/y x86 -x c -DX=HOST"
        );
        // In source code only as a path component.
        assert_eq!(
            String::from_utf8(redact_bytes(b"# 1 \"/srv/x/a.c\"\nint x;\n", &r)).unwrap(),
            "# 1 \"/srv/HOST/a.c\"\nint x;\n"
        );
    }

    #[test]
    fn a_case_names_its_own_host_user_and_homes() {
        let mut case = sample_case();
        case.cwd = "/home/bob/proj".into();
        case.host = Some(serde_json::json!({
            "hostname": "ci7.build.example", "user": "ci", "home": "/var/lib/ci",
            "kernel": {"sysname": "Linux"}
        }));
        case.command = vec!["clang".into(), "-I/Users/carol/inc".into()];
        let r = Redactions::of_case(&case);
        let sorted = |v: &[String]| {
            let mut v = v.to_vec();
            v.sort();
            v
        };
        assert_eq!(sorted(&r.hosts), ["ci7", "ci7.build.example"]);
        assert_eq!(sorted(&r.users), ["bob", "carol", "ci"]);
        assert_eq!(
            sorted(&r.homes),
            ["/Users/carol", "/home/bob", "/var/lib/ci"]
        );
        let red = redact_case(&case, &r).unwrap();
        assert_eq!(red.cwd, "~/proj");
        assert_eq!(red.command[1], "-I~/inc");
        let text = serde_json::to_string(&red).unwrap();
        for gone in ["ci7", "bob", "carol", "/var/lib/ci"] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
    }

    #[test]
    fn a_named_path_goes_before_the_home_it_is_in() {
        let mut r = alice();
        r.add_path("/home/alice/store", "STORE");
        assert_eq!(
            redact("/home/alice/store/cases/1 /home/alice/x", &r),
            "STORE/cases/1 ~/x"
        );
    }
}
