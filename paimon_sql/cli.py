"""``paimon-sql``: a spark-sql-like shell over a warehouse.

    paimon-sql [--warehouse DIR] [--master URL] [--conf k=v]... [--catalog k=v]... [--catalog-file F]
               [-e SQL | -f FILE]
               [--output table|tsv|csv|json]
    paimon-sql refresh [--warehouse DIR] [--master URL] [--conf k=v]... [--catalog k=v]... [--catalog-file F]

``-e``/``-f`` run one or more ``;``-separated statements; without them an interactive prompt
reads multi-line statements ending in ``;`` (with history). Rows go to stdout in the chosen
format (json: one line per statement, a JSON array of row objects); timings, progress and errors
go to stderr. The first failing statement stops the script with a one-line error and exit code 1;
at the prompt, an error (or Ctrl-C) ends the statement, not the shell.

``refresh`` refreshes, once, every ACTIVATED materialized table whose freshness has lapsed, prints
what it did with each materialized table and exits (1 when a refresh failed): run it from cron.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import decimal
import json
import logging
import os
import sys
import time
from typing import List, Optional

from paimon_sql.exceptions import PaimonError
from paimon_sql.sql.parse import split_statements

# Loggers that report a failed task or job, which reaches the user as the statement's one-line error:
# an executor's and the scheduler's stack traces, a write job's abort, PySpark's JSON record of it.
_TASK_FAILURE_LOGGERS = ["org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager",
                         "org.apache.spark.sql.execution"]
_PYSPARK_FAILURE_LOGGERS = ["SQLQueryContextLogger", "DataFrameQueryContextLogger"]


def _args(argv: Optional[List[str]], refresh: bool = False) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="paimon-sql refresh" if refresh else "paimon-sql",
                                description="Refresh the materialized tables whose freshness has lapsed."
                                if refresh else "SQL over Apache Paimon tables, run by Spark "
                                "(subcommand: refresh, see paimon-sql refresh --help).")
    p.add_argument("--warehouse", help="the warehouse (default: catalog option 'warehouse', "
                   "$PAIMON_SQL_WAREHOUSE, ./warehouse)")
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--conf", action="append", default=[], metavar="K=V", help="Spark setting")
    add_catalog_flags(p)
    if not refresh:
        group = p.add_mutually_exclusive_group()
        group.add_argument("-e", dest="sql", help="statements to run")
        group.add_argument("-f", dest="file", help="file of statements to run")
    p.add_argument("--output", choices=["table", "tsv", "csv", "json"], default="table")
    return p.parse_args(argv)


def _plain(v):
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "asDict"):
        return {k: _plain(x) for k, x in v.asDict().items()}
    return v


def _text(v) -> str:
    v = _plain(v)
    if v is None:
        return "NULL"
    return json.dumps(v) if isinstance(v, (dict, list)) else str(v)


def _print(columns: List[str], rows: list, fmt: str, out) -> None:
    if fmt == "json":
        out.write(json.dumps([{c: _plain(r[i]) for i, c in enumerate(columns)} for r in rows]) + "\n")
    elif fmt in ("tsv", "csv"):
        writer = csv.writer(out, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_text(v) for v in r] for r in rows])
    else:
        cells = [[_text(v) for v in r] for r in rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
        line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        out.write(line + "\n| " + " | ".join(c.ljust(w) for c, w in zip(columns, widths)) + " |\n" + line + "\n")
        for r in cells:
            out.write("| " + " | ".join(v.ljust(w) for v, w in zip(r, widths)) + " |\n")
        out.write(line + "\n")


def run_statement(session, text: str, fmt: str) -> None:
    start = time.perf_counter()
    df = session.execute(text)
    fetched = 0
    if df is not None and df.columns:
        rows = _collect(df, text)
        fetched = len(rows)
        _print(df.columns, rows, fmt, sys.stdout)
        sys.stdout.flush()
    sys.stderr.write(f"Time taken: {time.perf_counter() - start:.2f} seconds, Fetched {fetched} row(s)\n")


def _collect(df, text: str) -> list:
    """The rows of a statement's result: tasks that fail while computing them (1/0 under ANSI, a
    Python UDF, a damaged file) raise Spark's error here, after ``Session.execute`` returned."""
    from paimon_sql.session import spark_error
    try:
        return df.collect()
    except Exception as e:
        raise spark_error(e, text) from e


def _report(e: Exception) -> None:
    """An error as the one line the shell prints for it, whatever raised it."""
    from paimon_sql.session import spark_error
    sys.stderr.write(f"Error: {' '.join(str(spark_error(e)).split())}\n")


def _quiet_logs(spark) -> None:
    """Spark logs only errors, and not those of failed tasks: the statement's one-line error says
    what failed, and a stack trace before it would bury it. Our own messages are not logged."""
    spark.sparkContext.setLogLevel("ERROR")
    log4j = spark.sparkContext._jvm.org.apache.logging.log4j
    for name in _TASK_FAILURE_LOGGERS:
        log4j.core.config.Configurator.setLevel(name, log4j.Level.OFF)
    from pyspark.logger import PySparkLogger
    for name in _PYSPARK_FAILURE_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def _interactive(session, fmt: str) -> int:
    try:
        import readline
        history = os.path.expanduser("~/.paimon_sql_history")
        if os.path.exists(history):
            readline.read_history_file(history)
    except (ImportError, OSError):
        readline, history = None, None
    buffer = []
    while True:
        try:
            line = input("paimon-sql> " if not buffer else "          > ")
        except EOFError:
            break
        except KeyboardInterrupt:
            buffer = []
            print()
            continue
        buffer.append(line)
        text = "\n".join(buffer)
        if not text.strip():
            buffer = []
            continue
        if text.strip().lower() in ("quit", "exit", "quit;", "exit;"):
            break
        if not text.rstrip().endswith(";"):
            continue
        buffer = []
        for stmt in split_statements(text):
            try:
                run_statement(session, stmt, fmt)
            except KeyboardInterrupt:  # PySpark has cancelled the statement's jobs
                sys.stderr.write("Interrupted\n")
            except Exception as e:
                _report(e)
    if readline and history:
        readline.write_history_file(history)
    return 0


def _pairs(flag: str, items: List[str]) -> Optional[dict]:
    """``k=v`` settings of a repeatable flag; None (after saying why) when one is malformed."""
    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep:
            sys.stderr.write(f"Error: {flag} expects key=value, got {item!r}\n")
            return None
        out[k.strip()] = v.strip()
    return out


def add_catalog_flags(p: argparse.ArgumentParser) -> None:
    """``--catalog k=v`` (repeatable) and ``--catalog-file F``, of the shell and the server."""
    p.add_argument("--catalog", action="append", default=[], metavar="K=V",
                   help="Paimon catalog option (metastore, uri, s3.*, ...)")
    p.add_argument("--catalog-file", metavar="FILE",
                   help="a properties file of Paimon catalog options (k=v lines; --catalog wins)")


def catalog_options(args) -> Optional[dict]:
    """The catalog options of ``--catalog-file`` then ``--catalog``; None (after saying why) when
    the file cannot be read or a line is not ``k=v``."""
    lines = []
    if args.catalog_file:
        try:
            with open(args.catalog_file, encoding="utf-8") as f:
                lines = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith(("#", "!"))]
        except OSError as e:
            sys.stderr.write(f"Error: cannot read --catalog-file {args.catalog_file}: {e.strerror}\n")
            return None
    from_file = _pairs(f"--catalog-file {args.catalog_file}", lines)
    given = _pairs("--catalog", args.catalog)
    return None if from_file is None or given is None else {**from_file, **given}


def _refresh(session, fmt: str) -> int:
    """``paimon-sql refresh``: one pass of the freshness runner."""
    from paimon_sql.sql.materialized_table import refresh_lapsed
    done = refresh_lapsed(session)
    _print(["table", "action", "detail"], done, fmt, sys.stdout)
    return 1 if any(action == "failed" for _, action, _ in done) else 0


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    refresh = argv[:1] == ["refresh"]
    args = _args(argv[1:] if refresh else argv, refresh)
    conf, catalog = _pairs("--conf", args.conf), catalog_options(args)
    if conf is None or catalog is None:
        return 2
    if args.master:
        conf["spark.master"] = args.master
    if refresh:
        script = None
    elif args.file:
        try:
            with open(args.file, encoding="utf-8") as f:
                script = f.read()
        except OSError as e:
            sys.stderr.write(f"Error: cannot read {args.file}: {e.strerror}\n")
            return 1
    else:
        script = args.sql
    from paimon_sql.session import connect
    try:
        session = connect(args.warehouse, conf=conf, catalog_options=catalog)
    except PaimonError as e:
        sys.stderr.write(f"Error: {e}\n")
        return 1
    _quiet_logs(session.spark)
    try:
        if refresh:
            return _refresh(session, args.output)
        if script is None:
            return _interactive(session, args.output)
        for stmt in split_statements(script):
            try:
                run_statement(session, stmt, args.output)
            except Exception as e:
                _report(e)
                return 1
        return 0
    finally:
        session.close()


if __name__ == "__main__":
    sys.exit(main())
