//! The schema of a change's answer whose document is built by its command rather than by one
//! type (`machine add`, `host reprovision set`, `abort`, ...): a JSON object whose `action` names
//! the command as `hostfw` spells it, with the command's own fields beside it (docs/cli-json.md
//! lists them per command).
//!
//! Owns that schema. It must not build answers (the commands do).

use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// A change's answer: `{"action": "<command>", ...its fields}`.
pub struct ChangeAnswer;

impl utoipa::PartialSchema for ChangeAnswer {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "What the change did: `action` names the command (e.g. `machine add`, `host reprovision set`); \
                 the other fields are the command's own (docs/cli-json.md). A dry run says `\"dry_run\": true`.",
            ))
            .property(
                "action",
                ObjectBuilder::new().schema_type(Type::String).description(Some("The command, as hostfw spells it.")),
            )
            .required("action")
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .into()
    }
}

impl utoipa::ToSchema for ChangeAnswer {}
