"""Placement prediction (DOMAIN.md section 3): scenarios, then properties over random states.

The property tests compare `_placement` with two references written independently in
`_cluster_states.py`: an exhaustive enumeration (must be equal) and a literal simulation of
the cluster manager (must be contained). Random states come from fixed seeds (hypothesis is
not installed in the project's virtualenv), so a failure is reproducible from its seed.
"""

import copy
import json
import random

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.model import placement
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement_search

from _cluster_states import World, egressip_object, enumerate_outcomes, node_object, pending_passes, random_state, simulate

A = '10.20.0.0/24'
B = '10.30.0.0/24'


def cluster(nodes, egressips, unreachable=()):
    return placement.snapshot(nodes, egressips, unreachable=unreachable)


def workers(count, networks=(A,), **flags):
    return [node_object('w%d' % index, index, list(networks), **flags) for index in range(count)]


def by_ip(result, key='placements'):
    return dict((item['ip'], item) for item in result[key])


# --- snapshot ----------------------------------------------------------------------------------


def test_snapshot_classifies_primary_and_secondary_networks():
    snap = cluster([node_object('w0', 0, [A, B])], [])
    node = snap['nodes']['w0']
    assert node['primary'] == ['192.168.10.0/24']
    assert node['secondary'] == [A, B]
    assert '10.20.0.10' in node['addresses'] and '192.168.10.11' in node['addresses']
    assert node['labelled'] and node['ready'] and node['reachable'] and not node['cordoned']


def test_snapshot_tolerates_missing_and_malformed_annotations():
    broken = node_object('w0', 0, [A])
    broken['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = 'not json'
    bare = {'metadata': {'name': 'w1'}}
    snap = cluster([broken, bare], [])
    assert snap['nodes']['w0']['secondary'] == []
    assert snap['nodes']['w1'] == {'labelled': False, 'ready': False, 'reachable': True, 'cordoned': False,
                                   'addresses': [], 'primary': [], 'secondary': []}


def test_snapshot_ignores_link_local_host_cidrs():
    node = node_object('w0', 0, [A])
    node['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = '["192.168.10.11/24", "169.254.1.2/17", "10.20.0.10/24"]'
    assert cluster([node], [])['nodes']['w0']['secondary'] == [A]


def test_snapshot_marks_owned_objects():
    owned = egressip_object('a', ['10.20.0.200'])
    owned['metadata']['labels'] = {'egressip.ocp/managed-by': 'ocp.egressip'}
    snap = placement.snapshot([], [owned, egressip_object('b', ['10.20.0.201'])],
                              owner_label=('egressip.ocp/managed-by', 'ocp.egressip'))
    assert snap['egressips']['a']['owned'] and not snap['egressips']['b']['owned']


# --- current state -----------------------------------------------------------------------------


def test_least_loaded_nodes_are_the_candidates():
    eips = [egressip_object('old', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')]),
            egressip_object('other', ['10.20.0.202'], [('10.20.0.202', 'w0')]),
            egressip_object('new', ['10.20.0.210'])]
    result = by_ip(placement.predict(cluster(workers(3), eips)))
    assert result['10.20.0.210']['candidates'] == ['w2']
    assert result['10.20.0.210']['state'] == 'pending' and not result['10.20.0.210']['may_be_unassigned']
    assert result['10.20.0.200'] == {'egressip': 'old', 'ip': '10.20.0.200', 'node': 'w0', 'state': 'kept',
                                     'candidates': ['w0'], 'may_be_unassigned': False, 'reasons': []}


def test_ties_make_a_set_of_candidates():
    eips = [egressip_object('old', ['10.20.0.200'], [('10.20.0.200', 'w0')]), egressip_object('new', ['10.20.0.210'])]
    assert by_ip(placement.predict(cluster(workers(3), eips)))['10.20.0.210']['candidates'] == ['w1', 'w2']


def test_one_object_never_gets_two_ips_on_one_node():
    eips = [egressip_object('busy', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'w0')])]
    result = by_ip(placement.predict(cluster(workers(2), eips)))
    assert result['10.20.0.201']['candidates'] == ['w1']


def test_more_ips_than_nodes_leaves_one_unassigned():
    eips = [egressip_object('wide', ['10.20.0.200', '10.20.0.201', '10.20.0.202'])]
    result = placement.predict(cluster(workers(2), eips))
    for item in result['placements']:
        assert item['candidates'] == ['w0', 'w1'] and item['may_be_unassigned']
        assert item['reasons'] == ['UnassignedRequest']


def test_no_failback_assignments_stay_on_a_busier_node():
    eips = [egressip_object('a', ['10.20.0.200'], [('10.20.0.200', 'w0')]),
            egressip_object('b', ['10.20.0.201'], [('10.20.0.201', 'w0')])]
    result = by_ip(placement.predict(cluster(workers(3), eips)))
    assert result['10.20.0.201']['candidates'] == ['w0'] and result['10.20.0.201']['state'] == 'kept'


def test_assignment_on_an_unusable_node_is_replaced():
    nodes = workers(3)
    nodes[0]['status']['conditions'][0]['status'] = 'False'
    eips = [egressip_object('a', ['10.20.0.200'], [('10.20.0.200', 'w0')])]
    result = by_ip(placement.predict(cluster(nodes, eips, unreachable=['w1'])))
    assert result['10.20.0.200']['state'] == 'pending' and result['10.20.0.200']['candidates'] == ['w2']


def test_node_address_conflict_refuses_the_ip_and_may_abandon_the_pass():
    eips = [egressip_object('a', ['10.20.0.11', '10.20.0.200'])]  # 10.20.0.11 is w1's base address
    result = by_ip(placement.predict(cluster(workers(3), eips)))
    assert result['10.20.0.11']['candidates'] == [] and result['10.20.0.11']['reasons'] == ['EgressIPConflict']
    assert result['10.20.0.200']['candidates'] == ['w0', 'w1', 'w2']
    assert result['10.20.0.200']['may_be_unassigned'] and result['10.20.0.200']['reasons'] == ['EgressIPConflict']


def test_ip_held_by_another_object_is_refused():
    eips = [egressip_object('first', ['10.20.0.200'], [('10.20.0.200', 'w0')]), egressip_object('second', ['10.20.0.200'])]
    result = placement.predict(cluster(workers(2), eips))
    second = [item for item in result['placements'] if item['egressip'] == 'second'][0]
    assert second['candidates'] == [] and second['reasons'] == ['UnsupportedRequest']


def test_two_new_objects_with_one_ip_race_for_it():
    eips = [egressip_object('first', ['10.20.0.200']), egressip_object('second', ['10.20.0.200'])]
    for item in placement.predict(cluster(workers(2), eips))['placements']:
        assert item['candidates'] == ['w0', 'w1'] and item['reasons'] == ['UnsupportedRequest']


def test_ip_outside_every_network_has_no_matching_node():
    result = placement.predict(cluster(workers(2), [egressip_object('a', ['10.99.0.1'])]))
    assert result['placements'][0]['reasons'] == ['NoMatchingNodeFound'] and result['placements'][0]['candidates'] == []


def test_no_labelled_node_means_no_matching_node():
    result = placement.predict(cluster(workers(2, labelled=False), [egressip_object('a', ['10.20.0.200'])]))
    assert result['placements'][0]['reasons'] == ['NoMatchingNodeFound']


def test_unparsable_ip_makes_the_object_invalid():
    result = placement.predict(cluster(workers(2), [egressip_object('a', ['10.20.0.300', '10.20.0.200'])]))
    assert all(item['reasons'] == ['InvalidEgressIP'] for item in result['placements'])


def test_secondary_holders_are_preferred_over_primary_holders():
    nodes = [node_object('w0', 0, []), node_object('w1', 1, [A]), node_object('w2', 2, ['192.168.10.0/25'])]
    result = placement.predict(cluster(nodes, [egressip_object('a', ['192.168.10.100'])]))
    # w2 holds 192.168.10.0/25 as a secondary network, but its primary (br-ex) subnet contains the IP.
    assert result['placements'][0]['candidates'] == ['w0', 'w1', 'w2']
    result = placement.predict(cluster(nodes, [egressip_object('a', ['10.20.0.200'])]))
    assert result['placements'][0]['candidates'] == ['w1']


def test_longer_match_does_not_matter_for_the_cluster_manager():
    nodes = [node_object('w0', 0, ['10.20.0.0/16']), node_object('w1', 1, [A])]
    result = placement.predict(cluster(nodes, [egressip_object('a', ['10.20.0.200'])]))
    assert result['placements'][0]['candidates'] == ['w0', 'w1']


def test_egress_nodes_and_load():
    eips = [egressip_object('a', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')])]
    nodes = workers(3)
    nodes[2]['metadata']['labels'] = {}
    assert placement.predict(cluster(nodes, eips))['egress_nodes'] == [{'node': 'w0', 'load': 1}, {'node': 'w1', 'load': 1}]


def test_with_objects_keeps_status_of_ips_still_requested():
    eips = [egressip_object('a', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')]),
            egressip_object('gone', ['10.20.0.202'], [('10.20.0.202', 'w2')])]
    snap = cluster(workers(3), eips)
    after = placement.with_objects(snap, [{'name': 'a', 'egress_ips': ['10.20.0.200', '10.20.0.205']},
                                          {'name': 'new', 'egress_ips': ['10.20.0.206']}], removed=['gone'])
    assert after['egressips']['a']['status'] == [{'node': 'w0', 'egressIP': '10.20.0.200'}]
    assert 'gone' not in after['egressips'] and after['egressips']['new']['status'] == []
    assert snap['egressips']['a']['egress_ips'] == ['10.20.0.200', '10.20.0.201']  # the input is not changed
    result = by_ip(placement.predict(after))
    assert result['10.20.0.205']['candidates'] == ['w1', 'w2'] and result['10.20.0.206']['candidates'] == ['w1', 'w2']


# --- what if -----------------------------------------------------------------------------------


def settled_three_nodes():
    eips = [egressip_object('a', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')]),
            egressip_object('b', ['10.20.0.202'], [('10.20.0.202', 'w0')])]
    return cluster(workers(3), eips)


def test_what_if_unlabel_moves_the_ips_of_the_node():
    result = placement.what_if(settled_three_nodes(), 'w0', 'unlabel')
    assert result['effect'] == 'moves' and result['exact']
    moved = by_ip(result, 'moved')
    assert moved['10.20.0.200']['candidates'] == ['w2']  # w1 already hosts an IP of object a
    assert moved['10.20.0.202']['candidates'] == ['w1', 'w2']
    assert not result['unassigned']


def test_what_if_order_between_objects_widens_the_candidates():
    eips = [egressip_object('a', ['10.20.0.200'], [('10.20.0.200', 'w0')]),
            egressip_object('b', ['10.20.0.201'], [('10.20.0.201', 'w0')]),
            egressip_object('c', ['10.20.0.202'], [('10.20.0.202', 'w1')])]
    moved = by_ip(placement.what_if(cluster(workers(3), eips), 'w0'), 'moved')
    # The first object reconciled goes to w2 (load 0); the second to w1 or w2 (both load 1).
    assert moved['10.20.0.200']['candidates'] == ['w1', 'w2'] and moved['10.20.0.201']['candidates'] == ['w1', 'w2']


@pytest.mark.parametrize('trigger', ['not_ready', 'unreachable', 'power_off', 'deleted'])
def test_what_if_every_failure_trigger_moves(trigger):
    result = placement.what_if(settled_three_nodes(), 'w0', trigger)
    assert result['effect'] == 'moves' and len(result['moved']) == 2


def test_what_if_cordon_moves_nothing():
    result = placement.what_if(settled_three_nodes(), 'w0', 'cordon')
    assert result['effect'] == 'none' and result['moved'] == [] and 'nothing moves' in result['notes'][0]


def test_what_if_disconnected_nic_with_ignore_carrier_is_a_blackhole():
    result = placement.what_if(settled_three_nodes(), 'w0', 'disconnect_nic', carrier_loss='keep')
    assert result['effect'] == 'blackhole' and result['moved'] == [] and result['carrier_loss'] == 'keep'
    assert result['blackholed'] == [{'egressip': 'a', 'ip': '10.20.0.200'}, {'egressip': 'b', 'ip': '10.20.0.202'}]


def test_what_if_disconnected_nic_without_ignore_carrier_moves_like_subnet_gone_and_says_it_assumed_so():
    snap = settled_three_nodes()
    result = placement.what_if(snap, 'w0', 'disconnect_nic')
    gone = placement.what_if(snap, 'w0', 'subnet_gone')
    assert result['effect'] == 'moves' and result['blackholed'] == [] and result['carrier_loss'] == 'remove'
    assert result['moved'] == gone['moved'] and result['unassigned'] == gone['unassigned']
    assert any('assumed' in note for note in result['notes'])
    assert not any('assumed' in note for note in placement.what_if(snap, 'w0', 'disconnect_nic', carrier_loss='remove')['notes'])


def test_what_if_all_takes_a_carrier_loss_per_node_and_refuses_an_unknown_one():
    results = placement.what_if_all(settled_three_nodes(), 'disconnect_nic', nodes=['w0', 'w1'], carrier_loss={'w0': 'keep'})
    assert [(item['node'], item['effect']) for item in results] == [('w0', 'blackhole'), ('w1', 'moves')]
    try:
        placement.what_if(settled_three_nodes(), 'w0', 'disconnect_nic', carrier_loss='ignore')
    except ValueError as error:
        assert 'carrier_loss must be one of keep, remove' in str(error)
    else:
        raise AssertionError('an unknown carrier_loss was accepted')


def test_what_if_subnet_gone_keeps_primary_network_ips():
    eips = [egressip_object('sec', ['10.20.0.200'], [('10.20.0.200', 'w0')]),
            egressip_object('prim', ['192.168.10.200'], [('192.168.10.200', 'w0')])]
    result = placement.what_if(cluster(workers(2), eips), 'w0', 'subnet_gone')
    assert [item['ip'] for item in result['moved']] == ['10.20.0.200']
    assert result['moved'][0]['candidates'] == ['w1']


def test_what_if_deleted_node_no_longer_conflicts():
    eips = [egressip_object('a', ['10.20.0.200'], [('10.20.0.200', 'w0')])]
    nodes = workers(2)
    snap = cluster(nodes, eips + [egressip_object('b', ['10.20.0.11'])])  # b requests w1's base address
    assert by_ip(placement.predict(snap))['10.20.0.11']['reasons'] == ['EgressIPConflict']
    assert placement.what_if(snap, 'w1', 'deleted')['moved'] == []


def test_what_if_on_two_nodes_with_two_ips_is_a_single_point_of_failure():
    eips = [egressip_object('a', ['10.20.0.200', '10.20.0.201'], [('10.20.0.200', 'w0'), ('10.20.0.201', 'w1')])]
    result = placement.plan(cluster(workers(2), eips))
    assert [item['node'] for item in result['single_points_of_failure']] == ['w0', 'w1']
    assert result['single_points_of_failure'][0]['ips'] == [{'egressip': 'a', 'ip': '10.20.0.200', 'certain': True}]
    assert result['what_if'][0]['unassigned'][0]['reasons'] == ['UnassignedRequest']


def test_plan_with_spare_node_has_no_single_point_of_failure():
    result = placement.plan(settled_three_nodes())
    assert result['single_points_of_failure'] == [] and result['exact']
    assert [item['node'] for item in result['what_if']] == ['w0', 'w1', 'w2']


def test_what_if_places_certain_pending_ips_first_and_names_uncertain_ones():
    eips = [egressip_object('a', ['10.20.0.200'], [('10.20.0.200', 'w0')]), egressip_object('b', ['10.20.0.201'])]
    certain = placement.what_if(cluster(workers(2), eips), 'w1')
    assert by_ip(certain, 'moved')['10.20.0.201']['candidates'] == ['w0'] and certain['exact']
    uncertain = placement.what_if(cluster(workers(3), eips), 'w0')
    assert not uncertain['exact'] and 'b 10.20.0.201' in uncertain['notes'][1]


def test_what_if_refuses_unknown_trigger_and_node():
    with pytest.raises(ValueError, match='trigger must be one of'):
        placement.what_if(settled_three_nodes(), 'w0', 'explode')
    with pytest.raises(ValueError, match='node w9 is not in the snapshot'):
        placement.what_if(settled_three_nodes(), 'w9')


def test_compare_accepts_candidates_and_predicted_gaps():
    snap = settled_three_nodes()
    prediction = placement.what_if(snap, 'w0')
    after = copy.deepcopy(snap)
    after['egressips']['a']['status'] = [{'node': 'w2', 'egressIP': '10.20.0.200'}, {'node': 'w1', 'egressIP': '10.20.0.201'}]
    after['egressips']['b']['status'] = []
    checked = dict((item['ip'], item) for item in placement.compare(prediction, after))
    assert checked['10.20.0.200']['ok'] and checked['10.20.0.200']['actual'] == 'w2'
    assert not checked['10.20.0.202']['ok'] and checked['10.20.0.202']['actual'] is None


# --- observed state ----------------------------------------------------------------------------


def test_hosting_nodes_and_holds_network():
    nodes = workers(3)
    nodes[1]['metadata']['labels'] = {}
    nodes[2]['status']['conditions'][0]['status'] = 'False'
    snap = cluster(nodes, [])
    assert placement.hosting_nodes(snap, '10.20.0.200') == ['w0']
    assert placement.hosting_nodes(snap, '10.20.0.200', require_ready=False) == ['w0', 'w2']
    assert placement.holds_network(snap, 'w0', '10.20.0.200') == 'secondary'
    assert placement.holds_network(snap, 'w0', '192.168.10.50') == 'primary'
    assert placement.holds_network(snap, 'w0', '10.99.0.1') is None
    assert placement.holds_network(snap, 'w7', '10.20.0.200') is None


def test_assignment_gaps_name_each_problem():
    nodes = workers(2)
    nodes[1]['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = '["192.168.10.12/24"]'
    eips = [egressip_object('a', ['10.20.0.200', '10.20.0.201', '10.20.0.202', '10.20.0.203'],
                            [('10.20.0.200', 'w0'), ('10.20.0.201', 'w1'), ('10.20.0.202', 'gone')]),
            egressip_object('other', ['10.20.0.210'])]
    gaps = placement.assignment_gaps(cluster(nodes, eips), names=['a'], network=A)
    assert gaps == [{'egressip': 'a', 'ip': '10.20.0.201', 'node': 'w1', 'problem': 'node_lacks_network'},
                    {'egressip': 'a', 'ip': '10.20.0.202', 'node': 'gone', 'problem': 'node_missing'},
                    {'egressip': 'a', 'ip': '10.20.0.203', 'node': None, 'problem': 'unassigned'}]
    assert placement.assignment_gaps(cluster(nodes, eips[:1]), network=B)[0]['problem'] == 'node_lacks_network'


def test_assignment_gaps_with_one_cidr_per_family():
    nodes = workers(1)
    nodes[0]['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(['192.168.10.11/24', '10.20.0.11/24', 'fd00:20::b/64'])
    eips = [egressip_object('a', ['10.20.0.200', 'fd00:20::200'], [('10.20.0.200', 'w0'), ('fd00:20::200', 'w0')])]
    assert placement.assignment_gaps(cluster(nodes, eips), network=['10.20.0.0/24', 'fd00:20::/64']) == []
    assert placement.assignment_gaps(cluster(nodes, eips), network='10.20.0.0/24') == [
        {'egressip': 'a', 'ip': 'fd00:20::200', 'node': 'w0', 'problem': 'node_lacks_network'}]


# --- properties over random states -------------------------------------------------------------


def tokens(item):
    return set(item['candidates']) | set('!' + reason for reason in item['reasons'])


@pytest.mark.parametrize('seed', range(300))
def test_prediction_equals_exhaustive_enumeration(seed):
    rng = random.Random(seed)
    nodes, eips, unreachable = random_state(rng)
    world = World(nodes, eips, unreachable)
    kept = world.valid()
    expected = enumerate_outcomes(world, kept, pending_passes(world, kept))
    result = placement.predict(cluster(nodes, eips, unreachable))
    assert result['exact']
    for item in result['placements']:
        key = (item['egressip'], item['ip'])
        if key in kept:
            assert item['state'] == 'kept' and item['candidates'] == [kept[key]], seed
        else:
            assert tokens(item) == expected.get(key, set()), (seed, key)
            assert item['may_be_unassigned'] == (any(t.startswith('!') for t in tokens(item)) or not item['candidates'])


@pytest.mark.parametrize('seed', range(200))
def test_simulated_cluster_manager_stays_inside_the_prediction(seed):
    rng = random.Random(1000 + seed)
    nodes, eips, unreachable = random_state(rng, max_nodes=6, max_objects=4)
    world = World(nodes, eips, unreachable)
    kept = world.valid()
    result = placement.predict(cluster(nodes, eips, unreachable))
    for run in range(20):
        outcome = simulate(world, kept, pending_passes(world, kept), random.Random(seed * 100 + run))
        for item in result['placements']:
            node = outcome[(item['egressip'], item['ip'])]
            assert node in item['candidates'] if node else item['may_be_unassigned'], (seed, run, item, node)


def settled_random_state(rng):
    """A random state after the cluster manager settled it; IPs it could not place are dropped."""
    nodes, eips, unreachable = random_state(rng, max_nodes=6, max_objects=4, odd_ips=False)
    world = World(nodes, eips, unreachable)
    outcome = simulate(world, world.valid(), pending_passes(world, world.valid()), rng)
    settled = []
    for item in eips:
        name = item['metadata']['name']
        placed = [(ip, outcome[(name, ip)]) for ip in item['spec']['egressIPs'] if outcome.get((name, ip))]
        if placed:
            settled.append(egressip_object(name, [ip for ip, _node in placed], placed))
    return nodes, settled, unreachable


@pytest.mark.parametrize('seed', range(150))
def test_what_if_equals_exhaustive_enumeration(seed):
    rng = random.Random(5000 + seed)
    nodes, eips, unreachable = settled_random_state(rng)
    snap = cluster(nodes, eips, unreachable)
    for trigger in ('unlabel', 'deleted', 'subnet_gone'):
        for node in placement.egress_nodes(snap):
            result = placement.what_if(snap, node, trigger)
            kept_before = World(nodes, eips, unreachable).valid()
            after = World(nodes, eips, unreachable, failed=node, trigger=trigger)
            still = after.valid()
            kept = dict((item, host) for item, host in kept_before.items() if host != node or still.get(item) == host)
            passes = {}
            for (name, ip), host in kept_before.items():
                if host == node and (name, ip) not in kept:
                    passes.setdefault(name, []).append(ip)
            expected = enumerate_outcomes(after, kept, passes)
            assert result['exact']
            assert sorted((item['egressip'], item['ip']) for item in result['moved']) == sorted(expected), (seed, node, trigger)
            for item in result['moved']:
                assert tokens(item) == expected[(item['egressip'], item['ip'])], (seed, node, trigger, item)


@pytest.mark.parametrize('seed', range(100))
def test_bounds_used_beyond_the_budget_contain_the_exact_result(seed):
    rng = random.Random(9000 + seed)
    nodes, eips, unreachable = random_state(rng, max_nodes=6, max_objects=4)
    snap = cluster(nodes, eips, unreachable)
    full = placement.predict(snap)
    exact = by_ip_key(full)
    bounded = placement.predict(snap, budget=0)
    assert not bounded['exact'] or bounded == full  # nothing left to search
    for item in bounded['placements']:
        reference = exact[(item['egressip'], item['ip'])]
        assert set(reference['candidates']) <= set(item['candidates']), (seed, item, reference)
        assert item['may_be_unassigned'] or not reference['may_be_unassigned'], (seed, item, reference)


def by_ip_key(result):
    return dict(((item['egressip'], item['ip']), item) for item in result['placements'])


def test_large_cluster_falls_back_to_bounds_quickly():
    nodes = [node_object('w%03d' % index, index % 200, ['10.20.0.0/16']) for index in range(300)]
    eips = [egressip_object('o%03d' % number, ['10.20.%d.%d' % (1 + number // 100, 1 + (2 * number) % 200),
                                               '10.20.%d.%d' % (1 + number // 100, 2 + (2 * number) % 200)])
            for number in range(100)]
    result = placement.predict(cluster(nodes, eips))
    assert not result['exact']
    assert all(len(item['candidates']) == 300 and not item['may_be_unassigned'] for item in result['placements'])


def test_symmetric_closure_swaps_the_representative_with_each_peer():
    outcomes = {('x', '1'): {'w0'}, ('y', '2'): {'w1', '!UnassignedRequest'}, ('z', '3'): {'w5'}}
    closed = placement_search._symmetric(outcomes, 'w0', ['w0', 'w1', 'w2'])  # pylint: disable=protected-access
    assert closed[('x', '1')] == {'w0', 'w1', 'w2'}
    assert closed[('y', '2')] == {'w0', 'w1', '!UnassignedRequest'}
    assert closed[('z', '3')] == {'w5'}
