"""scikit-learn's estimator contract on geoforest's estimators."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import (
    check_set_output_transform,
    check_transformer_get_feature_names_out,
    parametrize_with_checks,
)

from geoforest import (
    LLPD,
    LUND,
    DiffusionMap,
    ForestSpectralClustering,
    KernelSpectralClustering,
    LLPDSpectralClustering,
    ManifoldForestClassifier,
    ManifoldForestRegressor,
    ObliqueForestClassifier,
    ObliqueForestRegressor,
    RandomProjectionForest,
    UnsupervisedForest,
)

# Every check is expected to pass; list a check here only with the reason it cannot.
EXPECTED_FAILED_CHECKS: dict = {
    "UnsupervisedForest": {},
    "RandomProjectionForest": {},
    "ObliqueForestClassifier": {
        "check_sample_weight_equivalence_on_dense_data": (
            "bootstrap draws and the random feature order depend on the number of rows, "
            "so weights of 2 are not the same draws as duplicated rows (as in sklearn's "
            "RandomForestClassifier); tested without bootstrap in test_supervised.py"
        ),
    },
    "ManifoldForestClassifier": {
        "check_sample_weight_equivalence_on_dense_data": (
            "bootstrap draws and the random feature order depend on the number of rows, "
            "so weights of 2 are not the same draws as duplicated rows (as in sklearn's "
            "RandomForestClassifier); tested without bootstrap in test_supervised.py"
        ),
    },
    "ObliqueForestRegressor": {
        "check_sample_weight_equivalence_on_dense_data": (
            "bootstrap draws depend on the number of rows (as in sklearn's "
            "RandomForestRegressor); tested without bootstrap in test_regressors.py"
        ),
    },
    "ManifoldForestRegressor": {
        "check_sample_weight_equivalence_on_dense_data": (
            "bootstrap draws depend on the number of rows (as in sklearn's "
            "RandomForestRegressor); tested without bootstrap in test_regressors.py"
        ),
    },
    "ForestSpectralClustering": {},
    "LLPD": {},
    "LLPDSpectralClustering": {},
    # It takes a precomputed affinity; these checks feed it (n, 2) feature matrices.
    "KernelSpectralClustering": {
        "check_clustering": "expects features; the estimator takes an affinity matrix",
        "check_clustering(readonly_memmap=True)": "expects features, not an affinity",
    },
    "DiffusionMap": {},
    "LUND": {},
}


# The checks fit random data: no cluster structure (K = 1) and isolated points are
# what the clusterers must say there, and do.
@pytest.mark.filterwarnings("ignore::geoforest.graph.LabelFreeChoiceWarning")
@pytest.mark.filterwarnings("ignore:.* zero degree .isolated in the affinity.:UserWarning")
@parametrize_with_checks(
    [
        UnsupervisedForest(n_estimators=5, random_state=0),
        RandomProjectionForest(n_estimators=5, random_state=0),
        ObliqueForestClassifier(n_estimators=5, random_state=0),
        ManifoldForestClassifier(n_estimators=5, random_state=0),
        ObliqueForestRegressor(n_estimators=5, random_state=0),
        ManifoldForestRegressor(n_estimators=5, random_state=0),
        KernelSpectralClustering(n_clusters=2, random_state=0),
        ForestSpectralClustering(
            n_clusters=2,
            affinity="kernel",
            forest=RandomProjectionForest(n_estimators=5, min_samples_split=5),
            threshold=0.0,
            scale=1.0,
            random_state=0,
        ),
        # The default: the neighbour graph of an unsupervised forest (some checks fit 10 points).
        ForestSpectralClustering(
            n_clusters=2,
            forest=UnsupervisedForest(n_estimators=5),
            n_neighbors=5,
            random_state=0,
        ),
        LLPD(),
        # Some checks fit 10 points; k_nse must be at most n_samples - 1 (the default is 10).
        LLPDSpectralClustering(k_nse=5, random_state=0),
        # The same for the kNN graph: n_neighbors must be below n_samples (the default is
        # 15), which both refuse with a clear ValueError (test_diffusion, test_lund).
        DiffusionMap(n_neighbors=5, n_components=3, random_state=0),
        LUND(n_neighbors=5, random_state=0),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS[type(est).__name__],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# Transformer checks scikit-learn runs on its own transformers but not in check_estimator.
@pytest.mark.parametrize(
    "check", [check_set_output_transform, check_transformer_get_feature_names_out]
)
def test_diffusion_map_output_api(check):
    check("DiffusionMap", DiffusionMap(n_neighbors=5, n_components=3, random_state=0))


def test_diffusion_map_set_output_and_feature_names():
    X = np.random.RandomState(0).normal(size=(40, 3))
    dm = DiffusionMap(n_neighbors=5, n_components=4, random_state=0)
    assert hasattr(dm, "set_output") and dm.set_output(transform="default") is dm
    Y = dm.fit_transform(X)
    assert type(Y) is np.ndarray and Y.shape == (40, 4)
    np.testing.assert_array_equal(
        dm.get_feature_names_out(), [f"diffusionmap{i}" for i in range(4)]
    )
    assert type(dm.transform(X[:5])) is np.ndarray


def test_diffusion_map_set_output_pandas():
    pd = pytest.importorskip("pandas")
    X = np.random.RandomState(0).normal(size=(40, 3))
    dm = DiffusionMap(n_neighbors=5, n_components=4, random_state=0).set_output(transform="pandas")
    Y = dm.fit_transform(X)
    assert isinstance(Y, pd.DataFrame)
    assert list(Y.columns) == [f"diffusionmap{i}" for i in range(4)]
    assert list(dm.transform(X[:5]).columns) == list(Y.columns)
