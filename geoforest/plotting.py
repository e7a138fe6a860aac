"""Figures (optional: needs matplotlib, ``pip install "geoforest[plot]"``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError('plotting needs matplotlib: pip install "geoforest[plot]"') from None
    return plt


def plot_precision_vs_noise(
    noise_dims: Sequence[int],
    precision: Mapping[str, Sequence[float]],
    path: str | Path,
    *,
    k: int = 50,
    chance: float | None = None,
    title: str = "",
) -> Path:
    """Line plot of precision@k against the number of noise dimensions.

    Parameters
    ----------
    noise_dims : sequence of int
        x values (a symmetric-log axis, so 0 is shown).
    precision : mapping of method name to sequence of float
        One line per method.
    path : str or Path
        Where to write the PNG.
    k : int, default=50
        Neighbourhood size, for the axis label.
    chance : float or None
        Draw the chance level as a dotted line.
    title : str
        Figure title.

    Returns
    -------
    path : Path
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.8), layout="constrained")
    for name, values in precision.items():
        ax.plot(noise_dims, values, marker="o", label=name)
    if chance is not None:
        ax.axhline(chance, color="grey", linestyle=":", label="chance")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(-0.1, max(max(noise_dims), 1) * 1.5)
    ax.set_xlabel("noise dimensions")
    ax.set_ylabel(f"geodesic precision@{k}")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.legend(frameon=False)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
