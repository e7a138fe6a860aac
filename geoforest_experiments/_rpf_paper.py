"""Reported numbers of the rpfCluster paper, transcribed for comparison tables.

Paper: D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity Kernel and Clustering via
Random Projection Forests", arXiv:1908.10506 (2019); the text used is
``papers/003_359637e91a94f7cc.txt`` and the line numbers ("L220") below refer
to it.

What the paper reports, and what it does not
--------------------------------------------
* Section 5.1.1 (L212-L220), iris: spectral clustering on the rpf-kernel gives
  a clustering accuracy of 96.67 % and a co-cluster accuracy of 94.95 %;
  spectral clustering on the Gaussian kernel gives 92.00 % and 90.55 %.  These
  are the **only** per-data-set accuracies printed in the text.
* Section 5.2 (L236-L296), 12 real data sets: the accuracies of K-means, NJW
  spectral clustering, Cluster Forests (CF) and rpfCluster are shown only as
  the bar charts of Figures 4 (clustering accuracy) and 5 (co-cluster
  accuracy) (L291-L294), whose values are not in the text, so every entry for
  these data sets is ``None``.  The text gives only how often each method
  ranks first or second (L296), transcribed as :data:`PAPER_RANKS`.  CF's
  numbers are partly "adopted" from the Cluster Forests paper (Yan, Chen and
  Jordan 2013, ref. [70]) (L283); they are not transcribed here.

Both accuracies are "converted to a scale of 100 %" in the paper (L269); here
they are fractions in [0, 1].  The co-cluster accuracy is defined at L265-L269
as "correctly clustered pairs / total number of pairs", where a correctly
clustered pair is "two data points, determined to be in the same cluster by a
clustering algorithm, [that] are also in the same cluster according to the
reference labels".  Read literally that ignores pairs that both partitions
separate, which would make it much smaller than the 94.95 % reported for iris
(at most about 1/3 of the pairs of a 3 x 50 data set share a class); the
numbers fit the definition of ref. [70], the fraction of all pairs on which
the two partitions agree (Rand index), which is what
``geoforest.metrics.cocluster_accuracy`` computes.

Under that definition the iris Gaussian-kernel pair is consistent: 12
versicolor/virginica points in the wrong cluster give exactly 92.00 % and
90.55 %.  The rpfCluster pair is not: 96.67 % clustering accuracy means 5 of
150 points misassigned, and every 3 x 3 confusion matrix with class sizes 50
and 5 errors has a Rand index between 95.59 % and 95.75 %; 94.95 % is the
largest Rand index with 6 errors (clustering accuracy 96.00 %).  The two
numbers probably come from different runs, or one is a typo; both are
transcribed as printed.
"""

from __future__ import annotations

__all__ = [
    "METHODS",
    "PAPER_DATASET_NAMES",
    "PAPER_RANKS",
    "PAPER_RESULTS",
    "PAPER_SETTINGS",
    "PAPER_SIZES",
    "PAPER_STANDARDIZED_FEATURES",
    "PAPER_UNAVAILABLE",
]

#: The four methods of Figures 4 and 5, named as in their captions (L292, L294):
#: "K-means clustering", "spectral clustering (NJW)", "CF" (Cluster Forests,
#: ref. [70]) and "rpfCluster".
METHODS: tuple[str, ...] = ("K-means", "Spectral clustering (NJW)", "CF", "rpfCluster")

#: Method name of the Gaussian-kernel baseline of the iris example (L220), an
#: extra key used only for ``"iris"``.  The paper says "spectral clustering ...
#: on the Gaussian kernel" without giving the bandwidth or the variant; it is
#: presumably the NJW set-up of Section 5.2.2 (L277-L281, kernlab ``specc``
#: with automatic bandwidth) but that is not stated, so it is kept apart from
#: "Spectral clustering (NJW)".
GAUSSIAN_SPECTRAL = "Spectral clustering (Gaussian kernel)"

_NOT_IN_TEXT: dict[str, tuple[float | None, float | None]] = {m: (None, None) for m in METHODS}

#: data set (a name of ``geoforest.datasets.CLUSTERING_BENCHMARKS``) -> method ->
#: (clustering accuracy, co-cluster accuracy) as fractions; ``None`` where the
#: paper's text gives no number (values of Figures 4 and 5 are not printed).
PAPER_RESULTS: dict[str, dict[str, tuple[float | None, float | None]]] = {
    # L220: "We then run spectral clustering algorithm on the rpf-kernel generated
    # by rpForests, and obtain a clustering and co-cluster accuracy ... of 96.67%
    # and 94.95%, respectively. ... The clustering and co-cluster accuracy on the
    # Gaussian kernel ... are 92.00% and 90.55%, respectively."  Spectral clustering
    # on the rpf-kernel is Algorithm 3 (L89-L92), i.e. rpfCluster; the paper does
    # not give its parameters (trees, n_s, beta_1, beta_2) for this example.
    "iris": {
        "rpfCluster": (0.9667, 0.9495),
        GAUSSIAN_SPECTRAL: (0.9200, 0.9055),
    },
    # Figures 4/5 (L291-L294): bar charts only, no numbers in the text.
    "wine": dict(_NOT_IN_TEXT),
    "wdbc": dict(_NOT_IN_TEXT),
    "heart": dict(_NOT_IN_TEXT),
    "segment": dict(_NOT_IN_TEXT),
    "satimage": dict(_NOT_IN_TEXT),
    "magic": dict(_NOT_IN_TEXT),
    "musk2": dict(_NOT_IN_TEXT),
}

#: Our data set name -> the paper's name (Table 1, L240-L252) and why they match.
PAPER_DATASET_NAMES: dict[str, str] = {
    # L212: "three species of Iris ... with 50 instances each on four features";
    # not part of Table 1, used only in the illustrative example of Section 5.1.1.
    "iris": "Iris",
    # L245: "Wine 13 3 178" = UCI Wine, the copy bundled with scikit-learn.
    "wine": "Wine",
    # L246: "WDBC 30 2 569" = UCI Wisconsin diagnostic breast cancer (scikit-learn).
    "wdbc": "WDBC",
    # L244: "Heart 13 2 270".  270 instances and 13 features identify the UCI
    # *Statlog* heart data set (Cleveland has 303); L238 lists "SPECT Heart"
    # separately, which is a different data set (SPECT, L242, not available).
    "heart": "Heart",
    # L243: "ImgSeg 19 7 2100".  UCI image segmentation; the paper's 2100 rows are
    # the UCI test file (segmentation.test) alone, while our KEEL copy holds all
    # 2310 rows (the 210-row training file as well).  Ambiguous: the paper does not
    # say which file it used, only the size.
    "segment": "ImgSeg",
    # L249: "RS 56 7 3303", the remote-sensing data set of ref. [73] (Yan, Li, Cong,
    # Yu, Gong 2019, Int. J. Remote Sensing), not publicly available.  Our
    # "satimage" (UCI Statlog Landsat satellite, 6435 x 36, 6 classes) is only a
    # stand-in from the same domain: different pixels, features and classes, so the
    # paper's RS bars must not be compared with our satimage numbers one to one.
    "satimage": "RS",
    # L252: "mGamma 10 2 19020" = UCI MAGIC gamma telescope ("Magic Gamma
    # (mGamma)", L238).
    "magic": "mGamma",
    # L250: "Musk 166 2 6598".  6598 instances identify Musk *version 2* (version 1
    # has 476 instances).
    "musk2": "Musk",
}

#: The paper's (n_samples, n_features, n_classes) for our data sets, from Table 1
#: (L240-L252; its columns are Features, Classes, #Instances, reordered here) and,
#: for iris, from L212.  Differences from the data we load: segment (paper 2100
#: rows, ours 2310) and satimage (the paper's RS set is a different data set).
PAPER_SIZES: dict[str, tuple[int, int, int]] = {
    "iris": (150, 4, 3),  # L212
    "wine": (178, 13, 3),  # L245
    "wdbc": (569, 30, 2),  # L246
    "heart": (270, 13, 2),  # L244
    "segment": (2100, 19, 7),  # L243 (ImgSeg)
    "satimage": (3303, 56, 7),  # L249 (RS, see PAPER_DATASET_NAMES)
    "magic": (19020, 10, 2),  # L252 (mGamma)
    "musk2": (6598, 166, 2),  # L250 (Musk)
}

#: Data sets of Table 1 that are not available offline (L241-L251), with their
#: (n, p, K).  Together with our seven data sets (RS by a stand-in) they make the
#: paper's 12.
PAPER_UNAVAILABLE: dict[str, tuple[int, int, int]] = {
    "Soybean": (47, 35, 4),  # L241
    "SPECT": (267, 22, 2),  # L242
    "Robot": (164, 90, 5),  # L247, "robot execution failure (lp5)" (L238)
    "Madelon": (2000, 500, 2),  # L248
    "NavalPlants": (11934, 16, 2),  # L251, labels made from medians (L238)
    "RS": (3303, 56, 7),  # L249, replaced by "satimage"
}

#: Features the paper standardises (L238): "For WDBC, it is standardized on its
#: {5, 6, 25, 26}-th features; the Wine dataset is standardized on its {6, 14}-th
#: features".  Wine has only 13 features, so the indices must count the columns of
#: the UCI files, 1-based: wine.data starts with the class, wdbc.data with the id
#: and the diagnosis.  Read that way they are exactly the large-scale features
#: (wine: magnesium, proline; WDBC: mean perimeter, mean area, worst perimeter,
#: worst area), which is why one would standardise them; read as feature numbers
#: they would be small-scale ones for WDBC and impossible for wine.  This is our
#: interpretation.  Values: 0-based column indices into our ``data`` (the
#: scikit-learn feature order).
PAPER_STANDARDIZED_FEATURES: dict[str, tuple[int, ...]] = {
    "wine": (4, 12),  # magnesium, proline
    "wdbc": (2, 3, 22, 23),  # mean perimeter, mean area, worst perimeter, worst area
}

#: L296, over all 12 data sets of Figures 4/5: number of data sets on which each
#: method ranks first / second.  "On all but two of the 12 datasets, either
#: rpfCluster or CF is leading".  No per-data-set ranks are given.
PAPER_RANKS: dict[str, dict[str, dict[str, int]]] = {
    "clustering accuracy": {
        "rpfCluster": {"first": 7, "second": 3},
        "CF": {"first": 3, "second": 5},
    },
    "co-cluster accuracy": {
        "rpfCluster": {"first": 5, "second": 6},
        "CF": {"first": 5, "second": 3},
    },
}

#: Settings of the methods, L285 (and Algorithm 3, L89-L92).
PAPER_SETTINGS: dict[str, dict[str, object]] = {
    "rpfCluster": {
        "n_estimators": (200, 400, 600),  # "the difference in results is very small"
        "min_samples_split": 30,  # node splitting constant n_s (12 Soybean, 200 Madelon)
        "beta1": (0.0, 0.1, 0.2, 0.3, 0.4),  # threshold: S_ij <- 0 if S_ij < beta1
        # bandwidth: S <- exp(S / beta2), searched with step 0.01 on (0, 1] and
        # 0.1 on (1, 200]; the search criterion is not stated.  Each part is
        # (start, stop, step) with both ends included.
        "beta2_grid": ((0.01, 1.0, 0.01), (1.1, 200.0, 0.1)),
    },
    "K-means": {"algorithm": "Hartigan-Wong (R kmeans)", "max_iter": 1000, "n_init": 100},
    "Spectral clustering (NJW)": {
        "implementation": "R kernlab specc",
        "kernel": "Gaussian, automatic local bandwidth search",
    },
}
