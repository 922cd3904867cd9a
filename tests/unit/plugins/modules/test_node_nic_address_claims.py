"""node_nic_address's address claims (clients/address_claims.py claim_addresses): two writers that lost one address
together must not keep colliding.

Both re-plan from the same list, so without a random wait they pick the same next address, both yield and both lose
again until the attempts run out (seen in CI with three writers at once).
"""

from ansible_collections.ocp.egressip.plugins.module_utils.clients import address_claims as module_under_test
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn

import pytest

MAC = '00:50:56:aa:bb:01'


def policy(node, address, stamp, parked=True):
    item = nn.desired_policy(node, node, MAC, {4: address}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    item = nn.parked(item) if parked else item
    item['metadata']['creationTimestamp'] = stamp
    return item


class FakeModule(object):
    check_mode = False

    def __init__(self):
        self.params = {'wait_sleep': 1, 'route_metric': 200, 'interface_name': 'egressip0'}
        self.k8s = object()
        self.warnings = []

    def warn(self, text):
        self.warnings.append(text)


class Clock(object):
    def __init__(self):
        self.slept = []

    def sleep(self, seconds=None):
        self.slept.append(seconds)


ACTIVATE = {'op': 'remove', 'path': '/spec/nodeSelector/egressip.ocp~1address-claim'}


def activation(listed):
    """The JSON patch that activates `listed`: the claim's tests, then the parking key removed."""
    return nn.claim_guard(listed) + [ACTIVATE]


def test_backoff_is_a_random_part_of_a_doubling_wait_with_a_ceiling():
    assert module_under_test.claim_backoff(1, 0, 0.5) == 0.5
    assert module_under_test.claim_backoff(1, 3, 0.5) == 4.0
    assert module_under_test.claim_backoff(2, 10, 0.99) == pytest.approx(29.7)
    assert module_under_test.claim_backoff(0, 0, 1.0) == 0.2, 'wait_sleep 0 still leaves the other writer a moment'


def test_a_claim_the_other_writer_gave_up_during_the_wait_is_kept_without_re_planning(monkeypatch):
    ours = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z')
    theirs = policy('w-1', '10.20.0.10/24', '2026-12-01T20:00:01Z')   # same second: both lose
    moved = policy('w-1', '10.20.0.11/24', '2026-12-01T20:00:01Z')    # the other writer re-planned first
    lists = [[ours, theirs], [ours, moved], [ours, moved]]
    patches = []
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: lists.pop(0))
    monkeypatch.setattr(kube, 'json_patch', lambda k8s, kind, name, body, check: patches.append((name, body)) or {})
    monkeypatch.setattr(module_under_test.na, 'plan_nic_addresses', lambda *args, **kwargs: pytest.fail('re-planned a claim that stood'))
    clock = Clock()
    plan = {'create': [ours], 'reclaim': [], 'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    written = module_under_test.claim_addresses(FakeModule(), [], None, {}, {'nncps': []}, plan, clock=clock, jitter=lambda: 0.5)
    assert written == ['egressip-w-0'], 'activated'
    assert clock.slept == [0.5]
    assert patches == [('egressip-w-0', activation(ours))]
    assert plan['allocations'][0]['address'] == '10.20.0.10/24'


def test_a_claim_that_keeps_losing_is_refused_parked_after_the_attempts(monkeypatch):
    ours = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z')
    active = policy('w-1', '10.20.0.10/24', '2026-12-01T20:00:00Z', parked=False)
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: [ours, active])
    patches = []
    monkeypatch.setattr(kube, 'json_patch', lambda k8s, kind, name, body, check: patches.append((name, body)) or {})
    replan = {'create': [ours], 'findings': [], 'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    replans = []
    monkeypatch.setattr(module_under_test.na, 'plan_nic_addresses', lambda *args, **kwargs: replans.append((args, kwargs)) or replan)
    clock = Clock()
    plan = {'create': [ours], 'reclaim': [], 'allocations': list(replan['allocations'])}
    with pytest.raises(Refused) as refused:
        module_under_test.claim_addresses(FakeModule(), [{'node': 'w-0', 'mac': MAC}], None, {4: 210}, {'nncps': []}, plan, attempts=3,
                                          clock=clock, jitter=lambda: 1.0)
    # the re-plan takes the route metrics parsed from the network option, never the deprecated flat option (None when unset)
    assert replans and all(args[2] == {4: 210} and kwargs == {'reserve_contested': True} for args, kwargs in replans)
    assert [item['id'] for item in refused.value.findings] == ['node_address_claim_conflict']
    assert clock.slept == [1.0, 2.0, 4.0]
    assert [name for name, _body in patches] == ['egressip-w-0'] * 3
    assert all(body[:2] == nn.claim_guard(ours) and ACTIVATE not in body for _name, body in patches), 'never activated, only re-parked'


def test_the_last_re_plan_is_checked_before_refusing(monkeypatch):
    """Refused only when a list after the last re-plan still shows the claim losing (the last re-plan may have stood)."""
    ours = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z')
    active = policy('w-1', '10.20.0.10/24', '2026-12-01T20:00:00Z', parked=False)
    moved = policy('w-0', '10.20.0.11/24', '2026-12-01T20:00:01Z')
    lists = [[ours, active], [ours, active], [moved, active]]
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: lists.pop(0))
    patches = []
    monkeypatch.setattr(kube, 'json_patch', lambda k8s, kind, name, body, check: patches.append((name, body)) or {})
    replan = {'create': [moved], 'findings': [], 'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.11/24'}]}
    monkeypatch.setattr(module_under_test.na, 'plan_nic_addresses', lambda *args, **kwargs: replan)
    plan = {'create': [ours], 'reclaim': [], 'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    module_under_test.claim_addresses(FakeModule(), [{'node': 'w-0', 'mac': MAC}], None, {4: 200}, {'nncps': []}, plan, attempts=1,
                                      clock=Clock(), jitter=lambda: 0.0)
    assert lists == []
    # the re-plan tests the claim it lost, then moves it; the activation tests the new claim
    assert patches[0][1][:2] == nn.claim_guard(ours)
    assert {'op': 'add', 'path': '/metadata/annotations/egressip.ocp~1addresses', 'value': '10.20.0.11/24'} in patches[0][1]
    assert patches[-1] == ('egressip-w-0', activation(moved))
    assert plan['allocations'][0]['address'] == '10.20.0.11/24'


def test_a_claim_changed_meanwhile_is_checked_again_and_its_status_does_not_count(monkeypatch):
    """A run that re-allocates a parked loser it found (plan['reclaim']) and its writer may both write one policy: the
    activation tests the claim it was decided on; when the claim changed (422), it lists again and decides again."""
    listed = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z')
    changed = policy('w-0', '10.20.0.12/24', '2026-12-01T20:00:01Z')
    changed['status'] = {'conditions': [{'type': 'Available', 'status': 'False'}]}
    lists = [[listed], [changed]]
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: lists.pop(0))
    patches = []

    def json_patch(k8s, kind, name, body, check):
        patches.append(body)
        if body[0]['value'] == '10.20.0.10/24':
            raise module_under_test.ModuleFailure('testing value failed', status=422)
        return {}
    monkeypatch.setattr(kube, 'json_patch', json_patch)
    plan = {'create': [listed], 'reclaim': [], 'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    module_under_test.claim_addresses(FakeModule(), [], None, {}, {'nncps': []}, plan, clock=Clock(), jitter=lambda: 0.0)
    assert patches == [activation(listed), activation(changed)]
    assert all(op['path'] != '/status' for body in patches for op in body), 'the claim is tested, not the whole object'
    assert plan['allocations'][0]['address'] == '10.20.0.12/24', 'the address the policy holds in the end'


def test_the_json_patch_of_a_merge_patch_does_what_the_merge_patch_does():
    current = {'metadata': {'annotations': {'a': '1', 'b': '2'}}, 'spec': {'nodeSelector': {'x': 'y', 'k/e~y': 'v'}}}
    merge = {'metadata': {'annotations': {'a': '9', 'b': None, 'c': '3'}},
             'spec': {'nodeSelector': {'k/e~y': None}, 'desiredState': {'interfaces': [1], 'gone': None}}}
    assert nn.json_patch_of(current, merge) == [
        {'op': 'add', 'path': '/metadata/annotations/a', 'value': '9'},
        {'op': 'remove', 'path': '/metadata/annotations/b'},
        {'op': 'add', 'path': '/metadata/annotations/c', 'value': '3'},
        {'op': 'add', 'path': '/spec/desiredState', 'value': {'interfaces': [1]}},
        {'op': 'remove', 'path': '/spec/nodeSelector/k~1e~0y'}]
    assert nn.json_patch_of(current, {}) == []


def test_a_policy_another_writer_activated_meanwhile_is_never_re_planned(monkeypatch):
    """An active policy holds its address: even one this run re-allocated (yielding) is settled once active, so it never
    moves, whatever else holds that address."""
    ours = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z', parked=False)
    other = policy('w-1', '10.20.0.10/24', '2026-12-01T20:00:02Z')
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: [ours, other])
    patches = []
    monkeypatch.setattr(kube, 'json_patch', lambda k8s, kind, name, body, check: patches.append(name) or {})
    monkeypatch.setattr(module_under_test.na, 'plan_nic_addresses', lambda *args, **kwargs: pytest.fail('re-planned an active policy'))
    plan = {'create': [], 'reclaim': ['egressip-w-0'], 'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    written = module_under_test.claim_addresses(FakeModule(), [], None, {}, {'nncps': []}, plan, clock=Clock(), jitter=lambda: 0.0)
    assert patches == [] and written == [], 'neither re-planned nor activated again'


def test_a_policy_whose_claim_changes_under_every_activation_is_refused_parked(monkeypatch):
    listed = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z')
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: [listed])

    def json_patch(k8s, kind, name, body, check):
        raise module_under_test.ModuleFailure('testing value failed', status=422)
    monkeypatch.setattr(kube, 'json_patch', json_patch)
    plan = {'create': [listed], 'reclaim': [], 'allocations': []}
    with pytest.raises(Refused) as refused:
        module_under_test.claim_addresses(FakeModule(), [], None, {}, {'nncps': []}, plan, attempts=2, clock=Clock(), jitter=lambda: 0.0)
    assert [item['id'] for item in refused.value.findings] == ['node_address_claim_conflict']
    assert 'egressip-w-0' in refused.value.findings[0]['message']


class TimedClock(object):
    """A clock whose time moves only by its sleeps, with a deadline."""

    def __init__(self, timeout, interval):
        self.time, self.deadline, self.interval = 0.0, timeout, interval

    def now(self):
        return self.time

    def expired(self):
        return self.time >= self.deadline

    def sleep(self, seconds=None):
        self.time += self.interval if seconds is None else seconds


def losing_pair(address):
    """An active policy and a parked one that lost `address` to it (its writer re-allocates it, or is gone)."""
    return [policy('w-1', address, '2026-12-01T20:00:00Z', parked=False), policy('w-0', address, '2026-12-01T20:00:01Z')]


def test_settling_waits_while_the_writer_of_a_parked_loser_keeps_changing_it(monkeypatch):
    """A loser whose writer re-plans it (its addresses move) is waited for; once its addresses stand still for
    LEFT_BEHIND_SECONDS its writer is gone and the run goes on (it may re-allocate it)."""
    addresses = iter(['10.20.0.11/24', '10.20.0.12/24', '10.20.0.13/24'] + ['10.20.0.13/24'] * 100)
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: losing_pair(next(addresses)))
    module = FakeModule()
    module.params['wait_timeout'] = 300
    clock = TimedClock(300, 5)
    snapshot = {'nncps': losing_pair('10.20.0.10/24')}
    module_under_test.settle_claims(module, snapshot, clock=clock)
    # changed at 5, 10 and 15 s, then still from 15 s: left behind at 15 + 40 s
    assert clock.time == 15 + module_under_test.LEFT_BEHIND_SECONDS
    assert nn.policy_allocation(snapshot['nncps'][1])['addresses'] == {4: '10.20.0.13/24'}


def test_settling_ends_when_the_losers_are_re_allocated_or_at_wait_timeout(monkeypatch):
    settled = [policy('w-1', '10.20.0.10/24', '2026-12-01T20:00:00Z', parked=False), policy('w-0', '10.20.0.11/24', '2026-12-01T20:00:01Z')]
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: settled)
    clock = TimedClock(300, 2)
    snapshot = {'nncps': losing_pair('10.20.0.10/24')}
    module_under_test.settle_claims(FakeModule(), snapshot, clock=clock)
    assert clock.time == 2 and snapshot['nncps'] == settled
    addresses = iter('10.20.0.%d/24' % number for number in range(11, 100))
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: losing_pair(next(addresses)))
    clock = TimedClock(20, 2)
    module_under_test.settle_claims(FakeModule(), {'nncps': losing_pair('10.20.0.10/24')}, clock=clock)
    assert clock.time == 20, 'a writer that keeps changing its loser is waited for at most wait_timeout'


def test_a_claim_another_writer_activated_during_the_last_activation_is_not_refused(monkeypatch):
    """The last round's activation found the claim changed (422): the list after it shows the policy active (its other
    writer activated it), so nothing is left to settle and the run does not refuse."""
    listed = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z')
    active = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z', parked=False)
    lists = [[listed], [active]]
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: lists.pop(0))

    def json_patch(k8s, kind, name, body, check):
        raise module_under_test.ModuleFailure('testing value failed', status=422)
    monkeypatch.setattr(kube, 'json_patch', json_patch)
    plan = {'create': [listed], 'reclaim': [], 'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    written = module_under_test.claim_addresses(FakeModule(), [], None, {}, {'nncps': []}, plan, attempts=0, clock=Clock(),
                                                jitter=lambda: 0.0)
    assert written == [] and lists == []
    assert plan['allocations'][0]['address'] == '10.20.0.10/24'


def view(item):
    """What node_nic_address's diff shows of a policy: its owned part, unparked (as _add_write plans it)."""
    desired = nn.desired_policy(*item)
    return nn.owned_view(desired, desired)


def test_the_diff_shows_a_re_allocated_claim_at_its_new_address(monkeypatch):
    """A claim lost to another writer is re-allocated: the diff's after is the new address, not the first plan's."""
    first = ('w-0', 'w-0', MAC, {4: '10.20.0.10/24'}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    second = ('w-0', 'w-0', MAC, {4: '10.20.0.11/24'}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    ours = policy('w-0', '10.20.0.10/24', '2026-12-01T20:00:01Z')
    active = policy('w-1', '10.20.0.10/24', '2026-12-01T20:00:00Z', parked=False)
    moved = policy('w-0', '10.20.0.11/24', '2026-12-01T20:00:01Z')
    lists = [[ours, active], [ours, active], [moved, active]]
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: lists.pop(0))
    monkeypatch.setattr(kube, 'json_patch', lambda k8s, kind, name, body, check: {})
    replan = {'create': [moved], 'findings': [], 'after': {'egressip-w-0': view(second)},
              'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.11/24'}]}
    monkeypatch.setattr(module_under_test.na, 'plan_nic_addresses', lambda *args, **kwargs: replan)
    plan = {'create': [ours], 'reclaim': [], 'after': {'egressip-w-0': view(first)},
            'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    module_under_test.claim_addresses(FakeModule(), [{'node': 'w-0', 'mac': MAC}], None, {4: 200}, {'nncps': []}, plan, attempts=1,
                                      clock=Clock(), jitter=lambda: 0.0)
    assert plan['after'] == {'egressip-w-0': view(second)}
    assert plan['after'] != {'egressip-w-0': view(first)}, 'the two addresses make two views'


def test_the_diff_of_a_policy_another_writer_created_first_shows_that_writers_allocation():
    planned = ('w-0', 'w-0', MAC, {4: '10.20.0.10/24'}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    kept = ('w-0', 'w-0', MAC, {4: '10.20.0.12/24'}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    theirs = policy('w-0', '10.20.0.12/24', '2026-12-01T20:00:00Z', parked=False)
    theirs['status'] = {'conditions': [{'type': 'Available', 'status': 'True'}]}
    plan = {'after': {'egressip-w-0': view(planned), 'egressip-w-1': {'metadata': {}}}}
    module_under_test.record_final_views(plan, [theirs], ['egressip-w-0'])
    assert plan['after']['egressip-w-0'] == view(kept), 'the owned part as listed: no status, the kept address'
    assert plan['after']['egressip-w-1'] == {'metadata': {}}, 'a policy not named is left as planned'


def test_the_diff_of_a_policy_another_writer_created_first_is_its_allocation_without_waiting(monkeypatch):
    """With wait=false the module reads no more after claim_addresses: the claims' last list already gives the diff the
    other writer's allocation; not activated yet, it shows as it will be once active, not with the parking selector."""
    planned = ('w-0', 'w-0', MAC, {4: '10.20.0.10/24'}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    kept = ('w-0', 'w-0', MAC, {4: '10.20.0.12/24'}, {4: '10.20.0.1'}, 200, 'egressip0', 'ens224')
    theirs = policy('w-0', '10.20.0.12/24', '2026-12-01T20:00:00Z', parked=True)
    monkeypatch.setattr(kube, 'list_objects', lambda k8s, kind: [theirs])
    plan = {'create': [], 'reclaim': [], 'taken': ['egressip-w-0'], 'after': {'egressip-w-0': view(planned)},
            'allocations': [{'node': 'w-0', 'policy': 'egressip-w-0', 'address': '10.20.0.10/24'}]}
    written = module_under_test.claim_addresses(FakeModule(), [], None, {}, {'nncps': []}, plan, attempts=0, clock=Clock(),
                                                jitter=lambda: 0.0)
    assert written == [], "another writer's claim is neither re-allocated nor activated by this run"
    assert plan['allocations'][0]['address'] == '10.20.0.12/24'
    assert plan['after']['egressip-w-0'] == view(kept), 'the diff agrees with allocations'
    assert nn.is_parked(theirs), 'the listed policy itself is left as listed'
