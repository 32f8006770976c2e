//! JSON Schemas of the wire types whose serde form is hand-written (feature
//! `openapi`): the rest derive `utoipa::ToSchema` next to their serde
//! derives, so a schema cannot drift from what serde reads and writes.

use crate::time::Timestamp;
use crate::wire::ids::FireId;
use crate::wire::payload::Payload;
use std::borrow::Cow;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};

impl utoipa::PartialSchema for Timestamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(Timestamp::MIN.as_millis()))
            .maximum(Some(Timestamp::MAX.as_millis()))
            .description(Some(
                "Milliseconds since the Unix epoch, UTC, within years 1970..=9999.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Timestamp {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Timestamp")
    }
}

impl utoipa::PartialSchema for Payload {
    /// Any JSON value, kept verbatim: the empty schema.
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::SchemaType::AnyValue)
            .description(Some("Any JSON value, kept verbatim."))
            .into()
    }
}

impl utoipa::ToSchema for Payload {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Payload")
    }
}

impl utoipa::PartialSchema for FireId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "`<schedule>@<nominal ms>`, with `#m<n>` (a manual trigger) or `#b<n>` \
                 (a backfill) appended for extra fires.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for FireId {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("FireId")
    }
}
