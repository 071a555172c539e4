"""Paimon's JSON shapes on the server's side: a new table's ``Schema`` read as our TableSchema, a
table or database as ``GetTableResponse`` / ``GetDatabaseResponse``, an ``Identifier``, and a
snapshot as its file holds it (the JSON its client sent, fields we do not model included).

A table's id is Paimon's default table uuid (Java's ``AbstractFileStoreTable.uuid()``): its full
name, a dot, and the creation millis of its earliest schema; so a table dropped and made again
under its name, or renamed, has a new one, and a commit naming the old one is refused. The audit
fields Paimon's clients copy into a table's options are the server's: owner and creator are the
``owner`` database property or ``paimon-sql``, the times those of the first and latest schema.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any, Dict, Tuple

from paimon_sql.access.policy import ADMIN
from paimon_sql.catalog.base import Catalog, Identifier
from paimon_sql.catalog.rest.rest_api import schema_json
from paimon_sql.data.types import DataField
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.server.rest.errors import bad_request
from paimon_sql.server.rest.state import field_of
from paimon_sql.table.table import FileStoreTable

PATH_OPTION = "path"  # where the table lives: the server's to say, answered beside the schema
OWNER = "paimon-sql"


def new_table_schema(d: Dict[str, Any]) -> TableSchema:
    """The first schema of a table made from Paimon's ``Schema`` JSON: validated and numbered as
    :meth:`TableSchema.create` does (as Java's ``Schema`` numbers a new table's fields), primary key
    columns NOT NULL; a ``path`` option is refused, as Java's filesystem catalog refuses one."""
    fields = field_of(d, "fields", list)
    options = field_of(d, "options", dict, optional=True) or {}
    if PATH_OPTION in options:
        raise bad_request("option 'path' cannot be given: the server chooses where a table lives")
    try:
        parsed = [DataField.from_json(f) for f in fields]
    except (KeyError, TypeError, AttributeError) as e:
        raise bad_request(f"schema field is malformed: {type(e).__name__}: {e}") from None
    return TableSchema.create(parsed, field_of(d, "partitionKeys", list, optional=True) or [],
                              field_of(d, "primaryKeys", list, optional=True) or [],
                              {str(k): str(v) for k, v in options.items()}, field_of(d, "comment", str, optional=True))


def identifier(d: Any, key: str) -> Tuple[str, str]:
    """(database, object) of the Identifier JSON ``d[key]``."""
    ident = field_of(d, key, dict)
    return field_of(ident, "database", str), field_of(ident, "object", str)


def renamed(call) -> Tuple[Identifier, Identifier]:
    """(source, destination) of a rename request (``{"source", "destination"}`` identifiers), the
    caller's grants checked: ADMIN on the source, and on the destination's database and name."""
    body = call.json()
    (sdb, sname), (ddb, dname) = identifier(body, "source"), identifier(body, "destination")
    call.require(ADMIN, sdb, sname)
    call.require(ADMIN, ddb)
    call.require(ADMIN, ddb, dname)
    return Identifier(sdb, sname), Identifier(ddb, dname)


def table_uuid(database: str, name: str, table: FileStoreTable) -> str:
    ids = table.schema_manager.list_ids()
    first = table.schema_manager.schema(ids[0]) if ids else table.schema
    return f"{database}.{name}.{first.time_millis}"


def table_response(catalog: Catalog, database: str, name: str, obj: str, table: FileStoreTable) -> Dict[str, Any]:
    """``GetTableResponse`` of ``table`` (table ``name`` of ``database``, asked for as ``obj``:
    ``t`` or ``t$branch_b``)."""
    schema = table.schema
    ids = table.schema_manager.list_ids()
    created = table.schema_manager.schema(ids[0]).time_millis if ids else schema.time_millis
    owner = database_owner(catalog, database)
    body = schema_json(replace(schema, options={k: v for k, v in schema.options.items() if k != PATH_OPTION}))
    return {"id": table_uuid(database, name, table), "database": database, "name": obj, "path": table.path,
            "isExternal": False, "schemaId": schema.id, "schema": body,
            "owner": owner, "createdAt": created, "createdBy": owner, "updatedAt": schema.time_millis,
            "updatedBy": owner}


def database_owner(catalog: Catalog, database: str) -> str:
    return str(catalog.database_properties(database).get("owner") or OWNER)


def database_response(catalog: Catalog, warehouse: str, name: str) -> Dict[str, Any]:
    """``GetDatabaseResponse``: options never null (Java copies them), a stable id."""
    options = {str(k): str(v) for k, v in catalog.database_properties(name).items()}
    location = catalog.database_path(name) if hasattr(catalog, "database_path") else f"{warehouse}/{name}.db"
    owner = options.get("owner") or OWNER
    return {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{warehouse}/{name}")), "name": name, "location": location,
            "options": options, "owner": owner, "createdAt": 0, "createdBy": owner, "updatedAt": 0,
            "updatedBy": owner}


def snapshot_json(table: FileStoreTable, snapshot_id: int) -> Dict[str, Any]:
    """Snapshot ``snapshot_id`` as its file holds it."""
    return json.loads(table.io.read_bytes(table.paths.snapshot_path(snapshot_id)))
