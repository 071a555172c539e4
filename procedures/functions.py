"""Function procedures: paimon-spark's CreateFunction, AlterFunction and DropFunction, over the
catalog's functions (:mod:`paimon_sql.function.function`; a REST catalog's server keeps them, the
filesystem, JDBC and Hive catalogs keep them in the warehouse).

``function`` is ``db.name`` or ``name`` (the current database); a name holding dots is backquoted.
``inputParams`` / ``returnParams`` are JSON arrays of Paimon data fields (``''``: none), ``options``
``k1=v1,k2=v2``, ``change`` one Paimon ``FunctionChange`` as JSON, e.g.
``{"action": "addDefinition", "name": "spark", "definition": {"type": "lambda", ...}}``. The
functions are kept and served, not run in queries.
"""

from __future__ import annotations

from typing import Tuple

from paimon_sql.catalog.base import split_name
from paimon_sql.exceptions import PaimonError
from paimon_sql.function.function import Function, parse_change
from paimon_sql.procedures.base import Procedure, optional, register, required


class _FunctionProcedure(Procedure):
    def named(self, session, text: str) -> Tuple[str, str]:
        """(database, name) of a ``function`` argument."""
        parts = split_name(text or "")
        if len(parts) == 1:
            return session.current_database, parts[0]
        if len(parts) == 2:
            return parts[0], parts[1]
        raise self.fail(f"function '{text}' is not 'db.name' or 'name' (backquote a name holding dots)")

    def run(self, action):
        try:
            action()
        except (PaimonError, NotImplementedError) as e:
            raise self.fail(str(e)) from None
        return [(True,)]


@register
class CreateFunctionProcedure(_FunctionProcedure):
    name = "create_function"
    parameters = (required("function", "STRING"), required("inputParams", "STRING"),
                  required("returnParams", "STRING"), optional("deterministic", "BOOLEAN"),
                  optional("comment", "STRING"), optional("options", "STRING"))
    description = "Create a function in the catalog (its parameters and results; definitions are added by alter)."

    def call(self, session, args):
        database, name = self.named(session, args["function"])
        try:
            function = Function.from_procedure(name, args["inputParams"], args["returnParams"], args["deterministic"],
                                               args["comment"], args["options"])
        except PaimonError as e:
            raise self.fail(str(e)) from None
        return self.run(lambda: session.catalog.create_function(database, function))


@register
class AlterFunctionProcedure(_FunctionProcedure):
    name = "alter_function"
    parameters = (required("function", "STRING"), required("change", "STRING"))
    description = "Alter a catalog function by one Paimon FunctionChange (JSON)."

    def call(self, session, args):
        database, name = self.named(session, args["function"])
        try:
            change = parse_change(args["change"])
        except PaimonError as e:
            raise self.fail(str(e)) from None
        return self.run(lambda: session.catalog.alter_function(database, name, [change]))


@register
class DropFunctionProcedure(_FunctionProcedure):
    name = "drop_function"
    parameters = (required("function", "STRING"),)
    description = "Drop a catalog function."

    def call(self, session, args):
        database, name = self.named(session, args["function"])
        return self.run(lambda: session.catalog.drop_function(database, name))
