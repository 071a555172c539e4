"""Admission to the driver-side part (paimon_sql/server/admission.py): at most N statements at once,
first come first served, a place given back at the end or after the hold, a cancelled waiter gone."""

import threading
import time

import pytest

from paimon_sql.server.admission import Admission, needs_place


def _never() -> bool:
    return False


def _hold(gate: Admission, release: threading.Event) -> threading.Thread:
    """A statement holding a place until ``release``."""
    def statement():
        with gate.place(_never):
            release.wait(5)
    thread = threading.Thread(target=statement)
    thread.start()
    _wait_for(lambda: gate.status().startswith("1 planning"))
    return thread


def _admitted_order(gate: Admission, texts: list) -> list:
    """The order ``texts``, queued in turn behind a statement holding the only place, got theirs."""
    order, release = [], threading.Event()

    def statement(text):
        with gate.place(_never):
            order.append(text)
    threads = [_hold(gate, release)]
    for i, text in enumerate(texts):
        threads.append(threading.Thread(target=statement, args=(text,)))
        threads[-1].start()
        _wait_for(lambda: gate.status().endswith(f"{i + 1} waiting"))
    release.set()
    for t in threads:
        t.join(10)
    return order


def _wait_for(predicate, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_at_most_the_places_run_at_once():
    gate, inside, most, lock = Admission(2), [0], [0], threading.Lock()

    def statement():
        with gate.place(_never) as admitted:
            assert admitted
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.02)
            with lock:
                inside[0] -= 1
    threads = [threading.Thread(target=statement) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert most[0] == 2
    assert gate.status() == "0 planning (limit 2), 0 waiting"


def test_waiters_are_admitted_in_arrival_order():
    assert _admitted_order(Admission(1), list("abcde")) == list("abcde")


def test_a_place_held_past_the_hold_is_given_back():
    gate, release = Admission(1, hold=0.2), threading.Event()
    holder = _hold(gate, release)
    started = time.monotonic()
    with gate.place(_never) as admitted:  # the holder still runs: its place was given back anyway
        waited = time.monotonic() - started
        assert admitted and not release.is_set()
    assert 0.1 <= waited < 1.0
    release.set()
    holder.join(5)


def test_a_statement_stopped_while_waiting_leaves_without_a_place():
    gate, release, stopped = Admission(1), threading.Event(), threading.Event()
    holder = _hold(gate, release)
    result = []

    def waiting():
        with gate.place(stopped.is_set) as admitted:
            result.append(admitted)
    waiter = threading.Thread(target=waiting)
    waiter.start()
    _wait_for(lambda: gate.status().endswith("1 waiting"))
    stopped.set()  # a cancel or the timeout
    waiter.join(2)
    assert result == [False]
    assert gate.status() == "1 planning (limit 1), 0 waiting"
    release.set()
    holder.join(5)


def test_no_limit_admits_everyone_unless_stopped():
    gate = Admission(0)
    with gate.place(_never) as a, gate.place(_never) as b, gate.place(_never) as c:
        assert a and b and c
    with gate.place(lambda: True) as admitted:
        assert not admitted
    assert gate.status() == "0 planning (limit none), 0 waiting"



@pytest.mark.parametrize("text,waits", [("USE load", False), ("use `my db`.x", True), ("USE default;", False),
                                        ("SET spark.sql.shuffle.partitions = 4", False), ("SET", False),
                                        ("reset spark.sql.ansi.enabled", False), ("SELECT 1", True),
                                        ("SET VAR v = (SELECT max(id) FROM t)", True), ("INSERT INTO t VALUES (1)", True)])
def test_statements_that_plan_nothing_need_no_place(text, waits):
    assert needs_place(text) is waits
