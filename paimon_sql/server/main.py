"""The ``paimon-sql-server`` command.

    paimon-sql-server --warehouse DIR [--host 127.0.0.1] [--port 10000] [--auth nosasl|none|plain]
                      [--password-file F] [--policy-file F] [--transport binary|http] [--http-path cliservice]
                      [--ssl-cert F --ssl-key F] [--query-timeout SECONDS] [--refresh-interval SECONDS]
                      [--idle-session-timeout 6h] [--idle-operation-timeout 3h]
                      [--max-sessions-per-user N] [--max-sessions-per-ip N] [--max-planning-statements N]
                      [--master URL] [--audit-log F [--audit-log-max-bytes N] [--audit-log-backups K]]
                      [--auth ldap --ldap-url URL (--ldap-user-dn-pattern P | --ldap-base-dn DN) [--ldap-...]]
                      [--rest-port P (--rest-token-file F | --auth plain|ldap) [--rest-token-lifetime 12h]]
                      [--conf k=v]... [--catalog k=v]... [--catalog-file F]
    paimon-sql-server adduser --password-file F USER      (the password is read from stdin)

One Spark session serves every client; each client session gets its own view of it (current database,
SQL conf). Bad options are refused with one line before Spark starts. Every ``--refresh-interval``
seconds a background thread refreshes the materialized tables whose freshness has lapsed (as
``paimon-sql refresh`` does once), on a Spark session of its own. With ``--rest-port`` the server also
serves Apache Paimon's REST catalog API over the same catalog (:mod:`paimon_sql.server.rest`).
"""

import argparse
import gc
import getpass
import ipaddress
import logging
import signal
import sys
import threading
from typing import Callable, List, Optional

from paimon_sql import cli
from paimon_sql.access.policy import PolicyFile
from paimon_sql.exceptions import PaimonError
from paimon_sql.server import admission, audit, auth, ldap, lifecycle, transport
from paimon_sql.server.rest.grants import Grants
from paimon_sql.server.rest.server import RestServer
from paimon_sql.server.rest.state import RestState
from paimon_sql.server.rest.sign_in import Tokens
from paimon_sql.server.rest.tokens import TokenFile


def exposure_warning(host: str, auth_mode: str, tls: bool) -> Optional[str]:
    """The warning printed when the server listens beyond this machine (``host`` not a loopback
    address: ``0.0.0.0``, ``::``, an interface's address or a host name) without both passwords
    and TLS; None on loopback (127.0.0.0/8, ``::1``, ``localhost``), where only local users reach it."""
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = host.lower().rstrip(".") == "localhost"
    passwords = auth_mode in ("plain", "ldap")
    if loopback or (passwords and tls):
        return None
    return (f"Warning: listening on {host} (beyond this machine) without "
            f"{'TLS (--ssl-cert)' if passwords else 'passwords (--auth plain or ldap)'}")


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def _args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="paimon-sql-server",
                                description="HiveServer2 Thrift endpoint over a Paimon warehouse "
                                            "(subcommand: adduser --password-file F USER)")
    p.add_argument("--warehouse", help="the warehouse (default: catalog option 'warehouse', "
                   "$PAIMON_SQL_WAREHOUSE, ./warehouse)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=_port, default=10000, help="0: any free port")
    p.add_argument("--auth", choices=auth.MODES, default="none",
                   help="none (default) and nosasl: no password checked, clients may use SASL or not; "
                        "plain: SASL PLAIN (Basic over http) against the users of --password-file")
    p.add_argument("--password-file", help="users and salted password hashes (see the adduser subcommand)")
    p.add_argument("--policy-file", help="grants: who may read, write or administer which database or table "
                                         "(JSON, read again when it changes; docs/server.md). Without it every "
                                         "user administers everything")
    p.add_argument("--transport", choices=transport.TRANSPORTS, default="binary")
    p.add_argument("--http-path", default="cliservice", help="URL path of the http transport")
    p.add_argument("--ssl-cert", help="PEM certificate (chain): serve TLS")
    p.add_argument("--ssl-key", help="PEM private key of --ssl-cert")
    p.add_argument("--query-timeout", type=float, default=0.0, metavar="SECONDS",
                   help="cancel a statement running longer (0: no limit; a client may ask for less)")
    p.add_argument("--idle-session-timeout", default="6h", metavar="DURATION",
                   help="close a session its client left idle this long: seconds, or with s/m/h/d (0: never; "
                        "default 6h)")
    p.add_argument("--idle-operation-timeout", default="3h", metavar="DURATION",
                   help="close an ended operation not fetched or closed for this long (0: never; default 3h)")
    p.add_argument("--max-sessions-per-user", type=int, default=0, metavar="N",
                   help="refuse a user's sessions beyond N at once (0: no limit)")
    p.add_argument("--max-sessions-per-ip", type=int, default=0, metavar="N",
                   help="refuse an address's sessions beyond N at once (0: no limit)")
    p.add_argument("--max-planning-statements", type=int, default=admission.cores(), metavar="N",
                   help="statements in their driver-side part (analysis, planning, a write) at once; the "
                        "others wait their turn (0: no limit; default: this machine's cores)")
    p.add_argument("--refresh-interval", type=float, default=60.0, metavar="SECONDS",
                   help="how often lapsed materialized tables are refreshed (0: never, default 60)")
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--audit-log", metavar="F", help="write a JSON line for every statement and metadata call")
    p.add_argument("--audit-log-max-bytes", type=int, metavar="N",
                   help="rotate the audit log past this size (default 100 MB)")
    p.add_argument("--audit-log-backups", type=int, metavar="K",
                   help="rotated audit logs kept: F.1 ... F.K (default 10)")
    p.add_argument("--rest-port", type=_port, metavar="P",
                   help="also serve Apache Paimon's REST catalog API on this port (0: any free port), over the "
                        "same catalog, under the same grants and audit log (HTTPS with --ssl-cert); needs "
                        "--rest-token-file, or --auth plain|ldap for tokens issued at sign-in")
    p.add_argument("--rest-token-file", metavar="F",
                   help="the REST catalog's bearer tokens: lines '<token> <user>' (read again when it changes)")
    p.add_argument("--rest-token-lifetime", default="12h", metavar="DURATION",
                   help="how long a token issued at sign-in (POST /v1/paimon-sql/tokens) is good: seconds, or "
                        "with s/m/h/d (default 12h)")
    p.add_argument("--conf", action="append", default=[], metavar="K=V", help="Spark setting")
    cli.add_catalog_flags(p)
    ldap.add_flags(p)
    return p.parse_args(argv)


def _refresher(session, interval: float, stop: threading.Event) -> threading.Thread:
    """The thread refreshing lapsed materialized tables every ``interval`` seconds until ``stop``;
    what a pass refreshed or failed to is told on stderr (a failure does not stop the thread)."""
    from paimon_sql.session import connect
    from paimon_sql.sql.materialized_table import refresh_lapsed

    def run():
        own = connect(session.warehouse, spark=session.spark.newSession(), catalog_options=session.catalog_options)
        while not stop.wait(interval):
            try:
                done = refresh_lapsed(own)
            except Exception as e:  # the catalog unreachable for a while: try again next time
                done = [("*", "failed", " ".join(str(e).split()))]
            for name, action, detail in done:
                if action != "skipped":
                    sys.stderr.write(f"materialized table {name}: {action} ({detail})\n")
    thread = threading.Thread(target=run, name="materialized-table-refresh", daemon=True)
    thread.start()
    return thread


def _adduser(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="paimon-sql-server adduser",
                                description="Add (or replace) a user of --auth plain; the password is read from "
                                            "stdin (one line), or prompted for on a terminal")
    p.add_argument("--password-file", required=True)
    p.add_argument("user")
    args = p.parse_args(argv)
    if sys.stdin.isatty():
        password = getpass.getpass(f"password for {args.user}: ")
        if getpass.getpass("again: ") != password:
            sys.stderr.write("Error: the passwords differ\n")
            return 1
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    try:
        auth.add_user(args.password_file, args.user, password)
    except (PaimonError, OSError) as e:
        sys.stderr.write(f"Error: {getattr(e, 'strerror', None) or e}\n")
        return 1
    return 0


def _cannot_listen(args, e: OSError, port: Optional[int] = None) -> int:
    reason = (e.strerror or str(e)).partition(" (while attempting")[0]  # create_server appends the address
    sys.stderr.write(f"Error: cannot listen on {args.host}:{args.port if port is None else port}: {reason}\n")
    return 1


def _rest_tokens(args, authenticator: auth.Authenticator) -> Optional[Tokens]:
    """The REST catalog's tokens (None without ``--rest-port``): those of ``--rest-token-file`` and
    those issued at sign-in (with passwords: ``--auth plain`` or ``ldap``). It serves no anonymous
    client, so a port with neither is refused, and so are token flags without a port."""
    lifetime = _duration(args, "rest_token_lifetime")
    if args.rest_port is None:
        if args.rest_token_file:
            raise ValueError("--rest-token-file needs --rest-port")
        return None
    if not args.rest_token_file and not authenticator.requires_password:
        raise ValueError("--rest-port needs --rest-token-file F (lines '<token> <user>'), or --auth plain|ldap "
                         "(tokens issued at sign-in): the REST catalog serves no anonymous clients")
    if not lifetime > 0:
        raise ValueError("--rest-token-lifetime must be more than 0")
    return Tokens(TokenFile(args.rest_token_file) if args.rest_token_file else None, authenticator, lifetime)


def _start_rest(args, session, tokens: Tokens, policy: Optional[PolicyFile], authenticator: auth.Authenticator,
                audit_log: Optional[audit.AuditLog], tls) -> RestServer:
    """The REST catalog over the session's own catalog, started; its URL told on stderr."""
    state = RestState(session.catalog, session.warehouse, session.catalog_options,
                      Grants(policy, authenticator.groups), args.warehouse)
    server = RestServer(state, tokens, audit_log, args.host, args.rest_port, tls)
    server.start()
    host = f"[{args.host}]" if ":" in args.host else args.host
    sys.stderr.write(f"paimon-sql-server REST catalog at {server.scheme}://{host}:{server.port} "
                     f"(warehouse {session.warehouse})\n")
    return server


def _audit_log(args) -> Optional[audit.AuditLog]:
    """The ``--audit-log``, opened now (None without one); its size flags alone are refused."""
    if not args.audit_log:
        if args.audit_log_max_bytes is not None or args.audit_log_backups is not None:
            raise ValueError("--audit-log-max-bytes and --audit-log-backups need --audit-log")
        return None
    sizes = {k: v for k, v in (("max_bytes", args.audit_log_max_bytes), ("backups", args.audit_log_backups))
             if v is not None}
    try:
        return audit.AuditLog(args.audit_log, **sizes)
    except OSError as e:
        raise ValueError(f"cannot write --audit-log {args.audit_log}: {e.strerror or e}") from None


def _duration(args, name: str) -> float:
    try:
        return lifecycle.duration(getattr(args, name))
    except ValueError as e:
        raise ValueError(f"--{name.replace('_', '-')}: {e}") from None


def _count(args, name: str) -> int:
    if getattr(args, name) < 0:
        raise ValueError(f"--{name.replace('_', '-')} must be 0 (no limit) or more")
    return getattr(args, name)


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM stops the server as Ctrl-C does: Spark is stopped on the way out


def _returns_idle_heap(spark) -> None:
    """A server runs for weeks and its load comes and goes; an idle G1 collects nothing until its
    periodic collection, which is off by default (JEP 346), and hands committed heap back only past
    ``MaxHeapFreeRatio`` free (70 % by default: a heap a load grew to 3 GB stayed there idle). Both
    are turned on here (:data:`_IDLE_HEAP`: a collection every 60 s of none, heap given back past
    30 % free) unless the JVM was given the flag itself (docs/server.md). The flags are manageable,
    so they are set in the running JVM: no launch option of the user's is replaced."""
    from py4j.protocol import Py4JError
    jvm = spark._jvm
    try:
        bean_class = jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
        bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(bean_class)
    except Py4JError:  # a JVM without the bean (not HotSpot): its heap is its own business
        return
    for flag, value in _IDLE_HEAP.items():
        try:
            if bean.getVMOption(flag).getOrigin().toString() == "DEFAULT":
                bean.setVMOption(flag, value)
        except Py4JError:  # a flag this JVM lacks, or a value its other flags refuse (Min > Max)
            pass


# in this order: MinHeapFreeRatio must not exceed MaxHeapFreeRatio at any step
_IDLE_HEAP = {"G1PeriodicGCInterval": "60000", "MinHeapFreeRatio": "10", "MaxHeapFreeRatio": "30"}


def _frozen_startup() -> None:
    """What startup made (Spark's session, the modules: ~100,000 objects) is kept out of Python's
    full collections, which otherwise walk all of it every few seconds under load, holding every
    statement's thread (100-280 ms each with 8 clients on 2 cores; docs/server.md). Garbage is
    collected first: a frozen cycle would never be."""
    gc.collect()
    gc.freeze()


def _status_on_signal(handler) -> None:
    """SIGUSR1 makes the server write one line of what it holds to stderr (as ``dd`` tells its
    progress): how an operator, or ``bench/server_load.py``, sees sessions come and go."""
    def tell(signum, frame):
        try:  # raised here, an error would stop the main thread's serving loop
            line = handler.status()
        except Exception as e:
            line = f"unknown ({type(e).__name__}: {e})"
        sys.stderr.write(f"paimon-sql-server status: {line}\n")
        sys.stderr.flush()
    signal.signal(signal.SIGUSR1, tell)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["adduser"]:
        return _adduser(argv[1:])
    args = _args(argv)
    conf, catalog = cli._pairs("--conf", args.conf), cli.catalog_options(args)
    if conf is None or catalog is None:
        return 2
    try:  # everything a user can get wrong is checked before Spark starts
        authenticator = auth.Authenticator(args.auth, args.password_file, ldap.settings(args, conf))
        policy = PolicyFile(args.policy_file) if args.policy_file else None
        tls = transport.tls_context(args.ssl_cert, args.ssl_key)
        if not args.query_timeout >= 0:  # negative or nan
            raise ValueError("--query-timeout must be 0 (no limit) or more seconds")
        if not args.refresh_interval >= 0:
            raise ValueError("--refresh-interval must be 0 (no refreshes) or more seconds")
        limits = lifecycle.Limits(_duration(args, "idle_session_timeout"), _duration(args, "idle_operation_timeout"),
                                  _count(args, "max_sessions_per_user"), _count(args, "max_sessions_per_ip"))
        places = admission.Admission(_count(args, "max_planning_statements"))
        audit_log = _audit_log(args)
        rest_tokens = _rest_tokens(args, authenticator)
    except (PaimonError, ValueError) as e:
        sys.stderr.write(f"Error: {e}\n")
        return 2
    except OSError as e:  # ssl.SSLError included
        sys.stderr.write(f"Error: cannot load --ssl-cert/--ssl-key: {getattr(e, 'strerror', None) or e}\n")
        return 2
    for port in (args.port, args.rest_port):
        if port:
            try:  # a port already taken is told now, not after Spark's startup
                transport.bind(args.host, port).close()
            except OSError as e:
                return _cannot_listen(args, e, port)
    if args.master:
        conf["spark.master"] = args.master
    from paimon_sql.server import service
    from paimon_sql.session import connect
    from TCLIService import TCLIService
    try:
        session = connect(args.warehouse, conf=conf, catalog_options=catalog)
    except PaimonError as e:
        sys.stderr.write(f"Error: {e}\n")
        return 1
    except KeyboardInterrupt:  # Ctrl-C while Spark starts
        return 130
    signal.signal(signal.SIGTERM, _terminate)
    try:
        cli._quiet_logs(session.spark)
        options = service.ServerOptions(query_timeout=args.query_timeout, policy=policy,
                                        groups=authenticator.groups, audit=audit_log, limits=limits,
                                        admission=places)
        handler = service.TCLIServiceHandler(session, options)
        processor = TCLIService.Processor(handler)
        _status_on_signal(handler)
        _returns_idle_heap(session.spark)
        try:
            server = transport.listen(processor, host=args.host, port=args.port, authenticator=authenticator,
                                      transport=args.transport, http_path=args.http_path, tls=tls)
        except OSError as e:
            return _cannot_listen(args, e)
        try:
            rest = _start_rest(args, session, rest_tokens, policy, authenticator, audit_log, tls) \
                if rest_tokens is not None else None
        except OSError as e:
            server.shutdown()
            return _cannot_listen(args, e, args.rest_port)
        warning = exposure_warning(args.host, args.auth, tls is not None)
        if warning:
            sys.stderr.write(warning + "\n")
        if rest is not None and tls is None and exposure_warning(args.host, "none", False):
            sys.stderr.write(f"Warning: the REST catalog on {args.host} has no TLS (--ssl-cert): its bearer tokens "
                             "and sign-in passwords cross the network in clear\n")
        sys.stderr.write(f"paimon-sql-server listening on {args.host}:{server.port} ({args.transport}"
                         f"{' TLS' if tls else ''}, auth {args.auth})\n")
        sys.stderr.flush()
        _frozen_startup()
        stop = threading.Event()
        if args.refresh_interval:
            _refresher(session, args.refresh_interval, stop)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            if rest is not None:
                rest.shutdown()
            server.shutdown()
            _unless_jvm_gone(handler.shutdown)
            if audit_log is not None:
                audit_log.close()
        return 0
    finally:
        _unless_jvm_gone(session.close)


def _unless_jvm_gone(stop: Callable[[], None]) -> None:
    """A stop step that needs Spark's JVM, skipped if it is gone: a service manager stopping the
    server signals its whole process group (systemd's default), so the JVM may end first; there is
    nothing of it left to stop then, and the way out is one line, not a traceback (py4j's own
    report of the lost connection, logged on the root logger with its traceback, is held back)."""
    from py4j.protocol import Py4JError
    root = logging.getLogger()
    root.addFilter(_py4j_lost_connection)
    try:
        stop()
    except (Py4JError, ConnectionError) as e:
        sys.stderr.write(f"paimon-sql-server: Spark's JVM had already stopped ({type(e).__name__})\n")
    finally:
        root.removeFilter(_py4j_lost_connection)


def _py4j_lost_connection(record: logging.LogRecord) -> bool:
    """False for py4j's "Exception while sending command." (its JVM gone), True for anything else."""
    return record.getMessage() != "Exception while sending command."

