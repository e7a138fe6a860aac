"""The graph layer's names: one public path, the families' old paths warning for a release."""

import pytest

import geoforest as gf

#: family -> the graph layer's names it re-exports (as they were public there before).
REEXPORTED = {
    "cluster": [
        "LabelFreeChoiceWarning",
        "MIN_RELATIVE_GAP",
        "canonical_labels",
        "choose_by_relative_gap",
        "eigengap_scores",
        "estimate_n_clusters",
        "explain_choice",
        "min_cluster_size",
        "n_components",
        "normalized_affinity",
        "relative_gaps",
        "score_partitions",
        "spectral_clustering",
        "spectral_eigs",
        "spectral_embedding_njw",
        "spectral_partitions",
    ],
    "llpd": ["AUTO_KDTREE_MAX_DIM", "euclidean_mst"],
    "diffusion": ["bridge_components", "spatial_knn"],
}


@pytest.mark.parametrize("family", sorted(REEXPORTED))
def test_families_old_paths_warn_and_give_the_same_objects(family):
    module = getattr(gf, family)
    for name in REEXPORTED[family]:
        assert name not in module.__all__  # one public path: geoforest.graph
        with pytest.warns(FutureWarning, match=f"geoforest.graph.{name}"):
            assert getattr(module, name) is getattr(gf.graph, name)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


#: The layer's own names: the geometries and the unit-free edge weights (issue 43), the
#: one entry, the geometries' classes and what the families share (issue 53), the
#: finest-level choice and the copies a neighbour graph looks past (issue 54).
OWN = [
    "AUTO_DENSE_MAX_N",
    "COPIES_LOOKED_PAST",
    "EuclideanGeometry",
    "ForestGeometry",
    "Geometry",
    "METRICS",
    "MIN_EXCESS",
    "PrecomputedGeometry",
    "SubsetGeometry",
    "check_forest_metric",
    "check_metric_in",
    "check_n_neighbors",
    "check_query_graph",
    "check_sparse_graph",
    "choose_by_excess",
    "gaussian_reference",
    "mixture_reference",
    "uniform_reference",
    "choose_finest_level",
    "explain_levels",
    "fit_geometry",
    "knn_affinity",
    "label_free_levels",
    "LEVEL_MIN_GAP",
    "Levels",
    "MIXTURE_REFERENCES",
    "N_REFERENCES",
    "REFERENCE_MARGIN",
    "make_geometry",
    "sorted_rows",
    "spanning_tree",
    "spectral_excess",
    "STRONG_EXCESS",
    "STRONG_STEP_EXCESS",
    "STRONG_RELATIVE_GAP",
    "symmetrize",
    "takes_graph",
    "walk_eigenpairs",
]


def test_every_graph_name_is_public_somewhere_before_or_new():
    before = [n for names in REEXPORTED.values() for n in names]
    assert sorted(gf.graph.__all__) == sorted(before + OWN)
    assert "graph" in gf.__all__ and gf.graph.__doc__.startswith("The graph layer")
