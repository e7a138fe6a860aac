"""The node loop (``build_tree``) on tiny data, against brute-force cuts in numpy.

Axis projections with every feature a candidate at every node: each split
node's feature, threshold and gain must be the best cut a plain numpy scan
over all features finds for the node's rows, and each leaf must be a node
that could not be cut.  Also: the rule table and the dispatch agree, and an
unknown rule code fails in Python validation and in the kernels.
"""

import ast
import inspect
import textwrap

import numpy as np
import pytest

from geoforest._engine import splits
from geoforest._engine.builder import EngineConfig, TreeLimits, build_tree
from geoforest._engine.projections import AXIS
from geoforest._engine.rng import make_state
from geoforest._engine.splits import (
    CLASS_CRITERIA,
    CRITERIA,
    ENTROPY,
    FASTBIC,
    GINI,
    GMM,
    MEDIAN,
    RANDOM_CUTS,
    REGRESSION_CRITERIA,
    RULES,
    SQUARED_ERROR,
    TWOMEANS,
    UNIFORM,
    VAR_FLOOR,
    best_class_cut,
    best_cut,
    best_regression_cut,
    default_params,
    lookup_rule,
    make_workspace,
)

UNKNOWN = 99


# --------------------------------------------------------------------------- growing
def _grow(X, code, y=None, min_split=2, min_leaf=1, max_depth=-1, seed=0):
    """``build_tree`` on all rows of ``X`` with every feature as a candidate at every node.

    ``y``: int labels (classification), float targets of shape ``(n, n_outputs)``
    (regression), or None (unsupervised).
    """
    n, p = X.shape
    y_lab, targets = np.zeros(0, np.int32), np.zeros((0, 0))
    w, counts, n_classes = np.zeros(0), np.zeros(0, np.int32), 0
    if y is not None:
        w, counts = np.ones(n), np.ones(n, np.int32)
        if np.asarray(y).dtype.kind == "f":
            targets = np.ascontiguousarray(y, dtype=np.float64)
        else:
            y_lab = np.asarray(y, np.int32)
            n_classes = int(y_lab.max()) + 1
    cfg = EngineConfig(AXIS, np.zeros(1), 1, code, default_params(code), p).typed()
    limits = TreeLimits(min_split, min_leaf, max_depth, -np.inf)
    workspace = None  # the supervised kernel
    if y is None:
        y_lab = targets = None  # the unsupervised kernel
        workspace = make_workspace(code, n)
    tree, rows, leaf = build_tree(
        np.ascontiguousarray(X, dtype=np.float32), np.arange(n, dtype=np.int64), cfg, limits,
        make_state(seed), y_lab, targets, w, counts, n_classes, workspace, None,
    )  # fmt: skip
    return tree, rows, leaf


def _nodes(tree, X):
    """``(node, rows)`` of every node, by splitting the rows as the stored tree does."""
    left, right, threshold, proj_ptr, proj_idx = tree[0], tree[1], tree[2], tree[3], tree[4]
    out, stack = [], [(0, np.arange(X.shape[0]))]
    while stack:
        node, rows = stack.pop()
        out.append((node, rows))
        if left[node] != -1:
            assert proj_ptr[node + 1] - proj_ptr[node] == 1  # one axis
            f = proj_idx[proj_ptr[node]]
            go_left = X[rows, f].astype(np.float64) <= threshold[node]
            stack += [(left[node], rows[go_left]), (right[node], rows[~go_left])]
    return sorted(out, key=lambda t: t[0])


# --------------------------------------------------------------------------- brute force
# Each ``brute_*`` scores every valid cut of sorted ``z``: ``{pos: (score, gain)}``,
# the score being what the builder maximises and the gain what it records.
def _cuts(z, min_leaf):
    return [s for s in range(max(1, min_leaf), len(z) - min_leaf + 1) if z[s - 1] < z[s]]


def _sse(a):
    return float(np.sum((a - a.mean()) ** 2)) if len(a) else 0.0


def brute_twomeans(z, min_leaf):
    """Score ``-(SSE_left + SSE_right)``, gain the SSE reduction."""
    return {
        s: (-(_sse(z[:s]) + _sse(z[s:])), _sse(z) - _sse(z[:s]) - _sse(z[s:]))
        for s in _cuts(z, min_leaf)
    }


def brute_fastbic(z, min_leaf):
    """The Fast-BIC gain; where no cut has a positive gain, the two-means fallback's score."""
    n, cuts = len(z), _cuts(z, min_leaf)
    if not cuts:
        return {}
    var = np.var(z)
    floor = VAR_FLOOR * var
    log2pi = np.log(2 * np.pi)
    bic_one = n * (log2pi + np.log(var)) + n + 2 * np.log(n)
    gains = {}
    for s in cuts:
        a, b = z[:s], z[s:]
        w = -2 * (s * np.log(s / n) + (n - s) * np.log((n - s) / n))
        v1, v2 = max(np.var(a), floor), max(np.var(b), floor)
        vp = max((_sse(a) + _sse(b)) / n, floor)
        diff = w + s * (log2pi + np.log(v1)) + (n - s) * (log2pi + np.log(v2)) + n + 5 * np.log(n)
        same = w + n * (log2pi + np.log(vp)) + n + 4 * np.log(n)
        gains[s] = bic_one - min(diff, same)
    top = max(gains.values())
    if top > 0:
        return {s: (g, g) for s, g in gains.items()}
    # No structure: cut where two-means would, scored by -(SSE_left + SSE_right) / SSE_node.
    return {s: (score / _sse(z), top) for s, (score, _) in brute_twomeans(z, min_leaf).items()}


def brute_median(z, min_leaf):
    """The one valid cut nearest ``n // 2`` (the lower on a tie); score and gain the SSE drop."""
    cuts = _cuts(z, min_leaf)
    if not cuts:
        return {}
    pos = min(cuts, key=lambda s: (abs(s - len(z) // 2), s))
    g = _sse(z) - _sse(z[:pos]) - _sse(z[pos:])
    return {pos: (g, g)}


def _impurity(counts, gini):
    w = counts.sum()
    if w <= 0:
        return 0.0
    q = counts[counts > 0] / w
    return w * (1 - np.sum(q**2)) if gini else -w * np.sum(q * np.log2(q))


def brute_impurity(z, ys, min_leaf, n_classes, gini):
    """The decrease of the weighted Gini or entropy (score and gain)."""
    total = np.bincount(ys, minlength=n_classes).astype(float)
    out = {}
    for s in _cuts(z, min_leaf):
        left = np.bincount(ys[:s], minlength=n_classes).astype(float)
        g = _impurity(total, gini) - _impurity(left, gini) - _impurity(total - left, gini)
        out[s] = (g, g)
    return out


def brute_squared_error(z, T, min_leaf):
    """The decrease of the summed squared error of every output (score and gain)."""

    def sse(a):
        return float(np.sum((a - a.mean(axis=0)) ** 2)) if len(a) else 0.0

    return {s: (g, g) for s in _cuts(z, min_leaf) for g in [sse(T) - sse(T[:s]) - sse(T[s:])]}


def _brute_node(X, rows, code, y, min_leaf):
    """``{(feature, threshold): gain}`` of the best cuts of a node (ties kept), or ``{}``."""
    scored = []
    for f in range(X.shape[1]):
        z = X[rows, f].astype(np.float64)
        order = np.argsort(z, kind="stable")
        z = z[order]
        if code == FASTBIC:
            cuts = brute_fastbic(z, min_leaf)
        elif code == TWOMEANS:
            cuts = brute_twomeans(z, min_leaf)
        elif code == MEDIAN:
            cuts = brute_median(z, min_leaf)
        elif code == SQUARED_ERROR:
            cuts = brute_squared_error(z, y[rows][order], min_leaf)
        else:
            cuts = brute_impurity(z, y[rows][order], min_leaf, y.max() + 1, code == GINI)
        scored += [(sc, f, _midpoint(z[s - 1], z[s]), g) for s, (sc, g) in cuts.items()]
    if not scored:
        return {}
    top = max(sc for sc, *_ in scored)
    # Cuts equal up to rounding (Gini counts tie often) are all right answers.
    return {(f, thr): g for sc, f, thr, g in scored if sc >= top - 1e-9 * max(1.0, abs(top))}


def _midpoint(a, b):
    thr = a + 0.5 * (b - a)
    return thr if thr < b else a


def _data(seed, n, p, n_classes=0, n_outputs=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, size=p)
    X[: n // 2, 0] += 4.0 * (seed % 2)  # half the cases with a clear gap
    X = X.astype(np.float32).astype(np.float64)
    y = rng.integers(0, n_classes, size=n) if n_classes else None
    if n_classes:
        y[: n // 2] = 0  # some signal, some noise
        y[-1] = 1  # never a pure root
    if n_outputs:
        y = X[:, :1] * np.arange(1, n_outputs + 1) + rng.normal(size=(n, n_outputs))
        y[: n // 3] = np.round(y[: n // 3])  # a few equal targets: leaves with one value
    return X, y


CHECKED = [FASTBIC, TWOMEANS, MEDIAN, GINI, ENTROPY, SQUARED_ERROR]


def _task_data(code, seed, n, p):
    """Data for ``code``'s task: labels for a classification rule, one or two
    outputs for a regression rule, none for an unsupervised rule."""
    family = lookup_rule(code).family
    if family == "class":
        return _data(seed, n, p, n_classes=2 + seed % 2)
    if family == "regression":
        return _data(seed, n, p, n_outputs=1 + seed % 2)
    return _data(seed, n, p)


def _pure(y, rows):
    """No cut can improve the node: one class, or every target row equal."""
    return y is not None and len(np.unique(y[rows], axis=0)) == 1


@pytest.mark.parametrize("code", CHECKED)
@pytest.mark.parametrize("seed", range(8))
def test_every_split_is_the_brute_force_best_cut(code, seed):
    n = 6 + seed % 7
    p = 1 + seed % 2
    min_leaf = 1 + seed % 3 // 2
    X, y = _task_data(code, seed, n, p)
    tree, rows, leaf = _grow(X, code, y, min_split=2, min_leaf=min_leaf)
    left, right, threshold, gain, size = tree[0], tree[1], tree[2], tree[7], tree[6]
    n_split = 0
    for node, node_rows in _nodes(tree, X):
        assert size[node] == len(node_rows)
        best = _brute_node(X, node_rows, code, y, min_leaf)
        pure = _pure(y, node_rows)
        if lookup_rule(code).family == "regression":  # every node holds its mean targets
            np.testing.assert_allclose(tree[8][node], y[node_rows].mean(axis=0), rtol=1e-12)
        if left[node] == -1:
            # A leaf: too small, pure, or no valid cut on any feature.
            assert len(node_rows) < 2 or pure or not best
            continue
        n_split += 1
        assert best and not pure
        cut = (tree[4][tree[3][node]], threshold[node])
        assert cut in best
        assert gain[node] == pytest.approx(best[cut], rel=1e-7, abs=1e-9)
        n_left = np.count_nonzero(X[node_rows, cut[0]] <= cut[1])
        assert size[left[node]] == n_left and size[right[node]] == len(node_rows) - n_left
    assert n_split >= 1
    # The returned leaf of every sample is where the stored tree sends it.
    where = {int(r): node for node, rs in _nodes(tree, X) if left[node] == -1 for r in rs}
    assert all(where[int(r)] == lf for r, lf in zip(rows, leaf, strict=True))


@pytest.mark.parametrize("code", CHECKED)
def test_root_only_tree_cuts_the_root_at_the_brute_force_best(code):
    X, y = _task_data(code, 3, 12, 2)
    tree, _, _ = _grow(X, code, y, max_depth=1)
    assert tree[0].shape[0] == 3  # the root and two leaves
    assert (tree[4][0], tree[2][0]) in _brute_node(X, np.arange(12), code, y, 1)


@pytest.mark.parametrize("code", [GMM, UNIFORM, MEDIAN, FASTBIC, TWOMEANS])
@pytest.mark.parametrize("seed", range(4))
def test_splits_are_valid_partitions_and_trees_are_deterministic(code, seed):
    X, _ = _data(seed, 12, 2)
    min_leaf = 1 + seed % 2
    tree, rows, leaf = _grow(X, code, min_split=2, min_leaf=min_leaf, seed=seed)
    left, threshold = tree[0], tree[2]
    nodes = dict(_nodes(tree, X))
    leaves = [node for node in nodes if left[node] == -1]
    # Leaves hold every row exactly once; split nodes cut between distinct values.
    assert sorted(np.concatenate([nodes[lf] for lf in leaves])) == list(range(12))
    for node, node_rows in nodes.items():
        if left[node] == -1:
            continue
        f = tree[4][tree[3][node]]
        z = X[node_rows, f]
        n_left = np.count_nonzero(z <= threshold[node])
        assert min_leaf <= n_left <= len(z) - min_leaf
        assert z[z <= threshold[node]].max() < z[z > threshold[node]].min()
        assert np.isfinite(tree[7][node])
    again = _grow(X, code, min_split=2, min_leaf=min_leaf, seed=seed)
    for a, b in zip((*tree, rows, leaf), (*again[0], again[1], again[2]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_build_tree_refuses_a_tree_without_a_task():
    # y = None says unsupervised, workspace = None says supervised: both at
    # once would prune every branch of the candidate loop and grow a stump.
    X = np.random.default_rng(0).normal(size=(20, 2)).astype(np.float32)
    cfg = EngineConfig(AXIS, np.zeros(1), 1, TWOMEANS, default_params(TWOMEANS), 2).typed()
    with pytest.raises(ValueError, match="needs its rule's workspace"):
        build_tree(
            X, np.arange(20, dtype=np.int64), cfg, TreeLimits(2, 1, -1, -np.inf), make_state(0),
            None, None, np.zeros(0), np.zeros(0, np.int32), 0, None, None,
        )  # fmt: skip


# --------------------------------------------------------------------------- the rule table
def test_table_entries_are_unique_and_name_maps_come_from_it():
    assert len({r.code for r in RULES}) == len({r.name for r in RULES}) == len(RULES)
    assert [r.code for r in RULES] == list(range(len(RULES)))
    maps = {
        "criterion": CRITERIA, "random": RANDOM_CUTS, "class": CLASS_CRITERIA,
        "regression": REGRESSION_CRITERIA,
    }  # fmt: skip
    for r in RULES:
        assert maps[r.family][r.name] == r.code
        assert r.supervised == (r.family in ("class", "regression"))
        np.testing.assert_array_equal(default_params(r.code), np.array(r.params, float))
    assert dict(CRITERIA) == {"fastbic": FASTBIC, "twomeans": TWOMEANS, "gmm": GMM}
    assert dict(RANDOM_CUTS) == {"uniform": UNIFORM, "median": MEDIAN}
    assert dict(CLASS_CRITERIA) == {"gini": GINI, "entropy": ENTROPY}
    assert dict(REGRESSION_CRITERIA) == {"squared_error": SQUARED_ERROR}


def _dispatch_branches(kernel):
    """``[(code, called kernel's name)]`` of a dispatcher's ``if rule == CODE: return f(...)``
    (``if rule == A or rule == B: return f(...)``: rules sharing one kernel)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(kernel.py_func))).body[0].body
    branches = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = stmt.test
            tests = test.values if isinstance(test, ast.BoolOp) else [test]
            assert isinstance(test, ast.Compare) or isinstance(test.op, ast.Or)
            call = stmt.body[0].value
            for t in tests:
                assert isinstance(t, ast.Compare) and t.left.id == "rule"
                branches.append((getattr(splits, t.comparators[0].id), call.func.id))
    assert isinstance(body[-1], ast.Raise)  # no fall-through to some rule
    return branches


@pytest.mark.parametrize(
    ("kernel", "families"),
    [
        (best_class_cut, ("class",)),
        (best_regression_cut, ("regression",)),
    ],
)
def test_dispatch_has_one_branch_per_table_entry_calling_its_cut(kernel, families):
    expected = [(r.code, r.cut.py_func.__name__) for r in RULES if r.family in families]
    assert _dispatch_branches(kernel) == expected


def test_make_workspace_gives_each_rule_its_table_workspace():
    unsupervised = [r for r in RULES if r.family in ("criterion", "random")]
    for r in unsupervised:
        ws = make_workspace(r.code, 9)
        assert type(ws) is r.workspace_type
        if r.workspace is None:
            assert ws.arrays.shape == (0,)
        else:
            np.testing.assert_array_equal(ws.arrays, r.workspace(9))
    # One class per rule: the class is what selects the rule in the kernels.
    assert len({r.workspace_type for r in unsupervised}) == len(unsupervised)
    assert all(r.workspace_type is None for r in RULES if r.supervised)


def test_best_cut_runs_the_cut_of_its_workspace_rule():
    z = np.sort(np.random.default_rng(0).normal(size=40))
    for r in RULES:
        if r.supervised:
            continue
        params = default_params(r.code)
        ws = make_workspace(r.code, 40)
        got = best_cut(r.code, z, 40, 2, params, ws, make_state(1))
        want = r.cut(z, 40, 2, params, ws.arrays, make_state(1))
        assert got[0] == want[0]
        np.testing.assert_array_equal(np.array(got[1:]), np.array(want[1:]))
    # One signature per workspace type, each for its own rule.
    kinds = {sig[5].instance_class for sig in best_cut.signatures}
    assert kinds == {r.workspace_type for r in RULES if not r.supervised}


# --------------------------------------------------------------------------- unknown codes
def test_unknown_rule_fails_python_validation():
    with pytest.raises(ValueError, match="unknown split rule code 99"):
        lookup_rule(UNKNOWN)
    with pytest.raises(ValueError, match="unknown split rule code"):
        default_params(UNKNOWN)
    with pytest.raises(ValueError, match="unknown split rule code"):
        lookup_rule("fastbic")  # a name is not a code
    with pytest.raises(ValueError, match="unknown split rule 'nope'; known: fastbic, gmm"):
        CRITERIA["nope"]
    with pytest.raises(ValueError, match="unknown split rule"):
        CLASS_CRITERIA["fastbic"]
    with pytest.raises(ValueError, match="not a supervised"):
        lookup_rule(FASTBIC, supervised=True)
    with pytest.raises(ValueError, match="not an unsupervised"):
        lookup_rule(GINI, supervised=False)
    assert lookup_rule(GINI, supervised=True).name == "gini"


def test_unknown_criterion_fails_before_any_tree_is_grown():
    import geoforest as gf

    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="criterion"):
        gf.UnsupervisedForest(n_estimators=1, criterion="nope").fit(X)


def test_unknown_code_raises_in_the_kernels():
    z = np.arange(8.0)
    ys, ws, cs = np.arange(8, dtype=np.int32) % 2, np.ones(8), np.ones(8, np.int32)
    with pytest.raises(ValueError, match="does not match its workspace"):
        best_cut(UNKNOWN, z, 8, 1, np.zeros(3), make_workspace(FASTBIC, 8), make_state(0))
    with pytest.raises(ValueError, match="unknown split rule code"):
        best_class_cut(UNKNOWN, z, ys, ws, cs, 8, 2, 1, 0.0, np.zeros(4))
    with pytest.raises(ValueError, match="unknown split rule code"):
        make_workspace(UNKNOWN, 8)
    with pytest.raises(ValueError, match="unknown split rule code"):
        splits._side_impurity(UNKNOWN, 3.0, 5.0)
    # A rule of the other task is unknown to the task's dispatch, not run as another rule.
    with pytest.raises(ValueError, match="unknown split rule code"):
        make_workspace(GINI, 8)
    with pytest.raises(ValueError, match="does not match its workspace"):
        best_cut(GINI, z, 8, 1, np.zeros(3), make_workspace(TWOMEANS, 8), make_state(0))
    with pytest.raises(ValueError, match="unknown split rule code"):
        best_class_cut(FASTBIC, z, ys, ws, cs, 8, 2, 1, 0.0, np.zeros(4))
    with pytest.raises(ValueError, match="unknown split rule code"):
        best_regression_cut(GINI, z, np.ones((8, 1)), ws, cs, 8, 1, 0.0, np.zeros(2))
    with pytest.raises(ValueError, match="unknown split rule code"):
        best_class_cut(SQUARED_ERROR, z, ys, ws, cs, 8, 2, 1, 0.0, np.zeros(4))


@pytest.mark.parametrize(
    ("code", "task"),
    [(UNKNOWN, "none"), (UNKNOWN, "labels"), (UNKNOWN, "targets"), (GINI, "none"),
     (GINI, "targets"), (SQUARED_ERROR, "labels")],
)  # fmt: skip
def test_unknown_code_raises_in_build_tree(code, task):
    X, y = _data(0, 10, 2, n_classes=2 if task == "labels" else 0)
    cfg = EngineConfig(AXIS, np.zeros(1), 1, code, np.zeros(3), 2).typed()
    labels, targets, n_classes = np.zeros(0, np.int32), np.zeros((0, 0)), 0
    if task == "labels":
        labels, n_classes = np.asarray(y, np.int32), 2
    elif task == "targets":
        targets = np.ascontiguousarray(X[:, :1], dtype=np.float64)
    supervised = task != "none"
    if not supervised:
        labels = targets = None  # the unsupervised kernel
    w = np.ones(10) if supervised else np.zeros(0)
    counts = np.ones(10, np.int32) if supervised else np.zeros(0, np.int32)
    with pytest.raises(ValueError, match="unknown split rule code"):
        # The unsupervised kernel's rule scratch: the first place a code is read.
        workspace = None if supervised else make_workspace(code, 10)
        build_tree(
            X.astype(np.float32), np.arange(10, dtype=np.int64), cfg,
            TreeLimits(2, 1, -1, -np.inf), make_state(0), labels, targets, w, counts, n_classes,
            workspace, None,
        )  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_partition_is_stable_and_puts_values_at_the_threshold_left(seed):
    from geoforest._engine.nodes import partition

    rng = np.random.default_rng(seed)
    n, lo = 300, 17
    samples = rng.permutation(1000)[: lo + n + 5].astype(np.int64)
    z = rng.integers(0, 7, size=n).astype(np.float64)  # many values equal to the threshold
    threshold = 3.0
    node = samples[lo : lo + n]
    expected = np.concatenate([node[z <= threshold], node[z > threshold]])
    out = samples.copy()
    mid = partition(out, z, lo, lo + n, threshold, np.empty(n, dtype=np.int64))
    assert mid == lo + np.count_nonzero(z <= threshold)
    np.testing.assert_array_equal(out[lo : lo + n], expected)  # order kept on both sides
    np.testing.assert_array_equal(out[:lo], samples[:lo])  # nothing outside the node moves
    np.testing.assert_array_equal(out[lo + n :], samples[lo + n :])


@pytest.mark.parametrize("min_leaf", [1, 6])
@pytest.mark.parametrize("seed", range(3))
def test_uniform_trees_without_the_sort_are_the_sorted_trees(min_leaf, seed):
    # With one candidate, one batch and no gain bound the uniform rule skips
    # the sort (cuts.uniform_cut_unsorted).  A finite gain bound below every
    # gain (-1e300) decides exactly as none does but keeps the sorted path.
    # The trees must agree in every array but the gain, which the unsorted
    # path sums in another order; min_leaf = 6 and tied rows make some cuts
    # move (the unsorted path's sorted fallback) and some nodes uncuttable.
    from geoforest._engine.builder import Tree
    from geoforest._engine.projections import GAUSSIAN

    rng = np.random.default_rng(seed)
    X = np.asfortranarray(rng.normal(size=(500, 6)).astype(np.float32))
    X[:50] = X[0]  # ties: many equal projected values
    cfg = EngineConfig(GAUSSIAN, np.zeros(1), 6, UNIFORM, default_params(UNIFORM), 1).typed()
    trees = []
    for min_gain in (-np.inf, -1e300):
        tree, rows, leaf = build_tree(
            X, np.arange(500, dtype=np.int64), cfg, TreeLimits(12, min_leaf, -1, min_gain),
            make_state(seed), None, None, np.zeros(0), np.zeros(0, np.int32), 0,
            make_workspace(UNIFORM, 500), None,
        )  # fmt: skip
        trees.append((Tree(*tree), rows, leaf))
    (a, rows_a, leaf_a), (b, rows_b, leaf_b) = trees
    assert len(a.left) > 20
    for name in a._fields:
        if name == "gain":
            np.testing.assert_allclose(a.gain, b.gain, rtol=1e-12)
        else:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(rows_a, rows_b)
    np.testing.assert_array_equal(leaf_a, leaf_b)
