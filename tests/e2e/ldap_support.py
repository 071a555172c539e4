"""A real OpenLDAP directory for the tests of ``--auth ldap``: ``slapd`` started on 127.0.0.1 with a config
of its own (slapd.conf style, mdb), users in ou=people, groups in ou=groups, and ldap:// and ldaps:// on
free ports, its certificate signed by a CA made for the run.

Anonymous clients may only bind; signed-in users (and the search account ``cn=reader``) read entries, so
search-then-bind without a bind DN finds nobody. ``Directory.stop()``/``start()`` take the directory down and
bring it back on the same ports, for the tests of a directory that is down.
"""

import contextlib
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

SLAPD = "/usr/sbin/slapd"
SLAPADD = "/usr/sbin/slapadd"
BASE_DN = "dc=example,dc=com"
PEOPLE_DN = f"ou=people,{BASE_DN}"
GROUPS_DN = f"ou=groups,{BASE_DN}"
READER_DN = f"cn=reader,{BASE_DN}"
# user: (password, groups); "dan, jr" has a comma, which a DN must escape
USERS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "alice": ("alice-pw", ("analysts", "staff")),
    "bob": ("bob-pw", ("staff",)),
    "carol": ("carol-pw", ()),
    "dan, jr": ("dan-pw", ("analysts",)),
    "erin": ("erin-pw", ("staff",)),
}
GROUPS = ("analysts", "staff")


@dataclass
class Directory:
    """A running slapd: its URLs, base DN, users (name -> password, groups), search account and CA."""
    ldap_url: str
    ldaps_url: str
    ca_file: str
    reader_password_file: str
    base_dn: str = BASE_DN
    people_dn: str = PEOPLE_DN
    groups_dn: str = GROUPS_DN
    reader_dn: str = READER_DN
    users: Dict[str, Tuple[str, Tuple[str, ...]]] = field(default_factory=lambda: dict(USERS))
    _command: List[str] = field(default_factory=list, repr=False)
    _proc: Optional[subprocess.Popen] = field(default=None, repr=False)

    def password(self, user: str) -> str:
        return self.users[user][0]

    def start(self) -> None:
        self._proc = subprocess.Popen(self._command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port = int(self.ldap_url.rsplit(":", 1)[1])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"slapd exited with {self._proc.returncode}: {self._proc.stderr.read().decode()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                return
            time.sleep(0.1)
        raise RuntimeError("slapd did not listen within 30 s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _certificates(d: Path) -> Tuple[str, str, str]:
    """(CA certificate, server certificate for localhost and 127.0.0.1 signed by it, server key)."""
    ca_key, ca, key, csr, cert, ext = (str(d / n) for n in ("ca.key", "ca.pem", "server.key", "server.csr",
                                                             "server.pem", "server.ext"))
    (d / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for args in (["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "1",
                  "-subj", "/CN=paimon-sql test CA"],
                 ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
                 ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
                  "-days", "1", "-extfile", ext]):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    return ca, cert, key


def user_dn(user: str) -> str:
    """The DN of one of USERS (a comma in the name escaped)."""
    escaped = user.replace(",", "\\,")
    return f"uid={escaped},{PEOPLE_DN}"


def _ldif() -> str:
    entries = [f"dn: {BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example",
               f"dn: {PEOPLE_DN}\nobjectClass: organizationalUnit\nou: people",
               f"dn: {GROUPS_DN}\nobjectClass: organizationalUnit\nou: groups",
               f"dn: {READER_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: reader\n"
               "userPassword: reader-pw"]
    for user, (password, _) in USERS.items():
        entries.append(f"dn: {user_dn(user)}\nobjectClass: inetOrgPerson\nuid: {user}\ncn: {user}\n"
                       f"sn: {user}\nuserPassword: {password}")
    for group in GROUPS:
        members = "".join(f"\nmember: {user_dn(u)}"
                          for u, (_, groups) in USERS.items() if group in groups)
        entries.append(f"dn: cn={group},{GROUPS_DN}\nobjectClass: groupOfNames\ncn: {group}{members}")
    return "\n\n".join(entries) + "\n"


@contextlib.contextmanager
def slapd(workdir: Path) -> Iterator[Directory]:
    """A running directory under ``workdir`` (made here), stopped at exit."""
    if shutil.which(SLAPD) is None:
        raise RuntimeError("slapd is not installed (Debian: apt-get install slapd ldap-utils)")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "data").mkdir()
    ca, cert, key = _certificates(workdir)
    conf = workdir / "slapd.conf"
    conf.write_text("\n".join([
        *(f"include /etc/ldap/schema/{s}.schema" for s in ("core", "cosine", "inetorgperson", "nis")),
        f"pidfile {workdir}/slapd.pid", f"argsfile {workdir}/slapd.args",
        "modulepath /usr/lib/ldap", "moduleload back_mdb",
        f"TLSCACertificateFile {ca}", f"TLSCertificateFile {cert}", f"TLSCertificateKeyFile {key}",
        "database mdb", f'suffix "{BASE_DN}"', f'rootdn "cn=admin,{BASE_DN}"', "rootpw admin-pw",
        f"directory {workdir}/data", "maxsize 10485760",
        "access to attrs=userPassword by self write by anonymous auth by * none",
        "access to * by users read by anonymous auth",
    ]) + "\n")
    (workdir / "data.ldif").write_text(_ldif())
    subprocess.run([SLAPADD, "-f", str(conf), "-l", str(workdir / "data.ldif")], check=True, capture_output=True)
    reader_password = workdir / "reader-password"
    reader_password.write_text("reader-pw\n")
    ldap_port, ldaps_port = _free_port(), _free_port()
    directory = Directory(ldap_url=f"ldap://127.0.0.1:{ldap_port}", ldaps_url=f"ldaps://127.0.0.1:{ldaps_port}",
                          ca_file=ca, reader_password_file=str(reader_password))
    directory._command = [SLAPD, "-f", str(conf), "-d", "0",
                          "-h", f"{directory.ldap_url}/ {directory.ldaps_url}/"]
    directory.start()
    try:
        yield directory
    finally:
        directory.stop()
