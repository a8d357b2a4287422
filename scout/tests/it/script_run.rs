//! Running the script: environment, working directory, captured output, exit codes, output
//! truncation, and refusing tasks that are not ours.

use crate::common;

use common::{served, task, FileServer, Harness};
use hostfw_workflows::scout::SCOUT_OUTPUT_LIMIT;

#[tokio::test]
async fn success_sees_env_and_artifacts_and_reports_output() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let script = r#"
set -e
echo "component=$COMPONENT_TYPE version=$TARGET_VERSION"
test "$DOWNLOAD_DIR" = "$(pwd)/download"
echo "workdir=$(basename "$(pwd)")"
echo "artifact=$(cat "$DOWNLOAD_DIR/fw.bin")"
if read -r line; then echo "stdin had data"; else echo "stdin closed"; fi
echo "to stderr" >&2
"#;
    let fw = served(&server, "fw.bin", b"FIRMWARE-IMAGE");
    let result = h.run(task(&server, script, vec![fw])).await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.error, None);
    assert!(result.stdout.contains("component=bmc version=1.2.3\n"), "{}", result.stdout);
    assert!(result.stdout.contains("workdir=scout-task-42-"), "{}", result.stdout);
    assert!(result.stdout.contains("artifact=FIRMWARE-IMAGE\n"), "{}", result.stdout);
    assert!(result.stdout.contains("stdin closed\n"), "{}", result.stdout);
    assert_eq!(result.stderr, "to stderr\n");
    assert!(h.work_root_is_empty(), "the working directory was not removed");
}

/// `--script-env NAME` passes that one variable of Scout's environment on; nothing else of it
/// reaches the script (here `HOSTFW_SCOUT_TEST_SECRET`, set in this process, stays out).
#[tokio::test]
async fn only_the_named_script_env_reaches_the_script() {
    std::env::set_var("HOSTFW_SCOUT_TEST_SECRET", "do-not-pass");
    let server = FileServer::start().await;
    let env = hostfw_scout::script_env(&["SIM_DIR".to_string()], |n| (n == "SIM_DIR").then(|| "/srv/sim".to_string()))
        .unwrap();
    let h = Harness::with_script_env(env);
    let script = "echo \"sim=${SIM_DIR:-unset} secret=${HOSTFW_SCOUT_TEST_SECRET:-unset} machine=$MACHINE_ID\"\n";
    let result = h.run(task(&server, script, vec![])).await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(result.stdout, "sim=/srv/sim secret=unset machine=m1\n");
}

#[test]
fn script_env_names_are_checked_and_must_be_set() {
    let set = |n: &str| (n == "PROXY").then(|| "http://proxy:3128".to_string());
    assert_eq!(hostfw_scout::script_env(&["PROXY".into()], set).unwrap(), vec![("PROXY", "http://proxy:3128".into())]);
    let err = hostfw_scout::script_env(&["NOPE".into()], set).unwrap_err();
    assert_eq!(err, "--script-env NOPE: NOPE is not set in Scout's environment");
    for taken in ["MACHINE_ID", "DOWNLOAD_DIR", "PATH", "HOME"] {
        let err = hostfw_scout::script_env(&[taken.into()], |_| Some("x".into())).unwrap_err();
        assert!(err.contains("scripts already get"), "{err}");
    }
    for bad in ["", "A-B", "1A", "A B"] {
        let err = hostfw_scout::script_env(&[bad.into()], |_| Some("x".into())).unwrap_err();
        assert!(err.contains("not a variable name"), "{err}");
    }
}

#[tokio::test]
async fn nonzero_exit_is_a_failure_with_code_and_stderr() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let result = h.run(task(&server, "echo flashing\necho 'flash failed' >&2\nexit 3\n", vec![])).await.unwrap();
    assert!(!result.success);
    assert_eq!(result.exit_code, Some(3));
    assert_eq!(result.stdout, "flashing\n");
    assert_eq!(result.stderr, "flash failed\n");
    assert_eq!(result.error, None);
    assert!(h.work_root_is_empty());
}

#[tokio::test]
async fn long_output_is_cut_to_its_tail() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let script = r#"
i=0
while [ $i -lt 2000 ]; do printf 'abcdefghij'; printf '0123456789' >&2; i=$((i+1)); done
printf 'TAIL'
printf 'ERRTAIL' >&2
"#;
    let result = h.run(task(&server, script, vec![])).await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(result.stdout.chars().count(), SCOUT_OUTPUT_LIMIT);
    assert!(result.stdout.ends_with("abcdefghijTAIL"));
    assert_eq!(result.stderr.chars().count(), SCOUT_OUTPUT_LIMIT);
    assert!(result.stderr.ends_with("0123456789ERRTAIL"));
}

#[tokio::test]
async fn task_for_another_machine_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let marker = h.marker("ran");
    let mut t = task(&server, &format!("touch '{}'\n", marker.display()), vec![]);
    t.machine_id = "m2".to_string();
    let result = h.run(t).await.unwrap();
    assert!(!result.success);
    assert_eq!(result.exit_code, None);
    assert!(result.error.unwrap().contains("machine m2"));
    assert!(!marker.exists());
    assert_eq!(server.hits("upgrade.sh"), 0, "nothing is downloaded for a refused task");
}

#[tokio::test]
async fn artifact_name_escaping_the_download_dir_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let marker = h.marker("ran");
    let mut evil = served(&server, "fw.bin", b"x");
    evil.file_name = "../upgrade.sh".to_string();
    let result = h.run(task(&server, &format!("touch '{}'\n", marker.display()), vec![evil])).await.unwrap();
    assert!(!result.success);
    assert!(result.error.unwrap().starts_with("invalid task: file name \"../upgrade.sh\""));
    assert!(!marker.exists());
}
