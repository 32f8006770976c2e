//! The differential harness of the compact decoder's tests: the derived
//! `Deserialize` impls are the oracle, so for every document, and every
//! truncation and many mutations of it, the decoder must give the same
//! value or the same error message (position included). Shared by the
//! wire's tests (`tests.rs`) and the snapshot's
//! (`engine/snapshot/decode_tests.rs`).

use super::{Decode, from_str};
use serde::de::DeserializeOwned;
use std::fmt;

pub(crate) fn same<T: Decode + DeserializeOwned + PartialEq + fmt::Debug>(text: &str) {
    let derived = serde_json::from_str::<T>(text).map_err(|e| e.to_string());
    let decoded = from_str::<T>(text).map_err(|e| e.to_string());
    assert_eq!(decoded, derived, "on {text:?}");
}

/// Replacements for each scalar token: wrong types, floats where
/// integers belong, out-of-range and negative numbers, bad syntax.
pub(crate) const ALTS: &[&str] = &[
    "null",
    "true",
    "1.5",
    "-1",
    "0",
    "4294967296",
    "18446744073709551616",
    "1e3",
    "\"x\"",
    "\"zz\"",
    "\"name\"",
    "\"claim\"",
    "[]",
    "{}",
    "[1]",
    "{\"a\":1}",
    "\"\\u00e9\\n\"",
    "\"\\q\"",
    "{\"allow\":null}",
    "{\"claimed\":1}",
    "[\"local\"]",
    "nul",
    "",
];

/// Byte ranges of the scalar tokens (strings, numbers, literals).
pub(crate) fn tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(b.len());
            }
            b'-' | b'0'..=b'9' => {
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
            }
            b'a'..=b'z' => {
                while i < b.len() && b[i].is_ascii_alphabetic() {
                    i += 1;
                }
            }
            _ => {
                i += 1;
                continue;
            }
        }
        out.push((start, i));
    }
    out
}

/// `text` and its variants: every prefix, every one-byte deletion, a
/// newline at every position (so positions span lines), and every
/// scalar token replaced by each of [`ALTS`].
pub(crate) fn variants(text: &str) -> Vec<String> {
    let mut out = vec![text.to_owned()];
    for i in 0..text.len() {
        if !text.is_char_boundary(i) {
            continue;
        }
        out.push(text[..i].to_owned());
        let next = (i + 1..=text.len()).find(|&j| text.is_char_boundary(j));
        if let Some(j) = next {
            out.push(format!("{}{}", &text[..i], &text[j..]));
        }
        out.push(format!("{}\n{}", &text[..i], &text[i..]));
    }
    for (s, e) in tokens(text) {
        for alt in ALTS {
            out.push(format!("{}{alt}{}", &text[..s], &text[e..]));
        }
    }
    out
}

pub(crate) fn all_same<T: Decode + DeserializeOwned + PartialEq + fmt::Debug>(docs: &[&str]) {
    for doc in docs {
        for v in variants(doc) {
            same::<T>(&v);
        }
    }
}

/// A JSON tree that keeps key order and scalar text, for structural
/// mutations (serde_json's `Value` sorts keys).
#[derive(Clone)]
enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Raw(String),
}

fn parse_j(text: &str) -> J {
    fn ws(b: &[u8], i: &mut usize) {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    }
    fn value(t: &str, i: &mut usize) -> J {
        let b = t.as_bytes();
        ws(b, i);
        match b[*i] {
            b'{' => {
                *i += 1;
                let mut m = Vec::new();
                loop {
                    ws(b, i);
                    if b[*i] == b'}' {
                        *i += 1;
                        return J::Obj(m);
                    }
                    let J::Raw(k) = value(t, i) else {
                        panic!("key")
                    };
                    ws(b, i);
                    *i += 1; // ':'
                    let v = value(t, i);
                    m.push((k, v));
                    ws(b, i);
                    if b[*i] == b',' {
                        *i += 1;
                    }
                }
            }
            b'[' => {
                *i += 1;
                let mut a = Vec::new();
                loop {
                    ws(b, i);
                    if b[*i] == b']' {
                        *i += 1;
                        return J::Arr(a);
                    }
                    a.push(value(t, i));
                    ws(b, i);
                    if b[*i] == b',' {
                        *i += 1;
                    }
                }
            }
            _ => {
                let (s, e) = tokens(&t[*i..])[0];
                let raw = t[*i + s..*i + e].to_owned();
                *i += e;
                J::Raw(raw)
            }
        }
    }
    value(text, &mut 0)
}

fn show(j: &J) -> String {
    match j {
        J::Raw(r) => r.clone(),
        J::Arr(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(",")),
        J::Obj(m) => {
            let fields: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", show(v))).collect();
            format!("{{{}}}", fields.join(","))
        }
    }
}

/// One structural change at a time, anywhere in the tree: a field
/// removed, duplicated or set to null; an object turned into the
/// sequence of its values (the derive's sequence form, in field
/// order); an array's first element dropped.
fn structural(j: &J) -> Vec<J> {
    let mut out = Vec::new();
    match j {
        J::Obj(m) => {
            for i in 0..m.len() {
                let mut removed = m.clone();
                removed.remove(i);
                out.push(J::Obj(removed));
                let mut dup = m.clone();
                dup.push(m[i].clone());
                out.push(J::Obj(dup));
                let mut null = m.clone();
                null[i].1 = J::Raw("null".into());
                out.push(J::Obj(null));
                for v in structural(&m[i].1) {
                    let mut changed = m.clone();
                    changed[i].1 = v;
                    out.push(J::Obj(changed));
                }
            }
            out.push(J::Arr(m.iter().map(|(_, v)| v.clone()).collect()));
        }
        J::Arr(a) => {
            if !a.is_empty() {
                out.push(J::Arr(a[1..].to_vec()));
            }
            for i in 0..a.len() {
                for v in structural(&a[i]) {
                    let mut changed = a.clone();
                    changed[i] = v;
                    out.push(J::Arr(changed));
                }
            }
        }
        J::Raw(_) => {}
    }
    out
}

pub(crate) fn structural_same<T: Decode + DeserializeOwned + PartialEq + fmt::Debug>(doc: &str) {
    let tree = parse_j(doc);
    let parsed = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
    assert_eq!(parsed(&show(&tree)), parsed(doc));
    for v in structural(&tree) {
        same::<T>(&show(&v));
    }
}
