"""One process of a concurrency test of the catalog suite: ``python catalog_worker.py '<json>'``.

It loads the catalog (``warehouse``, ``options``), writes ``<barrier>/ready-<proc>`` and waits for
``<barrier>/go``, so that the processes of a test act at the same moment, then:

- ``create``: creates tables ``db.t0`` .. ``db.t<names - 1>``, each with one column ``c<proc>`` (so the
  winner's schema is known), racing the other ``procs`` processes for every name: before each name
  the processes meet again (``<barrier>/t<n>-<proc>``), so every race starts together;
- ``commit``: appends ``commits`` single-row snapshots to ``db.t`` (ids ``proc * 1000 + n``) under
  commit user ``p<proc>``.

It prints one JSON line: ``create``: ``{name: "ok" | [error class, message]}``; ``commit``: ``"ok"``.
A PaimonError of a commit is ``[error class, message]`` too.
Anything else is a bug: its traceback goes to stderr and the exit status is 1.
"""

import json
import os
import sys
import time

import pyarrow as pa

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import PaimonError


def main(config: dict) -> None:
    catalog = load_catalog(config["warehouse"], config["options"])
    proc, barrier = config["proc"], config["barrier"]
    open(os.path.join(barrier, f"ready-{proc}"), "w").close()
    wait_for(lambda: os.path.exists(os.path.join(barrier, "go")))
    if config["op"] == "create":
        print(json.dumps({f"t{n}": create(catalog, f"t{n}", config) for n in range(config["names"])}))
    else:
        print(json.dumps(attempt(lambda: commit(catalog.get_table("db.t"), proc, config["commits"]))))


def wait_for(condition) -> None:
    deadline = time.time() + 60
    while not condition():
        if time.time() > deadline:
            raise TimeoutError("the other processes did not come")
        time.sleep(0.001)


def create(catalog, name: str, config: dict):
    proc, barrier = config["proc"], config["barrier"]
    open(os.path.join(barrier, f"{name}-{proc}"), "w").close()
    wait_for(lambda: len([f for f in os.listdir(barrier) if f.startswith(f"{name}-")]) == config["procs"])
    return attempt(lambda: catalog.create_table_from_arrow(f"db.{name}", pa.schema([(f"c{proc}", pa.int64())])))


def attempt(action):
    try:
        action()
        return "ok"
    except PaimonError as e:
        return [type(e).__name__, str(e)]


def commit(table, proc: int, commits: int) -> None:
    schema = pa.schema([("id", pa.int64())])
    for n in range(commits):
        write = table.new_write()
        write.write_arrow(pa.table({"id": [proc * 1000 + n]}, schema=schema))
        table.new_commit(commit_user=f"p{proc}").commit(write.prepare_commit())


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
