//! Every error answer of the listener: a status and
//! `{"error": code, "message": text, "field": name}`. Refusals of the
//! engine keep core's stable code and field ([`chime_core::Error::code`],
//! [`field`](chime_core::Error::field)); the listener's own refusals
//! (auth, limits, malformed bodies) have codes of their own, listed in
//! `docs/http.md`.

use super::views::ErrorBody;
use crate::backend::PortError;
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// An error answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    /// No route, schedule, queue or job by that name.
    #[error("no such {0}")]
    NotFound(String),
    #[error("the driver has stopped")]
    Stopped,
    #[error("the driver did not answer within {0:?}")]
    Timeout(Duration),
    #[error("too many requests in flight; try again")]
    Busy,
    /// A per-token bound (requests or long-polls in flight) is reached.
    #[error("too many {0} in flight for this token")]
    TooMany(&'static str),
    #[error("{method} {path}: no such method on this route (allowed: {allow})")]
    MethodNotAllowed {
        method: String,
        path: String,
        allow: String,
    },
    /// No or an unknown bearer token.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// The token lacks the scope for this name.
    #[error("token {token:?} lacks scope {scope} for {what} {name:?}")]
    Forbidden {
        token: String,
        scope: &'static str,
        what: &'static str,
        name: String,
    },
    /// The body is larger than the listener takes.
    #[error("request body larger than {0} bytes")]
    BodyTooLarge(usize),
    /// The body did not arrive in time.
    #[error("request body not received within {0:?}")]
    BodyTimeout(Duration),
    /// Malformed JSON, a wrong type, an unknown field, too deep.
    #[error("{message}")]
    BadRequest {
        field: Option<&'static str>,
        message: String,
    },
    /// Refused by the engine (or a backend applying core's rules).
    #[error("{0}")]
    Core(chime_core::Error),
    /// Refused by the engine, one item of a batch.
    #[error("jobs[{index}]: {error}")]
    CoreItem {
        index: usize,
        error: chime_core::Error,
    },
    /// The backend cannot answer now.
    #[error("backend unavailable: {0}")]
    Unavailable(String),
    #[error("{0}")]
    Unsupported(String),
}

impl ApiError {
    pub(crate) fn bad(field: Option<&'static str>, message: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            field,
            message: message.into(),
        }
    }

    fn code(&self) -> &'static str {
        match self {
            ApiError::NotFound(_) => "not_found",
            ApiError::Stopped => "driver_stopped",
            ApiError::Timeout(_) => "driver_timeout",
            ApiError::Busy => "busy",
            ApiError::TooMany(_) => "too_many_requests",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::Forbidden { .. } => "forbidden",
            ApiError::BodyTooLarge(_) => "body_too_large",
            ApiError::BodyTimeout(_) => "request_timeout",
            ApiError::BadRequest { .. } => "invalid_request",
            ApiError::Core(e) | ApiError::CoreItem { error: e, .. } => e.code(),
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Unsupported(_) => "unsupported",
        }
    }

    fn field(&self) -> Option<String> {
        match self {
            ApiError::BadRequest { field, .. } => field.map(str::to_owned),
            ApiError::Core(e) => e.field().map(str::to_owned),
            ApiError::CoreItem { index, error } => Some(match error.field() {
                Some(f) => format!("jobs[{index}].{f}"),
                None => format!("jobs[{index}]"),
            }),
            ApiError::Forbidden { what, .. } => Some((*what).to_owned()),
            _ => None,
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::BodyTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Core(e) | ApiError::CoreItem { error: e, .. } => core_status(e),
            ApiError::Unsupported(_) => StatusCode::NOT_IMPLEMENTED,
            ApiError::Stopped
            | ApiError::Timeout(_)
            | ApiError::Busy
            | ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// The status of an engine refusal, by its stable code: the caller's
/// input (400), a name the engine does not hold (404), a token or state
/// that no longer holds (409), a full bound (413 for a payload, 429 for
/// a limit), an engine that may not act now (503).
pub(crate) fn core_status(e: &chime_core::Error) -> StatusCode {
    match e.code() {
        "unknown_schedule" | "unknown_queue" | "unknown_job" | "unknown_fire" => {
            StatusCode::NOT_FOUND
        }
        "lease_lost" | "invalid_state" | "lease_held" | "schedule_declared" => StatusCode::CONFLICT,
        "payload_too_large" => StatusCode::PAYLOAD_TOO_LARGE,
        "limit_exceeded" => StatusCode::TOO_MANY_REQUESTS,
        "not_leader" | "stopping" | "backpressure" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    }
}

impl From<PortError> for ApiError {
    fn from(e: PortError) -> ApiError {
        match e {
            PortError::Refused(e) => ApiError::Core(e),
            PortError::Unavailable(e) => ApiError::Unavailable(e.to_string()),
            PortError::Stopped => ApiError::Stopped,
            PortError::Unsupported(b) => {
                ApiError::Unsupported(format!("not supported by the {b} backend"))
            }
        }
    }
}

impl ApiError {
    /// The JSON body (also an item's `error` in a batch reply). Core's
    /// messages start with their code (`unknown_job: no job 7`, for log
    /// lines); the body has the code in `error`, so `message` is the text
    /// after it.
    pub(crate) fn body(&self) -> ErrorBody {
        let code = self.code();
        let message = match self {
            ApiError::Core(e) => strip_code(code, e.to_string()),
            ApiError::CoreItem { index, error } => {
                format!("jobs[{index}]: {}", strip_code(code, error.to_string()))
            }
            other => other.to_string(),
        };
        ErrorBody {
            error: code.to_owned(),
            message,
            field: self.field(),
        }
    }
}

fn strip_code(code: &str, message: String) -> String {
    match message
        .strip_prefix(code)
        .and_then(|m| m.strip_prefix(": "))
    {
        Some(rest) => rest.to_owned(),
        None => message,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let allow = match &self {
            ApiError::MethodNotAllowed { allow, .. } => HeaderValue::from_str(allow).ok(),
            _ => None,
        };
        let body = self.body();
        let mut response = (status, Json(body)).into_response();
        if let Some(allow) = allow {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        // A full bound frees up within moments: say when to try again.
        if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"chime\""),
            );
        }
        response
    }
}
