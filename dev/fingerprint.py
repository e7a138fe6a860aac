"""Fingerprint geoforest's results through its public API, to prove a refactoring changed nothing.

``python dev/fingerprint.py OUT.json`` fits every estimator family on small fixed data and
writes a SHA-256 per result (tree arrays, leaf ids, kneighbors, kernels, labels, embeddings).
``python dev/fingerprint.py --compare A.json B.json`` lists the entries that differ. Run it on
the commit before a restructuring and on the one after (``PYTHONPATH=<worktree>`` selects the
checkout); every entry must match.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings

import numpy as np


def _h(*arrays) -> str:
    m = hashlib.sha256()
    for a in arrays:
        if hasattr(a, "tocsr"):
            a = a.tocsr()
            a.sort_indices()
            for part in (a.data, a.indices, a.indptr):
                m.update(np.ascontiguousarray(part).tobytes())
            continue
        a = np.ascontiguousarray(np.asarray(a))
        m.update(str(a.dtype).encode() + str(a.shape).encode())
        m.update(a.tobytes())
    return m.hexdigest()[:16]


def _trees(forest) -> str:
    return _h(*[arr for tree in forest.trees_ for arr in tree if arr is not None])


def fingerprints() -> dict[str, str]:
    import geoforest as gf

    out: dict[str, str] = {}
    X, t = gf.datasets.make_helix(600, random_state=0)
    X = gf.datasets.add_noise_dims(X, 20, random_state=0)
    Xq = X[::7] + 0.01
    forests = {
        "urerf_fastbic": gf.UnsupervisedForest(n_estimators=20, random_state=1),
        "urerf_twomeans": gf.UnsupervisedForest(
            n_estimators=10, criterion="twomeans", random_state=2
        ),
        "urerf_gmm": gf.UnsupervisedForest(n_estimators=5, criterion="gmm", random_state=3),
        "urf_axis": gf.UnsupervisedForest(n_estimators=10, projection="axis", random_state=4),
        "rpf_uniform": gf.RandomProjectionForest(n_estimators=10, random_state=5),
        "rpf_median": gf.RandomProjectionForest(
            n_estimators=10, criterion="median", random_state=6
        ),
    }
    for name, f in forests.items():
        f.fit(X)
        out[f"{name}/trees"] = _trees(f)
        out[f"{name}/apply"] = _h(f.apply(Xq))
        d, i = f.kneighbors(n_neighbors=15)
        out[f"{name}/kneighbors"] = _h(d, i)
        d, i = f.kneighbors(Xq, n_neighbors=15)
        out[f"{name}/kneighbors_X"] = _h(d, i)
        out[f"{name}/proximity"] = _h(f.proximity())
        out[f"{name}/graph"] = _h(f.kneighbors_graph(n_neighbors=10, mode="distance"))
    f = gf.UnsupervisedForest(n_estimators=10, random_state=7).fit(X)
    out["urerf/proximity_oob"] = _h(f.proximity(method="oob"))
    out["urerf/proximity_inbag"] = _h(f.proximity(method="inbag"))

    Xc, yc = gf.datasets.make_circle_segments(300, random_state=0)
    for name, c in {
        "sporf": gf.ObliqueForestClassifier(n_estimators=20, random_state=0),
        "rf": gf.ObliqueForestClassifier(n_estimators=20, projection="axis", random_state=0),
        "morf": gf.ManifoldForestClassifier(
            image_shape=(1, 100),
            max_patch_shape=(1, 15),
            wrap=True,
            n_estimators=20,
            random_state=0,
        ),
    }.items():
        c.fit(Xc, yc)
        out[f"{name}/trees"] = _trees(c)
        out[f"{name}/proba"] = _h(c.predict_proba(Xc[:50]))
        out[f"{name}/importance"] = _h(c.feature_importances_)
    # Regression trees, and random cuts for both tasks (multi-output targets:
    # the path of two or more outputs).
    yr = np.c_[Xc[:, 0] * 3.0 + np.sin(Xc[:, 1]), np.cos(Xc[:, 2])]
    clf, reg = gf.ObliqueForestClassifier, gf.ObliqueForestRegressor
    for name, c, y in (
        ("sporf_random", clf(n_estimators=10, splitter="random", random_state=1), yc),
        ("sporf_reg", reg(n_estimators=10, random_state=2), yr[:, 0]),
        ("sporf_reg2", reg(n_estimators=10, random_state=3), yr),
        ("sporf_reg_random", reg(n_estimators=10, splitter="random", random_state=4), yr[:, 0]),
    ):
        c.fit(Xc, y)
        out[f"{name}/trees"] = _trees(c)
        out[f"{name}/predict"] = _h(c.predict(Xc[:50]))

    rng = np.random.default_rng(0)
    blobs = np.concatenate([rng.normal(c, 0.3, size=(150, 3)) for c in (0, 3, 6)])
    noise = rng.uniform(-2, 8, size=(40, 3))
    Xb = np.concatenate([blobs, noise])
    llpd = gf.LLPD().fit(Xb)
    out["llpd/knn"] = _h(llpd.knn_distance(10))
    d, i = llpd.kneighbors(n_neighbors=10)
    out["llpd/kneighbors"] = _h(d, i)
    d, i = llpd.kneighbors(Xb[:30] + 0.05, n_neighbors=10)
    out["llpd/kneighbors_X"] = _h(d, i)
    out["llpd/pairwise"] = _h(llpd.pairwise())
    boruvka = gf.LLPD(mst_method="boruvka").fit(Xb)
    out["llpd_boruvka/pairwise"] = _h(boruvka.pairwise())
    llpd1 = gf.LLPD().fit(Xb[:, :1])
    out["llpd_1d/pairwise"] = _h(llpd1.pairwise())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = gf.LLPDSpectralClustering(random_state=0).fit(Xb)
    out["llpd_sc/labels"] = _h(sc.labels_)
    out["llpd_sc/predict"] = _h(sc.predict(Xb[:40] + 0.05))

    dm = gf.DiffusionMap(random_state=0).fit(Xb)
    out["diffusion/embedding"] = _h(np.round(dm.embedding(2.0), 10))
    out["diffusion/transform"] = _h(np.round(dm.transform(Xb[:30] + 0.05), 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lund = gf.LUND(random_state=0).fit(Xb)
        out["lund/labels"] = _h(lund.labels_)
        out["lund/predict"] = _h(lund.predict(Xb[:40] + 0.05))
        lund_fixed = gf.LUND(n_clusters=3, t=8.0, random_state=0).fit(Xb)
        out["lund_t8/labels"] = _h(lund_fixed.labels_)
        out["lund/query"] = _h(np.asarray(lund_fixed.query(5)))

    from sklearn.datasets import load_iris

    Xi = load_iris().data
    # rpfCluster is affinity="kernel" since issue 43 (the default before it).
    rpf = {"affinity": "kernel"} if "affinity" in gf.ForestSpectralClustering().get_params() else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, est in {
            "rpfcluster_auto": gf.ForestSpectralClustering(random_state=0, **rpf),
            "rpfcluster_k3": gf.ForestSpectralClustering(3, random_state=0, **rpf),
            "rpfcluster_consensus": gf.ForestSpectralClustering(
                3, selection="consensus", random_state=0, **rpf
            ),
            "rpfcluster_stability": gf.ForestSpectralClustering(
                3, selection="stability", random_state=0, **rpf
            ),
            "rpfcluster_truncated": gf.ForestSpectralClustering(
                3, kernel_neighbors=30, random_state=0, **rpf
            ),
        }.items():
            est.fit(Xi)
            out[f"{name}/labels"] = _h(est.labels_)
        out["rpfcluster_k3/predict"] = _h(
            gf.ForestSpectralClustering(3, random_state=0, **rpf).fit(Xi).predict(Xi[:40] + 0.01)
        )
        if rpf:  # the forest's neighbour graph, the default since issue 43
            knn = gf.ForestSpectralClustering(3, random_state=0).fit(Xi)
            out["forest_knn_sc/labels"] = _h(knn.labels_, knn.predict(Xi[:40] + 0.01))
            auto = gf.ForestSpectralClustering(random_state=0).fit(Xi)
            out["forest_knn_sc_auto/labels"] = _h(auto.labels_, auto.n_clusters_scores_)
        from sklearn.metrics.pairwise import rbf_kernel

        ksc = gf.KernelSpectralClustering(random_state=0).fit(rbf_kernel(Xi, gamma=0.5))
        out["kernel_sc/labels"] = _h(ksc.labels_)
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--compare"]:
        a, b = (json.load(open(p)) for p in argv[1:3])
        bad = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        for k in bad:
            print(f"DIFFERS {k}: {a.get(k)} != {b.get(k)}")
        print(f"{len(a.keys() | b.keys()) - len(bad)} equal, {len(bad)} differ")
        return 1 if bad else 0
    result = fingerprints()
    with open(argv[0], "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
    print(f"{len(result)} fingerprints -> {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
