"""Parsing: our small pre-pass, then sqlglot's Spark dialect, one statement at a time.

The pre-pass quotes system-table identifiers (``t$snapshots`` → ```t$snapshots```) which the Spark
tokenizer cannot read bare; string literals, comments and quoted identifiers are left alone.
A syntax error names the token at fault as the user wrote it and its line and column in the user's
text, in one shape whichever parser (sqlglot here, or Spark for a statement handed to it) found it.
"""

from __future__ import annotations

import logging
import re
from typing import List, Optional

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from paimon_sql.exceptions import PaimonError, SqlSyntaxError

DIALECT = "spark"
# the warehouse's catalog as statements show it, named as paimon-spark's users name theirs (its
# docs configure ``spark.sql.catalog.paimon``); a table may be qualified by it or by Spark's
# session catalog, whose namespace the warehouse's databases share here
CATALOG = "paimon"
CATALOG_NAMES = frozenset({CATALOG, "spark_catalog"})
# sqlglot warns when it keeps a statement as a raw Command (SHOW TAGS, ALTER ... CREATE TAG):
# those are ours to match, not a user's mistake
logging.getLogger("sqlglot").setLevel(logging.ERROR)
# string literals, quoted names and comments, which the pre-pass and the statement splitter leave alone
# (written as "unrolled loops", linear in a 1 MB literal, where an alternation per character is not)
_LITERALS = r"'[^'\\]*(?:\\.[^'\\]*)*'|\"[^\"\\]*(?:\\.[^\"\\]*)*\"|`[^`]*(?:``[^`]*)*`|--[^\n]*|/\*.*?\*/"
_SKIP = re.compile(_LITERALS, re.S)
_STATEMENT_END = re.compile(_LITERALS + "|;", re.S)
_DOLLAR_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z_0-9]*)((?:\$[A-Za-z_][A-Za-z_0-9]*)+)")


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
    for m in _STATEMENT_END.finditer(text):
        if m.group(0) == ";":
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if _SKIP.sub("", p).strip()]


def table_reference(text: str) -> exp.Table:
    """A table name written in a statement (``db.t``, ``t$files``) as the node a query would hold."""
    return parse(f"SELECT * FROM {text.strip()}").find(exp.Table)


def closing_paren(text: str, i: int) -> int:
    """The offset after the ``)`` that closes the ``(`` at or after ``i`` (literals skipped)."""
    tokens = sqlglot.Dialect.get_or_raise(DIALECT).tokenize(text[i:])
    depth = 0
    for t in tokens:
        depth += {"(": 1, ")": -1}.get(t.text, 0) if t.token_type.name in ("L_PAREN", "R_PAREN") else 0
        if depth == 0 and t.token_type.name == "R_PAREN":
            return i + t.end + 1
    raise PaimonError("unbalanced parentheses")


_QUERY_STARTS = {"SELECT", "WITH", "VALUES", "FROM", "TABLE", "L_PAREN"}


def query_text(text: str, query: exp.Expression) -> str:
    """The text of ``query``, the query that ends the statement ``text`` was parsed from (INSERT
    ... <query>, CREATE VIEW ... AS <query>, CACHE TABLE ... AS <query>) as the user wrote it: it
    starts at the first token from which the rest of ``text`` parses as that same query."""
    want = query.sql(dialect=DIALECT)
    for token in sqlglot.Dialect.get_or_raise(DIALECT).tokenize(text):
        if token.token_type.name not in _QUERY_STARTS:
            continue
        try:
            if sqlglot.parse_one(text[token.start:], dialect=DIALECT).sql(dialect=DIALECT) == want:
                return text[token.start:]
        except sqlglot.errors.SqlglotError:
            continue
    return want  # not found as written (never expected): the query as sqlglot writes it


_RESET = re.compile(r"RESET\b\s*(.*)", re.I | re.S)
# Flink's CREATE/DROP MATERIALIZED TABLE, which sqlglot misreads: a command of ours, as ALTER's is
# (comments before it are passed whole: one that mentions the statement is not it)
_MATERIALIZED = re.compile(r"(?:\s+|--[^\n]*\n|/\*(?:(?!\*/).)*\*/)*(CREATE|DROP)\s+(MATERIALIZED\s+TABLE\b.*)",
                           re.I | re.S)


# string literals, whose quote doubled inside is one quote (Spark reads 'it''s' as it's; sqlglot as two
# literals), quoted names and comments
_DOUBLED = re.compile(r"'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'|\"[^\"\\]*(?:(?:\\.|\"\")[^\"\\]*)*\"|"
                      r"`[^`]*(?:``[^`]*)*`|--[^\n]*|/\*.*?\*/", re.S)


def _escape_doubled_quotes(text: str) -> str:
    """Each doubled quote inside a string literal written with a backslash instead (the same
    length, so positions keep), as sqlglot's Spark dialect reads only that escape."""
    def escaped(m: re.Match) -> str:
        literal = m.group(0)
        quote = literal[0]
        if quote not in "'\"":
            return literal
        return quote + re.sub(r"\\.|" + quote * 2, lambda e: "\\" + quote if e.group(0) == quote * 2
                              else e.group(0), literal[1:-1]) + quote
    return _DOUBLED.sub(escaped, text) if "''" in text or '""' in text else text


def prepare(text: str) -> str:
    """The statement text the parser reads (positions in the AST refer to it): trimmed, without a
    final ``;``, system-table names quoted, doubled quotes in string literals escaped."""
    return _escape_doubled_quotes(quote_system_tables(text.strip().rstrip(";")))


# DESCRIBE [TABLE] [EXTENDED|FORMATTED] t col, which sqlglot cannot read
_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_DESCRIBE_COLUMN = re.compile(r"DESC(?:RIBE)?\s+(?:TABLE\s+)?(?:(?P<style>EXTENDED|FORMATTED)\s+)?"
                              r"(?!(?:DATABASE|SCHEMA|NAMESPACE|FUNCTION|QUERY|CATALOG|EXTENDED|FORMATTED|TABLE)\b)"
                              rf"(?P<table>{_NAME}(?:\.{_NAME})*)\s+(?!PARTITION\b)(?P<column>{_NAME}(?:\.{_NAME})*)", re.I)


def parse(text: str) -> exp.Expression:
    """One statement → sqlglot AST."""
    prepared = prepare(text)
    reset = _RESET.match(prepared)
    if reset:  # Spark's RESET [key]: sqlglot reads no key with dashes; it is Spark's to run
        return exp.Command(this="RESET", expression=exp.Literal.string(reset.group(1)))
    materialized = _MATERIALIZED.match(prepared)
    if materialized:
        return exp.Command(this=materialized.group(1).upper(), expression=exp.Literal.string(materialized.group(2)))
    column = _DESCRIBE_COLUMN.fullmatch(prepared)
    if column:
        return exp.Describe(this=table_reference(column["table"]), style=(column["style"] or "").upper() or None,
                            expressions=[parse(f"SELECT {column['column']}").expressions[0]])
    try:
        statements = sqlglot.parse(prepared, dialect=DIALECT, error_level=sqlglot.ErrorLevel.RAISE)
    except ParseError as e:
        raise _parse_error(text, prepared, e.errors[0] if e.errors else {}) from None
    except TokenError as e:
        raise _token_error(text, prepared, e) from None
    except RecursionError:  # sqlglot's parser recurses per nesting level: Spark's may still read it
        raise SqlSyntaxError("statement nested too deeply to parse (parentheses, subqueries or expressions "
                             "inside one another)") from None
    statements = [s for s in statements if s is not None]
    if not statements:
        raise SqlSyntaxError("empty statement: no SQL to run (only blanks, comments or ';')")
    if len(statements) != 1:
        raise SqlSyntaxError(f"expected one statement, got {len(statements)}; use sql_script for several")
    return statements[0]


def syntax_error(near: str, text: str = "", offset: Optional[int] = None) -> SqlSyntaxError:
    """Every syntax error in one shape, whichever parser found it: the token at fault as the user
    wrote it (``near``: quoted, or ``end of input``) and, when known, where it is in ``text``."""
    if offset is None:
        return SqlSyntaxError(f"syntax error at or near {near}")
    line, column = text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
    return SqlSyntaxError(f"syntax error at or near {near} (line {line}, column {column})")


def spark_syntax_error(near: str, text: str, line: int, pos: int) -> SqlSyntaxError:
    """Spark's PARSE_SYNTAX_ERROR (``near`` as Spark quotes it, 0-based ``pos`` in ``line``) in our
    shape. Spark's position holds when it read the user's ``text`` as written; for a text the front
    layer rewrote, the token is looked up in the user's text, and left without a place if absent."""
    if not near.startswith("'"):  # end of input
        return syntax_error(near)
    token, offset = near[1:-1], _offset(text, line, pos)
    if not text.startswith(token, offset):
        offset = text.find(token)
    return syntax_error(near, text, offset if offset >= 0 else None)


def _offset(text: str, line: int, column: int) -> int:
    """The offset in ``text`` of 0-based ``column`` of 1-based ``line``; -1 past the last line."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return starts[line - 1] + column if 0 < line <= len(starts) else -1


def _user_offset(text: str, prepared: str, offset: int) -> int:
    """Where ``prepared[offset]`` is in the user's ``text``: :func:`parse` trims it and quotes
    system-table names, so ``prepared`` is ``text`` less leading blanks plus some backquotes."""
    i = len(text) - len(text.lstrip())
    for ch in prepared[:offset]:
        if i < len(text) and text[i] == ch:
            i += 1
    return i


def _parse_error(text: str, prepared: str, error: dict) -> SqlSyntaxError:
    """sqlglot's error at the token it stopped on (its ``col`` is the token's last character) —
    not its description, which speaks of its own classes."""
    highlight, line, col = error.get("highlight") or "", error.get("line"), error.get("col")
    if not highlight or not line:
        return syntax_error("end of input")
    end = _offset(prepared, line, col)
    start, end = _user_offset(text, prepared, end - len(highlight)), _user_offset(text, prepared, end)
    return syntax_error(f"'{text[start:end]}'", text, start)


def _token_error(text: str, prepared: str, e: TokenError) -> SqlSyntaxError:
    """A string, quoted name or comment left open: sqlglot's cause says where it starts
    (``Missing ' from <line>:<offset>``); an open comment runs to the end of input."""
    m = re.search(r"from \d+:(\d+)$", str(e.__cause__ or ""))
    if not m:
        return syntax_error("end of input")
    start = _user_offset(text, prepared, int(m.group(1)))
    return syntax_error(f"'{text[start:].splitlines()[0][:20]}'", text, start)
