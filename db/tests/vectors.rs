//! Checks [`Position::moves`] against the hand-worked vectors of `tests/vectors/moves.csv`
//! (format described in the header of that file).

use std::fmt::Write as _;

use oware_db::{Outcome, Position, Rules};

const MOVES_CSV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/moves.csv");

/// Splits one CSV line into fields; a field may be wrapped in double quotes to hold commas.
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    if quoted {
        return Err("unterminated quote".into());
    }
    fields.push(field);
    Ok(fields)
}

/// One expected move: its house and its outcome; `None` as the house means the row says the
/// game is over (`end=SCORE`, no legal move).
type Expected = (Option<u8>, Outcome);

fn parse_end(s: &str) -> Result<i8, String> {
    let v = s
        .strip_prefix("end=")
        .ok_or_else(|| format!("`{s}` is not end=SCORE"))?;
    v.parse().map_err(|_| format!("bad score `{v}`"))
}

fn parse_moves(s: &str) -> Result<Vec<Expected>, String> {
    if s.starts_with("end=") {
        return Ok(vec![(
            None,
            Outcome::End {
                score: parse_end(s)?,
            },
        )]);
    }
    s.split(';')
        .map(|m| {
            let (house, rest) = m
                .split_once(':')
                .ok_or_else(|| format!("move `{m}` has no `:`"))?;
            let house: u8 = house
                .trim()
                .parse()
                .map_err(|_| format!("bad house `{house}`"))?;
            let outcome = if rest.starts_with("end=") {
                Outcome::End {
                    score: parse_end(rest)?,
                }
            } else {
                let (child, captured) = rest
                    .split_once('/')
                    .ok_or_else(|| format!("move `{m}` has no `/CAPTURED`"))?;
                Outcome::Continue {
                    child: child.parse().map_err(|e| format!("child `{child}`: {e}"))?,
                    captured: captured
                        .trim()
                        .parse()
                        .map_err(|_| format!("bad capture count `{captured}`"))?,
                }
            };
            Ok((Some(house), outcome))
        })
        .collect()
}

/// The moves of `p` under `rules`, in the notation of the CSV file.
fn actual_moves(p: &Position, rules: &Rules) -> Vec<Expected> {
    let moves = p.moves(rules);
    if moves.is_empty() {
        return vec![(
            None,
            Outcome::End {
                score: p.end_score(),
            },
        )];
    }
    moves.iter().map(|m| (Some(m.house), m.outcome)).collect()
}

fn show(moves: &[Expected]) -> String {
    let mut s = String::new();
    for (k, (house, outcome)) in moves.iter().enumerate() {
        if k > 0 {
            s.push(';');
        }
        if let Some(h) = house {
            let _ = write!(s, "{h}:");
        }
        match outcome {
            Outcome::End { score } => {
                let _ = write!(s, "end={score}");
            }
            Outcome::Continue { child, captured } => {
                let _ = write!(s, "{child}/{captured}");
            }
        }
    }
    s
}

#[test]
fn moves_match_the_hand_worked_vectors() {
    let text = std::fs::read_to_string(MOVES_CSV)
        .unwrap_or_else(|e| panic!("cannot read {MOVES_CSV}: {e}"));
    let mut rows = 0;
    let mut header_seen = false;
    let mut failures = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let lineno = k + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let where_ = format!("{MOVES_CSV}:{lineno}");
        let fields = split_csv(line).unwrap_or_else(|e| panic!("{where_}: {e}"));
        if !header_seen {
            assert_eq!(fields, ["rules", "position", "moves"], "{where_}: header");
            header_seen = true;
            continue;
        }
        let [rules, position, moves] = fields.as_slice() else {
            panic!("{where_}: expected 3 fields, found {}", fields.len());
        };
        let rules: Rules = rules
            .parse()
            .unwrap_or_else(|e| panic!("{where_}: rules: {e}"));
        let p: Position = position
            .parse()
            .unwrap_or_else(|e| panic!("{where_}: position: {e}"));
        let expected = parse_moves(moves).unwrap_or_else(|e| panic!("{where_}: moves: {e}"));
        // The capture counts stored in each move agree with the outcome.
        for m in p.moves(&rules).iter() {
            if let Outcome::Continue { captured, .. } = m.outcome {
                assert_eq!(m.captured, captured, "{where_}: house {}", m.house);
            }
        }
        let actual = actual_moves(&p, &rules);
        if actual != expected {
            failures.push(format!(
                "{where_}: rules {rules}, position {p}\n  expected {}\n  got      {}",
                show(&expected),
                show(&actual)
            ));
        }
        rows += 1;
    }
    assert!(header_seen, "{MOVES_CSV}: no header line");
    assert!(rows >= 30, "{MOVES_CSV}: only {rows} rows");
    assert!(
        failures.is_empty(),
        "{} of {rows} vectors disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn csv_splitting() {
    assert_eq!(
        split_csv(r#""abapa+capture=1,2",1 2,x"#).unwrap(),
        ["abapa+capture=1,2", "1 2", "x"]
    );
    assert!(split_csv(r#""abapa,1"#).is_err());
    assert_eq!(
        parse_moves("end=-3").unwrap(),
        [(None, Outcome::End { score: -3 })]
    );
    assert!(parse_moves("0:1 2 3/0").is_err());
}
