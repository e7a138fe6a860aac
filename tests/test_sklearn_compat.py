"""scikit-learn's estimator contract on geoforest's estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from geoforest import (
    LLPD,
    ForestSpectralClustering,
    KernelSpectralClustering,
    LLPDSpectralClustering,
    ManifoldForestClassifier,
    ObliqueForestClassifier,
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
    "ForestSpectralClustering": {},
    "LLPD": {},
    "LLPDSpectralClustering": {},
    # It takes a precomputed affinity; these checks feed it (n, 2) feature matrices.
    "KernelSpectralClustering": {
        "check_clustering": "expects features; the estimator takes an affinity matrix",
        "check_clustering(readonly_memmap=True)": "expects features, not an affinity",
    },
}


@parametrize_with_checks(
    [
        UnsupervisedForest(n_estimators=5, random_state=0),
        RandomProjectionForest(n_estimators=5, random_state=0),
        ObliqueForestClassifier(n_estimators=5, random_state=0),
        ManifoldForestClassifier(n_estimators=5, random_state=0),
        KernelSpectralClustering(n_clusters=2, random_state=0),
        ForestSpectralClustering(
            n_clusters=2,
            forest=RandomProjectionForest(n_estimators=5, min_samples_split=5),
            threshold=0.0,
            scale=1.0,
            random_state=0,
        ),
        LLPD(),
        # Some checks fit 10 points; k_nse must be at most n_samples - 1 (the default is 10).
        LLPDSpectralClustering(k_nse=5, random_state=0),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS[type(est).__name__],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
