"""The staging folders of experiment runs, and the cleaning of those whose run died.

A run writes into ``OUT/.NAME.partial-HOST-PID-XXXXXXXX`` and moves its files
into ``OUT`` when complete (:func:`geoforest_experiments._runner.run_staged`).
Ctrl-C, SIGTERM and errors delete the folder, but a process killed outright
(``SIGKILL``, the out-of-memory killer, power loss) cannot.  The host and
process id in the name let the next run of the same experiment in the same
folder tell a dead run's leftovers from a run still going on beside it: a
folder of this host whose process no longer exists is removed; one of
another host (a shared filesystem) or of a live process is left alone.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import time
import warnings
from pathlib import Path

__all__ = ["UNNAMED_MAX_AGE", "make_staging", "remove_dead_staging"]

#: Age (seconds since last change) after which a staging folder whose name
#: carries no host and process is taken for a dead run's: a day.
UNNAMED_MAX_AGE = 24 * 3600.0

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")


def _host() -> str:
    """This machine's name, reduced to characters safe in a folder name (no ``-``)."""
    return _UNSAFE.sub("_", socket.gethostname()) or "host"


def _prefix(name: str) -> str:
    return f".{name}.partial-"


def make_staging(out: Path, name: str) -> Path:
    """A new staging folder of experiment ``name`` in ``out``, named for this host and process."""
    prefix = f"{_prefix(name)}{_host()}-{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=out))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # e.g. Windows: no signal 0; assume the run may be alive
        return True
    return True


def remove_dead_staging(out: Path, name: str) -> list[Path]:
    """Remove the staging folders of ``name`` in ``out`` left by runs that died on this host.

    A folder without host and process in its name (left by a version before
    the name carried them) is removed once untouched for
    :data:`UNNAMED_MAX_AGE` seconds.

    Returns
    -------
    list of Path
        The folders removed (a warning names them).
    """
    if not out.is_dir():
        return []
    host, removed = _host(), []
    for path in sorted(out.glob(_prefix(name) + "*")):
        if not path.is_dir() or path.is_symlink():
            continue
        parts = path.name[len(_prefix(name)) :].rsplit("-", 2)
        if len(parts) == 3 and parts[1].isdigit():
            if parts[0] != host or _alive(int(parts[1])):
                continue
        elif time.time() - path.stat().st_mtime < UNNAMED_MAX_AGE:
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    if removed:
        warnings.warn(
            f"removed {len(removed)} staging folder(s) of {name} runs that died before "
            f"finishing: {', '.join(p.name for p in removed)}",
            stacklevel=3,
        )
    return removed
