//! Storing `score − exit` instead of the score, where `exit` is the best value over the moves
//! that leave the tier (captures and ends of the game, known from the lower tiers alone; so
//! `score >= exit`). Positions without such a move keep their score.

use anyhow::bail;
use oware_db::index::{IndexKind, TierIndex};
use oware_db::{Outcome, Rules};

use super::bits;

/// The entropies of the scores and of the differences to their exits, in bits per position.
#[derive(Clone, Debug)]
pub struct ExitDelta {
    /// Positions.
    pub positions: usize,
    /// The share of positions with a move that leaves the tier.
    pub with_exit: f64,
    /// The share of positions whose score is their exit.
    pub exact: f64,
    /// Order-0 entropy of the scores.
    pub score_order0: f64,
    /// Order-1 entropy of the scores (the tables' model).
    pub score_order1: f64,
    /// Order-0 entropy of the differences.
    pub delta_order0: f64,
    /// Order-1 entropy of the differences.
    pub delta_order1: f64,
    /// Order-1 entropy of the differences, knowing also whether the position has an exit.
    pub delta_has_exit: f64,
    /// Order-1 entropy of the scores with "don't care" entries: where the exit is the score,
    /// any stored value up to the score gives the score back as `max(stored, exit)`, so the
    /// previous stored value is kept when it can be.
    pub dont_care: f64,
}

/// Measures `scores`, the scores of tier `n` in reachable-index order, whose lower tiers
/// `lower[t]` (`t < n`) hold those of tier `t`, all solved under `rules`.
///
/// # Errors
/// If the scores are not those of solved tiers: a length is not its tier's, a score is
/// below its exit, or a score is out of its tier's range.
pub fn measure(
    rules: &Rules,
    n: u8,
    lower: &[Vec<i8>],
    scores: &[i8],
) -> anyhow::Result<ExitDelta> {
    let idx: Vec<TierIndex> = (0..=n)
        .map(|t| TierIndex::new(t, IndexKind::Reachable))
        .collect();
    if lower.len() != usize::from(n) {
        bail!("{} lower tiers given for tier {n}", lower.len());
    }
    let tiers = lower.iter().map(Vec::as_slice).chain([scores]);
    for (t, tier) in tiers.enumerate() {
        if tier.len() as u64 != idx[t].size() {
            bail!(
                "tier {t}: {} scores for {} positions",
                tier.len(),
                idx[t].size()
            );
        }
        if let Some(x) = tier.iter().find(|x| x.unsigned_abs() as usize > t) {
            bail!("tier {t}: score {x} is out of its range");
        }
    }
    let sym = |x: i32| (x + 64) as usize;
    let (mut c0, mut c1, mut d0, mut d1, mut e1) = (
        vec![0u64; 128],
        vec![vec![0u64; 128]; 128],
        vec![0u64; 128],
        vec![vec![0u64; 128]; 128],
        vec![vec![vec![0u64; 128]; 128]; 2],
    );
    let mut f1 = vec![vec![0u64; 128]; 128];
    let (mut with_exit, mut exact) = (0u64, 0u64);
    let (mut pv, mut pd, mut pf) = (0i32, 0i32, 0i32);
    for (i, p) in idx[n as usize].cursor(0, scores.len() as u64).enumerate() {
        let mut exit = i32::MIN;
        let mut unranked = false;
        p.for_each_move(rules, |m| match m.outcome {
            Outcome::Continue { captured: 0, .. } => {}
            Outcome::Continue { child, captured } => {
                let t = usize::from(child.seeds());
                match idx[t].rank(&child) {
                    Some(r) => exit = exit.max(captured as i32 - lower[t][r as usize] as i32),
                    None => unranked = true,
                }
            }
            Outcome::End { score } => exit = exit.max(score as i32),
        });
        if unranked {
            bail!("tier {n}, index {i}: a move leads to a position of no reachable index");
        }
        let x = scores[i] as i32;
        let d = if exit == i32::MIN { x } else { x - exit };
        if exit != i32::MIN {
            with_exit += 1;
            if d < 0 {
                bail!("tier {n}, index {i}: score {x} is below its exit {exit}: not solved under {rules}");
            }
            if d == 0 {
                exact += 1;
            }
        }
        c0[sym(x)] += 1;
        c1[sym(pv)][sym(x)] += 1;
        d0[sym(d)] += 1;
        d1[sym(pd)][sym(d)] += 1;
        e1[usize::from(exit != i32::MIN)][sym(pd)][sym(d)] += 1;
        let stored = if exit == x && pf <= x { pf } else { x };
        f1[sym(pf)][sym(stored)] += 1;
        pv = x;
        pd = d;
        pf = stored;
    }
    let m = scores.len().max(1) as f64;
    let h1 = |c: &Vec<Vec<u64>>| c.iter().map(|r| bits(r)).sum::<f64>() / m;
    Ok(ExitDelta {
        positions: scores.len(),
        with_exit: with_exit as f64 / m,
        exact: exact as f64 / m,
        score_order0: bits(&c0) / m,
        score_order1: h1(&c1),
        delta_order0: bits(&d0) / m,
        delta_order1: h1(&d1),
        delta_has_exit: h1(&e1[0]) + h1(&e1[1]),
        dont_care: h1(&f1),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use oware_solver::tier::{solve_tier, LowerTiers};
    use oware_solver::NoProgress;

    use super::*;

    /// The scores of tiers 0..=max, solved in memory.
    fn solved(rules: &Rules, max: u8) -> Vec<Vec<i8>> {
        let mut lower = LowerTiers::new();
        let mut tiers = Vec::new();
        for n in 0..=max {
            let (scores, _) = solve_tier(rules, n, &lower, &NoProgress).expect("tier allocates");
            lower.push(Arc::from(scores.to_vec()));
            tiers.push(scores.to_vec());
        }
        tiers
    }

    #[test]
    fn solved_scores_are_at_least_their_exits() {
        let rules = Rules::ABAPA;
        let mut tiers = solved(&rules, 9);
        let scores = tiers.pop().expect("tier 9");
        let d = measure(&rules, 9, &tiers, &scores).expect("solved tiers");
        assert_eq!(d.positions, scores.len());
        assert!(d.with_exit > 0.0 && d.exact > 0.0 && d.exact <= d.with_exit);
        assert!(d.delta_order1 < d.score_order1, "{d:?}");
    }

    #[test]
    fn a_score_below_its_exit_is_refused() {
        let rules = Rules::ABAPA;
        let mut tiers = solved(&rules, 6);
        let mut scores = tiers.pop().expect("tier 6");
        // Every score the lowest: some position has a move that does better.
        scores.fill(-6);
        let err = measure(&rules, 6, &tiers, &scores).unwrap_err().to_string();
        assert!(err.contains("is below its exit"), "{err}");
        // Too few lower tiers.
        let err = measure(&rules, 6, &tiers[..5], &scores)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "5 lower tiers given for tier 6");
    }
}
