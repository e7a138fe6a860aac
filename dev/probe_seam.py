"""Rerun the probes behind issue 53's examples of silent wrong answers; print one line each.

``python dev/probe_seam.py`` tries, through the public API only, what a careless
or unlucky user would: data far from zero, small n, a fitted forest handed to
kernel mode, complex graphs, structureless data without K, bad lists given to
the graph helpers.  Each probe prints ``ok`` or ``FAIL`` with what it saw; the
exit status is the number of failures.  It is the check behind the issue's
"a rerun of the probes finds 0 failures", kept for later refactorings.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

import geoforest as gf

FAILURES: list[str] = []


def probe(name: str):
    def wrap(fn):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                seen = fn()
        except Exception as exc:  # noqa: BLE001 - a probe reports, never stops the run
            seen = f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
        ok = seen is True
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {seen}"))
        if not ok:
            FAILURES.append(name)
        return fn

    return wrap


def blobs(n=120, d=2, seed=1, k=3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 4, (k, d))
    return np.vstack([rng.normal(c, 0.4, (n // k, d)) for c in centres])


def refuses(fn) -> bool | str:
    try:
        fn()
    except (ValueError, TypeError):
        return True
    return "accepted"


X, SHIFT = blobs(), 1e4


@probe("LLPD(metric='forest', forest=fitted) on data far from zero")
def _():
    Xs = np.random.default_rng(1).normal(size=(120, 2)) + SHIFT
    f = gf.UnsupervisedForest(10, random_state=0).fit(Xs)
    gf.LLPD(metric="forest", forest=f).fit(Xs)
    return True


@probe("LLPD forest distances equal for X and X + 1e4")
def _():
    a, b = (
        gf.LLPD(metric="forest", random_state=0).fit(Z).kneighbors(None, 5)[0]
        for Z in (X, X + SHIFT)
    )
    return (
        True if np.allclose(a, b, rtol=1e-3, atol=1e-4) else f"max diff {np.abs(a - b).max():.3g}"
    )


@probe("DiffusionMap(metric='forest').transform(X_train) == fit_transform(X_train), X + 1e4")
def _():
    dm = gf.DiffusionMap(metric="forest", random_state=0)
    E = dm.fit_transform(X + SHIFT)
    T = dm.transform(X + SHIFT)
    err = np.abs(E - T).max()
    return True if err < 1e-6 * max(1.0, np.abs(E).max()) else f"max diff {err:.3g}"


@probe("LUND(metric='forest') labels equal for X and X + 1e4")
def _():
    a, b = (gf.LUND(metric="forest", random_state=0).fit(Z).labels_ for Z in (X, X + SHIFT))
    return True if adjusted_rand_score(a, b) == 1 else f"ARI {adjusted_rand_score(a, b):.3f}"


@probe("small n: kneighbors(X_train, 1) finds each point itself at distance 0 (n = 2..120)")
def _():
    rng = np.random.default_rng(4)
    for n in (2, 3, 5, 10, 30, 60, 89, 120):
        Z = rng.normal(size=(n, 3))
        d, i = gf.UnsupervisedForest(10, random_state=0).fit(Z).kneighbors(Z, 1)
        if not (np.all(i[:, 0] == np.arange(n)) and np.all(d[:, 0] == 0)):
            return f"n={n}: self first in {(i[:, 0] == np.arange(n)).mean():.0%} of rows"
    return True


@probe("small n: LLPDSpectralClustering(metric='forest').predict(X_train) == labels_")
def _():
    rng = np.random.default_rng(4)
    Z = np.vstack([rng.normal(0, 0.3, (30, 3)), rng.normal(3, 0.3, (30, 3))])
    est = gf.LLPDSpectralClustering(2, metric="forest", random_state=0).fit(Z)
    agree = (est.predict(Z) == est.labels_).mean()
    return True if agree == 1 else f"agree on {agree:.0%}"


@probe("small n: DiffusionMap(metric='forest').transform(X_train) == fit_transform")
def _():
    rng = np.random.default_rng(4)
    Z = np.vstack([rng.normal(0, 0.3, (30, 3)), rng.normal(3, 0.3, (30, 3))])
    dm = gf.DiffusionMap(metric="forest", random_state=0)
    E = dm.fit_transform(Z)
    err = np.abs(E - dm.transform(Z)).max()
    return True if err < 1e-6 * max(1.0, np.abs(E).max()) else f"max diff {err:.3g}"


@probe("affinity='kernel' uses a forest fitted on X as is")
def _():
    f = gf.RandomProjectionForest(20, random_state=0).fit(X)
    est = gf.ForestSpectralClustering(3, affinity="kernel", forest=f, random_state=0).fit(X)
    return True if est.forest_ is f else "refitted a copy"


@probe("affinity='kernel' refuses a forest fitted on other points")
def _():
    f = gf.RandomProjectionForest(20, random_state=0).fit(X[:, :1])
    return refuses(lambda: gf.ForestSpectralClustering(3, affinity="kernel", forest=f).fit(X))


@probe("affinity='kernel' with a fitted ForestNeighborsTransformer: used or refused in one line")
def _():
    t = gf.ForestNeighborsTransformer(gf.UnsupervisedForest(10, random_state=0)).fit(X)
    try:
        gf.ForestSpectralClustering(3, affinity="kernel", forest=t, random_state=0).fit(X)
    except (ValueError, TypeError):
        return True
    except AttributeError as exc:
        return f"AttributeError {exc}"
    return True


@probe("affinity='kernel' refuses a scikit-learn forest in one line")
def _():
    from sklearn.ensemble import RandomTreesEmbedding

    f = RandomTreesEmbedding(n_estimators=5, random_state=0)
    return refuses(lambda: gf.ForestSpectralClustering(3, affinity="kernel", forest=f).fit(X))


G = sp.csr_matrix(np.abs(X[:, :1] - X[:, :1].T)).astype(complex)


@probe("LLPD(metric='precomputed') refuses a complex graph")
def _():
    return refuses(lambda: gf.LLPD(metric="precomputed").fit(G))


@probe("LLPDSpectralClustering(metric='precomputed') refuses a complex graph")
def _():
    return refuses(lambda: gf.LLPDSpectralClustering(2, metric="precomputed").fit(G))


def warns_label_free(est, Z) -> bool | str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(Z)
    k = int(getattr(est, "n_clusters_", 1))
    if k < 2 or any(issubclass(w.category, gf.graph.LabelFreeChoiceWarning) for w in caught):
        return True
    return f"K = {k} with no LabelFreeChoiceWarning"


GAUSS12 = np.random.default_rng(0).normal(size=(12, 2))
SQUARE = np.random.default_rng(0).uniform(size=(300, 2))


@probe("LUND on 12 Gaussian points: K = 1 or a warning")
def _():
    return warns_label_free(gf.LUND(n_neighbors=5, random_state=0), GAUSS12)


@probe("LUND on a uniform square: K = 1 or a warning")
def _():
    return warns_label_free(gf.LUND(random_state=0), SQUARE)


@probe("ForestSpectralClustering(affinity='kernel') on a uniform square: K = 1 or a warning")
def _():
    return warns_label_free(gf.ForestSpectralClustering(affinity="kernel", random_state=0), SQUARE)


@probe("ForestSpectralClustering() on a uniform square: K = 1 or a warning")
def _():
    return warns_label_free(gf.ForestSpectralClustering(random_state=0), SQUARE)


@probe("LLPDSpectralClustering() on a uniform square: K = 1 or a warning")
def _():
    return warns_label_free(gf.LLPDSpectralClustering(random_state=0), SQUARE)


@probe("graph.knn_affinity refuses an index out of range with its own message")
def _():
    try:
        gf.graph.knn_affinity(np.array([[1], [5]]), 2)
    except ValueError as exc:
        return True if "ind" in str(exc) else f"message: {exc}"
    return "accepted"


@probe("graph.bridge_components refuses a graph of another shape with its own message")
def _():
    try:
        gf.graph.bridge_components(X, sp.eye(5, format="csr"))
    except ValueError as exc:
        return True if "G must" in str(exc) else f"message: {exc}"
    return "accepted"


@probe("ForestSpectralClustering(metric='precomputed').fit(features) says what to pass")
def _():
    try:
        gf.ForestSpectralClustering(3, metric="precomputed").fit(np.ones((178, 13)))
    except ValueError as exc:
        return True if "metric='euclidean'" in str(exc) else f"message: {exc}"
    return "accepted"


if __name__ == "__main__":
    print(f"{len(FAILURES)} failure(s)")
    sys.exit(len(FAILURES))
