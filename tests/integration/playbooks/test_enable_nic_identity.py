"""enable knows its NIC by MAC (issue 13, section 2): a renamed port group moves the NIC instead of adding a second
one, and an egress vNIC removed by hand is added again in one run, the node keeping its address.

One twin for the file, the tests build on each other: enable; rename the standard port group on every host and run
enable with the new name (one NIC per VM with the same MAC, the MachineSet device renamed, verify passes); remove
worker-0's egress NIC by hand and run enable once (a new NIC, the policy follows its MAC, the address stays).
"""

import copy
import os
import sys

import pytest
import yaml

from pyVim.task import WaitForTask
from pyVmomi import vim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _vsphere_objects as vo  # noqa: E402  pylint: disable=wrong-import-position

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)
OLD, NEW = 'ocp-egress-120', 'ocp-egress-121'
RENAMED_VARS = copy.deepcopy(TWIN_VARS)
RENAMED_VARS['egressip_vsphere']['portgroup']['name'] = NEW
WORKERS = ['ocp1-worker-%d' % i for i in range(3)]
NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')
MACHINE_API = dict(group='machine.openshift.io', version='v1beta1', namespace='openshift-machine-api')

pytestmark = pytest.mark.slow


def _nics(twin, name):
    return vo.inventory_vm(twin, name)['nics']


def _egress_nics(twin):
    """{VM: [(network, mac)]} of the NICs other than the primary one."""
    return dict((name, [(nic['network'], nic['mac'].lower()) for nic in _nics(twin, name) if nic['network'] != 'VM Network'])
                for name in WORKERS)


def _policies(twin):
    """{node: (MAC, addresses annotation)} of the collection's policies."""
    items = twin.custom_objects().list_cluster_custom_object(**NNCP)['items']
    return dict((item['metadata']['annotations']['egressip.ocp/node'],
                 (item['spec']['desiredState']['interfaces'][0]['mac-address'].lower(),
                  item['metadata']['annotations']['egressip.ocp/addresses'])) for item in items
                if (item['metadata'].get('labels') or {}).get('egressip.ocp/managed-by') == 'ocp.egressip')


def _devices(obj, machineset=False):
    spec = obj['spec']['template']['spec'] if machineset else obj['spec']
    return [device['networkName'] for device in spec['providerSpec']['value']['network']['devices']]


def _machine_api(twin, plural):
    return twin.custom_objects().list_namespaced_custom_object(plural=plural, **MACHINE_API)['items']


def _rename_portgroup(twin):
    """Rename the standard port group on every host (same VLAN and vSwitch), as an administrator in vCenter would."""
    for host in vo.objects(twin, vim.HostSystem):
        spec = vim.host.PortGroup.Specification(name=NEW, vlanId=120, vswitchName='vSwitch1', policy=vim.host.NetworkPolicy())
        host.configManager.networkSystem.UpdatePortGroup(pgName=OLD, portgrp=spec)


STATE = {}


@pytest.fixture
def enabled(twin, run_playbook):
    """The cluster as the first enable left it (run once per file)."""
    if not STATE:
        run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
        assert run.rc == 0, run
        STATE.update(nics=_egress_nics(twin), policies=_policies(twin))
    assert all(len(STATE['nics'][name]) == 1 and STATE['nics'][name][0][0] == OLD for name in WORKERS), STATE
    return STATE


def test_a_renamed_port_group_moves_the_nic_and_renames_the_machineset_device(twin, run_playbook, enabled):
    _rename_portgroup(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=RENAMED_VARS, diff=True)
    assert run.rc == 0, run
    nics = _egress_nics(twin)
    for name in WORKERS:
        assert nics[name] == [(NEW, enabled['nics'][name][0][1])], (name, nics[name])  # one NIC, the same MAC
    assert _policies(twin) == enabled['policies']  # nothing to change on the nodes: same MAC, same address
    [machineset] = [item for item in _machine_api(twin, 'machinesets') if item['metadata']['name'].endswith('-worker-0')]
    assert _devices(machineset, machineset=True) == ['VM Network', NEW]
    for machine in _machine_api(twin, 'machines'):
        if machine['metadata']['name'] in WORKERS:
            assert _devices(machine) == ['VM Network', NEW], machine['metadata']['name']
    verify = run_playbook('playbooks/verify.yml', extra_vars=RENAMED_VARS)
    assert verify.rc == 0, verify


def test_a_second_run_after_the_rename_changes_nothing(twin, run_playbook, enabled):
    run = run_playbook('playbooks/enable.yml', extra_vars=RENAMED_VARS)
    assert run.rc == 0, run
    assert run.changed == 0, run


def test_an_egress_nic_removed_by_hand_is_added_again_in_one_run_and_the_node_keeps_its_address(twin, run_playbook, enabled):
    node = WORKERS[0]
    old_mac = enabled['nics'][node][0][1]
    vm = vo.find(twin, vim.VirtualMachine, node)
    nic = next(device for device in vm.config.hardware.device
               if isinstance(device, vim.vm.device.VirtualEthernetCard) and device.macAddress.lower() == old_mac)
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation='remove', device=nic)])))
    run = run_playbook('playbooks/enable.yml', extra_vars=RENAMED_VARS)
    assert run.rc == 0, run
    assert 'machine_nic_count_mismatch' not in run.stdout.split('TASK [ocp.egressip.vsphere_network')[-1], run
    [(network, new_mac)] = _egress_nics(twin)[node]
    assert network == NEW and new_mac != old_mac
    policies = _policies(twin)
    assert policies[node] == (new_mac, enabled['policies'][node][1]), policies[node]  # the new MAC, the same address
    [machine] = [item for item in _machine_api(twin, 'machines') if item['metadata']['name'] == node]
    assert _devices(machine) == ['VM Network', NEW] and len(_nics(twin, node)) == 2
    verify = run_playbook('playbooks/verify.yml', extra_vars=RENAMED_VARS)
    assert verify.rc == 0, verify
