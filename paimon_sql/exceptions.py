"""Every error paimon-sql raises on purpose, in one place.

Each message is one line that names the thing at fault (table, option, column, file), so that a
user of the shell or a BI tool sees what to fix without a traceback.
"""

from typing import Optional


class PaimonError(Exception):
    """Base of all paimon-sql errors."""


class InvalidIdentifierError(PaimonError, ValueError):
    """A name (database, table, tag, branch, consumer id) that cannot be one path segment of the
    warehouse: see paimon_sql/io/path_guard.py."""


class DatabaseNotFoundError(PaimonError, LookupError):
    pass


class DatabaseAlreadyExistsError(PaimonError):
    pass


class DatabaseNotEmptyError(PaimonError):
    pass


class TableNotFoundError(PaimonError, LookupError):
    pass


class TableAlreadyExistsError(PaimonError):
    pass


class ViewNotFoundError(PaimonError, LookupError):
    pass


class ViewAlreadyExistsError(PaimonError):
    pass


class FunctionNotFoundError(PaimonError, LookupError):
    pass


class FunctionAlreadyExistsError(PaimonError):
    pass


class FunctionError(PaimonError, ValueError):
    """A function, or a change to one, that is not valid (a missing definition, a bad parameter list)."""


class InvalidOptionError(PaimonError, ValueError):
    """A table option whose value does not parse as the option's type."""


class SchemaError(PaimonError, ValueError):
    """A schema that is malformed, or data that does not fit the table's schema."""


class SnapshotNotFoundError(PaimonError, LookupError):
    pass


class CommitConflictError(PaimonError):
    """A commit that cannot be rebased onto the latest snapshot (a file it deletes is gone)."""


class CorruptMetadataError(PaimonError):
    """A metadata file (schema, snapshot, manifest) that cannot be decoded."""


class MissingMetadataFileError(CorruptMetadataError, FileNotFoundError):
    """A manifest list, manifest or index manifest a snapshot names that is gone: named like any
    damaged metadata file, and still a FileNotFoundError for the callers that expect files of an
    expired snapshot to vanish (a commit's rebase, expiry's reference walk)."""


class CorruptDataFileError(PaimonError):
    """A data file that is missing, of another size than its manifest entry records, or that cannot be
    read or decoded: a read fails rather than return fewer rows."""


class MergeError(PaimonError):
    """Rows a table's merge engine cannot fold (a retraction it does not accept)."""


class SparkSqlError(PaimonError):
    """An error Spark raised for a statement, while analysing it or in a task while its rows were
    computed, cut to the one line that says what went wrong (see :func:`paimon_sql.session.spark_error`)."""


class UnsupportedStatementError(PaimonError):
    """A statement paimon-sql hands to Spark as written, on a Paimon table: Spark's catalog does not
    hold our tables, so it would only say the table "cannot be found"."""


class UnservedFeatureError(PaimonError):
    """What a current Paimon writer put in a table that paimon-sql cannot serve (a BLOB or VECTOR
    column, a global index): reading it, or writing the table, fails naming the feature."""


class FormatTableError(PaimonError, AttributeError):
    """What a format table cannot do (snapshots, time travel, row-level changes). An AttributeError
    too, so ``hasattr`` on a data table's attribute is simply False."""


class JdbcKeyConflict(Exception):
    """A row that a primary key already holds (the driver's integrity error). A signal inside the JDBC
    catalog, which turns it into the error a user sees (or retries); never raised to a user."""


class MetastoreMissing(PaimonError):
    """The metastore has no such database, table or partition."""


class MetastoreExists(PaimonError):
    """The metastore already has it."""


class SqlSyntaxError(PaimonError):
    """Bad SQL; the message carries the parser's line and column."""


class AuthError(PaimonError):
    """A password file or user name that cannot be used."""


class PolicyError(PaimonError):
    """A grants policy file (``--policy-file``) that cannot be read as one: the file and the entry at fault."""


class AccessDeniedError(PaimonError):
    """A statement that needs a grant its user lacks; nothing was read or changed. Its message names
    the user, the privilege and the table or database (SQLSTATE 42000, HiveServer2's for authorization)."""

    sql_state = "42000"


class TransportRefused(Exception):
    """A connection that may not go on (failed login, unknown mechanism, not a HiveServer2 client). A
    signal inside the server's transport, which closes that connection; never raised to a user."""


GENERAL_SQL_STATE = "HY000"  # HiveServer2's SQLSTATE of a failure Spark gave none for


class OperationError(PaimonError):
    """A failure as the client is told it: one line and a SQLSTATE (Spark's where it gave one)."""

    def __init__(self, message: str, sql_state: str = GENERAL_SQL_STATE):
        super().__init__(message)
        self.sql_state = sql_state


class TagError(PaimonError):
    """A tag that cannot be created, replaced, renamed or deleted as asked."""


class BranchError(PaimonError):
    """A branch that cannot be created, read or dropped as asked."""


class MigrateError(PaimonError):
    """Files that cannot become a Paimon table as they are; nothing was changed."""


class ProcedureError(PaimonError):
    """A CALL that cannot run: unknown procedure, bad arguments, or a procedure's own refusal."""


class SystemTableNotFoundError(PaimonError, LookupError):
    pass


class IcebergRestError(PaimonError):
    """An Iceberg REST catalog could not be reached (``status`` None) or answered an HTTP error."""

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.status = status


class RestCatalogError(PaimonError):
    """A Paimon REST catalog (``metastore = rest``) could not be reached (``status`` None) or answered
    an error that no other error here names (a refused token, a server failure)."""

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.status = status
