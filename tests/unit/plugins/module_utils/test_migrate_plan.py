"""Migrate discovery (pure): each discovered value, the adoption overrides, the findings, stability after adoption."""

import json

import netaddr
import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate as _migrate
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_facts as _migrate_facts
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_forwarding as _migrate_forwarding
from ansible_collections.ocp.egressip.plugins.module_utils.reports import migrate as _migrate_report

import _hand_made_snapshots as hm  # pylint: disable=wrong-import-order


def ids(result):
    return [item['id'] for item in result['findings']]


def by_id(result, finding_id):
    return [item for item in result['findings'] if item['id'] == finding_id]


# --- the whole discovery ---------------------------------------------------------------------------

def test_hand_made_setup_is_described_exactly():
    result = _migrate.discover(hm.hand_made(), {}, True)
    assert result['summary']['ok'] and result['summary']['complete']
    assert result['variables'] == {
        'egressip_acknowledge_unsupported': True,
        'egressip_vsphere': {'datacenter': 'DC0', 'cluster': 'DC0_C0',
                             'portgroup': {'name': 'egress-vlan120', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120}},
        'egressip_network': {'cidr': '10.30.0.0/24', 'gateway': '10.30.0.1', 'node_address_range': '10.30.0.11-10.30.0.13',
                             'route_metric': 150, 'ip_forwarding': 'per_interface'},
        'egressip_nodes': {'selector': {'egress.example.com/gateway': 'true'}},
        'egressip_objects': [
            {'name': 'payments', 'egress_ips': ['10.30.0.200', '10.30.0.201'], 'namespace_selector': {'matchLabels': {'team': 'payments'}}},
            {'name': 'reports', 'egress_ips': ['10.30.0.210'], 'namespace_selector': {'matchLabels': {'team': 'reports'}},
             'pod_selector': {'matchLabels': {'app': 'reports'}}},
        ],
    }
    assert result['overrides'] == {'egressips_adopt': True, 'egress_nodes_adopt': True, 'node_network_interface_name': 'ens224',
                                   'node_network_replace_hand_made': False}
    assert set(result['override_reasons']) == set(result['overrides'])
    assert 'ocp1-worker-0, ocp1-worker-1, ocp1-worker-2' in result['override_reasons']['node_network_replace_hand_made']
    every_node = sorted(item['metadata']['name'] for item in hm.hand_made()['nodes'])
    assert result['networks'] == [{'network': 'VM Network', 'primary': True, 'nodes': every_node},
                                  {'network': 'egress-vlan120', 'primary': False, 'nodes': hm.EGRESS_NODES}]


def test_nodes_table_ties_address_interface_mac_and_vm_nic():
    result = _migrate.discover(hm.hand_made(), {}, True)
    rows = dict((row['node'], row) for row in result['nodes'])
    assert sorted(rows) == hm.EGRESS_NODES
    row = rows['ocp1-worker-2']
    assert (row['address'], row['interface'], row['mac'], row['network'], row['adapter']) == (
        '10.30.0.13/24', 'ens224', hm.egress_mac('ocp1-worker-2'), 'egress-vlan120', 'vmxnet3')
    assert row['policies'] == ['ocp1-worker-2-egress'] and row['capable'] and not row['egress_assignable']
    assert rows['ocp1-worker-0']['egress_ips'] == ['egressip-legacy 192.168.10.250', 'payments 10.30.0.200']
    assert rows['ocp1-worker-0']['forwarding'] == 'Tuned egress-forwarding/egress-forwarding'


def test_findings_name_what_was_made_by_hand_and_what_enable_changes():
    result = _migrate.discover(hm.hand_made(), {}, True)
    assert {'migrate_policy_duplicate', 'migrate_forwarding_by_hand', 'migrate_egressip_sdn_converted', 'migrate_adoption_plan',
            'primary_egressips_present'} <= set(ids(result))
    plan = ' '.join(result['adoption_plan'])
    assert 'labels ocp1-worker-2' in plan
    assert 'creates NMState policy egressip-ocp1-worker-0 for ocp1-worker-0 (same address 10.30.0.11/24)' in plan
    assert 'appends port group egress-vlan120 to the devices of MachineSet(s) ocp1-worker' in plan
    assert 'adopts EgressIP object(s) payments, reports' in plan
    objects = dict((row['name'], row) for row in result['egressips'])
    assert objects['egressip-legacy']['action'] == 'left alone (primary network)'
    assert objects['egressip-legacy']['sdn_converted_namespace'] == 'legacy'
    assert objects['payments']['action'] == 'adopt'


def test_variables_stay_the_same_after_adoption():
    before = _migrate.discover(hm.hand_made(), {}, True)
    after = _migrate.discover(hm.adopted(), {}, True)
    assert after['variables'] == before['variables']
    assert after['overrides'] == before['overrides']
    assert after['adoption_plan'] == []
    assert 'migrate_forwarding_by_hand' not in ids(after)
    assert 'migrate_policy_duplicate' in ids(after), 'the hand-made policies are still there'


def test_duplicate_names_the_opt_in_variable():
    finding = by_id(_migrate.discover(hm.hand_made(), {}, True), 'migrate_policy_duplicate')[0]
    assert 'ocp1-worker-0 (ocp1-worker-0-egress)' in finding['message']
    assert 'node_network_replace_hand_made: true' in finding['remedy']


def test_variables_after_the_hand_made_policies_were_replaced():
    # enable with node_network_replace_hand_made: true deleted the hand-made policies: only the opt-in goes away,
    # the profile name is read from the collection's policies so enable does not rename it
    before = _migrate.discover(hm.hand_made(), {}, True)
    snap = hm.adopted()
    snap['nncps'] = [item for item in snap['nncps'] if item['metadata']['name'].startswith('egressip-')]
    after = _migrate.discover(snap, {}, True)
    assert after['variables'] == before['variables']
    expected = dict(before['overrides'])
    expected.pop('node_network_replace_hand_made')
    assert after['overrides'] == expected
    assert 'migrate_policy_duplicate' not in ids(after) and after['adoption_plan'] == []


def test_report_is_deterministic_and_has_no_one_run_facts():
    result = _migrate.discover(hm.adopted(), {}, True)
    result['comparison'] = {'ok': True, 'moved': [], 'unassigned': [], 'removed': [], 'dropped_addresses': [], 'nodes_gone': [],
                            'newly_assigned': [{'egressip': 'x', 'ip': '1.2.3.4', 'to': 'n'}], 'labels_added': ['n']}
    data = _migrate_report.report_data(result)
    assert 'newly_assigned' not in data['adoption_check'] and 'labels_added' not in data['adoption_check']
    assert _migrate_report.render_markdown(result) == _migrate_report.render_markdown(json.loads(json.dumps(result)))
    text = _migrate_report.render_markdown(result)
    for heading in ('## Adoption check', '## Discovered settings', '## Egress nodes', '## EgressIP objects', '## Findings'):
        assert heading in text
    assert 'No egress IP moved' in text


# --- refusals and choices ---------------------------------------------------------------------------

def test_labelled_node_that_lost_its_nic_and_hosts_ips_is_an_error():
    snap = hm.hand_made()
    state = next(item for item in snap['nns'] if item['metadata']['name'] == 'ocp1-worker-1')
    state['status']['currentState']['interfaces'][1]['state'] = 'down'
    result = _migrate.discover(snap, {}, True)
    found = by_id(result, 'migrate_label_would_be_removed')
    assert found and 'ocp1-worker-1' in found[0]['message'] and 'payments 10.30.0.201' in found[0]['message']
    assert not result['summary']['ok']


def test_name_of_the_collection_policy_taken_by_hand_is_an_error():
    snap = hm.hand_made()
    snap['nncps'][0]['metadata']['name'] = 'egressip-ocp1-worker-0'
    result = _migrate.discover(snap, {}, True)
    assert [item['objects'][0]['name'] for item in by_id(result, 'migrate_object_name_taken')] == ['egressip-ocp1-worker-0']


def test_hand_made_forwarding_with_other_tuning_stays_external():
    snap = hm.hand_made()
    snap['tuneds'][1] = hm.tuned(data=hm.FORWARDING_ONLY + 'vm.swappiness=10\n')
    result = _migrate.discover(snap, {}, True)
    assert result['variables']['egressip_network']['ip_forwarding'] == 'external'
    assert 'also tune other things' in by_id(result, 'migrate_forwarding_by_hand')[0]['message']


def test_global_forwarding_is_kept_global():
    snap = hm.hand_made()
    snap['tuneds'] = snap['tuneds'][:1]
    snap['network_operator']['spec']['defaultNetwork']['ovnKubernetesConfig']['gatewayConfig']['ipForwarding'] = 'Global'
    result = _migrate.discover(snap, {}, True)
    assert result['variables']['egressip_network']['ip_forwarding'] == 'global'
    assert 'migrate_forwarding_by_hand' not in ids(result)


def test_hand_labelled_egress_nodes_are_handed_over_by_the_next_enable():
    # ocp1-worker-0 and -1 carry the label without egress_nodes' record: enable adopts them instead of leaving them unmanaged
    result = _migrate.discover(hm.hand_made(), {}, True)
    assert result['overrides']['egress_nodes_adopt'] is True
    assert 'a label set by hand is handed over' in result['override_reasons']['egress_nodes_adopt']
    after = _migrate.discover(hm.adopted(), {}, True)  # every egress node labelled, with the record
    assert after['override_reasons'] == result['override_reasons'], 'the variables file stays the same after the adoption'
    [plan] = [item for item in result['adoption_plan'] if item.startswith('hands over')]
    assert 'ocp1-worker-0, ocp1-worker-1' in plan and 'ocp1-worker-2' not in plan


def test_no_hand_over_without_a_labelled_egress_node():
    snap = hm.hand_made()
    for item in snap['nodes']:
        item['metadata']['labels'].pop(hm.ASSIGNABLE, None)
    result = _migrate.discover(snap, {}, True)
    assert 'egress_nodes_adopt' not in result['overrides']
    assert not [item for item in result['adoption_plan'] if item.startswith('hands over')]


def test_labelled_primary_egress_node_keeps_its_label():
    snap = hm.hand_made()
    hm.node_by_name(snap, 'ocp1-worker-3')['metadata']['labels'][hm.ASSIGNABLE] = ''
    result = _migrate.discover(snap, {}, True)
    assert result['overrides']['egress_nodes_exclusive'] is False
    assert 'ocp1-worker-3' in by_id(result, 'migrate_labelled_outside_selection')[0]['message']


def test_nic_without_address_widens_the_range_over_free_addresses():
    snap = hm.hand_made()
    worker3 = hm.node_by_name(snap, 'ocp1-worker-3')
    worker3['metadata']['labels'][hm.NODE_LABEL] = 'true'
    snap['vsphere']['vms'][6]['nics'].append(hm.nic(30, hm.PORTGROUP, mac='00:50:56:aa:00:03'))
    result = _migrate.discover(snap, {}, True)
    assert result['variables']['egressip_network']['node_address_range'] == '10.30.0.11-10.30.0.14'
    assert 'migrate_address_range_extended' in ids(result) and 'migrate_node_incomplete' in ids(result)
    assert [row['node'] for row in result['nodes'] if row['address'] is None] == ['ocp1-worker-3']


def test_no_secondary_network_stops_discovery():
    result = _migrate.discover(_without_secondary_addresses(), {}, True)
    assert result['variables'] is None
    assert ids(result) == ['migrate_no_secondary_network']


def _without_secondary_addresses():
    snap = hm.hand_made()
    for item in snap['nodes']:
        item['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(
            [entry for entry in json.loads(item['metadata']['annotations']['k8s.ovn.org/host-cidrs']) if entry.startswith('192.168.10.')])
    return snap


def test_hints_win_over_discovery():
    result = _migrate.discover(hm.hand_made(), {'gateway': '10.30.0.254', 'node_address_range': '10.30.0.10-10.30.0.99'}, False)
    network = result['variables']['egressip_network']
    assert (network['gateway'], network['node_address_range']) == ('10.30.0.254', '10.30.0.10-10.30.0.99')
    assert result['variables']['egressip_acknowledge_unsupported'] is False
    assert 'support_not_acknowledged' in ids(result)


def test_unknown_vcenter_target_is_an_error():
    snap = hm.hand_made()
    snap['infrastructure']['spec']['platformSpec']['vsphere']['failureDomains'] = []
    result = _migrate.discover(snap, {}, True)
    assert ids(result)[0] == 'migrate_vsphere_target_unknown' and result['variables'] is None


# --- the pure pieces ---------------------------------------------------------------------------------

def test_vsphere_target_from_failure_domains_and_hints():
    infrastructure = {'spec': {'platformSpec': {'vsphere': {'failureDomains': [
        {'topology': {'datacenter': 'DC1', 'computeCluster': '/DC1/host/C1'}},
        {'topology': {'datacenter': 'DC1', 'computeCluster': '/DC1/host/C2'}}]}}}}
    assert _migrate_facts.vsphere_target(infrastructure, {})[2][0]['id'] == 'migrate_vsphere_target_unknown'
    assert _migrate_facts.vsphere_target(infrastructure, {'cluster': 'C2'})[:2] == ('DC1', 'C2')
    assert _migrate_facts.vsphere_target({}, {'datacenter': 'X', 'cluster': 'Y'}) == ('X', 'Y', [])


def test_cidr_is_the_subnet_holding_the_egress_ips():
    snap = hm.hand_made()
    worker3 = hm.node_by_name(snap, 'ocp1-worker-3')
    worker3['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(['192.168.10.17/24', '172.16.5.3/24'])
    cidr, findings = _migrate_facts.choose_cidr(snap['nodes'], snap['egressips'], None)
    assert (cidr, findings) == ('10.30.0.0/24', [])
    cidr, findings = _migrate_facts.choose_cidr(snap['nodes'], [], None)
    assert cidr is None and findings[0]['id'] == 'migrate_network_ambiguous'


@pytest.mark.parametrize('bases, blockers, need, expected', [
    (['10.30.0.11', '10.30.0.13'], [], 0, '10.30.0.11-10.30.0.13'),
    (['10.30.0.11', '10.30.0.13'], [], 1, '10.30.0.11-10.30.0.13'),                      # .12 is free inside
    (['10.30.0.11', '10.30.0.12'], ['10.30.0.13'], 1, '10.30.0.10-10.30.0.12'),          # upward blocked by an egress IP
    (['10.30.0.11'], [], 2, '10.30.0.11-10.30.0.13'),
    (['10.30.0.11', '10.30.0.20'], ['10.30.0.15'], 0, None),                             # an egress IP inside
])
def test_address_range(bases, blockers, need, expected):
    addresses = [netaddr.IPAddress(item) for item in bases]
    text, _extended, findings = _migrate_facts.address_range('10.30.0.0/24', addresses, [netaddr.IPAddress(item) for item in blockers],
                                                             addresses, need)
    assert text == expected
    assert bool(findings) == (expected is None)


def test_selector_prefers_a_role_label_then_a_custom_one_then_hostnames():
    snap = hm.hand_made()
    workers = ['ocp1-worker-%d' % index for index in range(4)]
    assert _migrate_facts.exact_selector(snap['nodes'], workers) == ({'node-role.kubernetes.io/worker': ''}, False)
    assert _migrate_facts.exact_selector(snap['nodes'], hm.EGRESS_NODES) == ({hm.NODE_LABEL: 'true'}, False)
    selector, by_hostname = _migrate_facts.exact_selector(snap['nodes'], ['ocp1-worker-0', 'ocp1-worker-3'])
    assert by_hostname and selector == {'matchExpressions': [
        {'key': 'kubernetes.io/hostname', 'operator': 'In', 'values': ['ocp1-worker-0', 'ocp1-worker-3']}]}


def test_effective_tuned_profile_follows_priority_and_labels():
    snap = hm.hand_made()
    worker0 = hm.node_by_name(snap, 'ocp1-worker-0')
    worker3 = hm.node_by_name(snap, 'ocp1-worker-3')
    assert _migrate_forwarding.effective_profile(worker0, snap['tuneds'])[1] == 'egress-forwarding'
    assert _migrate_forwarding.effective_profile(worker3, snap['tuneds'])[1] == 'openshift-node'
    sysctls, other, includes = _migrate_forwarding.profile_effect('egress-forwarding', {'egress-forwarding': hm.FORWARDING_ONLY})
    assert _migrate_forwarding.forwards(sysctls, 'ens224') and not other and includes == ['openshift-node']
    assert not _migrate_forwarding.forwards(sysctls, 'ens256')


def test_sdn_converted_objects_are_recognised_by_name_and_selector():
    snap = hm.hand_made()
    legacy = snap['egressips'][2]
    assert _migrate_facts.sdn_converted_namespace(legacy) == 'legacy'
    legacy['metadata']['name'] = 'egressip-other'
    assert _migrate_facts.sdn_converted_namespace(legacy) is None
    assert _migrate_facts.sdn_converted_namespace(snap['egressips'][0]) is None


def test_mixed_network_object_is_left_alone():
    snap = hm.hand_made()
    snap['egressips'][1]['spec']['egressIPs'].append('192.168.10.251')
    result = _migrate.discover(snap, {}, True)
    assert [entry['name'] for entry in result['variables']['egressip_objects']] == ['payments']
    assert 'reports' in by_id(result, 'migrate_egressip_not_adoptable')[0]['message']
