"""Peak memory of the running process, shared by the benchmark scripts."""

from __future__ import annotations


def peak_rss_bytes() -> int:
    """Peak resident memory of this process (``VmHWM``; ``ru_maxrss`` elsewhere)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    import resource
    import sys

    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024  # bytes on macOS, kB elsewhere
