//! The text of a `manifest.json`: `Manifest::parse` (serde_json, the rules and the index
//! kind), then what the readers do with a manifest: its tiers' files.
//!
//! Properties: no panic; a manifest that parses names only tiers 0..=48 and only files of
//! its own directory; it writes back (as `Manifest::save` does) as JSON that parses to the
//! same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

use oware_db::format::tier_of_file_name;
use oware_db::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(m) = Manifest::parse(text) else {
        return;
    };
    // Every table the manifest names is a file of its directory.
    let dir = Path::new("dir");
    for (&tier, e) in &m.tiers {
        assert!(tier <= oware_db::MAX_SEEDS);
        let _ = tier_of_file_name(&e.file);
        let path = oware_db::manifest::tier_path(dir, Some(&m), tier);
        assert_eq!(path.parent(), Some(dir), "{}", e.file);
    }
    // What `Manifest::save` writes reads back as the same manifest.
    let text = serde_json::to_string_pretty(&m).expect("a parsed manifest serializes");
    let back = Manifest::parse(&text).expect("a saved manifest parses");
    assert_eq!(back, m);
});
