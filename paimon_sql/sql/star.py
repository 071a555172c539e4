"""``SELECT *`` over tables read with their metadata columns.

A query that names a metadata column (``__paimon_file_path``, ... :mod:`paimon_sql.read.metadata_columns`)
reads its Paimon tables with those columns after their own. Spark has no way to hide a column of
a relation made from a DataFrame, so each ``*`` or ``t.*`` that would take in such a table is
spelled out in the text: the table's own columns by name, any other relation by its own ``q.*``.
``SELECT *`` then means what it means in Paimon: the table's columns, never the hidden ones.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from sqlglot import exp

from paimon_sql.exceptions import PaimonError
from paimon_sql.read.metadata_columns import LOWER_NAMES


def wanted(tree: exp.Expression) -> bool:
    """Whether a statement names a metadata column anywhere (Spark matches names without case)."""
    return any(i.name.lower() in LOWER_NAMES for i in tree.find_all(exp.Identifier))


def edits(tree: exp.Expression, columns: Dict[int, List[str]]) -> list:
    """((start, end), replacement) for each star that takes in a table read with metadata columns;
    ``columns``: per such reference (``id`` of its node), the table's own column names."""
    out = []
    for select in tree.find_all(exp.Select):
        sources = _sources(select)
        for item in select.expressions:
            if isinstance(item, exp.Star):
                span, chosen = (item.meta["start"], item.meta["end"] + 1), sources
            elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star) and not item.args.get("db"):
                start = item.parts[0].meta["start"]
                span = (start, item.this.meta["end"] + 1)
                chosen = [s for s in sources if _name(s) and _name(s).lower() == item.table.lower()]
            else:
                continue
            if not any(id(s) in columns for s in chosen):
                continue
            _check(select, chosen, qualified=len(sources) > 1)
            if len(sources) == 1:  # the one relation: its columns need no qualifier
                out.append((span, ", ".join(_quoted(c) for c in columns[id(chosen[0])])))
                continue
            out.append((span, ", ".join(_spelled(s, columns) for s in chosen)))
    return out


def _sources(select: exp.Select) -> list:
    """The relations a ``*`` of this SELECT takes in, in Spark's order: FROM, joins, lateral views."""
    from_ = select.args.get("from_")
    relations = [from_.this] if from_ is not None else []
    relations += [j.this for j in select.args.get("joins") or []]
    return relations + list(select.args.get("laterals") or [])


def _name(source: exp.Expression) -> Optional[str]:
    """The qualifier Spark knows a relation by (a table read without an alias: its name)."""
    if isinstance(source, exp.Table) and not source.alias:
        return None if isinstance(source.this, exp.Anonymous) else source.name
    return source.alias or None


def _check(select: exp.Select, sources: list, qualified: bool) -> None:
    """Refuse a star whose columns are not the relations' own (a USING/NATURAL join merges key
    columns, a PIVOT makes new ones) or that must be qualified by a relation without a name."""
    joins = select.args.get("joins") or []
    if any(j.args.get("using") or j.method.upper() == "NATURAL" for j in joins) or \
            any(s.args.get("pivots") for s in sources) or (qualified and any(_name(s) is None for s in sources)):
        raise PaimonError("SELECT * with metadata columns over a USING or NATURAL join, a PIVOT or an unnamed "
                          "subquery: name the columns")


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _spelled(source: exp.Expression, columns: Dict[int, List[str]]) -> str:
    q = _quoted(_name(source))
    if id(source) in columns:
        return ", ".join(f"{q}.{_quoted(c)}" for c in columns[id(source)])
    return f"{q}.*"
