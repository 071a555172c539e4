"""The path guard: a name given by a user (database, table, tag, branch, consumer id) becomes
exactly one path segment, or nothing is done.

Paths are built by joining such names under a root (``<warehouse>/<db>.db/<table>``,
``<table>/tag/tag-<name>``, ``<table>/branch/branch-<name>``, ``<table>/consumer/consumer-<id>``).
When every name is one segment that is not ``.`` or ``..``, the joined path cannot leave its
root, whatever the name. So the check is made once, by the functions that build those paths,
and it fails before any file is created, read or deleted.
"""

from __future__ import annotations

import re

from paimon_sql.exceptions import InvalidIdentifierError

# separators of any filesystem we serve (local, S3) and characters no name needs
_BAD_CHARS = re.compile(r"[/\\\x00-\x1f\x7f]")
RULE = "a name must be non-empty, without '/', '\\', control characters, a leading '.' or surrounding spaces"


# file systems take at most 255 bytes in a path segment; the longest prefix or suffix a name gets
# (``consumer-``, ``branch-``, ``.db``) must fit beside it
MAX_NAME_BYTES = 240


def check_segment(kind: str, name) -> str:
    """``name`` itself when it is safe as one path segment, else a one-line
    :class:`InvalidIdentifierError` naming it (``kind``: database, table, tag, branch, consumer)."""
    if not isinstance(name, str) or not name or name != name.strip() or name.startswith(".") \
            or _BAD_CHARS.search(name):
        raise InvalidIdentifierError(f"invalid {kind} name {name!r}: {RULE}")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise InvalidIdentifierError(f"invalid {kind} name {name[:40]!r}... ({len(name.encode('utf-8'))} bytes): "
                                     f"a name must be at most {MAX_NAME_BYTES} bytes (UTF-8)")
    return name
