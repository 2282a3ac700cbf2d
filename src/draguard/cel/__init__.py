"""The CEL environment of the API server for device selectors and admission policies: the
libraries, cost and limits, compile-time checks, rewrites where cel-cpp differs from cel-go, and
what an expression reads, from its checked AST."""
