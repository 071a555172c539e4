"""A real PostgreSQL server for tests: Debian's ``postgresql`` package, a fresh cluster in a temp
directory, listening on 127.0.0.1 on a free port, with a password login.

    server = start_postgres()          # or: with postgres_server() as server:
    server.options                     # {"uri": "jdbc:postgresql://127.0.0.1:<port>/paimon", "jdbc.user": ..., ...}
    uri, user, password, stop = server
    stop()

PostgreSQL refuses to run as root: as root the cluster belongs to the ``postgres`` user (made by
the package) or, failing that, ``nobody``; its directory is made in the system temp dir, which
that user can reach.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from typing import Callable, NamedTuple, Optional

DATABASE = "paimon"
USER = "paimon"


class DatabaseServer(NamedTuple):
    """A running test database server (also mysql_server.py's)."""
    uri: str
    user: str
    password: str
    stop: Callable[[], None]

    @property
    def options(self) -> dict:
        """The catalog options of a JDBC catalog on this server."""
        return {"metastore": "jdbc", "uri": self.uri, "jdbc.user": self.user, "jdbc.password": self.password}


def bin_dir() -> str:
    """The server's programs (initdb, pg_ctl, postgres) of the newest installed version."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    if initdb is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    return os.path.dirname(os.path.realpath(initdb))


def _run_as() -> Optional[pwd.struct_passwd]:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and neither user 'postgres' nor 'nobody' exists to run PostgreSQL")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_postgres(tmpdir: Optional[str] = None) -> DatabaseServer:
    """Start a server; ``tmpdir``: where to make its directory when not running as root."""
    user = _run_as()
    base = tempfile.mkdtemp(prefix="paimon-pg-", dir=None if user else tmpdir)
    data, password = os.path.join(base, "data"), secrets.token_hex(12)
    pwfile = os.path.join(base, "pw")
    with open(pwfile, "w") as f:
        f.write(password + "\n")
    if user:
        for path in (base, pwfile):
            os.chown(path, user.pw_uid, user.pw_gid)
    as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}
    tools, port = bin_dir(), _free_port()

    def run(*args):
        subprocess.run(args, check=True, capture_output=True, cwd=base, **as_user)

    try:
        run(f"{tools}/initdb", "-D", data, "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256",
            "-E", "UTF8", "--locale=C")
        run(f"{tools}/pg_ctl", "-D", data, "-l", os.path.join(base, "log"), "-w", "-t", "60", "start",
            "-o", f"-h 127.0.0.1 -p {port} -k {base} -c fsync=off -c max_connections=50")
        env = {**os.environ, "PGPASSWORD": password}
        subprocess.run([f"{tools}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", USER, DATABASE],
                       check=True, capture_output=True, env=env)
    except subprocess.CalledProcessError as e:
        log = os.path.join(base, "log")
        detail = open(log).read()[-2000:] if os.path.exists(log) else ""
        _stop(tools, data, base, as_user)
        raise RuntimeError(f"PostgreSQL did not start: {e.cmd[0]}: {e.stderr.decode(errors='replace')}{detail}") \
            from None
    return DatabaseServer(f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}", USER, password,
                          lambda: _stop(tools, data, base, as_user))


def _stop(tools: str, data: str, base: str, as_user: dict) -> None:
    if os.path.exists(os.path.join(data, "postmaster.pid")):
        subprocess.run([f"{tools}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"], capture_output=True,
                       cwd=base, **as_user)
    shutil.rmtree(base, ignore_errors=True)


@contextmanager
def postgres_server(tmpdir: Optional[str] = None):
    server = start_postgres(tmpdir)
    try:
        yield server
    finally:
        server.stop()
