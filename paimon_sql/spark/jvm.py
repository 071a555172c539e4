"""Reading Java and Scala collections from the JVM in a py4j call or two each.

py4j walks a Java map one round trip per entry and ends the walk on a Java exception, which
PySpark converts at some cost: ~60-100 ms for a handful of entries. Each function here makes one
call and hands the JVM's JSON of the collection back."""

from __future__ import annotations

import functools
import json


def java_map(jvm, jmap) -> dict:
    """A ``java.util.Map`` of strings as a dict."""
    return json.loads(_json_mapper(jvm).writeValueAsString(jmap))


def scala_map(jvm, smap) -> dict:
    """A Scala ``Map`` of strings as a dict."""
    return java_map(jvm, _converters(jvm).asJava(smap))


def scala_seq(jvm, seq) -> list:
    """A Scala ``Seq`` of strings as a list."""
    return json.loads(_json_mapper(jvm).writeValueAsString(_converters(jvm).asJava(seq)))


@functools.lru_cache(maxsize=None)
def _json_mapper(jvm):
    """Jackson's ObjectMapper in the JVM, made once: naming a class through py4j costs a round trip
    per package of its name."""
    return jvm.com.fasterxml.jackson.databind.ObjectMapper()


@functools.lru_cache(maxsize=None)
def _converters(jvm):
    return jvm.scala.jdk.javaapi.CollectionConverters


def scala_objects(seq) -> list:
    """A Scala ``Seq`` of JVM objects (plan nodes, ...) as a list of their handles."""
    return [seq.apply(i) for i in range(seq.size())]
