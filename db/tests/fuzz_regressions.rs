//! Inputs that the fuzz targets of `fuzz/` (`scripts/fuzz`) found to crash, kept as tests:
//! each file of `tests/fuzz-regressions/` (or bytes inline) and what it broke.

use oware_db::manifest::Manifest;

/// `manifest` target (its checksum since made valid, as the manifest check now asks): a
/// `seconds` of 118 digits parsed to a float that printed back
/// (shortest form) as another float, so a manifest saved after reading it was not the one
/// read (serde_json's fast float parsing is not correctly rounded; the workspace enables
/// its `float_roundtrip` feature).
#[test]
fn manifest_long_float_reads_back_as_saved() {
    let text = include_str!("fuzz-regressions/manifest-long-float.json");
    let m = Manifest::parse(text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    m.save(dir.path()).unwrap();
    let back = Manifest::load(dir.path()).unwrap().unwrap();
    assert_eq!(back, m);
    let seconds = m.tiers[&0].stats.as_ref().unwrap().seconds;
    assert_eq!(seconds, 0.057462955555555556);
}
