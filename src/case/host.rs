//! The `host` section of `case.json` as its readers see it: the facts `icepick probe` recorded
//! on the capturing machine (written by capture from what the probe found). The report's
//! environment lines, `--redact` and classify's host evidence read it through this type.
//!
//! The section comes from other machines and other icepick versions, and may be damaged or
//! hostile: every field is optional and a field of the wrong type reads as absent (what a
//! reader looking it up in JSON would have seen), never as an error that hides the others.

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::Value;

/// The facts of the capturing host.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct HostFacts {
    #[serde(deserialize_with = "present")]
    pub kernel: Option<Kernel>,
    /// The architecture of the icepick that probed (`x86_64`, `riscv64`).
    #[serde(deserialize_with = "lenient")]
    pub arch: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub riscv: Option<bool>,
    #[serde(deserialize_with = "present")]
    pub cpuinfo: Option<CpuInfo>,
    /// Present (even as `null`) when the probe read `AT_HWCAP`'s slot.
    #[serde(deserialize_with = "present")]
    pub hwcap: Option<Hwcap>,
    #[serde(deserialize_with = "present")]
    pub v_control: Option<VControl>,
    #[serde(deserialize_with = "lenient")]
    pub riscv_v_default_allow: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub hide_v0p7_ext: Option<bool>,
    #[serde(deserialize_with = "strings")]
    pub notes: Vec<String>,
    /// Names `report --redact` removes: the machine's and the capturing user's.
    #[serde(deserialize_with = "lenient")]
    pub hostname: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub nodename: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub host: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub user: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub username: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub login: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub home: Option<String>,
}

/// `uname(2)` as recorded.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Kernel {
    #[serde(deserialize_with = "lenient")]
    pub sysname: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub nodename: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub release: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub machine: Option<String>,
}

/// The `/proc/cpuinfo` keys kept, each with its distinct values (and how many processors
/// report each).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CpuInfo {
    #[serde(deserialize_with = "lenient")]
    pub processors: Option<u64>,
    #[serde(deserialize_with = "value_sets")]
    pub fields: BTreeMap<String, Vec<String>>,
}

impl CpuInfo {
    /// The distinct values recorded for `key` (empty when none).
    pub fn values(&self, key: &str) -> &[String] {
        self.fields.get(key).map_or(&[], Vec::as_slice)
    }
}

/// `AT_HWCAP`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Hwcap {
    #[serde(deserialize_with = "lenient")]
    pub letters: Option<String>,
    /// The kernel says ratified RVV 1.0 is usable.
    #[serde(deserialize_with = "lenient")]
    pub v: Option<bool>,
}

/// The per-task vector control (`prctl(PR_RISCV_V_GET_CONTROL)`): `state` is `value`,
/// `error` or `not_riscv`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VControl {
    #[serde(deserialize_with = "lenient")]
    pub state: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub current: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub next: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub inherit: Option<bool>,
    #[serde(deserialize_with = "lenient")]
    pub meaning: Option<String>,
}

impl HostFacts {
    /// The facts in a `host` value; `None` when it is not an object.
    pub fn of(v: &Value) -> Option<HostFacts> {
        v.is_object()
            .then(|| HostFacts::deserialize(v).unwrap_or_default())
    }

    /// The host facts of a whole `case.json` value (for readers that keep the raw file).
    pub fn of_case_json(case: &Value) -> Option<HostFacts> {
        case.get("host").and_then(HostFacts::of)
    }
}

impl super::Case {
    /// The case's host facts, when it recorded them.
    pub fn host_facts(&self) -> Option<HostFacts> {
        self.host.as_ref().and_then(HostFacts::of)
    }
}

/// A field of the wrong type reads as absent.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

/// A field that is there reads as there, whatever its content: its parts that parse.
fn present<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(Some(
        serde_json::from_value(Value::deserialize(d)?).unwrap_or_default(),
    ))
}

/// The strings of a list (other items left out).
fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(a) => a
            .into_iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    })
}

/// cpuinfo's `{key: {value: count}}`: the values of each key whose entry is an object.
fn value_sets<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, Vec<String>>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Object(m) => m
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::Object(values) => Some((k, values.into_iter().map(|(v, _)| v).collect())),
                _ => None,
            })
            .collect(),
        _ => BTreeMap::new(),
    })
}
