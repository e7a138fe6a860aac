"""Figures (optional: needs matplotlib, ``pip install "geoforest[plot]"``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def pyplot():
    """matplotlib's ``pyplot`` on the non-interactive Agg backend.

    Raises
    ------
    ImportError
        With the install command, when matplotlib (the ``plot`` extra) is missing.
    """
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
    plt = pyplot()
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


def plot_panels(
    panels: Mapping[str, Sequence[Mapping]],
    path: str | Path,
    *,
    xlabel: str,
    ylabel: str,
    ncols: int = 4,
    xscale: str = "linear",
    ylim: tuple[float, float] | None = (0.0, 1.02),
    suptitle: str = "",
    hlines: Mapping[str, float] | None = None,
    panel_size: tuple[float, float] = (3.4, 3.0),
    legend_in: Sequence[str] | None = None,
) -> Path:
    """A grid of line plots, one panel per key, sharing the legend.

    Parameters
    ----------
    panels : mapping of panel title to sequence of line specs
        Each line spec is a mapping with ``x``, ``y`` and ``label``, and any
        other keys are passed to ``Axes.plot`` (``color``, ``linestyle``,
        ``marker``...).
    path : str or Path
        Where to write the PNG.
    xlabel, ylabel : str
        Axis labels.
    ncols : int, default=4
        Panels per row.
    xscale : {"linear", "log", "symlog"}, default="linear"
        ``"symlog"`` shows 0 on a log-like axis.
    ylim : (float, float) or None
        y-axis limits.
    suptitle : str
        Figure title.
    hlines : mapping of panel title to float, optional
        A dotted grey "chance" line in those panels.
    panel_size : (float, float)
        Inches per panel.
    legend_in : sequence of str, optional
        Draw a legend inside these panels (each listing its own lines)
        instead of one shared legend below the figure.

    Returns
    -------
    path : Path
    """
    plt = pyplot()
    titles = list(panels)
    ncols = min(ncols, len(titles))
    nrows = -(-len(titles) // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(panel_size[0] * ncols, panel_size[1] * nrows + 0.6),
        layout="constrained",
        squeeze=False,
    )
    handles: dict[str, object] = {}
    for ax, title in zip(axes.flat, titles, strict=False):
        for spec in panels[title]:
            style = {k: v for k, v in spec.items() if k not in ("x", "y", "label")}
            (line,) = ax.plot(spec["x"], spec["y"], label=spec["label"], **style)
            handles.setdefault(spec["label"], line)
        if hlines and title in hlines:
            line = ax.axhline(hlines[title], color="grey", linestyle=":", label="chance")
            handles.setdefault("chance", line)
        if xscale == "symlog":
            xs = sorted({float(x) for spec in panels[title] for x in spec["x"]})
            ax.set_xscale("symlog", linthresh=1)
            ax.set_xlim(-0.15, max(xs[-1], 1.0) * 1.6)
            ax.set_xticks(xs, [f"{x:g}" for x in xs])
            ax.minorticks_off()
        elif xscale != "linear":
            ax.set_xscale(xscale)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if legend_in is not None and title in legend_in:
            ax.legend(frameon=False, fontsize="small")
    for ax in list(axes.flat)[len(titles) :]:
        ax.set_visible(False)
    if legend_in is None:
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="outside lower center",
            ncols=min(len(handles), 7),
            frameon=False,
        )
    if suptitle:
        fig.suptitle(suptitle)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
