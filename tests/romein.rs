//! End-to-end tests of `oware export --format romein` and `oware import --format romein`.

mod support;

use std::path::Path;

use oware_db::romein::RomeinOrder;
use oware_db::{Position, Rules, Tablebase, HOUSES};
use support::{ok, run, tables, text};

fn generate(dir: &Path, rules: &str, max: u8) {
    ok(&[
        "generate",
        "--quiet",
        "--rules",
        rules,
        "--max-seeds",
        &max.to_string(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `oware import` from `files` into `dest`, which must fail: its stderr.
fn failed_import(files: &Path, dest: &Path) -> String {
    let out = run(&[
        "import",
        "--format",
        "romein",
        "--from",
        s(files),
        "--dir",
        s(dest),
    ]);
    assert!(!out.status.success());
    text(&out.stderr)
}

#[test]
fn export_then_import_gives_the_same_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, files, back) = (
        tmp.path().join("ours"),
        tmp.path().join("romein"),
        tmp.path().join("back"),
    );
    generate(&ours, "awari", 12);
    export(&ours, &files);
    // Each file: one byte per position in their order, each the position's score.
    let tb = Tablebase::open(&ours).unwrap();
    assert_eq!(*tb.rules(), Rules::AWARI);
    let mut rng = fastrand::Rng::with_seed(5);
    for n in 0..=12u8 {
        let bytes = std::fs::read(files.join(format!("scores.{n}"))).unwrap();
        let order = RomeinOrder::new(n);
        assert_eq!(bytes.len() as u64, order.size(), "tier {n}");
        for _ in 0..200 {
            let mut h = [0u8; HOUSES];
            for _ in 0..n {
                h[rng.usize(0..HOUSES)] += 1;
            }
            let p = Position::new(h).unwrap();
            if let Some(g) = order.rank(&p) {
                assert_eq!(bytes[g as usize] as i8, tb.score(&p).unwrap(), "{p}");
            }
        }
    }
    let out = ok(&[
        "import",
        "--format",
        "romein",
        "--from",
        s(&files),
        "--dir",
        s(&back),
    ]);
    assert!(out.contains("imported 13 tiers under rules awari"), "{out}");
    assert_eq!(tables(&ours), tables(&back));
    // The imported tables are proved again from scratch.
    let out = ok(&["verify", "--deep", "--quiet", "--dir", s(&back)]);
    assert!(
        out.contains("deep verification of tiers 0..=12 OK"),
        "{out}"
    );
}

#[test]
fn other_rules_and_bad_files_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (abapa, files) = (tmp.path().join("abapa"), tmp.path().join("romein"));
    generate(&abapa, "abapa", 8);
    let out = run(&[
        "export",
        "--format",
        "romein",
        "--dir",
        s(&abapa),
        "--out",
        s(&files),
    ]);
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(e.contains("rules `abapa`") && e.contains("--force"), "{e}");
    assert!(!files.join("scores.8").exists());
    ok(&[
        "export",
        "--format",
        "romein",
        "--force",
        "--dir",
        s(&abapa),
        "--out",
        s(&files),
    ]);
    assert_eq!(
        std::fs::metadata(files.join("scores.8")).unwrap().len(),
        RomeinOrder::new(8).size()
    );
    // Too little memory even for the process: refused with the figures, nothing written.
    let small = tmp.path().join("small");
    let out = support::oware()
        .args([
            "export",
            "--format",
            "romein",
            "--force",
            "--dir",
            s(&abapa),
            "--out",
            s(&small),
        ])
        .env("OWARE_MEMORY_LIMIT", "100000")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(
        e.contains("tier 0 needs at least") && e.contains("of memory to export"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!small.join("scores.0").exists());
    // Importing over tiers already there, recorded with checksums that verify, keeps them:
    // nothing changes.
    let before = tables(&abapa);
    let out = run(&[
        "import",
        "--format",
        "romein",
        "--rules",
        "abapa",
        "--from",
        s(&files),
        "--dir",
        s(&abapa),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let o = text(&out.stdout);
    assert!(
        o.contains("tier 0: kept") && o.contains("(9 kept from before)"),
        "{o}"
    );
    assert_eq!(tables(&abapa), before);
    // Nor are tables of other rules written over, even without a manifest.
    std::fs::remove_file(abapa.join("manifest.json")).unwrap();
    let e = failed_import(&files, &abapa);
    assert!(
        e.contains("rules `abapa`") && e.contains("not `awari`"),
        "{e}"
    );
    assert_eq!(tables(&abapa), before);
    // A file of the wrong size, and a score out of range.
    let dest = tmp.path().join("dest");
    let eight = files.join("scores.8");
    let mut bytes = std::fs::read(&eight).unwrap();
    bytes.pop();
    std::fs::write(&eight, &bytes).unwrap();
    let e = failed_import(&files, &dest);
    assert!(e.contains("scores.8") && e.contains("has 75504"), "{e}");
    // The tiers before the bad file were imported whole; the bad one left nothing.
    assert!(dest.join("tier-07.owt").is_file());
    assert!(!dest.join("tier-08.owt").exists());
    let dest = tmp.path().join("dest2");
    bytes.push(0);
    bytes[100] = 9;
    std::fs::write(&eight, &bytes).unwrap();
    let e = failed_import(&files, &dest);
    assert!(
        e.contains("offset 100") && e.contains("outside -8..=8"),
        "{e}"
    );
    assert!(dest.join("tier-07.owt").is_file());
    assert!(!dest.join("tier-08.owt").exists());
    assert_eq!(support::leftovers(&dest), Vec::<String>::new());
}

/// `oware export --format romein` of the tables in `dir` into `out`, which must succeed: its
/// stdout.
fn export(dir: &Path, out: &Path) -> String {
    ok(&[
        "export",
        "--format",
        "romein",
        "--dir",
        s(dir),
        "--out",
        s(out),
    ])
}

/// `oware import` from `files` into `dest`, which must succeed: its stdout.
fn import(files: &Path, dest: &Path) -> String {
    ok(&[
        "import",
        "--format",
        "romein",
        "--from",
        s(files),
        "--dir",
        s(dest),
    ])
}

#[test]
fn an_interrupted_import_resumes_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, files, whole) = (
        tmp.path().join("ours"),
        tmp.path().join("romein"),
        tmp.path().join("whole"),
    );
    generate(&ours, "awari", 12);
    export(&ours, &files);
    // Every tier fits in memory: each is read once, whether or not its size is a multiple
    // of the blocks' entries.
    let said = import(&files, &whole);
    assert!(!said.contains("ranges of"), "{said}");
    let expected = tables(&whole);
    let manifest = std::fs::read(whole.join("manifest.json")).unwrap();
    let copy = |name: &str, tiers: std::ops::RangeInclusive<u8>| {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        for n in tiers {
            let f = format!("tier-{n:02}.owt");
            std::fs::copy(whole.join(&f), d.join(&f)).unwrap();
        }
        d
    };

    // Killed after tier 0's table, before the first manifest: verify fails, a rerun redoes
    // every tier.
    let first = copy("first", 0..=0);
    assert!(!run(&["verify", "--dir", s(&first)]).status.success());
    let out = import(&files, &first);
    assert!(!out.contains("kept"), "{out}");
    assert_eq!(tables(&first), expected);
    assert!(run(&["verify", "--dir", s(&first)]).status.success());

    // Killed after tier 9's table, before its manifest entry (the manifest records 0..=8),
    // with tier 5's table damaged since: 0..=4 and 6..=8 are kept, 5 and 9..=12 redone.
    let cut = copy("cut", 0..=9);
    let mut m = oware_db::manifest::Manifest::load(&whole).unwrap().unwrap();
    m.tiers.retain(|&n, _| n <= 8);
    m.save(&cut).unwrap();
    let five = cut.join("tier-05.owt");
    let mut bytes = std::fs::read(&five).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&five, &bytes).unwrap();
    let out = import(&files, &cut);
    for n in (0..=4).chain(6..=8) {
        assert!(out.contains(&format!("tier {n}: kept")), "{n}: {out}");
    }
    for n in [5].into_iter().chain(9..=12) {
        assert!(!out.contains(&format!("tier {n}: kept")), "{n}: {out}");
    }
    assert!(
        out.contains("imported 13 tiers (8 kept from before)"),
        "{out}"
    );
    assert_eq!(tables(&cut), expected);
    assert_eq!(std::fs::read(cut.join("manifest.json")).unwrap(), manifest);
    assert!(run(&["verify", "--dir", s(&cut)]).status.success());

    // A real kill at some moment of the run: the rerun ends with the same tables.
    let killed = tmp.path().join("killed");
    let mut child = support::oware()
        .args([
            "import",
            "--format",
            "romein",
            "--from",
            s(&files),
            "--dir",
            s(&killed),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    let _ = child.kill();
    child.wait().unwrap();
    import(&files, &killed);
    assert_eq!(tables(&killed), expected);
    assert_eq!(support::leftovers(&killed), Vec::<String>::new());
}

#[test]
fn streamed_export_and_import_are_byte_identical_to_whole_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, whole, streamed) = (
        tmp.path().join("ours"),
        tmp.path().join("whole"),
        tmp.path().join("streamed"),
    );
    generate(&ours, "awari", 12);
    let export = |out: &Path, range: Option<&str>| {
        let mut c = support::oware();
        c.args([
            "export",
            "--format",
            "romein",
            "--dir",
            s(&ours),
            "--out",
            s(out),
        ]);
        if let Some(r) = range {
            c.env("OWARE_SLICE_BYTES", r);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    export(&whole, None);
    // Ranges far below the tiers: every range a full read of the table.
    let said = export(&streamed, Some("100000"));
    assert!(
        said.contains("tier 12: 14 ranges of 100000 positions"),
        "{said}"
    );
    for n in 0..=12 {
        let f = format!("scores.{n}");
        assert!(
            std::fs::read(whole.join(&f)).unwrap() == std::fs::read(streamed.join(&f)).unwrap(),
            "{f}"
        );
    }
    let import = |dest: &Path, range: Option<&str>| {
        let mut c = support::oware();
        c.args([
            "import",
            "--format",
            "romein",
            "--from",
            s(&whole),
            "--dir",
            s(dest),
        ]);
        if let Some(r) = range {
            c.env("OWARE_SLICE_BYTES", r);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    import(&a, None);
    let said = import(&b, Some("20000"));
    assert!(said.contains("ranges of"), "{said}");
    assert_eq!(tables(&a), tables(&b));
    assert_eq!(tables(&a), tables(&ours));
}

#[test]
fn an_export_keeps_what_it_wrote_before_from_the_same_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, files, zstd) = (
        tmp.path().join("ours"),
        tmp.path().join("romein"),
        tmp.path().join("zstd"),
    );
    generate(&ours, "awari", 10);
    let export = |from: &Path| {
        ok(&[
            "export",
            "--format",
            "romein",
            "--dir",
            s(from),
            "--out",
            s(&files),
        ])
    };
    let out = export(&ours);
    assert!(!out.contains("kept"), "{out}");
    let first: Vec<Vec<u8>> = (0..=10)
        .map(|n| std::fs::read(files.join(format!("scores.{n}"))).unwrap())
        .collect();
    // Everything kept; a damaged file written again, the same.
    let out = export(&ours);
    assert!(out.contains("11 tiers kept from before"), "{out}");
    let five = files.join("scores.5");
    let mut bytes = std::fs::read(&five).unwrap();
    bytes[7] = bytes[7].wrapping_add(1);
    std::fs::write(&five, &bytes).unwrap();
    let out = export(&ours);
    assert!(
        out.contains("10 tiers kept") && !out.contains("tier 5: kept"),
        "{out}"
    );
    assert_eq!(std::fs::read(&five).unwrap(), first[5]);
    // The same scores from another table (another compression): written again.
    ok(&[
        "recompress",
        "--dir",
        s(&ours),
        "--out",
        s(&zstd),
        "--compression",
        "zstd",
    ]);
    let out = export(&zstd);
    assert!(!out.contains("kept"), "{out}");
    for (n, f) in first.iter().enumerate() {
        assert_eq!(
            &std::fs::read(files.join(format!("scores.{n}"))).unwrap(),
            f
        );
    }
    // The directory written is a table directory, recorded.
    ok(&["verify", "--dir", s(&files)]);
}

#[cfg(unix)]
#[test]
fn a_directory_is_never_exported_or_imported_into_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let awari = tmp.path().join("awari");
    generate(&awari, "awari", 6);
    let manifest = std::fs::read(awari.join("manifest.json")).unwrap();
    // The same directory under another name: a link and a `..` path.
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&awari, &link).unwrap();
    let dotted = awari.join("..").join("awari");
    for out in [&awari, &link, &dotted] {
        let o = run(&[
            "export",
            "--format",
            "romein",
            "--dir",
            s(&awari),
            "--out",
            s(out),
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            text(&o.stderr),
            "error: --out must be another directory than --dir\n"
        );
    }
    assert_eq!(
        std::fs::read(awari.join("manifest.json")).unwrap(),
        manifest
    );
    assert!(!awari.join("scores.6").exists());

    let files = tmp.path().join("files");
    export(&awari, &files);
    let before = std::fs::read(files.join("manifest.json")).unwrap();
    let e = failed_import(&files, &files);
    assert_eq!(e, "error: --dir must be another directory than --from\n");
    assert_eq!(std::fs::read(files.join("manifest.json")).unwrap(), before);
    assert!(!files.join("tier-06.owt").exists());
}

#[test]
fn an_export_or_recompress_of_nothing_names_it_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (missing, empty) = (tmp.path().join("missing"), tmp.path().join("empty"));
    std::fs::create_dir(&empty).unwrap();
    let out = tmp.path().join("out");
    let export = |dir: &Path| {
        run(&[
            "export",
            "--format",
            "romein",
            "--dir",
            s(dir),
            "--out",
            s(&out),
        ])
    };
    let o = export(&missing);
    assert_eq!(
        text(&o.stderr),
        format!(
            "error: {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
    let o = export(&empty);
    assert_eq!(
        text(&o.stderr),
        format!("error: no tables to export in {}\n", empty.display())
    );
    let recompress = |dir: &Path| run(&["recompress", "--dir", s(dir), "--out", s(&out)]);
    let o = recompress(&missing);
    assert_eq!(
        text(&o.stderr),
        format!(
            "error: {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
    let o = recompress(&empty);
    assert!(!o.status.success());
    assert!(text(&o.stderr).starts_with("error: no tiers to rewrite"));
    assert!(!out.exists(), "the output directory was created");
}

#[test]
fn a_missing_scores_file_is_made_by_an_export() {
    let tmp = tempfile::tempdir().unwrap();
    let (awari, files) = (tmp.path().join("awari"), tmp.path().join("files"));
    generate(&awari, "awari", 6);
    ok(&[
        "export",
        "--format",
        "romein",
        "--dir",
        s(&awari),
        "--out",
        s(&files),
        "--tiers",
        "..=5",
    ]);
    let o = run(&[
        "probe",
        "--format",
        "romein",
        "--dir",
        s(&files),
        "1 1 1 1 1 1 0 0 0 0 0 0",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains("scores.6")
            && e.contains(&format!(
                "`oware generate --dir TABLES --rules awari --max-seeds 6 && oware export \
                 --format romein --dir TABLES --out {} --tiers ..=6`",
                files.display()
            )),
        "{e}"
    );
}

#[test]
fn an_import_or_recompress_never_mixes_compressions_in_a_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, files, zstd) = (
        tmp.path().join("ours"),
        tmp.path().join("files"),
        tmp.path().join("zstd"),
    );
    generate(&ours, "awari", 6);
    export(&ours, &files);
    ok(&[
        "generate",
        "--quiet",
        "--no-distance",
        "--rules",
        "awari",
        "--compression",
        "zstd",
        "--max-seeds",
        "4",
        "--dir",
        s(&zstd),
    ]);
    // Tiers 5 and 6 are imported in the compression of the tables already there.
    import(&files, &zstd);
    for n in 0..=6u8 {
        let t = oware_db::table::Table::open(&zstd.join(format!("tier-{n:02}.owt"))).unwrap();
        assert_eq!(
            t.compression(),
            oware_db::format::Compression::Zstd,
            "tier {n}"
        );
    }
    // A recompress into it with another compression is refused, naming both.
    let o = run(&["recompress", "--dir", s(&ours), "--out", s(&zstd)]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.starts_with("error: --compression huffman: ") && e.contains("holds zstd tables"),
        "{e}"
    );
}

#[test]
fn info_with_format_romein_says_it_sets_the_manifest_aside() {
    let tmp = tempfile::tempdir().unwrap();
    let (ours, files) = (tmp.path().join("ours"), tmp.path().join("files"));
    generate(&ours, "awari", 3);
    export(&ours, &files);
    let forced = ok(&["info", "--format", "romein", "--dir", s(&files)]);
    assert!(
        forced.contains("\nmanifest   set aside (--format romein reads the files)\n"),
        "{forced}"
    );
    let plain = ok(&["info", "--dir", s(&files)]);
    assert!(
        plain.contains("\nmanifest   format 1, index reachable\n"),
        "{plain}"
    );
}
