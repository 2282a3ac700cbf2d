"""Properties of any allocation: no device twice, no counter overdrawn, and the same choice
whatever the order in which pools are listed (upstream's order there is random).

The search is exponential in the worst case (upstream's too), and the generator can draw such
cases: each attempt has a small step budget, and an undecided search is no evidence either way."""

from hypothesis import assume, given, settings
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
