"""Extract the ConfigOptions of Paimon's option classes from its Java source into paimon_sql/options/.

paimon-sql judges every option key a Spark user can give (table, catalog, Spark read/write options);
the keys, their Java types, defaults and descriptions are Paimon's facts, so they are read from
Paimon's source rather than typed by hand. One class per row of ``CLASSES`` (its scope: ``table``
options stored with a table or given per query, ``catalog`` options of a catalog, ``spark`` read and
write options of paimon-spark). Output: ``paimon_options.tsv`` (class, scope, key, type,
default, description) for every class but CoreOptions, whose keys live in ``core_options.tsv`` beside our
per-key rules; for CoreOptions this script only reports the keys the two disagree on.

Run: ``.venv/bin/python scripts/options_extract.py [--git-dir DIR] [--ref release-2.0.0] [--check]``
(default: the bare mirror at /work/.mirror/apache+paimon/repo).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Dict, Iterator, List, Sequence, Tuple

OPTIONS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "paimon_sql", "options")
OUT = os.path.join(OPTIONS_DIR, "paimon_options.tsv")
GIT_DIR = "/work/.mirror/apache+paimon/repo"
REF = "release-2.0.0"

# class → (scope, source path at REF)
CLASSES: Dict[str, Tuple[str, str]] = {
    "CoreOptions": ("table", "paimon-api/src/main/java/org/apache/paimon/CoreOptions.java"),
    "CatalogOptions": ("catalog", "paimon-api/src/main/java/org/apache/paimon/options/CatalogOptions.java"),
    "RESTCatalogOptions": ("catalog", "paimon-api/src/main/java/org/apache/paimon/rest/RESTCatalogOptions.java"),
    "JdbcCatalogOptions": ("catalog", "paimon-core/src/main/java/org/apache/paimon/jdbc/JdbcCatalogOptions.java"),
    "HiveCatalogOptions": ("catalog",
                           "paimon-hive/paimon-hive-catalog/src/main/java/org/apache/paimon/hive/HiveCatalogOptions.java"),
    "SparkCatalogOptions": ("catalog", "paimon-spark/paimon-spark-common/src/main/java/org/apache/paimon/spark/"
                                       "SparkCatalogOptions.java"),
    "SparkConnectorOptions": ("spark", "paimon-spark/paimon-spark-common/src/main/java/org/apache/paimon/spark/"
                                       "SparkConnectorOptions.java"),
    "OrcOptions": ("table", "paimon-format/src/main/java/org/apache/paimon/format/OrcOptions.java"),
    "CsvOptions": ("table", "paimon-format/src/main/java/org/apache/paimon/format/csv/CsvOptions.java"),
    "JsonOptions": ("table", "paimon-format/src/main/java/org/apache/paimon/format/json/JsonOptions.java"),
    "TextOptions": ("table", "paimon-format/src/main/java/org/apache/paimon/format/text/TextOptions.java"),
    "BitmapGlobalIndexOptions": ("table", "paimon-common/src/main/java/org/apache/paimon/globalindex/bitmap/"
                                          "BitmapGlobalIndexOptions.java"),
    "BTreeIndexOptions": ("table", "paimon-common/src/main/java/org/apache/paimon/globalindex/btree/"
                                   "BTreeIndexOptions.java"),
    "SortedIndexOptions": ("table", "paimon-common/src/main/java/org/apache/paimon/globalindex/sorted/"
                                    "SortedIndexOptions.java"),
    "LuminaVectorIndexOptions": ("table", "paimon-lumina/src/main/java/org/apache/paimon/lumina/index/"
                                          "LuminaVectorIndexOptions.java"),
    "IcebergOptions": ("table", "paimon-core/src/main/java/org/apache/paimon/iceberg/IcebergOptions.java"),
}

_STRING = r'"(?:[^"\\]|\\.)*"'
_DECL = re.compile(r"ConfigOption<(?P<type>.+?)>\s+(?P<name>\w+)\s*=")
_CONST = re.compile(r"static\s+final\s+String\s+(\w+)\s*=\s*(" + _STRING + r"(?:\s*\+\s*(?:" + _STRING + r"|\w+))*)\s*;")


def _scan(text: str, start: int) -> Iterator[Tuple[int, str, int]]:
    """(index, character, bracket depth after it) of Java code from ``start``, string literals skipped."""
    depth, i, in_str = 0, start, False
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        else:
            depth += (c in "([{") - (c in ")]}")
            yield i, c, depth
        i += 1


def _balanced(text: str, start: int) -> str:
    """The text inside the parenthesis opening at ``text[start]``."""
    for i, c, depth in _scan(text, start):
        if c == ")" and depth == 0:
            return text[start + 1:i]
    raise ValueError("unbalanced parenthesis")


def _call_arg(stmt: str, method: str) -> str:
    m = re.search(r"(?:^|[.\s])" + re.escape(method) + r"\s*\(", stmt)
    return _balanced(stmt, m.end() - 1) if m else None


def _literal(expr: str, consts: Dict[str, str]) -> str:
    """A string expression (literals and String constants joined by +) → its value."""
    parts = []
    for token in re.findall(_STRING + r"|[A-Za-z_][\w.]*", expr):
        if token.startswith('"'):
            parts.append(bytes(token[1:-1], "utf-8").decode("unicode_escape"))
        elif token.split(".")[-1] in consts:
            parts.append(consts[token.split(".")[-1]])
    return "".join(parts)


def _statements(source: str) -> Iterator[Tuple[str, str]]:
    """(Java type, declaration text up to its ';') of each ConfigOption field."""
    for m in _DECL.finditer(source):
        end = next(i for i, c, depth in _scan(source, m.end()) if c == ";" and depth == 0)
        yield m.group("type").strip(), source[m.end():end]


def _description(stmt: str, consts: Dict[str, str]) -> str:
    arg = _call_arg(stmt, "withDescription")
    if arg is None:
        return ""
    text = _literal(arg, consts) if arg.lstrip().startswith('"') else " ".join(
        bytes(s[1:-1], "utf-8").decode("unicode_escape") for s in re.findall(_STRING, arg))
    return re.sub(r"\s+", " ", text).strip()


def options_of(source: str) -> List[Tuple[str, str, str, str]]:
    """(key, type, default expression or ``(none)``, description) of each option of a class."""
    consts = {}
    for name, expr in _CONST.findall(source):
        consts[name] = _literal(expr, consts)
    rows = []
    for java_type, stmt in _statements(source):
        key_expr = _call_arg(stmt, "key")
        if key_expr is None:
            continue
        default = _call_arg(stmt, "defaultValue")
        rows.append((_literal(key_expr, consts), java_type,
                     "(none)" if default is None else re.sub(r"\s+", " ", default.strip()), _description(stmt, consts)))
    return rows


def _show(git_dir: str, ref: str, path: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{ref}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def _core_keys() -> List[str]:
    with open(os.path.join(OPTIONS_DIR, "core_options.tsv"), encoding="utf-8") as f:
        return [line.split("\t")[0] for line in f if line.strip() and not line.startswith("#")]


def main(argv: Sequence[str]) -> int:
    git_dir = argv[argv.index("--git-dir") + 1] if "--git-dir" in argv else GIT_DIR
    ref = argv[argv.index("--ref") + 1] if "--ref" in argv else REF
    lines = [f"# generated by scripts/options_extract.py from Apache Paimon {ref}: class\tscope\tkey\ttype\t"
             "default\tdescription"]
    for cls, (scope, path) in CLASSES.items():
        rows = options_of(_show(git_dir, ref, path))
        if cls == "CoreOptions":
            ours, theirs = set(_core_keys()), {r[0] for r in rows}
            for key in sorted(theirs - ours):
                print(f"CoreOptions: {key} is missing from core_options.tsv", file=sys.stderr)
            for key in sorted(ours - theirs):
                print(f"CoreOptions: core_options.tsv has {key}, not a key of {ref}", file=sys.stderr)
            continue
        lines += ["\t".join((cls, scope, key, java_type, default, desc.replace("\t", " ")))
                  for key, java_type, default, desc in rows]
    text = "\n".join(lines) + "\n"
    if "--check" in argv:
        with open(OUT, encoding="utf-8") as f:
            same = f.read() == text
        print("paimon_options.tsv is in sync" if same else "paimon_options.tsv is out of date")
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
