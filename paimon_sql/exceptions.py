"""Every error paimon-sql raises on purpose, in one place.

Each message is one line that names the thing at fault (table, option, column, file), so that a
user of the shell or a BI tool sees what to fix without a traceback.
"""


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
