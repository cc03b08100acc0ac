//! What the move tests share.

use oware_db::rules::GrandSlam;

/// Every rules value the move tests check, by text: both presets and every option.
pub fn rules_under_test() -> Vec<String> {
    let mut v = vec!["abapa".to_string(), "awari".to_string()];
    for name in GrandSlam::NAMES {
        v.push(format!("abapa+grand-slam={name}"));
    }
    v.extend(
        [
            "abapa+capture=1,2",
            "abapa+capture=1,2,3",
            "abapa+starve=forfeit",
            "awari+capture=3",
        ]
        .map(String::from),
    );
    v
}
