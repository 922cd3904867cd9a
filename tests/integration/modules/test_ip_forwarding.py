"""ip_forwarding against the twin: refusals, per-interface Tuned (check mode, create, rerun, request
cost, more nodes, ownership), what the twin's Node Tuning simulation then applies, global mode and
its reversal, absent, injected faults.

Tests run in file order and build on each other (one twin per module).
"""

import pytest

from twin.controllers import tuned as twin_tuned
from twin.fixture import kube_counts, kube_writes

import _prepare as prepare

# NodeNetworkState refreshed every 10 s (a minute on a cluster): a NIC added now is listed up to 10 s later
TWIN_OPTIONS = {'workers': 3, 'nns_refresh': 10.0}
W = ['ocp1-worker-%d' % i for i in range(3)]
TUNED = dict(group='tuned.openshift.io', version='v1', plural='tuneds', namespace='openshift-cluster-node-tuning-operator')
PROFILES = dict(TUNED, plural='profiles')
OPERATOR = dict(group='operator.openshift.io', version='v1', plural='networks', name='cluster')


@pytest.fixture(scope='module')
def macs(twin):
    found = dict((node, prepare.add_nic(twin, node, wait_state=False)) for node in W[:2])
    for node, mac in found.items():
        prepare.wait_for_nns_interface(twin, node, mac)
    return found


def nics(macs, *nodes):
    return [{'node': node, 'mac': macs[node]} for node in nodes]


def ids(result):
    return [item['id'] for item in result['findings']]


def tuned_object(twin):
    items = twin.custom_objects().list_namespaced_custom_object(**TUNED)['items']
    return next((item for item in items if item['metadata']['name'] == 'egressip-forwarding'), None)


def forwarding_on(twin):
    """{node: set(links with forwarding on)} as each node's Profile reports it: the profile TuneD applied (status), or Global."""
    operator = twin.custom_objects().get_cluster_custom_object(**OPERATOR)
    on = {}
    for profile in twin.custom_objects().list_namespaced_custom_object(**PROFILES)['items']:
        node = profile['metadata']['name']
        # the profile TuneD runs (status.tunedProfile), resolved from the profiles the operator gave the node
        applied = {'metadata': {'name': 'applied', 'namespace': twin_tuned.NAMESPACE},
                   'spec': {'profile': profile['spec'].get('profile') or [],
                            'recommend': [{'profile': (profile.get('status') or {}).get('tunedProfile'), 'priority': 0}]}}
        state = twin_tuned.forwarding_by_node([applied], [{'metadata': {'name': node}}], [], operator)[node]
        on[node] = set(link for link in ('ens192', 'ens224', 'ens256') if state.is_on(link))
    return on


def eventually_off(twin, node):
    """Forwarding goes off a node some seconds after the Tuned change (TuneD applies the stock profile again)."""
    return twin.wait_for(lambda: forwarding_on(twin)[node] == set(), timeout=30, what='forwarding off on %s' % node)


def cluster_value(twin):
    operator = twin.custom_objects().get_cluster_custom_object(**OPERATOR)
    return operator['spec']['defaultNetwork']['ovnKubernetesConfig']['gatewayConfig'].get('ipForwarding')


def refused(twin, run_module, arguments, finding_id, text):
    twin.reset_kube_requests()
    result = run_module('ip_forwarding', arguments)
    assert result['_rc'] != 0 and result['failed'], result
    assert finding_id in ids(result) and text in result['msg'], result
    assert 'nothing was written' in result['msg'] and kube_writes(twin) == 0 and result['changed'] is False
    return result


# --- refusals -----------------------------------------------------------------------------------------

@pytest.mark.parametrize('entries, finding_id, text', [
    ([], 'node_network_input_invalid', 'nodes is empty with mode: per_interface'),
    ([{'node': W[0], 'mac': 'zz'}], 'node_network_input_invalid', "nodes[0].mac 'zz' is not a MAC address"),
    ([{'node': 'ocp1-worker-9', 'mac': '00:50:56:00:00:09'}], 'node_network_input_invalid', "'ocp1-worker-9' is not a Node of the cluster"),
    ([{'node': W[2], 'mac': '00:50:56:00:00:09'}], 'node_nic_not_found',
     'NodeNetworkState of node ocp1-worker-2 lists no interface with MAC 00:50:56:00:00:09, so the kernel name of the secondary NIC '
     '(needed for net.ipv4.conf.<if>.forwarding) is unknown. Waited 1 s for it (state_wait_timeout).'),
])
def test_bad_input_is_refused(twin, run_module, macs, entries, finding_id, text):
    refused(twin, run_module, {'nodes': entries, 'state_wait_timeout': 1}, finding_id, text)


def test_tuned_not_created_by_the_collection_is_not_touched(twin, run_module, macs):
    body = {'apiVersion': 'tuned.openshift.io/v1', 'kind': 'Tuned', 'metadata': {'name': 'egressip-forwarding'},
            'spec': {'profile': [{'name': 'mine', 'data': '[main]\n'}]}}
    twin.custom_objects().create_namespaced_custom_object(body=body, **TUNED)
    try:
        refused(twin, run_module, {'nodes': nics(macs, *W[:2])}, 'node_object_not_owned',
                'Tuned openshift-cluster-node-tuning-operator/egressip-forwarding exists without the label')
    finally:
        twin.custom_objects().delete_namespaced_custom_object(name='egressip-forwarding', **TUNED)


# --- per interface --------------------------------------------------------------------------------------

def test_check_mode_writes_nothing_and_shows_the_diff(twin, run_module, macs):
    twin.reset_kube_requests()
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W[:2])}, check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True and kube_writes(twin) == 0 and tuned_object(twin) is None
    assert result['current_mode'] == 'off' and result['cluster_ip_forwarding'] == 'Restricted'
    assert result['interfaces'] == [
        {'node': W[0], 'interface': 'ens224', 'forwarding_before': False, 'forwarding_after': True},
        {'node': W[1], 'interface': 'ens224', 'forwarding_before': False, 'forwarding_after': True}]
    assert result['diff']['before'] == {}
    assert 'net.ipv4.conf.ens224.forwarding=1' in result['diff']['after']['spec']['profile'][0]['data']


def test_per_interface_forwarding_on_exactly_the_secondary_nics(twin, run_module, macs):
    assert forwarding_on(twin)[W[0]] == set()
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W[:2])})
    assert result['_rc'] == 0 and result['changed'] is True, result
    created = tuned_object(twin)
    assert created['metadata']['labels'] == {'egressip.ocp/managed-by': 'ocp.egressip'}
    assert created['spec']['recommend'][0]['match'] == [{'label': 'kubernetes.io/hostname', 'value': node} for node in W[:2]]
    on = forwarding_on(twin)
    assert on[W[0]] == {'ens224'} and on[W[1]] == {'ens224'} and on[W[2]] == set()
    assert on['ocp1-master-0'] == set()


def test_second_run_changes_nothing_and_reports_the_mode(twin, run_module, macs):
    twin.reset_kube_requests()
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W[:2])}, diff=True)
    assert result['_rc'] == 0 and result['changed'] is False, result
    assert result['current_mode'] == 'per_interface'
    assert all(item['forwarding_before'] and item['forwarding_after'] for item in result['interfaces'])
    # network operator (get), nodes, node network states, tuneds, profiles (the wait: applied already): nothing per node
    assert kube_counts(twin) == {'get': 1, 'list': 4, 'create': 0, 'update': 0, 'patch': 0, 'delete': 0}  # and the cluster lock's Lease


def test_another_node_added_a_moment_ago_is_waited_for_then_patched_and_the_mode_was_partial(twin, run_module, macs):
    prepare.add_nic(twin, W[2])  # listed: its NodeNetworkState was refreshed just now, the next refresh is 10 s away
    macs[W[2]] = prepare.add_nic(twin, W[2], wait_state=False)
    state = twin.custom_objects().get_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates', W[2])
    assert macs[W[2]].lower() not in [item.get('mac-address', '').lower() for item in state['status']['currentState']['interfaces']]
    twin.reset_kube_requests()
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W)}, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    reads = [r for r in twin.kube_requests()['requests'] if r['resource'] == 'nodenetworkstates.nmstate.io' and r['verb'] == 'list']
    assert len(reads) >= 2  # it re-read NodeNetworkStates until the NIC was listed, then wrote the Tuned
    assert next(item for item in result['interfaces'] if item['node'] == W[2])['interface'] == 'ens256'
    assert result['current_mode'] == 'partial'
    assert 'net.ipv4.conf.ens256.forwarding=1' in str(result['diff']['after']['spec']['profile'])
    assert forwarding_on(twin)[W[2]] == {'ens256'}


def test_injected_failure_then_rerun_converges(twin, run_module, macs):
    twin.inject_kube_fault(verb='patch', path='tuneds/egressip-forwarding', code=500, count=1)
    try:
        result = run_module('ip_forwarding', {'nodes': nics(macs, *W[:2])})
    finally:
        twin.clear_kube_faults()
    assert result['_rc'] != 0 and 'patch tuneds.tuned.openshift.io openshift-cluster-node-tuning-operator/egressip-forwarding' in result['msg']
    assert 'HTTP 500' in result['msg']
    assert run_module('ip_forwarding', {'nodes': nics(macs, *W[:2])})['changed'] is True
    assert run_module('ip_forwarding', {'nodes': nics(macs, *W[:2])})['changed'] is False
    eventually_off(twin, W[2])


# --- global --------------------------------------------------------------------------------------------------

def test_global_mode_check_then_apply_then_rerun(twin, run_module, macs):
    twin.reset_kube_requests()
    result = run_module('ip_forwarding', {'mode': 'global'}, check=True, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True and kube_writes(twin) == 0
    assert result['diff'] == {'before': {'ipForwarding': 'Restricted'}, 'after': {'ipForwarding': 'Global'}}
    assert ids(result) == ['node_ip_forwarding_global'] and result['findings'][0]['severity'] == 'warning'
    assert cluster_value(twin) == 'Restricted'
    result = run_module('ip_forwarding', {'mode': 'global'})
    assert result['_rc'] == 0 and result['changed'] is True and result['current_mode'] == 'restricted'
    assert cluster_value(twin) == 'Global'
    assert forwarding_on(twin)[W[2]] == {'ens192', 'ens224', 'ens256'}  # every link of every node
    result = run_module('ip_forwarding', {'mode': 'global'})
    assert result['changed'] is False and result['current_mode'] == 'global'
    per_interface = run_module('ip_forwarding', {'nodes': nics(macs, *W[:2])}, check=True)
    assert per_interface['current_mode'] == 'global'


def test_global_absent_restores_restricted(twin, run_module):
    result = run_module('ip_forwarding', {'mode': 'global', 'state': 'absent'}, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True
    assert result['diff'] == {'before': {'ipForwarding': 'Global'}, 'after': {'ipForwarding': 'Restricted'}}
    assert cluster_value(twin) == 'Restricted'
    assert run_module('ip_forwarding', {'mode': 'global', 'state': 'absent'})['changed'] is False


def test_per_interface_absent_deletes_the_tuned(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('ip_forwarding', {'state': 'absent'}, check=True)
    assert result['_rc'] == 0 and result['changed'] is True and kube_writes(twin) == 0
    result = run_module('ip_forwarding', {'state': 'absent'}, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True and result['diff']['after'] == {}
    assert tuned_object(twin) is None
    eventually_off(twin, W[0])
    assert run_module('ip_forwarding', {'state': 'absent'})['changed'] is False
