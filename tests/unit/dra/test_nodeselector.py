"""Node selectors parsed and matched as upstream's allocator does (component-helpers
nodeaffinity + apimachinery labels.NewRequirement, v0.37.2): a selector that does not parse
is an error for the whole allocation, never "no match"."""

import pytest

from draguard.dra.devices import Node
from draguard.dra.nodeselector import NodeSelectorError, parse_node_selector


def _selector(*requirements, field="matchExpressions", terms=None):
    return {"nodeSelectorTerms": terms if terms is not None else [{field: list(requirements)}]}


NODE = Node("node-0", {"rack": "r1", "gpus": "4", "count": 7})


@pytest.mark.parametrize("requirement, field, matches", [
    ({"key": "rack", "operator": "In", "values": ["r1", "r2"]}, "matchExpressions", True),
    ({"key": "rack", "operator": "NotIn", "values": ["r1"]}, "matchExpressions", False),
    ({"key": "zone", "operator": "NotIn", "values": ["a"]}, "matchExpressions", True),  # absent key
    ({"key": "rack", "operator": "Exists"}, "matchExpressions", True),
    ({"key": "zone", "operator": "DoesNotExist"}, "matchExpressions", True),
    ({"key": "gpus", "operator": "Gt", "values": ["3"]}, "matchExpressions", True),
    ({"key": "count", "operator": "Lt", "values": ["8"]}, "matchExpressions", True),  # labels compare as text
    ({"key": "rack", "operator": "Gt", "values": ["0"]}, "matchExpressions", False),  # label not an integer
    ({"key": "metadata.name", "operator": "In", "values": ["node-0"]}, "matchFields", True),
    ({"key": "metadata.name", "operator": "NotIn", "values": ["node-0"]}, "matchFields", False),
])
def test_requirements_match_as_upstream(requirement, field, matches):
    assert parse_node_selector(_selector(requirement, field=field)).matches(NODE) is matches


@pytest.mark.parametrize("requirement, field, problem", [
    ({"key": "rack", "operator": "In", "values": []}, "matchExpressions", "values set can't be empty"),
    ({"key": "rack", "operator": "Exists", "values": ["r1"]}, "matchExpressions", "values set must be empty"),
    ({"key": "gpus", "operator": "Gt", "values": ["1", "2"]}, "matchExpressions", "exactly one value is required"),
    ({"key": "gpus", "operator": "Lt", "values": ["1.5"]}, "matchExpressions", "the value must be an integer"),
    # strconv.ParseInt takes a sign, but the value must also be a label value, which cannot start with one
    ({"key": "gpus", "operator": "Gt", "values": ["+4"]}, "matchExpressions", "a valid label value"),
    ({"key": "gpus", "operator": "Lt", "values": ["-1"]}, "matchExpressions", "a valid label value"),
    ({"key": "gpus", "operator": "Gt", "values": ["9223372036854775808"]}, "matchExpressions", "must be an integer"),
    ({"key": "bad key!", "operator": "Exists"}, "matchExpressions", "key: Invalid value"),
    ({"key": "rack", "operator": "In", "values": ["no spaces"]}, "matchExpressions", "a valid label value"),
    ({"key": "rack", "operator": "Equals", "values": ["r1"]}, "matchExpressions", "operator: Unsupported value"),
    ({"key": "metadata.name", "operator": "In", "values": ["a", "b"]}, "matchFields", "must have one element"),
    ({"key": "metadata.name", "operator": "Exists"}, "matchFields", "operator: Unsupported value"),
])
def test_what_upstream_cannot_parse_is_an_error(requirement, field, problem):
    with pytest.raises(NodeSelectorError, match=problem):
        parse_node_selector(_selector(requirement, field=field))


def test_terms_are_ored_and_empty_terms_select_nothing():
    rack_r2 = {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r2"]}]}
    rack_r1 = {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}
    assert parse_node_selector(_selector(terms=[rack_r2, rack_r1])).matches(NODE)
    assert not parse_node_selector(_selector(terms=[{}])).matches(NODE)
    assert not parse_node_selector(_selector(terms=[])).matches(NODE)
    # a bad requirement in any term fails the whole selector, even when another term matches
    bad = {"matchExpressions": [{"key": "rack", "operator": "In", "values": []}]}
    with pytest.raises(NodeSelectorError):
        parse_node_selector(_selector(terms=[rack_r1, bad]))


def test_an_inventory_with_an_unparseable_selector_is_refused_at_its_position(tmp_path, cli):
    (tmp_path / "inventory.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: gpu.nvidia.com\n"
        "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  nodeSelector:\n    nodeSelectorTerms:\n"
        "    - matchExpressions: [{key: gpus, operator: Gt, values: [many]}]\n  devices: [{name: d}]\n")
    (tmp_path / "claim.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
        "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.nvidia.com}}]}}\n")
    result = cli("lint", tmp_path / "claim.yaml", "--no-config", "--inventory", tmp_path / "inventory.yaml")
    assert result.code == 2
    assert f"{tmp_path}/inventory.yaml:8:5: ResourceSlice 's': nodeSelector:" in result.err
    assert "for 'Gt', 'Lt' operators, the value must be an integer" in result.err
