"""Metrics: how good learned neighbours and clusterings are, against ground truth.

* geodesic metrics (``_geodesic.py``): :func:`geodesic_precision_recall`
  scores retrieved neighbour lists against the neighbours on the latent
  manifold (URerF paper, section 3.5), :func:`geodesic_neighbors` finds
  those true neighbours and :func:`chance_precision` is what random
  neighbours would score;
* clustering metrics (``_clustering.py``): :func:`clustering_accuracy` under
  the best one-to-one matching of clusters to classes, and
  :func:`cocluster_accuracy`, the fraction of point pairs on which two
  partitions agree.
"""

from ._clustering import clustering_accuracy, cocluster_accuracy
from ._geodesic import chance_precision, geodesic_neighbors, geodesic_precision_recall

__all__ = [
    "chance_precision",
    "clustering_accuracy",
    "cocluster_accuracy",
    "geodesic_neighbors",
    "geodesic_precision_recall",
]
