"""The Deployment controller's arithmetic (deployment_util.go ResolveFenceposts, intstr)."""

import pytest

from draguard.core.intstr import scaled_value
from draguard.model.manifest import Manifest
from draguard.model.rollout import Strategy


def deployment(replicas=None, **rolling):
    spec = {"strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}} if rolling else {}
    if replicas is not None:
        spec["replicas"] = replicas
    return Manifest.from_data({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec})


@pytest.mark.parametrize("replicas, rolling, fenceposts", [
    (None, {}, (1, 0)),  # defaults 25%/25% of 1 replica: surge rounds up, unavailable down
    (4, {}, (1, 1)),
    (10, {}, (3, 2)),
    (2, {"maxSurge": 0, "maxUnavailable": "10%"}, (0, 1)),  # both resolve to 0: unavailable 1
    (2, {"maxSurge": "0%", "maxUnavailable": 0}, (0, 1)),
    (3, {"maxSurge": "34%", "maxUnavailable": "34%"}, (2, 1)),
    (5, {"maxSurge": 2, "maxUnavailable": 1}, (2, 1)),
])
def test_fenceposts(replicas, rolling, fenceposts):
    assert Strategy.of(deployment(replicas, **rolling)).fenceposts() == fenceposts


@pytest.mark.parametrize("value", ["0", "1", "5 %", " 5%", "1_0%", "٣%", "1.5%", 1.5, None, True])
def test_values_the_api_server_rejects_are_errors(value):
    with pytest.raises(ValueError):
        scaled_value(value, 4, True)


def test_recreate_never_surges_and_both_zero_is_noticed():
    recreate = Manifest.from_data({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"strategy": {"type": "Recreate"}}})
    assert not Strategy.of(recreate).surges()
    assert Strategy.of(deployment(3, maxSurge=0, maxUnavailable="0%")).both_zero
    assert not Strategy.of(deployment(3, maxSurge=False, maxUnavailable=0)).both_zero


@pytest.mark.parametrize("surge, unavailable", [(0, "00%"), ("00%", 0), ("0%", "000%"), (0, 0)])
def test_every_spelling_of_zero_is_zero_to_the_model_and_the_rule(surge, unavailable):
    """'00%' is zero to the API server (getIntOrPercentValue); the model's both_zero and the
    rollout-fields-invalid rule read it through the one core.intstr.is_zero."""
    from draguard.core.config import Config
    from draguard.engine import lint_objects

    obj = deployment(2, maxSurge=surge, maxUnavailable=unavailable)
    assert Strategy.of(obj).both_zero
    said = [f.message for f in lint_objects([obj.data], Config()).findings if f.rule == "rollout-fields-invalid"]
    assert any("maxUnavailable may not be 0 when maxSurge is 0" in m for m in said)


@pytest.mark.parametrize("value", ["1%", 1, "5", -1, None])
def test_what_is_not_zero(value):
    from draguard.core.intstr import is_zero

    assert not is_zero(value)
