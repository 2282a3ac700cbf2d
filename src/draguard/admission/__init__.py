"""Admission: the AdmissionReview webhook that enforces the catalog in the cluster."""
