//! Version order (a catalog default's move): versions of the same shape order by their numbers,
//! anything else is a CHANGE, never a guess.

use std::cmp::Ordering::{Greater, Less};

use hostfw_model::{compare_versions, DefaultMove};

#[test]
fn same_shaped_versions_order_by_their_numbers() {
    for (older, newer) in [
        ("2.0", "2.1"),
        ("7.10.30.00", "7.20.10.00"),
        ("7.9", "7.10"),
        ("F5.11.CB", "F5.12.CB"),
        ("GB200Nvl-24.12-8", "GB200Nvl-24.12-10"),
        ("2.3.5", "2.3.5.1"),
        ("buildbrain-gcid-38635631", "buildbrain-gcid-38635632"),
        ("99999999999999999999999.1", "100000000000000000000000.0"),
    ] {
        assert_eq!(compare_versions(older, newer), Some(Less), "{older} < {newer}");
        assert_eq!(compare_versions(newer, older), Some(Greater), "{newer} > {older}");
    }
}

#[test]
fn versions_of_other_shapes_or_spellings_have_no_order() {
    for (a, b) in [
        ("1.0-rc1", "1.0"),
        ("A1", "B1"),
        ("7.10", "7.010"),
        ("2.4", "2.4.0"),
        ("1.2", "1-3"),
        ("", "1.0"),
        ("2.3.5", "2.3.5a"),
    ] {
        assert_eq!(compare_versions(a, b), None, "{a:?} vs {b:?}");
        assert_eq!(compare_versions(b, a), None, "{b:?} vs {a:?}");
    }
}

#[test]
fn a_default_move_is_named_by_its_direction() {
    assert_eq!(DefaultMove::of(Some("2.0"), Some("2.1")), Some(DefaultMove::Upgrade));
    assert_eq!(DefaultMove::of(Some("2.1"), Some("2.0")), Some(DefaultMove::Downgrade));
    assert_eq!(DefaultMove::of(None, Some("2.0")), Some(DefaultMove::Added));
    assert_eq!(DefaultMove::of(Some("2.0"), None), Some(DefaultMove::Removed));
    assert_eq!(DefaultMove::of(Some("1.0-rc1"), Some("1.0")), Some(DefaultMove::Change));
    assert_eq!(DefaultMove::of(Some("2.0"), Some(" 2.0 ")), None, "whitespace is not part of a version");
    assert_eq!(DefaultMove::of(None, None), None);
    assert_eq!(serde_json::to_value(DefaultMove::Downgrade).unwrap(), "DOWNGRADE");
    assert_eq!(DefaultMove::Removed.to_string(), "REMOVED");
}
