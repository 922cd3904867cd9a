"""egressip_plan against the twin, and the prediction against the twin's own cluster manager.

The twin's simulated ovnkube-cluster-manager (tests/twin/controllers/cluster_manager.py) is an
independent implementation of DOMAIN.md section 3. Two comparisons:

- through the running twin and the module, over a few random states: the plan of the objects
  about to be created, then where the twin really put them; a node failure predicted, then
  triggered;
- in process (twin.controllers.testing.FakeCluster, the same controllers over an in-memory
  store, milliseconds per state), over many random states with every failure trigger.

Every IP must land on one of its predicted candidates, or stay unassigned only where the
prediction said it may.
"""

import random
import time

import pytest

from twin.controllers.testing import FakeCluster
from twin.fixture import kube_writes

from ansible_collections.ocp.egressip.plugins.module_utils.model import placement

import _prepare as prepare

TWIN_OPTIONS = {'workers': 5, 'random_seed': 11}
POOL = ['10.20.0.%d' % host for host in range(200, 216)]


@pytest.fixture(scope='module', autouse=True)
def capable(twin):
    return prepare.make_capable(twin, prepare.workers(twin)[:4])


def plan(run_module, **extra):
    result = run_module('egressip_plan', extra)
    assert result['_rc'] == 0, result.get('msg')
    return result


def by_ip(items):
    return dict(((item['egressip'], item['ip']), item) for item in items)


def settled(twin, names, quiet=1.5, timeout=20):
    """{(object, ip): node} once the objects' status has not changed for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while True:
        current = dict(((name, ip), node) for name in names for ip, node in prepare.assignments(twin, name).items())
        marked = all((prepare.egressip(twin, name) or {}).get('metadata', {}).get('annotations', {}).get('k8s.ovn.org/egressip-mark')
                     for name in names)
        if current != last or not marked:
            last, since = current, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return current
        assert time.monotonic() < deadline, 'the twin did not settle: %s' % current
        time.sleep(0.2)


def check_inside(predicted, actual, context):
    for key, item in predicted.items():
        node = actual.get(key)
        if node is None:
            assert item['may_be_unassigned'], (context, key, item)
        else:
            assert node in item['candidates'], (context, key, item, node)


# --- the module ------------------------------------------------------------------------------------


def test_plan_is_read_only_and_costs_two_lists(twin, run_module):
    twin.reset_kube_requests()
    result = plan(run_module)
    assert result['changed'] is False and kube_writes(twin) == 0
    assert sorted(request['verb'] + ' ' + request['resource'] for request in twin.kube_requests()['requests']) == [
        'list egressips.k8s.ovn.org', 'list nodes']
    assert result['placements'] == [] and result['exact'] is True
    assert [item['node'] for item in result['egress_nodes']] == prepare.workers(twin)[:4]


def test_plan_of_new_objects_then_the_twin_places_them_inside_it(twin, run_module):
    objects = [{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201']},
               {'name': 'billing', 'egress_ips': ['10.20.0.202']}]
    predicted = by_ip(plan(run_module, objects=objects, what_if=False)['placements'])
    assert all(item['state'] == 'pending' and len(item['candidates']) == 4 for item in predicted.values())
    for entry in objects:
        prepare.create_by_hand(twin, entry['name'], entry['egress_ips'])
    actual = settled(twin, ['payments', 'billing'])
    check_inside(predicted, actual, 'fresh objects')
    result = plan(run_module)
    assert all(item['state'] == 'kept' and item['candidates'] == [actual[key]] for key, item in by_ip(result['placements']).items())


def test_what_if_unlabel_then_the_twin_moves_the_ips_inside_the_prediction(twin, run_module):
    current = settled(twin, ['payments', 'billing'])
    node = sorted(set(current.values()))[0]
    result = plan(run_module, nodes=[node])
    [what_if] = result['what_if']
    assert what_if['effect'] == 'moves' and what_if['exact']
    assert sorted((item['egressip'], item['ip']) for item in what_if['moved']) == sorted(key for key, host in current.items() if host == node)
    prepare.label(twin, node, present=False)
    after = settled(twin, ['payments', 'billing'])
    check_inside(by_ip(what_if['moved']), after, 'unlabel %s' % node)
    prepare.label(twin, node)
    assert settled(twin, ['payments', 'billing']) == after  # no failback


def test_cordon_and_disconnect_move_nothing(twin, run_module):
    current = settled(twin, ['payments', 'billing'])
    node = sorted(set(current.values()))[0]
    assert plan(run_module, nodes=[node], trigger='cordon')['what_if'][0]['moved'] == []
    blackhole = plan(run_module, nodes=[node], trigger='disconnect_nic', carrier_loss='keep')['what_if'][0]
    assert blackhole['effect'] == 'blackhole'
    assert sorted((item['egressip'], item['ip']) for item in blackhole['blackholed']) == sorted(key for key, host in current.items() if host == node)
    twin.core_v1().patch_node(node, {'spec': {'unschedulable': True}})
    time.sleep(2.5)  # more than two probe intervals
    assert settled(twin, ['payments', 'billing']) == current
    twin.core_v1().patch_node(node, {'spec': {'unschedulable': None}})


def test_single_point_of_failure_is_a_finding(twin, run_module):
    workers = prepare.workers(twin)
    for node in workers[2:4]:
        prepare.label(twin, node, present=False)
    try:
        result = plan(run_module, objects=[{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201']}], exclusive=True)
        assert [item['node'] for item in result['single_points_of_failure']] == workers[:2]
        assert [item['id'] for item in result['findings']] == ['egressip_single_point_of_failure'] * 2
        assert 'If node %s fails (unlabel), payments' % workers[0] in result['findings'][0]['message']
    finally:
        for node in workers[2:4]:
            prepare.label(twin, node)
    for name in ('payments', 'billing'):
        prepare.delete_by_hand(twin, name)


def test_unknown_node_is_refused(run_module):
    result = run_module('egressip_plan', {'nodes': ['nope']})
    assert result['_rc'] != 0 and 'nodes nope: no such node in the cluster' in result['msg']


@pytest.mark.parametrize('seed', range(5))
def test_prediction_contains_the_twins_placement_over_random_states(twin, run_module, seed):
    rng = random.Random(seed)
    workers = prepare.workers(twin)[:4]
    labelled = sorted(rng.sample(workers, rng.randint(1, 4)))
    for node in workers:
        prepare.label(twin, node, present=node in labelled)
    pool = list(POOL) + ['10.20.0.11', '10.30.0.5']  # a node address (EgressIPConflict), no network (NoMatchingNodeFound)
    objects = [{'name': 'random-%d-%d' % (seed, number), 'egress_ips': rng.sample(pool, rng.randint(1, 3))}
               for number in range(rng.randint(1, 3))]
    names = [entry['name'] for entry in objects]
    predicted = by_ip(plan(run_module, objects=objects, what_if=False)['placements'])
    for entry in objects:
        prepare.create_by_hand(twin, entry['name'], entry['egress_ips'])
    actual = settled(twin, names)
    check_inside(dict((key, item) for key, item in predicted.items() if key[0] in names), actual, 'seed %d' % seed)

    hosting = sorted(set(actual.values()) - set([None]))
    if hosting:
        node = rng.choice(hosting)
        [what_if] = plan(run_module, nodes=[node])['what_if']
        prepare.label(twin, node, present=False)
        after = settled(twin, names)
        check_inside(by_ip(what_if['moved']), after, 'seed %d, unlabel %s' % (seed, node))
    for name in names:
        prepare.delete_by_hand(twin, name)
    twin.wait_for(lambda: all(prepare.egressip(twin, name) is None for name in names), timeout=10, what='deletion')
    for node in workers:
        prepare.label(twin, node)


# --- many random states in process ---------------------------------------------------------------


def fake_state(rng):
    """A FakeCluster with random secondary networks, labels, readiness; settled."""
    cluster = FakeCluster(workers=rng.randint(3, 5), rng_seed=rng.randrange(1000))
    for index, worker in enumerate(cluster.workers()):
        chance = rng.random()
        if chance < 0.65:
            cluster.secondary(worker, '10.20.0.%d' % (11 + index))
        elif chance < 0.85:
            cluster.secondary(worker, '10.30.0.%d' % (11 + index))
    cluster.label_egress(*[worker for worker in cluster.workers() if rng.random() < 0.8])
    for worker in cluster.workers():
        if rng.random() < 0.1:
            cluster.set_ready(worker, False)
    cluster.settle()
    return cluster


def snap_of(cluster, unreachable=()):
    return placement.snapshot(cluster.store.list('nodes'), cluster.store.list('egressips.k8s.ovn.org'), unreachable=unreachable)


def actual_of(cluster):
    return dict(((obj['metadata']['name'], item['egressIP']), item['node'])
                for obj in cluster.store.list('egressips.k8s.ovn.org') for item in (obj.get('status') or {}).get('items') or [])


def random_objects(rng, prefix, count):
    pool = ['10.20.0.%d' % host for host in range(200, 208)] + ['10.30.0.%d' % host for host in range(200, 204)]
    pool += ['10.20.0.11', '10.99.0.1', '192.168.10.77']  # a node address, no network, the primary network
    return [{'name': '%s-%d' % (prefix, number), 'egress_ips': rng.sample(pool, rng.randint(1, 3))} for number in range(count)]


TRIGGERS = ('unlabel', 'not_ready', 'unreachable', 'deleted', 'subnet_gone', 'cordon')


def trigger(cluster, node, how):
    if how == 'unlabel':
        cluster.label_egress(node, present=False)
    elif how == 'not_ready':
        cluster.set_ready(node, False)
    elif how == 'unreachable':
        cluster.runner.set_reachable(node, False)
    elif how == 'deleted':
        cluster.store.delete('nodes', node)
    elif how == 'subnet_gone':
        for nic in cluster.vm(node)['nics'][1:]:
            # the interface absent and its gateway route with it (nmstate refuses a route via an absent interface)
            cluster.secondary_policy(node, nic['mac'], None, state='absent', routes=[{'destination': '0.0.0.0/0', 'state': 'absent'}])
    elif how == 'cordon':
        cluster.store.patch('nodes', node, {'spec': {'unschedulable': True}})
    cluster.settle(probe=how == 'unreachable')


@pytest.mark.parametrize('seed', range(60))
def test_prediction_contains_the_in_process_twin_placement(seed):
    rng = random.Random(20000 + seed)
    cluster = fake_state(rng)
    first = random_objects(rng, 'first', rng.randint(1, 3))
    for entry in first:
        cluster.create_egressip(entry['name'], entry['egress_ips'])
    cluster.settle()
    # a second batch arrives while the first is placed: its prediction starts from the settled state
    second = random_objects(rng, 'second', rng.randint(0, 2))
    second = [dict(entry, egress_ips=[ip for ip in entry['egress_ips'] if rng.random() < 0.8] or entry['egress_ips'][:1]) for entry in second]
    predicted = by_ip(placement.predict(placement.with_objects(snap_of(cluster), second))['placements'])
    for entry in second:
        cluster.create_egressip(entry['name'], entry['egress_ips'])
    cluster.settle()
    check_inside(predicted, actual_of(cluster), 'seed %d' % seed)


@pytest.mark.parametrize('seed', range(60))
def test_what_if_contains_the_in_process_twin_failover(seed):
    rng = random.Random(30000 + seed)
    cluster = fake_state(rng)
    for entry in random_objects(rng, 'eip', rng.randint(1, 4)):
        cluster.create_egressip(entry['name'], entry['egress_ips'])
    cluster.settle()
    snap = snap_of(cluster)
    nodes = placement.egress_nodes(snap)
    if not nodes:
        pytest.skip('seed %d: no labelled node' % seed)
    node, how = rng.choice(nodes), rng.choice(TRIGGERS)
    before = actual_of(cluster)
    prediction = placement.what_if(snap, node, how)
    trigger(cluster, node, how)
    after = actual_of(cluster)
    for item in placement.compare(prediction, {'egressips': dict(
            (obj['metadata']['name'], {'status': (obj.get('status') or {}).get('items') or []})
            for obj in cluster.store.list('egressips.k8s.ovn.org'))}):
        assert item['ok'], (seed, node, how, item)
    moved = set((item['egressip'], item['ip']) for item in prediction['moved'])
    for key, host in before.items():
        if key not in moved:
            assert after.get(key) == host, (seed, node, how, key)  # what is not predicted to move stays
