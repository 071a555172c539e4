"""Reading a time from partition values (Paimon's PartitionTimeExtractor). The expected times are
what Java 17 gives for the same text and pattern (DateTimeFormatter.ofPattern, SMART, and
Paimon's lenient default formatter), checked by running Paimon's own class on each case."""

import datetime as dt

import pytest

from paimon_sql.exceptions import PaimonError
from paimon_sql.maintenance.expire_partitions import PartitionTimeExtractor


def at(text):
    return None if text is None else dt.datetime.fromisoformat(text)


@pytest.mark.parametrize("text, formatter, expected", [
    # the default: yyyy-MM-dd[ HH:mm:ss[.fraction]], digits 1..n, out-of-range values roll over
    ("2024-01-05", None, "2024-01-05T00:00"),
    ("2024-1-5", None, "2024-01-05T00:00"),
    ("2024-01-05 10:20:30", None, "2024-01-05T10:20:30"),
    ("2024-01-05 10:20:30.123456789", None, "2024-01-05T10:20:30.123456"),
    ("2024-13-01", None, "2025-01-01T00:00"),
    ("2024-02-30", None, "2024-03-01T00:00"),
    ("2024-00-05", None, "2023-12-05T00:00"),
    ("2024-01-05 25:00:00", None, "2024-01-06T01:00"),
    ("2024-01-05T10:00", None, None),
    ("20240105", None, None),
    ("2024-01-05 10:20", None, None),
    # a formatter: fields in range, a day past the month's end clamped to its last day
    ("20240105", "yyyyMMdd", "2024-01-05T00:00"),
    ("2024010512", "yyyyMMddHH", "2024-01-05T12:00"),
    ("202401051230", "yyyyMMddHHmm", "2024-01-05T12:30"),
    ("2024-02-30", "yyyy-MM-dd", "2024-02-29T00:00"),
    ("2023-02-29", "yyyy-MM-dd", "2023-02-28T00:00"),
    ("2024-04-31", "yyyy-MM-dd", "2024-04-30T00:00"),
    ("2024-02-32", "yyyy-MM-dd", None),
    ("2024-13-01", "yyyy-MM-dd", None),
    ("2024-00-05", "yyyy-MM-dd", None),
    ("2024-01-00", "yyyy-MM-dd", None),
    ("2024-1-05", "yyyy-MM-dd", None),
    ("12024-01-05", "yyyy-MM-dd", None),
    ("024-01-05", "yyyy-MM-dd", None),
    ("24-01-05", "yy-MM-dd", "2024-01-05T00:00"),
    ("99-01-05", "yy-MM-dd", "2099-01-05T00:00"),
    ("2024-1-5", "yyyy-M-d", "2024-01-05T00:00"),
    ("1-01-05", "y-MM-dd", "0001-01-05T00:00"),
    ("2024-01-05", "uuuu-MM-dd", "2024-01-05T00:00"),
    ("2024/01/05", "yyyy/MM/dd", "2024-01-05T00:00"),
    ("2024-01-05 24:00:00", "yyyy-MM-dd HH:mm:ss", "2024-01-06T00:00"),
    ("2024-01-05 10", "yyyy-MM-dd HH", "2024-01-05T10:00"),
    ("2024-01-05 :30", "yyyy-MM-dd :mm", "2024-01-05T00:00"),  # no hour: no time, midnight
    ("2024-01-05 10::15", "yyyy-MM-dd HH::ss", "2024-01-05T00:00"),  # seconds without minutes: midnight
    ("2024-01-05T10:30", "yyyy-MM-dd'T'HH:mm", "2024-01-05T10:30"),
    ("2024-01-05 10:30:00.123", "yyyy-MM-dd HH:mm:ss.SSS", "2024-01-05T10:30:00.123"),
    ("2024-01-05 10:30:00.12", "yyyy-MM-dd HH:mm:ss.SSS", None),
    ("2024-01-05 10:30:15", "yyyy-MM-dd HH:mm", None),
    ("5 o'clock 2024-01-05", "H 'o''clock' yyyy-MM-dd", "2024-01-05T05:00"),
])
def test_a_time_is_read_as_java_reads_it(text, formatter, expected):
    assert PartitionTimeExtractor(None, formatter).extract(["dt"], [text]) == at(expected)


@pytest.mark.parametrize("pattern, keys, values, expected", [
    (None, ["dt", "hour"], ["2024-01-05", "10"], "2024-01-05T00:00"),  # the first value alone
    ("$dt $hour:00:00", ["dt", "hour"], ["2024-01-05", "10"], "2024-01-05T10:00"),
    ("$year-$month-$day", ["year", "month", "day"], ["2024", "1", "5"], "2024-01-05T00:00"),
    ("$dt1 $dt:00:00", ["dt", "dt1"], ["7", "2024-01-05"], "2024-01-05T07:00"),  # $dt1 is not $dt + '1'
    ("$dt $nokey", ["dt"], ["2024-01-05"], None),  # an unknown $name stays as it is
])
def test_the_pattern_joins_values(pattern, keys, values, expected):
    assert PartitionTimeExtractor(pattern, None).extract(keys, values) == at(expected)


def test_a_null_value_gives_no_time():
    assert PartitionTimeExtractor("$dt $h:00:00", None).extract(["dt", "h"], ["2024-01-05", None]) is None


@pytest.mark.parametrize("formatter, problem", [
    ("yyyy-MM-dd a", "pattern letter 'a' is not supported"),
    ("yyyy-MMM-dd", "too many 'M' letters \\(month names are not supported\\)"),
    ("yyyy-MM-ddd", "too many 'd' letters"),
    ("yyyy-MM-dd[ HH]", "'\\[' \\(optional sections"),
    ("yyyy-MM-dd 'x", "unclosed quote"),
    ("yyyyMM", "has no year, month and day"),
    ("yyyy-MM-dd-yy", "the year is given twice"),
])
def test_an_unsupported_formatter_is_refused_in_one_line(formatter, problem):
    with pytest.raises(PaimonError, match=f"^partition.timestamp-formatter '{formatter.replace('[', '.')}'.*{problem}"):
        PartitionTimeExtractor(None, formatter)
