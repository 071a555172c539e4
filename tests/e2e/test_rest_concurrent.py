"""Four REST committers at once (issue 48): two paimon-spark processes (Apache Paimon 2.0's Spark
connector, ``metastore=rest``) and two paimon-sql writers append to one table through
paimon-sql-server's REST catalog at the same time. The server takes one commit per table at a time
and refuses one built on a stale snapshot; each writer builds it again, so no commit is lost."""

import json
import subprocess
import threading
import time
from pathlib import Path

import pyarrow as pa

from e2e.server_support import start_rest_server
from paimon_sql.catalog import load_catalog

TOKEN = "tok-admin"
COMMITS = 8  # per writer


def test_paimon_spark_and_paimon_sql_committing_together_lose_nothing(tmp_path):
    from oracles import paimon_spark
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN} admin\n")
    warehouse = str(tmp_path / "warehouse")
    with start_rest_server(warehouse, str(tokens)) as (_, uri):
        options = {"metastore": "rest", "uri": uri, "token.provider": "bear", "token": TOKEN}
        catalog = load_catalog(warehouse, options)
        catalog.create_database("race")
        catalog.create_table_from_arrow("race.t", pa.schema([("writer", pa.string()), ("n", pa.int32())]))
        script = Path(__file__).with_name("paimon_spark_rest.py")

        def spark_writer(name: str) -> subprocess.Popen:
            statements = [f"INSERT INTO race.t VALUES ('{name}', {i})" for i in range(COMMITS)]
            cmd = {"jar": str(paimon_spark.jar()), "uri": uri, "warehouse": warehouse, "token": TOKEN,
                   "statements": statements}
            return subprocess.Popen([paimon_spark.python(), str(script), json.dumps(cmd)], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)

        errors = []

        def our_writer(name: str) -> None:
            try:
                table = load_catalog(warehouse, options).get_table("race.t")
                while table.snapshot_manager.latest() is None:  # start once paimon-spark commits
                    time.sleep(0.05)
                for i in range(COMMITS):
                    write = table.new_write()
                    write.write_arrow(pa.table({"writer": [name], "n": pa.array([i], pa.int32())}))
                    commit = table.new_commit()
                    commit.commit(write.prepare_commit())
            except Exception as e:  # noqa: BLE001 - reported by the test
                errors.append(f"{name}: {e}")

        sparks = [spark_writer(f"spark{i}") for i in range(2)]
        ours = [threading.Thread(target=our_writer, args=(f"ours{i}",)) for i in range(2)]
        for t in ours:
            t.start()
        for p in sparks:
            out, err = p.communicate(timeout=900)
            answers = json.loads(out.strip().splitlines()[-1]) if out.strip() else [{"error": err[-2000:]}]
            assert not any(isinstance(a, dict) for a in answers), answers
        for t in ours:
            t.join(600)
        assert not errors, errors
        table = catalog.get_table("race.t")
        got = sorted((r["writer"], r["n"]) for r in table.to_arrow().to_pylist())
        expected = sorted((f"{w}{i}", n) for w in ("spark", "ours") for i in range(2) for n in range(COMMITS))
        assert got == expected
        assert table.snapshot_manager.latest().id == 4 * COMMITS  # one snapshot per commit, none lost or doubled
