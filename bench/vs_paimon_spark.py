"""paimon-sql against paimon-spark (Apache Paimon 2.0's own Spark connector) on the statements users run.

Each engine runs the whole sequence below in a process of its own (``local[2]``, its own warehouse),
the engines alternated — paimon-spark first — ``--runs`` times; each step's figure is its best run.
Three engines: paimon-spark 2.0 on PySpark 4.1.2; ours through ``paimon_sql.connect()`` on the
project's PySpark; and ours again on PySpark 4.1.2 (``ours@4.1``), so Spark's version is not the
difference. The ratio is ours / paimon-spark (below 1.0: we are faster, or smaller).

The sequence (PK table ``t``: 4 partitions, bucket 4, N rows):

    insert         INSERT N rows                 upsert        INSERT N/10 existing keys
    mor_agg        count(*), sum(b) (merge on read, right after the upsert)
    point          one key (WHERE id = 13)       filter        a non-key column (WHERE s = ...)
    update         UPDATE ... WHERE c = 3 (1%)   delete        DELETE ... WHERE c = 5 (1%)
    merge          MERGE INTO N/20 rows, half matched
    scan_dml       the aggregate after those     compact       CALL sys.compact(full)
    scan_compact   the aggregate after it        files         count(*) FROM t$files
    append_*       an append table: INSERT 2N rows, aggregate scan, filter
    warm_point     a one-row point query on a warm session (median of 10)
    insert_row     a one-row INSERT (median of 5)   use_db     USE db (median of 10)
    stream         a streaming read (availableNow, memory sink) of a small PK table, best after the first
    commit_<k>     a one-row INSERT into an append table of k files (tables made once by paimon-sql's
                   core and copied into each engine's warehouse; default 1k / 5k / 20k)
    bytes_on_disk  bytes under the warehouse after the sequence (less the commit tables)

    .venv/bin/python bench/vs_paimon_spark.py [--rows 1000000] [--runs 2] [--engines paimon-spark,ours,ours@4.1]
                                              [--commit-files 1000,5000,20000] [--warm] [--catalog rest]

``--catalog rest``: every engine reaches its warehouse through paimon-sql-server's Paimon REST
catalog (``--rest-port``, one server per run of an engine, started before it), with
``metastore=rest``: names, schemas and commits go through the server, the files are the engine's.

``--warm`` runs the PK and append steps a second time in each session, on new tables, after the
rest: ``<step> (warm)`` is a step that is not the first of its kind in the session (its engine's
JVM and Python workers have run that code before), which tells a warm-up from a steady cost.

Needs ``.venv-paimon-spark`` (``scripts/setup-tests.sh`` makes it) and the paimon-spark jar in
``$PAIMON_SPARK_JAR`` (``../shared/oracles/paimon-spark-4.1_2.13-2.0.0.jar`` when unset).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
JAR = os.environ.get("PAIMON_SPARK_JAR") or str(ROOT.parent / "shared" / "oracles" / "paimon-spark-4.1_2.13-2.0.0.jar")
PYTHONS = {"paimon-spark": ROOT / ".venv-paimon-spark" / "bin" / "python", "ours": ROOT / ".venv" / "bin" / "python",
           "ours@4.1": ROOT / ".venv-paimon-spark" / "bin" / "python"}
DB = "bench"
REST_TOKEN = "bench-token"

SOURCE = ("SELECT id, rand(7) AS b, CAST(id % 100 AS INT) AS c, concat('s-', id % 10000) AS s, "
          "element_at(array('2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'), CAST(id % 4 AS INT) + 1) AS dt "
          "FROM range({lo}, {hi})")
COLUMNS = "(id BIGINT, b DOUBLE, c INT, s STRING, dt STRING)"
AGG = "SELECT count(*), sum(b) FROM {t}"


# ---------------------------------------------------------------- child: one engine, the whole sequence

def _rest_options(uri: str) -> dict:
    return {"metastore": "rest", "uri": uri, "token.provider": "bear", "token": REST_TOKEN}


def _session(engine: str, warehouse: str, rest_uri: str = ""):
    """``sql(text) -> rows`` and the SparkSession, for one engine (through the REST catalog at
    ``rest_uri`` when given)."""
    conf = {"spark.master": "local[2]", "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "2"}
    if engine == "paimon-spark":
        from pyspark.sql import SparkSession
        builder = SparkSession.builder.appName("bench-paimon-spark")
        catalog = {"warehouse": warehouse, **_rest_options(rest_uri)} if rest_uri else {"warehouse": "file://" + warehouse}
        conf.update({"spark.jars": JAR,
                     "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
                     "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
                     **{f"spark.sql.catalog.paimon.{k}": v for k, v in catalog.items()},
                     "spark.sql.defaultCatalog": "paimon"})
        for k, v in conf.items():
            builder = builder.config(k, v)
        spark = builder.getOrCreate()
        return (lambda q: spark.sql(q).collect()), spark
    import paimon_sql
    s = paimon_sql.connect(warehouse, conf=conf, catalog_options=_rest_options(rest_uri) if rest_uri else None)
    return (lambda q: s.sql(q).collect()), s.spark


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _median(fn, n: int) -> float:
    return statistics.median(_timed(fn) for _ in range(n))


def _disk_bytes(path: Path, leave_out=()) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not any(p in f.parts for p in leave_out))


def _sequence(sql, n: int, t: str, a: str, out: dict, suffix: str = "") -> None:
    """The statements on the PK table ``t`` and the append table ``a``, each step's seconds into
    ``out`` under its name plus ``suffix``."""
    def step(name, q):
        out[name + suffix] = _timed(lambda: sql(q))

    agg = AGG.format(t=t)
    sql(f"CREATE TABLE {t} {COLUMNS} PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '4')")
    step("insert", f"INSERT INTO {t} {SOURCE.format(lo=0, hi=n)}")
    step("upsert", f"INSERT INTO {t} SELECT id, b + 1, c, s, dt FROM ({SOURCE.format(lo=0, hi=n)}) WHERE id % 10 = 0")
    step("mor_agg", agg)
    step("point", f"SELECT * FROM {t} WHERE id = 13")
    step("filter", f"SELECT * FROM {t} WHERE s = 's-77'")
    step("update", f"UPDATE {t} SET b = b + 1 WHERE c = 3")
    step("delete", f"DELETE FROM {t} WHERE c = 5")
    half = n // 40
    step("merge", f"MERGE INTO {t} USING ({SOURCE.format(lo=n - half, hi=n + half)}) src "
                  f"ON {t}.id = src.id AND {t}.dt = src.dt "
                  "WHEN MATCHED THEN UPDATE SET b = src.b WHEN NOT MATCHED THEN INSERT *")
    step("scan_dml", agg)
    step("compact", f"CALL sys.compact(table => '{DB}.{t}', compact_strategy => 'full')")
    step("scan_compact", agg)
    step("files", f"SELECT count(*) FROM `{t}$files`")
    sql(f"CREATE TABLE {a} {COLUMNS} PARTITIONED BY (dt)")
    step("append_insert", f"INSERT INTO {a} {SOURCE.format(lo=0, hi=2 * n)}")
    step("append_agg", f"SELECT dt, count(*), sum(b) FROM {a} GROUP BY dt")
    step("append_filter", f"SELECT * FROM {a} WHERE s = 's-77'")


def child(engine: str, rows: int, warehouse: str, commit_tables: list, warm: bool = False, rest_uri: str = "") -> dict:
    sql, spark = _session(engine, warehouse, rest_uri)
    spark.sparkContext.setLogLevel("ERROR")
    n = rows
    out = {}
    sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    sql(f"USE {DB}")
    _sequence(sql, n, "t", "a", out)
    sql("SELECT * FROM t WHERE id = 13")
    out["warm_point"] = _median(lambda: sql("SELECT * FROM t WHERE id = 13"), 10)
    sql(f"CREATE TABLE k {COLUMNS} TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    sql(f"INSERT INTO k {SOURCE.format(lo=0, hi=1000)}")
    counter = iter(range(10_000, 20_000))
    out["insert_row"] = _median(lambda: sql(f"INSERT INTO k VALUES ({next(counter)}, 0.5, 1, 'x', 'd')"), 5)
    out["use_db"] = _median(lambda: sql(f"USE {DB}"), 10)
    _stream(spark, f"{warehouse}/{DB}.db/k", 0)  # the first pays for loading the source
    out["stream"] = min(_stream(spark, f"{warehouse}/{DB}.db/k", i) for i in (1, 2))
    for name in commit_tables:
        sql(f"INSERT INTO {name} VALUES (0, 'x')")  # the table's first statement: loads it
        out[name] = _median(lambda: sql(f"INSERT INTO {name} VALUES (1, 'y')"), 3)
    out["bytes_on_disk"] = _disk_bytes(Path(warehouse), leave_out=tuple(f"{t}" for t in commit_tables))
    if warm:  # the sequence again in the same session, on new tables: no step is the first of its kind
        _sequence(sql, n, "t2", "a2", out, " (warm)")
    return out


def _stream(spark, location: str, i: int) -> float:
    """One streaming read of ``location`` (``availableNow``) into a memory sink; seconds."""
    def run():
        query = (spark.readStream.format("paimon").load(location).writeStream.format("memory")
                 .queryName(f"m{i}").trigger(availableNow=True).start())
        query.awaitTermination()
    return _timed(run)


# ---------------------------------------------------------------- parent: tables, runs, the table of ratios

def commit_templates(root: Path, sizes: list) -> list:
    """Append tables of ``sizes`` files each, made by our core (no Spark), for the one-row commits."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import pyarrow as pa
    from paimon_sql.catalog import load_catalog
    catalog = load_catalog(str(root))
    catalog.create_database(DB, ignore_if_exists=True)
    names = []
    for size in sizes:
        name = f"commit_{size // 1000}k" if size % 1000 == 0 else f"commit_{size}"
        table = catalog.create_table_from_arrow(f"{DB}.{name}", pa.schema([("p", pa.int64()), ("v", pa.string())]),
                                                partition_keys=["p"])
        table = catalog.get_table(f"{DB}.{name}")
        for lo in range(0, size, 1000):  # a file per partition, a thousand per commit
            ids = np.arange(lo, min(lo + 1000, size), dtype=np.int64)
            table.write_arrow(pa.table({"p": ids, "v": pa.array(["v"] * len(ids))}))
        names.append(name)
    return names


@contextlib.contextmanager
def rest_server(warehouse: Path, tmp: Path) -> Iterator[str]:
    """paimon-sql-server serving ``warehouse``'s Paimon REST catalog (its Thrift port unused); yields its URL."""
    tokens = tmp / "rest-tokens"
    tokens.write_text(f"{REST_TOKEN} bench\n")
    log = open(tmp / "rest-server.log", "w+")
    proc = subprocess.Popen([str(PYTHONS["ours"]), "-m", "paimon_sql.server", "--warehouse", str(warehouse),
                             "--port", "0", "--master", "local[1]", "--rest-port", "0", "--rest-token-file",
                             str(tokens)], stdout=subprocess.DEVNULL, stderr=log,
                            env={**os.environ, "PYSPARK_PYTHON": str(PYTHONS["ours"])}, cwd=ROOT)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            log.seek(0)
            found = re.search(r"REST catalog at (http://\S+)", log.read())
            if found:
                yield found.group(1)
                return
            if proc.poll() is not None:
                raise SystemExit(f"the REST server exited:\n{(tmp / 'rest-server.log').read_text()[-3000:]}")
            time.sleep(0.2)
        raise SystemExit("the REST server did not start within 300 s")
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def run_child(engine: str, rows: int, templates: Path, names: list, tmp: Path, warm: bool = False,
              rest: bool = False) -> dict:
    warehouse = tmp / f"wh-{engine.replace('@', '-')}"
    shutil.rmtree(warehouse, ignore_errors=True)
    shutil.copytree(templates, warehouse)
    with rest_server(warehouse, tmp) if rest else contextlib.nullcontext("") as uri:
        args = [str(PYTHONS[engine]), __file__, "--child", engine, "--rows", str(rows), "--warehouse", str(warehouse),
                "--tables", ",".join(names), "--rest-uri", uri] + (["--warm"] if warm else [])
        env = {**os.environ, "PYSPARK_PYTHON": str(PYTHONS[engine])}
        done = subprocess.run(args, capture_output=True, text=True, env=env)
    shutil.rmtree(warehouse, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"{engine} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(rows: int, runs: int, results: dict) -> str:
    engines = list(results)
    best = {e: {k: min(r[k] for r in rs if r.get(k) is not None) if any(r.get(k) is not None for r in rs) else None
                for k in rs[0]} for e, rs in results.items()}
    base = best.get("paimon-spark")
    lines = [f"rows {rows:,}; local[2]; best of {runs} run(s) per step, engines alternated; seconds "
             "(bytes_on_disk: MB); ratio = ours / paimon-spark"]
    head = f"{'step':<16}" + "".join(f"{e:>14}" for e in engines)
    others = [e for e in engines if e != "paimon-spark"]
    lines.append(head + ("".join(f"{'ratio ' + e:>18}" for e in others) if base else ""))
    for k in best[engines[0]]:
        scale = 1e-6 if k == "bytes_on_disk" else 1.0
        cells = "".join(f"{best[e][k] * scale:>14.3f}" if best[e][k] is not None else f"{'-':>14}" for e in engines)
        ratios = "".join(f"{best[e][k] / base[k]:>18.2f}" if base and base.get(k) and best[e][k] is not None
                         else f"{'-':>18}" for e in others) if base else ""
        lines.append(f"{k:<16}{cells}{ratios}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--engines", default="paimon-spark,ours,ours@4.1")
    ap.add_argument("--commit-files", default="1000,5000,20000")
    ap.add_argument("--warm", action="store_true",
                    help="run the sequence a second time in each session, on new tables (steps marked (warm))")
    ap.add_argument("--catalog", choices=("filesystem", "rest"), default="filesystem",
                    help="rest: each engine through paimon-sql-server's Paimon REST catalog (metastore=rest)")
    ap.add_argument("--rest-uri", default="")
    ap.add_argument("--child")
    ap.add_argument("--warehouse")
    ap.add_argument("--tables", default="")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.rows, args.warehouse, [t for t in args.tables.split(",") if t],
                               args.warm, args.rest_uri)))
        return
    engines = args.engines.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="bench-vs-paimon-spark-"))
    try:
        templates = tmp / "templates"
        names = commit_templates(templates, [int(x) for x in args.commit_files.split(",") if x])
        results = {e: [] for e in engines}
        for run in range(args.runs):
            for engine in engines:
                results[engine].append(run_child(engine, args.rows, templates, names, tmp, args.warm,
                                                 args.catalog == "rest"))
                print(f"run {run + 1} {engine} done", file=sys.stderr, flush=True)
        print(report(args.rows, args.runs, results))
        print(json.dumps(results))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
