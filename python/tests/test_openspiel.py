"""The OpenSpiel bridge: moves, captures and next positions against OpenSpiel's `oware`, and
the tablebase bot against random and MCTS players.

Needs OpenSpiel (`pip install --no-deps open-spiel==2.0.2`, with numpy and absl-py);
scripts/python-check installs it and sets OWARE_REQUIRE_OPENSPIEL=1, so that a missing
OpenSpiel fails there instead of skipping.
"""

import os
import random

import pytest

import oware

if os.environ.get("OWARE_REQUIRE_OPENSPIEL"):
    import pyspiel
else:
    pyspiel = pytest.importorskip("pyspiel")

from oware import openspiel as bridge  # noqa: E402


def check_state(state, rules, counts):
    """Every legal move of `state`: the same houses, captures and next positions."""
    p = bridge.position(state)
    ours = p.moves(rules)
    assert sorted(state.legal_actions()) == [bridge.to_action(m.house) for m in ours], str(p)
    mover_before, _ = bridge.captured(state)
    for m in ours:
        child = state.clone()
        child.apply_action(bridge.to_action(m.house))
        if child.is_terminal():
            # OpenSpiel's own end (a repetition, or more than half the seeds captured) gives
            # each player the seeds on their row: only the moves before it compare.
            counts["terminal"] += 1
            continue
        assert bridge.position(child) == m.child, f"{p} house {m.house}"
        _, mover_after = bridge.captured(child)
        assert mover_after - mover_before == m.captured, f"{p} house {m.house}"
        counts["moves"] += 1


def test_moves_agree_with_openspiel_over_2000_random_games():
    game = pyspiel.load_game("oware")
    rng = random.Random(2023)
    counts = {"moves": 0, "terminal": 0, "plies": 0}
    for _ in range(2000):
        state = game.new_initial_state()
        while not state.is_terminal():
            check_state(state, "abapa", counts)
            counts["plies"] += 1
            state.apply_action(rng.choice(state.legal_actions()))
    assert counts["moves"] > 100_000, counts


def test_the_12_seed_game_agrees_too():
    game = pyspiel.load_game("oware(num_seeds_per_house=1)")
    rng = random.Random(7)
    counts = {"moves": 0, "terminal": 0}
    for _ in range(300):
        state = game.new_initial_state()
        while not state.is_terminal():
            check_state(state, "abapa", counts)
            state.apply_action(rng.choice(state.legal_actions()))
    assert counts["moves"] > 3000, counts


def test_conversions():
    game = pyspiel.load_game("oware")
    state = game.new_initial_state()
    state.apply_action(2)
    # Player 1 to move: its houses (6..11) come first.
    assert bridge.position(state) == oware.Position("5 4 4 4 4 4 4 4 0 5 5 5")
    assert bridge.captured(state) == (0, 0)
    with pytest.raises(ValueError):
        bridge.to_action(6)
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="over"):
        bridge.position(state)


class RandomBot(pyspiel.Bot):
    def __init__(self, seed):
        pyspiel.Bot.__init__(self)
        self.rng = random.Random(seed)

    def step(self, state):
        return self.rng.choice(state.legal_actions())

    def restart_at(self, state):
        pass

    def inform_action(self, state, player_id, action):
        pass


def opponents(game, seed):
    yield "random", RandomBot(seed)
    np = pytest.importorskip("numpy")
    from open_spiel.python.algorithms import mcts

    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    yield "mcts", mcts.MCTSBot(game, 2, 100, evaluator, random_state=np.random.RandomState(seed))


def test_the_bot_never_turns_a_win_into_a_loss(abapa12):
    tb = oware.Tablebase(abapa12, rules="abapa")
    game = pyspiel.load_game("oware(num_seeds_per_house=1)")
    games = {"random": 0, "mcts": 0}
    held_wins = 0
    for k in range(60):
        for name, other in opponents(game, k):
            if name == "mcts" and k >= 12:
                continue
            side = k % 2
            bot = bridge.TablebaseBot(tb)
            state = game.new_initial_state()
            # A few random plies first, so that games start from many positions.
            rng = random.Random(k)
            for _ in range(rng.randrange(6)):
                if state.is_terminal():
                    break
                state.apply_action(rng.choice(state.legal_actions()))
            won = False
            while not state.is_terminal():
                if state.current_player() == side:
                    p = bridge.position(state)
                    a, b = bridge.captured(state)
                    before = tb.outcome(p, a, b)["difference"]
                    action = bot.step(state)
                    state.apply_action(action)
                    if before > 0:
                        won = True
                        if not state.is_terminal():
                            q = bridge.position(state)
                            c, d = bridge.captured(state)
                            # Still lost for the opponent, by the same margin.
                            assert tb.outcome(q, c, d)["difference"] == -before, (p, action)
                else:
                    state.apply_action(other.step(state))
            if won:
                held_wins += 1
                assert state.returns()[side] >= 0, (name, k, state)
            assert bot.deferred == 0
            games[name] += 1
    assert games == {"random": 60, "mcts": 12}
    assert held_wins > 20, held_wins


def test_the_bot_defers_to_its_fallback_where_tables_end(abapa12):
    tb = oware.Tablebase(abapa12, rules="abapa")
    game = pyspiel.load_game("oware")
    bot = bridge.TablebaseBot(tb, fallback=RandomBot(1))
    state = game.new_initial_state()
    action = bot.step(state)
    assert action in state.legal_actions() and bot.deferred == 1
    with pytest.raises(oware.MissingTierError):
        bridge.TablebaseBot(tb).step(state)


def test_the_bot_converts_before_a_position_repeats(abapa12):
    """The bot on both sides, from random positions with a nonzero score: the captures add
    up to the tables' score, reaching a position of score 0 (or the end) before any
    position repeats, where OpenSpiel's game would end."""
    tb = oware.Tablebase(abapa12, rules="abapa")
    game = pyspiel.load_game("oware(num_seeds_per_house=1)")
    bot = bridge.TablebaseBot(tb)
    rng = random.Random(33)
    converted = 0
    for _ in range(400):
        state = game.new_initial_state()
        for _ in range(rng.randrange(2, 12)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        start = bridge.position(state)
        score = tb.score(start)
        if score == 0:
            continue
        side = state.current_player()
        gains = {0: 0, 1: 0}
        seen = {(str(start), side)}
        while not state.is_terminal():
            p = bridge.position(state)
            if tb.score(p) == 0:
                break
            mover = state.current_player()
            before, _ = bridge.captured(state)
            state.apply_action(bot.step(state))
            if state.is_terminal():
                break
            _, after = bridge.captured(state)
            gains[mover] += after - before
            key = (str(bridge.position(state)), state.current_player())
            assert key not in seen, f"{start}: {key[0]} repeats"
            seen.add(key)
        if not state.is_terminal():
            assert gains[side] - gains[1 - side] == score, (str(start), score, gains)
            converted += 1
    assert bot.deferred == 0
    assert converted > 100, converted
