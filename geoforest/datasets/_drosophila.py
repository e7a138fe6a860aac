"""Real-world connectome: the larval Drosophila mushroom body (right hemisphere).

The data files live in ``geoforest/datasets/data/drosophila/`` and were copied
unchanged from the graspologic 3.4.4 wheel (MIT licence, see
``LICENSE-graspologic.txt`` next to them).  They are read through
:mod:`importlib.resources`, so the loader also works from an installed wheel or
zip archive.
"""

from __future__ import annotations

import io
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

__all__ = ["load_drosophila"]

_DATA_DIR = ("data", "drosophila")
_ADJACENCY_FILE = "right_adjacency.csv"
_LABELS_FILE = "right_cell_labels.csv"
_LICENSE_FILE = "LICENSE-graspologic.txt"

_CELL_TYPES = {
    "I": "mushroom body input neuron (MBIN)",
    "K": "Kenyon cell (KC)",
    "O": "mushroom body output neuron (MBON)",
    "P": "projection neuron (PN)",
}

_CITATION = (
    'Eichler, K. et al. (2017) "The complete connectome of a learning and memory '
    'centre in an insect brain", Nature 548, 175-182.'
)


def _data_file(name: str):
    """Traversable for a file of the shipped Drosophila data."""
    return resources.files("geoforest.datasets").joinpath(*_DATA_DIR, name)


def _read_text(name: str) -> str:
    return _data_file(name).read_text(encoding="ascii")


def load_drosophila(*, return_X_y: bool = False):
    """Load the right-hemisphere larval Drosophila mushroom body connectome.

    The mushroom body is the learning and memory centre of the insect brain.
    Its complete wiring diagram was reconstructed from electron microscopy by
    Eichler et al. (2017); this is the right-hemisphere graph of 213 neurons as
    distributed by graspologic 3.4.4 (MIT licence), with each neuron labelled
    by one of four cell types.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(adjacency, target)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        Dictionary-like object with the attributes

        adjacency : ndarray of shape (213, 213), dtype float64
            Directed, weighted adjacency matrix whose entries are synapse
            counts between pairs of neurons, in the orientation as
            distributed by graspologic (its documentation does not state
            whether rows index the pre- or the postsynaptic neuron).  The
            matrix is not symmetric and has a zero diagonal.
        labels : ndarray of shape (213,), dtype str
            Cell-type letter of each neuron (see ``cell_types``).
        target : ndarray of shape (213,), dtype int64
            Integer codes ``0..3`` of ``labels``, in the order of
            ``target_names``.
        target_names : ndarray of shape (4,), dtype str
            The sorted cell-type letters ``['I', 'K', 'O', 'P']``.
        cell_types : dict
            Maps each letter to the full cell-type name.
        DESCR : str
            Description of the data set, its licence and citation.

    (adjacency, target) : tuple of ndarray
        Returned instead of the Bunch when ``return_X_y`` is True.

    Notes
    -----
    The data files (``right_adjacency.csv``, whitespace separated, and
    ``right_cell_labels.csv``) are shipped in
    ``geoforest/datasets/data/drosophila/`` together with the graspologic
    MIT licence in ``LICENSE-graspologic.txt``.

    References
    ----------
    .. [1] Eichler, K., Li, F., Litwin-Kumar, A., Park, Y., Andrade, I.,
           Schneider-Mizell, C. M., et al. (2017). The complete connectome of
           a learning and memory centre in an insect brain. Nature, 548,
           175-182.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.datasets import load_drosophila
    >>> data = load_drosophila()
    >>> data.adjacency.shape
    (213, 213)
    >>> [str(name) for name in data.target_names]
    ['I', 'K', 'O', 'P']
    >>> np.bincount(data.target).tolist()
    [21, 100, 29, 63]
    >>> A, y = load_drosophila(return_X_y=True)
    >>> int(np.count_nonzero(A)), int(A.sum())
    (7536, 26371)
    """
    adjacency = np.loadtxt(io.StringIO(_read_text(_ADJACENCY_FILE)), dtype=np.float64, ndmin=2)
    labels = np.array(_read_text(_LABELS_FILE).split(), dtype=str)

    n = labels.shape[0]
    if adjacency.shape != (n, n):  # pragma: no cover - guards against corrupted data
        raise RuntimeError(
            f"Drosophila data is corrupted: adjacency has shape {adjacency.shape} "
            f"but there are {n} labels."
        )

    target_names, target = np.unique(labels, return_inverse=True)
    target = target.astype(np.int64)

    if return_X_y:
        return adjacency, target

    counts = ", ".join(
        f"{int(c)} {letter} ({_CELL_TYPES.get(str(letter), 'unknown')})"
        for letter, c in zip(target_names, np.bincount(target), strict=True)
    )
    n_edges = int(np.count_nonzero(adjacency))
    total = int(adjacency.sum())
    descr = (
        "Larval Drosophila mushroom body connectome, right hemisphere.\n\n"
        f"A directed, weighted graph of {n} neurons and {n_edges} edges (nonzero "
        f"entries of the adjacency matrix; {total} synapses in total). Entries are "
        "synapse counts, oriented as distributed by graspologic. Each neuron carries "
        f"one of {len(target_names)} cell-type labels: {counts}.\n\n"
        "The files were copied unchanged from the graspologic 3.4.4 wheel "
        "(graspologic/datasets/drosophila/), which is distributed under the MIT "
        f"licence; the licence text is shipped as {_LICENSE_FILE} next to the data "
        "in geoforest/datasets/data/drosophila/.\n\n"
        f"Citation: {_CITATION}"
    )

    return Bunch(
        adjacency=adjacency,
        labels=labels,
        target=target,
        target_names=target_names,
        cell_types={str(k): _CELL_TYPES[str(k)] for k in target_names},
        DESCR=descr,
    )
