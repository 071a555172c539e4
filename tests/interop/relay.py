"""Tables written by one engine and read by the other: paimon-spark (Apache Paimon 2.0's Spark connector,
a child process of the differential suite, tests/differential/conftest.py) and paimon-sql (this process),
taking turns on one warehouse.

A relay is a list of steps (scripts in the differential suite's case format, tests/differential/corpus.py,
``-- theirs:`` included) and ``reads``, a script of queries. Its first writer runs step 0, then the
reads (its own answers); the other engine runs the reads on that warehouse (they must answer the same),
then step 1 and the reads again, and so on; after the last step the other engine reads once more. So a
relay of one step is "one writes, the other reads", of two "one writes, the other writes more, the first
reads again". Every relay runs twice, each engine writing first, each on a warehouse of its own.

All relays of a module advance together in rounds: round k is run k of every relay, paimon-spark's runs
as one batch in the child while this process does its own, so a module costs its number of rounds in
child round trips (a Spark start for the child's first).
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Union

import pytest
from differential import corpus
from differential.conftest import EngineProcess
from differential.engine import run
from spark.conftest import release

ENGINES = ("paimon-spark", "paimon-sql")


@dataclass
class Relay:
    """``steps``, run in turn by the two engines; ``reads``, the queries run after each step by both: one
    script, or one per step (the last one serving the steps after it), where what a step makes or
    removes (a tag, a column) changes what can be read."""
    steps: List[str]
    reads: Union[str, List[str]]

    def runs(self) -> int:
        return len(self.steps) + 1

    def reads_after(self, step: int) -> List[corpus.Statement]:
        scripts = [self.reads] if isinstance(self.reads, str) else self.reads
        return corpus.parse("reads", scripts[min(step, len(scripts) - 1)]).statements


@dataclass
class Leg:
    """One run of a relay: the reads of what the previous engine wrote, the step, the reads again."""
    engine: str
    statements: List[corpus.Statement]
    before: slice  # the reads of the previous step's table
    after: slice  # the reads of this step's table
    answers: List[dict] = field(default_factory=list)


def other(engine: str) -> str:
    return ENGINES[1 - ENGINES.index(engine)]


class Relays:
    """Every relay of a module, in both directions, run at the first ``check`` (see the module's docstring)."""

    def __init__(self, relays: Dict[str, Relay], base: Path, spark, paimon_spark: EngineProcess):
        self.relays, self.base, self.spark, self.child = relays, base, spark, paimon_spark
        self.legs: Dict[tuple, List[Leg]] = {}
        self.failed: Optional[str] = None

    def warehouse(self, name: str, first: str) -> str:
        return str(self.base / f"{name}-{first}-first")

    def _leg(self, relay: Relay, first: str, k: int) -> Leg:
        step = corpus.parse("step", relay.steps[k]).statements if k < len(relay.steps) else []
        before = relay.reads_after(k - 1) if k else []
        after = relay.reads_after(k) if step else []
        end = len(before) + len(step)
        return Leg(first if k % 2 == 0 else other(first), before + step + after,
                   slice(0, len(before)), slice(end, end + len(after)))

    def _run(self) -> None:
        todo = [(name, first) for name in self.relays for first in ENGINES]
        done = {key: [] for key in todo}
        for k in range(max(r.runs() for r in self.relays.values())):
            legs = {key: self._leg(self.relays[key[0]], key[1], k) for key in todo if k < self.relays[key[0]].runs()}
            theirs = [key for key, leg in legs.items() if leg.engine == "paimon-spark"]
            self.child.submit([{"warehouse": self.warehouse(*key), "statements": [s.theirs for s in legs[key].statements]}
                               for key in theirs])
            for key, leg in legs.items():
                if leg.engine == "paimon-sql":
                    leg.answers = self._ours(self.warehouse(*key), [s.text for s in leg.statements])
            for key, answers in zip(theirs, self.child.answers()):
                legs[key].answers = answers
            for key, leg in legs.items():
                done[key].append(leg)
        self.legs = done

    def _ours(self, warehouse: str, statements: List[str]) -> List[dict]:
        import paimon_sql
        session = paimon_sql.connect(warehouse, spark=self.spark)
        try:
            return run(session.sql, statements)
        finally:
            session.release()
            release(session)

    def answers(self, name: str, first: str) -> List[Leg]:
        """The runs of relay ``name`` with ``first`` writing first, each with its answers (all relays run at
        the first call; when that failed, every call fails)."""
        if self.failed is not None:
            raise AssertionError(f"the module's relays did not run: {self.failed}")
        if not self.legs:
            try:
                self._run()
            except BaseException as e:
                self.failed = f"{type(e).__name__}: {str(e)[:3000]}"
                raise
        return self.legs[name, first]

    def check(self, name: str, first: str) -> None:
        """Fails naming every statement that failed, and every read the reader answered otherwise than the
        writer (paimon-spark's answer being the reference when it reads)."""
        legs, problems = self.answers(name, first), []
        warehouse = self.warehouse(name, first)
        for k, leg in enumerate(legs):
            for i, (statement, answer) in enumerate(zip(leg.statements, leg.answers)):
                if "error" in answer:
                    problems.append(f"run {k} ({leg.engine}) [{i}] {statement.text}\n    fails: {answer['error']}")
            if k == 0:
                continue
            writer = legs[k - 1]
            reads = leg.statements[leg.before]
            for statement, mine, theirs in zip(reads, leg.answers[leg.before], writer.answers[writer.after]):
                a, b = (corpus.normalise(x, warehouse, statement.ordered) for x in (mine, theirs))
                diff = corpus.difference(statement, a, b)
                if diff and "error" not in mine and "error" not in theirs:
                    problems.append(f"{statement.text}\n    {leg.engine} reading what {writer.engine} wrote "
                                    f"(run {k}): {diff}\n    {leg.engine}: {_short(a)}\n    {writer.engine}: {_short(b)}")
        assert not problems, f"relay {name}, {first} writing first:\n" + "\n".join(problems)


def _short(answer: dict) -> str:
    import json
    return json.dumps(answer, default=str)[:900]


@pytest.fixture(scope="module")
def relays(request, tmp_path_factory, spark, paimon_spark_process):
    """The module's ``RELAYS`` (``{name: Relay}``), run at the first check; paimon-spark's child process is
    the run's (tests/conftest.py)."""
    return Relays(request.module.RELAYS, tmp_path_factory.mktemp("relays"), spark, paimon_spark_process)
