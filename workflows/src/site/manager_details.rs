//! The scheduler's "current details" in the Temporal Web UI (issue 27: the UI shows the freeze
//! and who set it): after each pass the `MachineUpdateManager` shows, in markdown, what the pass
//! saw and did and every brake in force (freezes and targets paused by hand, with who set them
//! and why).
//!
//! Owns that text. It must not decide anything: it renders a [`PassSummary`] the pass returned.
//! Pure and deterministic (it runs in workflow code).

use crate::site::contracts::PassSummary;

/// At most this many brakes are listed (the rest are counted): the details stay readable.
const MAX_BRAKES_SHOWN: usize = 20;

/// The markdown shown as the scheduler workflow's current details after a pass.
pub fn render(pass: &PassSummary, reasons: &[String]) -> String {
    let mut out = String::new();
    out.push_str(&format!("**Last scheduler pass** ({})\n\n", reasons.join("; ")));
    out.push_str(&format!(
        "- hosts: {} managed, {} compliant, {} unhealthy\n",
        pass.total, pass.compliant, pass.unhealthy
    ));
    out.push_str(&format!("- in flight: {} of {} (ceiling: {})\n", pass.in_flight, pass.ceiling, pass.ceiling_how));
    if !pass.started.is_empty() {
        out.push_str(&format!("- started: {}\n", pass.started.join(", ")));
    }
    for f in &pass.start_failures {
        out.push_str(&format!("- could not start {}: {}\n", f.machine_id, f.error));
    }
    if !pass.waiting.is_empty() {
        let waiting: Vec<String> = pass.waiting.iter().map(|(why, n)| format!("{why} {n}")).collect();
        out.push_str(&format!("- waiting: {}\n", waiting.join(", ")));
    }
    if pass.brakes.is_empty() {
        out.push_str("\n**Brakes**: none in force\n");
    } else {
        out.push_str(&format!("\n**Brakes in force** ({}; `hostfw freeze list`)\n\n", pass.brakes.len()));
        for brake in pass.brakes.iter().take(MAX_BRAKES_SHOWN) {
            out.push_str(&format!("- {brake}\n"));
        }
        if pass.brakes.len() > MAX_BRAKES_SHOWN {
            out.push_str(&format!("- … and {} more\n", pass.brakes.len() - MAX_BRAKES_SHOWN));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(brakes: Vec<String>) -> PassSummary {
        PassSummary {
            total: 10,
            unhealthy: 1,
            ceiling: 3,
            ceiling_how: "absolute 3".into(),
            in_flight: 2,
            compliant: 7,
            started: vec!["m1".into()],
            start_failures: Vec::new(),
            waiting: vec![("Frozen".into(), 4)],
            run_interval_secs: 60,
            next_wake_secs: None,
            next_wake_reason: None,
            event_driven: true,
            brakes,
        }
    }

    #[test]
    fn the_details_name_every_brake_and_who_set_it() {
        let text =
            render(&pass(vec!["freeze 3 on site set by alice at T: change freeze".into()]), &["interval".into()]);
        assert!(text.contains("**Last scheduler pass** (interval)"), "{text}");
        assert!(text.contains("- in flight: 2 of 3 (ceiling: absolute 3)"), "{text}");
        assert!(text.contains("- started: m1") && text.contains("- waiting: Frozen 4"), "{text}");
        assert!(text.contains("**Brakes in force** (1;") && text.contains("- freeze 3 on site set by alice"), "{text}");
    }

    #[test]
    fn no_brakes_says_so_and_a_long_list_is_cut() {
        assert!(render(&pass(Vec::new()), &[]).contains("**Brakes**: none in force"));
        let many: Vec<String> = (0..25).map(|i| format!("freeze {i}")).collect();
        let text = render(&pass(many), &[]);
        assert!(text.contains("- freeze 19\n") && !text.contains("- freeze 20\n"), "{text}");
        assert!(text.contains("- … and 5 more"), "{text}");
    }
}
