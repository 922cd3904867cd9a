"""egress_nodes against the twin, with the full node path of the collection: a vmxnet3 NIC added in
vCenter -> node_nic_address (NMState policy) -> host-cidrs (the twin's ovnkube-node) -> the
egress-assignable label. Also: not-capable reasons, rerun cost, wait, a NIC that loses its link,
the guard on removing the label from a node hosting egress IPs, exclusive, absent, faults.

Tests run in file order and build on each other (one twin per module).
"""

import pytest

from pyVim.task import WaitForTask
from pyVmomi import vim

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import LABEL_RECORD_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn

from twin.fixture import kube_counts, kube_writes, lock_writes

import _prepare as prepare

TWIN_OPTIONS = {'workers': 4, 'carrier_loss': 'keep'}  # ignore-carrier: blackholes
W = ['ocp1-worker-%d' % i for i in range(4)]
SELECTOR = {'node-role.kubernetes.io/worker': ''}
CIDR = '10.20.0.0/24'
OWNED = {MANAGED_BY_LABEL: MANAGED_BY_VALUE}
NETWORK = {'cidr': CIDR, 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99', 'wait_sleep': 1}


@pytest.fixture(scope='module')
def macs(twin):
    return dict((node, prepare.add_nic(twin, node)) for node in W[:3])


def nics(macs, *nodes):
    return [{'node': node, 'mac': macs[node]} for node in nodes]


def args(**extra):
    base = {'selector': SELECTOR, 'cidr': CIDR, 'wait_sleep': 1}
    base.update(extra)
    return base


def labelled(twin):
    return sorted(node.metadata.name for node in twin.core_v1().list_node().items
                  if prepare.LABEL in (node.metadata.labels or {}))


def ids(result):
    return [item['id'] for item in result['findings']]


def set_connected(twin, node, mac, connected):
    """Connect or disconnect the vNIC with that MAC (the guest sees the link go down or up)."""
    vm = prepare._vm(twin, node)  # pylint: disable=protected-access
    nic = next(device for device in vm.config.hardware.device
               if isinstance(device, vim.vm.device.VirtualEthernetCard) and device.macAddress.lower() == mac.lower())
    nic.connectable.connected = connected
    nic.connectable.startConnected = connected
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='edit', device=nic)])))
    # As on a cluster, the node's NodeNetworkState reports the link change a moment later (the twin's NMState
    # simulation notices it on its next round); the modules under test read it from there.
    wanted = 'up' if connected else 'down'
    twin.wait_for(lambda: (nn.interface_by_mac(twin.custom_objects().get_cluster_custom_object(
        'nmstate.io', 'v1beta1', 'nodenetworkstates', node), mac) or {}).get('state') == wanted,
        timeout=30, what='NodeNetworkState of %s reporting the NIC %s %s' % (node, mac, wanted))


# --- refusals ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('extra, text', [
    ({'selector': {'matchExpressions': [{'key': 'a', 'operator': 'Near'}]}}, "selector {'matchExpressions'"),
    ({'cidr': '10.20.0.0'}, "cidr '10.20.0.0' has no prefix length"),
    ({'ipv6_cidr': '10.30.0.0/24'}, "ipv6_cidr '10.30.0.0/24' is not an IPv6 network"),
    ({'nodes': [{'node': W[0], 'mac': 'nope'}]}, "nodes[0].mac 'nope' is not a MAC address"),
])
def test_bad_input_is_refused_before_any_request(twin, run_module, extra, text):
    twin.reset_kube_requests()
    result = run_module('egress_nodes', args(**extra))
    assert result['_rc'] != 0 and ids(result) == ['node_network_input_invalid'], result
    assert text in result['msg'] and 'Fix: ' in result['msg']
    assert twin.kube_requests()['counts'] == {'get': 0, 'list': 0, 'create': 0, 'update': 0, 'patch': 0, 'delete': 0}


# --- the full path --------------------------------------------------------------------------------------------

def test_full_path_check_mode_then_labels(twin, run_module, macs):
    addresses = run_module('node_nic_address', dict(NETWORK, nodes=nics(macs, W[0], W[1])))
    assert addresses['_rc'] == 0, addresses
    twin.wait_for(lambda: '10.20.0.11/24' in prepare.host_cidrs(twin, W[1]) and '10.20.0.10/24' in prepare.host_cidrs(twin, W[0]),
                  timeout=30, what='host-cidrs of worker-0 and worker-1')
    twin.reset_kube_requests()
    result = run_module('egress_nodes', args(), check=True, diff=True)
    assert result['_rc'] == 0, result
    assert result['changed'] is True and kube_writes(twin) == 0 and labelled(twin) == []
    assert result['diff'] == {'before': {'egress_assignable': [], 'set_by_collection': [], 'remediated': []},
                              'after': {'egress_assignable': [W[0], W[1]], 'set_by_collection': [W[0], W[1]], 'remediated': []}}

    result = run_module('egress_nodes', args(nodes=nics(macs, W[0], W[1])))
    assert result['_rc'] == 0, result
    assert result['added'] == [W[0], W[1]] and result['capable'] == [W[0], W[1]]
    assert labelled(twin) == [W[0], W[1]]
    assert all((twin.core_v1().read_node(name).metadata.annotations or {}).get(LABEL_RECORD_ANNOTATION) == 'ocp.egressip'
               for name in W[:2]), 'the record is written with the label'
    reasons = dict((item['node'], item['reasons']) for item in result['not_capable'])
    # worker-2 has the NIC but no address yet; worker-3 has no NIC at all
    assert reasons[W[2]] == ['k8s.ovn.org/host-cidrs has no address in 10.20.0.0/24', 'no interface holds an address in 10.20.0.0/24']
    assert 'k8s.ovn.org/host-cidrs has no address in 10.20.0.0/24' in reasons[W[3]]
    assert ids(result) == ['node_not_capable', 'node_not_capable']
    assert all(item['severity'] == 'warning' for item in result['findings'])


def test_second_run_changes_nothing_with_three_lists(twin, run_module, macs):
    twin.reset_kube_requests()
    result = run_module('egress_nodes', args(nodes=nics(macs, W[0], W[1])))
    assert result['_rc'] == 0 and result['changed'] is False, result
    assert kube_counts(twin) == {'get': 0, 'list': 3, 'create': 0, 'update': 0, 'patch': 0, 'delete': 0}
    assert lock_writes(twin) == 2, 'a direct call takes and releases the cluster lock (docs/reliability.md)'


def test_wait_for_a_node_whose_address_is_on_its_way(twin, run_module, macs):
    addresses = run_module('node_nic_address', dict(NETWORK, nodes=nics(macs, W[2]), wait=False))
    assert addresses['_rc'] == 0 and addresses['changed'] is True
    result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3]), wait=True, wait_timeout=30))
    assert result['_rc'] == 0, result
    assert result['added'] == [W[2]] and labelled(twin) == W[:3]
    assert [item['node'] for item in result['not_capable']] == [W[3]]


# --- link down, guarded removal ----------------------------------------------------------------------------------

def test_removal_from_a_node_hosting_egress_ips_needs_a_replacement_or_force(twin, run_module, macs):
    prepare.create_by_hand(twin, 'payments', ['10.20.0.200', '10.20.0.201', '10.20.0.202'], labels=OWNED)
    try:
        twin.wait_for(lambda: len(prepare.assignments(twin, 'payments')) == 3, timeout=30, what='three egress IPs assigned')
        host = prepare.assignments(twin, 'payments')['10.20.0.200']
        set_connected(twin, host, macs[host], False)
        twin.reset_kube_requests()
        result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3])))
        assert result['_rc'] != 0 and 'node_hosts_egress_ips' in ids(result), result
        assert ('removing k8s.ovn.org/egress-assignable from node %s would strand egress IP 10.20.0.200 of EgressIP payments: '
                '0 capable replacement node(s) for 1 IP(s) of that object.' % host) in result['msg']
        assert kube_writes(twin) == 0 and labelled(twin) == W[:3]
        assert any('interface ens224 is down' in reason for item in result['not_capable'] for reason in item['reasons'])

        result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3]), force=True), diff=True)
        assert result['_rc'] == 0 and result['removed'] == [host], result
        assert labelled(twin) == sorted(set(W[:3]) - {host})
    finally:
        prepare.delete_by_hand(twin, 'payments')
    set_connected(twin, host, macs[host], True)
    result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3]), wait=True, wait_timeout=30))
    assert result['_rc'] == 0 and result['added'] == [host], result


def test_removal_with_a_capable_replacement_is_allowed(twin, run_module, macs):
    prepare.create_by_hand(twin, 'billing', ['10.20.0.210'], labels=OWNED)
    try:
        twin.wait_for(lambda: prepare.assignments(twin, 'billing'), timeout=30, what='10.20.0.210 assigned')
        host = prepare.assignments(twin, 'billing')['10.20.0.210']
        set_connected(twin, host, macs[host], False)
        result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3])))
        assert result['_rc'] == 0 and result['removed'] == [host], result
        twin.wait_for(lambda: prepare.assignments(twin, 'billing').get('10.20.0.210') not in (None, host), timeout=30,
                      what='10.20.0.210 to move to the replacement')
    finally:
        prepare.delete_by_hand(twin, 'billing')
    set_connected(twin, host, macs[host], True)
    assert run_module('egress_nodes', args(nodes=nics(macs, *W[:3]), wait=True, wait_timeout=30))['added'] == [host]


def test_removal_from_a_node_hosting_an_egress_ip_of_a_hand_made_object_needs_force(twin, run_module, macs):
    prepare.create_by_hand(twin, 'legacy', ['10.20.0.220'])  # no managed-by label: not this collection's
    try:
        twin.wait_for(lambda: prepare.assignments(twin, 'legacy'), timeout=30, what='10.20.0.220 assigned')
        host = prepare.assignments(twin, 'legacy')['10.20.0.220']
        set_connected(twin, host, macs[host], False)
        twin.reset_kube_requests()
        result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3])))
        assert result['_rc'] != 0 and 'node_hosts_unowned_egress_ips' in ids(result), result
        assert 'would move egress IP 10.20.0.220 of EgressIP legacy, which this collection does not own' in result['msg']
        assert kube_writes(twin) == 0 and prepare.assignments(twin, 'legacy') == {'10.20.0.220': host}
    finally:
        prepare.delete_by_hand(twin, 'legacy')
        set_connected(twin, host, macs[host], True)


# --- MachineSet templates ---------------------------------------------------------------------------------------

MACHINESETS = dict(group='machine.openshift.io', version='v1beta1', plural='machinesets', namespace='openshift-machine-api')


def machineset_labels(twin):
    items = twin.custom_objects().list_namespaced_custom_object(**MACHINESETS)['items']
    return dict((item['metadata']['name'], ((item['spec'].get('template') or {}).get('spec') or {}).get('metadata', {}).get('labels') or {})
                for item in items)


def test_machineset_template_gets_the_label(twin, run_module, macs):
    names = sorted(machineset_labels(twin))
    assert names and all(prepare.LABEL not in labels for labels in machineset_labels(twin).values())
    twin.reset_kube_requests()
    result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3]), machinesets=True), check=True, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True and kube_writes(twin) == 0, result
    assert result['diff']['after']['machinesets'] == names and result['diff']['before']['machinesets'] == []
    result = run_module('egress_nodes', args(nodes=nics(macs, *W[:3]), machinesets=True))
    assert result['_rc'] == 0 and result['machinesets_labelled'] == names, result
    assert all(labels.get(prepare.LABEL) == '' for labels in machineset_labels(twin).values())
    again = run_module('egress_nodes', args(nodes=nics(macs, *W[:3]), machinesets=True))
    assert again['changed'] is False


# --- exclusive, faults, absent -------------------------------------------------------------------------------------

def test_exclusive_decides_about_labels_outside_the_selector(twin, run_module):
    prepare.label(twin, 'ocp1-master-0', recorded=False)  # by hand
    result = run_module('egress_nodes', args(exclusive=False))
    assert result['_rc'] == 0 and result['changed'] is False and 'ocp1-master-0' in labelled(twin)
    # set by hand (no record beside it): exclusive keeps it and says so; force removes it
    result = run_module('egress_nodes', args())
    assert result['_rc'] == 0 and result['changed'] is False and result['hand_made'] == ['ocp1-master-0'], result
    assert 'egress_label_set_by_hand' in ids(result) and 'ocp1-master-0' in labelled(twin)
    result = run_module('egress_nodes', args(force=True), diff=True)
    assert result['_rc'] == 0 and result['removed'] == ['ocp1-master-0']
    assert result['diff']['before']['egress_assignable'] == ['ocp1-master-0'] + W[:3]
    assert labelled(twin) == W[:3]


def test_injected_failure_then_rerun_converges(twin, run_module):
    twin.inject_kube_fault(verb='patch', path='nodes/ocp1-worker-1', code=500, count=1)
    try:
        result = run_module('egress_nodes', args(state='absent'))
    finally:
        twin.clear_kube_faults()
    assert result['_rc'] != 0 and 'patch nodes ocp1-worker-1' in result['msg'] and 'HTTP 500' in result['msg'], result
    assert labelled(twin) == [W[1]]
    result = run_module('egress_nodes', args(state='absent'))
    assert result['_rc'] == 0 and result['removed'] == [W[1]] and labelled(twin) == []
    assert run_module('egress_nodes', args(state='absent'))['changed'] is False


def test_absent_takes_the_label_out_of_machineset_templates(twin, run_module):
    result = run_module('egress_nodes', args(state='absent', machinesets=True), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True and result['machinesets_labelled'] == [], result
    assert all(prepare.LABEL not in labels for labels in machineset_labels(twin).values())
    assert run_module('egress_nodes', args(state='absent', machinesets=True))['changed'] is False


def _patches(twin):
    return [entry['code'] for entry in twin.kube_requests()['requests'] if entry['verb'] == 'patch' and entry['path'].startswith('/api/v1/nodes/')]


def _run_with_patch_fault(twin, run_module, code):
    twin.reset_kube_requests()
    twin.inject_kube_fault(verb='patch', path='/api/v1/nodes/', code=code, count=1)
    try:
        return run_module('egress_nodes', args())
    finally:
        twin.clear_kube_faults()


def test_a_write_answered_503_is_not_repeated_but_a_throttled_one_is(twin, run_module):
    """503 may come after the write was done, so a write is never repeated on it; a 429 was refused before anything ran."""
    assert run_module('egress_nodes', args())['_rc'] == 0
    wanted = labelled(twin)
    assert wanted and run_module('egress_nodes', args(state='absent'))['_rc'] == 0 and labelled(twin) == []
    result = _run_with_patch_fault(twin, run_module, 503)
    assert result['_rc'] != 0 and 'HTTP 503' in result['msg'], result
    assert _patches(twin).count(503) == 1
    assert run_module('egress_nodes', args(state='absent'))['_rc'] == 0
    result = _run_with_patch_fault(twin, run_module, 429)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert _patches(twin).count(429) == 1 and labelled(twin) == wanted
