//! The dashboard: a page served at `/` and its assets under `/ui/`,
//! embedded in the binary (`include_str!` of `host-native/dashboard/`),
//! so the daemon serves it offline, from any replica, with no build
//! step. The page needs no token to load (it holds no data); every
//! datum it shows comes from the public `/v1` API with the token the
//! user enters, so it can do nothing the token could not do with curl.
//!
//! Answers carry a strict Content-Security-Policy (scripts, styles and
//! requests only to this origin, no inline code, no framing), an `ETag`
//! (the content's SHA-256) with `Cache-Control: no-cache`, so a browser
//! revalidates and an upgraded daemon's page is never served stale.

use super::error::ApiError;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The page's Content-Security-Policy: nothing from elsewhere, no inline
/// script or style, no plugin, no framing, forms and base to nowhere.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; font-src 'none'; object-src 'none'; \
    base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One embedded file.
pub struct Asset {
    /// Its name under `/ui/` (`index.html` is served at `/`).
    pub name: &'static str,
    /// Its content type.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static str,
}

macro_rules! asset {
    ($name:literal, $type:literal) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_str!(concat!("../../dashboard/", $name)),
        }
    };
}

/// Every file of the page (what the size test adds up).
pub const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("api.js", "text/javascript; charset=utf-8"),
    asset!("dom.js", "text/javascript; charset=utf-8"),
    asset!("charts.js", "text/javascript; charset=utf-8"),
    asset!("overview.js", "text/javascript; charset=utf-8"),
    asset!("schedules.js", "text/javascript; charset=utf-8"),
    asset!("jobs.js", "text/javascript; charset=utf-8"),
];

/// Each asset's ETag (quoted hex SHA-256 prefix), computed once.
fn etags() -> &'static [String] {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| {
                let d = Sha256::digest(a.body.as_bytes());
                let hex: String = d.iter().take(12).map(|b| format!("{b:02x}")).collect();
                format!("\"{hex}\"")
            })
            .collect()
    })
}

fn serve(i: usize, headers: &HeaderMap) -> Response {
    let asset = &ASSETS[i];
    let tag = &etags()[i];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(asset.content_type),
            )],
            asset.body,
        )
            .into_response()
    };
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(tag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    resp
}

/// `GET /`: the page.
pub(super) async fn index(headers: HeaderMap) -> Response {
    serve(0, &headers)
}

/// `GET /ui/{file}`: one of [`ASSETS`]; 404 for any other name.
pub(super) async fn asset(Path(file): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS.iter().position(|a| a.name == file) {
        Some(i) => serve(i, &headers),
        None => ApiError::NotFound(format!("file {file:?}")).into_response(),
    }
}

/// Whether `path` is the page or one of its assets (served without a
/// token: they hold no data).
pub(super) fn is_page(path: &str) -> bool {
    path == "/" || path.starts_with("/ui/")
}
