"""Failure domains (issue 16): an OpenShift cluster over two vSphere clusters, one failure domain each.

One twin for the file (`ctl.start(failure_domains=2, hosts=3)`): DC0_C0 and DC0_C1 with three hosts each, the node VMs
spread over them (ocp1-worker-1 in DC0_C0, ocp1-worker-0 and -2 in DC0_C1), the Infrastructure with domain-a and
domain-b, each Node labelled with its domain's zone, each Machine with its domain's workspace, one worker MachineSet
per domain. The tests build on each other: the vsphere_network role in check mode writes nothing; applied, it puts each
domain's port group on the hosts of that domain's cluster only and each worker's NIC on its own domain's port group, and
each MachineSet lists its domain's port group; a second run changes nothing; preflight (audit) passes, flags the
domain whose port group was removed by hand from one of its hosts, and refuses a failure domain name the Infrastructure
does not have; the role's absent flow (disable's) takes each domain's NICs, MachineSet devices and port group out.
"""

import copy
import os
import sys

import pytest
import yaml

from pyVmomi import vim

from twin.fixture import kube_writes, vcsim_writes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position
import _vsphere_objects as vo  # noqa: E402  pylint: disable=wrong-import-position

TWIN_OPTIONS = {'failure_domains': 2, 'hosts': 3}
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    VARIABLES = yaml.safe_load(handle)
PG_A, PG_B = 'ocp-egress-a', 'ocp-egress-b'
VARIABLES['egressip_vsphere']['portgroup']['name'] = PG_A
# domain-a takes its cluster (DC0_C0) from the Infrastructure and the top-level port group; domain-b its own port group
VARIABLES['egressip_vsphere']['failure_domains'] = [{'name': 'domain-b', 'portgroup': {'name': PG_B, 'vlan_id': 121}}]
DOMAIN_OF = {'ocp1-worker-0': 'DC0_C1', 'ocp1-worker-1': 'DC0_C0', 'ocp1-worker-2': 'DC0_C1'}
PORTGROUP_OF = {'DC0_C0': (PG_A, 120), 'DC0_C1': (PG_B, 121)}
MACHINE_API = ('machine.openshift.io', 'v1beta1', 'openshift-machine-api')
PLAYBOOK = '''
- name: vSphere secondary network over the failure domains
  hosts: localhost
  gather_facts: false
  roles:
    - role: ocp.egressip.vsphere_network
'''

pytestmark = pytest.mark.slow


def playbook(tmp_path, text=PLAYBOOK, name='vsphere_network.yml'):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def egress_nics(twin):
    """{VM: [network]} of the workers' NICs other than the primary one."""
    return dict((vm['name'], [nic['network'] for nic in vm['nics'] if nic['network'] != 'VM Network'])
                for vm in twin.inventory()['vms'] if vm['name'] in DOMAIN_OF)


def egress_portgroups(twin):
    """{host: {(name, VLAN)}} of the egress port groups."""
    return dict((host['name'], set((pg['name'], pg['vlan']) for pg in host['portgroups'] if pg['name'] in (PG_A, PG_B)))
                for host in twin.inventory()['hosts'])


def test_the_twin_spreads_the_nodes_over_two_clusters(twin):
    hosts = dict((vm['name'], vm['host']) for vm in twin.inventory()['vms'])
    assert all(hosts[name].startswith(cluster + '_') for name, cluster in DOMAIN_OF.items()), hosts
    infrastructure = twin.custom_objects().get_cluster_custom_object('config.openshift.io', 'v1', 'infrastructures', 'cluster')
    domains = infrastructure['spec']['platformSpec']['vsphere']['failureDomains']
    assert [(item['name'], item['topology']['computeCluster']) for item in domains] == [
        ('domain-a', '/DC0/host/DC0_C0'), ('domain-b', '/DC0/host/DC0_C1')]


def test_check_mode_writes_nothing(twin, run_playbook, tmp_path):
    twin.reset_vcsim_requests()
    twin.reset_kube_requests()
    run = run_playbook(playbook(tmp_path), VARIABLES, check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed >= 1, run
    assert vcsim_writes(twin) == {} and kube_writes(twin) == 0
    assert egress_nics(twin) == dict((name, []) for name in DOMAIN_OF)


def test_each_node_gets_its_nic_on_its_domains_portgroup_and_a_rerun_changes_nothing(twin, run_playbook, tmp_path):
    run = run_playbook(playbook(tmp_path), VARIABLES)
    assert run.rc == 0, run
    for host, portgroups in egress_portgroups(twin).items():
        assert portgroups == {PORTGROUP_OF[host.rsplit('_', 1)[0]]}, (host, portgroups)  # only its own domain's
    assert egress_nics(twin) == dict((name, [PORTGROUP_OF[cluster][0]]) for name, cluster in DOMAIN_OF.items())
    objects = twin.custom_objects()
    machinesets = dict((item['metadata']['name'].rsplit('-', 1)[-1], item['spec']['template']['spec']['providerSpec']['value']['network']
                        ['devices']) for item in objects.list_namespaced_custom_object(*MACHINE_API, 'machinesets')['items'])
    assert machinesets == {'0': [{'networkName': 'VM Network'}, {'networkName': PG_A}],
                           '1': [{'networkName': 'VM Network'}, {'networkName': PG_B}]}, machinesets
    for machine in objects.list_namespaced_custom_object(*MACHINE_API, 'machines')['items']:
        if machine['metadata']['name'] in DOMAIN_OF:
            devices = [item['networkName'] for item in machine['spec']['providerSpec']['value']['network']['devices']]
            assert devices == ['VM Network', PORTGROUP_OF[DOMAIN_OF[machine['metadata']['name']]][0]], machine['metadata']['name']
    reads.assert_rerun_changes_nothing(twin, run_playbook, playbook(tmp_path), VARIABLES)


def preflight(run_module, variables):
    result = run_module('preflight', {'variables': variables, 'mode': 'audit', 'fail_on_error': False})
    assert result['_rc'] == 0, result
    return result['findings']


def test_preflight_checks_every_domain_and_flags_the_one_whose_portgroup_is_missing(twin, run_module):
    found = preflight(run_module, VARIABLES)
    assert not [item for item in found if item['id'].startswith('failure_domain') or item['id'] == 'portgroup_missing'], found
    host = vo.find(twin, vim.HostSystem, 'DC0_C1_H0')  # only ocp1-master-1 runs there: no egress NIC holds the port group
    host.configManager.networkSystem.RemovePortGroup(pgName=PG_B)
    found = [item for item in preflight(run_module, VARIABLES) if item['id'] == 'failure_domain_portgroup_missing']
    assert [(item['severity'], item['objects']) for item in found] == [('error', [{'kind': 'HostSystem', 'name': 'DC0_C1_H0'}])], found
    assert found[0]['message'].startswith('Failure domain domain-b (datacenter DC0, cluster DC0_C1): Standard port group %s' % PG_B)
    unmapped = copy.deepcopy(VARIABLES)
    unmapped['egressip_vsphere']['failure_domains'] = [{'name': 'domain-c'}]
    unknown = [item for item in preflight(run_module, unmapped) if item['id'] == 'failure_domain_unknown']
    assert len(unknown) == 1 and "'domain-c'" in unknown[0]['message'] and 'domain-a, domain-b' in unknown[0]['message']


ABSENT = '''
- name: Take the vSphere secondary network out of every failure domain
  hosts: localhost
  gather_facts: false
  tasks:
    - name: vsphere_network, state absent
      ansible.builtin.include_role:
        name: ocp.egressip.vsphere_network
        tasks_from: absent
'''


def test_the_absent_flow_takes_each_domains_nics_devices_and_port_group_out(twin, run_playbook, tmp_path):
    run = run_playbook(playbook(tmp_path, ABSENT, 'absent.yml'), VARIABLES)
    assert run.rc == 0, run
    assert egress_nics(twin) == dict((name, []) for name in DOMAIN_OF)
    assert all(portgroups == set() for portgroups in egress_portgroups(twin).values()), egress_portgroups(twin)
    machinesets = twin.custom_objects().list_namespaced_custom_object(*MACHINE_API, 'machinesets')['items']
    assert all(item['spec']['template']['spec']['providerSpec']['value']['network']['devices'] == [{'networkName': 'VM Network'}]
               for item in machinesets), machinesets
