//! The rules value: presets `abapa` and `awari` and every option of `docs/RULES.md`.
//!
//! A [`Rules`] value has one stable text form, stored in every table header:
//! a preset name followed by `+option=value` for each option that differs from that preset,
//! in the fixed order `grand-slam`, `capture`, `starve`. For example `abapa`, `awari`,
//! `abapa+grand-slam=illegal+capture=1,2`. [`Rules::from_str`](std::str::FromStr) accepts
//! options in any order (later ones win) and [`fmt::Display`] prints the canonical form, so
//! `text.parse::<Rules>()?.to_string()` is the canonical spelling of `text`.

use std::fmt;
use std::str::FromStr;

use crate::parse_error::ParseError;

/// What a move that would capture every seed of the opponent does (a *grand slam*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GrandSlam {
    /// Legal, captures nothing (the `abapa` default, rule 4).
    NoCapture,
    /// Not a legal move.
    Illegal,
    /// Legal and captures; the opponent is left without seeds.
    CaptureAll,
    /// Legal and captures; the game ends and every seed left on the board goes to the opponent.
    ToOpponent,
    /// Legal; the house of the last seed is left untouched, the rest of the chain is taken.
    KeepLast,
    /// Legal; the first house of the chain in sowing order (the lowest-numbered one) is left
    /// untouched, the rest of the chain is taken.
    KeepFirst,
}

impl GrandSlam {
    /// Every variant, in the order of their names in [`GrandSlam::NAMES`].
    pub const ALL: [GrandSlam; 6] = [
        GrandSlam::NoCapture,
        GrandSlam::Illegal,
        GrandSlam::CaptureAll,
        GrandSlam::ToOpponent,
        GrandSlam::KeepLast,
        GrandSlam::KeepFirst,
    ];
    /// The text names of the variants.
    pub const NAMES: [&'static str; 6] = [
        "no-capture",
        "illegal",
        "capture-all",
        "to-opponent",
        "keep-last",
        "keep-first",
    ];

    /// The text name of this option value.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// What leaving the opponent without seeds costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Starve {
    /// Rule 5 (`abapa`): when the opponent is empty, only moves that feed it are legal.
    Feed,
    /// A move that leaves the opponent empty ends the game; every seed still on the board goes
    /// to the opponent (the Wari rule text). There is no obligation to feed.
    Forfeit,
    /// The `awari` rule: moves that leave the opponent empty (eradicating moves) are illegal
    /// unless every legal move is eradicating.
    Eradicate,
}

impl Starve {
    /// Every variant, in the order of [`Starve::NAMES`].
    pub const ALL: [Starve; 3] = [Starve::Feed, Starve::Forfeit, Starve::Eradicate];
    /// The text names of the variants.
    pub const NAMES: [&'static str; 3] = ["feed", "forfeit", "eradicate"];

    /// The text name of this option value.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The set of house counts (after sowing) that capture: a non-empty subset of `1..=3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CaptureSet(u8);

impl CaptureSet {
    /// The default set `{2, 3}`.
    pub const DEFAULT: CaptureSet = CaptureSet(0b1100);

    /// Builds a set from counts.
    ///
    /// # Errors
    /// [`ParseError::Rules`] if the set is empty or holds a count outside `1..=3`.
    pub fn new(counts: &[u8]) -> Result<Self, ParseError> {
        let mut bits = 0u8;
        for &c in counts {
            if !(1..=3).contains(&c) {
                return Err(ParseError::Rules(format!(
                    "capture count {c} is outside 1..=3"
                )));
            }
            bits |= 1 << c;
        }
        if bits == 0 {
            return Err(ParseError::Rules("the capture set is empty".into()));
        }
        Ok(CaptureSet(bits))
    }

    /// Whether a house holding `count` seeds after sowing is captured.
    #[inline]
    pub fn contains(self, count: u8) -> bool {
        count < 8 && (self.0 >> count) & 1 == 1
    }

    /// The set as a bit mask: bit `c` is set when count `c` captures.
    #[inline]
    pub(crate) fn bits(self) -> u8 {
        self.0
    }

    /// Every non-empty subset of `1..=3`.
    pub fn all() -> impl Iterator<Item = CaptureSet> {
        (1u8..8).map(|m| CaptureSet(m << 1))
    }
}

impl fmt::Display for CaptureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for c in 1..=3 {
            if self.contains(c) {
                if !first {
                    f.write_str(",")?;
                }
                write!(f, "{c}")?;
                first = false;
            }
        }
        Ok(())
    }
}

/// A complete rules value: every option of `docs/RULES.md` (in the repository).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// What a grand slam does.
    pub grand_slam: GrandSlam,
    /// Which counts capture.
    pub capture: CaptureSet,
    /// What leaving the opponent empty costs.
    pub starve: Starve,
}

/// The names of the presets, for error messages and help.
pub const PRESETS: [&str; 2] = ["abapa", "awari"];

impl Rules {
    /// The international tournament rules (the default).
    pub const ABAPA: Rules = Rules {
        grand_slam: GrandSlam::NoCapture,
        capture: CaptureSet::DEFAULT,
        starve: Starve::Feed,
    };

    /// The Computer Olympiad rules of Romein & Bal's 2002 solution: eradicating moves are
    /// illegal unless all moves eradicate, and then a grand slam captures.
    pub const AWARI: Rules = Rules {
        grand_slam: GrandSlam::CaptureAll,
        capture: CaptureSet::DEFAULT,
        starve: Starve::Eradicate,
    };

    /// The preset this value is printed relative to: `awari` when the eradication rule is on,
    /// `abapa` otherwise.
    pub fn preset(&self) -> (&'static str, Rules) {
        if self.starve == Starve::Eradicate {
            ("awari", Rules::AWARI)
        } else {
            ("abapa", Rules::ABAPA)
        }
    }

    /// The tiers a capture from tier `n` can reach: a capture takes one to six consecutive
    /// houses of the opponent, each holding a count of the capture set, so it takes between
    /// the smallest count and six times the largest seeds (empty for the tiers that no
    /// capture leaves, such as tier 0). A generator reads exactly these lower tiers to solve
    /// tier `n`.
    ///
    /// ```
    /// use oware_db::Rules;
    /// assert_eq!(Rules::ABAPA.capture_window(24), 6..23);
    /// assert_eq!(Rules::ABAPA.capture_window(1), 0..0);
    /// ```
    pub fn capture_window(&self, n: u8) -> std::ops::Range<u8> {
        let counts = || (1..=3u8).filter(|&c| self.capture.contains(c));
        let least = counts().min().unwrap_or(1);
        let most = 6 * counts().max().unwrap_or(3);
        if n < least {
            return 0..0;
        }
        n.saturating_sub(most)..n.saturating_sub(least - 1)
    }
}

impl Default for Rules {
    fn default() -> Self {
        Rules::ABAPA
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, base) = self.preset();
        f.write_str(name)?;
        if self.grand_slam != base.grand_slam {
            write!(f, "+grand-slam={}", self.grand_slam.name())?;
        }
        if self.capture != base.capture {
            write!(f, "+capture={}", self.capture)?;
        }
        if self.starve != base.starve {
            write!(f, "+starve={}", self.starve.name())?;
        }
        Ok(())
    }
}

fn unknown(what: &str, got: &str, valid: &[&str]) -> ParseError {
    ParseError::Rules(format!(
        "unknown {what} `{}`; valid: {}",
        crate::shorten(got),
        valid.join(", ")
    ))
}

impl FromStr for Rules {
    type Err = ParseError;

    /// Parses `preset(+option=value)*`.
    ///
    /// # Errors
    /// [`ParseError::Rules`] naming the unknown preset, option or value and listing the valid ones.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.trim().split('+');
        let preset = parts.next().unwrap_or_default().trim();
        let mut rules = match preset {
            "abapa" => Rules::ABAPA,
            "awari" => Rules::AWARI,
            other => return Err(unknown("preset", other, &PRESETS)),
        };
        for part in parts {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                ParseError::Rules(format!(
                    "option `{}` is not of the form name=value (options: grand-slam, capture, starve)",
                    crate::shorten(part)
                ))
            })?;
            let (key, value) = (key.trim(), value.trim());
            match key {
                "grand-slam" => {
                    let i = GrandSlam::NAMES
                        .iter()
                        .position(|n| *n == value)
                        .ok_or_else(|| unknown("grand-slam value", value, &GrandSlam::NAMES))?;
                    rules.grand_slam = GrandSlam::ALL[i];
                }
                "starve" => {
                    let i = Starve::NAMES
                        .iter()
                        .position(|n| *n == value)
                        .ok_or_else(|| unknown("starve value", value, &Starve::NAMES))?;
                    rules.starve = Starve::ALL[i];
                }
                "capture" => {
                    let counts = value
                        .split(',')
                        .map(|c| {
                            c.trim().parse::<u8>().map_err(|_| {
                                ParseError::Rules(format!(
                                    "capture count `{}` is not a number in 1..=3",
                                    crate::shorten(c)
                                ))
                            })
                        })
                        .collect::<Result<Vec<u8>, _>>()?;
                    rules.capture = CaptureSet::new(&counts)?;
                }
                other => {
                    return Err(unknown(
                        "option",
                        other,
                        &["grand-slam", "capture", "starve"],
                    ))
                }
            }
        }
        Ok(rules)
    }
}

/// Serialized as its canonical text form (as in a table header and `manifest.json`).
impl serde::Serialize for Rules {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Deserialized from any text form [`Rules::from_str`](std::str::FromStr) accepts; the
/// error names the text.
impl<'de> serde::Deserialize<'de> for Rules {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        text.parse().map_err(|e| {
            serde::de::Error::custom(format!("rules `{}`: {e}", crate::shorten(&text)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_rules() -> Vec<Rules> {
        let mut v = Vec::new();
        for &grand_slam in &GrandSlam::ALL {
            for capture in CaptureSet::all() {
                for &starve in &Starve::ALL {
                    v.push(Rules {
                        grand_slam,
                        capture,
                        starve,
                    });
                }
            }
        }
        v
    }

    #[test]
    fn text_round_trips_for_every_rules_value() {
        let all = every_rules();
        assert_eq!(all.len(), 6 * 7 * 3);
        for r in all {
            let text = r.to_string();
            assert_eq!(text.parse::<Rules>().unwrap(), r, "{text}");
        }
    }

    #[test]
    fn canonical_names() {
        assert_eq!(Rules::ABAPA.to_string(), "abapa");
        assert_eq!(Rules::AWARI.to_string(), "awari");
        let r: Rules = "abapa+capture=2,1+grand-slam=illegal".parse().unwrap();
        assert_eq!(r.to_string(), "abapa+grand-slam=illegal+capture=1,2");
        let r: Rules = "awari+grand-slam=no-capture".parse().unwrap();
        assert_eq!(r.grand_slam, GrandSlam::NoCapture);
        assert_eq!(r.starve, Starve::Eradicate);
        let r: Rules = "abapa+starve=forfeit".parse().unwrap();
        assert_eq!(r.to_string(), "abapa+starve=forfeit");
    }

    #[test]
    fn errors_list_valid_names() {
        let e = "oware".parse::<Rules>().unwrap_err().to_string();
        assert!(e.contains("abapa") && e.contains("awari"), "{e}");
        let e = "abapa+grand-slam=maybe"
            .parse::<Rules>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("keep-first") && e.contains("maybe"), "{e}");
        let e = "abapa+capture=4".parse::<Rules>().unwrap_err().to_string();
        assert!(e.contains('4'), "{e}");
        assert!("abapa+capture=".parse::<Rules>().is_err());
        assert!("abapa+speed=fast".parse::<Rules>().is_err());
        assert!("abapa+starve".parse::<Rules>().is_err());
    }
}
