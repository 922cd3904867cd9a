"""Carrier loss on a twin whose NetworkManager removes the address (no ignore-carrier, the twin's default).

A disconnected secondary vNIC is a failover here, not a blackhole: a second after the carrier went (the twin's
LINK_DISCONNECT_DELAY, 4 s on a real NetworkManager) the address leaves NodeNetworkState and host-cidrs, and the
cluster manager moves the egress IP. egressip_plan predicts that move, egressip_verify calls the node a capacity loss
(no blackhole, nothing to remediate), the failover drill step measures the move against the prediction and observes
the behaviour, and reconnecting the vNIC brings the address back (autoconnect) without failback. The ignore-carrier
side (a blackhole) is in test_blackhole_kinds.py and test_egressip_failover.py. The tests share the twin, in order.
"""

import _egress_cluster as ec

# NodeNetworkState refreshed every second (a cluster: every minute): a refresh inside the second between a carrier loss and
# the address leaving shows the link down with its address, what ignore-carrier looks like; the drill reads that from
# every node's state, so each test waits until the node it reconnected shows its link up again (secondary_link_up)
TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 7, 'carrier_loss': 'remove', 'carrier_loss_delay': 1.0,
                'nns_refresh': 1.0}
NNS = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkstates')


def ids(result):
    return sorted(item['id'] for item in result['findings'])


def verify_args(twin, **extra):
    options = dict(objects=[{'name': 'payments'}], network=dict(ec.NETWORK), wire={'echo_target': ec.ECHO_TARGET}, fail_on_error=False,
                   poll_interval=0.2, **ec.vsphere_options(twin))
    options.update(extra)
    return options


# how long the drill watches for the address to leave host-cidrs: the twin removes it a second after the carrier went,
# but under load its NodeNetworkState refresh and node annotation come later; the watch ends as soon as it has left
OBSERVE_SECONDS = 20


def drill_args(twin, node, **extra):
    options = dict(node=node, trigger='disconnect_nic', poll_interval=0.2, wait_timeout=60, observe_seconds=OBSERVE_SECONDS,
                   **ec.vsphere_options(twin))
    del options['cluster']
    options.update(extra)
    return options


def secondary_cidrs(twin, node):
    return [entry for entry in ec.host_cidrs(twin, node) if entry.startswith('10.20.0.')]


def secondary_link_up(twin, node):
    """The node's NodeNetworkState shows its secondary interface up with its address (no link down with an address)."""
    state = twin.custom_objects().get_cluster_custom_object(name=node, **NNS)
    for interface in ((state.get('status') or {}).get('currentState') or {}).get('interfaces') or []:
        addresses = [item.get('ip', '') for item in (interface.get('ipv4') or {}).get('address') or []]
        if any(address.startswith('10.20.0.') for address in addresses):
            return interface.get('state') == 'up'
    return False


def test_plan_predicts_a_move_for_a_disconnected_nic_and_says_it_assumed_so(twin, run_module):
    ec.make_egress_cluster(twin)
    node = ec.assignments(twin)['10.20.0.200']
    result = run_module('egressip_plan', {'nodes': [node], 'trigger': 'disconnect_nic'})
    what_if = result['what_if'][0]
    assert what_if['effect'] == 'moves' and what_if['carrier_loss'] == 'remove' and what_if['blackholed'] == []
    assert what_if['moved'][0]['ip'] == '10.20.0.200' and node not in what_if['moved'][0]['candidates']
    assert result['carrier_loss'][node]['behaviour'] == 'remove' and result['carrier_loss'][node]['source'].startswith('assumed')
    assert any('assumed' in note for note in what_if['notes'])
    kept = run_module('egressip_plan', {'nodes': [node], 'trigger': 'disconnect_nic', 'carrier_loss': 'keep'})['what_if'][0]
    assert kept['effect'] == 'blackhole' and kept['blackholed'] == [{'egressip': 'payments', 'ip': '10.20.0.200'}]


def test_disconnected_nic_loses_its_address_the_ip_moves_and_verify_sees_a_capacity_loss(twin, run_module):
    node = ec.assignments(twin)['10.20.0.200']
    ec.set_nic_connected(twin, node, False)
    twin.wait_for(lambda: secondary_cidrs(twin, node) == [], timeout=30, what='host-cidrs of %s to lose the secondary address' % node)
    twin.wait_for(lambda: ec.assignments(twin).get('10.20.0.200') not in (None, node), timeout=30, what='10.20.0.200 to move')
    result = run_module('egressip_verify', verify_args(twin, remediate=True))
    assert result['_rc'] == 0 and result['changed'] is False, result  # nothing to remediate: no blackhole
    row = next(item for item in result['nodes'] if item['name'] == node)
    assert row['path'] == 'no_address' and row['carrier_loss'] == 'remove' and row['problems'] == []
    assert row['nic']['connected'] is False
    assert 'egressip_node_capacity_lost' in ids(result)
    assert not [item for item in ids(result) if 'blackhole' in item]
    assert result['summary']['blackholed'] == 0 and result['summary']['healthy'] == 2
    assert all(probe['ok'] for probe in result['wire'])  # the echo target sees the moved IP
    ec.set_nic_connected(twin, node, True)
    twin.wait_for(lambda: secondary_cidrs(twin, node) != [], timeout=30, what='autoconnect to restore the address of %s' % node)
    twin.wait_for(lambda: secondary_link_up(twin, node), timeout=30, what='NodeNetworkState of %s to show its link up' % node)
    assert ec.assignments(twin)['10.20.0.200'] != node  # no failback


def test_drill_step_measures_the_move_and_observes_the_carrier_loss(twin, run_module):
    node = ec.assignments(twin)['10.20.0.200']
    result = run_module('egressip_failover', drill_args(twin, node))
    assert result['_rc'] == 0 and result['changed'] is True, result
    carrier = result['carrier_loss']
    assert carrier['predicted'] == 'remove' and carrier['observed'] == 'remove' and 0 < carrier['observed_seconds'] < OBSERVE_SECONDS
    assert result['prediction']['effect'] == 'moves'
    move = result['moves'][0]
    assert move['from'] == node and move['to'] not in (None, node) and move['seconds'] >= carrier['observed_seconds'] - 0.5
    assert result['comparison'][0]['ok'] is True and ids(result) == []
    restored = run_module('egressip_failover', drill_args(twin, node, state='restored', observe_seconds=2))
    assert restored['changed'] is True and restored['action'] == 'reconnect_nic'  # the label was never removed
    assert secondary_cidrs(twin, node) != [] and restored['seconds'] is not None  # waited for the address to come back
    assert restored['unexpected_moves'] == [] and ec.assignments(twin)['10.20.0.200'] == move['to']
    twin.wait_for(lambda: secondary_link_up(twin, node), timeout=30, what='NodeNetworkState of %s to show its link up' % node)


def test_drill_step_told_keep_predicts_a_blackhole_then_follows_what_the_node_did(twin, run_module):
    node = ec.assignments(twin)['10.20.0.200']
    result = run_module('egressip_failover', drill_args(twin, node, carrier_loss='keep'))
    assert result['carrier_loss']['predicted'] == 'keep' and result['carrier_loss']['observed'] == 'remove'
    assert result['prediction']['effect'] == 'moves' and any('observed remove' in note for note in result['prediction']['notes'])
    assert result['moves'][0]['to'] not in (None, node) and result['comparison'][0]['ok'] is True
    run_module('egressip_failover', drill_args(twin, node, state='restored', observe_seconds=0))
