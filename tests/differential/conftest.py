"""The differential suite against paimon-spark (Apache Paimon 2.0's Spark connector).

Three engines answer each case (corpus.py), each on a warehouse of its own:
- paimon-sql in the test process, on the project's PySpark;
- paimon-spark in a child process, on PySpark 4.1.2 (``.venv-paimon-spark``, tests/oracles/paimon_spark.py);
- paimon-sql in a second child process on that PySpark 4.1.2, the oldest Spark pyproject promises.

A test module holds ``CASES = {name: script}`` and one test, ``differential.check(name)``
parametrized over them. The first check of a module sends all its cases to both children as one
batch (a statement there takes tens of milliseconds; a Spark start, seconds), so they run while the
test process works through its own. paimon-sql must answer as paimon-spark does, except where a
statement is marked ``-- differs:`` (docs/compatibility.md), and on both PySparks alike.
"""

import json
import os
from functools import partial
from typing import Dict, List

import pytest
from differential import corpus
from differential.engine import dataframe_operation, run
from oracles.paimon_spark import jar, python
from support import LineProcess

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine_driver.py")
NOISE = ("WARN", "Using Spark's default log4j", "setLogLevel", "NativeCodeLoader")


class EngineProcess:
    """engine_driver.py in .venv-paimon-spark, serving batches of cases for the whole test run."""

    def __init__(self, name: str, args: List[str]):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK") and k != "SPARK_HOME"}
        env["PYSPARK_PYTHON"] = python()  # its Python workers: the venv's, with pyarrow (paimon-sql's data source)
        self.name = name
        self.process = LineProcess([python(), DRIVER, *args], name, env=env, noise=NOISE)

    def submit(self, cases: List[dict]) -> None:
        self.process.write(json.dumps({"cases": cases}))

    def answers(self, timeout: float = 900) -> List[List[dict]]:
        out = json.loads(self.process.read_line(timeout))
        if "failed" in out:
            raise AssertionError(f"{self.name} failed:\n{out['failed'][-3000:]}")
        return out["answers"]

    def close(self) -> None:
        self.process.close()


@pytest.fixture(scope="session")
def paimon_spark():
    engine = EngineProcess("paimon-spark", ["paimon-spark", str(jar())])
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def paimon_sql_old_spark():
    engine = EngineProcess("paimon-sql on PySpark 4.1.2", ["paimon-sql"])
    yield engine
    engine.close()


class Differential:
    def __init__(self, cases: Dict[str, corpus.Case], base, spark, theirs: EngineProcess, old: EngineProcess):
        self.cases, self.base, self.spark = cases, base, spark
        self.engines = {"paimon-spark": theirs, "old": old}
        self.batches: Dict[str, Dict[str, list]] = {}

    def warehouse(self, engine: str, name: str) -> str:
        return str(self.base / engine / name)

    def _submit(self) -> None:
        for engine, process in self.engines.items():
            process.submit([{"warehouse": self.warehouse(engine, name),
                             "statements": case.theirs() if engine == "paimon-spark" else case.ours()}
                            for name, case in self.cases.items()])
        self.batches = {engine: {} for engine in self.engines}

    def _collect(self) -> None:
        for engine, process in self.engines.items():
            if not self.batches[engine]:
                self.batches[engine] = dict(zip(self.cases, process.answers()))

    def ours(self, name: str, also: bool = False) -> List[dict]:
        import paimon_sql
        warehouse = self.warehouse("ours-also" if also else "ours", name)
        session = paimon_sql.connect(warehouse, spark=self.spark.newSession())
        try:
            return run(session.sql, self.cases[name].ours(also),
                       partial(dataframe_operation, session.spark, session.sql, warehouse))
        finally:
            session.release()

    def check(self, name: str) -> None:
        """Fails naming every statement of case ``name`` where paimon-sql does not answer as
        paimon-spark (or as itself on PySpark 4.1.2)."""
        case = self.cases[name]
        if not self.batches:
            self._submit()  # the children start on the module's batch while this process runs its case
        ours = {"ours": self.ours(name)}
        if case.has_also:
            ours["ours-also"] = self.ours(name, also=True)
        self._collect()
        theirs = self.batches["paimon-spark"][name]
        problems = []
        for side, answers in [*ours.items(), ("old", self.batches["old"][name])]:
            against, their_side = (ours["ours"], "ours") if side == "old" else (theirs, "paimon-spark")
            for i, (statement, mine, other) in enumerate(zip(case.statements, answers, against)):
                a = corpus.normalise(mine, self.warehouse(side, name), statement.ordered)
                b = corpus.normalise(other, self.warehouse(their_side, name), statement.ordered)
                diff = corpus.difference(statement, a, b)
                if statement.differs and side != "old":
                    if diff is None:
                        problems.append(f"[{i}] {statement.text}\n    documented as differing "
                                        f"({statement.differs}), but answers alike: {_short(mine)}")
                    elif not corpus.documented(statement.differs):
                        problems.append(f"[{i}] {statement.text}\n    differs, but docs/compatibility.md "
                                        f"has no {{#{statement.differs}}}")
                elif diff:
                    label = {"ours": "paimon-sql", "ours-also": "paimon-sql (also-spellings)",
                             "old": "paimon-sql on PySpark 4.1.2"}[side]
                    problems.append(f"[{i}] {statement.text if side != 'ours-also' else statement.also or statement.text}"
                                    f"\n    {label} vs {their_side}: {diff}\n    {label}: {_short(a)}"
                                    f"\n    {their_side}: {_short(b)}"
                                    + (f"\n    ({_short(mine)} / {_short(other)})" if "error" in a or "error" in b else ""))
        assert not problems, f"case {name}:\n" + "\n".join(problems)


def _short(answer: dict) -> str:
    return json.dumps(answer, default=str)[:700]


@pytest.fixture(scope="module")
def differential(request, tmp_path_factory, spark, paimon_spark, paimon_sql_old_spark):
    cases = {name: corpus.parse(name, text) for name, text in request.module.CASES.items()}
    return Differential(cases, tmp_path_factory.mktemp("differential"), spark, paimon_spark, paimon_sql_old_spark)
