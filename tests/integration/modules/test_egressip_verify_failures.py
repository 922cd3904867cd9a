"""egressip_verify against the twin's node failures: a VM on a host that no longer has the standard port group (detected
and remediated), a node NotReady, a node unreachable, a node deleted, and the last spare gone (single point of failure).

Four hosts and three workers: one host carries no worker. vCenter refuses to vMotion a VM whose connected NIC's port
group the target host lacks (CannotAccessNetwork, tests/twin/README.md "vCenter's own checks"), so the worker moves there
while the host has the port group, and the port group is renamed on that host afterwards (docs/limitations.md says which
cases of "a VM on a host without its port group" are real). The tests share the twin and run in order.
"""

from pyVmomi import vim

from twin.fixture import vcsim_writes

import _egress_cluster as ec

TWIN_OPTIONS = {'workers': 3, 'hosts': 4, 'probe_interval': 0.5, 'random_seed': 3}


def args(twin, **extra):
    options = dict(objects=[{'name': 'payments'}], network={'cidr': ec.CIDR}, fail_on_error=False, poll_interval=0.2,
                   wire={'echo_target': ec.ECHO_TARGET}, **ec.vsphere_options(twin))
    options.update(extra)
    return options


def ids(result):
    return sorted(item['id'] for item in result['findings'])


def statuses(result):
    return dict((row['ip'], row['status']) for row in result['egress_ips'])


def bare_host(twin):
    """A host of the cluster no worker VM runs on."""
    busy = set(vm['host'] for vm in twin.inventory()['vms'] if vm['name'] in ec.workers(twin))
    return sorted(host['name'] for host in twin.inventory()['hosts'] if host['name'] not in busy)[0]


def _rename_portgroup(twin, host_name, new_name):
    """UpdatePortGroup on one host: the port group the VMs there use gets another name (an administrator's edit)."""
    spec = vim.host.PortGroup.Specification(name=new_name, vlanId=ec.PORTGROUP['vlan_id'], vswitchName=ec.PORTGROUP['switch'],
                                            policy=vim.host.NetworkPolicy())
    ec.host_object(twin, host_name).configManager.networkSystem.UpdatePortGroup(pgName=ec.PORTGROUP['name'], portgrp=spec)


def test_vm_on_a_host_whose_portgroup_was_renamed_is_a_blackhole(twin, run_module):
    bare = bare_host(twin)
    ec.add_portgroup(twin)
    ec.make_egress_cluster(twin, portgroup_hosts=False)
    victim = ec.assignments(twin)['10.20.0.200']
    ec.relocate(twin, victim, bare)  # allowed: the target host has the port group
    _rename_portgroup(twin, bare, 'ocp-egress-120-old')
    assert ec.inventory_vm(twin, victim)['host'] == bare
    result = run_module('egressip_verify', args(twin, wire={'echo_target': ec.ECHO_TARGET, 'probes': 12}))
    assert statuses(result) == {'10.20.0.200': 'blackhole', '10.20.0.201': 'ok'}
    node = next(row for row in result['nodes'] if row['name'] == victim)
    assert node['esxi_host'] == bare and node['nic']['connected'] is True and node['nic']['portgroup_on_host'] is False
    blackhole = next(item for item in result['findings'] if item['id'] == 'egressip_blackhole')
    assert 'port group ocp-egress-120 does not exist on ESXi host %s where VM %s runs now' % (bare, victim) in blackhole['message']
    assert 'egressip_wire_failed' in ids(result)  # the echo target agrees: flows through the moved VM are dropped
    assert ec.assignments(twin)['10.20.0.200'] == victim  # OVN-K did not notice


def test_remediation_moves_the_ip_off_the_moved_vm(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    home = next(vm['host'] for vm in twin.vcsim_state['vms'] if vm['name'] == victim)
    twin.reset_vcsim_requests()
    result = run_module('egressip_verify', args(twin, remediate=True))
    assert result['changed'] is True and result['remediation']['nodes'] == [victim]
    move = result['remediation']['moves'][0]
    assert move['to'] not in (None, victim) and move['to'] in move['candidates'] and move['seconds'] > 0
    assert result['summary']['ok'] is True and statuses(result) == {'10.20.0.200': 'ok', '10.20.0.201': 'ok'}
    assert all(probe['ok'] for probe in result['wire'])
    assert vcsim_writes(twin) == {}  # remediation is a node label, never a vCenter change
    # the moved VM's node is unlabelled, hosts nothing, and is no longer reported as an egress node
    assert victim not in [row['name'] for row in result['nodes']]
    # repaired: back on its host (vMotion), labelled again; it gets nothing back (no failback)
    ec.relocate(twin, victim, home)
    ec.label(twin, victim)
    again = run_module('egressip_verify', args(twin))
    assert again['summary']['ok'] is True and victim not in set(ec.assignments(twin).values())


def test_node_not_ready_moves_its_ip_and_verify_shows_the_reduced_capacity(twin, run_module):
    holder = ec.assignments(twin)['10.20.0.201']
    ec.set_ready(twin, holder, False)
    twin.wait_for(lambda: ec.assignments(twin).get('10.20.0.201') not in (None, holder), timeout=20, what='10.20.0.201 to move')
    result = run_module('egressip_verify', args(twin))
    assert statuses(result) == {'10.20.0.200': 'ok', '10.20.0.201': 'ok'} and result['summary']['ok'] is True
    row = next(item for item in result['nodes'] if item['name'] == holder)
    assert row['ready'] is False and row['egress_ips'] == []
    assert 'egressip_single_point_of_failure' in ids(result)  # two capable nodes left for two IPs
    ec.set_ready(twin, holder, True)


def test_unreachable_node_moves_its_ip_at_the_next_probe(twin, run_module):
    holder = ec.assignments(twin)['10.20.0.200']
    twin.set_reachable(holder, False)
    try:
        twin.wait_for(lambda: ec.assignments(twin).get('10.20.0.200') not in (None, holder), timeout=20, what='10.20.0.200 to move')
        result = run_module('egressip_verify', args(twin))
        assert statuses(result) == {'10.20.0.200': 'ok', '10.20.0.201': 'ok'} and result['summary']['ok'] is True
        assert all(probe['ok'] for probe in result['wire'])
    finally:
        twin.set_reachable(holder, True)


def test_deleted_node_moves_its_ip(twin, run_module):
    holder = ec.assignments(twin)['10.20.0.201']
    twin.core_v1().delete_node(holder)
    twin.wait_for(lambda: ec.assignments(twin).get('10.20.0.201') not in (None, holder), timeout=20, what='10.20.0.201 to move')
    result = run_module('egressip_verify', args(twin))
    assert statuses(result) == {'10.20.0.200': 'ok', '10.20.0.201': 'ok'}
    assert holder not in [row['name'] for row in result['nodes']]


def test_ip_left_unassigned_when_no_capable_node_remains(twin, run_module):
    for node in set(ec.assignments(twin).values()):
        ec.label(twin, node, present=False)
    twin.wait_for(lambda: ec.assignments(twin) == {}, timeout=20, what='every egress IP to be unassigned')
    result = run_module('egressip_verify', args(twin, wire=None))
    assert statuses(result) == {'10.20.0.200': 'unassigned', '10.20.0.201': 'unassigned'}
    assert ids(result) == ['egressip_unassigned', 'egressip_unassigned'] and result['summary']['ok'] is False
    failed = run_module('egressip_verify', args(twin, wire=None, fail_on_error=True))
    assert failed['_rc'] != 0 and '10.20.0.200 is not assigned to any node' in failed['msg']
