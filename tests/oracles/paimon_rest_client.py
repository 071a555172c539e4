"""Java Apache Paimon 2.0's RESTCatalog (``metastore = rest``) as a client the tests drive:
tests/interop/java/RestCatalogClientDriver.java, compiled against the Paimon 2.0 bundle
(paimon_java.py), one JVM serving every command until closed.

Each call is one command on one catalog (one RESTCatalog per distinct options, kept in the JVM);
``JavaRestClient.call`` returns its result or raises :class:`JavaRestError` carrying Java's exception
(``error``: "<SimpleClass>: message", ``causes``: its causes, outermost first). The table cache is
off (``cache-enabled`` = false) unless the options say otherwise, so each command sees what the
server holds now, whoever changed it.

Example::

    with JavaRestClient({"uri": uri, "warehouse": WAREHOUSE, "token.provider": "bear", "token": TOKEN}) as java:
        java("create_database", database="db")
        java("create_table", table="db.t", columns=[["id", "BIGINT NOT NULL"], ["v", "STRING"]],
             primary_keys=["id"], options={"bucket": "1"})
        java("write", table="db.t", rows=[[1, "a"]])  # -> the snapshot id it committed
        java("read", table="db.t")                    # -> [[1, "a"]]
"""

import json
from pathlib import Path
from typing import Optional

from oracles.paimon_java import driver_command
from support import LineProcess

DRIVER = Path(__file__).resolve().parent.parent / "interop" / "java" / "RestCatalogClientDriver.java"


def command() -> list:
    """The ``java`` command line of the client's driver (fetched and compiled once)."""
    return driver_command(DRIVER, version="2.0")


class JavaRestError(AssertionError):
    """A command Java Paimon's RESTCatalog threw on: ``error`` and ``causes`` as the driver printed them."""

    def __init__(self, op: str, error: str, causes: list):
        super().__init__(f"Java Paimon RESTCatalog {op} failed: {error}" + "".join(f"\n  caused by {c}" for c in causes))
        self.op, self.error, self.causes = op, error, causes

    @property
    def chain(self) -> str:
        """The exception and its causes as one text (to match an expected class or message anywhere)."""
        return " <- ".join([self.error, *self.causes])


class JavaRestClient:
    """Java Paimon's RESTCatalog on catalog options ``catalog`` (``uri``, ``warehouse``, ``token.provider``,
    ``token``, ...): ``client(op, **args)`` runs one command (RestCatalogClientDriver.java lists them).
    ``on(**options)`` is a client of other options (another server, another token) in the same JVM;
    the JVM ends when the client that started it closes."""

    def __init__(self, catalog: dict, _process=None):
        self.catalog = {"cache-enabled": "false", **catalog}
        self.owner = _process is None
        self.process = _process or LineProcess(command(), "Java Paimon RESTCatalog client",
                                               noise=("SLF4J", "StatusLogger"))

    def on(self, **options) -> "JavaRestClient":
        """This JVM with the catalog options changed by ``options``."""
        return JavaRestClient({**self.catalog, **options}, self.process)

    def call(self, op: str, timeout: float = 300, **args):
        self.process.write(json.dumps({"op": op, "catalog": self.catalog, **args}))
        answer = json.loads(self.process.read_line(timeout))
        if "error" in answer:
            raise JavaRestError(op, answer["error"], answer.get("causes") or [])
        return answer["result"]

    __call__ = call

    def fails(self, op: str, **args) -> JavaRestError:
        """The error Java raised on the command; AssertionError when it succeeded."""
        try:
            result = self.call(op, **args)
        except JavaRestError as e:
            return e
        raise AssertionError(f"Java Paimon RESTCatalog {op} succeeded ({result!r}) where it should have failed")

    def close(self) -> None:
        if self.owner:
            self.process.close()

    def __enter__(self) -> "JavaRestClient":
        return self

    def __exit__(self, *exc) -> Optional[bool]:
        self.close()
        return None
