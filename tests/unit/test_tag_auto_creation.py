"""Automatic tags (no Spark): Paimon's TagAutoCreation periods, names, delay, completion and
retention; batch tags; tag time expiry; the hook after commits. Snapshots are committed for real
and then given the commit times (or watermarks) a test needs."""

import dataclasses
import datetime as dt
import logging

import pyarrow as pa
import pytest

from paimon_sql.exceptions import InvalidOptionError, TagError
from paimon_sql.tag.tag_auto_creation import create_batch_tag, create_period_tags, expire_tags, run_tag_maintenance

UTC = dt.timezone.utc


def table_at(catalog, times, options=None, watermarks=None):
    """A table with one snapshot per time (UTC wall clock ``'2024-05-01 10:00'``), then ``options`` set."""
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    for i, text in enumerate(times):
        t.write_arrow(pa.table({"id": [i]}))
        snap = t.snapshot_manager.snapshot(i + 1)
        millis = int(dt.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)
        wm = None if watermarks is None else watermarks[i]
        snap = dataclasses.replace(snap, time_millis=millis, watermark=wm)
        t.io.write_bytes(t.paths.snapshot_path(snap.id), snap.to_json().encode())
    return t.copy({"sink.process-time-zone": "UTC", **(options or {})})


def tag_map(t):
    return {tag.name: tag.snapshot.id for tag in t.tag_manager.tags()}


DAYS = ["2024-05-01 10:00", "2024-05-01 23:00", "2024-05-02 00:30", "2024-05-02 12:00", "2024-05-04 01:00"]


def test_daily_tags_name_the_period_before_the_snapshot(catalog):
    t = table_at(catalog, DAYS, {"tag.automatic-creation": "process-time", "tag.creation-period": "daily"})
    assert create_period_tags(t) == ["2024-04-30", "2024-05-01", "2024-05-03"]
    assert tag_map(t) == {"2024-04-30": 1, "2024-05-01": 3, "2024-05-03": 5}
    assert create_period_tags(t) == []  # restored from the latest automatic tag: nothing twice


def test_automatic_completion_fills_the_skipped_period(catalog):
    t = table_at(catalog, DAYS, {"tag.automatic-creation": "process-time", "tag.automatic-completion": "true",
                                 "tag.period-formatter": "WITHOUT_DASHES"})
    create_period_tags(t)
    assert tag_map(t) == {"20240430": 1, "20240501": 3, "20240502": 5}


def test_hourly_with_delay_and_formatters(catalog):
    times = ["2024-05-01 10:05", "2024-05-01 11:20", "2024-05-01 11:40"]
    for formatter, names in [("with_dashes", ["2024-05-01 09", "2024-05-01 10"]),
                             ("without_dashes", ["20240501 09", "20240501 10"]),
                             ("without_dashes_and_spaces", ["2024050109", "2024050110"])]:
        t = table_at(catalog, times, {"tag.automatic-creation": "process-time", "tag.creation-period": "hourly",
                                      "tag.creation-delay": "30 min", "tag.period-formatter": formatter})
        assert create_period_tags(t) == names and tag_map(t) == {names[0]: 1, names[1]: 3}
        catalog.drop_table("db.t")


def test_two_hours_and_period_duration(catalog):
    times = ["2024-05-01 10:40", "2024-05-01 13:10"]
    t = table_at(catalog, times, {"tag.automatic-creation": "process-time", "tag.creation-period": "two-hours"})
    assert create_period_tags(t) == ["2024-05-01 08", "2024-05-01 10"]
    t = t.copy({"tag.creation-period-duration": "30 min"})
    # its names are its own: the two-hour tags are not its automatic tags, so it starts over
    assert create_period_tags(t) == ["202405011000", "202405011230"]
    assert tag_map(t)["202405011230"] == 2


def test_time_zones(catalog):
    t = table_at(catalog, ["2024-05-01 20:00"], {"tag.automatic-creation": "process-time",
                                                 "sink.process-time-zone": "Asia/Tokyo"})
    assert create_period_tags(t) == ["2024-05-01"]  # 05-02 05:00 in Tokyo
    catalog.drop_table("db.t")
    wm = int(dt.datetime(2024, 5, 1, 20, tzinfo=UTC).timestamp() * 1000)
    t = table_at(catalog, ["2024-05-09 00:00", "2024-05-09 00:00"], watermarks=[None, wm],
                 options={"tag.automatic-creation": "watermark"})
    assert create_period_tags(t) == ["2024-04-30"] and tag_map(t) == {"2024-04-30": 2}  # watermark in UTC
    t.tag_manager.delete("2024-04-30")
    assert create_period_tags(t.copy({"sink.watermark-time-zone": "Asia/Tokyo"})) == ["2024-05-01"]


def test_num_retained_max_and_default_time_retained(catalog):
    days = ["2024-05-01 01:00", "2024-05-02 01:00", "2024-05-03 01:00", "2024-05-04 01:00"]
    t = table_at(catalog, days, {"tag.automatic-creation": "process-time", "tag.num-retained-max": "2",
                                 "tag.default-time-retained": "1 d"})
    t.tag_manager.create("mine", t.snapshot_manager.snapshot(1))
    create_period_tags(t)
    assert tag_map(t) == {"mine": 1, "2024-05-02": 3, "2024-05-03": 4}
    assert t.tag_manager.get("2024-05-03").time_retained == dt.timedelta(days=1)
    assert t.tag_manager.get("mine").time_retained is None


def test_delay_must_be_shorter_than_the_period(catalog):
    t = table_at(catalog, ["2024-05-01 01:00"], {"tag.automatic-creation": "process-time",
                                                 "tag.creation-period": "hourly", "tag.creation-delay": "1 h"})
    with pytest.raises(TagError, match="tag.creation-delay must be shorter than the tag period"):
        create_period_tags(t)
    assert tag_map(t) == {}


def test_bad_values_are_refused_when_set(catalog):
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    for key, value in [("tag.automatic-creation", "sometimes"), ("tag.creation-period", "weekly"),
                       ("tag.period-formatter", "slashes"), ("tag.period-formatter", "without-dashes")]:
        with pytest.raises(InvalidOptionError, match=key):
            t.copy({key: value})


def test_batch_tags(catalog):
    t = table_at(catalog, ["2024-05-01 10:00", "2024-05-01 11:00"], {"tag.automatic-creation": "batch"})
    assert create_batch_tag(t) == "batch-write-2024-05-01" and tag_map(t) == {"batch-write-2024-05-01": 2}
    t.write_arrow(pa.table({"id": [9]}))  # the hook replaces it: the latest snapshot is tagged
    today = dt.datetime.fromtimestamp(t.snapshot_manager.latest().time_millis / 1000, UTC).date().isoformat()
    assert tag_map(t) == {"batch-write-2024-05-01": 2, f"batch-write-{today}": 3}
    named = t.copy({"tag.batch.customized-name": "nightly", "tag.num-retained-max": "1"})
    assert create_batch_tag(named) == "nightly" and tag_map(t) == {"nightly": 3}


def test_time_expiry(catalog):
    t = table_at(catalog, ["2024-05-01 10:00"])
    t.tag_manager.create("gone", t.snapshot_manager.snapshot(1), dt.timedelta(seconds=-1))
    t.tag_manager.create("kept", t.snapshot_manager.snapshot(1), dt.timedelta(days=1))
    t.tag_manager.create("plain", t.snapshot_manager.snapshot(1))
    run_tag_maintenance(t.copy({"tag.time-expire-enabled": "false"}))
    assert set(tag_map(t)) == {"gone", "kept", "plain"}
    run_tag_maintenance(t)
    assert set(tag_map(t)) == {"kept", "plain"}
    assert sorted(expire_tags(t, dt.datetime.now() + dt.timedelta(minutes=1))) == ["kept", "plain"]


def test_hook_after_commit_creates_tags_and_logs_failures(catalog, caplog):
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]),
                                        options={"tag.automatic-creation": "process-time"})
    t.write_arrow(pa.table({"id": [1]}))
    local = dt.datetime.fromtimestamp(t.snapshot_manager.latest().time_millis / 1000)
    assert tag_map(t) == {(local.date() - dt.timedelta(days=1)).isoformat(): 1}
    bad = t.copy({"tag.creation-period": "hourly", "tag.creation-delay": "2 h"})
    with caplog.at_level(logging.WARNING):
        assert bad.write_arrow(pa.table({"id": [2]})) == 2  # the commit stands
    assert "tag maintenance after the commit failed" in caplog.text
    assert t.snapshot_manager.latest_id() == 2 and len(tag_map(t)) == 1


def test_write_only_skips_period_tags(catalog):
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]),
                                        options={"tag.automatic-creation": "process-time", "write-only": "true"})
    t.write_arrow(pa.table({"id": [1]}))
    assert tag_map(t) == {}
