//! The error body of the HTTP API. The read answers' bodies are the read
//! port's ([`crate::backend::views`]), shared by every backend.

use serde::{Deserialize, Serialize};

/// An error answer.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// Stable code: core's (`invalid_input`, `lease_lost`, …) for an
    /// engine refusal, else the listener's (`not_found`, `unauthorized`,
    /// `forbidden`, `body_too_large`, `busy`, …; see `docs/http.md`).
    pub error: String,
    /// For people.
    pub message: String,
    /// The input field it is about, camelCase as on the wire, when there
    /// is one (core's [`chime_core::Error::field`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}
