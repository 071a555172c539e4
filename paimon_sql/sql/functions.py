"""Paimon's Spark functions in a query: ``sys.max_pt('t')``, ``sys.bucket(n, k...)``, ... .

paimon-spark's catalog serves them (``PaimonFunctions``) and its analyzer replaces ``max_pt`` by the
partition value before the query runs (``ReplacePaimonFunctions``). Here each call's span in the
text is replaced before Spark sees it: ``max_pt`` by that value (a STRING literal), the per-row
functions by the session's Arrow UDFs (:mod:`paimon_sql.spark.functions`). An unaliased call in a
select list is named as paimon-spark names it (``applyfunctionexpression(<arguments>)``).
The BLOB functions that need a BLOB column or OSS (``blob_view``,
``[try_]descriptor_to_presigned_url``) are refused: paimon-sql reads no BLOB values.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError
from paimon_sql.spark import functions as udfs
from paimon_sql.spark.types import spark_type
from paimon_sql.sql import parse

NAMESPACE = "sys"
_BUCKET_KINDS = ("bucket", "mod_bucket", "hive_bucket")
_UNARY = {"path_to_descriptor": udfs.PATH_TO_DESCRIPTOR, "descriptor_to_string": udfs.DESCRIPTOR_TO_STRING}
_REFUSED = ("blob_view", "descriptor_to_presigned_url", "try_descriptor_to_presigned_url")


def calls(tree: exp.Expression) -> list:
    """The ``sys.<function>(...)`` calls of a statement (``sys.max_pt`` parses as a Dot)."""
    return [d for d in tree.find_all(exp.Dot)
            if isinstance(d.this, exp.Identifier) and d.this.name.lower() == NAMESPACE
            and isinstance(d.expression, exp.Anonymous)]


def edits(session, tree: exp.Expression, text: str) -> list:
    """((start, end), replacement) of each Paimon function call of the statement."""
    found = calls(tree)
    if not found:
        return []
    if any(c.expression.name.lower() != "max_pt" for c in found) and not session.functions_registered:
        udfs.register(session.spark)
        session.functions_registered = True
    out = []
    for call in found:
        out += _call_edits(session, call, text)
    return out


def _call_edits(session, dot: exp.Dot, text: str) -> list:
    """The edits of one call. ``max_pt`` (whose argument is a literal) is replaced whole; the
    per-row functions have their name and the parentheses around their keys replaced, their
    arguments left as written, so calls inside them are edited on their own."""
    call, name = dot.expression, dot.expression.name.lower()
    start, name_end = dot.this.meta["start"], call.meta["end"] + 1
    open_paren = text.index("(", name_end)
    end = parse.closing_paren(text, open_paren)
    alias = ""
    if isinstance(dot.parent, exp.Select) and dot in dot.parent.expressions and name not in _UNARY:
        args = ", ".join(_arg_name(a) for a in call.expressions)
        alias = " AS `applyfunctionexpression(" + args.replace("`", "``") + ")`"
    if name == "max_pt":
        return [((start, end), _max_pt_call(session, call) + alias)]
    if name in _BUCKET_KINDS:
        if len(call.expressions) < 2:
            raise PaimonError(f"sys.{name}(bucket number, bucket keys...) takes at least 2 arguments, "
                              f"got {len(call.expressions)}")
        comma = _first_comma(text, open_paren)
        return [((start, open_paren + 1), f"{udfs.BUCKET}('{name}', "),
                ((comma, comma + 1), ", struct("), ((end - 1, end), "))" + alias)]
    if name in _UNARY:
        if len(call.expressions) != 1:
            raise PaimonError(f"Function '{name}' requires 1 argument, but found {len(call.expressions)}")
        return [((start, open_paren), _UNARY[name])]
    if name in _REFUSED:
        raise PaimonError(f"sys.{name} is not supported: paimon-sql reads no BLOB values")
    raise PaimonError(f"[UNRESOLVED_ROUTINE] Cannot resolve routine `{NAMESPACE}`.`{call.name}`")


def _max_pt_call(session, call: exp.Anonymous) -> str:
    args = call.expressions
    if len(args) != 1:
        raise PaimonError(f"Wrong number of inputs, expected 1 but got {len(args)}")
    if not (isinstance(args[0], exp.Literal) and args[0].is_string):
        raise PaimonError("sys.max_pt: table name must be a string literal")
    return max_pt(session, args[0].this)


def _first_comma(text: str, i: int) -> int:
    """The offset of the first comma inside the parentheses opening at ``i``, outside nested ones."""
    depth = 0
    for t in sqlglot.Dialect.get_or_raise(parse.DIALECT).tokenize(text[i:]):
        kind = t.token_type.name
        depth += 1 if kind == "L_PAREN" else -1 if kind == "R_PAREN" else 0
        if depth == 1 and kind == "COMMA":
            return i + t.start
    raise PaimonError("a bucket function needs the bucket number and the bucket keys")


def max_pt(session, name: str) -> str:
    """``sys.max_pt``: the greatest first-level partition value holding data files, as a STRING literal."""
    table = session.find_table_named(name)
    if table is None:
        raise PaimonError(f"[TABLE_OR_VIEW_NOT_FOUND] The table or view `{name}` cannot be found")
    keys = table.schema.partition_keys
    if not keys:
        raise PaimonError(f"table {table.name} is not a partitioned table")
    types = [f.type for f in table.schema.fields_of(keys)]
    values = {binary_row.from_bytes(e.partition, types)[0] for e in table.new_scan().plan_entries()}
    values.discard(None)
    if not values:
        raise PaimonError(f"table {table.name} has no partitions or none of the partitions have any data")
    top = max(values)
    text = top.isoformat() if hasattr(top, "isoformat") else str(top)
    literal = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return literal if types[0].name in ("STRING", "VARCHAR", "CHAR") else \
        f"CAST(CAST({literal} AS {spark_type(types[0])}) AS STRING)"


def _arg_name(arg: exp.Expression) -> str:
    """An argument as Spark prints it in a column name: a literal's value, a column's name."""
    if isinstance(arg, exp.Literal):
        return arg.this
    if isinstance(arg, exp.Column):
        return arg.name
    return arg.sql(dialect=parse.DIALECT)
