//! A rules text (`abapa+grand-slam=illegal+capture=1,2`) into `Rules::from_str`, and the
//! other small texts the library parses: `Compression` names and tier file names.
//!
//! Properties: no panic; parse → Display → parse gives the same rules, and Display is
//! canonical; a parsed compression or tier file name prints back as a name that parses to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oware_db::format::{tier_file_name, tier_of_file_name, Compression};
use oware_db::Rules;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(r) = text.parse::<Rules>() {
        let shown = r.to_string();
        let back: Rules = shown.parse().expect("printed rules parse");
        assert_eq!(back, r);
        assert_eq!(back.to_string(), shown);
    }
    if let Ok(c) = text.parse::<Compression>() {
        assert_eq!(c.to_string().parse::<Compression>().ok(), Some(c));
    }
    if let Some(n) = tier_of_file_name(text) {
        assert_eq!(tier_file_name(n), text);
    }
});
