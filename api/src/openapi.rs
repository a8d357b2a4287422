//! The OpenAPI 3.1 document: operations and schemas generated from the handlers (utoipa), and
//! from the route table each operation's security (bearer token), its `x-hostfw-role` and the
//! 401/403 answers every protected route may give; response times as the answers show them
//! (`openapi_times`).
//!
//! Owns assembling the document. It must not decide access (the route table does).

use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
use utoipa::OpenApi;

use crate::access::Access;
use crate::error::ErrorBody;
use crate::handlers::{
    abort, brakes, budget, catalog, explorer, machine_remove, machines, reads, requests, site_ops, tenant, tokens,
    watch, whoami,
};
use crate::principal::Principal;
use crate::routes::ROUTES;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "hostfw API",
        version = "1",
        description = "Fleet host-firmware updates: the site's control plane. \
        Every route but this document needs `Authorization: Bearer hfw_...`; each operation's `x-hostfw-role` \
        names the role it needs. JSON documents follow docs/cli-json.md."
    ),
    paths(
        whoami::whoami,
        tokens::list,
        tokens::create,
        tokens::revoke,
        reads::plan,
        reads::compliance,
        reads::firmware,
        reads::machines,
        reads::machine,
        reads::managed_host,
        reads::requests,
        reads::budgets,
        reads::audit,
        reads::notifications,
        budget::resume,
        tenant::reboot,
        brakes::list,
        brakes::freeze,
        brakes::unfreeze,
        brakes::pause,
        machines::add,
        machines::import,
        machines::rotate_key,
        machines::label,
        machines::auto_update,
        machines::auto_update_many,
        machines::maintenance,
        explorer::explore,
        explorer::re_explore,
        explorer::report,
        requests::set,
        requests::all_drifted,
        requests::clear,
        requests::manual_upgrade_complete,
        requests::reset,
        requests::start_updates,
        catalog::set,
        catalog::diff,
        catalog::unset,
        catalog::rollback,
        catalog::approve,
        catalog::reject,
        catalog::pending,
        catalog::show,
        catalog::history,
        site_ops::doctor,
        site_ops::doctor_fix,
        site_ops::config_reload,
        watch::tally,
        watch::report,
        abort::abort,
        machine_remove::remove,
    ),
    components(schemas(
        ErrorBody,
        Principal,
        tokens::TokenDoc,
        tokens::CreateToken,
        tokens::CreatedToken,
        tenant::RebootRequest,
        budget::TargetRequest,
        brakes::FreezeRequest,
        brakes::UnfreezeRequest,
        brakes::PauseRequest,
        machines::AddMachineRequest,
        machines::ImportRequest,
        machines::RotateKeyRequest,
        machines::LabelRequest,
        machines::AutoUpdatePolicy,
        machines::AutoUpdateRequest,
        machines::AutoUpdateManyRequest,
        machines::MaintenanceDirection,
        machines::MaintenanceRequest,
        explorer::ExploreRequest,
        explorer::ReExploreRequest,
        requests::ReprovisionSetRequest,
        requests::AllDriftedRequest,
        requests::StartUpdatesRequest,
        catalog::ChangeRequest,
        catalog::SetRequest,
        catalog::DiffRequest,
        catalog::RollbackRequest,
        catalog::ApproveRequest,
        catalog::RejectRequest,
        site_ops::ReloadRequest,
        abort::AbortRequest,
        machine_remove::RemoveRequest
    ))
)]
struct Generated;

/// The whole document, as JSON (built once).
pub fn document() -> &'static serde_json::Value {
    static DOCUMENT: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    DOCUMENT.get_or_init(build)
}

fn build() -> serde_json::Value {
    let mut doc = Generated::openapi();
    let components = doc.components.get_or_insert_with(Default::default);
    components
        .add_security_scheme("bearer", SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()));
    for route in ROUTES {
        let Some(item) = doc.paths.paths.get_mut(route.path) else { continue };
        let operation = match route.method.as_str() {
            "GET" => item.get.as_mut(),
            "POST" => item.post.as_mut(),
            "DELETE" => item.delete.as_mut(),
            "PUT" => item.put.as_mut(),
            "PATCH" => item.patch.as_mut(),
            _ => None,
        };
        if let Some(op) = operation {
            describe_access(op, route.access);
        }
    }
    // Times as the answers show them (RFC 3339 text under the name without `_ms`).
    let mut json = serde_json::to_value(&doc).expect("an OpenAPI document is JSON");
    crate::openapi_times::rewrite(&mut json);
    json
}

fn describe_access(op: &mut Operation, access: Access) {
    let ext = ExtensionsBuilder::new().add("x-hostfw-role", access.describe()).build();
    op.extensions.get_or_insert_with(Default::default).merge(ext);
    if access == Access::Public {
        return;
    }
    op.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
    let error = |what: &str| {
        ResponseBuilder::new()
            .description(what)
            .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build())
            .build()
    };
    op.responses.responses.entry("401".into()).or_insert_with(|| error("No valid bearer token").into());
    op.responses.responses.entry("403".into()).or_insert_with(|| error("The token's role may not do this").into());
    op.responses
        .responses
        .entry("503".into())
        .or_insert_with(|| error("The site database or Temporal is unreachable").into());
    // Any other refusal of the request as sent (a malformed body, an unknown machine, a
    // conflict, a body over the limit): the body says why, and nothing was changed.
    op.responses.responses.entry("4XX".into()).or_insert_with(|| {
        error("Refused as sent (bad input, unknown resource, conflict); nothing was changed").into()
    });
}

#[cfg(test)]
mod tests {

    /// The typed reads declare their documents' schemas, with times as the answers show them.
    #[test]
    fn typed_reads_declare_their_schemas_with_rfc3339_times() {
        let doc = super::document();
        let schema_of =
            |path: &str| doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"].clone();
        let typed = [
            ("/v1/machines", "Machine"),
            ("/v1/reprovision-requests", "RequestRow"),
            ("/v1/budgets", "TargetView"),
            ("/v1/audit", "AuditEntry"),
            ("/v1/notifications", "NotificationRecord"),
        ];
        for (path, item) in typed {
            let schema = schema_of(path);
            assert_eq!(schema["type"], "array", "{path}: {schema}");
            assert_eq!(schema["items"]["$ref"], format!("#/components/schemas/{item}"), "{path}: {schema}");
        }
        assert_eq!(schema_of("/v1/firmware")["items"]["$ref"], "#/components/schemas/FirmwareRow");
        let single = [
            ("/v1/compliance", "ComplianceJson"),
            ("/v1/plan", "PlanView"),
            ("/v1/managed-hosts/{id}", "HostView"),
            ("/v1/watch/tally", "Tally"),
            ("/v1/watch/report", "WatchReportLine"),
        ];
        for (path, name) in single {
            assert_eq!(schema_of(path)["$ref"], format!("#/components/schemas/{name}"), "{path}");
        }
        // No answer is left declaring a document of any shape.
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if let Some(schema) = op["responses"]["200"]["content"]["application/json"]["schema"].as_object() {
                    assert!(!schema.is_empty(), "{method} {path} declares no schema for its document");
                }
            }
        }
        // A parameter said to be in the path is one of the path's `{...}`; the others are queries.
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                for param in op["parameters"].as_array().into_iter().flatten() {
                    let name = param["name"].as_str().unwrap();
                    let in_path = path.contains(&format!("{{{name}}}"));
                    let declared = param["in"].as_str().unwrap();
                    assert_eq!(declared, if in_path { "path" } else { "query" }, "{method} {path}: parameter {name}");
                }
            }
        }
        // A change built by its command names the command.
        let change = &doc["components"]["schemas"]["ChangeAnswer"];
        assert_eq!(change["required"], serde_json::json!(["action"]), "{change}");
        let create = &doc["paths"]["/v1/machines"]["post"]["responses"]["200"]["content"]["application/json"]["schema"];
        assert_eq!(create["$ref"], "#/components/schemas/ChangeAnswer", "{create}");
        let catalog =
            &doc["paths"]["/v1/firmware-config"]["post"]["responses"]["200"]["content"]["application/json"]["schema"];
        assert_eq!(catalog["$ref"], "#/components/schemas/CatalogChangePreview", "{catalog}");
        // A freeze's scope is its key, as the answers show it.
        assert_eq!(doc["components"]["schemas"]["FreezeScope"]["type"], "string");
        assert_eq!(schema_of("/v1/machines/{id}")["$ref"], "#/components/schemas/MachineView");
        let policy = &doc["components"]["schemas"]["MachineAutoUpdate"];
        assert_eq!(policy["type"], "object", "the answer's policy is not the request's enum: {policy}");
        assert!(policy["properties"]["override"].is_object(), "{policy}");
        let schemas = &doc["components"]["schemas"];
        let machine = &schemas["Machine"];
        assert_eq!(machine["properties"]["created_at"]["format"], "date-time", "{machine}");
        assert!(machine["required"].as_array().unwrap().iter().any(|r| r == "machine_id"), "{machine}");
        assert_eq!(schemas["HostState"]["enum"][0], "Ready", "{}", schemas["HostState"]);
        assert_eq!(schemas["TimeWindow"]["required"], serde_json::json!(["start", "end"]), "{}", schemas["TimeWindow"]);
        // No schema keeps a stored time's name (requests take times as text too).
        for (name, schema) in schemas.as_object().unwrap() {
            let text = schema.to_string();
            for (stored, _) in hostfw_starter::json_contract::TIME_FIELDS {
                assert!(!text.contains(&format!("\"{stored}\"")), "{name} still has {stored}: {text}");
            }
        }
    }
}
