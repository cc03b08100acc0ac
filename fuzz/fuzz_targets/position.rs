//! A position's text (`"4 4 4 4 4 4 4 4 4 4 4 4"`, commas or any whitespace between the 12
//! counts) into `Position::from_str`, then the moves of a parsed position under both presets.
//!
//! Properties: no panic; parse → Display → parse gives the same position, and Display is
//! canonical (it prints itself back).
#![no_main]

use libfuzzer_sys::fuzz_target;
use oware_db::{Position, Rules};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(p) = text.parse::<Position>() else {
        return;
    };
    let shown = p.to_string();
    let back: Position = shown.parse().expect("a printed position parses");
    assert_eq!(back, p);
    assert_eq!(back.to_string(), shown);
    assert!(p.seeds() <= oware_db::MAX_SEEDS);
    assert_eq!(p.flipped().flipped(), p);
    for rules in [Rules::ABAPA, Rules::AWARI] {
        assert!(p.moves(&rules).len() <= 6);
    }
});
