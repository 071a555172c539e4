"""A real MySQL-protocol server for tests: Debian's ``mariadb-server``, a fresh data directory in a
temp dir, listening on 127.0.0.1 on a free port, with a password login.

    server = start_mysql()             # server.options: the JDBC catalog's options (jdbc:mysql://...)
    server.stop()

As root the server runs as the ``mysql`` user (made by the package) or ``nobody``.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time

from catalog.postgres_server import DatabaseServer, _free_port

DATABASE = "paimon"
USER = "paimon"


def start_mysql() -> DatabaseServer:
    """Start a server; the returned (uri, user, password, stop) is shaped as postgres_server's."""
    import pymysql
    for tool in ("mariadb-install-db", "mariadbd"):
        if not (shutil.which(tool) or os.path.exists(f"/usr/sbin/{tool}")):
            raise RuntimeError(f"{tool} is not installed (apt-get install mariadb-server)")
    user = _run_as()
    base = tempfile.mkdtemp(prefix="paimon-mysql-")
    data, sock = os.path.join(base, "data"), os.path.join(base, "sock")
    port, password = _free_port(), secrets.token_hex(12)
    if user:
        os.chown(base, user.pw_uid, user.pw_gid)
    as_user = [f"--user={user.pw_name}"] if user else []
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}",
                    "--auth-root-authentication-method=normal", *as_user], check=True, capture_output=True)
    server = subprocess.Popen([shutil.which("mariadbd") or "/usr/sbin/mariadbd", "--no-defaults", f"--datadir={data}",
                               f"--port={port}", "--bind-address=127.0.0.1", f"--socket={sock}",
                               f"--log-error={base}/log", *as_user],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop():
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(base, ignore_errors=True)

    deadline = time.monotonic() + 60
    while True:
        try:
            root = pymysql.connect(unix_socket=sock, user="root", autocommit=True)
            break
        except pymysql.err.OperationalError:
            if server.poll() is not None or time.monotonic() > deadline:
                log = open(f"{base}/log").read()[-2000:] if os.path.exists(f"{base}/log") else ""
                stop()
                raise RuntimeError(f"MariaDB did not start: {log}") from None
            time.sleep(0.2)
    with root.cursor() as cur:
        cur.execute(f"CREATE DATABASE {DATABASE}")
        for host in ("localhost", "%"):  # 127.0.0.1 counts as localhost, where an anonymous user would win
            cur.execute(f"CREATE USER '{USER}'@'{host}' IDENTIFIED BY '{password}'")
            cur.execute(f"GRANT ALL ON {DATABASE}.* TO '{USER}'@'{host}'")
    root.close()
    return DatabaseServer(f"jdbc:mysql://127.0.0.1:{port}/{DATABASE}", USER, password, stop)


def _run_as():
    if os.geteuid() != 0:
        return None
    for name in ("mysql", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and neither user 'mysql' nor 'nobody' exists to run MariaDB")
