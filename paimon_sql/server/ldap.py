"""Signing in against an LDAP directory (``--auth ldap``), configured as HiveServer2 configures it.

The password is checked by the directory itself: a simple bind as the user's DN, made from
``--ldap-user-dn-pattern`` (HiveServer2's ``userDNPattern``: ``%s`` or ``{user}``, several patterns
separated by ``:``) or found under ``--ldap-base-dn`` by ``(<guidKey>=<user>)``, searched anonymously or as
``--ldap-bind-dn``. The user's groups (the ``cn`` of the entries of ``groupClassKey`` whose
``groupMembershipKey`` names the user's DN or name) are looked up at sign-in: ``--ldap-group-filter`` admits
members of the listed groups only, and the grants read them. A user name is escaped before it enters a DN or
a filter, and an empty password is refused before any bind (LDAP takes it for an anonymous bind, which
succeeds). Certificates are always verified (``--ldap-ca-file``, else the system's authorities).

A directory that cannot be reached, a wrong password and an unknown user all end in the same refusal to the
client; what the directory said goes to the server's log.
"""

import argparse
import logging
import ssl
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Tuple
from urllib.parse import urlsplit

import ldap3
from ldap3.core.exceptions import LDAPBindError, LDAPException
from ldap3.utils.conv import escape_filter_chars
from ldap3.utils.dn import escape_rdn

from paimon_sql.exceptions import AuthError

log = logging.getLogger(__name__)

CONF_PREFIX = "hive.server2.authentication.ldap."
# HiveServer2's key (after CONF_PREFIX) -> our flag's dest
_CONF_KEYS = {"url": "ldap_url", "baseDN": "ldap_base_dn", "userDNPattern": "ldap_user_dn_pattern",
              "groupDNPattern": "ldap_group_dn_pattern", "groupFilter": "ldap_group_filter",
              "userFilter": "ldap_user_filter", "guidKey": "ldap_guid_key",
              "groupMembershipKey": "ldap_group_membership_key", "groupClassKey": "ldap_group_class_key",
              "binddn": "ldap_bind_dn", "bindpw": "ldap_bind_password"}
_DEFAULTS = {"ldap_guid_key": "uid", "ldap_group_membership_key": "member", "ldap_group_class_key": "groupOfNames"}
_TIMEOUT = 10  # seconds to connect to, and to hear from, the directory


@dataclass(frozen=True)
class LdapSettings:
    """What ``--auth ldap`` signs in against (see the module docstring)."""
    urls: Tuple[str, ...]
    user_dn_patterns: Tuple[str, ...] = ()
    base_dn: Optional[str] = None
    guid_key: str = "uid"
    bind_dn: Optional[str] = None
    bind_password: Optional[str] = None
    user_filter: FrozenSet[str] = frozenset()  # lower-cased user names; empty: anyone
    group_filter: FrozenSet[str] = frozenset()  # lower-cased group names; empty: any or no group
    group_dn_patterns: Tuple[str, ...] = ()
    group_membership_key: str = "member"
    group_class_key: str = "groupOfNames"
    starttls: bool = False
    ca_file: Optional[str] = None


def add_flags(p: argparse.ArgumentParser) -> None:
    """The ``--ldap-*`` flags of ``paimon-sql-server`` (each also a ``--conf hive.server2.authentication.ldap.*``
    key, which the flag overrides)."""
    g = p.add_argument_group("--auth ldap", "SASL PLAIN (Basic over http) checked by an LDAP directory; each "
                             f"flag also as --conf {CONF_PREFIX}<key>, the flag wins")
    g.add_argument("--ldap-url", metavar="URLS", help="ldap:// or ldaps:// URL(s), space-separated, tried in "
                                                     "order (url)")
    g.add_argument("--ldap-user-dn-pattern", metavar="P", help="user DN with %%s or {user}, ':'-separated "
                                                               "(userDNPattern)")
    g.add_argument("--ldap-base-dn", metavar="DN", help="search users under this DN by --ldap-guid-key (baseDN)")
    g.add_argument("--ldap-guid-key", metavar="KEY", help="attribute holding the user name (guidKey, default uid)")
    g.add_argument("--ldap-bind-dn", metavar="DN", help="DN to search the directory as (binddn; default anonymous)")
    g.add_argument("--ldap-bind-password-file", metavar="F", help="file holding the password of --ldap-bind-dn")
    g.add_argument("--ldap-user-filter", metavar="USERS", help="comma-separated users allowed to sign in "
                                                               "(userFilter)")
    g.add_argument("--ldap-group-filter", metavar="GROUPS", help="comma-separated groups whose members may sign "
                                                                 "in (groupFilter)")
    g.add_argument("--ldap-group-dn-pattern", metavar="P", help="group DN with %%s or {group}, ':'-separated "
                                                                "(groupDNPattern)")
    g.add_argument("--ldap-group-membership-key", metavar="KEY", help="group attribute naming members "
                                                                      "(groupMembershipKey, default member)")
    g.add_argument("--ldap-group-class-key", metavar="CLASS", help="objectClass of groups (groupClassKey, "
                                                                   "default groupOfNames)")
    g.add_argument("--ldap-starttls", action="store_true", help="StartTLS on ldap:// URLs")
    g.add_argument("--ldap-ca-file", metavar="F", help="PEM CA certificate(s) to verify the directory with")


def settings(args: argparse.Namespace, conf: Dict[str, str]) -> Optional[LdapSettings]:
    """The settings of ``--auth ldap`` from the flags and the ``hive.server2.authentication.ldap.*`` keys of
    ``conf`` (removed from it: they are not Spark's, and a password must not show in SET); None for the other
    modes. A setting that cannot be used raises AuthError naming it."""
    given = {dest: conf.pop(CONF_PREFIX + key) for key, dest in _CONF_KEYS.items() if CONF_PREFIX + key in conf}
    unknown = sorted(k for k in conf if k.startswith(CONF_PREFIX))
    if unknown:
        raise AuthError(f"--conf {unknown[0]} is not supported; the LDAP keys are "
                        f"{', '.join(CONF_PREFIX + k for k in _CONF_KEYS)}")
    if args.ldap_bind_password_file:
        given["ldap_bind_password"] = _read_password(args.ldap_bind_password_file)
    given.update({dest: getattr(args, dest) for dest in _CONF_KEYS.values()
                  if getattr(args, dest, None) not in (None, "")})
    if args.ldap_starttls:
        given["ldap_starttls"] = True
    if args.ldap_ca_file:
        given["ldap_ca_file"] = args.ldap_ca_file
    if args.auth != "ldap":
        if given:
            raise AuthError(f"--ldap-* flags and --conf {CONF_PREFIX}* keys need --auth ldap")
        return None
    return _validated({**_DEFAULTS, **given})


def _read_password(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            password = f.readline().rstrip("\r\n")
    except OSError as e:
        raise AuthError(f"cannot read --ldap-bind-password-file {path}: {e.strerror}") from None
    if not password:
        raise AuthError(f"--ldap-bind-password-file {path} holds no password")
    return password


def _names(text: Optional[str]) -> FrozenSet[str]:
    return frozenset(n.strip().lower() for n in (text or "").split(",") if n.strip())


def _patterns(text: Optional[str], flag: str, placeholder: str) -> Tuple[str, ...]:
    patterns = tuple(p.strip() for p in (text or "").split(":") if p.strip())
    for p in patterns:
        if "%s" not in p and placeholder not in p:
            raise AuthError(f"{flag} {p!r} has no %s or {placeholder} for the name")
    return patterns


def _validated(v: dict) -> LdapSettings:
    urls = tuple((v.get("ldap_url") or "").split())
    if not urls:
        raise AuthError("--auth ldap needs --ldap-url (or --conf hive.server2.authentication.ldap.url)")
    for url in urls:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("ldap", "ldaps") or not urlsplit(url).hostname:
            raise AuthError(f"--ldap-url {url!r} is not an ldap:// or ldaps:// URL with a host")
        if scheme == "ldaps" and v.get("ldap_starttls"):
            raise AuthError(f"--ldap-starttls is for ldap:// URLs; {url} is TLS already")
    user_patterns = _patterns(v.get("ldap_user_dn_pattern"), "--ldap-user-dn-pattern", "{user}")
    group_patterns = _patterns(v.get("ldap_group_dn_pattern"), "--ldap-group-dn-pattern", "{group}")
    base_dn = v.get("ldap_base_dn")
    if not user_patterns and not base_dn:
        raise AuthError("--auth ldap needs --ldap-user-dn-pattern or --ldap-base-dn")
    if v.get("ldap_group_filter") and not (group_patterns or base_dn):
        raise AuthError("--ldap-group-filter needs --ldap-group-dn-pattern or --ldap-base-dn to find groups under")
    if bool(v.get("ldap_bind_dn")) != bool(v.get("ldap_bind_password")):
        raise AuthError("--ldap-bind-dn and --ldap-bind-password-file go together")
    if v.get("ldap_ca_file"):
        try:
            ssl.create_default_context(cafile=v["ldap_ca_file"])
        except (OSError, ssl.SSLError) as e:
            raise AuthError(f"cannot load --ldap-ca-file {v['ldap_ca_file']}: "
                            f"{getattr(e, 'strerror', None) or e}") from None
    return LdapSettings(urls=urls, user_dn_patterns=user_patterns, base_dn=base_dn, guid_key=v["ldap_guid_key"],
                        bind_dn=v.get("ldap_bind_dn"), bind_password=v.get("ldap_bind_password"),
                        user_filter=_names(v.get("ldap_user_filter")),
                        group_filter=_names(v.get("ldap_group_filter")), group_dn_patterns=group_patterns,
                        group_membership_key=v["ldap_group_membership_key"],
                        group_class_key=v["ldap_group_class_key"], starttls=bool(v.get("ldap_starttls")),
                        ca_file=v.get("ldap_ca_file"))


def _fill(pattern: str, placeholder: str, value: str) -> str:
    return pattern.replace("%s", value).replace(placeholder, value)


class Directory:
    """The directory of one :class:`LdapSettings`; :meth:`sign_in` checks a user's password."""

    def __init__(self, s: LdapSettings):
        self._s = s
        tls = ldap3.Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=s.ca_file)
        self._servers = [ldap3.Server(url, tls=tls, connect_timeout=_TIMEOUT, get_info=ldap3.NONE)
                         for url in s.urls]
        # groups live under the parent of each group DN pattern (cn=%s,ou=groups,... -> ou=groups,...)
        self._group_bases = tuple(p.split(",", 1)[1].strip() for p in s.group_dn_patterns if "," in p) or \
            ((s.base_dn,) if s.base_dn else ())

    def sign_in(self, user: str, password: str) -> Optional[FrozenSet[str]]:
        """The groups of ``user`` when ``password`` is theirs and the filters admit them, else None. Each URL
        is tried in order until one answers; a directory that none does refuses (and is logged)."""
        if not user or not password:
            return None  # an empty password would be an anonymous bind, which succeeds
        if self._s.user_filter and user.lower() not in self._s.user_filter:
            return None
        for server in self._servers:
            server.reset_availability()  # ldap3 skips an address that failed in the last seconds: we ask each time
            try:
                groups = self._sign_in_at(server, user, password)
            except LDAPException as e:
                log.warning("LDAP sign-in of %r: %s unusable: %s", user, server, " ".join(str(e).split()))
                continue
            if groups is None or (self._s.group_filter and not {g.lower() for g in groups} & self._s.group_filter):
                return None
            return groups
        return None

    def _connection(self, server, dn: Optional[str] = None, password: Optional[str] = None):
        """A connection bound as ``dn`` (anonymous when None); LDAPBindError when the bind is refused."""
        return ldap3.Connection(server, user=dn, password=password, read_only=True, receive_timeout=_TIMEOUT,
                                auto_bind=ldap3.AUTO_BIND_TLS_BEFORE_BIND if self._s.starttls
                                else ldap3.AUTO_BIND_NO_TLS)

    def _sign_in_at(self, server, user: str, password: str) -> Optional[FrozenSet[str]]:
        s = self._s
        # searches run as the bind DN; a base-DN search without one runs anonymously
        reader = self._connection(server, s.bind_dn, s.bind_password) \
            if s.bind_dn or not s.user_dn_patterns else None
        try:
            if s.user_dn_patterns:
                value = escape_rdn(user)
                candidates = [_fill(p, "{user}", value) for p in s.user_dn_patterns]
            else:
                candidates = self._find_user(reader, user)
            for dn in candidates:
                try:
                    conn = self._connection(server, dn, password)
                except LDAPBindError:  # wrong password, or no such DN
                    continue
                try:
                    return self._groups(reader if s.bind_dn else conn, dn, user)
                finally:
                    conn.unbind()
            return None
        finally:
            if reader is not None:
                reader.unbind()

    def _find_user(self, conn, user: str) -> List[str]:
        """The DN of the one entry under the base DN whose guidKey is ``user`` (none when 0 or several)."""
        conn.search(self._s.base_dn, f"({self._s.guid_key}={escape_filter_chars(user)})", attributes=[],
                    size_limit=2)
        found = [r["dn"] for r in conn.response if r.get("type") == "searchResEntry"]
        return found if len(found) == 1 else []

    def _groups(self, conn, dn: str, user: str) -> FrozenSet[str]:
        s = self._s
        member = f"(|({s.group_membership_key}={escape_filter_chars(dn)})" \
                 f"({s.group_membership_key}={escape_filter_chars(user)}))"
        names = set()
        for base in self._group_bases:
            conn.search(base, f"(&(objectClass={s.group_class_key}){member})", attributes=["cn"])
            for r in conn.response:
                if r.get("type") == "searchResEntry":
                    names.update(r["attributes"].get("cn") or ())
        return frozenset(names)
