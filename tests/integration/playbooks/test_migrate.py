"""playbooks/migrate.yml end to end on a twin configured by hand (_by_hand.py: pyVmomi and the kubernetes client only).

Discover (check mode, then for real) -> the variables file and the report; adopt in check mode (nothing written),
then for real: enable runs with the discovered variables, and not one egress IP moves and no node address is dropped;
a rerun and enable with the variables file change nothing; the adoption check fails loudly on a move; extra variables
that would shadow the discovered ones are refused before any write; opting in to node_network_replace_hand_made in the file
deletes the hand-made NMState policies (check mode first), moves nothing, and migrate then writes the same file without it.
"""

import copy
import json
import os
import sys

import pytest
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _by_hand as bh  # noqa: E402  pylint: disable=wrong-import-order,wrong-import-position
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

TWIN_OPTIONS = {'workers': 4}
pytestmark = pytest.mark.slow
MANAGED = {'egressip.ocp/managed-by': 'ocp.egressip'}

# The variables file of the cluster _by_hand made: its port group, network and node label (tests/unit's
# test_migrate_plan.py has the same discovery as literals), the two EgressIPs on the secondary subnet (egressip-legacy is
# on the primary network), and what enable is told to adopt.
EXPECTED_VARIABLES = {
    'egressip_acknowledge_unsupported': True,
    'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                         'portgroup': {'name': bh.PORTGROUP, 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': bh.VLAN}},
    'egressip_network': {'cidr': bh.CIDR, 'gateway': bh.GATEWAY, 'route_metric': bh.METRIC, 'ip_forwarding': 'per_interface',
                         'node_address_range': '%s-%s' % (bh.ADDRESSES[bh.EGRESS_NODES[0]], bh.ADDRESSES[bh.EGRESS_NODES[-1]])},
    'egressip_nodes': {'selector': {bh.NODE_LABEL: 'true'}},
    'egressip_objects': [
        {'name': 'payments', 'egress_ips': ['10.30.0.200', '10.30.0.201'], 'namespace_selector': {'matchLabels': {'team': 'payments'}}},
        {'name': 'reports', 'egress_ips': ['10.30.0.210'], 'namespace_selector': {'matchLabels': {'team': 'reports'}},
         'pod_selector': {'matchLabels': {'app': 'reports'}}},
    ],
    'egressips_adopt': True,
    'egress_nodes_adopt': True,  # workers 0 and 1 were labelled by hand: enable hands their labels over
    'node_network_interface_name': 'ens224',
    'node_network_replace_hand_made': False,
}


hand_made, out = bh.module_fixtures('migrate')


def test_discovery_in_check_mode_writes_nothing(twin, hand_made, run_playbook, out):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out), check=True, diff=True)
    assert run.rc == 0, run
    reads.assert_nothing_written(twin)
    assert not (out / 'egressip-variables.yml').exists() and not (out / 'migrate.json').exists()
    assert bh.assignments(twin) == hand_made['assignments']


def test_discovery_writes_the_variables_file_and_the_report(twin, hand_made, run_playbook, out):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out))
    assert run.rc == 0, run
    reads.assert_nothing_written(twin)
    assert yaml.safe_load((out / 'egressip-variables.yml').read_text()) == EXPECTED_VARIABLES
    report = json.loads((out / 'migrate.json').read_text())
    found = set(item['id'] for item in report['findings'])
    assert {'migrate_policy_duplicate', 'migrate_forwarding_by_hand', 'migrate_egressip_sdn_converted', 'migrate_adoption_plan',
            'primary_egressips_present'} <= found
    assert report['summary']['ok'] and 'adoption_check' not in report
    assert 'labels ocp1-worker-2 with k8s.ovn.org/egress-assignable' in report['adoption_plan']
    assert any(item.startswith('hands over the hand-made k8s.ovn.org/egress-assignable label of ocp1-worker-0, ocp1-worker-1')
               for item in report['adoption_plan']), report['adoption_plan']
    assert '# - egress_nodes_adopt: egress nodes carry the egress-assignable label: a label set by hand is handed over' in (
        out / 'egressip-variables.yml').read_text()
    assert '## What enable changes' in (out / 'migrate.md').read_text()
    assert bh.assignments(twin) == hand_made['assignments']
    reads.assert_report_names_the_cluster(twin, report, (out / 'migrate.md').read_text())


def test_extra_variables_that_shadow_the_discovered_ones_are_refused(twin, hand_made, run_playbook, out):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=[bh.migrate_vars(out, migrate_adopt=True),
                                                            {'egressip_network': {'cidr': '10.30.0.0/24'}}])
    assert run.rc != 0, run
    assert 'egressip_network differ from what was discovered' in run.stdout, run
    reads.assert_nothing_written(twin)


def test_adoption_in_check_mode_writes_nothing(twin, hand_made, run_playbook, out):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out, migrate_adopt=True), check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed > 0, run
    reads.assert_nothing_written(twin)
    assert bh.assignments(twin) == hand_made['assignments']


def test_adoption_moves_no_egress_ip_and_drops_no_address(twin, hand_made, run_playbook, out):
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out, migrate_adopt=True))
    assert run.rc == 0, run
    assert run.changed > 0, run
    assert bh.assignments(twin) == hand_made['assignments']
    after = bh.all_host_cidrs(twin)
    for node, addresses in hand_made['host_cidrs'].items():
        assert set(addresses) <= set(after[node]), node
    nodes = dict((node.metadata.name, node.metadata.labels) for node in twin.core_v1().list_node().items)
    assert [name for name in sorted(nodes) if bh.ASSIGNABLE in nodes[name]] == bh.EGRESS_NODES
    records = dict((node.metadata.name, (node.metadata.annotations or {}).get('egressip.ocp/egress-assignable'))
                   for node in twin.core_v1().list_node().items)
    assert [name for name in sorted(records) if records[name] == 'ocp.egressip'] == bh.EGRESS_NODES, 'the hand-set labels were handed over'
    policies = dict((item['metadata']['name'], item) for item in twin.custom_objects().list_cluster_custom_object(**bh.NNCP)['items'])
    for node in bh.EGRESS_NODES:
        assert policies['egressip-%s' % node]['metadata']['labels'] == MANAGED
        assert policies['egressip-%s' % node]['spec']['desiredState']['interfaces'][0]['name'] == 'ens224'
        assert 'labels' not in policies['%s-egress' % node]['metadata'], 'hand-made policies are left as they are'
    egressips = dict((item['metadata']['name'], item) for item in twin.custom_objects().list_cluster_custom_object(**bh.EGRESSIPS)['items'])
    for name in ('payments', 'reports'):
        assert egressips[name]['metadata']['labels'] == MANAGED
        assert egressips[name]['spec'] == bh.OBJECTS[name]
    assert not (egressips['egressip-legacy']['metadata'].get('labels') or {})
    machineset = twin.custom_objects().list_namespaced_custom_object('machine.openshift.io', 'v1beta1', 'openshift-machine-api',
                                                                     'machinesets')['items'][0]
    assert machineset['spec']['template']['spec']['providerSpec']['value']['network']['devices'][-1] == {'networkName': bh.PORTGROUP}
    report = json.loads((out / 'migrate.json').read_text())
    assert report['adoption_check']['ok'] and report['summary']['ok']
    assert 'No egress IP moved and no node address was dropped.' in (out / 'migrate.md').read_text()
    assert 'label added: ocp1-worker-2' in run.stdout, run


def test_rerun_changes_nothing(twin, hand_made, run_playbook, out):
    bh.adoption_rerun(twin, run_playbook, out, hand_made)


def test_enable_with_the_variables_file_changes_nothing(twin, hand_made, run_playbook, out):
    reads.reset_requests(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars='@%s' % (out / 'egressip-variables.yml'))
    assert run.rc == 0, run
    assert run.changed == 0, run
    reads.assert_nothing_written(twin)
    assert bh.assignments(twin) == hand_made['assignments']


def test_adoption_check_fails_loudly_when_an_egress_ip_moved(twin, hand_made, run_module, run_playbook, tmp_path):
    record = run_module('egressip_discover', {'mode': 'record'})['record']
    doctored = copy.deepcopy(record)
    row = next(item for item in doctored['egress_ips'] if item['ip'] == '10.30.0.200')
    row['node'] = 'ocp1-worker-3'
    playbook = tmp_path / 'check.yml'
    playbook.write_text('- hosts: localhost\n  gather_facts: false\n  tasks:\n'
                        '    - ansible.builtin.include_role: {name: ocp.egressip.migrate, tasks_from: check}\n')
    reads.reset_requests(twin)
    run = run_playbook(str(playbook), extra_vars=bh.migrate_vars(tmp_path, migrate_baseline=doctored))
    assert run.rc != 0, run
    assert 'ADOPTION MOVED EGRESS TRAFFIC' in run.stdout and 'lifecycle_egress_ip_moved' in run.stdout, run
    assert 'payments 10.30.0.200 from ocp1-worker-3 to' in run.stdout, run
    assert json.loads((tmp_path / 'migrate.json').read_text())['adoption_check']['ok'] is False
    reads.assert_nothing_written(twin)


def test_opting_in_replaces_the_hand_made_policies_and_moves_nothing(twin, hand_made, run_playbook, out):
    written = (out / 'egressip-variables.yml').read_text()
    assert '# - node_network_replace_hand_made: hand-made NMState policies configure the secondary NIC of' in written
    opted_in = out / 'egressip-variables-replace.yml'
    opted_in.write_text(written.replace('node_network_replace_hand_made: false', 'node_network_replace_hand_made: true'))
    assert yaml.safe_load(opted_in.read_text())['node_network_replace_hand_made'] is True
    cidrs = bh.all_host_cidrs(twin)
    hand_made_names = ['%s-egress' % node for node in bh.EGRESS_NODES]

    def policies():
        return dict((item['metadata']['name'], item) for item in twin.custom_objects().list_cluster_custom_object(**bh.NNCP)['items'])

    reads.reset_requests(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars='@%s' % opted_in, check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed > 0, run
    reads.assert_nothing_written(twin)
    assert set(hand_made_names) <= set(policies())
    run = run_playbook('playbooks/enable.yml', extra_vars='@%s' % opted_in)
    assert run.rc == 0, run
    assert run.changed > 0, run
    now = policies()
    assert not set(hand_made_names) & set(now), 'the exact duplicates are deleted'
    assert all(now['egressip-%s' % node]['metadata']['labels'] == MANAGED for node in bh.EGRESS_NODES)
    assert bh.assignments(twin) == hand_made['assignments']
    assert bh.all_host_cidrs(twin) == cidrs
    reads.reset_requests(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars='@%s' % opted_in)
    assert run.rc == 0 and run.changed == 0, run
    reads.assert_nothing_written(twin)
    run = run_playbook('playbooks/migrate.yml', extra_vars=bh.migrate_vars(out))
    assert run.rc == 0, run
    expected = dict(EXPECTED_VARIABLES)
    expected.pop('node_network_replace_hand_made')
    assert yaml.safe_load((out / 'egressip-variables.yml').read_text()) == expected
    assert 'migrate_policy_duplicate' not in set(item['id'] for item in json.loads((out / 'migrate.json').read_text())['findings'])
    assert bh.assignments(twin) == hand_made['assignments']
