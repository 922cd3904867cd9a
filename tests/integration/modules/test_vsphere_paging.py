"""The collection's batched vCenter reads against a property collector that pages (twin flag -max-objects 2).

A real vCenter's PropertyCollector "policy may still limit the number of objects" of a RetrievePropertiesEx without
maxObjects; the rest comes through ContinueRetrievePropertiesEx (tests/twin/README.md, "vCenter's own checks").
Every VM, host and port group must still be read, in a number of calls that grows only with the pages.
"""

import pytest

import _vsphere_objects as vo

TWIN_OPTIONS = {'workers': 5, 'hosts': 3, 'vcsim_max_objects': 2}
PORTGROUP = 'ocp-egress-140'


def ok(result):
    assert result['_rc'] == 0 and not result.get('failed'), result.get('msg')
    return result


@pytest.fixture(scope='module')
def portgroup(twin):
    return vo.add_distributed_portgroup(twin, PORTGROUP, vlan=140, ports=16, auto_expand=True)


def test_network_info_reads_every_vm_and_host_over_pages(twin, run_module):
    names = sorted(vm['name'] for vm in twin.vcsim_state['vms'])
    twin.reset_vcsim_requests()
    result = ok(run_module('vsphere_network_info', {'datacenter': 'DC0', 'cluster': 'DC0_C0', 'vm_names': names}))
    assert sorted(vm['name'] for vm in result['vms']) == names and len(names) == 8
    assert all(len(vm['nics']) == 1 and vm['nics'][0]['network'] == 'VM Network' for vm in result['vms'])
    assert sorted(host['name'] for host in result['hosts']) == sorted(host['name'] for host in twin.inventory()['hosts'])
    counts = twin.vcsim_requests()['counts']
    assert counts.get('ContinueRetrievePropertiesEx', 0) >= 3  # 8 VMs in pages of 2: the continuation path ran


def test_vm_nic_configures_every_worker_over_pages(twin, run_module, portgroup):
    workers = sorted(vm['name'] for vm in twin.vcsim_state['vms'] if vm['role'] == 'worker')
    twin.reset_vcsim_requests()
    result = ok(run_module('vsphere_vm_nic', {'datacenter': 'DC0', 'network': PORTGROUP,
                                              'node_selector': {'node-role.kubernetes.io/worker': ''}}))
    assert sorted(vm['name'] for vm in result['vms']) == workers and len(workers) == 5
    assert all(vm['action'] == 'add' for vm in result['vms']) and result['changed'] is True
    assert twin.vcsim_requests()['counts'].get('ContinueRetrievePropertiesEx', 0) >= 2
    for vm in twin.inventory()['vms']:
        on_portgroup = [nic for nic in vm['nics'] if nic['portgroup_key'] == portgroup['key']]
        assert len(on_portgroup) == (1 if vm['name'] in workers else 0), vm
    again = ok(run_module('vsphere_vm_nic', {'datacenter': 'DC0', 'network': PORTGROUP,
                                             'node_selector': {'node-role.kubernetes.io/worker': ''}}))
    assert again['changed'] is False and sorted(vm['name'] for vm in again['vms']) == workers
