"""cel.cost against upstream: the costs k8s.io/dynamic-resource-allocation's own unit tests
expect (cel/compile_test.go at v0.37.2, every case with a cost), the Go slice sharing that
decides an iteration variable's size, and saturating arithmetic. The
differential over generated selectors is tests/integration/test_cel_oracle.py."""

import pytest

from draguard.cel.cost import U64, Range, _Path
from draguard.cel.env import MAX_COST, compile_selector

UPSTREAM_COSTS = [
    ('runtime-error-lookup-identifier', 'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ('runtime-error-lookup-map', 'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', 6),
    ('domain-check-negative', '"no-such-domain" in device.attributes', 3),
    ('domain-check-positive', '"dra.example.com" in device.attributes', 3),
    ('empty-driver-name', 'device.driver == ""', 2),
    ('real-driver-name', 'device.driver == "dra.example.com"', 4),
    ('driver-name-qualifier', 'device.attributes["dra.example.com"].name', 4),
    ('driver-name-qualifier-map-lookup', 'device.attributes["dra.example.com"]["name"]', 4),
    ('bind', 'cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    ('qualified-attribute-name', 'device.attributes["other.example.com"].name', 4),
    ('bool', 'device.attributes["dra.example.com"].name', 4),
    ('int', 'device.attributes["dra.example.com"].name > 0', 5),
    ('string', 'device.attributes["dra.example.com"].name == "fish"', 5),
    ('macro-exists-on-int', 'device.attributes["dra.example.com"].name.exists(x, x > 0)', 389),
    ('macro-exists-on-bool', 'device.attributes["dra.example.com"].name.exists(x, x == true)', 389),
    ('macro-exists-on-string', 'device.attributes["dra.example.com"].name.exists(x, x == "fish")', 389),
    ('list-result-type-causes-match-error', 'device.attributes["dra.example.com"].names', 4),
    ('list-of-bool', 'device.attributes["dra.example.com"].names.size() == 2', 6),
    ('list-of-int', 'device.attributes["dra.example.com"].names.size() == 2', 6),
    ('list-of-string', 'device.attributes["dra.example.com"].names.size() == 2', 6),
    ('list-of-semver', 'device.attributes["dra.example.com"].names.size() == 2', 6),
    ('macro-on-list-of-int', 'device.attributes["dra.example.com"].names.exists(x, x > 0)', 389),
    ('macro-on-list-of-string', 'device.attributes["dra.example.com"].names.all(x, x != "")', 261),
    ('macro-on-list-of-semver', 'device.attributes["dra.example.com"].names.all(x, x.isGreaterThan(semver("0.0.1")))', 389),
    ('version', 'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', 6),
    ('version_v', 'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)', 7),
    ('macro-exists-on-version', 'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))', 453),
    ('quantity', 'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    ('check-positive', '"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 10),
    ('check-negative', '!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 11),
    ('all', '\ndevice.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&\ndevice.attributes["dra.example.com"].bool &&\ndevice.attributes["dra.example.com"].int > 0 &&\ndevice.attributes["dra.example.com"].string == "fish" &&\ndevice.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&\ndevice.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&\ndevice.attributes["dra.example.com"]["bool"] &&\ndevice.attributes["dra.example.com"]["int"] > 0 &&\ndevice.attributes["dra.example.com"]["string"] == "fish" &&\ndevice.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))\n', 52),
    ('many', 'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c', 12),
    ('check_attribute_domains', 'device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ('check_attribute_ids', 'device.attributes["dra.example.com"].exists_one(x, x == "services")', 133),
    ('split_attribute', 'device.attributes["dra.example.com"].services.split("example").size() >= 2', 19),
    ('regexp_attribute', 'device.attributes["dra.example.com"].services.matches("[^a]?sym")', 18),
    ('check_capacity_domains', 'device.capacity.exists_one(x, x == "dra.example.com")', 164),
    ('check_capacity_ids', 'device.capacity["dra.example.com"].exists_one(x, x == "memory")', 133),
    ('allow_multiple_allocations', 'device.allowMultipleAllocations == true', 3),
    ('allow_multiple_allocations_default', 'device.allowMultipleAllocations == false', 3),
    ('allow_multiple_allocations_false', 'device.allowMultipleAllocations == false', 3),
    ('allow_multiple_allocations_new', 'device.allowMultipleAllocations == false', 3),
    ('allow_multiple_allocations_enabled', 'device.allowMultipleAllocations == false', 3),
    ('includes-function-on-semver-scalar-positive', 'device.attributes["dra.example.com"].name.includes(semver("1.0.0"))', 69),
    ('includes-function-on-semver-scalar-negative', 'device.attributes["dra.example.com"].name.includes(semver("2.0.0"))', 69),
    ('includes-function-on-semver-list-positive', 'device.attributes["dra.example.com"].name.includes(semver("1.0.0"))', 69),
    ('includes-function-on-semver-list-negative', 'device.attributes["dra.example.com"].name.includes(semver("3.0.0"))', 69),
    ('includes-function-can-evaluate', 'device.attributes["dra.example.com"].name.includes("fish")', 4 + 64),
]


@pytest.mark.parametrize("name, expression, cost", UPSTREAM_COSTS, ids=[c[0] for c in UPSTREAM_COSTS])
def test_upstream_unit_costs(name, expression, cost):
    compiled = compile_selector(expression)
    assert compiled.error is None
    assert compiled.max_cost == cost


def test_paths_share_their_array_as_go_slices_do():
    """append() within capacity writes into the shared array: the second append on one path
    overwrites the first's last name, as in cel-go's pushIterKey/pushIterValue."""
    base = _Path.of("device").append("attributes").append("@values")  # length 3, capacity 4
    keys = base.append("@keys")
    values = base.append("@values")
    assert keys.names() == values.names() == ("device", "attributes", "@values", "@values")
    full = _Path.of("device", "attributes")  # length = capacity: append copies
    assert full.append("@keys").names() == ("device", "attributes", "@keys")
    assert full.append("@values").names() == ("device", "attributes", "@values")


def test_the_key_variable_takes_the_values_size_as_upstream():
    """upstream's oracle: 420 (the key `k` sized as an attribute value, 64 characters); with
    paths that did not share arrays it would be 324 (a name, 32 characters)."""
    assert compile_selector("device.attributes['gpu.example.com'].exists(k, v, k == v)").max_cost == 420


def test_estimates_saturate_at_uint64():
    assert Range(1, U64) + Range(1, 1) == Range(2, U64)
    assert Range(2, U64).times(Range(3, 2)) == Range(6, U64)
    assert Range(0, U64).factor(0.1) == Range(0, 1844674407370955264)
    assert Range(10, 11).factor(0.1) == Range(1, 2)  # rounded up


@pytest.mark.parametrize("expression, costliest", [
    ("['a', 'b'].join('-') == 'a-b'", "['a', 'b'].join('-')"),
    ("device.driver == 'x' && quantity('1') != quantity('2')", "quantity('1') != quantity('2')"),
    ("ip('::1') == dyn(ip('::1'))", "ip('::1') == dyn(ip('::1'))"),
])
def test_a_selector_over_the_limit_names_the_part_that_takes_it_over(expression, costliest):
    compiled = compile_selector(expression)
    assert compiled.error is None and compiled.too_complex and compiled.max_cost > MAX_COST
    assert expression[compiled.costliest:].startswith(costliest)


def test_a_bounded_selector_is_not_too_complex():
    compiled = compile_selector("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0")
    assert compiled.max_cost == 7 and not compiled.too_complex
