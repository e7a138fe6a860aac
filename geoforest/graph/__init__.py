"""The graph layer: the neighbour graphs every clustering family runs on.

A clustering method is a rule over a neighbour graph, whatever geometry
built it.  This layer builds, symmetrises, connects and weights those graphs and
computes their minimum spanning tree and spectral embedding; the families
above it — spectral clustering (:mod:`geoforest.cluster`), longest-leg path
distance (:mod:`geoforest.llpd`), diffusion maps and LUND
(:mod:`geoforest.diffusion`) — are methods over it, side by side, and import
it, never one another.  It imports none of them.

* :func:`spatial_knn` — nearest neighbours among the pixels of a spatial window
  (the Euclidean kNN lists, their symmetric union and its Gaussian weights are
  private helpers of ``_knn.py``);
* :func:`bridge_components` — the edges of a minimum spanning forest joining
  a graph's connected components;
* :func:`euclidean_mst` — the exact Euclidean minimum spanning tree
  (quitefastmst's K-d tree up to :data:`AUTO_KDTREE_MAX_DIM` dimensions, its
  Prim above, the library's Borůvka on request or for ``d = 1``);
* :func:`normalized_affinity`, :func:`spectral_eigs` — the normalised affinity
  ``D^{-1/2} W D^{-1/2}`` of any symmetric non-negative affinity (dense,
  sparse or a ``LinearOperator``) and its leading eigenpairs;
* :func:`spectral_clustering`, :func:`spectral_embedding_njw`,
  :func:`spectral_partitions`, :func:`estimate_n_clusters`,
  :func:`canonical_labels` — NJW spectral clustering on those eigenpairs;
* :func:`spectral_excess`, :func:`choose_by_excess` — how far a graph's
  spectrum lies below those of structureless references of the data's mean
  and covariance (:func:`gaussian_reference`, :func:`uniform_reference`):
  K where no relative gap says it;
* :func:`label_free_levels`, :class:`Levels`, :func:`explain_levels` — the
  label-free choice of the number of clusters that every family shares: the
  finest level of the graph whose relative gap and excess over Gaussian
  references both reach their bars (and, for a weak step, its excess over
  uniform references too), with the evidence of every level;
* :func:`choose_by_relative_gap`, :func:`choose_finest_level`, :func:`eigengap_scores`,
  :func:`explain_choice`, :class:`LabelFreeChoiceWarning`, ... — its parts, and
  the older rules the papers' settings keep.

The geometry of a graph is the user's choice, and every clusterer and
embedding takes it through the same parameters, read by
:func:`fit_geometry`, the layer's one entry (``METRICS`` lists the values):

``metric`` : {"euclidean", "forest", "precomputed"}
    ``"euclidean"``: nearest neighbours in the features.  ``"forest"``: the
    neighbours of an unsupervised forest, ranked by its learned metric
    (:meth:`geoforest.UnsupervisedForest.kneighbors`), whose distances are
    the edge lengths.  ``"precomputed"``: ``fit(G)`` takes a square sparse
    distance graph (stored entries are edges, as scikit-learn's
    ``KNeighborsTransformer`` and :class:`~geoforest.ForestNeighborsTransformer`
    give) or a dense distance matrix; new points then come as rows of
    distances from them to the training points.
``forest`` : forest, ForestNeighborsTransformer or None
    The forest of ``metric="forest"``.  ``None``: ``UnsupervisedForest()``
    seeded with the estimator's ``random_state`` and ``n_jobs``.  An unfitted
    forest (or transformer) is cloned and fitted on ``X``; a fitted one is
    used as it is, and ``X`` must be its training data.
``n_neighbors`` : int
    The length of each point's neighbour list, in every geometry: for a
    precomputed graph, each row's ``n_neighbors`` smallest stored entries.
    What uses the whole graph (its minimum spanning tree, a new point's edges
    into it) uses every edge the geometry holds: all pairs in the Euclidean
    geometry (the exact EMST), every stored entry of a precomputed graph, a
    forest's ``n_neighbors`` lists.

A fitted :class:`Geometry` gives every training point's nearest others
(``neighbors``), new points' nearest training points (``query``), the bridges
of a minimum spanning forest *in its own metric* that join a disconnected
graph's components (``bridges``), the minimum spanning tree of its graph
(``spanning_tree``), new points' edges into it (``query_edges``) and itself on
some of its points (``subset``): the families ask it, never which metric it
is.  :func:`knn_affinity` weighs a neighbour graph's edges by the overlap of
the two points' lists, a weight free of the geometry's units.

The clustering families import this package only, never its private
modules; the numba steps their own kernels call come from
:mod:`geoforest.graph.kernels`.
"""

from ._choice import (
    MIN_RELATIVE_GAP,
    STRONG_RELATIVE_GAP,
    STRONG_STEP_EXCESS,
    LabelFreeChoiceWarning,
    choose_by_relative_gap,
    choose_finest_level,
    eigengap_scores,
    explain_choice,
    min_cluster_size,
    n_components,
    relative_gaps,
    score_partitions,
)
from ._connect import bridge_components
from ._eigensolvers import AUTO_DENSE_MAX_N, normalized_affinity, spectral_eigs, walk_eigenpairs
from ._geometries import (
    METRICS,
    EuclideanGeometry,
    ForestGeometry,
    PrecomputedGeometry,
    check_forest_metric,
    check_metric_in,
    fit_geometry,
    make_geometry,
    takes_graph,
)
from ._geometry import (
    COPIES_LOOKED_PAST,
    Geometry,
    SubsetGeometry,
    check_n_neighbors,
    sorted_rows,
)
from ._knn import check_query_graph, check_sparse_graph, spatial_knn, symmetrize
from ._levels import (
    LEVEL_MIN_GAP,
    MIXTURE_REFERENCES,
    REFERENCE_MARGIN,
    STRONG_EXCESS,
    Levels,
    explain_levels,
    label_free_levels,
)
from ._mst import AUTO_KDTREE_MAX_DIM, euclidean_mst
from ._reference import (
    MIN_EXCESS,
    N_REFERENCES,
    choose_by_excess,
    gaussian_reference,
    mixture_reference,
    spectral_excess,
    uniform_reference,
)
from ._spanning import spanning_tree
from ._spectral import (
    canonical_labels,
    estimate_n_clusters,
    spectral_clustering,
    spectral_embedding_njw,
    spectral_partitions,
)
from ._weights import knn_affinity

__all__ = [
    "AUTO_DENSE_MAX_N",
    "AUTO_KDTREE_MAX_DIM",
    "COPIES_LOOKED_PAST",
    "EuclideanGeometry",
    "ForestGeometry",
    "Geometry",
    "LEVEL_MIN_GAP",
    "MIXTURE_REFERENCES",
    "LabelFreeChoiceWarning",
    "Levels",
    "METRICS",
    "MIN_EXCESS",
    "MIN_RELATIVE_GAP",
    "N_REFERENCES",
    "PrecomputedGeometry",
    "REFERENCE_MARGIN",
    "STRONG_EXCESS",
    "STRONG_STEP_EXCESS",
    "STRONG_RELATIVE_GAP",
    "SubsetGeometry",
    "bridge_components",
    "canonical_labels",
    "check_forest_metric",
    "check_metric_in",
    "check_n_neighbors",
    "check_query_graph",
    "check_sparse_graph",
    "choose_by_excess",
    "gaussian_reference",
    "mixture_reference",
    "choose_by_relative_gap",
    "choose_finest_level",
    "eigengap_scores",
    "estimate_n_clusters",
    "euclidean_mst",
    "explain_choice",
    "explain_levels",
    "fit_geometry",
    "knn_affinity",
    "label_free_levels",
    "make_geometry",
    "min_cluster_size",
    "n_components",
    "normalized_affinity",
    "relative_gaps",
    "score_partitions",
    "sorted_rows",
    "spanning_tree",
    "spatial_knn",
    "spectral_clustering",
    "spectral_eigs",
    "spectral_embedding_njw",
    "spectral_excess",
    "spectral_partitions",
    "symmetrize",
    "takes_graph",
    "uniform_reference",
    "walk_eigenpairs",
]
