"""Generators that run the pipeline to write files: the rule docs and the agent rule files."""
