//! What several subcommands share: the range of `--threads`, the worker pool, the rules of
//! a table directory (the `--rules` default), and the parsing of `--tiers` and `--captured`.

use std::path::Path;

use anyhow::Context;
use oware_db::format::tier_file_name;
use oware_db::manifest::{tables_rules, Manifest};
use oware_db::{Position, Rules, Tablebase, MAX_SEEDS};

/// A usage error found after the command line parsed (flags that do not go together):
/// printed as any error, with exit status 2 as clap's own usage errors.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

pub use super::env::{parse_threads, MAX_THREADS};

/// Starts the worker threads of every command that has them, the same way for all: rayon's
/// global pool of `threads` workers (`--threads`), or of `RAYON_NUM_THREADS`
/// ([`super::env::Env::threads`], range-checked as `--threads`), or one per core. Call it once,
/// before the first parallel work, and after [`crate::signals::clean_up_on_signals`] where a
/// command calls that. `OWARE_SIMD=off` ([`super::env::Env::simd`]) keeps the solver on
/// its portable paths from here on.
///
/// # Errors
/// `OWARE_SIMD` is neither `auto` nor `off`, `RAYON_NUM_THREADS` is out of range, or the
/// system refuses the threads (a limit on processes): one line, `cannot start worker
/// threads: ...`, never a panic.
pub fn start_workers(threads: Option<usize>) -> anyhow::Result<()> {
    if super::env::get().simd()? == Some(false) {
        oware_solver::simd::disable();
    }
    let threads = match threads {
        Some(t) => t,
        None => super::env::get().threads()?.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(1, usize::from)
                .min(MAX_THREADS)
        }),
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|k| format!("worker-{k}"))
        .build_global()
        .context("cannot start worker threads")
}

/// The rules a command works under, the same for every command: the tables' own rules
/// ([`tables_rules`]), refusing `asked` if it differs; `asked` or `abapa` for a directory
/// without tables.
///
/// # Errors
/// [`oware_db::Error::RulesMismatch`] if `asked` differs from the tables' rules.
pub fn resolve_rules(
    dir: &Path,
    manifest: Option<&Manifest>,
    asked: Option<Rules>,
) -> Result<Rules, oware_db::Error> {
    match (tables_rules(dir, manifest), asked) {
        (Some(table), Some(asked)) if table != asked => {
            Err(oware_db::Error::RulesMismatch { table, asked })
        }
        (Some(f), _) => Ok(f),
        (None, a) => Ok(a.unwrap_or_default()),
    }
}

/// A list of tiers as ranges, e.g. `0..=3, 7, 9..=12`.
pub fn tier_ranges(tiers: &[u8]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < tiers.len() {
        let mut j = i;
        while j + 1 < tiers.len() && tiers[j + 1] == tiers[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            tiers[i].to_string()
        } else {
            format!("{}..={}", tiers[i], tiers[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// A foreign database format (`export`, `import`, and `--format` of the readers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The Romein-Bal Awari databases: `scores.N`, one signed byte per position.
    Romein,
}

/// The tiers with a table in `dir` (`tier-NN.owt`, or a Romein-Bal `scores.N`), ascending.
pub fn tiers_present(dir: &Path) -> Vec<u8> {
    (0..=MAX_SEEDS)
        .filter(|&n| {
            dir.join(tier_file_name(n)).is_file()
                || dir.join(oware_db::romein::file_name(n)).is_file()
        })
        .collect()
}

/// A selection of tiers, as `--tiers` takes it in every command: items separated by commas,
/// each a tier `N`, a range `A..=B` (`A..B` reads the same: both ends included), `A..` (up to
/// the highest tier there is) or `..=B` (from tier 0), e.g. `3`, `3,5`, `3..=5`, `..=24`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TierSelection {
    /// The items: a first tier and a last one (`None`: the highest there is).
    items: Vec<(u8, Option<u8>)>,
}

impl TierSelection {
    /// The tiers selected, ascending and each once, an open range ending at `top` (the
    /// highest tier there is).
    pub fn resolve(&self, top: u8) -> Vec<u8> {
        let mut tiers: Vec<u8> = self
            .items
            .iter()
            .flat_map(|&(a, b)| a..=b.unwrap_or(top))
            .collect();
        tiers.sort_unstable();
        tiers.dedup();
        tiers
    }
}

/// Parses `--tiers` ([`TierSelection`]): tiers within `0..=48`, digits only.
pub fn parse_tiers(s: &str) -> Result<TierSelection, String> {
    let usage = "--tiers takes tiers N, ranges A..=B, A.. or ..=B, separated by commas, \
                 e.g. 3,5 or 3..=5 or ..=24";
    let tier = |t: &str| -> Result<u8, String> {
        match t.parse::<u8>() {
            Ok(n) if n <= MAX_SEEDS && t.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(format!("`{t}` is not a tier in 0..={MAX_SEEDS}; {usage}")),
        }
    };
    let mut items = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("`{s}` holds an empty item; {usage}"));
        }
        items.push(match item.split_once("..") {
            None => {
                let n = tier(item)?;
                (n, Some(n))
            }
            Some((a, b)) => {
                let b = b.strip_prefix('=').unwrap_or(b);
                if a.is_empty() && b.is_empty() {
                    return Err(format!("`{item}` is not a range of tiers; {usage}"));
                }
                let a = if a.is_empty() { 0 } else { tier(a)? };
                let b = if b.is_empty() { None } else { Some(tier(b)?) };
                if let Some(b) = b.filter(|&b| b < a) {
                    return Err(format!("`{item}` is an empty range: {a} is above {b}"));
                }
                (a, b)
            }
        });
    }
    Ok(TierSelection { items })
}

/// Opens the tables of `dir` for probes under the rules of [`resolve_rules`]:
/// [`Tablebase::open_with_rules`] with `--rules`, [`Tablebase::open`] without;
/// [`Tablebase::open_romein`] with `--format romein`.
///
/// # Errors
/// As [`Tablebase::open_with_rules`], in the context of the directory.
pub fn open_tablebase(
    dir: &Path,
    asked: Option<Rules>,
    format: Option<Format>,
) -> anyhow::Result<Tablebase> {
    // A missing directory is named once, with the system's reason.
    existing_dir(dir)?;
    let tb = match (format, asked) {
        (Some(Format::Romein), Some(rules)) if rules != Rules::AWARI => {
            anyhow::bail!(
                "--format romein reads the Romein-Bal databases, whose rules are `awari`, not \
                 `{rules}`"
            )
        }
        (Some(Format::Romein), _) => Tablebase::open_romein(dir),
        (None, Some(rules)) => Tablebase::open_with_rules(dir, &rules),
        (None, None) => Tablebase::open(dir),
    };
    tb.with_context(|| format!("opening the tables in {}", dir.display()))
}

/// The command that makes tier `n` (under `rules`) for the tables in the directory named
/// `dir`: `oware generate` into it, or, for Romein and Bal's `scores.N` files (`romein`),
/// `oware generate` into a directory of tables then `oware export` of the tier into it.
/// Every argument is quoted for a POSIX shell ([`shell_word`]), so that the command can be
/// pasted whatever the directory's name.
pub fn tier_command(dir: &str, rules: &Rules, n: u8, romein: bool) -> String {
    let rules = rules.to_string();
    let (dir, rules) = (shell_word(dir), shell_word(&rules));
    if romein {
        format!(
            "oware generate --dir TABLES --rules {rules} --max-seeds {n} && oware export \
             --format romein --dir TABLES --out {dir} --tiers ..={n}"
        )
    } else {
        format!("oware generate --dir {dir} --rules {rules} --max-seeds {n}")
    }
}

/// `word` as one word of a POSIX shell command line, for the commands that messages suggest:
/// as it is where it holds only characters no shell treats specially (letters, digits and
/// `%+,-./:=@_`), else in single quotes, each `'` in it written `'\''`. So `tables` stays
/// `tables`, `my tables` becomes `'my tables'` and `x; touch y #` becomes `'x; touch y #'`:
/// pasted, the command gets the word back, and nothing in it runs.
pub fn shell_word(word: &str) -> std::borrow::Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "%+,-./:=@_".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return std::borrow::Cow::Borrowed(word);
    }
    std::borrow::Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
}

/// A path as one word of a suggested shell command ([`shell_word`] of its text).
pub fn shell_path(path: &Path) -> String {
    shell_word(&path.display().to_string()).into_owned()
}

/// Refuses an input directory `dir` that does not exist or is not a directory, with the
/// operating system's error where there is one.
///
/// # Errors
/// `dir` cannot be read or is not a directory.
pub fn existing_dir(dir: &Path) -> anyhow::Result<()> {
    let meta = std::fs::metadata(dir).with_context(|| dir.display().to_string())?;
    if !meta.is_dir() {
        // The system's words, as the other commands give them.
        #[cfg(unix)]
        let e = std::io::Error::from_raw_os_error(libc::ENOTDIR);
        #[cfg(not(unix))]
        let e = std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory");
        return Err(anyhow::Error::new(e).context(dir.display().to_string()));
    }
    Ok(())
}

/// Refuses an output directory `out` (already created) that is the input directory `input`,
/// whatever the paths that name them (links, `..`, relative or absolute): writing one into
/// itself would replace the records of what it holds. `flags` names the two options, as
/// `"--out"` and `"--dir"`.
///
/// # Errors
/// Either directory cannot be read, or they are the same.
pub fn refuse_same_dir(input: &Path, out: &Path, flags: (&str, &str)) -> anyhow::Result<()> {
    let canonical = |d: &Path| {
        d.canonicalize()
            .with_context(|| format!("reading the directory {}", d.display()))
    };
    if canonical(input)? == canonical(out)? {
        anyhow::bail!("{} must be another directory than {}", flags.0, flags.1);
    }
    Ok(())
}

/// Refuses tier `n` unless the filesystem of `dir` has `needed` bytes free (when it can
/// tell), before anything is written for it.
///
/// # Errors
/// The disk is short, with the figures.
pub fn check_disk(n: u8, needed: u64, dir: &Path) -> anyhow::Result<()> {
    if let Some(free) = oware_solver::dir::free_disk(dir) {
        if needed > free {
            anyhow::bail!(
                "tier {n} needs {} of disk in {}, {} free; nothing was written for it",
                oware_solver::memory::human_bytes(needed),
                dir.display(),
                oware_solver::memory::human_bytes(free)
            );
        }
    }
    Ok(())
}

/// Seeds captured so far by the mover and the opponent (`--captured A,B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Captured {
    /// The mover's.
    pub mover: u8,
    /// The opponent's.
    pub opponent: u8,
}

/// Parses `--captured A,B`: two seed counts of `0..=48`, digits only.
pub fn parse_captured(s: &str) -> Result<Captured, String> {
    let count = |t: &str, who: &str| -> Result<u8, String> {
        let t = t.trim();
        match t.parse::<u8>() {
            Ok(v) if v <= MAX_SEEDS && t.bytes().all(|b| b.is_ascii_digit()) => Ok(v),
            _ => Err(format!(
                "`{t}` ({who}) is not a seed count in 0..={MAX_SEEDS}; \
                 --captured takes A,B, the seeds the mover and the opponent have captured"
            )),
        }
    };
    let Some((a, b)) = s.split_once(',').filter(|(_, b)| !b.contains(',')) else {
        return Err(format!(
            "`{s}` is not A,B: --captured takes the seeds the mover and the opponent have \
             captured, e.g. 10,12"
        ));
    };
    Ok(Captured {
        mover: count(a, "the mover's")?,
        opponent: count(b, "the opponent's")?,
    })
}

/// The seeds of a whole game: 48 (4 per house), or 12, 24 or 36 for the smaller start
/// positions of `verify --start --seeds-per-house K` (12 K seeds).
const GAME_SEEDS: [u32; 4] = [12, 24, 36, 48];

/// Checks `--captured` against the board: the seeds on the board and those captured make a
/// whole game's seeds (48, or 12 K from a start position with K per house).
///
/// # Errors
/// The totals do not add up.
pub fn check_captured(p: &Position, c: Captured) -> anyhow::Result<()> {
    let board = u32::from(p.seeds());
    let total = board + u32::from(c.mover) + u32::from(c.opponent);
    if !GAME_SEEDS.contains(&total) {
        anyhow::bail!(
            "--captured {},{}: {board} seeds on the board and {} + {} captured make {total}; \
             a game has 48 seeds (or 12, 24, 36 from a start position with 1, 2, 3 per house)",
            c.mover,
            c.opponent,
            c.mover,
            c.opponent
        );
    }
    Ok(())
}

/// An error's message with its chain of causes, each printed once: a cause whose text is
/// already part of what is printed (as the OS error inside `path: <os error>`) is skipped.
pub fn error_message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if s.is_empty() || out.contains(&s) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&s);
    }
    out
}

/// The error of [`oware_solver::generate`] for printing: a held lock as it is (`main` gives
/// it exit status 2), any other error in the context of the directory, other rules with the
/// way out.
pub fn generate_error(e: oware_solver::GenerateError, dir: &std::path::Path) -> anyhow::Error {
    match e {
        oware_solver::GenerateError::Locked(e) => e.into(),
        oware_solver::GenerateError::RulesMismatch { found, .. } => anyhow::anyhow!(
            "{e}; use another directory or --rules {}",
            shell_word(&found.to_string())
        )
        .context(format!("generating into {}", dir.display())),
        e => anyhow::Error::new(e).context(format!("generating into {}", dir.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_range_checked() {
        assert_eq!(parse_threads("1"), Ok(1));
        assert_eq!(parse_threads("1024"), Ok(1024));
        for bad in ["0", "1025", "100000", "+4", "-1", "", "x"] {
            assert!(parse_threads(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tiers_parse_one_way() {
        let all = |s: &str, top: u8| parse_tiers(s).map(|t| t.resolve(top));
        assert_eq!(all("3", 24), Ok(vec![3]));
        assert_eq!(all("3,5", 24), Ok(vec![3, 5]));
        assert_eq!(all("5, 3,3", 24), Ok(vec![3, 5]));
        assert_eq!(all("3..=5", 24), Ok(vec![3, 4, 5]));
        assert_eq!(all("3..5", 24), Ok(vec![3, 4, 5]));
        assert_eq!(all("..=2", 24), Ok(vec![0, 1, 2]));
        assert_eq!(all("..2", 24), Ok(vec![0, 1, 2]));
        assert_eq!(all("22..", 24), Ok(vec![22, 23, 24]));
        assert_eq!(all("0,10..=11,47..", 48), Ok(vec![0, 10, 11, 47, 48]));
        assert_eq!(all("30..", 24), Ok(vec![]));
        for bad in [
            "", ",", "3,", "49", "-1", "+3", "x", "..", "..=", "5..=3", "3...5", "1..=49",
        ] {
            assert!(parse_tiers(bad).is_err(), "{bad}");
        }
        let e = parse_tiers("49").unwrap_err();
        assert!(e.contains("`49`") && e.contains("0..=48"), "{e}");
    }

    #[test]
    fn captured_parses_and_checks() {
        assert_eq!(
            parse_captured("10, 12"),
            Ok(Captured {
                mover: 10,
                opponent: 12
            })
        );
        for bad in ["-1,5", "+1,5", "10", "49,0", "1,x"] {
            assert!(parse_captured(bad).is_err(), "{bad}");
        }
        let e = parse_captured("-1,5").unwrap_err();
        assert!(e.contains("`-1`") && e.contains("0..=48"), "{e}");
        // Three counts: the whole value is named, not its last two.
        let e = parse_captured("18,18,1").unwrap_err();
        assert!(e.starts_with("`18,18,1` is not A,B"), "{e}");
        let p: Position = "1 1 1 1 1 2 4 2 3 0 0 0".parse().unwrap();
        let c = |mover, opponent| Captured { mover, opponent };
        assert!(check_captured(&p, c(14, 18)).is_ok());
        assert!(check_captured(&p, c(10, 10)).is_ok());
        assert!(check_captured(&p, c(10, 12)).is_err());
        assert!(check_captured(&p, c(30, 30)).is_err());
    }

    #[test]
    fn suggested_words_are_quoted_for_a_shell() {
        assert_eq!(shell_word("tables"), "tables");
        assert_eq!(shell_word("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_word("abapa+capture=1,2"), "abapa+capture=1,2");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("my tables"), "'my tables'");
        assert_eq!(shell_word("x; touch PWNED #"), "'x; touch PWNED #'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$(id)"), "'$(id)'");
        assert_eq!(shell_word("~"), "'~'");
        let c = tier_command("a b", &Rules::AWARI, 13, false);
        assert_eq!(c, "oware generate --dir 'a b' --rules awari --max-seeds 13");
    }

    #[test]
    fn causes_print_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let db = oware_db::Error::io("x/tier-01.owt", io);
        let e = anyhow::Error::new(db).context("opening the tables in x");
        let m = error_message(&e);
        assert_eq!(m.matches("entity not found").count(), 1, "{m}");
        assert!(
            m.starts_with("opening the tables in x: x/tier-01.owt: "),
            "{m}"
        );
    }
}
