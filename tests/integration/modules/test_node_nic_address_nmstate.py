"""node_nic_address on the NMState handler of most OpenShift releases (nmstate 2.2.38, the twin's default).

nmstate before 2.2.43 does not resolve a profile name in a route's next-hop-interface: the route lands on no
interface, verification fails and the whole apply rolls back (DOMAIN.md section 8, nmstate PR #2841). These
tests reproduce that with the policy shape the collection wrote before (route via the profile name), prove the
current shape (route via the kernel name from NodeNetworkState) works, that a policy of the old shape is
repaired in place, that the module waits for NodeNetworkState to list a NIC added a moment ago (refreshed on
the handler's schedule, not instantly), and that a failing apply is surfaced with the node and nmstate's reason.
Tests run in file order on one twin.
"""

import pytest
from kubernetes.client.exceptions import ApiException

from twin.fixture import kube_writes

import _prepare as prepare

# a slow NodeNetworkState refresh, as on a cluster (a minute there): a NIC added now is listed up to 10 s later
TWIN_OPTIONS = {'workers': 4, 'nns_refresh': 10.0}
W = ['ocp1-worker-%d' % i for i in range(4)]
NETWORK = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99'}
NNCP = prepare.NNCP
NNCE = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkconfigurationenactments')
NNS = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkstates')


def args(nodes, **extra):
    return dict(NETWORK, nodes=nodes, wait_timeout=60, wait_sleep=1, **extra)


def conditions(obj):
    return dict((item['type'], item) for item in (obj.get('status') or {}).get('conditions') or [])


def enactment(twin, node, policy):
    return twin.custom_objects().get_cluster_custom_object(name='%s.%s' % (node, policy), **NNCE)


def nns(twin, node):
    """The node's NodeNetworkState with its status; the handler creates it shortly after it starts and reports the
    status in a second write (as a real one does), so wait for both."""
    def read():
        try:
            state = twin.custom_objects().get_cluster_custom_object(name=node, **NNS)
        except ApiException as error:
            if error.status != 404:
                raise
            return None
        return state if (state.get('status') or {}).get('currentState') else None
    return twin.wait_for(read, timeout=30, interval=0.2, what='the NodeNetworkState of %s with its status' % node)


def primary_mac(twin, node):
    return next(nic['mac'] for nic in prepare._inventory_vm(twin, node)['nics'] if nic['network'] == 'VM Network')  # pylint: disable=protected-access


def old_shape_policy(node, mac, address):
    """The policy the collection wrote up to this release: the route names the NetworkManager profile."""
    return {'apiVersion': 'nmstate.io/v1', 'kind': 'NodeNetworkConfigurationPolicy',
            'metadata': {'name': 'egressip-%s' % node, 'labels': {'egressip.ocp/managed-by': 'ocp.egressip'},
                         'annotations': {'egressip.ocp/node': node, 'egressip.ocp/addresses': '%s/24' % address}},
            'spec': {'nodeSelector': {'kubernetes.io/hostname': node}, 'desiredState': {
                'interfaces': [{'name': 'egressip0', 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address',
                                'mac-address': mac.upper(), 'ipv6': {'enabled': False},
                                'ipv4': {'enabled': True, 'dhcp': False, 'address': [{'ip': address, 'prefix-length': 24}]}}],
                'routes': {'config': [{'destination': '0.0.0.0/0', 'next-hop-address': '10.20.0.1', 'next-hop-interface': 'egressip0',
                                       'metric': 200, 'table-id': 254}]}}}}


@pytest.fixture(scope='module')
def macs(twin):
    return dict((node, prepare.add_nic(twin, node)) for node in W[:2])


def test_the_handler_reports_an_nmstate_release_before_the_route_fix(twin):
    assert nns(twin, W[0])['status']['handlerNmstateVersion'] == 'nmstatectl 2.2.38'


def test_the_previous_policy_shape_is_rolled_back_by_this_nmstate(twin, macs):
    """The defect: a route naming the profile of a MAC-matched NIC fails and takes the base address with it."""
    twin.custom_objects().create_cluster_custom_object(body=old_shape_policy(W[0], macs[W[0]], '10.20.0.10'), **NNCP)

    def failed():
        try:
            failing = conditions(enactment(twin, W[0], 'egressip-' + W[0])).get('Failing') or {}
        except Exception:  # pylint: disable=broad-except  # not created yet
            return None
        return failing if failing.get('status') == 'True' else None
    failing = twin.wait_for(failed, timeout=20, what='the enactment of the old-shape policy failing')
    assert 'Desired route destination: 0.0.0.0/0 next-hop-interface: egressip0' in failing['message']
    assert 'not found after apply' in failing['message']
    policy = twin.custom_objects().get_cluster_custom_object(name='egressip-' + W[0], **NNCP)
    assert conditions(policy)['Degraded']['status'] == 'True'
    # rolled back: the base address never reached the node, so OVN-K cannot place an egress IP there
    assert not any(cidr.startswith('10.20.0.') for cidr in prepare.host_cidrs(twin, W[0]))


def test_node_nic_address_repairs_the_old_shape_in_place(twin, run_module, macs):
    result = run_module('node_nic_address', args([{'node': node, 'mac': macs[node]} for node in W[:2]]), diff=True)
    assert result['_rc'] == 0, result
    assert result['updated'] == ['egressip-' + W[0]] and result['created'] == ['egressip-' + W[1]]
    before = result['diff']['before']['egressip-' + W[0]]['spec']['desiredState']['routes']['config'][0]
    after = result['diff']['after']['egressip-' + W[0]]['spec']['desiredState']['routes']['config'][0]
    assert (before['next-hop-interface'], after['next-hop-interface']) == ('egressip0', 'ens224')
    assert [item['status'] for item in result['allocations']] == ['available', 'available']
    assert [item['address'] for item in result['allocations']] == ['10.20.0.10/24', '10.20.0.11/24']  # the allocation stayed
    for node in W[:2]:
        twin.wait_for(lambda node=node: any(c.startswith('10.20.0.') for c in prepare.host_cidrs(twin, node)), timeout=20,
                      what='the base address of %s in host-cidrs' % node)
        config = nns(twin, node)['status']['currentState']['routes']['config']
        assert [(r['destination'], r['next-hop-interface'], r['metric']) for r in config] == [('0.0.0.0/0', 'ens224', 200)]


def test_a_rerun_changes_nothing(twin, run_module, macs):
    twin.reset_kube_requests()
    result = run_module('node_nic_address', args([{'node': node, 'mac': macs[node]} for node in W[:2]]))
    assert result['_rc'] == 0 and result['changed'] is False, result
    assert kube_writes(twin) == 0


def test_a_nic_added_a_moment_ago_is_waited_for_until_node_network_state_lists_it(twin, run_module, macs):
    macs[W[2]] = prepare.add_nic(twin, W[2], wait_state=False)
    listed = [item.get('mac-address', '').lower() for item in nns(twin, W[2])['status']['currentState']['interfaces']]
    assert macs[W[2]].lower() not in listed  # not refreshed yet: what a module run right after the NIC step meets
    twin.reset_kube_requests()
    result = run_module('node_nic_address', args([{'node': node, 'mac': macs[node]} for node in W[:3]]))
    assert result['_rc'] == 0, result
    assert result['created'] == ['egressip-' + W[2]]
    reads = [r for r in twin.kube_requests()['requests'] if r['resource'] == 'nodenetworkstates.nmstate.io' and r['verb'] == 'list']
    assert len(reads) >= 2  # it re-read NodeNetworkStates until the NIC showed up, then wrote
    allocation = next(item for item in result['allocations'] if item['node'] == W[2])
    assert allocation['interface'] == 'ens224' and allocation['status'] == 'available'


def test_check_mode_before_the_nic_is_listed_shows_a_placeholder_and_writes_nothing(twin, run_module, macs):
    mac = prepare.add_nic(twin, W[3], wait_state=False)
    twin.reset_kube_requests()
    result = run_module('node_nic_address', args([{'node': W[3], 'mac': mac}]), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert kube_writes(twin) == 0
    found = [item for item in result['findings'] if item['id'] == 'node_nic_not_in_state']
    assert found and found[0]['severity'] == 'info'
    route = result['diff']['after']['egressip-' + W[3]]['spec']['desiredState']['routes']['config'][0]
    assert route['next-hop-interface'] == '<kernel name of %s>' % mac.lower()
    macs[W[3]] = mac


def test_a_failing_apply_is_surfaced_with_the_node_and_nmstate_reason(twin, run_module):
    """Giving the primary NIC's MAC: nmstate's probes fail and it rolls back; the handler of this release fails at once."""
    result = run_module('node_nic_address', args([{'node': W[3], 'mac': primary_mac(twin, W[3])}]))
    assert result['_rc'] != 0 and result['changed'] is True
    assert [item['id'] for item in result['findings']] == ['node_policy_degraded']
    assert 'NodeNetworkConfigurationPolicy egressip-ocp1-worker-3 is Degraded on node ocp1-worker-3' in result['msg']
    assert 'rolling back desired state configuration' in result['msg']
    assert 'after writing policies egressip-ocp1-worker-3' in result['msg']
    again = run_module('node_nic_address', args([{'node': W[3], 'mac': primary_mac(twin, W[3])}]))
    assert again['_rc'] != 0 and again['changed'] is False


def test_release_removes_the_address_and_the_route_by_kernel_name(twin, run_module, macs):
    result = run_module('node_nic_address', {'nodes': [{'node': W[2]}], 'state': 'absent', 'wait_sleep': 1})
    assert result['_rc'] == 0, result
    assert result['deleted'] == ['egressip-' + W[2]]
    twin.wait_for(lambda: not any(c.startswith('10.20.0.') for c in prepare.host_cidrs(twin, W[2])), timeout=20,
                  what='the base address of %s gone' % W[2])
    assert nns(twin, W[2])['status']['currentState']['routes']['config'] == []
