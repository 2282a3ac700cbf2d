"""Properties of any allocation: no device twice, no counter overdrawn, and the same choice
whatever the order in which pools are listed (upstream's order there is random).

The search is exponential in the worst case (upstream's too), and the generator can draw such
cases: each attempt has a small step budget, and an undecided search is no evidence either way."""

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from draguard.dra.allocator import AllocationError, BudgetExceeded

from support.dra import allocator, claim, dev, node, req, slice_

N1 = node("node-1")
BUDGET = 20_000


@st.composite
def scenarios(draw):
    pools = []
    for p in range(draw(st.integers(1, 3))):
        capacity = draw(st.integers(2, 6))
        counter = slice_(f"c{p}", [], pool=f"pool-{p}", count=2,
                         sharedCounters=[{"name": "mem", "counters": {"slices": {"value": str(capacity)}}}])
        devices = [dev(f"d{i}", {"model": draw(st.sampled_from(["a", "b"])), "numa": draw(st.integers(0, 1))},
                       consumesCounters=[{"counterSet": "mem", "counters": {"slices": {"value": str(draw(st.integers(1, 3)))}}}])
                   for i in range(draw(st.integers(1, 6)))]
        pools.append([counter, slice_(f"s{p}", devices, pool=f"pool-{p}", count=2)])
    claims = []
    for c in range(draw(st.integers(1, 4))):
        requests = [req(f"r{r}", count=draw(st.integers(1, 2)),
                        selectors=draw(st.sampled_from([[], ["device.attributes['gpu.example.com'].model == 'a'"]])))
                    for r in range(draw(st.integers(1, 2)))]
        constraints = [{"matchAttribute": "gpu.example.com/numa"}] if draw(st.booleans()) else None
        claims.append(claim(f"c{c}", *requests, constraints=constraints))
    allocated = {("gpu.example.com", f"pool-{p}", f"d{draw(st.integers(0, 5))}") for p in range(len(pools))
                 if draw(st.booleans())}
    return pools, claims, allocated


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_no_double_booking_and_no_counter_overdraw(scenario):
    pools, claims, allocated = scenario
    slices = [s for pool in pools for s in pool]
    try:
        results = allocator(slices, allocated=allocated, budget=BUDGET).allocate(claims, N1)
    except AllocationError:
        return
    except BudgetExceeded:
        assume(False)
    if results is None:
        event("no allocation")
        assert not _fits(slices, claims, allocated), "the allocator found nothing where an allocation exists"
        return
    chosen = [(r.driver, r.pool, r.device) for result in results for r in result.results]
    assert len(chosen) == len(set(chosen))
    assert not set(chosen) & allocated
    by_id = {d.id: d for s in slices for d in s.devices}
    for pool in {p for _, p, _ in chosen}:
        capacity = next(dict(s.shared_counters)["mem"]["slices"] for s in slices if s.pool == pool and s.shared_counters)
        used = sum(by_id[i].consumes_counters[0][1]["slices"] for i in set(chosen) | allocated if i[1] == pool and i in by_id)
        assert used <= capacity
    for result, c in zip(results, claims):
        assert sum(r.count for r in c.requests) == len(result.results)
        if c.constraints:
            values = {by_id[(r.driver, r.pool, r.device)].attribute("numa") for r in result.results}
            assert len(values) == 1


@settings(max_examples=100, deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_pool_order_does_not_change_the_choice(scenario, rnd):
    pools, claims, allocated = scenario
    slices = [s for pool in pools for s in pool]
    shuffled = list(pools)
    rnd.shuffle(shuffled)
    other = [s for pool in shuffled for s in pool]

    def outcome(s):
        try:
            results = allocator(s, allocated=allocated, budget=BUDGET).allocate(claims, N1)
        except AllocationError as exc:
            return ("error", str(exc))
        except BudgetExceeded:
            assume(False)  # an order may take longer to decide; that is not a different choice
        return None if results is None else [[(r.request, r.pool, r.device) for r in x.results] for x in results]

    assert outcome(slices) == outcome(other)


class _Undecided(Exception):
    pass


def _fits(slices, claims, allocated, budget: int = 50_000) -> bool:
    """Whether any allocation of `claims` exists, by plain exhaustive search (a second
    opinion, independent of the allocator's): each request's devices are distinct, free,
    match its selector (the scenarios' only one: model 'a'), stay on one NUMA node where the
    claim asks, and no pool's counter is overdrawn. Undecided within `budget` steps:
    hypothesis drops the case (assume), as the allocator's own budget does."""
    devices = [d for s in slices for d in s.devices if d.id not in allocated]
    capacity = {s.pool: dict(s.shared_counters)["mem"]["slices"] for s in slices if s.shared_counters}
    by_id = {d.id: d for s in slices for d in s.devices}
    used = dict.fromkeys(capacity, 0)
    for i in allocated:
        if i in by_id:
            used[i[1]] += by_id[i].consumes_counters[0][1]["slices"]
    slots = [(c, r) for c in claims for r in c.requests for _ in range(r.count)]
    taken: set = set()
    numa: dict = {}
    steps = [0]

    def place(k: int) -> bool:
        if k == len(slots):
            return True
        steps[0] += 1
        if steps[0] > budget:
            raise _Undecided
        c, r = slots[k]
        for d in devices:
            cost = d.consumes_counters[0][1]["slices"]
            if d.id in taken or used[d.id[1]] + cost > capacity[d.id[1]]:
                continue
            if r.selectors and d.attribute("model").value != "a":
                continue
            if c.constraints and numa.get(id(c), d.attribute("numa").value) != d.attribute("numa").value:
                continue
            first = id(c) not in numa
            taken.add(d.id)
            used[d.id[1]] += cost
            numa.setdefault(id(c), d.attribute("numa").value)
            if place(k + 1):
                return True
            taken.discard(d.id)
            used[d.id[1]] -= cost
            if first:
                del numa[id(c)]
        return False

    try:
        return place(0)
    except _Undecided:
        assume(False)
        raise
