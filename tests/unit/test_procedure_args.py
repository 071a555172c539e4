"""Argument binding of CALL: parsing the argument list, matching it to a procedure's parameters."""

import pytest

from paimon_sql.procedures import ProcedureError, bind, lookup
from paimon_sql.procedures.base import Procedure, optional, register, required
from paimon_sql.sql.call import arguments, procedure_name


class Probe(Procedure):  # not registered: a signature with every parameter type
    name = "probe"
    parameters = (required("table", "STRING"), optional("n", "INT", 7), optional("big", "BIGINT"),
                  optional("flag", "BOOLEAN"), optional("opts", "MAP<STRING,STRING>"))


def bound(text):
    return bind(Probe, *arguments(Probe, text))


SIGNATURE = "expected sys.probe(table STRING, [n INT], [big BIGINT], [flag BOOLEAN], [opts MAP<STRING,STRING>])"


def test_positional_arguments_fill_parameters_in_order_and_defaults_fill_the_rest():
    assert bound("'db.t', 3") == {"table": "db.t", "n": 3, "big": None, "flag": None, "opts": None}


def test_named_arguments_match_ignoring_case_in_any_order():
    got = bound("FLAG => true, Table => 'db.t', big => -9000000000, opts => map('a', '1', 'b', '2')")
    assert got == {"table": "db.t", "n": 7, "big": -9000000000, "flag": True, "opts": {"a": "1", "b": "2"}}


def test_null_means_not_given():
    assert bound("table => 'db.t', n => NULL")["n"] == 7


def test_up_casts_of_literals_as_paimon_spark():
    got = bound("table => 5, n => 12, flag => FALSE")
    assert got["table"] == "5" and got["n"] == 12 and got["flag"] is False
    assert bound("table => true")["table"] == "true"


@pytest.mark.parametrize("text, problem", [
    ("tabel => 'db.t'", "unknown argument 'tabel'"),
    ("n => 1", "missing argument 'table'"),
    ("", "missing argument 'table'"),
    ("table => 'a', TABLE => 'b'", "argument 'table' given twice"),
    ("'a', n => 1", "named and positional arguments cannot be mixed"),
    ("'a', 1, 2, true, map(), 6", "6 positional arguments given, at most 5 accepted"),
    ("table => 'a', n => 'x'", "Cannot cast StringType to IntegerType of n."),
    ("table => 'a', n => '12'", "Cannot cast StringType to IntegerType of n."),
    ("table => 'a', flag => 'FALSE'", "Cannot cast StringType to BooleanType of flag."),
    ("table => 'a', n => 3000000000", "argument 'n' = 3000000000 is out of range for INT"),
    ("table => 'a', flag => 1", "argument 'flag' must be BOOLEAN, got 1"),
    ("table => 1.5", "argument 'table' must be STRING, got 1.5"),
    ("table => 'a', opts => 'k=v'", "argument 'opts' must be MAP<STRING,STRING>, got 'k=v'"),
    ("table => upper('a')", "argument UPPER('a') is not a literal"),
])
def test_bad_arguments_fail_in_one_line_with_the_signature(text, problem):
    with pytest.raises(ProcedureError) as e:
        bound(text)
    assert str(e.value) == f"CALL sys.probe: {problem}; {SIGNATURE}"


def test_unknown_procedure_names_the_closest_known_ones():
    with pytest.raises(ProcedureError,
                       match=r"^unknown procedure 'sys.compcat' \(did you mean sys.compact, sys.compact_database\?\)$"):
        lookup("compcat")
    with pytest.raises(ProcedureError, match=r"^unknown procedure 'sys.zzz' \(SHOW PROCEDURES lists them\)$"):
        lookup("zzz")


def test_names_are_case_insensitive_and_may_carry_a_catalog():
    assert lookup(procedure_name("paimon.SYS.Compact")).name == "compact"
    assert procedure_name("`sys`.`compact`") == "compact"
    with pytest.raises(ProcedureError, match="^unknown procedure 'db.compact'"):
        procedure_name("db.compact")


def test_register_files_a_procedure_under_its_name():
    from paimon_sql.procedures import PROCEDURES
    register(Probe)
    try:
        assert lookup("PROBE") is Probe
    finally:
        del PROCEDURES["probe"]


def test_every_registered_procedure_declares_paimon_sparks_signature_as_documented():
    """docs/procedures.md's table is paimon-spark's 42 procedures and Paimon 1.0's refresh_object_table;
    each one we register must match its row (parameters, types, optionality, output columns) and be
    marked available there, or refused when it is registered only to say what it needs."""
    from paimon_sql.procedures import PROCEDURES
    from paimon_sql.procedures.unsupported import Refused
    table = _documented()
    assert len(table) == 43
    for name, cls in PROCEDURES.items():
        params, output, status = table[name]
        assert (name, ", ".join(str(p) for p in cls.parameters)) == (name, params)
        assert (name, ", ".join(f.name for f in cls.output)) == (name, output)
        assert status in ("available", "refused"), name
    assert {n for n, row in table.items() if row[2] != "not yet"} == set(PROCEDURES)
    refused = {n for n, row in table.items() if row[2] == "refused"} - {"materialize_deletion_vectors"}
    assert refused == {n for n, cls in PROCEDURES.items() if issubclass(cls, Refused)}


def _documented():
    import pathlib
    import re
    doc = (pathlib.Path(__file__).parents[2] / "docs" / "procedures.md").read_text()
    return {m[0]: m[1:] for m in re.findall(r"^\| `(\w+)` \| (.*?) \| (.*?) \| (available|refused|not yet) \|$",
                                            doc, re.M)}


@pytest.mark.parametrize("name", sorted(n for n, row in _documented().items() if row[2] == "refused"
                                        and n != "materialize_deletion_vectors"))
def test_a_refused_procedure_checks_its_arguments_then_says_what_it_needs(name):
    cls = lookup(name)
    with pytest.raises(ProcedureError, match=r"^CALL sys\.%s: missing argument" % name):
        bind(cls, (), ())
    args = bind(cls, ["x"] * sum(p.required for p in cls.parameters), ())
    with pytest.raises(ProcedureError, match=r"^CALL sys\.%s: not supported by paimon-sql: it needs [^\n]+; "
                                             r"expected sys\.%s\(" % (name, name)):
        cls().call(None, args)
