"""One engine's side of the differential suite: a case's statements run in order on a Spark session,
each statement's answer as plain JSON values, so that answers from two processes (and two PySpark
versions) compare as equal data.

Imported by the test process (paimon-sql on the project's PySpark) and by ``engine_driver.py``, the
child process that runs paimon-spark, or paimon-sql on paimon-spark's PySpark. It needs PySpark
and nothing of paimon-sql, so it loads in either venv.

An answer is ``{"columns": [[name, type], ...], "rows": [[value, ...], ...]}`` or
``{"error": first line, "condition": Spark's error class or None, "kind": exception class}``.
Values: decimals, dates and times as text (ISO), binary as ``0x<hex>``, structs as
``{field: value}``, maps as ``[[key, value], ...]`` sorted by key, NaN as ``"NaN"``.
"""

import datetime
import decimal
import json
import math
import re
from typing import Callable, List, Optional

_CONDITION = re.compile(r"^\[([A-Z_]+(?:\.[A-Z_]+)*)\]")


def value(v):
    """``v`` (a value of a collected Row) as a JSON value, the same in every PySpark version."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return f"interval {v.total_seconds()}s"
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    if hasattr(v, "asDict"):  # a Row: a struct
        return {k: value(x) for k, x in zip(v.__fields__, v)}
    if isinstance(v, dict):
        pairs = [[value(k), value(x)] for k, x in v.items()]
        return sorted(pairs, key=lambda p: json.dumps(p[0], sort_keys=True))
    if isinstance(v, (list, tuple)):
        return [value(x) for x in v]
    return str(v)


def error(e: BaseException) -> dict:
    """An exception as an answer: its first line and, where it has one, Spark's condition. A
    Py4JJavaError's own first line names only the call: the Java exception's is the answer."""
    java = getattr(e, "java_exception", None)
    text = (str(java.toString()) if java is not None else str(e)).strip()
    first = text.splitlines()[0] if text else type(e).__name__
    match = _CONDITION.match(first)
    return {"error": first[:500], "condition": match.group(1) if match else None, "kind": type(e).__name__}


def answer(df) -> dict:
    """A DataFrame's columns and rows, collected."""
    columns = [[f.name, f.dataType.simpleString()] for f in df.schema.fields]
    return {"columns": columns, "rows": [[value(x) for x in row] for row in df.collect()]}


def run(sql: Callable, statements: List[str], dataframe: Optional[Callable] = None) -> List[dict]:
    """Each statement's answer, in order; a failing statement does not stop the ones after it
    (a case states what each engine does after a failure too). A statement starting with ``%`` is
    a DataFrame API operation, run by ``dataframe`` (:func:`dataframe_operation`)."""
    answers = []
    for text in statements:
        try:
            if text.startswith("%"):
                df = dataframe(text[1:])
                answers.append(answer(df) if df is not None else {"columns": [], "rows": []})
            else:
                answers.append(answer(sql(text)))
        except Exception as e:  # noqa: BLE001 - any failure is an answer
            answers.append(error(e))
    return answers


def dataframe_operation(spark, sql: Callable, warehouse: str, text: str):
    """One DataFrame API operation of a case, written ``% <op> <table> [word] [k=v ...] [AS <query>]``
    (the same user code on both engines; a table is loaded and saved by its path in the warehouse):

    - ``read T k=v...``: ``spark.read.format("paimon").options(k=v).load(<path of T>)``
    - ``table T``: ``spark.table(T)``
    - ``save T [mode] k=v... AS q``: ``sql(q).write.format("paimon").mode(mode).options(k=v).save(<path of T>)``
    - ``writeTo T method k=v +p=v... AS q``: ``sql(q).writeTo(T)``, ``.option(k, v)``, ``.tableProperty(p, v)``,
      then ``.method()`` (append, overwritePartitions, create, replace, createOrReplace)

    Answers the DataFrame read, or None for a write."""
    head, _, query = text.partition(" AS ")
    op, target, *rest = head.split()
    words = [w for w in rest if "=" not in w]
    options = dict(w.split("=", 1) for w in rest if "=" in w and not w.startswith("+"))
    properties = dict(w[1:].split("=", 1) for w in rest if w.startswith("+"))
    db, _, name = target.rpartition(".")
    path = f"{warehouse}/{db or 'default'}.db/{name}"
    if op == "read":
        return spark.read.format("paimon").options(**options).load(path)
    if op == "table":
        return spark.table(target)
    if op == "save":
        sql(query).write.format("paimon").mode(words[0] if words else "errorifexists").options(**options).save(path)
        return None
    if op == "writeTo":
        writer = sql(query).writeTo(target)
        for k, v in options.items():
            writer = writer.option(k, v)
        for k, v in properties.items():
            writer = writer.tableProperty(k, v)
        getattr(writer, words[0])()
        return None
    raise ValueError(f"unknown DataFrame operation: % {text}")
