import pytest

from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.options.core_options import CoreOptions, parse_duration_ms, parse_memory_size, registry, validate


def test_registry_has_every_core_option_with_typed_defaults():
    specs = registry()
    assert len(specs) > 300
    assert specs["bucket"].default == -1
    assert specs["file.format"].default == "parquet"
    assert specs["write-buffer-size"].default == 256 << 20
    assert specs["snapshot.time-retained"].default == 3600 * 1000
    assert specs["merge-engine"].default == "deduplicate"


def test_typed_access_and_unknown_keys_kept():
    o = CoreOptions({"bucket": "4", "target-file-size": "64 mb", "fields.a.aggregate-function": "sum"})
    assert o.bucket == 4
    assert o.target_file_size(True) == 64 << 20
    assert o.raw["fields.a.aggregate-function"] == "sum"
    assert CoreOptions({}).target_file_size(True) == 128 << 20
    assert CoreOptions({}).target_file_size(False) == 256 << 20


@pytest.mark.parametrize("key, value", [("bucket", "four"), ("write-only", "yes"), ("target-file-size", "big"),
                                        ("merge-engine", "dedupe"), ("snapshot.time-retained", "1 fortnight")])
def test_wrong_types_name_the_option(key, value):
    with pytest.raises(InvalidOptionError, match=key):
        validate({key: value})


def test_units():
    assert parse_memory_size("128 mb") == 128 << 20
    assert parse_memory_size("500 B") == 500
    assert parse_duration_ms("30 min") == 1800000
    assert parse_duration_ms("250") == 250
