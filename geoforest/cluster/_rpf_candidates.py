"""rpfCluster's candidates: one (beta_1, beta_2) pair of the forest kernel, clustered."""

from __future__ import annotations

import warnings
from typing import Any

import scipy.sparse as sp
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ..graph import AUTO_DENSE_MAX_N, spectral_clustering
from ._rpf_kernel import _sharpen_kept, attach_by_kernel, sharpen_kernel

__all__ = ["KernelCandidatesMixin"]


class KernelCandidatesMixin:
    """The steps :class:`~geoforest.ForestSpectralClustering` applies to every candidate."""

    def cluster_candidate(
        self,
        threshold: float,
        scale: float,
        *,
        kernel=None,
        n_clusters: int | None = None,
        n_eigenvalues: int | None = None,
    ) -> Bunch:
        """Cluster one (beta_1, beta_2) candidate of the fitted kernel, as ``fit`` does.

        Sharpens the kernel (:func:`sharpen_kernel`), runs the spectral step
        with this estimator's settings and seed, and attaches the points the
        threshold cuts off through the kernel (:func:`attach_by_kernel`): the
        procedure ``fit`` applies to every candidate of its grid, so on
        ``selection_kernel_`` with the same pairs it gives the candidates
        ``fit`` compared, and on ``kernel_`` at ``(threshold_, scale_)`` the
        labels of the fit (with ``n_clusters`` given, or K estimated by
        ``"relgap"``; a K estimated by the eigengap of the candidate was
        computed from more eigenpairs).  Use it to study other pairs than the
        grid's, to cluster all points at a pair chosen on the selection
        subset, or to cluster the fitted kernel at another K.

        Parameters
        ----------
        threshold : float
            beta_1.
        scale : float
            beta_2, ``> 0``.
        kernel : sparse array of shape (m, m) or None, default=None
            The kernel to cluster: ``None`` is ``kernel_`` (every training
            point); ``selection_kernel_`` is the one the candidates were
            compared on.
        n_clusters : int or None, default=None
            Number of clusters; ``None`` is ``n_clusters_``.
        n_eigenvalues : int or None, default=None
            Eigenvalues to compute, at least ``n_clusters`` (``n_clusters + 1``
            gives the eigengap after K; capped at what the solver allows);
            ``None``: as many as the clustering needs (one more with
            ``selection="eigengap"``).

        Returns
        -------
        Bunch
            What :func:`~geoforest.graph.spectral_clustering` returns
            (``labels``, ``n_clusters``, ``eigenvalues``, ``embedding``,
            ``isolated``, ``unembedded``), the labels with the cut-off points
            attached, plus ``affinity`` (the sharpened kernel that was
            clustered), ``threshold`` and ``scale``.

        Examples
        --------
        >>> import geoforest as gf
        >>> from sklearn.datasets import load_iris
        >>> X = load_iris().data
        >>> model = gf.ForestSpectralClustering(3, affinity="kernel", random_state=0).fit(X)
        >>> same = model.cluster_candidate(model.threshold_, model.scale_)
        >>> bool((same.labels == model.labels_).all())
        True
        """
        check_is_fitted(self, "labels_")
        S = self.kernel_ if kernel is None else sp.csr_array(kernel)
        n_clusters = self.n_clusters_ if n_clusters is None else n_clusters
        cand = self._candidate(
            S, threshold, scale, self._seed, n_clusters=n_clusters, n_eigenvalues=n_eigenvalues
        )
        res = cand["_res"]
        res.affinity, res.threshold, res.scale = cand["_A"], threshold, scale
        return res

    def _candidate(
        self,
        S,
        b1: float,
        b2: float,
        seed: int,
        n_clusters: int | None = None,
        n_eigenvalues: int | None = None,
        kept=None,
    ) -> dict[str, Any]:
        """One candidate; ``kept``: ``S`` without its entries below ``b1``, when at hand."""
        n_clusters = self.n_clusters if n_clusters is None else n_clusters
        A = sharpen_kernel(S, b1, b2) if kept is None else _sharpen_kept(kept, b2)
        n = S.shape[0]
        max_clusters = min(self.max_clusters, n - 1)
        if n_eigenvalues is None and self._selection == "eigengap" and n_clusters is not None:
            # the eigengap after K needs one eigenvalue more than the clustering
            n_eigenvalues = n_clusters + 1
        if n_eigenvalues is not None:
            dense = self.eigen_solver == "dense" or (
                self.eigen_solver == "auto" and n <= AUTO_DENSE_MAX_N
            )
            n_eigenvalues = min(n_eigenvalues, n if dense else n - 1)
        with warnings.catch_warnings():
            # points the thresholded graph cuts off are attached below
            warnings.filterwarnings(
                "ignore", message=".*connected components", category=UserWarning
            )
            res = spectral_clustering(
                A,
                n_clusters,
                max_clusters=max_clusters,
                n_init=self.n_init,
                solver=self.eigen_solver,
                random_state=seed,
                n_eigenvalues=n_eigenvalues,
                tol=self.eigen_tol,
            )
        res.labels = attach_by_kernel(S, res.labels, res.unembedded)
        return {
            "threshold": b1,
            "scale": b2,
            "n_clusters": res.n_clusters,
            "_res": res,
            "_A": A,
            "_labels": res.labels,
        }
