"""The numba tree engine (private): projections, split rules, builder, sampling."""
