"""Scenarios where draguard once disagreed with the upstream allocator, kept by name.
Each entry says what was wrong; the scenario is regenerated from its seed."""

from oracle import scenario

REGRESSIONS: dict[str, dict] = {
    # A pool whose slices disagree on resourceSliceCount: upstream takes the count of the
    # pool's first slice in input order; draguard read it from a node-local slice first.
    "pool-slice-count-from-first-slice": scenario(256),
}
