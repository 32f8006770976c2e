//! Bearer tokens and scopes. The daemon's config lists tokens as
//! `[[token]]` tables: a name, the hex SHA-256 of the token (never the
//! token itself: a leaked config does not leak a credential) and scopes,
//! each optionally limited to a name pattern (`enqueue:emails*`: the
//! queues and schedules whose names match). A request's
//! `Authorization: Bearer …` is hashed and compared with every configured
//! hash in constant time, so neither timing nor an early exit tells how
//! close a guess was.
//!
//! Without any token the listener is open (every request may do
//! everything): the daemon then binds loopback only unless told
//! `--insecure-no-auth`.
//!
//! The set is live: [`Tokens::replace`] swaps it under a running
//! listener (the daemon's SIGHUP), so a new token works and a removed one
//! gets 401 at the next request, without a restart.

use super::error::ApiError;
use sha2::{Digest, Sha256};
use std::sync::{Arc, PoisonError, RwLock};
use subtle::ConstantTimeEq;

/// What a grant allows. `admin` allows everything; the others are
/// exact: `manage` does not include `read`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Reads: schedules, queues, jobs (payloads included), inspect,
    /// metrics, events.
    Read,
    /// Adding jobs.
    Enqueue,
    /// Claiming jobs and reporting on them (heartbeat, complete, fail).
    Work,
    /// Schedules and queues (upsert, remove, pause, resume, trigger,
    /// backfill, declare), cancel, redrive, purge.
    Manage,
    /// Everything.
    Admin,
}

impl Scope {
    /// The name in configs and error bodies.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Enqueue => "enqueue",
            Scope::Work => "work",
            Scope::Manage => "manage",
            Scope::Admin => "admin",
        }
    }

    /// Every scope, for docs and tests.
    pub const ALL: [Scope; 5] = [
        Scope::Read,
        Scope::Enqueue,
        Scope::Work,
        Scope::Manage,
        Scope::Admin,
    ];

    fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// A scope, optionally limited to names matching a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The scope.
    pub scope: Scope,
    /// `*` matches any run of characters; `None`: every name.
    pub pattern: Option<String>,
}

impl Grant {
    /// Parses `scope` or `scope:pattern`.
    pub fn parse(text: &str) -> Result<Grant, TokenError> {
        let (scope, pattern) = match text.split_once(':') {
            Some((s, p)) => (s, Some(p)),
            None => (text, None),
        };
        let scope = Scope::parse(scope).ok_or_else(|| TokenError::Scope(text.to_owned()))?;
        if pattern.is_some_and(str::is_empty) {
            return Err(TokenError::Scope(text.to_owned()));
        }
        Ok(Grant {
            scope,
            pattern: pattern.map(str::to_owned),
        })
    }

    fn allows(&self, scope: Scope, name: Option<&str>) -> bool {
        (self.scope == scope || self.scope == Scope::Admin)
            && match (&self.pattern, name) {
                (None, _) => true,
                (Some(p), Some(n)) => glob(p, n),
                // A limited grant does not cover what names nothing
                // (every queue at once: `/v1/inspect`, `/metrics`).
                (Some(_), None) => false,
            }
    }
}

/// `*` matches any run of characters (none included); everything else
/// matches itself.
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// Why a `[[token]]` entry is not usable.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Not `read`, `enqueue`, `work`, `manage` or `admin`, with an
    /// optional non-empty `:pattern`.
    #[error(
        "unknown scope {0:?}: expected read, enqueue, work, manage or admin, optionally :pattern"
    )]
    Scope(String),
    /// Not 64 hex digits.
    #[error("token {0:?}: sha256 must be 64 hex digits (the SHA-256 of the token, not the token)")]
    Hash(String),
    /// Two tokens with one name.
    #[error("token name {0:?} is used twice")]
    Duplicate(String),
    /// A reload that removes every token: it would open a listener that
    /// started with authentication.
    #[error("removing every [[token]] would turn authentication off; restart chime to do that")]
    WouldDisable,
}

/// A configured token.
#[derive(Clone, Debug)]
pub struct TokenDef {
    /// Its name (in logs and error bodies: never the token).
    pub name: String,
    sha256: [u8; 32],
    /// What it may do.
    pub grants: Vec<Grant>,
}

impl TokenDef {
    /// A token from its config entry.
    pub fn new(name: &str, sha256_hex: &str, scopes: &[String]) -> Result<TokenDef, TokenError> {
        let sha256 = parse_hex(sha256_hex).ok_or_else(|| TokenError::Hash(name.to_owned()))?;
        let grants = scopes
            .iter()
            .map(|s| Grant::parse(s))
            .collect::<Result<_, _>>()?;
        Ok(TokenDef {
            name: name.to_owned(),
            sha256,
            grants,
        })
    }
}

fn parse_hex(s: &str) -> Option<[u8; 32]> {
    let s = s.trim();
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The hex SHA-256 of `token`: what a `[[token]]` entry holds.
pub fn hash_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new random token (32 bytes from the OS RNG, hex, prefixed `chime_`
/// so a leaked one is easy to grep for).
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("chime_{hex}"))
}

/// The tokens a listener accepts; empty: no authentication. Clones share
/// one set: [`Tokens::replace`] on any clone changes what every clone
/// (the listener's included) accepts.
#[derive(Clone, Debug, Default)]
pub struct Tokens(Arc<RwLock<Arc<Vec<TokenDef>>>>);

impl Tokens {
    /// Checks names are unique.
    pub fn new(tokens: Vec<TokenDef>) -> Result<Tokens, TokenError> {
        for (i, t) in tokens.iter().enumerate() {
            if tokens[..i].iter().any(|u| u.name == t.name) {
                return Err(TokenError::Duplicate(t.name.clone()));
            }
        }
        Ok(Tokens(Arc::new(RwLock::new(Arc::new(tokens)))))
    }

    /// The set in force now (a request authenticates against one set,
    /// whatever a reload does meanwhile).
    fn current(&self) -> Arc<Vec<TokenDef>> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether any token is configured (then every route but `/healthz`
    /// needs one).
    pub fn enabled(&self) -> bool {
        !self.current().is_empty()
    }

    /// Makes `new`'s tokens the ones accepted (by every clone of `self`).
    /// Refused, changing nothing, when `self` has tokens and `new` none:
    /// a reload must not turn authentication off. Returns the names
    /// added and removed, for the log.
    pub fn replace(&self, new: &Tokens) -> Result<(Vec<String>, Vec<String>), TokenError> {
        let next = new.current();
        let mut slot = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if !slot.is_empty() && next.is_empty() {
            return Err(TokenError::WouldDisable);
        }
        let names = |v: &[TokenDef]| v.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        let (old, now) = (names(&slot), names(&next));
        let added = now.iter().filter(|n| !old.contains(n)).cloned().collect();
        let removed = old.iter().filter(|n| !now.contains(n)).cloned().collect();
        *slot = next;
        Ok((added, removed))
    }

    /// Who sent a request with this `Authorization` header value.
    pub(crate) fn authenticate(&self, header: Option<&str>) -> Result<Principal, ApiError> {
        let set = self.current();
        if set.is_empty() {
            return Ok(Principal::open());
        }
        let header = header.ok_or(ApiError::Unauthorized(
            "missing bearer token (Authorization: Bearer …)",
        ))?;
        let token = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .ok_or(ApiError::Unauthorized(
                "expected Authorization: Bearer <token>",
            ))?
            .trim();
        let digest = Sha256::digest(token.as_bytes());
        // Every hash is compared, whatever matched before: the time taken
        // does not depend on which token (if any) matched.
        let mut found = None;
        for (i, t) in set.iter().enumerate() {
            if bool::from(t.sha256.ct_eq(digest.as_slice())) {
                found = Some(i);
            }
        }
        let t = &set[found.ok_or(ApiError::Unauthorized("unknown token"))?];
        Ok(Principal {
            name: Some(t.name.clone()),
            grants: t.grants.clone(),
        })
    }

    /// The names of the configured tokens (for per-token limits).
    pub(crate) fn names(&self) -> impl Iterator<Item = String> {
        self.current()
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
            .into_iter()
    }
}

/// Who is asking: a configured token, or anyone when no token is
/// configured.
#[derive(Clone, Debug)]
pub(crate) struct Principal {
    /// `None`: no authentication configured.
    pub(crate) name: Option<String>,
    grants: Vec<Grant>,
}

impl Principal {
    fn open() -> Principal {
        Principal {
            name: None,
            grants: vec![Grant {
                scope: Scope::Admin,
                pattern: None,
            }],
        }
    }

    /// Whether it may do `scope` on the queue or schedule `name` (`None`:
    /// on everything at once).
    pub(crate) fn may(&self, scope: Scope, name: Option<&str>) -> bool {
        self.grants.iter().any(|g| g.allows(scope, name))
    }

    /// Its grants as the config writes them (`read`, `manage:a*`): what
    /// `GET /v1/whoami` tells a client (never the token).
    pub(crate) fn scopes(&self) -> Vec<String> {
        self.grants
            .iter()
            .map(|g| match &g.pattern {
                Some(p) => format!("{}:{p}", g.scope.name()),
                None => g.scope.name().to_owned(),
            })
            .collect()
    }

    /// Whether it holds `scope` for some names at least.
    pub(crate) fn may_some(&self, scope: Scope) -> bool {
        self.grants
            .iter()
            .any(|g| g.scope == scope || g.scope == Scope::Admin)
    }

    /// Whether its `scope` covers every name (no pattern).
    pub(crate) fn may_all(&self, scope: Scope) -> bool {
        self.may(scope, None)
    }

    /// `Ok` if it may do `scope` on `what` `name`, else 403.
    pub(crate) fn require(
        &self,
        scope: Scope,
        what: &'static str,
        name: &str,
    ) -> Result<(), ApiError> {
        if self.may(scope, Some(name)) {
            Ok(())
        } else {
            Err(self.forbidden(scope, what, name))
        }
    }

    /// `Ok` if it holds `scope` for some names at least, else 403.
    pub(crate) fn require_some(&self, scope: Scope) -> Result<(), ApiError> {
        if self.may_some(scope) {
            Ok(())
        } else {
            Err(self.forbidden(scope, "scope", scope.name()))
        }
    }

    /// `Ok` if it holds `scope` for every name, else 403.
    pub(crate) fn require_all(&self, scope: Scope) -> Result<(), ApiError> {
        if self.may_all(scope) {
            Ok(())
        } else {
            Err(self.forbidden(scope, "scope", "*"))
        }
    }

    fn forbidden(&self, scope: Scope, what: &'static str, name: &str) -> ApiError {
        ApiError::Forbidden {
            token: self.name.clone().unwrap_or_default(),
            scope: scope.name(),
            what,
            name: name.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_runs_of_characters() {
        assert!(glob("emails*", "emails"));
        assert!(glob("emails*", "emails-eu"));
        assert!(!glob("emails*", "mail"));
        assert!(glob("*-eu", "emails-eu"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxc"));
        assert!(!glob("ab*ba", "aba"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exact2"));
    }

    #[test]
    fn grants_parse_and_admin_covers_everything() {
        let g = Grant::parse("enqueue:emails*").unwrap();
        assert!(g.allows(Scope::Enqueue, Some("emails")));
        assert!(!g.allows(Scope::Enqueue, Some("sms")));
        assert!(!g.allows(Scope::Enqueue, None));
        assert!(!g.allows(Scope::Read, Some("emails")));
        assert!(Grant::parse("admin").unwrap().allows(Scope::Work, None));
        assert!(Grant::parse("root").is_err());
        assert!(Grant::parse("read:").is_err());
    }

    #[test]
    fn tokens_authenticate_by_hash() {
        let t = TokenDef::new("ci", &hash_hex("s3cret"), &["read".to_owned()]).unwrap();
        let tokens = Tokens::new(vec![t]).unwrap();
        let p = tokens.authenticate(Some("Bearer s3cret")).unwrap();
        assert_eq!(p.name.as_deref(), Some("ci"));
        assert!(tokens.authenticate(Some("Bearer s3cre")).is_err());
        assert!(tokens.authenticate(None).is_err());
        assert!(TokenDef::new("x", "abc", &[]).is_err());
        assert!(new_token().unwrap().starts_with("chime_"));
    }

    #[test]
    fn a_replaced_set_is_what_every_clone_accepts() {
        let def = |n: &str, t: &str| TokenDef::new(n, &hash_hex(t), &["read".to_owned()]).unwrap();
        let live = Tokens::new(vec![def("old", "t-old")]).unwrap();
        let listener = live.clone();
        let next = Tokens::new(vec![def("new", "t-new")]).unwrap();
        let (added, removed) = live.replace(&next).unwrap();
        assert_eq!(
            (added, removed),
            (vec!["new".to_owned()], vec!["old".to_owned()])
        );
        assert!(listener.authenticate(Some("Bearer t-old")).is_err());
        assert!(listener.authenticate(Some("Bearer t-new")).is_ok());
        // Emptying the set would open the listener: refused, unchanged.
        assert!(matches!(
            live.replace(&Tokens::default()),
            Err(TokenError::WouldDisable)
        ));
        assert!(listener.authenticate(Some("Bearer t-new")).is_ok());
    }
}
