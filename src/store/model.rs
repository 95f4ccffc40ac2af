//! What the store holds, as the rest of icepick sees it: buckets, occurrences, and what goes
//! in; and the one mapping between these and the rows of either database (the columns each
//! query selects, in order, and how a row becomes a value), so that no query maps a row on
//! its own.

use serde::Serialize;

use super::db::Row;

/// Triage state of a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not triaged yet.
    New,
    /// Its representative was reduced (and, as stages land, classified and reported).
    Triaged,
    /// Triage failed; `status_detail` says why.
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Triaged => "triaged",
            Status::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Status {
        match s {
            "triaged" => Status::Triaged,
            "failed" => Status::Failed,
            _ => Status::New,
        }
    }
}

/// One bucket: all occurrences of one signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub id: String,
    pub coarse_id: String,
    pub title: String,
    pub kind: String,
    pub count: i64,
    pub first_seen: String,
    pub last_seen: String,
    pub status: Status,
    pub status_detail: Option<String>,
    /// The classification verdict (filled by the classify stage; `None` until then).
    pub verdict: Option<String>,
    /// The representative case directory, once one was captured (a path on the machine
    /// that captured it; see `archived`).
    pub case_dir: Option<String>,
    /// Why the last capture attempt failed, if it did.
    pub capture_error: Option<String>,
    /// The distinct host names of its occurrences, sorted.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// The distinct compiler versions of its occurrences (the version line, else the
    /// compiler path), sorted.
    #[serde(default)]
    pub compiler_versions: Vec<String>,
    /// The case directory is stored in the database (`icepick show BUCKET --fetch DIR`).
    #[serde(default)]
    pub archived: bool,
    /// The triage worker holding the bucket, and until when (UTC), if any.
    #[serde(default)]
    pub lease_owner: Option<String>,
    #[serde(default)]
    pub lease_until: Option<String>,
    /// Near-duplicates: the other buckets with its coarse signature (kind, message, pass and
    /// top frame the same, deeper frames not), sorted.
    #[serde(default)]
    pub related: Vec<String>,
}

/// One crashed compile, as the store holds it: what was recorded ([`NewOccurrence`], whose
/// fields it reads through, `o.host`) and what the store added: its row id, its bucket and
/// the case captured from it. One type for the facts, so a new fact is added once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Occurrence {
    pub id: i64,
    pub bucket: String,
    #[serde(flatten)]
    pub recorded: NewOccurrence,
    /// The case captured from this occurrence, if any.
    pub case_dir: Option<String>,
}

impl std::ops::Deref for Occurrence {
    type Target = NewOccurrence;
    fn deref(&self) -> &NewOccurrence {
        &self.recorded
    }
}

impl std::ops::DerefMut for Occurrence {
    fn deref_mut(&mut self) -> &mut NewOccurrence {
        &mut self.recorded
    }
}

/// What identifies a bucket (from the crash's signature).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct BucketKey {
    pub id: String,
    pub coarse_id: String,
    pub title: String,
    pub kind: String,
}

/// An occurrence to record: the facts of one crashed compile ([`Occurrence`] is this plus
/// what the store adds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct NewOccurrence {
    /// When (UTC, RFC 3339).
    pub time: String,
    pub host: String,
    /// The user who ran the build, when known.
    #[serde(default)]
    pub user: Option<String>,
    pub cwd: String,
    pub command: Vec<String>,
    pub source: Option<String>,
    pub compiler: String,
    pub compiler_version: Option<String>,
    pub exit_code: Option<i32>,
    /// `wrap` or `scan-log`.
    pub origin: String,
}

/// The result of [`Store::record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Row id of the new occurrence.
    pub occurrence: i64,
    /// Occurrences of the bucket, this one included.
    pub count: i64,
    /// This occurrence holds the bucket's capture claim: capture now, then
    /// [`Store::attach_case`] or [`Store::capture_failed`].
    pub capture: bool,
    /// The bucket's representative case, if it already has one.
    pub case_dir: Option<String>,
}

/// The columns a bucket query selects, in the order [`Bucket::from_row`] reads them. The
/// host names and compiler versions come from a second, grouped query.
pub(crate) const BUCKET_COLUMNS: &str = "id, coarse_id, title, kind, count, first_seen, \
     last_seen, status, status_detail, verdict, case_dir, capture_error, lease_owner, \
     lease_until, CASE WHEN EXISTS (SELECT 1 FROM case_archives a WHERE a.bucket = buckets.id) \
     THEN 1 ELSE 0 END";

impl Bucket {
    /// A row of [`BUCKET_COLUMNS`] (hosts, compilers and related buckets left empty).
    pub(crate) fn from_row(r: &Row) -> Bucket {
        Bucket {
            id: r.text(0),
            coarse_id: r.text(1),
            title: r.text(2),
            kind: r.text(3),
            count: r.int(4),
            first_seen: r.text(5),
            last_seen: r.text(6),
            status: Status::parse(&r.text(7)),
            status_detail: r.opt_text(8),
            verdict: r.opt_text(9),
            case_dir: r.opt_text(10),
            capture_error: r.opt_text(11),
            lease_owner: r.opt_text(12),
            lease_until: r.opt_text(13),
            archived: r.int(14) != 0,
            hosts: Vec::new(),
            compiler_versions: Vec::new(),
            related: Vec::new(),
        }
    }
}

/// The columns an occurrence query selects, in the order [`Occurrence::from_row`] reads them.
pub(crate) const OCCURRENCE_COLUMNS: &str = "id, bucket, time, host, username, cwd, command, \
     source, compiler, compiler_version, exit_code, origin, case_dir";

impl Occurrence {
    /// A row of [`OCCURRENCE_COLUMNS`].
    pub(crate) fn from_row(r: &Row) -> Occurrence {
        Occurrence {
            id: r.int(0),
            bucket: r.text(1),
            recorded: NewOccurrence {
                time: r.text(2),
                host: r.text(3),
                user: r.opt_text(4),
                cwd: r.text(5),
                command: serde_json::from_str(&r.text(6)).unwrap_or_default(),
                source: r.opt_text(7),
                compiler: r.text(8),
                compiler_version: r.opt_text(9),
                exit_code: r.opt_int(10).and_then(|n| i32::try_from(n).ok()),
                origin: r.text(11),
            },
            case_dir: r.opt_text(12),
        }
    }
}
