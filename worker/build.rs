//! Records the git commit the worker is built from as `HOSTFW_GIT_COMMIT` (for the
//! `hostfw_build_info` metric). Outside a git checkout, or without `git`, it is "unknown": the
//! build never fails for it. `HOSTFW_GIT_COMMIT` set in the build environment wins (image builds
//! whose context has no `.git`).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=HOSTFW_GIT_COMMIT");
    let commit = std::env::var("HOSTFW_GIT_COMMIT").ok().filter(|c| !c.trim().is_empty()).or_else(git_commit);
    println!("cargo:rustc-env=HOSTFW_GIT_COMMIT={}", commit.unwrap_or_else(|| "unknown".to_string()));
    // Rebuild when HEAD moves (a commit or a checkout); absent outside git, which cargo tolerates.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head_ref}");
        }
    }
}

fn git_commit() -> Option<String> {
    git(&["rev-parse", "--short=12", "HEAD"])
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}
