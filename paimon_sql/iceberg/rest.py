"""``metadata.iceberg.storage`` = ``rest-catalog``: each new metadata committed to an Iceberg REST
catalog (Paimon's IcebergRestMetadataCommitter), over the catalog's HTTP API with urllib.

The metadata, manifest lists and manifests are written as for ``hadoop-catalog``; the REST catalog
keeps a table (namespace = the Paimon database, name = the Paimon table's, or
``metadata.iceberg.database`` / ``.table``) whose snapshots name those manifest lists, and writes
its own metadata JSON. As Java does, the table is created with a placeholder schema 0 (empty, or
with the partition columns at their ids so that the server's partition spec keeps them), and the
Paimon schemas follow with ids shifted by one, identical ones merged (an option-only ALTER makes a
schema Iceberg holds once). Each commit then sends, with requirements on the table's uuid, its
main branch and current schema: the new schemas, the new snapshots, the main ref, the tag refs,
the removal of snapshots the metadata no longer holds, the metadata retention properties and the
``metadata.iceberg.table-properties.<name>`` ones (as Paimon's master after 2.0; set while they
differ from the catalog's, never removed: a property no longer set stays as the catalog has it).

Where the catalog's table stands decides what is sent. Behind (its current snapshot is one the
new metadata holds, same manifest list): the snapshots after it, so a commit missed while the
server was down is caught up with its history (Java drops and recreates the table then, keeping
the newest snapshot alone). Empty (created, never committed): everything, as for a new table.
Anything else (ahead of the metadata, or another life of the table: rolled back, dropped and made
again): the catalog's table is dropped (its files kept) and created again.

Format version 3 (row lineage): the catalog takes a snapshot only with a ``first-row-id`` at or past
its table's ``next-row-id``, which it then moves by the snapshot's ``added-rows``. A table it creates
starts at 0, so a first snapshot whose range starts higher (metadata written again after a rollback,
or after Java Paimon 2.0's) would leave the catalog's ``next-row-id`` below ids already handed out:
such a table is registered instead (``register``, Paimon's master's registerAsCurrent), from a
metadata file of the catalog's view of ours (``rest-register-v<N>-<uuid>.metadata.json``).
"""

from __future__ import annotations

import posixpath
import urllib.parse
import urllib.request
import uuid
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from paimon_sql.exceptions import IcebergRestError
from paimon_sql.iceberg.metadata import current_snapshot, read_metadata, to_json
from paimon_sql.io import http_json
from paimon_sql.options.iceberg_options import hive_options, iceberg_options, rest_options
from paimon_sql.read.scan import ScanStore

if TYPE_CHECKING:
    from paimon_sql.options.iceberg_options import IcebergRestOptions

MAIN = "main"
PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"


def commit(table: ScanStore, metadata_path: str) -> None:
    """Bring the REST catalog's table to the metadata just written at ``metadata_path``. The
    table's catalog name is its catalog environment's (``check_publishable`` refuses a table
    opened by its path)."""
    opts = hive_options(table.schema.options)
    committer = table.env.iceberg_hive
    namespace = opts.databases[0] if opts.databases else committer.database
    name = opts.table or committer.table
    client = RestClient(rest_options(table.schema.options))
    _Commit(client, namespace, name, table, metadata_path).run()


class RestClient:
    """The catalog's HTTP API: its config (prefix), OAuth2 client credentials, JSON calls."""

    def __init__(self, opts: IcebergRestOptions):
        self.opts = opts
        self.uri = opts.uri.rstrip("/")
        self.headers = {"Content-Type": "application/json", "X-Client-Version": "paimon-sql",
                        **dict(opts.headers)}
        if opts.token:
            self.headers["Authorization"] = f"Bearer {opts.token}"
        elif opts.credential:
            self.headers["Authorization"] = f"Bearer {self._client_credentials_token()}"
        query = f"?{urllib.parse.urlencode({'warehouse': opts.warehouse})}" if opts.warehouse else ""
        config = self.call("GET", f"{self.uri}/v1/config{query}") or {}
        merged = {**(config.get("defaults") or {}), **({"prefix": opts.prefix} if opts.prefix else {}),
                  **(config.get("overrides") or {})}
        prefix = merged.get("prefix")
        self.base = f"{merged.get('uri', self.uri).rstrip('/')}/v1" + (f"/{http_json.segment(prefix)}" if prefix else "")

    def _client_credentials_token(self) -> str:
        client_id, _, secret = self.opts.credential.rpartition(":")
        form = {"grant_type": "client_credentials", "client_secret": secret, "scope": self.opts.scope}
        if client_id:
            form["client_id"] = client_id
        url = self.opts.oauth2_server_uri or f"{self.uri}/v1/oauth/tokens"
        request = urllib.request.Request(url, urllib.parse.urlencode(form).encode(), method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded",
                                                  **dict(self.opts.headers)})
        answer = self._send(request, "POST", url)
        if not answer or "access_token" not in answer:
            raise IcebergRestError(f"Iceberg REST catalog {url}: the OAuth2 token answer holds no access_token")
        return answer["access_token"]

    def call(self, method: str, url: str, body: Optional[dict] = None, missing_ok: bool = False) -> Optional[dict]:
        """The JSON answer of one call; None for no content, or for 404 when ``missing_ok``."""
        try:
            return self._send(http_json.json_request(method, url, self.headers, body), method, url)
        except IcebergRestError as e:
            if missing_ok and e.status == 404:
                return None
            raise

    @staticmethod
    def _send(request: urllib.request.Request, method: str, url: str) -> Optional[dict]:
        try:
            return http_json.send(request)
        except http_json.HttpError as e:
            if e.status is None:
                raise IcebergRestError(f"Iceberg REST catalog: {method} {url} failed: {e.reason}") from None
            raise IcebergRestError(f"Iceberg REST catalog: {method} {url} failed: {e.status} {_message(e)}",
                                   e.status) from None

    def namespace_url(self, namespace: str) -> str:
        return f"{self.base}/namespaces/{http_json.segment(namespace)}"

    def table_url(self, namespace: str, name: str) -> str:
        return f"{self.namespace_url(namespace)}/tables/{http_json.segment(name)}"


def _message(error: http_json.HttpError) -> str:
    """The catalog's ErrorModel message, else the start of the body, else the status's reason."""
    body = error.body if isinstance(error.body, dict) else {}
    message = (body.get("error") or {}).get("message") if isinstance(body.get("error"), dict) else None
    return message or error.text[:200].strip() or error.reason


class _Commit:
    """One commit of ``metadata`` (our metadata JSON) to the catalog's table ``namespace.name``."""

    def __init__(self, client: RestClient, namespace: str, name: str, table: ScanStore, metadata_path: str):
        self.client, self.namespace, self.name, self.table = client, namespace, name, table
        self.url = client.table_url(namespace, name)
        self.metadata_path = metadata_path
        self.metadata = metadata = read_metadata(table.io, metadata_path)
        self.schemas, self.schema_ids = _rest_schemas(metadata["schemas"])
        self.snapshots = [{**s, "schema-id": self.schema_ids[s.get("schema-id", metadata["current-schema-id"])]}
                          for s in metadata["snapshots"]]
        self.current_schema_id = self.schema_ids[metadata["current-schema-id"]]
        self.spec = _default_spec(metadata)

    def run(self) -> None:
        if self.client.call("GET", self.client.namespace_url(self.namespace), missing_ok=True) is None:
            self._create_namespace()
        loaded = self.client.call("GET", self.url, missing_ok=True)
        current = None if loaded is None else loaded["metadata"].get("current-snapshot-id")
        if loaded is not None and current not in (None, -1) and self._behind(loaded["metadata"], current):
            self._send(loaded["metadata"], new=False)
            return
        if not self._registers():
            if loaded is not None and current not in (None, -1):  # ahead, or another life of the table
                self.client.call("DELETE", f"{self.url}?purgeRequested=false")  # its files kept
                loaded = None  # (rolled back, dropped and made again): made again
            self._send((loaded or self._create())["metadata"], new=True)
            return
        path = self._register_file()
        registered = None
        if loaded is not None:  # Java's probe: a catalog that registers refuses the name while it is taken
            try:
                registered = self._register(path)  # the table went meanwhile
            except IcebergRestError as e:
                if e.status != 409:
                    raise IcebergRestError(f"Iceberg REST catalog table {self.namespace}.{self.name}: format "
                                           f"version 3 metadata whose row ids do not start at 0 is registered, "
                                           f"which the catalog does not do ({e}); its table is left as it "
                                           f"was", e.status) from None
                self.client.call("DELETE", f"{self.url}?purgeRequested=false")  # its files kept
        self._send((registered or self._register(path))["metadata"], new=False)  # what registering leaves out

    def _registers(self) -> bool:
        """Whether the table is registered rather than created: format version 3 with a current
        snapshot whose row ids do not start at 0."""
        return self.metadata["format-version"] >= 3 and bool(current_snapshot(self.metadata).get("first-row-id"))

    def _register_file(self) -> str:
        """The catalog's view of our metadata, to register: schemas as :func:`_rest_schemas`
        numbers them, its main branch; in a new file (never overwritten: a catalog may keep
        naming it)."""
        sid = self.metadata["current-snapshot-id"]
        view = {**self.metadata, "schemas": self.schemas, "current-schema-id": self.current_schema_id,
                "snapshots": self.snapshots,
                "refs": {MAIN: {"snapshot-id": sid, "type": "branch"}, **self.metadata.get("refs", {})}}
        path = posixpath.join(posixpath.dirname(self.metadata_path), f"rest-register-v{sid}-{uuid.uuid4()}.metadata.json")
        self.table.io.try_create(path, to_json(view))
        return path

    def _register(self, path: str) -> dict:
        """The catalog's answer (its table) to registering the metadata file at ``path``."""
        return self.client.call("POST", f"{self.client.namespace_url(self.namespace)}/register",
                                {"name": self.name, "metadata-location": path})

    def _behind(self, rest: dict, current: int) -> bool:
        ours = {s["snapshot-id"]: s for s in self.snapshots}
        theirs = {s["snapshot-id"]: s for s in rest.get("snapshots", [])}
        return current in ours and current <= self.metadata["current-snapshot-id"] and \
            _name(ours[current]["manifest-list"]) == _name(theirs[current]["manifest-list"])

    def _create_namespace(self) -> None:
        try:
            self.client.call("POST", f"{self.client.base}/namespaces",
                             {"namespace": [self.namespace], "properties": {}})
        except IcebergRestError as e:
            if e.status != 409:  # 409: made meanwhile by another commit
                raise

    def _create(self) -> dict:
        """The catalog's table with schema 0 a placeholder: empty, or, for a spec whose columns
        have ids above 0, those columns at their ids among boolean fillers, so that the server's
        fresh ids keep them and the spec is the table's from the start (Java's createTable)."""
        fields = self.spec["fields"]
        schema: dict = {"type": "struct", "fields": []}
        request: dict = {"name": self.name, "properties": {"format-version": str(self.metadata["format-version"])}}
        if fields and all(f["source-id"] > 0 for f in fields):
            current = {f["id"]: f for f in next(s for s in self.metadata["schemas"]
                                                if s["schema-id"] == self.metadata["current-schema-id"])["fields"]}
            by_id = {f["source-id"]: current[f["source-id"]] for f in fields}
            schema["fields"] = [by_id.get(i, {"id": i, "name": f"f{i}", "required": False, "type": "boolean"})
                                for i in range(1, max(by_id) + 1)]
            request["partition-spec"] = {"spec-id": 0, "fields": fields}
        request["schema"] = schema
        url = f"{self.client.namespace_url(self.namespace)}/tables"
        try:
            return self.client.call("POST", url, request)
        except IcebergRestError as e:  # a catalog that assigns no location (AWS Glue): the table's own
            if e.status is None:
                raise
            location = self.metadata["location"]
            for scheme in ("s3a://", "s3n://"):
                location = "s3://" + location[len(scheme):] if location.startswith(scheme) else location
            return self.client.call("POST", url, {**request, "location": location})

    def _send(self, rest: dict, new: bool) -> None:
        """The updates from the catalog's metadata ``rest`` to ours, with their requirements."""
        requirements: List[dict] = [{"type": "assert-table-uuid", "uuid": rest["table-uuid"]}]
        updates: List[dict] = []
        rest_schema = rest["current-schema-id"]
        added = self.schemas if new else [s for s in self.schemas if s["schema-id"] > rest_schema]
        if added or self.current_schema_id != rest_schema:
            requirements += [{"type": "assert-current-schema-id", "current-schema-id": rest_schema},
                             {"type": "assert-last-assigned-field-id",
                              "last-assigned-field-id": rest["last-column-id"]}]
            updates += [{"action": "add-schema", "schema": s} for s in added]
            updates.append({"action": "set-current-schema", "schema-id": self.current_schema_id})
        if new and _spec_key(self.spec) != _spec_key(_default_spec(rest)):
            requirements += [{"type": "assert-default-spec-id", "default-spec-id": rest["default-spec-id"]},
                             {"type": "assert-last-assigned-partition-id",
                              "last-assigned-partition-id": rest["last-partition-id"]}]
            spec_id = max(s["spec-id"] for s in rest["partition-specs"]) + 1
            updates += [{"action": "add-spec", "spec": {"spec-id": spec_id, "fields": self.spec["fields"]}},
                        {"action": "set-default-spec", "spec-id": -1}]
        current = None if new else rest.get("current-snapshot-id")
        requirements.append({"type": "assert-ref-snapshot-id", "ref": MAIN, "snapshot-id": current})
        held = {s["snapshot-id"] for s in rest.get("snapshots", [])}
        if new:  # the current snapshot alone, as Java starts a table
            ours = [s for s in self.snapshots if s["snapshot-id"] == self.metadata["current-snapshot-id"]]
        else:  # every snapshot after the catalog's current one
            ours = [s for s in self.snapshots if s["snapshot-id"] > current and s["snapshot-id"] not in held]
        stale_refs = [r for r in rest.get("refs", {}) if r != MAIN and r not in self.metadata.get("refs", {})]
        updates += [{"action": "remove-snapshot-ref", "ref-name": r} for r in stale_refs]
        updates += [{"action": "add-snapshot", "snapshot": s} for s in ours]
        if current != self.metadata["current-snapshot-id"]:
            updates.append({"action": "set-snapshot-ref", "ref-name": MAIN, "type": "branch",
                            "snapshot-id": self.metadata["current-snapshot-id"]})
        kept = {s["snapshot-id"] for s in self.snapshots}
        removed = sorted(held - kept)
        if removed:
            updates.append({"action": "remove-snapshots", "snapshot-ids": removed})
        live = held & kept | {s["snapshot-id"] for s in ours}
        for name, ref in self.metadata.get("refs", {}).items():
            if ref["snapshot-id"] in live and rest.get("refs", {}).get(name) != ref:
                updates.append({"action": "set-snapshot-ref", "ref-name": name, **ref})
        options = iceberg_options(self.table.schema.options)
        properties = {**dict(options.table_properties),  # metadata.iceberg.table-properties.*
                      PREVIOUS_VERSIONS_MAX: str(options.previous_versions_max),
                      DELETE_AFTER_COMMIT: str(options.delete_after_commit).lower(),
                      **self.metadata.get("properties", {})}  # a name mapping (iceberg/name_mapping.py)
        if any(rest.get("properties", {}).get(k) != v for k, v in properties.items()):
            updates.append({"action": "set-properties", "updates": properties})
        if updates:  # nothing when the catalog holds this metadata already
            self.client.call("POST", self.url, {"requirements": requirements, "updates": updates})


def _rest_schemas(schemas: List[dict]) -> Tuple[List[dict], Dict[int, int]]:
    """The schemas as the catalog holds them after its placeholder schema 0 (Java's
    adjustMetadataForRest): identical ones merged into the first, numbered 1, 2, ... in order;
    and our schema id -> the catalog's."""
    out: List[dict] = []
    ids: Dict[int, int] = {}
    for s in schemas:
        same = next((o for o in out if o["fields"] == s["fields"]), None)
        if same is None:
            same = {**s, "schema-id": len(out) + 1}
            out.append(same)
        ids[s["schema-id"]] = same["schema-id"]
    return out, ids


def _default_spec(metadata: dict) -> dict:
    return next(s for s in metadata["partition-specs"] if s["spec-id"] == metadata.get("default-spec-id", 0))


def _spec_key(spec: dict) -> list:
    return [(f["source-id"], f["transform"], f["name"]) for f in spec["fields"]]


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]
