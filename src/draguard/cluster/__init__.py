"""Cluster state for the audit: snapshots read live (paginated LISTs, read-only) or from a dump,
dumps written for replay, and the audit that judges a snapshot."""
