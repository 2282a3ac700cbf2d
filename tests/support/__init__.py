"""Helpers shared by the tests and the benchmarks: paths of the corpus and examples, report
helpers, builders for allocator scenarios, the upstream oracle and the control plane."""
