//! What a script can see of the process that runs it: only the variables the caller gives it and
//! the few of `INHERITED_ENV`, never the rest of the worker's environment (the site key, the
//! database URL, Temporal settings), and, with `run_as`, another user's identity. One test per
//! binary run: it sets this process's environment before any other thread exists.

use std::path::Path;
use std::time::Duration;

use hostfw_script_runner::{run, Ending, RunAs, ScriptSpec, INHERITED_ENV};

async fn run_script(
    dir: &Path,
    body: &str,
    env: Vec<(&'static str, String)>,
    run_as: Option<RunAs>,
) -> (Ending, String) {
    let script = dir.join("show-env.sh");
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let out = run(ScriptSpec {
        script: &script,
        via_sh: true,
        workdir: Some(dir),
        env,
        run_as,
        timeout: Duration::from_secs(30),
        hard_deadline: None,
        output_limit: 100_000,
        secrets: vec!["pw-Zq7#pW2!xR9".into()],
        drain_grace: Duration::from_secs(5),
        on_event: &|_| {},
    })
    .await
    .expect("runs");
    (out.ending, out.stdout)
}

#[test]
fn a_script_sees_only_its_own_environment() {
    // SAFETY: set before the runtime (and any other thread) starts.
    unsafe {
        std::env::set_var("HOSTFW_SITE_KEY", "c2l0ZS1rZXktdGhhdC1tdXN0LW5vdC1sZWFr");
        std::env::set_var("DATABASE_URL", "postgres://hostfw:db-secret@127.0.0.1/site");
        std::env::set_var("TEMPORAL_API_KEY", "temporal-secret");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "aws-secret");
        std::env::set_var("LANG", "C.UTF-8");
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        // `env` lists the exported environment; the shell adds PWD (and dash nothing else).
        let (ending, out) = run_script(
            dir.path(),
            "env | cut -d= -f1 | sort\necho \"$BMC_PASSWORD\"\n",
            vec![("BMC_IP", "10.0.0.1".into()), ("BMC_PASSWORD", "pw-Zq7#pW2!xR9".into())],
            None,
        )
        .await;
        assert_eq!(ending, Ending::Exited(0), "{out}");
        let names: Vec<&str> = out.lines().filter(|l| !l.is_empty() && *l != "****").collect();
        for name in &names {
            let allowed = INHERITED_ENV.contains(name)
                || ["HOME", "PWD", "OLDPWD", "SHLVL", "_", "BMC_IP", "BMC_PASSWORD"].contains(name);
            assert!(allowed, "{name} reached the script: {names:?}");
        }
        for wanted in ["PATH", "LANG", "HOME", "BMC_IP", "BMC_PASSWORD"] {
            assert!(names.contains(&wanted), "{wanted} missing: {names:?}");
        }
        for secret in ["c2l0ZS1rZXkt", "db-secret", "temporal-secret", "aws-secret", "pw-Zq7"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        assert!(out.lines().any(|l| l == "****"), "the password it was given is scrubbed from its output: {out}");

        // run_as: started as that user (this test runs as root in CI; elsewhere it only checks
        // that switching is refused by the kernel, not silently skipped).
        let nobody = RunAs::lookup("nobody").expect("user nobody");
        let other = tempfile::tempdir().unwrap();
        // The other user must be able to enter the directory and read the script.
        std::fs::set_permissions(other.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let is_root = unsafe { libc::geteuid() } == 0;
        if is_root {
            let (ending, out) = run_script(other.path(), "id -u\nid -G\n", vec![], Some(nobody.clone())).await;
            assert_eq!(ending, Ending::Exited(0), "{out}");
            let mut lines = out.lines();
            assert_eq!(lines.next(), Some(nobody.uid.to_string().as_str()), "{out}");
            assert_eq!(lines.next(), Some(nobody.gid.to_string().as_str()), "no supplementary groups: {out}");
        } else {
            eprintln!("skipped: run_as needs root to switch users");
        }
    });
}
