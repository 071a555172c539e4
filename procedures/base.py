"""Procedure: what ``CALL sys.<name>(...)`` runs, declared as paimon-spark declares it.

Each procedure family is one module of this package; each procedure one subclass filed by
:func:`register` under its Paimon name. A subclass declares its parameters (paimon-spark's names,
order and types, so scripts written for Paimon on Spark run unchanged), its output columns, a
one-line description, and :meth:`Procedure.call`, which gets the bound arguments by name (every
parameter present, None when not given) and returns rows (a list of tuples in output-column order)
or a DataFrame. A procedure checks all its arguments before it changes anything::

    from paimon_sql.procedures.base import Procedure, columns, optional, register, required

    @register
    class RollbackProcedure(Procedure):
        name = "rollback"
        parameters = (required("table", "STRING"), optional("snapshot", "BIGINT"), optional("tag", "STRING"))
        output = columns("previous_snapshot_id BIGINT", "current_snapshot_id BIGINT")
        description = "Roll a table back to a snapshot or tag; later snapshots are removed."

        def call(self, session, args):
            table = self.table(session, args["table"])
            ...
            return [(previous, current)]

Then import the module in ``procedures/__init__.py`` so it registers.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from sqlglot import exp

from paimon_sql.data import binary_row
from paimon_sql.data.partition_names import spec_values
from paimon_sql.exceptions import PaimonError, ProcedureError, TableNotFoundError
from paimon_sql.spark.types import spark_ddl, to_spark_arrow
from paimon_sql.systables.base import columns  # noqa: F401  (output columns are declared with it)
from paimon_sql.table import object_table, unserved_features
from paimon_sql.table.format_table import FormatTable

PROCEDURES: Dict[str, type] = {}
TYPES = ("STRING", "INT", "BIGINT", "BOOLEAN", "MAP<STRING,STRING>")


def register(cls):
    """Class decorator: file a procedure under its ``name`` (looked up lower-cased, as paimon-spark)."""
    PROCEDURES[cls.name] = cls
    return cls


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # one of TYPES (Spark's names for paimon-spark's String/Integer/Long/Boolean/Map)
    required: bool
    default: Any = None

    def __str__(self) -> str:
        return f"{self.name} {self.type}" if self.required else f"[{self.name} {self.type}]"


def required(name: str, type_: str) -> Parameter:
    assert type_ in TYPES, type_
    return Parameter(name, type_, True)


def optional(name: str, type_: str, default: Any = None) -> Parameter:
    assert type_ in TYPES, type_
    return Parameter(name, type_, False, default)


class Procedure:
    name: ClassVar[str] = ""
    parameters: ClassVar[Tuple[Parameter, ...]] = ()
    output: ClassVar[list] = columns("result BOOLEAN")
    description: ClassVar[str] = ""
    rewrites_files: ClassVar[bool] = False  # its table must be one paimon-sql may write (refused before any work)

    def call(self, session, args: Dict[str, Any]):
        """Run with ``args`` (parameter name → value); rows as tuples, or a DataFrame."""
        raise NotImplementedError

    @classmethod
    def signature(cls) -> str:
        return f"sys.{cls.name}({', '.join(str(p) for p in cls.parameters)})"

    @classmethod
    def fail(cls, problem: str) -> ProcedureError:
        """The one-line error for a bad argument: the problem, then the signature to call it by."""
        return ProcedureError(f"CALL sys.{cls.name}: {problem}; expected {cls.signature()}")

    @classmethod
    def table(cls, session, name: str, format_tables: bool = False):
        """The Paimon table ``name`` (``db.t``, ``t``, ``t$branch_b``) means in this session. A
        format table has no snapshots, manifests or Paimon data files for a procedure to work on:
        it is refused in one line unless ``format_tables`` (a caller walking a database skips it)."""
        try:
            found = session.find_table_named(name)
        except PaimonError as e:
            raise ProcedureError(f"table '{name}': {e}") from None
        if found is None:
            raise TableNotFoundError(f"table '{name}' not found")
        if isinstance(found, FormatTable) and not format_tables:
            raise cls.fail(f"table '{name}' is a format table (plain {found.format} files, without snapshots): "
                           "it has nothing this procedure works on")
        if cls.rewrites_files:
            object_table.refuse_write(found)
            unserved_features.refuse_write(found)
        return found

    @classmethod
    def table_names(cls, session, database: str) -> List[str]:
        """``db.t`` of every table of ``database`` (procedures given a whole database)."""
        if not session.catalog.database_exists(database):
            raise cls.fail(f"database '{database}' does not exist")
        return [f"{database}.{t}" for t in session.catalog.list_tables(database)]

    @classmethod
    def dynamic_options(cls, text):
        """An ``options`` argument, ``'k=v,k2=v2'``, as options for this run (over the table's, as
        ``/*+ OPTIONS */`` would be)."""
        out = {}
        for item in (text or "").split(","):
            if not item.strip():
                continue
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise cls.fail(f"options must be 'key=value,...', got '{text}'")
            out[key.strip()] = value.strip()
        return out

    # -- choosing partitions (compact, rescale): ``partitions`` or ``where``, as paimon-spark --------

    def partition_selection(self, session, table, partitions: Optional[str], where: Optional[str]):
        """The partition specs ``partitions`` / ``where`` choose: None when neither is given (the
        whole table), [] when no partition matches."""
        if partitions and where:
            raise self.fail("partitions and where cannot be used together")
        if (partitions or where) and not table.schema.partition_keys:
            raise self.fail(f"table '{table.name}' is not partitioned: partitions/where select nothing")
        if partitions:
            return self.partition_specs(table, partitions)
        return self.where_specs(session, table, where) if where else None

    def partition_specs(self, table, text: str) -> List[dict]:
        """``'p=1,q=a;p=2'`` → one dict per spec, values typed as the partition columns; a quoted
        value (``dt='2024-01-01'``) is the text inside the quotes, as Spark reads a literal."""
        keys = {k.lower(): k for k in table.schema.partition_keys}
        specs = []
        for part in text.split(";"):
            spec = {}
            for item in part.split(","):
                key, eq, value = item.partition("=")
                key = keys.get(key.strip().lower())
                if not eq or key is None:
                    raise self.fail(f"partitions must be 'key=value,...;...' over partition columns "
                                    f"({', '.join(table.schema.partition_keys)}), got '{text}'")
                value = _unquoted(value.strip())
                spec[key] = None if value == table.schema.options.get("partition.default-name") else value
            specs.append(spec_values(table.schema, spec))
        return specs

    def check_where_columns(self, session, where: str, keys: List[str]) -> None:
        """A column that is not a partition key fails here, before Spark (which would log the error)."""
        node = session.parse_expression(where)
        if node is None:
            return  # Spark's parser judges it
        known = {k.lower() for k in keys}
        others = sorted({c.name for c in node.find_all(exp.Column) if c.name.lower() not in known})
        if others:
            raise self.fail(f"where '{where}' may only use partition columns ({', '.join(keys)}), "
                            f"not {', '.join(others)}")

    def where_specs(self, session, table, where: str) -> List[dict]:
        """The table's partitions (latest snapshot) for which Spark finds ``where`` true."""
        import pyarrow as pa
        keys = table.schema.partition_keys
        fields = table.schema.fields_of(keys)
        types = [f.type for f in fields]
        parts = {e.partition for e in table.new_scan().plan_entries()}
        rows = [binary_row.from_bytes(p, types) for p in parts]
        data = pa.Table.from_arrays([pa.array([r[i] for r in rows], f.type.to_arrow()) for i, f in enumerate(fields)],
                                    names=keys)
        if not rows:
            return []
        self.check_where_columns(session, where, keys)
        df = session.spark.createDataFrame(to_spark_arrow(data, fields), schema=spark_ddl(fields))
        try:
            chosen = df.where(where).collect()
        except Exception as e:  # Spark's analysis error: a column that is not a partition key, bad syntax
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise self.fail(f"where '{where}' must be a predicate on partition columns "
                            f"({', '.join(keys)}): {first}") from None
        return [dict(zip(keys, row)) for row in chosen]


def _unquoted(value: str) -> str:
    """``'x'`` / ``"x"`` → ``x``; other text as it is."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def lookup(name: str) -> type:
    """The procedure class ``name`` (case-insensitive); an unknown name fails naming the closest."""
    cls = PROCEDURES.get(name.lower())
    if cls is None:
        close = difflib.get_close_matches(name.lower(), sorted(PROCEDURES), n=3, cutoff=0.6)
        hint = f"did you mean {', '.join('sys.' + c for c in close)}?" if close else "SHOW PROCEDURES lists them"
        raise ProcedureError(f"unknown procedure 'sys.{name}' ({hint})")
    return cls


def bind(cls, positional: Sequence[Any], named: Sequence[Tuple[str, Any]]) -> Dict[str, Any]:
    """Arguments as written (positional values, then ``name => value`` pairs) → every parameter by
    name, defaults filled in. Names match case-insensitively; values are cast as Spark casts a
    procedure argument (see :func:`cast`)."""
    params = cls.parameters
    if positional and named:
        raise cls.fail("named and positional arguments cannot be mixed")
    if len(positional) > len(params):
        raise cls.fail(f"{len(positional)} positional arguments given, at most {len(params)} accepted")
    given: Dict[str, Any] = {p.name: v for p, v in zip(params, positional)}
    by_name = {p.name.lower(): p for p in params}
    for key, value in named:
        p = by_name.get(key.lower())
        if p is None:
            raise cls.fail(f"unknown argument '{key}'")
        if p.name in given:
            raise cls.fail(f"argument '{p.name}' given twice")
        given[p.name] = value
    out = {}
    for p in params:
        value = given.get(p.name)
        if value is None and p.required:
            raise cls.fail(f"missing argument '{p.name}'")
        out[p.name] = p.default if value is None else cast(cls, p, value)
    return out


def cast(cls, p: Parameter, value: Any) -> Any:
    """``value`` as parameter ``p``'s type, as paimon-spark's PaimonProcedureResolver casts a CALL
    argument: only where Spark's ``Cast.canUpCast`` allows it (an integer or a boolean for a STRING,
    an INT for a BIGINT). A string for a number or a boolean fails as there: ``Cannot cast
    StringType to LongType of snapshot.``"""
    t = p.type
    if t == "STRING" and isinstance(value, (str, int)):
        return ("true" if value else "false") if isinstance(value, bool) else str(value)
    if t in ("INT", "BIGINT") and isinstance(value, int) and not isinstance(value, bool):
        return _in_range(cls, p, value)
    if t == "BOOLEAN" and isinstance(value, bool):
        return value
    if t.startswith("MAP") and isinstance(value, dict):
        return value
    if isinstance(value, str) and t in _SPARK_TYPES:
        raise cls.fail(f"Cannot cast StringType to {_SPARK_TYPES[t]} of {p.name}.")
    raise cls.fail(f"argument '{p.name}' must be {t}, got {_literal_text(value)}")


_SPARK_TYPES = {"INT": "IntegerType", "BIGINT": "LongType", "BOOLEAN": "BooleanType"}


def _in_range(cls, p: Parameter, v: int) -> int:
    bits = 31 if p.type == "INT" else 63
    if not -(1 << bits) <= v < (1 << bits):
        raise cls.fail(f"argument '{p.name}' = {v} is out of range for {p.type}")
    return v


def _literal_text(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, dict):
        return "map(" + ", ".join(f"'{k}', '{v}'" for k, v in value.items()) + ")"
    return str(value)


def describe_lines(cls) -> List[str]:
    """``DESCRIBE PROCEDURE``: lines as Spark's DESCRIBE FUNCTION shows a function."""
    return [f"Procedure: sys.{cls.name}", f"Signature: {cls.signature()}",
            f"Output: {', '.join(f'{f.name} {f.type}' for f in cls.output)}", f"Description: {cls.description}"]
