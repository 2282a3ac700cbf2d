"""Consumable capacity (DRAConsumableCapacity, KEP-5075): what a request consumes of a
device's capacities, and whether it still fits beside what other allocations consume.

A port of k8s.io/dynamic-resource-allocation structured/internal/incubating/
consumable_capacity.go (CmpRequestOverCapacity, calculateConsumedCapacity, the request
policy's default, valid values and valid range with its step, milli-value arithmetic under
DRAFractionalCapacityRange). Capacities and requests are keyed by the qualified name exactly
as written (upstream looks `capacity.requests` up by the device's map keys). Amounts are
quantity.Quantity (an exact value, and the text a result shows: a copy of the quantity it came
from, or a new one in the step's format); Value() and MilliValue() round up, as upstream's
do. One difference is kept on purpose: upstream compares a request with the policy's default
as Go structs (`requestedVal == *policy.Default`), which tells equal values written
differently apart; draguard compares values, which decides the same for every default API
validation admits."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..core.quantity import Quantity, parse_quantity_text

MAX_INT64 = 2**63 - 1


class CapacityError(Exception):
    """A capacity request upstream aborts the allocation on (not representable, negative)."""


@dataclass(frozen=True)
class RequestPolicy:
    """A device capacity's request policy (DRAConsumableCapacity): its default, valid values or range."""
    default: Quantity | None = None
    valid_values: tuple = ()  # of Quantity
    has_range: bool = False  # validRange is set (its min is required)
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


@dataclass(frozen=True)
class DeviceCapacity:
    """One capacity a device publishes, with the policy that says how requests consume it."""
    name: str  # the qualified name as the slice writes it
    value: Quantity
    policy: RequestPolicy | None = None


def _quantity(raw) -> Quantity | None:
    return parse_quantity_text(raw) if raw is not None else None


def device_capacities(raw) -> tuple:
    """A device's `capacity` map as DeviceCapacity entries (raises quantity.QuantityError)."""
    out = []
    for name, entry in (raw or {}).items() if isinstance(raw, dict) else ():
        entry = entry if isinstance(entry, dict) else {"value": entry}
        policy = entry.get("requestPolicy")
        parsed = None
        if isinstance(policy, dict):
            valid_range = policy.get("validRange")
            bounds = valid_range if isinstance(valid_range, dict) else {}
            parsed = RequestPolicy(_quantity(policy.get("default")),
                                   tuple(parse_quantity_text(v) for v in policy.get("validValues") or ()),
                                   isinstance(valid_range, dict), _quantity(bounds.get("min")),
                                   _quantity(bounds.get("max")), _quantity(bounds.get("step")))
        out.append(DeviceCapacity(str(name), parse_quantity_text(entry.get("value")), parsed))
    return tuple(out)


def of_device(device) -> tuple:
    """A dra.devices.Device's capacities with their request policies, parsed once per device
    and shared by the devices that write the same map (a node's MIG devices of one profile,
    every node of a model): what `alone` remembers is then per distinct map, not per device
    (raises quantity.QuantityError)."""
    if device.consumable is None:
        raw = device.capacity_raw
        key = repr(raw)  # parsed JSON or YAML: equal text, equal values
        found = _PARSED.get(key)
        if found is None:
            found = device_capacities(raw)
            if len(_PARSED) > _REMEMBERED:
                _PARSED.clear()
            _PARSED[key] = found
        device.consumable = found
    return device.consumable


_REMEMBERED = 4096
_PARSED: dict[str, tuple] = {}
_ALONE: dict[tuple[int, bool], tuple[tuple, dict | None]] = {}


def alone(capacities: tuple, fractional: bool) -> dict | None:
    """consumption() of a request without capacity requests on a device nobody consumes
    (nothing allocated, nothing this run gave): it depends on the device's capacities alone,
    and the scheduler asks it of every free device it passes. Remembered per capacities
    tuple (of_device shares them); a copy is returned, which the caller may keep."""
    key = (id(capacities), fractional)
    found = _ALONE.get(key)
    if found is None or found[0] is not capacities:
        found = (capacities, consumption({}, None, capacities, None, fractional))
        if len(_ALONE) > _REMEMBERED:
            _ALONE.clear()
        _ALONE[key] = found  # holds the tuple: its id is not reused while remembered
    return dict(found[1]) if found[1] is not None else None


def requested_capacities(raw: dict) -> dict[str, Quantity]:
    """A request's `capacity.requests` (raises quantity.QuantityError)."""
    return {str(name): parse_quantity_text(value) for name, value in raw.items()}


def rounded_up(q: Fraction) -> int:
    """Quantity.Value(): rounded up, away from zero (of q * 1000, MilliValue())."""
    return math.ceil(q) if q >= 0 else -math.ceil(-q)


def _milli(q: Fraction) -> int:
    """Quantity.MilliValue(): rounded up, away from zero."""
    return rounded_up(q * 1000)


def _safe_milli(q: Fraction) -> int | None:
    """safeMilliValue: the milli value when it is exact, else None."""
    milli = q * 1000
    return int(milli) if milli.denominator == 1 else None


def _use_milli(policy: RequestPolicy, fractional: bool) -> bool:
    if not fractional:
        return False
    for index, q in enumerate((policy.min, policy.max, policy.step)):
        if q is None:
            continue
        milli = _safe_milli(q.value)
        if milli is None or index == 2 and milli < 1:
            return False
    return True


def _round_up_range(requested: Quantity, minimum: Quantity, policy: RequestPolicy, fractional: bool) -> Quantity:
    if requested.value < minimum.value:
        return minimum
    if policy.step is None:
        return requested
    if _use_milli(policy, fractional):
        requested_milli = _safe_milli(requested.value)
        if requested_milli is None:
            raise CapacityError(f"request {requested} is not a representable milli value")
        step, low = _milli(policy.step.value), _milli(minimum.value)
        n = -(-(requested_milli - low) // step)
        if n > (MAX_INT64 - low) // step:
            raise CapacityError(f"rounding request {requested} up to the next step passes the milli-value range")
        return Quantity(Fraction(low + step * n, 1000), policy.step.format)
    if requested.value > MAX_INT64:
        raise CapacityError(f"request {requested} exceeds MaxInt64")
    step, low = rounded_up(policy.step.value), rounded_up(minimum.value)
    n = -(-(rounded_up(requested.value) - low) // step)  # the request is at least the minimum: rounding up
    if low >= 0 and n > (MAX_INT64 - low) // step:
        raise CapacityError(f"rounding request {requested} up to the next step passes MaxInt64")
    return Quantity(Fraction(low + step * n), policy.step.format)


def consumed_by(requested: Quantity | None, capacity: DeviceCapacity, fractional: bool) -> Quantity:
    """calculateConsumedCapacity: the policy's default (else the whole capacity) when nothing
    is requested, else the request rounded up to the policy's range or valid values."""
    policy = capacity.policy
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else capacity.value
    if policy is None:
        return requested
    if policy.min is not None:
        return _round_up_range(requested, policy.min, policy, fractional)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested.value <= v.value), requested)
    return requested


def _violates(consumed: Fraction, policy: RequestPolicy | None, fractional: bool) -> bool:
    if policy is None or policy.default is not None and consumed == policy.default.value:
        return False
    if policy.has_range:
        if policy.max is not None and consumed > policy.max.value:
            return True
        if policy.step is not None and policy.min is not None:  # the API server requires the minimum
            if _use_milli(policy, fractional):
                milli = _safe_milli(consumed)
                if milli is None:
                    return True
                requested, step, low = milli, _milli(policy.step.value), _milli(policy.min.value)
            else:
                requested, step, low = rounded_up(consumed), rounded_up(policy.step.value), rounded_up(policy.min.value)
            return (requested - low) % step != 0  # not a whole number of steps from the minimum
        return False
    if policy.valid_values:
        return consumed not in {v.value for v in policy.valid_values}
    return False


def consumption(current: dict, requests: dict | None, capacities: tuple, allocating: dict | None,
                fractional: bool) -> dict | None:
    """CmpRequestOverCapacity with what passes it: what the request consumes of the device
    (name -> Quantity, GetConsumedCapacityFromRequest), or None when that does not fit beside
    `current` (what allocated claims consume) and `allocating` (what this run has given
    others), both name -> value. None skips the device; CapacityError aborts the allocation."""
    if requests:
        names = {c.name for c in capacities}
        if any(name not in names for name in requests):
            return None  # the device lacks a requested capacity: another device may have it
    consumed = {c.name: consumed_by((requests or {}).get(c.name), c, fractional) for c in capacities}
    for name, amount in consumed.items():
        if amount.value < 0:
            raise CapacityError(f"capacity {name!r}: capacity value is negative")
    for capacity in capacities:
        value = consumed[capacity.name].value
        if _violates(value, capacity.policy, fractional):
            return None
        used, other = current.get(capacity.name, 0), (allocating or {}).get(capacity.name, 0)
        if value is capacity.value.value and not used and not other:
            continue  # the whole capacity, which nobody else consumes (an exclusive device): no sum to make
        if used + value + other > capacity.value.value:
            return None
    return consumed


def fits(current: dict, requests: dict | None, capacities: tuple, allocating: dict | None,
         fractional: bool) -> bool:
    """Whether the request's consumption fits the device (see consumption)."""
    return consumption(current, requests, capacities, allocating, fractional) is not None


def add(into: dict, amounts: dict) -> None:
    """Sum `amounts` (name -> Quantity) into `into` (name -> value)."""
    for name, amount in amounts.items():
        into[name] = into.get(name, 0) + amount.value


def subtract(into: dict, amounts: dict) -> None:
    for name, amount in amounts.items():
        if name in into:
            into[name] -= amount.value

