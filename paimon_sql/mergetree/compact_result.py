"""CompactResult: what one bucket's compaction did (Paimon's ``CompactResult``), the value a
compaction hands the write that folds it into its commit message: the files it consumed and
made, the changelog it produced, and under merge-on-write the rows it deleted from older files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List

import numpy as np

from paimon_sql.manifest.manifest_file import DataFileMeta


@dataclass
class CompactResult:
    before: List[DataFileMeta] = field(default_factory=list)
    after: List[DataFileMeta] = field(default_factory=list)
    changelog: List[DataFileMeta] = field(default_factory=list)
    deleted_rows: Dict[str, np.ndarray] = field(default_factory=dict)  # merge-on-write: file -> positions
