"""ALTER TABLE on Paimon tables: schema evolution, options, renames, and tags; ALTER DATABASE.

sqlglot parses most forms into ``exp.Alter`` whose actions map one-to-one onto schema changes
(a dispatch table by action type). The forms it leaves as raw commands — ``ALTER COLUMN c FIRST |
AFTER x``, ``ALTER COLUMN s.f TYPE | COMMENT | DROP NOT NULL`` on a nested field, ``UNSET
TBLPROPERTIES``, Paimon's tag statements (``CREATE [OR REPLACE] TAG``, ``REPLACE TAG``, ``DELETE
TAG``, ``RENAME TAG``) and ``ALTER DATABASE db SET DBPROPERTIES`` — are matched by patterns. A
column is named by its path (``s.f``: field f of struct column s). Every column or option change
commits one new schema (``schema-(N+1)``); a failed change commits nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import List, Tuple

from sqlglot import exp

from paimon_sql.data.types import paimon_type_from_sql
from paimon_sql.exceptions import DatabaseNotFoundError, PaimonError, TableAlreadyExistsError
from paimon_sql.iceberg import alter as iceberg_alter
from paimon_sql.schema import schema_change as sc
from paimon_sql.snapshot.tag_manager import find_snapshot
from paimon_sql.sql import describe, parse, show
from paimon_sql.sql.ddl import _columns, _literal_text
from paimon_sql.table import format_table
from paimon_sql.table import materialized_table as mt
from paimon_sql.table.object_table import ObjectTable
from paimon_sql.tag.tag_auto_creation import delete_tag

# -- exp.Alter actions -> schema changes ------------------------------------------------------


def column_path(node: exp.Expression) -> Tuple[str, ...]:
    """The names a column reference spells (``s.f`` → ('s', 'f'))."""
    if isinstance(node, exp.Dot):
        return column_path(node.this) + column_path(node.expression)
    if isinstance(node, exp.Column):
        return tuple(p.name for p in node.parts)
    return (node.name,)


def _name(path: Tuple[str, ...]) -> sc.ColumnName:
    return path if len(path) > 1 else path[0]


def _add(action: exp.ColumnDef) -> List[sc.SchemaChange]:
    path = column_path(action.this)
    leaf = action.copy()
    leaf.set("this", exp.to_identifier(path[-1]))
    (f,), _ = _columns(exp.Schema(expressions=[leaf]))
    pos = action.args.get("position")
    position = None
    if pos is not None:
        where = pos.args.get("position", "").upper()
        position = "FIRST" if where == "FIRST" else f"AFTER {pos.this.name}"
    return [sc.AddColumn(_name(path), f.type, f.description, position)]


def _add_many(action: exp.Schema) -> List[sc.SchemaChange]:
    return [c for col in action.expressions for c in _add(col)]


def _rename_column(action: exp.RenameColumn) -> List[sc.SchemaChange]:
    return [sc.RenameColumn(_name(column_path(action.this)), action.args["to"].name)]


def _drop(action: exp.Drop) -> List[sc.SchemaChange]:
    if (action.args.get("kind") or "").upper() not in ("COLUMN", "COLUMNS"):
        raise PaimonError(f"ALTER TABLE ... DROP {action.args.get('kind')} is not supported on Paimon tables")
    names = []
    for t in action.args.get("tables") or []:
        names += [column_path(e) for e in t.expressions] if isinstance(t, exp.Schema) else [column_path(t)]
    return [sc.DropColumn(_name(n)) for n in names]


def _alter_column(action: exp.AlterColumn) -> List[sc.SchemaChange]:
    name = _name(column_path(action.this))
    if action.args.get("dtype") is not None:
        return [sc.UpdateColumnType(name, paimon_type_from_sql(action.args["dtype"].sql("spark")))]
    if action.args.get("comment") is not None:
        return [sc.UpdateColumnComment(name, _literal_text(action.args["comment"]))]
    if action.args.get("allow_null") is not None:  # DROP NOT NULL / SET NOT NULL
        return [sc.UpdateColumnNullability(name, bool(action.args["allow_null"]))]
    raise PaimonError(f"ALTER COLUMN {sc.dotted(name)}: only TYPE, COMMENT, DROP NOT NULL, FIRST and AFTER "
                      "are supported")


def _refuse_reserved(key: str) -> None:
    error = describe.refused_property(key)
    if error:
        raise PaimonError(error)


def _set(action: exp.AlterSet) -> List[sc.SchemaChange]:
    out = []
    for props in action.expressions:
        for p in props.expressions if isinstance(props, exp.Properties) else [props]:
            key, value = _literal_text(p.this), _literal_text(p.args["value"])
            _refuse_reserved(key)
            out.append(sc.UpdateComment(value) if key == "comment" else sc.SetOption(key, value))
    return out


# SET LOCATION / SERDE / FILEFORMAT ...: a table lives where its catalog puts it, its files are Paimon's
_SET_OTHER = tuple(k for k in exp.AlterSet.arg_types if k != "expressions")
_ACTIONS = {exp.ColumnDef: _add, exp.Schema: _add_many, exp.RenameColumn: _rename_column, exp.Drop: _drop,
            exp.AlterColumn: _alter_column, exp.AlterSet: _set}


def alter(session, node: exp.Alter):
    table = session.find_table(node.this)
    if table is None:
        return session.passthrough()
    actions = node.args.get("actions") or []
    renames = [a for a in actions if isinstance(a, exp.AlterRename)]
    if renames:
        if len(actions) > 1:
            raise PaimonError("ALTER TABLE ... RENAME TO cannot be combined with other changes")
        target = renames[0].this
        new = session.identifier(exp.Table(this=target.this, db=target.args.get("db") or node.this.args.get("db")))
        _check_rename_target(session, new)
        session.catalog.rename_table(session.identifier(node.this), new)
        return None
    if any(isinstance(a, exp.AddPartition) for a in actions):
        # paimon-spark: "Create partition is not supported"; a partition exists once rows are written to it
        raise PaimonError(f"ALTER TABLE ... ADD PARTITION is not supported on Paimon table {table.name}: a partition "
                          "is created by writing rows into it")
    drops = [a for a in actions if isinstance(a, exp.DropPartition)]
    if drops:
        if len(drops) < len(actions):
            raise PaimonError("ALTER TABLE ... DROP PARTITION cannot be combined with other changes")
        format_table.refuse(table, "ALTER TABLE ... DROP PARTITION")
        return _drop_partitions(table, drops)
    changes = []
    for action in actions:
        handler = _ACTIONS.get(type(action))
        if handler is None or (isinstance(action, exp.AlterSet) and any(action.args.get(k) for k in _SET_OTHER)):
            raise PaimonError(f"unsupported ALTER TABLE action on Paimon table {table.name}: {action.sql('spark')}")
        changes += handler(action)
    _commit(table, changes)
    return None


def _check_rename_target(session, new) -> None:
    """Spark's errors for a new name that is taken or in a database the warehouse lacks (paimon-spark
    would make that database by renaming into it)."""
    if not session.catalog.database_exists(new.database):
        raise DatabaseNotFoundError(f"[SCHEMA_NOT_FOUND] The schema `{new.database}` cannot be found. Verify the "
                                    "spelling and correctness of the schema and catalog.")
    if session.catalog.table_exists(new) or session.catalog.view_exists(new):
        raise TableAlreadyExistsError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view {new} because it "
                                      "already exists.")


def _drop_partitions(table, drops: List[exp.DropPartition]) -> None:
    """``DROP [IF EXISTS] PARTITION (k = v, ...)[, PARTITION (...)]``: one OVERWRITE snapshot that
    removes every file of those partitions (Paimon's dropPartitions), as paimon-spark's
    PaimonDropPartitionsExec: a spec naming every partition column must name a partition that
    exists, unless IF EXISTS; a spec naming some of them drops whatever partitions it matches."""
    keys = table.schema.partition_keys
    by_lower = {k.lower(): k for k in keys}
    specs = []
    for drop in drops:
        for part in drop.expressions:
            spec = {by_lower.get(e.this.name.lower(), e.this.name): _spec_literal(e.expression)
                    for e in part.expressions}
            unknown = [k for k in spec if k not in keys]
            if unknown:
                raise PaimonError(f"[PARTITIONS_NOT_FOUND] The partition(s) `{unknown[0]}` cannot be found in table "
                                  f"{table.name}")
            if len(spec) < len(keys) or table.has_partition(spec):
                specs.append(spec)
            elif not drop.args.get("exists"):
                shown = ", ".join(f"{k} = {v}" for k, v in spec.items())
                raise PaimonError(f"[PARTITIONS_NOT_FOUND] The partition(s) PARTITION ({shown}) cannot be found in "
                                  f"table {table.name}")
    if specs:
        table.new_commit().drop_partitions(specs)


def _spec_literal(value: exp.Expression):
    return None if isinstance(value, exp.Null) else value.this if value.is_string else value.to_py()


# -- raw ALTER commands sqlglot does not model ------------------------------------------------

_IDENT = r"`(?:[^`]|``)+`|[\w.\-]+"
_PATH = r"(?:`(?:[^`]|``)+`|[\w\-]+)(?:\.(?:`(?:[^`]|``)+`|[\w\-]+))*"
_COLUMN = rf"(?:ALTER|CHANGE)\s+(?:COLUMN\s+)?(?P<col>{_PATH})"
_UNITS = {"DAYS": "days", "HOURS": "hours", "MINUTES": "minutes"}  # paimon-spark's timeUnit


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def _retain(amount, unit):
    return None if amount is None else dt.timedelta(**{_UNITS[unit.upper()]: int(amount)})


def _create_tag(session, table, m):
    """As paimon-spark's CreateOrReplaceTagExec: a missing tag is created (CREATE, REPLACE, CREATE
    OR REPLACE alike), an existing one replaced by REPLACE, kept by IF NOT EXISTS, else an error.
    ``AS OF VERSION n`` may name an expired snapshot a tag still keeps."""
    name = _unquote(m.group("tag"))
    replace = bool(m.group("or")) or m.group("verb").upper() == "REPLACE"
    version = m.group("version")
    snapshot = find_snapshot(table, None if version is None else int(version))
    table.tag_manager.create(name, snapshot, _retain(m.group("amount"), m.group("unit")), replace=replace,
                             ignore_if_exists=bool(m.group("ine")))


def _delete_tag(session, table, m):
    """As CALL sys.delete_tag: the files only the tag still named go with it (Paimon's TagDeletion);
    a missing tag is passed over, with or without IF EXISTS, as in paimon-spark."""
    for name in _unquote(m.group("tags")).split(","):
        delete_tag(table, name.strip())


def _rename_tag(session, table, m):
    table.tag_manager.rename(_unquote(m.group("old")), _unquote(m.group("new")))


def _path_text(text: str) -> sc.ColumnName:
    """A column path as written in a raw command (``s.f``, ```a b`.c``)."""
    parts = [q.replace("``", "`") if q else p for q, p in re.findall(r"`((?:[^`]|``)+)`|([^.`\s]+)", text)]
    return _name(tuple(parts))


def _column_position(session, table, m):
    where = "FIRST" if m.group("first") else f"AFTER {_unquote(m.group('after'))}"
    _commit(table, [sc.UpdateColumnPosition(_path_text(m.group("col")), where)])


def _nested_column(session, table, m):
    """ALTER COLUMN <path> TYPE t | COMMENT 'c' | DROP NOT NULL | SET NOT NULL, which sqlglot reads
    only for top-level columns."""
    name = _path_text(m.group("col"))
    if m.group("type"):
        change = sc.UpdateColumnType(name, paimon_type_from_sql(m.group("type")))
    elif m.group("comment"):
        change = sc.UpdateColumnComment(name, show.string_literal(m.group("comment")))
    else:
        change = sc.UpdateColumnNullability(name, m.group("null").upper() == "DROP")
    _commit(table, [change])


def _unset(session, table, m):
    keys = re.findall(r"'((?:[^'\\]|\\.)*)'", m.group("keys"))
    for key in keys:
        _refuse_reserved(key)
    _commit(table, [sc.UpdateComment(None) if k == "comment" else sc.RemoveOption(k)
                                         for k in keys])


def _commit(table, changes: List[sc.SchemaChange]) -> None:
    """Commit ALTER TABLE's changes; a materialized table's columns are its query's, so only
    ALTER MATERIALIZED TABLE ... AS changes them, and an object table's are Paimon's fixed ones
    (options and the comment may change)."""
    columns = not all(isinstance(c, (sc.SetOption, sc.RemoveOption, sc.UpdateComment)) for c in changes)
    if columns and mt.is_materialized(table):
        raise PaimonError(f"ALTER TABLE on the columns of materialized table {table.name} is not supported: they "
                          "are its query's (use ALTER MATERIALIZED TABLE ... AS <query>)")
    if columns and isinstance(table, ObjectTable):
        raise PaimonError(f"ALTER TABLE on the columns of object table {table.name} is not supported: they are "
                          "Paimon's, one per file attribute its refresh lists")
    definition = [c.key for c in changes if isinstance(c, (sc.SetOption, sc.RemoveOption)) and mt.is_definition(c.key)]
    if mt.is_materialized(table) and definition:
        raise PaimonError(f"ALTER TABLE on option '{definition[0]}' of materialized table {table.name} is not "
                          "supported: ALTER MATERIALIZED TABLE ... AS <query> | SUSPEND | RESUME changes its definition")
    iceberg_alter.commit_changes(table, changes)


_COMMANDS = [
    (re.compile(r"(?P<verb>CREATE|REPLACE)(?P<or>\s+OR\s+REPLACE)?\s+TAG(?P<ine>\s+IF\s+NOT\s+EXISTS)?\s+"
                rf"(?P<tag>{_IDENT})(?:\s+AS\s+OF\s+VERSION\s+(?P<version>\d+))?"
                r"(?:\s+RETAIN\s+(?P<amount>\d+)\s+(?P<unit>DAYS|HOURS|MINUTES))?", re.I | re.S),
     _create_tag),
    (re.compile(r"DELETE\s+TAG(?P<ie>\s+IF\s+EXISTS)?\s+(?P<tags>`[^`]+`|[\w,.\-\s]+?)", re.I | re.S), _delete_tag),
    (re.compile(rf"RENAME\s+TAG\s+(?P<old>{_IDENT})\s+TO\s+(?P<new>{_IDENT})", re.I | re.S), _rename_tag),
    (re.compile(rf"{_COLUMN}\s+(?:(?P<first>FIRST)|AFTER\s+(?P<after>{_IDENT}))", re.I | re.S), _column_position),
    (re.compile(rf"{_COLUMN}\s+(?:TYPE\s+(?P<type>.+)|COMMENT\s+(?P<comment>{show.STRING})"
                r"|(?P<null>DROP|SET)\s+NOT\s+NULL)", re.I | re.S), _nested_column),
    (re.compile(r"UNSET\s+TBLPROPERTIES\s*(?:IF\s+EXISTS\s*)?\((?P<keys>.*)\)", re.I | re.S), _unset),
]
_ALTER_TABLE = re.compile(rf"TABLE\s+({_IDENT})\s+(.*)", re.I | re.S)


_ALTER_DATABASE = re.compile(rf"(?:DATABASE|SCHEMA|NAMESPACE)\s+(?P<db>{_IDENT})\s+SET\s+(?:DB)?PROPERTIES\s*"
                             r"\((?P<props>.*)\)", re.I | re.S)
_PROPERTY = re.compile(rf"({show.STRING}|[\w.\-]+)\s*=?\s*({show.STRING})")


def _alter_database(session, m):
    """ALTER DATABASE db SET DBPROPERTIES | PROPERTIES (...) of a warehouse database: the properties
    are stored with it (reserved ones are refused as Spark refuses them); others are Spark's."""
    db = session.database_name(_unquote(m.group("db")))
    if db is None:
        return session.passthrough()
    props = {}
    for key, value in _PROPERTY.findall(m.group("props")):
        key = show.string_literal(key) if key[0] in "'\"" else key
        error = describe.reserved_property(key)
        if error:
            raise PaimonError(error)
        props[key] = show.string_literal(value)
    session.catalog.alter_database(db, props)
    return None


def alter_command(session, text: str):
    """``ALTER TABLE t <rest>`` (and ALTER DATABASE) that sqlglot left as a raw command; Spark's
    when the table or database is not ours."""
    m = _ALTER_DATABASE.fullmatch(text.strip())
    if m:
        return _alter_database(session, m)
    m = _ALTER_TABLE.fullmatch(text.strip())
    if not m:
        return session.passthrough()
    target = parse.table_reference(m.group(1))
    table = session.find_table(target)
    if table is None:
        return session.passthrough()
    rest = m.group(2).strip()
    for pattern, handler in _COMMANDS:
        cm = pattern.fullmatch(rest)
        if cm:
            handler(session, table, cm)
            return None
    raise PaimonError(f"unsupported ALTER TABLE statement on Paimon table {table.name}: {rest}")


def show_tags(session, text: str):
    """``SHOW TAGS t``: tag names in name order, as paimon-spark's ShowTagsExec."""
    target = parse.table_reference(text)
    table = session.find_table(target)
    if table is None:
        raise PaimonError(f"SHOW TAGS: table {text.strip()} is not a Paimon table")
    return session.rows([(n,) for n in sorted(table.tag_manager.names())], ["tag"])
