"""Tables: list (by database, with details, across databases), create, get (by name or by id),
alter, replace, drop, rename. Also :func:`load`, how every per-table call finds its table: the
object name ``t`` or ``t$branch_b`` (a branch: its own schemas and snapshots), the grant checked
before the table is looked up, so a refused user learns nothing of what exists. A user with row
filters or column masks on the table gets it with ``query-auth.enabled`` among its options (so
Paimon's clients ask ``/auth`` for the rules, :mod:`query_auth`), and is refused it when a rule
cannot be sent.

Caveats: ``tableType`` filters only ``table`` (the tables of another type Paimon lists are not
told apart without loading each); ``register`` (adopting an existing table directory) is 501.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from paimon_sql.access.policy import ADMIN, READ
from paimon_sql.catalog.base import Identifier
from paimon_sql.catalog.rest import schema_changes
from paimon_sql.exceptions import AccessDeniedError
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import TABLE, RestError, not_found
from paimon_sql.server.rest.paging import like, page
from paimon_sql.server.rest.query_auth import OPTION, AuthResult, NotSendable, convert
from paimon_sql.server.rest.state import DATABASE_PATH, Call, field_of
from paimon_sql.table.table import FileStoreTable

BRANCH_PREFIX = "branch_"


def split_object(database: str, obj: str) -> Tuple[str, Optional[str]]:
    """(table, branch or None) of an object name ``t`` / ``t$branch_b``; a system table is not a REST table."""
    name, sep, rest = obj.partition("$")
    if not sep:
        return obj, None
    if rest.startswith(BRANCH_PREFIX) and "$" not in rest:
        return name, rest[len(BRANCH_PREFIX):]
    raise not_found(TABLE, obj, f"table {database}.{obj} is not served over REST (system tables are read by "
                                "their clients from the table's files)")


def load(call: Call, privilege: str) -> Tuple[str, str, FileStoreTable]:
    """(database, table name, table on the object's branch) of the call's ``db`` and ``table``,
    once the caller holds ``privilege`` on it."""
    db, obj = call.params["db"], call.params["table"]
    name, branch = split_object(db, obj)
    call.require(privilege, db, name)
    table = call.state.catalog.get_table(Identifier(db, name))
    if branch is not None and branch != MAIN_BRANCH:
        if not table.branch_manager.exists(branch):
            raise not_found(TABLE, obj, f"branch '{branch}' of table {db}.{name} does not exist")
        table = table.switch_to_branch(branch)
    auth_result(call, db, name, table)
    return db, name, table


def auth_result(call: Call, db: str, name: str, table: FileStoreTable) -> Optional[AuthResult]:
    """The caller's rules on the table as Paimon's query auth (None without rules); a rule that
    cannot be sent refuses the table."""
    rules = call.state.grants.rules(call.caller, db, name)
    if rules is None:
        return None
    try:
        return convert(rules, table.schema)
    except NotSendable as e:
        raise AccessDeniedError(f"permission denied: user '{call.caller.user}' has {e} on table {db}.{name}, "
                                "which Paimon's query auth cannot express, so the REST catalog refuses the table")


def _response(call: Call, db: str, name: str, obj: str, table: FileStoreTable) -> Dict[str, Any]:
    """``GetTableResponse``, with ``query-auth.enabled`` for a caller with rules on the table."""
    answer = wire.table_response(call.state.catalog, db, name, obj, table)
    if call.state.grants.rules(call.caller, db, name) is not None:
        answer["schema"]["options"][OPTION] = "true"
    return answer


def _readable(call: Call, db: str) -> List[str]:
    names = call.state.catalog.list_tables(db)
    pattern = like(call.query.get("tableNamePattern"))
    wanted = call.query.get("tableType")
    if wanted and wanted.lower() != "table":
        return []
    return [t for t in names if pattern(t) and call.state.grants.may_read(call.caller, db, t)]


def list_tables(call: Call) -> Dict[str, Any]:
    db = call.params["db"]
    return page(((t, t) for t in _readable(call, db)), call.query, "tables")


def table_details(call: Call) -> Dict[str, Any]:
    db = call.params["db"]
    answer = page(((t, t) for t in _readable(call, db)), call.query, "tableDetails")
    catalog = call.state.catalog
    answer["tableDetails"] = [_response(call, db, t, t, catalog.get_table(Identifier(db, t)))
                              for t in answer["tableDetails"]]
    return answer


def list_tables_globally(call: Call) -> Dict[str, Any]:
    catalog, dbs = call.state.catalog, like(call.query.get("databaseNamePattern"))
    found = []
    for db in catalog.list_databases():
        if dbs(db):
            found += [(f"{db}.{t}", {"database": db, "object": t}) for t in _readable(call, db)]
    return page(found, call.query, "tables")


def get_table(call: Call) -> Dict[str, Any]:
    db, name, table = load(call, READ)
    return _response(call, db, name, call.params["table"], table)


def get_table_by_id(call: Call) -> Dict[str, Any]:
    """The id is ``<db>.<table>.<millis>``; a name with dots is tried at each of them."""
    table_id = call.params["id"]
    full, _, _ = table_id.rpartition(".")
    parts = full.split(".")
    catalog = call.state.catalog
    for i in range(1, len(parts)):
        db, name = ".".join(parts[:i]), ".".join(parts[i:])
        try:
            if not catalog.table_exists(Identifier(db, name)):
                continue
        except ValueError:  # not a valid name split
            continue
        call.params.update(db=db, table=name)
        answer = get_table(call)
        if answer["id"] == table_id:
            return answer
    raise not_found(TABLE, table_id, f"no table has id {table_id}")


def create_table(call: Call) -> Dict[str, Any]:
    body = call.json()
    db = call.params["db"]
    obj_db, name = wire.identifier(body, "identifier")
    if obj_db != db:
        raise RestError(400, f"identifier names database {obj_db}, the path {db}")
    call.require(ADMIN, db)
    call.require(ADMIN, db, name)
    call.state.catalog.create_table(Identifier(db, name), wire.new_table_schema(field_of(body, "schema", dict)))
    return {}


def alter_table(call: Call) -> Dict[str, Any]:
    _, _, table = load(call, ADMIN)
    items = field_of(call.json(), "changes", list)
    table.schema_manager.commit_changes(schema_changes.from_json(items, table.schema))
    return {}


def replace_table(call: Call) -> Dict[str, Any]:
    db, name, _ = load(call, ADMIN)
    call.state.catalog.replace_table(Identifier(db, name), wire.new_table_schema(field_of(call.json(), "schema", dict)))
    return {}


def drop_table(call: Call) -> Dict[str, Any]:
    db, obj = call.params["db"], call.params["table"]
    name, branch = split_object(db, obj)
    if branch is not None:
        raise RestError(400, f"{db}.{obj} is a branch: drop it through its table's branches")
    call.require(ADMIN, db, name)
    call.state.catalog.drop_table(Identifier(db, name))
    return {}


def rename_table(call: Call) -> Dict[str, Any]:
    call.state.catalog.rename_table(*wire.renamed(call))
    return {}


def register_table(call: Call) -> Dict[str, Any]:
    raise RestError(501, "registering an existing table directory is not supported by paimon-sql's REST catalog")


TABLE_PATH = DATABASE_PATH + r"/tables/(?P<table>[^/]+)"  # the path of one table, its calls below it
ROUTES = [
    ("GET", DATABASE_PATH + r"/tables", list_tables),
    ("POST", DATABASE_PATH + r"/tables", create_table),
    ("GET", DATABASE_PATH + r"/table-details", table_details),
    ("POST", DATABASE_PATH + r"/register", register_table),
    ("GET", r"/tables", list_tables_globally),
    ("POST", r"/tables/rename", rename_table),
    ("GET", r"/tables/id/(?P<id>[^/]+)", get_table_by_id),
    ("GET", TABLE_PATH, get_table),
    ("POST", TABLE_PATH, alter_table),
    ("DELETE", TABLE_PATH, drop_table),
    ("POST", TABLE_PATH + "/replace", replace_table),
]
