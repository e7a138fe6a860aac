"""rpfCluster's path of :class:`~geoforest.ForestSpectralClustering`: the forest kernel's
(beta_1, beta_2) candidates, each clustered, and the fit that chooses among them."""

from __future__ import annotations

import warnings
from typing import Any

import scipy.sparse as sp
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from .._progress import progress
from ..graph import AUTO_DENSE_MAX_N, eigengap_scores, explain_choice, spectral_clustering
from ._graph_spectral import selection_rows
from ._rpf_kernel import (
    _sharpen_kept,
    attach_by_kernel,
    forest_kernel,
    kept_by_threshold,
    sharpen_kernel,
)
from ._rpf_selection import (
    RPF_SCALES,
    RPF_THRESHOLDS,
    _relgap_candidates,
    _score_stability,
    _select,
    unfragmented_threshold,
)

__all__ = ["KernelCandidatesMixin"]


class KernelCandidatesMixin:
    """The steps :class:`~geoforest.ForestSpectralClustering` applies to every candidate,
    and its ``affinity="kernel"`` fit (:meth:`_fit_kernel`)."""

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

    def _fit_kernel(self, X):
        """rpfCluster: spectral clustering of the sharpened forest kernel."""
        geometry = self._kernel_geometry(X)
        forest = geometry.forest_
        n = geometry.n_samples_
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(f"n_clusters={self.n_clusters} exceeds n_samples={n}")
        if n < 2:
            raise ValueError(f"rpfCluster needs at least 2 samples, got n_samples={n}")
        if self.kernel_neighbors is not None and self.kernel_neighbors > n - 1:
            warnings.warn(
                f"kernel_neighbors={self.kernel_neighbors} is above n_samples - 1 = "
                f"{n - 1}; capped at {n - 1}, which keeps every co-leaf pair (the full "
                "kernel, as kernel_neighbors=None gives)",
                UserWarning,
                stacklevel=2,
            )
        S = forest_kernel(forest, self.kernel_neighbors, n)
        self.geometry_ = geometry
        self.forest_ = forest
        self.kernel_ = S
        if self.threshold != "auto":
            thresholds = (float(self.threshold),)
        elif self._selection in ("unfragmented", "stability", "relgap"):
            thresholds = (unfragmented_threshold(S, RPF_THRESHOLDS),)
        else:
            thresholds = RPF_THRESHOLDS
        scales = RPF_SCALES if self.scale == "auto" else (float(self.scale),)
        seed = self._spectral_seed()
        self._seed = seed  # the spectral steps' seed, for cluster_candidate
        grid = [(b1, b2) for b1 in thresholds for b2 in scales]
        # Compare the candidates on a random subset when n is large: the choice of
        # (beta_1, beta_2) needs the shape of the kernel, not every point.  The
        # subset gets its own forest: restricting the full kernel to m of n points
        # keeps about m / n of each row's neighbours, a graph with almost no edges
        # at large n, while the subset's own kernel has the full kernel's local
        # structure (its values depend on neighbour ranks relative to the leaf
        # size, not on n).
        sub = selection_rows(n, self._selection_samples, seed) if len(grid) > 1 else None
        if sub is None:
            S_sel = S
        else:
            S_sel = forest_kernel(self._make_forest().fit(X[sub]), self.kernel_neighbors, sub.size)
        if self._selection == "relgap":
            candidates, best, k_scores = _relgap_candidates(
                S_sel,
                grid,
                seed,
                max_clusters=self.max_clusters,
                eigen_solver=self.eigen_solver,
                eigen_tol=self.eigen_tol,
                verbose=self.verbose,
            )
            b1, b2 = grid[best]
            chosen = self._candidate(S, b1, b2, seed, n_clusters=candidates[best]["n_clusters"])
            criterion = "relative gap"
        else:
            kept = kept_by_threshold(S_sel)
            candidates = [
                self._candidate(S_sel, b1, b2, seed, kept=kept(b1))
                for b1, b2 in progress(grid, len(grid), self.verbose, "rpfCluster scales")
            ]
            if self._selection == "stability" and len(grid) > 1:
                X_sel = X if sub is None else X[sub]
                _score_stability(
                    candidates,
                    grid,
                    X_sel,
                    seed,
                    n_forests=self.stability_forests,
                    make_forest=self._make_forest,
                    kernel_neighbors=self.kernel_neighbors,
                    cluster=self._candidate,
                )
            best = _select(self._selection, candidates)
            chosen = (
                candidates[best]
                if sub is None
                else self._candidate(
                    S, candidates[best]["threshold"], candidates[best]["scale"], seed
                )
            )
            k_scores = eigengap_scores(chosen["_res"].eigenvalues, self.max_clusters)
            criterion = "eigengap"
        self.labels_ = chosen["_res"].labels
        self.n_clusters_ = int(chosen["n_clusters"])
        self.eigenvalues_ = chosen["_res"].eigenvalues
        self.n_clusters_scores_ = k_scores
        self.reference_excess_ = None
        if self.n_clusters is None:
            explain_choice(type(self).__name__, self.n_clusters_, k_scores, criterion=criterion)
        self.affinity_matrix_ = chosen["_A"]
        self.threshold_ = chosen["threshold"]
        self.scale_ = chosen["scale"]
        self.selection_indices_ = sub
        self.selection_kernel_ = S_sel
        self.candidates_ = [
            {**{k: v for k, v in c.items() if not k.startswith("_")}, "labels": c["_labels"]}
            for c in candidates
        ]
        return self
