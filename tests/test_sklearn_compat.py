"""scikit-learn's estimator contract on geoforest's estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from geoforest import RandomProjectionForest, UnsupervisedForest

# Every check is expected to pass; list a check here only with the reason it cannot.
EXPECTED_FAILED_CHECKS: dict = {"UnsupervisedForest": {}, "RandomProjectionForest": {}}


@parametrize_with_checks(
    [
        UnsupervisedForest(n_estimators=5, random_state=0),
        RandomProjectionForest(n_estimators=5, random_state=0),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS[type(est).__name__],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
