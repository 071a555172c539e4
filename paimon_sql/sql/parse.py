"""Parsing: our small pre-pass, then sqlglot's Spark dialect, one statement at a time.

The pre-pass quotes system-table identifiers (``t$snapshots`` → ```t$snapshots```) which the Spark
tokenizer cannot read bare; string literals, comments and quoted identifiers are left alone.
Parse errors keep sqlglot's message, which names the line and column.
"""

from __future__ import annotations

import logging
import re
from typing import List

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from paimon_sql.exceptions import PaimonError

DIALECT = "spark"
# sqlglot warns when it keeps a statement as a raw Command (SHOW TAGS, ALTER ... CREATE TAG):
# those are ours to match, not a user's mistake
logging.getLogger("sqlglot").setLevel(logging.ERROR)
_SKIP = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`]|``)*`|--[^\n]*|/\*.*?\*/", re.S)
_DOLLAR_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z_0-9]*)((?:\$[A-Za-z_][A-Za-z_0-9]*)+)")


class SqlSyntaxError(PaimonError):
    """Bad SQL; the message carries the parser's line and column."""


def quote_system_tables(text: str) -> str:
    out, pos = [], 0
    for m in _SKIP.finditer(text):
        out.append(_DOLLAR_IDENT.sub(r"`\1\2`", text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_DOLLAR_IDENT.sub(r"`\1\2`", text[pos:]))
    return "".join(out)


def split_statements(text: str) -> List[str]:
    """Split a script at ``;`` outside literals and comments; empty statements are dropped."""
    parts, start = [], 0
    for m in re.finditer(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`]|``)*`|--[^\n]*|/\*.*?\*/|;", text, re.S):
        if m.group(0) == ";":
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if _SKIP.sub("", p).strip()]


def table_reference(text: str) -> exp.Table:
    """A table name written in a statement (``db.t``, ``t$files``) as the node a query would hold."""
    return parse(f"SELECT * FROM {text.strip()}").find(exp.Table)


def parse(text: str) -> exp.Expression:
    """One statement → sqlglot AST."""
    prepared = quote_system_tables(text.strip().rstrip(";"))
    try:
        statements = sqlglot.parse(prepared, dialect=DIALECT, error_level=sqlglot.ErrorLevel.RAISE)
    except ParseError as e:
        first = e.errors[0] if e.errors else {}
        where = f" at line {first.get('line')}, column {first.get('col')}" if first.get("line") else ""
        raise SqlSyntaxError(f"syntax error{where}: {first.get('description') or e}") from None
    statements = [s for s in statements if s is not None]
    if len(statements) != 1:
        raise SqlSyntaxError(f"expected one statement, got {len(statements)}; use sql_script for several")
    return statements[0]
