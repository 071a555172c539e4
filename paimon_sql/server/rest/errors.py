"""REST errors as Paimon's clients read them: ``{"message", "resourceType", "resourceName", "code"}``
with ``code`` equal to the HTTP status (Java's client reads the body's code, and a missing one
becomes 0, a generic failure). paimon-sql's own errors map to a status by their class; anything
else is a 500 whose message is one line, never a traceback.
"""

from __future__ import annotations

from typing import Optional, Tuple

from paimon_sql.exceptions import (AccessDeniedError, BranchError, CorruptMetadataError, DatabaseAlreadyExistsError,
                                   DatabaseNotEmptyError, DatabaseNotFoundError, FunctionAlreadyExistsError,
                                   FunctionNotFoundError, InvalidIdentifierError, InvalidOptionError, PolicyError,
                                   SchemaError, SnapshotNotFoundError, TableAlreadyExistsError, TableNotFoundError,
                                   TagError, ViewAlreadyExistsError, ViewNotFoundError)

DATABASE, TABLE, SNAPSHOT, TAG, BRANCH, VIEW, FUNCTION, COLUMN = \
    "DATABASE", "TABLE", "SNAPSHOT", "TAG", "BRANCH", "VIEW", "FUNCTION", "COLUMN"


class RestError(Exception):
    """An answer other than 200: its HTTP status, message and (for 404 and 409) the resource."""

    def __init__(self, code: int, message: str, resource_type: Optional[str] = None,
                 resource_name: Optional[str] = None):
        super().__init__(message)
        self.code, self.resource_type, self.resource_name = code, resource_type, resource_name

    def body(self) -> dict:
        return {"message": str(self), "resourceType": self.resource_type, "resourceName": self.resource_name,
                "code": self.code}


def not_found(kind: str, name: str, message: str) -> RestError:
    return RestError(404, message, kind, name)


def bad_request(message: str) -> RestError:
    return RestError(400, message)


# the first class an error is an instance of decides: (status, resource type or None)
_BY_CLASS: Tuple[Tuple[type, int, Optional[str]], ...] = (
    (DatabaseNotFoundError, 404, DATABASE), (TableNotFoundError, 404, TABLE), (ViewNotFoundError, 404, VIEW),
    (SnapshotNotFoundError, 404, SNAPSHOT), (FunctionNotFoundError, 404, FUNCTION),
    (FunctionAlreadyExistsError, 409, FUNCTION),
    (DatabaseAlreadyExistsError, 409, DATABASE), (TableAlreadyExistsError, 409, TABLE),
    (ViewAlreadyExistsError, 409, VIEW), (DatabaseNotEmptyError, 409, DATABASE),
    (AccessDeniedError, 403, None), (PolicyError, 403, None),
    (InvalidIdentifierError, 400, None), (InvalidOptionError, 400, None), (SchemaError, 400, None),
    (TagError, 400, None), (BranchError, 400, None), (CorruptMetadataError, 500, None),
)


def from_exception(e: Exception, resource_name: Optional[str] = None) -> RestError:
    """The answer for ``e`` raised while serving a call about ``resource_name``."""
    if isinstance(e, RestError):
        return e
    message = " ".join(str(e).split()) or type(e).__name__
    for cls, code, kind in _BY_CLASS:
        if isinstance(e, cls):
            return RestError(code, message, kind, resource_name if kind else None)
    if isinstance(e, NotImplementedError):
        return RestError(501, message)
    if isinstance(e, ValueError):  # a value of the request that does not parse (a number, a type)
        return RestError(400, message)
    return RestError(500, f"{type(e).__name__}: {message}")
