"""The vsphere_network role against the twin, from the collection's variables file: check, apply, rerun."""

import os
import sys

from twin.fixture import kube_writes, vcsim_writes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOK = '''
- name: vSphere secondary network
  hosts: localhost
  gather_facts: false
  roles:
    - role: ocp.egressip.vsphere_network
  post_tasks:
    - name: Show the MACs the role found
      ansible.builtin.debug:
        var: vsphere_network_macs
'''

VARIABLES = {
    'egressip_acknowledge_unsupported': True,
    'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                         'portgroup': {'name': 'ocp-egress-120', 'switch_type': 'distributed', 'switch': 'DSwitch1', 'vlan_id': 120}},
    'egressip_nodes': {'selector': {'node-role.kubernetes.io/worker': ''}},
}
WORKERS = ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']


def egress_nics(twin):
    key = next(pg['key'] for dvs in twin.inventory()['dvs'] for pg in dvs['portgroups'] if pg['name'] == 'ocp-egress-120')
    return dict((vm['name'], [nic for nic in vm['nics'] if nic['portgroup_key'] == key]) for vm in twin.inventory()['vms'])


def playbook(tmp_path):
    path = tmp_path / 'vsphere_network.yml'
    path.write_text(PLAYBOOK)
    return str(path)


def test_check_mode_writes_nothing(twin, run_playbook, tmp_path):
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    run = run_playbook(playbook(tmp_path), VARIABLES, check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed >= 1
    assert vcsim_writes(twin) == {} and kube_writes(twin) == 0


def test_apply_then_rerun_changes_nothing(twin, run_playbook, tmp_path):
    run = run_playbook(playbook(tmp_path), VARIABLES)
    assert run.rc == 0, run
    assert run.recap['localhost']['changed'] == 3, run
    nics = egress_nics(twin)
    assert all(len(nics[name]) == 1 for name in WORKERS)
    assert all(nics[name] == [] for name in nics if 'master' in name)
    for name in WORKERS:
        assert '"%s": "%s"' % (name, nics[name][0]['mac'].lower()) in run.stdout
    machinesets = twin.custom_objects().list_namespaced_custom_object('machine.openshift.io', 'v1beta1', 'openshift-machine-api',
                                                                      'machinesets')['items']
    assert machinesets[0]['spec']['template']['spec']['providerSpec']['value']['network']['devices'][-1] == {'networkName': 'ocp-egress-120'}
    reads.assert_rerun_changes_nothing(twin, run_playbook, playbook(tmp_path), VARIABLES)
