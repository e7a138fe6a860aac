"""The shared label-free rule: the finest level a graph supports (graph/_levels.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.neighbors import kneighbors_graph

import geoforest as gf
from geoforest.graph import (
    LEVEL_MIN_GAP,
    MIN_EXCESS,
    MIN_RELATIVE_GAP,
    LabelFreeChoiceWarning,
    explain_levels,
    label_free_levels,
)


def knn_graph(P, seed=0, k=10):
    G = kneighbors_graph(P, k)
    return ((G + G.T) > 0).astype(float)


def groups(centres, n=40, scale=0.15, seed=0):
    P = np.repeat(np.asarray(centres, float), n, axis=0)
    return P + np.random.RandomState(seed).normal(scale=scale, size=P.shape)


def dense_mu(A, m):
    """The m smallest eigenvalues of the normalised Laplacian, by scipy (brute force)."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    d = A.sum(axis=1)
    M = A / np.sqrt(np.outer(d, d))
    return np.sort(1.0 - scipy.linalg.eigvalsh(M))[:m]


def test_gaps_match_a_dense_eigendecomposition_and_the_rule_is_the_largest_supported_level():
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [6, 6]])
    A = knn_graph(P)
    levels = label_free_levels(A, 6, points=P, reference_graph=knn_graph, random_state=0)
    mu = np.maximum(dense_mu(A, 7), 1e-6)
    c = int(np.sum(mu <= 1e-6))
    expected = np.full(6, np.nan)
    for k in range(max(2, c + 1), 7):
        expected[k - 1] = mu[k] / mu[k - 1]
    np.testing.assert_allclose(levels.gaps, expected, rtol=1e-5)
    assert_the_rule_holds(levels, A, P, knn_graph)
    assert levels.rule == "finest-level"


def assert_the_rule_holds(levels, A, P, build, seed=0, uniform_null=False):
    """``supported`` and ``K`` as the module docstring states the rule; the
    uniform references' excess recomputed through the public spectral_excess."""
    gaps, excess = levels.gaps[1:], levels.excess[1:]
    strong = gaps >= gf.graph.STRONG_RELATIVE_GAP
    enough = (excess >= MIN_EXCESS) | (strong & (excess >= gf.graph.STRONG_STEP_EXCESS))
    gaussian = (gaps >= LEVEL_MIN_GAP) & enough & ~levels.fragmented[1:]
    weak = gaussian & ~strong
    flat = levels.uniform_excess[1:]
    finest_is_weak = gaussian.any() and weak[np.flatnonzero(gaussian).max()]
    if uniform_null and finest_is_weak:
        again = gf.graph.spectral_excess(
            A, P, build, gaps.size + 1, seed, eigenvalues=levels.eigenvalues, null="uniform"
        )
        np.testing.assert_allclose(flat, again)
        ok = gaussian & (~weak | (flat >= MIN_EXCESS))
    else:  # not asked, or not needed: no level, or the finest one is strong
        assert np.isnan(flat).all()
        ok = gaussian
    np.testing.assert_array_equal(levels.supported[1:], ok)
    finest = (np.flatnonzero(ok) + 2).max() if ok.any() else 1
    assert levels.n_clusters == max(finest, levels.n_components)
    return np.isfinite(flat).any()


@pytest.mark.parametrize(
    "centres, scale, n",
    [
        ([[0, 0], [1.2, 0], [0, 1.2], [6, 6]], 0.15, 40),  # strong steps only
        ([[0, 0], [1.0, 0], [0, 1.0]], 0.35, 60),  # touching: weak steps
        ([[0, 0]], 1.0, 300),  # one blob
        ([[0, 0], [0.8, 0.8], [1.6, 0], [2.4, 0.8]], 0.3, 50),  # a chain of touching groups
    ],
)
def test_with_the_uniform_null_a_weak_step_needs_it_too(centres, scale, n):
    P = groups(centres, n=n, scale=scale, seed=1) + 1e4  # far from zero
    A = connected_graph(P)
    default = label_free_levels(A, 6, points=P, reference_graph=connected_graph, random_state=0)
    assert not assert_the_rule_holds(default, A, P, connected_graph)  # the default: Gaussian only
    levels = label_free_levels(
        A, 6, points=P, reference_graph=connected_graph, random_state=0, uniform_null=True
    )
    assert_the_rule_holds(levels, A, P, connected_graph, uniform_null=True)
    np.testing.assert_array_equal(levels.excess, default.excess)
    assert levels.n_clusters <= default.n_clusters  # a second null only removes levels


def test_the_uniform_null_can_remove_touching_groups_which_is_why_it_is_not_the_default():
    """A far group and three touching ones (the Gaussian null: K = 4, a weak step
    of gap 2.9): the uniform box, as long as the data, is nearly cut where they
    are, and the touching level falls (docs/results/label-free-levels.md)."""
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [6, 6]], n=50, scale=0.4, seed=2) + 1e4
    A = connected_graph(P)
    default = label_free_levels(A, 6, points=P, reference_graph=connected_graph, random_state=0)
    levels = label_free_levels(
        A, 6, points=P, reference_graph=connected_graph, random_state=0, uniform_null=True
    )
    assert default.n_clusters == 4 and np.isnan(default.uniform_excess).all()
    assert assert_the_rule_holds(levels, A, P, connected_graph, uniform_null=True)
    assert levels.uniform_excess[3] < MIN_EXCESS <= levels.excess[3] < 1.0
    assert levels.n_clusters == 2  # the far group only


@settings(max_examples=30, deadline=None)
@given(
    st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none(), st.just(np.float64(1.0)))
)
def test_uniform_null_must_be_a_bool(flag):
    P = groups([[0, 0], [3, 3]])
    with pytest.raises(TypeError, match="uniform_null must be True or False"):
        label_free_levels(knn_graph(P), 4, points=P, reference_graph=knn_graph, uniform_null=flag)


def connected_graph(P, seed=0):
    """A 15-NN graph with a faint edge between every pair: one component."""
    return knn_graph(P, k=15).toarray() + 1e-4


def test_a_strong_step_needs_only_to_be_more_clustered_than_its_null():
    """Two groups 4 sd apart and a far one, in two dimensions: the step after
    K = 3 is strong (relative gap 8), but against a Gaussian of the touching
    pair's part (elongated, its own graph nearly cut) the excess is only 0.28.
    A gap of 3 is what no structureless control reaches, so K = 3."""
    P = groups([[0, 0], [1.2, 0], [6, 6]], n=60, scale=0.3, seed=2) + 1e4
    A = connected_graph(P)
    levels = label_free_levels(A, 6, points=P, reference_graph=connected_graph, random_state=0)
    assert levels.gaps[2] >= gf.graph.STRONG_RELATIVE_GAP
    assert gf.graph.STRONG_STEP_EXCESS <= levels.excess[2] < MIN_EXCESS
    assert levels.supported[2] and levels.n_clusters == 3
    assert_the_rule_holds(levels, A, P, connected_graph)
    # Below the strong gap the full excess is still asked: the same data's weak
    # levels (gaps under 3) are supported only with an excess of MIN_EXCESS.
    weak = (levels.gaps < gf.graph.STRONG_RELATIVE_GAP) & levels.supported
    assert np.all(levels.excess[weak] >= MIN_EXCESS)


def test_a_far_group_does_not_hide_the_touching_ones():
    """The largest gap sits at K = 2 (the far group); the finest supported level is 4."""
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [8, 8]], scale=0.25)
    A = connected_graph(P)
    levels = label_free_levels(A, 6, points=P, reference_graph=connected_graph, random_state=0)
    assert levels.n_components == 1
    assert int(np.nanargmax(levels.gaps)) + 1 == 2
    assert levels.n_clusters == 4
    assert levels.supported[1] and levels.supported[3]


def test_levels_above_the_most_separated_one_are_judged_per_part():
    """With wider touching groups one Gaussian of the whole set (elongated
    towards the far group) leaves K = 4 too little excess; against a Gaussian
    per part of the K = 2 level it is clear.  The excess is recomputed through
    the public spectral_excess, with and without the parts."""
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [8, 8]], scale=0.35)
    A = connected_graph(P)
    levels = label_free_levels(A, 6, points=P, reference_graph=connected_graph, random_state=0)
    assert int(np.nanargmax(levels.gaps)) + 1 == 2  # the most separated level
    whole = gf.graph.spectral_excess(
        A, P, connected_graph, 6, 0, levels.n_references, eigenvalues=levels.eigenvalues
    )
    parts = gf.graph.spectral_excess(
        A,
        P,
        connected_graph,
        6,
        0,
        gf.graph.MIXTURE_REFERENCES,
        eigenvalues=levels.eigenvalues,
        labels=levels.labels[2],
    )
    np.testing.assert_allclose(levels.excess[1], whole[0])  # K = 2: the whole-set null
    np.testing.assert_allclose(levels.excess[2:], parts[1:])  # finer: per part
    assert whole[2] < MIN_EXCESS <= parts[2]  # the whole-set null would hide K = 4
    assert abs(parts[0]) < 0.3  # the parts themselves are what the mixture holds
    assert levels.n_clusters == 4


def test_one_gaussian_blob_supports_no_level_and_says_so():
    P = np.random.RandomState(1).normal(size=(300, 3))
    levels = label_free_levels(knn_graph(P), 8, points=P, reference_graph=knn_graph)
    assert levels.n_clusters == 1 and not levels.supported.any()
    with pytest.warns(LabelFreeChoiceWarning, match="no cluster structure"):
        explain_levels("demo", levels)


def test_without_a_reference_the_largest_relative_gap_decides():
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [8, 8]], scale=0.25)
    A = connected_graph(P)
    levels = label_free_levels(A, 6, random_state=0)
    assert levels.rule == "relative-gap" and np.isnan(levels.excess).all()
    _, k, _ = gf.graph.choose_by_relative_gap(levels.gaps[None], levels.fragmented[None])
    assert levels.n_clusters == k == 2
    np.testing.assert_array_equal(
        levels.supported[1:], (levels.gaps[1:] >= MIN_RELATIVE_GAP) & ~levels.fragmented[1:]
    )


def test_components_are_clusters_whatever_the_levels_say():
    P = groups([[0, 0], [30, 30], [60, 0]], n=30, scale=0.5)
    A = knn_graph(P)
    levels = label_free_levels(A, 5, points=P, reference_graph=knn_graph)
    assert levels.n_components == 3 and levels.n_clusters >= 3
    with pytest.raises(ValueError, match="connected components"):
        label_free_levels(A, 2, points=P, reference_graph=knn_graph)


def test_the_same_seed_gives_the_same_levels_and_a_generator_is_accepted():
    P = groups([[0, 0], [1.2, 0], [0, 1.2]])
    A = knn_graph(P)
    a = label_free_levels(A, 5, points=P, reference_graph=knn_graph, random_state=3)
    b = label_free_levels(A, 5, points=P, reference_graph=knn_graph, random_state=3)
    np.testing.assert_array_equal(a.excess, b.excess)
    c = label_free_levels(
        A, 5, points=P, reference_graph=knn_graph, random_state=np.random.RandomState(3)
    )
    assert c.n_clusters == a.n_clusters


def test_weak_levels_warn_and_strong_ones_do_not():
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [8, 8]], scale=0.25)
    levels = label_free_levels(
        connected_graph(P), 6, points=P, reference_graph=connected_graph, random_state=0
    )
    assert levels.n_clusters == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explain_levels("demo", levels)  # strong: no warning
    k = 3
    gaps, excess = levels.gaps.copy(), levels.excess.copy()
    gaps[k - 1], excess[k - 1] = 1.4, 0.6
    weak = levels._replace(n_clusters=k, gaps=gaps, excess=excess)
    with pytest.warns(LabelFreeChoiceWarning, match="weak evidence"):
        explain_levels("demo", weak)


def test_the_forest_clusterer_uses_the_shared_rule():
    """ForestSpectralClustering's K is the Levels' K, and its evidence is the Levels'."""
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [8, 8]], n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gf.ForestSpectralClustering(random_state=0).fit(P)
    levels = model.levels_
    assert model.n_clusters_ == levels.n_clusters == 4
    np.testing.assert_array_equal(model.n_clusters_scores_, levels.gaps)
    np.testing.assert_array_equal(model.reference_excess_, levels.excess)


bad_values = st.sampled_from([np.nan, np.inf, -np.inf])


@settings(max_examples=20, deadline=None)
@given(value=bad_values, where=st.integers(0, 59))
def test_non_finite_points_or_affinities_are_refused(value, where):
    P = groups([[0, 0], [3, 0]], n=30)
    A = knn_graph(P).toarray()
    Q = P.copy()
    Q[where, 0] = value
    with pytest.raises(ValueError, match="NaN or infinite"):
        label_free_levels(A, 4, points=Q, reference_graph=knn_graph)
    B = A.copy()
    B[where, (where + 1) % 60] = B[(where + 1) % 60, where] = value
    with pytest.raises(ValueError, match="NaN or infinite|non-finite"):
        label_free_levels(B, 4)


@settings(max_examples=15, deadline=None)
@given(shift=st.sampled_from([0.0, 1e6, -1e8]), scale=st.sampled_from([1e-6, 1.0, 1e6]))
def test_the_choice_is_free_of_the_data_units_and_origin(shift, scale):
    """Data far from zero or in tiny/huge units give the same levels (the kNN graph and
    the references follow the data's own mean and covariance)."""
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [8, 8]], scale=0.25)
    base = label_free_levels(connected_graph(P), 6, points=P, reference_graph=connected_graph)
    Q = P * scale + shift
    moved = label_free_levels(connected_graph(Q), 6, points=Q, reference_graph=connected_graph)
    assert moved.n_clusters == base.n_clusters
    np.testing.assert_array_equal(moved.supported, base.supported)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 120),
    shift=st.sampled_from([0.0, 1e6, -1e8]),
    scale=st.sampled_from([1e-6, 1.0, 1e6, 1e200]),
    uniform_null=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_small_or_far_data_give_valid_levels_with_either_null(n, shift, scale, uniform_null, seed):
    """A careless user's data: 3 to 120 points, far from zero, tiny or huge units,
    ties (a repeated row).  The levels are well formed and the rule holds."""
    P = np.random.RandomState(seed).normal(size=(n, 2))
    P[-1] = P[0]
    Q = P * scale + shift
    k = min(3, n - 1)

    def build(points, _seed=0):  # the Euclidean geometry keeps values of 1e200
        geometry = gf.graph.fit_geometry(points, "euclidean", n_neighbors=k)
        _, ind = geometry.neighbors(k)
        return gf.graph.knn_affinity(ind, points.shape[0]).toarray() + 1e-4

    A = build(Q)
    max_k = min(5, n - 1)
    levels = label_free_levels(
        A, max_k, points=Q, reference_graph=build, random_state=0, uniform_null=uniform_null
    )
    assert 1 <= levels.n_clusters <= max_k and levels.uniform_excess.shape == (max_k,)
    assert_the_rule_holds(levels, A, Q, build, uniform_null=uniform_null)


@settings(max_examples=20, deadline=None)
@given(max_clusters=st.sampled_from([0, -3, 2.5, True, "4", None]))
def test_a_bad_max_clusters_is_refused_plainly(max_clusters):
    A = knn_graph(groups([[0, 0], [3, 0]], n=20))
    with pytest.raises((TypeError, ValueError), match="max_clusters"):
        label_free_levels(A, max_clusters)


def test_points_must_be_the_graphs_nodes():
    P = groups([[0, 0], [3, 0]], n=20)
    with pytest.raises(ValueError, match="rows but the affinity"):
        label_free_levels(knn_graph(P), 4, points=P[:-1], reference_graph=knn_graph)


def test_every_point_is_labelled_above_the_partition_sample():
    """Above 5,000 points k-means runs on a sample; the others join the nearest
    centre of the sample's clusters: the sample keeps its partition, and the
    rest fall where the three groups are."""
    from sklearn.metrics import adjusted_rand_score

    from geoforest.graph import spectral_partitions
    from geoforest.graph._spectral import PARTITION_SAMPLE

    P = groups([[0, 0], [3, 0], [0, 3]], n=2100, scale=0.4)
    A = knn_graph(P)
    sample = spectral_partitions(A, 4, random_state=0, n_init=4)
    full = spectral_partitions(A, 4, random_state=0, n_init=4, extend=True)
    assert sample.rows.size == PARTITION_SAMPLE and full.rows.size == P.shape[0]
    truth = np.repeat([0, 1, 2], 2100)
    for k in (2, 3, 4):
        lab = full.labels[k]
        assert lab.shape == (P.shape[0],) and set(np.unique(lab)) == set(range(k))
        # The sample keeps its k-means partition (up to numbering).
        assert adjusted_rand_score(lab[sample.rows], sample.labels[k]) == 1.0
    assert adjusted_rand_score(full.labels[3], truth) > 0.99
    levels = label_free_levels(A, 4, points=P, reference_graph=knn_graph, random_state=0)
    assert levels.n_clusters == 3 and levels.rows.size == P.shape[0]
    np.testing.assert_array_equal(levels.labels[3], full.labels[3])


def test_all_references_give_the_excess_of_the_public_spectral_excess():
    """reference_margin=None draws every Gaussian reference, always: the excess
    up to the most separated level is spectral_excess's over N_REFERENCES."""
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [6, 6]])
    A = knn_graph(P)
    levels = label_free_levels(
        A, 6, points=P, reference_graph=knn_graph, random_state=0, reference_margin=None
    )
    assert levels.n_references == gf.graph.N_REFERENCES == 2
    whole = gf.graph.spectral_excess(A, P, knn_graph, 6, 0, eigenvalues=levels.eigenvalues)
    np.testing.assert_array_equal(levels.excess[1], whole[0])  # K = 2, the most separated
    assert_the_rule_holds(levels, A, P, knn_graph)


def test_a_clear_choice_draws_one_reference_and_a_close_one_both():
    """Four groups, every level far from its bars: the first reference settles
    K, and its excess is spectral_excess's over that one.  A margin wider than
    any excess makes every choice close: both references, as with None."""
    P = groups([[0, 0], [1.2, 0], [0, 1.2], [1.2, 1.2]], scale=0.2)
    A = knn_graph(P)
    clear = label_free_levels(A, 6, points=P, reference_graph=knn_graph, random_state=0)
    assert clear.n_references == 1 and clear.n_clusters == 4
    one = gf.graph.spectral_excess(A, P, knn_graph, 6, 0, 1, eigenvalues=clear.eigenvalues)
    np.testing.assert_array_equal(clear.excess[1:4], one[:3])
    wide = label_free_levels(
        A, 6, points=P, reference_graph=knn_graph, random_state=0, reference_margin=1e3
    )
    every = label_free_levels(
        A, 6, points=P, reference_graph=knn_graph, random_state=0, reference_margin=None
    )
    assert wide.n_references == 2
    np.testing.assert_array_equal(wide.excess, every.excess)
    assert wide.n_clusters == every.n_clusters == 4


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 4),
    spread=st.floats(0.6, 2.5),
    scale=st.floats(0.1, 0.4),
    seed=st.integers(0, 2**16),
)
def test_the_first_reference_settles_only_choices_the_second_could_not_change(
    n, spread, scale, seed
):
    """Whenever the second reference moves no deciding level's excess by more
    than the margin, K with one reference where the choice is clear equals K
    with both always (the exactness the margin's bound promises); and a fit
    that stopped at one reference had a choice one K wide within the margin."""
    rng = np.random.RandomState(seed)
    P = groups(rng.uniform(0, spread * n, size=(n, 2)), n=30, scale=scale, seed=seed)
    A = knn_graph(P)
    margin = 0.2
    kw = {"points": P, "reference_graph": knn_graph, "random_state": seed % 7}
    fast = label_free_levels(A, 6, reference_margin=margin, **kw)
    full = label_free_levels(A, 6, reference_margin=None, **kw)
    assert full.n_references == 2 and fast.n_references in (1, 2)
    if fast.n_references == 2:
        np.testing.assert_array_equal(fast.excess, full.excess)
        assert fast.n_clusters == full.n_clusters
        return
    # The whole set's Gaussian decides up to the most separated level; above it
    # the mixture of its parts, one reference either way (the same in both fits).
    usable = np.isfinite(full.gaps) & ~full.fragmented
    usable[0] = False
    k_sep = int(np.argmax(np.where(usable, full.gaps, -np.inf))) + 1 if usable.any() else 1
    gaussian = np.arange(1, 7) <= (k_sep if 2 <= k_sep < 6 else 6)
    np.testing.assert_array_equal(fast.excess[~gaussian], full.excess[~gaussian])
    moved = np.abs(fast.excess - full.excess)
    with np.errstate(invalid="ignore"):
        deciding = (full.gaps >= LEVEL_MIN_GAP) & ~full.fragmented & np.isfinite(moved)
    if np.all(moved[deciding] <= margin):
        assert fast.n_clusters == full.n_clusters
    rule = {"min_gap": LEVEL_MIN_GAP, "min_excess": MIN_EXCESS}
    shift = np.where(gaussian, margin, 0.0)[1:]
    lo = gf.graph.choose_finest_level(fast.gaps, fast.excess[1:] - shift, fast.fragmented, **rule)
    hi = gf.graph.choose_finest_level(fast.gaps, fast.excess[1:] + shift, fast.fragmented, **rule)
    assert lo == hi


@settings(max_examples=30, deadline=None)
@given(margin=st.sampled_from([-0.1, float("nan"), float("inf"), True, 1j, "0.3"]))
def test_a_bad_reference_margin_is_refused(margin):
    P = groups([[0, 0], [3, 0]])
    with pytest.raises(ValueError, match="reference_margin"):
        label_free_levels(
            knn_graph(P), 4, points=P, reference_graph=knn_graph, reference_margin=margin
        )
