"""Tests of the Python package against a second implementation: the kalah binary (query,
solve), the library's own search against its databases, and OpenSpiel's mancala."""

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kalah

ROOT = Path(__file__).resolve().parents[2]


def kalah_bin():
    """The kalah binary: $KALAH_BIN, else the release build of this checkout."""
    path = os.environ.get("KALAH_BIN") or str(ROOT / "target" / "release" / "kalah")
    if not Path(path).exists():
        pytest.fail(f"no kalah binary at {path}: run `cargo build --release` (or set KALAH_BIN)")
    return path


def random_position(rng, houses, lo, hi, rules="standard"):
    """A random position with lo..hi seeds on the board, South or North to move."""
    while True:
        seeds = rng.randint(lo, hi)
        pits = [0] * (2 * houses)
        for _ in range(seeds):
            pits[rng.randrange(2 * houses)] += 1
        south, north = pits[:houses], pits[houses:]
        if sum(south) and sum(north):
            to_move = rng.choice(["south", "north"])
            return kalah.Position.from_list(
                south + [rng.randint(0, 5)] + north + [rng.randint(0, 5)], to_move, rules
            )


@pytest.fixture(scope="session")
def db4(tmp_path_factory):
    """The 4-house standard levels 0..10, built by build_db with a progress callback."""
    d = tmp_path_factory.mktemp("db4")
    seen = []
    out = kalah.build_db(4, 10, dir=str(d), progress=lambda *a: seen.append(a), threads=2)
    assert Path(out) == d
    assert any(finished and level == 10 for level, _, _, finished in seen)
    return d


@pytest.fixture(scope="session")
def db6(tmp_path_factory):
    """The 6-house standard levels 0..12."""
    d = tmp_path_factory.mktemp("db6")
    kalah.build_db(6, 12, dir=str(d), threads=2)
    return d


def test_positions_are_values_made_from_literals_lists_and_starts():
    p = kalah.Position.start(6, 4)
    assert p.literal == "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>"
    assert p.to_move == "south" and p.moves() == [1, 2, 3, 4, 5, 6]
    assert kalah.Position(p.literal) == p and hash(kalah.Position(p.literal)) == hash(p)
    assert kalah.Position.from_list(p.to_list()) == p
    q = p.play(3)  # 4 seeds from house 3 end in the store: an extra turn
    assert q.to_move == "south" and q.to_list()[6] == 1
    r = q.play(1)
    assert r.to_move == "north" and r.literal.endswith(" north")
    assert kalah.Position(r.literal) == r
    assert len({p, kalah.Position.start(6, 4), q}) == 2
    assert p.rules_name == "standard" and p.houses == 6 and p.seeds_on_board == 48
    over = kalah.Position("<2,5,3,0,0,1,1>")
    assert over.is_over() and over.to_move is None and over.moves() == []
    assert over.outcome() == (5 - 3) - 2


@pytest.mark.parametrize(
    "bad",
    ["", "<6,0,0,4,4>", "<0,0,0>", "<2,0,0,1,1,1,x>", "<2,0,0,1,1,1,1> east", "<" + "9," * 3000 + ">"],
)
def test_bad_literals_are_value_errors(bad):
    with pytest.raises(ValueError):
        kalah.Position(bad)


def test_bad_arguments_are_value_errors():
    p = kalah.Position.start(4, 3)
    with pytest.raises(ValueError):
        p.play(5)
    with pytest.raises(ValueError):
        p.play(0)
    with pytest.raises(ValueError):
        kalah.Position.start(4, 3, rules="awari")
    with pytest.raises(ValueError):
        kalah.Position.from_list([1, 2, 3])
    with pytest.raises(ValueError):
        kalah.Position.from_list([1, -1, 0, 1, 1, 0])
    with pytest.raises(ValueError):
        kalah.solve(p, db=False, time_limit=-1)
    with pytest.raises(ValueError):
        kalah.solve(p, db=False, threads=0)


def test_solve_agrees_with_the_binary():
    for houses, seeds, rules in [(4, 3, "standard"), (4, 3, "empty-capture"), (5, 3, "standard"), (3, 4, "standard")]:
        out = subprocess.run(
            [kalah_bin(), "solve", "-m", str(houses), "-n", str(seeds), "--rules", rules,
             "--no-db", "--all-moves", "--json"],
            capture_output=True, text=True, check=True,
        )
        want = json.loads(out.stdout)
        got = kalah.solve(kalah.Position.start(houses, seeds, rules), db=False, threads=2)
        assert got.value == want["value"], (houses, seeds, rules)
        assert got.moves == {m["house"]: m["value"] for m in want["moves"]}
        assert got.best == want["best"]
        assert got.source == "search"
        # The same board, asked under these rules from the other rule set's position.
        other = "empty-capture" if rules == "standard" else "standard"
        same = kalah.solve(kalah.Position.start(houses, seeds, other), rules=rules, db=False)
        assert same.value == want["value"]


def test_a_time_limit_raises_never_guesses():
    # Empty-capture Kalah(6,6): the shipped ledger only bounds it. Without the books, standard
    # Kalah(6,6) is days of search too.
    with pytest.raises(TimeoutError):
        kalah.solve(kalah.Position.start(6, 6, "empty-capture"), db=False, time_limit=0.2, threads=1)
    with pytest.raises(TimeoutError):
        kalah.solve(kalah.Position.start(6, 6), db=False, time_limit=0.2, threads=1, book=False)
    # Without a time limit, a search the cost model puts at days is not started (long=True
    # starts it): said at once, never a guess.
    with pytest.raises(TimeoutError, match="cost model"):
        kalah.solve(kalah.Position.start(6, 6), db=False, book=False)


def test_the_tablebase_agrees_with_the_search(db4):
    tb = kalah.Tablebase(str(db4))
    assert tb.max_level(4) == 10
    rng = random.Random(31)
    for _ in range(200):
        p = random_position(rng, 4, 1, 10)
        searched = kalah.solve(p, db=False, threads=1)
        assert tb.value(p) == searched.value, p
        a = tb.analyze(p)
        assert a.value == searched.value and a.moves == searched.moves and a.source == "database"
    above = random_position(rng, 4, 11, 14)
    assert tb.value(above) is None and tb.analyze(above) is None
    # Through solve(): the levels answer what they hold, and the search probes them above.
    assert kalah.solve(above, db=str(db4)).value == kalah.solve(above, db=False).value
    with pytest.raises(kalah.DatabaseError):
        tb.value(kalah.Position.start(5, 1))


def test_the_batch_gives_the_values_of_value(db4):
    tb = kalah.Tablebase(str(db4))
    rng = random.Random(32)
    rows, want = [], []
    for _ in range(3000):
        p = random_position(rng, 4, 0, 10)
        pits = p.to_list()
        mover = pits if p.to_move != "north" else pits[5:] + pits[:5]
        rows.append(mover)
        want.append(tb.value(p) if not p.is_over() else None)
    got = tb.values(np.array(rows, dtype=np.uint8))
    assert got.dtype == np.int32 and got.shape == (3000,)
    for g, w, row in zip(got, want, rows):
        if w is not None:
            assert g == w, row
    assert (tb.values(np.array(rows, dtype=np.uint64)) == got).all()
    with pytest.raises(ValueError, match="row 1"):
        tb.values(np.array([rows[0], [3] * 10], dtype=np.uint32))
    with pytest.raises(ValueError):
        tb.values(np.zeros((2, 7), dtype=np.uint32))


def test_the_batch_is_exact_or_refused(db4):
    tb = kalah.Tablebase(str(db4))
    # A store beyond int16: the value is exact, as value() gives it.
    row = [1, 1, 1, 1, 40000, 1, 1, 1, 1, 0]
    want = tb.value(kalah.Position.from_list(row))
    assert want == 40002
    for dtype in (np.uint16, np.uint32, np.int64):
        assert tb.values(np.array([row], dtype=dtype))[0] == want
    store = [1, 1, 1, 1, 0, 1, 1, 1, 1, 32766]
    assert tb.values(np.array([store]))[0] == tb.value(kalah.Position.from_list(store))
    # Counts that do not fit, negatives and non-integers: refused, the row and column named,
    # as Position.from_list refuses them.
    bad = [
        (np.array([[1] * 10, [1, 1, 1, 1, 0, 2**40, 1, 1, 1, 0]], dtype=np.int64), "row 1, column 5"),
        (np.array([[2**32 + 1] + [1] * 9], dtype=np.int64), "row 0, column 0"),
        (np.array([[1] * 9 + [70000]], dtype=np.uint32), "row 0, column 9"),
        (np.array([[1, 1, -1, 1, 0, 1, 1, 1, 1, 0]], dtype=np.int64), "negative"),
        (np.array([[1.9] + [1.0] * 9]), "row 0, column 0"),
        (np.array([[1.0] * 10]), "integers"),
        (np.array([[True] * 10]), "integers"),
        (np.array([[30000] * 4 + [0] + [30000] * 4 + [0]], dtype=np.int64), "row 0: 240000 seeds"),
    ]
    for array, message in bad:
        with pytest.raises(ValueError, match=message):
            tb.values(array)
        if array.dtype.kind in "iu" and "seeds" not in message:
            with pytest.raises((ValueError, OverflowError)):
                kalah.Position.from_list([int(x) for x in array[-1]])
    with pytest.raises(ValueError, match="2-dimensional"):
        tb.values(np.array([1] * 10))


def test_a_literal_and_to_move_that_disagree_are_refused():
    literal = "<4,0,0,1,0,2,0,0,3,1,0>"
    with pytest.raises(ValueError, match="north"):
        kalah.Position(literal + " north", to_move="south")
    assert kalah.Position(literal + " north", to_move="north").to_move == "north"
    assert kalah.Position(literal, to_move="north").to_move == "north"
    assert kalah.Position(literal + " south", to_move="south").to_move == "south"


def test_a_damaged_level_is_an_error_never_a_value(db4, tmp_path):
    d = tmp_path / "damaged"
    shutil.copytree(db4, d)
    level = d / "kalah-4-standard-009.kdb"
    data = bytearray(level.read_bytes())
    for i in range(64, len(data) - 64, 97):
        data[i] ^= 0x55
    level.write_bytes(bytes(data))
    tb = kalah.Tablebase(str(d))
    rng = random.Random(33)
    errors = 0
    for _ in range(50):
        p = random_position(rng, 4, 9, 9)
        try:
            assert tb.value(p) == kalah.solve(p, db=False).value
        except kalah.DatabaseError as e:
            errors += 1
            assert "kalah-4-standard-009.kdb" in str(e)
    assert errors > 0


def openspiel_house(action):
    """OpenSpiel mancala's action (player 0: pits 1..6, player 1: pits 8..13) as a house."""
    return action if action <= 6 else action - 7


def test_openspiel_mancala_plays_as_kalah_6_4():
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("mancala")
    rng = random.Random(34)
    for _ in range(10_000):
        state = game.new_initial_state()
        ours = kalah.Position.start(6, 4)
        while not state.is_terminal():
            assert kalah.Position.from_openspiel(state) == ours
            side = "south" if state.current_player() == 0 else "north"
            assert ours.to_move == side
            assert sorted(openspiel_house(a) for a in state.legal_actions()) == ours.moves()
            action = rng.choice(state.legal_actions())
            state.apply_action(action)
            ours = ours.play(openspiel_house(action))
        # OpenSpiel leaves the last seeds in their houses (kalah sweeps them into the store):
        # the same result either way.
        theirs = kalah.Position.from_openspiel(state)
        assert ours.is_over() and theirs.is_over()
        assert theirs.outcome() == ours.outcome()
        margin = ours.outcome()
        assert state.returns() == [float(np.sign(margin)), float(-np.sign(margin))]


def test_openspiel_states_get_the_values_of_kalah_query(db6, tmp_path):
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("mancala")
    rng = random.Random(35)
    positions = []
    while len(positions) < 1000:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            p = kalah.Position.from_openspiel(state)
            if not p.is_over() and p.seeds_on_board <= 18 and rng.random() < 0.2:
                positions.append(p)
                break
    lines = "\n".join(p.literal for p in positions) + "\n"
    out = subprocess.run(
        [kalah_bin(), "query", "-", "--json", "--db", str(db6), "--no-book", "--threads", "2"],
        input=lines, capture_output=True, text=True, check=True,
    )
    want = [json.loads(line)["value"] for line in out.stdout.splitlines()]
    assert len(want) == 1000
    tb = kalah.Tablebase(str(db6))
    for p, w in zip(positions, want):
        v = tb.value(p)
        if v is None:
            v = kalah.solve(p, db=str(db6), threads=2).value
        assert v == w, p


def test_ctrl_c_interrupts_a_long_solve():
    code = (
        "import kalah, time\n"
        "print('ready', flush=True)\n"
        "t = time.monotonic()\n"
        "try:\n"
        "    kalah.solve(kalah.Position.start(6, 6), db=False, threads=1, book=False, long=True)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', round(time.monotonic() - t, 1), flush=True)\n"
    )
    import signal
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert out.startswith("interrupted"), out
    assert time.monotonic() - sent < 5


def test_the_pettingzoo_environment_passes_its_api_test_and_carries_perfect_play(db4):
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test

    from kalah.pettingzoo import env

    api_test(env(houses=4, seeds=3, db=str(db4), budget=0.5), num_cycles=200)
    e = env(houses=4, seeds=3, db=str(db4), budget=5)
    rng = random.Random(36)
    for game in range(20):
        e.reset(seed=game)
        position = kalah.Position.start(4, 3)
        finals = {}
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            if term or trunc:
                finals[agent] = reward
                e.step(None)
                continue
            exact = kalah.solve(position, db=False)
            assert info["value"] == exact.value
            assert info["move_values"] == {h - 1: v for h, v in exact.moves.items()}
            legal = [i for i, ok in enumerate(obs["action_mask"]) if ok]
            assert [h - 1 for h in position.moves()] == legal
            action = rng.choice(legal)
            e.step(action)
            position = position.play(action + 1)
        margin = position.outcome()
        assert finals == {"player_0": np.sign(margin), "player_1": -np.sign(margin)}


def test_a_start_out_of_range_is_one_error():
    for houses, seeds, words in [(0, 4, "0 houses"), (13, 4, "13 houses"), (4, 0, "seed"), (6, 100000, "seeds")]:
        with pytest.raises(ValueError, match=words) as e:
            kalah.Position.start(houses, seeds)
        assert ";" not in str(e.value), str(e.value)


def test_solve_answers_the_shipped_books_at_once():
    # Answered from the book, not searched: the source says so (no search, no timing).
    s = kalah.solve(kalah.Position.start(6, 4), db=False)
    assert s.source == "ledger" and s.value == 8 and s.best == [3], s
    assert kalah.solve(kalah.Position.start(3, 2), db=False, book=False).source == "search"


def test_the_tablebase_answers_from_the_books_above_its_levels(db6, tmp_path):
    # The Kalah(6,4) start is far above the levels 0..12: the shipped book answers it, as
    # solve does; book=False does not.
    tb = kalah.Tablebase(str(db6))
    start = kalah.Position.start(6, 4)
    s = tb.analyze(start)
    assert s.source == "ledger" and s.value == 8 and s.best == [3], s
    assert s.moves == kalah.solve(start, db=False).moves
    assert tb.analyze(start, book=False) is None
    # A directory with no 6-house levels: the book still answers; without it, the error.
    empty = kalah.Tablebase(str(tmp_path))
    assert empty.analyze(start).value == 8
    with pytest.raises(kalah.DatabaseError, match="no levels"):
        empty.analyze(start, book=False)
    # The PettingZoo info carries the book's values with no search budget at all.
    pytest.importorskip("pettingzoo")
    from kalah.pettingzoo import env

    e = env(houses=6, seeds=4, db=str(db6), budget=0)
    e.reset(seed=1)
    info = e.last()[4]
    assert info["value"] == 8 and info["move_values"] == {h - 1: v for h, v in s.moves.items()}


def query_json(position, rules="standard"):
    """`kalah query POSITION --json`, a fresh database home (none), as the binary answers it."""
    out = subprocess.run(
        [kalah_bin(), "query", position, "--rules", rules, "--json", "--no-db"],
        capture_output=True, text=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("literal", ["<6,0,0,6,6,6,6,6,6,6,6,6,6,6,6>", "<6,1,0,0,7,7,7,7,7,6,6,6,6,6,6>"])
def test_solve_returns_what_query_returns_ledgers_included(literal, tmp_path):
    # Kalah(6,6) from the shipped ledger alone: +4, proven and certified, the moves it only
    # bounds given as bounds; the same as `kalah query`, whatever the time limit.
    want = query_json(literal)
    position = kalah.Position(literal)
    for got in [kalah.solve(position, db=False, threads=1),
                kalah.solve(position, db=False, threads=1, time_limit=0.5)]:
        assert got.source == want["source"] == "ledger"
        assert (got.value, got.lower, got.upper) == (want["value"], want["lower"], want["upper"]) == (4, 4, 4)
        assert got.certified is want["certified"] is True
        assert got.best == want["best"] and got.maybe_best == want["maybe_best"]
        for m in want["moves"]:
            assert got.moves[m["house"]] == m["value"], m
            assert got.bounds[m["house"]] == (m["lower"], m["upper"]), m
            assert got.move_certified[m["house"]] == m["certified"], m
        assert got.pv == want["pv"] and got.pv_complete == want["pv_complete"]
        assert got.not_searched
    # The tablebase of a directory with no 6-house levels reaches the ledger too.
    s = kalah.Tablebase(str(tmp_path)).analyze(position)
    assert (s.value, s.certified, s.source) == (4, True, "ledger")
    # Empty-capture: the ledger only bounds its start; analyze says so, with no value.
    start = kalah.Position.start(6, 6, "empty-capture")
    s = kalah.Tablebase(str(tmp_path)).analyze(start)
    assert s.value is None and s.lower < s.upper
