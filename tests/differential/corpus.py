"""The differential suite's cases: scripts of statements run on paimon-sql and on paimon-spark, each
on a warehouse of its own, answers compared statement by statement.

A case is a script; a statement ends with ``;`` at the end of a line. A statement starting with
``%`` is a DataFrame API operation (``% read t scan.snapshot-id=1``: engine.dataframe_operation).
Comment lines just above a statement say more of it:

- ``-- theirs: <statement>``: paimon-spark runs this spelling instead (a form only one accepts).
- ``-- also: <statement>``: our other spelling of the same thing (Flink's ``WITH``, a hint, ...): the
  case runs a second time on paimon-sql with every ``also`` in place, and must answer the same.
- ``-- differs: <anchor>``: a deliberate difference, listed in docs/compatibility.md under
  ``{#anchor}``; the test asserts the answers differ, so a difference that goes away is noticed.
- ``-- ordered``: compare the rows in order (also implied by a top-level ``ORDER BY``).
- ``-- same error``: both fail with the same Spark condition (without it, failing on both is enough).

Answers (engine.py) are normalised before they are compared, by what cannot be equal between two
writers and two runs, never by dropping a column: the warehouse's path becomes ``<warehouse>``,
uuids ``<uuid>``, a data or manifest file's counter ``<n>``, values of time columns ``<time>``,
positive sizes in bytes ``<size>`` (also a partition's bytes and newest file's time in SHOW TABLE
EXTENDED's text); floats are rounded to 10 significant digits.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

COMPATIBILITY = Path(__file__).resolve().parent.parent.parent / "docs" / "compatibility.md"

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_COUNTER = re.compile(r"<uuid>-\d+")
_TIME_COLUMN = re.compile(r"(^|_)(time|timestamp|time_retained)$|^(create|commit|update|creation)_time")
_SIZE_COLUMN = re.compile(r"(^|_)(file_size|size_in_bytes|file_size_in_bytes|total_size|bytes|mergedrecordsize)$|inbytes$")
_TIME_LABELS = {"Created Time", "Last Access", "Created By"}  # DESCRIBE EXTENDED's rows of this run's moment
# a partition's figures in SHOW TABLE EXTENDED ... PARTITION's text: its files' bytes and newest file's time
_PARTITION_FIGURES = re.compile(r"(fileSizeInBytes=|\d+ rows, )\d+|(lastFileCreationTime=)\d+")
_ORDER_BY = re.compile(r"\border\s+by\b[^()]*$", re.I | re.S)


@dataclass
class Statement:
    text: str
    theirs: str
    also: Optional[str] = None
    differs: Optional[str] = None
    ordered: bool = False
    same_error: bool = False


@dataclass
class Case:
    name: str
    statements: List[Statement] = field(default_factory=list)

    def ours(self, also: bool = False) -> List[str]:
        return [(s.also if also and s.also else s.text) for s in self.statements]

    def theirs(self) -> List[str]:
        return [s.theirs for s in self.statements]

    @property
    def has_also(self) -> bool:
        return any(s.also for s in self.statements)


def parse(name: str, script: str) -> Case:
    case, notes, lines = Case(name), {}, []
    for raw in script.strip().splitlines():
        line = raw.strip()
        if not lines and line.startswith("--"):
            note = line[2:].strip()
            key, _, rest = note.partition(":")
            notes[key.strip()] = rest.strip().rstrip(";") if rest else True
            continue
        if line:
            lines.append(line)
        if line.endswith(";"):
            text = " ".join(lines)[:-1].strip()
            case.statements.append(Statement(
                text=text, theirs=notes.get("theirs") or text, also=notes.get("also"),
                differs=notes.get("differs"), ordered=bool(notes.get("ordered")) or bool(_ORDER_BY.search(text)),
                same_error=bool(notes.get("same error"))))
            notes, lines = {}, []
    assert not lines, f"case {name}: a statement without its closing ';': {' '.join(lines)}"
    return case


def _text(v: str, warehouse: str) -> str:
    for form in ("file://" + warehouse, "file:" + warehouse, warehouse):
        v = v.replace(form, "<warehouse>")
    v = _PARTITION_FIGURES.sub(lambda m: f"{m.group(1)}<size>" if m.group(1) else f"{m.group(2)}<time>", v)
    return _COUNTER.sub("<uuid>-<n>", _UUID.sub("<uuid>", v))


def _value(v, column: str, warehouse: str):
    if v is None:
        return None
    if _TIME_COLUMN.search(column):
        return "<time>"
    if _SIZE_COLUMN.search(column) and isinstance(v, int) and v > 0:
        return "<size>"
    if isinstance(v, str):
        return _text(v, warehouse)
    if isinstance(v, float):
        return float(f"{v:.10g}")
    if isinstance(v, list):
        return [_value(x, column, warehouse) for x in v]
    if isinstance(v, dict):
        return {k: _value(x, k.lower(), warehouse) for k, x in v.items()}
    return v


def normalise(answer: dict, warehouse: str, ordered: bool) -> dict:
    """``answer`` with what differs by nature replaced (see the module's docstring); rows sorted
    unless ``ordered``."""
    if "error" in answer:
        return {"error": True, "condition": answer["condition"]}
    names = [c[0].lower() for c in answer["columns"]]
    rows = []
    for row in answer["rows"]:
        row = [_value(v, n, warehouse) for v, n in zip(row, names)]
        if len(row) > 1 and row[0] in _TIME_LABELS:
            row[1] = "<time>"
        rows.append(row)
    if not ordered:
        rows.sort(key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return {"columns": answer["columns"], "rows": rows}


def difference(statement: Statement, ours: dict, theirs: dict) -> Optional[str]:
    """What differs between the two normalised answers to ``statement``, or None."""
    if "error" in ours or "error" in theirs:
        if "error" in ours and "error" in theirs:
            if statement.same_error and ours["condition"] != theirs["condition"]:
                return f"both fail, with conditions {ours['condition']} (ours) and {theirs['condition']}"
            return None
        return "only " + ("paimon-sql" if "error" in ours else "paimon-spark") + " fails"
    if ours["columns"] != theirs["columns"]:
        return f"columns {ours['columns']} (ours) != {theirs['columns']}"
    if ours["rows"] != theirs["rows"]:
        return "rows differ"
    return None


def documented(anchor: str) -> bool:
    return COMPATIBILITY.exists() and ("{#" + anchor + "}") in COMPATIBILITY.read_text()
