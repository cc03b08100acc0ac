"""The Python API against the command line (`oware probe --json`) on real tables."""

import json
import random
import shutil

import pytest

import oware
from conftest import run


def random_position(rng, seeds):
    houses = [0] * 12
    for _ in range(seeds):
        houses[rng.randrange(12)] += 1
    return oware.Position(houses)


def test_positions_and_rules():
    p = oware.Position("1 1 1 1 1 2 4 2 3 0 0 0")
    assert p == oware.Position([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])
    assert p == oware.Position("1,1,1,1,1,2,4,2,3,0,0,0")
    assert p.seeds == 16 and p.houses[6] == 4
    assert str(p) == "1 1 1 1 1 2 4 2 3 0 0 0" and hash(p) == hash(oware.Position(str(p)))
    assert p.flipped().flipped() == p
    assert str(oware.Rules("awari")) == "awari"
    assert oware.Rules("abapa+grand-slam=illegal") != oware.Rules("abapa")
    assert oware.PRESETS == ["abapa", "awari"]
    moves = p.moves("awari")
    assert [m.house for m in moves] == [0, 1, 2, 3, 4, 5]
    assert moves[5].captured == 3 and moves[5].child == oware.Position("5 0 3 0 0 0 1 1 1 1 1 0")
    assert moves[0].end_score is None
    # A move that ends the game (starve=forfeit) has a score and no child.
    end = oware.Position("1 0 0 0 0 0 0 0 0 0 0 0").moves("abapa+starve=forfeit")
    assert [(m.child, m.end_score) for m in end] == [(None, -1)]
    assert oware.Position([0] * 12).moves() == []


@pytest.mark.parametrize(
    "bad",
    ["1 2 3", "49 0 0 0 0 0 0 0 0 0 0 0", "+1 0 0 0 0 0 0 0 0 0 0 0", [1] * 13,
     [-1] + [0] * 11, [9] * 6 + [0] * 6, [300] + [0] * 11],
)
def test_bad_positions_are_value_errors(bad):
    with pytest.raises(ValueError, match="bad position"):
        oware.Position(bad)


def test_bad_rules_are_value_errors():
    with pytest.raises(ValueError, match="bad rules"):
        oware.Rules("chess")


def test_probes_agree_with_the_command_line(abapa12):
    tb = oware.Tablebase(abapa12, rules="abapa")
    assert tb.rules == oware.Rules("abapa")
    rng = random.Random(23)
    for _ in range(60):
        p = random_position(rng, rng.randrange(13))
        want = json.loads(run("probe", "--dir", str(abapa12), "--json", "--line",
                              "--max-plies", "6", "--captured", f"{24 - p.seeds},24", str(p)))
        assert tb.score(p) == want["score"]
        assert tb.moves(p) == want["moves"]
        assert tb.best_line(p, 6) == want["line"]
        assert tb.outcome(p, 24 - p.seeds, 24) == want["outcome"]


def test_batch_scores_release_the_gil_and_agree(abapa12):
    tb = oware.Tablebase(str(abapa12))
    rng = random.Random(5)
    ps = [random_position(rng, rng.randrange(13)) for _ in range(20000)]
    assert tb.scores(ps) == [tb.score(p) for p in ps]
    assert tb.scores([str(p) for p in ps[:10]]) == tb.scores(ps[:10])
    assert tb.scores([]) == []


def test_errors(abapa12, tmp_path):
    tb = oware.Tablebase(abapa12)
    with pytest.raises(oware.MissingTierError, match="missing tier 13") as e:
        tb.score([2, 2, 2, 2, 2, 3, 0, 0, 0, 0, 0, 0])
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(ValueError, match="rules mismatch"):
        oware.Tablebase(abapa12, rules="awari")
    with pytest.raises(FileNotFoundError):
        oware.Tablebase(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="48"):
        tb.outcome("1 0 0 0 0 0 0 0 0 0 0 0", 40, 10)
    # A damaged table: TableError naming the file; the other tiers still answer.
    damaged = tmp_path / "damaged"
    shutil.copytree(abapa12, damaged)
    path = damaged / "tier-12.owt"
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 4, 3 * len(data) // 4):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    tb = oware.Tablebase(damaged)
    rng = random.Random(3)
    failed = 0
    for _ in range(200):
        try:
            tb.score(random_position(rng, 12))
        except oware.TableError as e:
            failed += 1
            assert "tier-12.owt" in str(e)
    assert failed > 0
    assert tb.score("1 1 1 1 1 1 0 0 0 0 0 0") == oware.Tablebase(abapa12).score(
        "1 1 1 1 1 1 0 0 0 0 0 0"
    )


def test_batch_scores_run_without_the_gil(abapa12):
    """Another Python thread runs while `scores` works: the GIL is released."""
    import sys
    import threading

    tb = oware.Tablebase(abapa12)
    rng = random.Random(8)
    ps = [random_position(rng, 12) for _ in range(300000)]
    ticks = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    t = threading.Thread(target=count)
    t.start()
    try:
        # Under the GIL for the argument list only; the counter may run before and after.
        before = ticks[0]
        tb.scores(ps)
        during = ticks[0] - before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert during > 1000, during


def test_rules_come_from_the_directory(abapa12, awari12, tmp_path):
    assert oware.Tablebase(awari12).rules == oware.Rules("awari")
    assert oware.Tablebase(abapa12).rules == oware.Rules("abapa")
    assert oware.Tablebase(awari12, rules="awari").rules == oware.Rules("awari")
    # A directory without tables: the rules given, or abapa.
    assert oware.Tablebase(tmp_path).rules == oware.Rules("abapa")
    assert oware.Tablebase(tmp_path, rules="awari").rules == oware.Rules("awari")
    # Without a manifest, the tables' headers say.
    bare = tmp_path / "bare"
    shutil.copytree(awari12, bare)
    (bare / "manifest.json").unlink()
    assert oware.Tablebase(bare).rules == oware.Rules("awari")
    with pytest.raises(ValueError, match="rules mismatch"):
        oware.Tablebase(bare, rules="abapa")
    with pytest.raises(ValueError, match="under rules"):
        oware.Tablebase(abapa12, awari12)


def test_a_context_manager_closes_the_tables(abapa12):
    with oware.Tablebase(abapa12) as tb:
        assert not tb.closed
        assert tb.score("1 1 1 1 1 1 0 0 0 0 0 0") == oware.Tablebase(abapa12).score(
            "1 1 1 1 1 1 0 0 0 0 0 0"
        )
    assert tb.closed
    with pytest.raises(ValueError, match="closed"):
        tb.score("1 1 1 1 1 1 0 0 0 0 0 0")
    with pytest.raises(ValueError, match="closed"):
        tb.scores(["1 1 1 1 1 1 0 0 0 0 0 0"])
    tb.close()  # twice is fine
    # An exception in the block goes on, the tables closed.
    with pytest.raises(KeyError):
        with oware.Tablebase(abapa12) as tb2:
            raise KeyError("x")
    assert tb2.closed


def test_several_directories_probe_as_one(awari12, tmp_path):
    even, odd = tmp_path / "even", tmp_path / "odd"
    even.mkdir()
    odd.mkdir()
    shutil.copy(awari12 / "manifest.json", even / "manifest.json")
    for n in range(13):
        for name in [f"tier-{n:02}.owt", f"tier-{n:02}.owd"]:
            shutil.copy(awari12 / name, (even if n % 2 == 0 else odd) / name)
    whole = oware.Tablebase(awari12)
    for tb in [oware.Tablebase(even, odd), oware.Tablebase([even, str(odd)])]:
        assert tb.rules == oware.Rules("awari")
        assert tb.dirs == [even, odd] and tb.dir == even
        assert "odd" in repr(tb)
        rng = random.Random(11)
        ps = [random_position(rng, rng.randrange(13)) for _ in range(300)]
        for p in ps[:100]:
            assert tb.moves(p) == whole.moves(p)
            assert tb.best_line(p, 6) == whole.best_line(p, 6)
        assert tb.scores(ps) == whole.scores(ps)
    # Alone, each misses the other's tiers.
    with pytest.raises(oware.MissingTierError, match="tier 11"):
        oware.Tablebase(even).score("1 1 1 1 1 1 1 1 1 1 1 0")
    with pytest.raises(TypeError, match="at least one directory"):
        oware.Tablebase()
    with pytest.raises(TypeError, match="directories"):
        oware.Tablebase(3)


def test_get_score_and_get_moves_answer_none_for_a_missing_tier(abapa12):
    tb = oware.Tablebase(abapa12)
    p = "1 1 1 1 1 2 4 0 0 0 0 0"
    assert tb.get_score(p) == tb.score(p)
    assert tb.get_moves(p) == tb.moves(p)
    missing = [2, 2, 2, 2, 2, 3, 0, 0, 0, 0, 0, 0]
    assert tb.get_score(missing) is None
    assert tb.get_moves(missing) is None
    assert tb.get_score(missing, default=-99) == -99
    assert tb.get_moves(missing, []) == []
    # Other errors are still raised.
    with pytest.raises(ValueError, match="bad position"):
        tb.get_score("1 2 x")


def test_a_batch_error_names_the_position(abapa12):
    tb = oware.Tablebase(abapa12)
    good = "1 1 1 1 1 2 4 0 0 0 0 0"
    with pytest.raises(ValueError, match=r"position 2 \(1 2 x\): bad position") as e:
        tb.scores([good, good, "1 2 x", "also bad"])
    assert e.value.index == 2 and e.value.position == "1 2 x"
    missing = "2 2 2 2 2 3 0 0 0 0 0 0"
    with pytest.raises(oware.MissingTierError, match=rf"position 1 \({missing}\): missing tier 13") as e:
        tb.scores([good, missing, good, missing])
    assert e.value.index == 1 and e.value.position == missing
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(ValueError, match=r"position 0 \(\[1, 2\]\)"):
        tb.scores([[1, 2]])


def test_version_is_the_crate_version():
    import pathlib
    import re

    cargo = (pathlib.Path(__file__).resolve().parents[2] / "Cargo.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    assert oware.__version__ == version


def test_distances_and_a_best_line_that_converts(abapa12):
    tb = oware.Tablebase(abapa12)
    p = "0 5 0 0 1 2 1 0 0 0 2 1"
    assert tb.score(p) == 6
    assert tb.distance(p) == 1
    moves = tb.moves(p)
    assert [m["distance"] for m in moves] == [1, 14, 30]
    line = tb.best_line(p, 200)
    total, sign = 0, 1
    for m in line:
        total += sign * m["captures"]
        sign = -sign
        if m["position"] is None or tb.score(m["position"]) == 0:
            break
    assert total == 6, line
    assert tb.distance("0 0 0 0 0 0 0 0 0 0 0 0") is None


def test_a_directory_of_romein_bal_files_probes_as_the_tables(awari12, tmp_path):
    vu = tmp_path / "vu"
    run("export", "--format", "romein", "--dir", str(awari12), "--out", str(vu))
    ours, theirs = oware.Tablebase(awari12), oware.Tablebase(vu)
    assert theirs.rules == oware.Rules("awari")
    rng = random.Random(34)
    for _ in range(2000):
        p = random_position(rng, rng.randrange(1, 13))
        assert theirs.score(p) == ours.score(p)
        # The files hold no distances: the same values, in house order among equals.
        values = lambda tb: sorted((m["house"], m["score"], m["position"]) for m in tb.moves(p))
        assert values(theirs) == values(ours)
        assert all(m["distance"] in (None, 1) for m in theirs.moves(p))
    bad = tmp_path / "bad"
    shutil.copytree(vu, bad)
    (bad / "scores.12").write_bytes(b"\x00" * 10)
    with pytest.raises(oware.TableError, match="a Romein-Bal file of tier 12"):
        oware.Tablebase(bad).score(oware.Position([1] * 12))
    # Beside our tables, format="romein" reads the files (here a bad one), the default ours.
    both = tmp_path / "both"
    shutil.copytree(awari12, both)
    for f in vu.glob("scores.*"):
        shutil.copy(f, both / f.name)
    p = oware.Position([1] * 12)
    assert oware.Tablebase(both, format="romein").score(p) == ours.score(p)
    (both / "scores.12").write_bytes(b"\x00" * 10)
    assert oware.Tablebase(both).score(p) == ours.score(p)
    with pytest.raises(oware.TableError, match="a Romein-Bal file of tier 12"):
        oware.Tablebase(both, format="romein").score(p)
    with pytest.raises(ValueError, match="whose rules are `awari`, not `abapa`"):
        oware.Tablebase(vu, rules="abapa", format="romein")
    with pytest.raises(ValueError, match="opens one directory, not 2"):
        oware.Tablebase(vu, both, format="romein")
    with pytest.raises(ValueError, match='format must be "romein"'):
        oware.Tablebase(vu, format="owt")


def test_best_line_is_capped_as_the_command_line(abapa12):
    tb = oware.Tablebase(abapa12)
    start = "1 1 1 1 1 1 1 1 1 1 1 1"
    for plies in (10**8, 1001):
        with pytest.raises(ValueError, match=r"plies \d+ is over 1000, the longest line"):
            tb.best_line(start, plies)
    line = tb.best_line(start, 1000)
    assert 0 < len(line) <= 1000
    # Computed in runs, the line is still the first move of `moves` at each ply.
    cur = start
    for m in line:
        assert m == tb.moves(cur)[0]
        cur = m["position"]
    assert tb.best_line(start, 0) == []


def test_errors_quote_at_most_100_characters_of_the_input(abapa12):
    tb = oware.Tablebase(abapa12)
    with pytest.raises(ValueError) as e:
        tb.score("1 " * 10**7)
    assert str(e.value) == (
        f"bad position: expected 12 house counts, found 10000000 in `{'1 ' * 50}…`"
    )
    with pytest.raises(ValueError) as e:
        oware.Position("1 1 1 1 1 1 1 1 1 1 1 " + "7" * 10**6)
    assert str(e.value) == (
        f"bad position: field 12 (house 11) is `{'7' * 100}…`, not a count in 0..=48"
    )
    with pytest.raises(ValueError) as e:
        oware.Rules("y" * 10**6)
    assert str(e.value) == f"bad rules: unknown preset `{'y' * 100}…`; valid: abapa, awari"
    good = "1 1 1 1 1 2 4 0 0 0 0 0"
    with pytest.raises(ValueError) as e:
        tb.scores([good, "x" * 10**6])
    assert e.value.index == 1 and e.value.position == "x" * 100 + "…"
    assert str(e.value).startswith(f"position 1 ({'x' * 100}…): bad position")
    assert len(str(e.value)) < 400
    with pytest.raises(ValueError) as e:
        tb.scores([[1] * 10**6])
    assert str(e.value).startswith("position 0 ([1, 1, 1, ")
    assert len(str(e.value)) < 400


def test_a_position_named_by_the_moves_of_a_game(abapa12):
    # As `oware probe --start K --moves H,H,...`: the houses played in turn from the start.
    tb = oware.Tablebase(abapa12)
    want = json.loads(run("probe", "--dir", str(abapa12), "--json",
                          "--start", "1", "--moves", "5,2,3"))
    for moves in ([5, 2, 3], (5, 2, 3), "5,2,3", " 5, 2 ,3 "):
        p = oware.Position.from_game(1, moves, tb.rules)
        assert str(p) == want["position"]
        assert tb.score(p) == want["score"] and tb.moves(p) == want["moves"]
    assert oware.Position.from_game(1, [5]) == oware.Position("0 1 1 1 1 1 1 1 1 1 1 0")
    assert oware.Position.from_game(4) == oware.Position([4] * 12)
    assert oware.Position.from_game(2, [], "awari") == oware.Position([2] * 12)
    # The first move at fault, named by its place in the list, as the command line names it.
    for start, moves, message in [
        (1, [0, 0, 0], "moves: move 3 (house 0) is illegal in 0 2 1 1 1 1 0 2 1 1 1 1: "
                       "house 0 is empty"),
        (1, "0,0,0", "moves: move 3 (house 0) is illegal in 0 2 1 1 1 1 0 2 1 1 1 1: "
                     "house 0 is empty"),
        (1, [0, 0, 0, -1], "moves: move 3 (house 0) is illegal"),
        (1, [5, 9], "moves: move 2: `9` is not a house 0..=5"),
        (1, [5, -1], "moves: move 2: `-1` is not a house 0..=5"),
        (1, [5, 2**40], f"moves: move 2: `{2**40}` is not a house 0..=5"),
        (1, "5,,3", "moves: move 2: `` is not a house 0..=5"),
        (5, [0], "start: `5` is not a count of seeds per house in 1..=4"),
        (-1, [], "start: `-1` is not a count of seeds per house in 1..=4"),
        (0, [], "start: `0` is not a count of seeds per house in 1..=4"),
    ]:
        with pytest.raises(ValueError) as e:
            oware.Position.from_game(start, moves)
        assert str(e.value).startswith(message), (start, moves, str(e.value))
    with pytest.raises(ValueError) as e:
        oware.Position.from_game(1, "7" * 10**6)
    assert str(e.value) == f"moves: move 1: `{'7' * 100}…` is not a house 0..=5"
    with pytest.raises(ValueError, match="bad rules"):
        oware.Position.from_game(1, [5], "chess")


def test_a_batch_too_large_for_memory_is_a_memory_error(abapa12):
    tb = oware.Tablebase(abapa12)

    class Huge:
        """Says it holds more positions than memory can."""

        def __len__(self):
            return 2**62

        def __iter__(self):
            return iter(["1 1 1 1 1 2 4 0 0 0 0 0"])

    with pytest.raises(MemoryError):
        tb.scores(Huge())
    # Any iterable of positions is a batch; a str is not.
    assert tb.scores(iter(["1 1 1 1 1 2 4 0 0 0 0 0"])) == tb.scores(["1 1 1 1 1 2 4 0 0 0 0 0"])
    with pytest.raises(TypeError):
        tb.scores("1 1 1 1 1 2 4 0 0 0 0 0")


def test_ctrl_c_interrupts_a_long_batch(abapa12):
    import _thread
    import signal
    import threading
    import time

    tb = oware.Tablebase(abapa12)
    batch = ["1 1 1 1 1 2 4 0 0 0 0 0", "0 0 0 0 1 2 0 0 1 1 0 0"] * 1_500_000
    # The first call maps the tables and faults their pages in: the time of a batch is that
    # of the second.
    assert len(tb.scores(batch)) == len(batch)
    t0 = time.monotonic()
    assert len(tb.scores(batch)) == len(batch)
    whole = time.monotonic() - t0
    timer = threading.Timer(whole / 10, _thread.interrupt_main)
    # A process started in the background by a non-interactive shell (a CI runner's, say)
    # inherits SIGINT ignored, and then interrupt_main does nothing: Python's own handler is
    # put back for the test.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        t0 = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            # Without a check of signals in the call, Ctrl-C lands only once it returns.
            tb.scores(batch)
        took = time.monotonic() - t0
        timer.join()
    finally:
        signal.signal(signal.SIGINT, before)
    assert took < whole / 2, (took, whole)
