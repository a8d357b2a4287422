//! Rebuild when a migration is added: `sqlx::migrate!` embeds `migrations/` at compile time but
//! only tracks the files that existed when it last ran.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
