"""Which request a claim makes has one answer: model.claims.REQUEST_SHAPES. The admission
policies' CEL (admission.variables.request_fields) is generated from it; this holds the CEL's
reading equal to the model's on every combination of the request shapes."""

from __future__ import annotations

import itertools

import pytest

from draguard.admission.celcheck import variables
from draguard.admission.variables import request_fields
from draguard.model.claims import parse_request

SUB_A = {"name": "a", "deviceClassName": "gpu.nvidia.com"}
SUB_B = {"name": "b", "deviceClassName": "mig.nvidia.com", "count": 2}
FIRST_AVAILABLE = (None, [], [SUB_A], [SUB_A, SUB_B])
EXACTLY = (None, {}, {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"})
FLAT = (None, {"deviceClassName": "gpu.nvidia.com", "count": 3})


def _cases():
    for version in ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"):
        flat_versions = version.endswith("v1beta1")
        for first, exactly, flat in itertools.product(FIRST_AVAILABLE, EXACTLY, FLAT):
            if flat_versions and exactly is not None or not flat_versions and flat is not None:
                continue  # a field that version does not have: the API server drops it before CEL sees it
            raw = {"name": "gpu", **(flat or {})}
            if first is not None:
                raw["firstAvailable"] = first
            if exactly is not None:
                raw["exactly"] = exactly
            yield version, raw


CASES = list(_cases())
POLICY = {"spec": {"variables": [{"name": "fields", "expression": request_fields("object")}]}}


def test_the_cases_cover_every_shape():
    shapes = {parse_request(raw, version).shape for version, raw in CASES}
    assert shapes == {"first-available", "exactly", "flat", "empty"}
    assert len(CASES) >= 20


@pytest.mark.parametrize(("version", "raw"), CASES, ids=[f"{v.rsplit('/', 1)[1]}-{i}" for i, (v, _) in
                                                          enumerate(CASES)])
def test_the_policy_reads_the_request_the_model_reads(version, raw):
    request = parse_request(raw, version)
    model = [sub.fields for sub in request.subrequests] if request.subrequests else [request.fields]
    values, error = variables(POLICY, raw)
    assert error is None
    assert values["fields"] == model


def test_first_available_wins_over_exactly():
    """Both set (the API server refuses it, but a stored object or a policy's old object may
    hold it): the allocator reads the subrequests, and so do the model and the policy."""
    raw = {"name": "gpu", "firstAvailable": [SUB_A], "exactly": {"deviceClassName": "other.example.com"}}
    values, _ = variables(POLICY, raw)
    assert values["fields"] == [SUB_A] == [s.fields for s in parse_request(raw, "resource.k8s.io/v1").subrequests]
