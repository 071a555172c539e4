"""``CALL [<catalog>.]sys.<name>(args)``, ``SHOW PROCEDURES`` and ``DESCRIBE PROCEDURE sys.<name>``.

sqlglot keeps CALL as a raw command, so the text is read here: the name up to the first ``(``, the
arguments parsed by sqlglot as the arguments of a function call (``name => value`` is its Kwarg).
Arguments are literals, as in paimon-spark: strings, integers, TRUE/FALSE, NULL and ``map(k, v, ...)``.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

import sqlglot
from sqlglot import exp

from paimon_sql.procedures import PROCEDURES, ProcedureError, bind, describe_lines, lookup
from paimon_sql.spark.types import spark_ddl
from paimon_sql.sql.parse import DIALECT

_CALL = re.compile(r"\s*((?:`[^`]+`|[\w]+)(?:\s*\.\s*(?:`[^`]+`|\w+))*)\s*\((.*)\)\s*", re.S)


def call(session, text: str):
    """Run ``text`` (what follows CALL) and return its output as a DataFrame."""
    cls, args = bound_arguments(text)
    rows = cls().call(session, args)
    if not isinstance(rows, list):
        return rows  # the procedure's own DataFrame
    return session.spark.createDataFrame(rows, spark_ddl(cls.output))


def bound_arguments(text: str) -> Tuple[type, Dict[str, Any]]:
    """The procedure ``text`` (what follows CALL) names, and its arguments by parameter name."""
    m = _CALL.fullmatch(text)
    if m is None:
        raise ProcedureError(f"CALL {text.strip()}: expected CALL sys.<procedure>(arguments)")
    cls = lookup(procedure_name(m.group(1)))
    positional, named = arguments(cls, m.group(2))
    return cls, bind(cls, positional, named)


def procedure_name(text: str) -> str:
    """``sys.name`` / ``<catalog>.sys.name`` / ``name`` → ``name``; another namespace is unknown."""
    parts = [p.strip().strip("`") for p in text.split(".")]
    if len(parts) > 1 and (parts[-2].lower() != "sys" or len(parts) > 3):
        raise ProcedureError(f"unknown procedure '{text.strip()}' (procedures live in namespace sys: "
                             f"CALL sys.<name>(...))")
    return parts[-1]


def arguments(cls, text: str) -> Tuple[List[Any], List[Tuple[str, Any]]]:
    """The argument list as (positional values, (name, value) pairs), in the order written."""
    if not text.strip():
        return [], []
    try:
        node = sqlglot.parse_one(f"SELECT __call({text})", dialect=DIALECT).expressions[0]
    except sqlglot.errors.SqlglotError:
        raise cls.fail(f"cannot read the arguments ({text.strip()})") from None
    if not isinstance(node, exp.Anonymous):
        raise cls.fail(f"cannot read the arguments ({text.strip()})")
    positional, named = [], []
    for arg in node.expressions:
        if isinstance(arg, exp.Kwarg):
            named.append((arg.this.name, literal(cls, arg.expression)))
        else:
            positional.append(literal(cls, arg))
    return positional, named


def literal(cls, node: exp.Expression) -> Any:
    """A literal argument's Python value (a map as a dict); anything else is refused."""
    if isinstance(node, exp.Paren):
        return literal(cls, node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -literal(cls, node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = str(node.this)
        return int(text) if re.fullmatch(r"\d+", text) else float(text)
    if isinstance(node, exp.VarMap):
        keys, values = node.args["keys"].expressions, node.args["values"].expressions
        return {literal(cls, k): literal(cls, v) for k, v in zip(keys, values)}
    if isinstance(node, exp.Map) and not node.args.get("keys"):  # map()
        return {}
    raise cls.fail(f"argument {node.sql(dialect=DIALECT)} is not a literal")


def show_procedures(session):
    """One row per available procedure, as ``sys.<name>``."""
    return session.spark.createDataFrame([(f"sys.{n}",) for n in sorted(PROCEDURES)], "`procedure` STRING")


def describe_procedure(session, name: str):
    """Signature, output columns and description of one procedure (Spark's DESCRIBE FUNCTION shape)."""
    cls = lookup(procedure_name(name))
    return session.spark.createDataFrame([(line,) for line in describe_lines(cls)], "`procedure_desc` STRING")
