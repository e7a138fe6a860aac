"""Compare two folders of experiment runs, CSV by CSV, ignoring timing columns.

``python dev/compare_runs.py OLD_DIR NEW_DIR`` prints each CSV as equal or
lists its differing columns; exit status 1 when any differs. Columns whose name
contains "seconds" are wall-clock times and are left out.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def _read(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    keep = [i for i, name in enumerate(header) if "seconds" not in name]
    return [header[i] for i in keep], [[row[i] for i in keep] for row in body]


def compare(old: Path, new: Path) -> int:
    bad = 0
    names = sorted({p.name for p in old.glob("*.csv")} | {p.name for p in new.glob("*.csv")})
    for name in names:
        if not (old / name).exists() or not (new / name).exists():
            print(f"MISSING {name}")
            bad += 1
            continue
        (h1, r1), (h2, r2) = _read(old / name), _read(new / name)
        if (h1, r1) == (h2, r2):
            print(f"equal   {name} ({len(r1)} rows)")
            continue
        bad += 1
        cols = {h1[j] for a, b in zip(r1, r2, strict=False) for j in range(len(a)) if a[j] != b[j]}
        print(f"DIFFERS {name}: rows {len(r1)} vs {len(r2)}, columns {sorted(cols)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2])))
