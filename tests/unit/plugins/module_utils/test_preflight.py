"""Preflight guardrails: each finding on a snapshot that triggers it and on a close one that does not.

The base snapshot mirrors the twin (3 control-plane + 3 worker VMs on three ESXi hosts, primary
192.168.10.0/24, OpenShift 4.16 with OVN-Kubernetes, Machine API for the workers, NMState) and
the variables of examples/twin-cluster.yml, with Infrastructure nodeNetworking pinned: in plan
mode it yields info findings only.
"""

import copy
import functools
import ipaddress
import json
import operator

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.core import catalogue as _catalogue
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_cluster
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_egress

from _preflight_snapshots import (  # pylint: disable=wrong-import-order
    EGRESS_LABEL,
    HOSTS,
    NS,
    base_snapshot,
    configured_snapshot,
    egressip,
    machine,
    machineset,
    nic,
    node,
    uuid,
    vm,
)


def findings_of(snap, mode='plan'):
    return preflight.run_checks(snap, mode)


def by_id(snap, finding_id, mode='plan'):
    return [item for item in findings_of(snap, mode) if item['id'] == finding_id]


def worker(snap, index):
    return snap['nodes'][3 + index]


# --- the base snapshots themselves -----------------------------------------------------------

def test_base_snapshot_plan_has_no_error_or_warning():
    findings = findings_of(base_snapshot())
    assert [item for item in findings if item['severity'] != 'info'] == []
    assert set(item['id'] for item in findings) == {'support_acknowledged', 'node_ip_forwarding_off', 'portgroup_missing',
                                                    'machineset_missing_secondary_device'}


def test_configured_snapshot_audit_is_clean_but_for_the_support_notice():
    findings = findings_of(configured_snapshot(), 'audit')
    assert [(item['id'], item['severity']) for item in findings] == [('support_acknowledged', 'info')]


def test_findings_are_sorted_errors_first_and_carry_the_catalogue_shape():
    snap = base_snapshot()
    snap['config']['acknowledge_unsupported'] = False
    snap['network_operator']['spec']['defaultNetwork']['ovnKubernetesConfig']['egressIPConfig']['reachabilityTotalTimeoutSeconds'] = 0
    findings = findings_of(snap)
    severities = [item['severity'] for item in findings]
    assert severities == sorted(severities, key=lambda severity: {'error': 0, 'warning': 1, 'info': 2}[severity])
    for item in findings:
        assert set(item) == {'id', 'severity', 'message', 'remedy', 'docs', 'objects'}
        assert item['docs'] == 'docs/runbook.md#' + item['id']
        assert item['id'] in _catalogue.CATALOGUE


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError):
        preflight.run_checks(base_snapshot(), 'later')


def test_nothing_requested_gives_only_cluster_level_findings():
    snap = base_snapshot()
    snap['config'] = {}
    assert findings_of(snap) == []


# --- one trigger and one close non-trigger per finding ----------------------------------------

def _set(path, value):
    def mutate(snap):
        functools.reduce(operator.getitem, path[:-1], snap)[path[-1]] = value
    return mutate


def _unreadable(snap):
    snap['unreadable'] = {'pods': 'HTTP 403 Forbidden'}


def _platform(value):
    return _set(('infrastructure', 'status', 'platformStatus', 'type'), value)


def _network_type(value):
    def mutate(snap):
        snap['network_config']['status']['networkType'] = value
        snap['network_config']['spec']['networkType'] = value
    return mutate


def _version(value):
    return _set(('cluster_version', 'status', 'desired', 'version'), value)


def _acknowledge(value):
    return _set(('config', 'acknowledge_unsupported'), value)


def _node_networking(value):
    return _set(('infrastructure', 'spec', 'platformSpec', 'vsphere', 'nodeNetworking'), value)


def _policy_with_address(ip):
    def mutate(snap):
        snap['nncps'] = [{'metadata': {'name': 'hand-made'}, 'spec': {'desiredState': {'interfaces': [
            {'name': 'ens224', 'type': 'ethernet', 'ipv4': {'enabled': True, 'address': [{'ip': ip, 'prefix-length': 24}]}}]}}}]
    return mutate


def _no_machines(snap):
    snap['machines'] = []
    snap['machinesets'] = []


def _machineset_devices(names):
    def mutate(snap):
        snap['machinesets'] = [machineset([{'networkName': name} for name in names])]
    return mutate


def _vm_extra_nic(snap, network='ocp-egress-120'):
    snap['vsphere']['vms'][3]['nics'].append(nic(20, network))


def _vm_extra_nic_elsewhere(snap):
    _vm_extra_nic(snap, 'VM Network 2')


def _vm_nic_count_equal(snap):
    _vm_extra_nic(snap)
    snap['machines'][0]['spec']['providerSpec']['value']['network']['devices'].append({'networkName': 'ocp-egress-120'})


def _no_vsphere(snap):
    snap['vsphere'] = None


def _vsphere_not_found(snap):
    snap['vsphere'] = {'datacenter': 'DC0', 'cluster': None, 'not_found': "vSphere cluster 'DC0_C9' not found in datacenter DC0"}


def _provider_id(value):
    return _set(('nodes', 3, 'spec', 'providerID'), value)


def _switch(value):
    return _set(('config', 'vsphere', 'portgroup', 'switch'), value)


def _portgroup_on_hosts(vlans):
    def mutate(snap):
        for item, vlan in zip(snap['vsphere']['hosts'], vlans):
            if vlan is not None:
                item['standard_portgroups'].append({'name': 'ocp-egress-120', 'vswitch': 'vSwitch1', 'vlan_id': vlan})
    return mutate


def _distributed(switch='DSwitch1', members=None, vlan=None, backing=None):
    def mutate(snap):
        snap['config']['vsphere']['portgroup'] = {'name': 'ocp-egress-120', 'switch_type': 'distributed', 'switch': switch,
                                                  'vlan_id': 120}
        dvs = snap['vsphere']['distributed_switches'][0]
        if members is not None:
            dvs['hosts'] = members
        if vlan is not None:
            dvs['portgroups'].append({'name': 'ocp-egress-120', 'key': 'dvportgroup-9', 'moid': 'dvportgroup-9',
                                      'vlan_type': 'vlan', 'vlan_id': vlan, 'backing_type': backing})
    return mutate


def _opaque(name, accept=False):
    def mutate(snap):
        snap['vsphere']['opaque_networks'] = [{'name': name, 'type': 'nsx.LogicalSwitch'}]
        snap['config']['vsphere']['accept_untested_nsx'] = accept
    return mutate


def _cidr(cidr, gateway, address_range):
    def mutate(snap):
        snap['config']['network'].update(cidr=cidr, gateway=gateway, node_address_range=address_range)
        snap['config']['objects'] = []
    return mutate


IPV6_PART = {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::99'}


def _ipv6_part(ips):
    """egressip_network with an IPv6 part and IPv6 egress IPs, on the base (IPv4-only) cluster."""
    def mutate(snap):
        snap['config']['network']['ipv6'] = dict(IPV6_PART)
        snap['config']['objects'][0]['egress_ips'] = list(snap['config']['objects'][0]['egress_ips'][:1]) + list(ips)
    return mutate


def _dual_stack_cluster(ips):
    """The same on a cluster whose Network config lists an IPv6 cluster network too."""
    def mutate(snap):
        _ipv6_part(ips)(snap)
        for source in ('spec', 'status'):
            networks = (snap['network_config'].get(source) or {}).get('clusterNetwork')
            if networks is not None:
                networks.append({'cidr': 'fd01::/48', 'hostPrefix': 64})
    return mutate


def _reachability(seconds):
    return _set(('network_operator', 'spec', 'defaultNetwork', 'ovnKubernetesConfig', 'egressIPConfig',
                 'reachabilityTotalTimeoutSeconds'), seconds)


def _selector(selector):
    return _set(('config', 'nodes', 'selector'), selector)


def _egress_ips(ips):
    return _set(('config', 'objects', 0, 'egress_ips'), ips)


def _udn_namespace(label):
    def mutate(snap):
        labels = {'team': 'payments'}
        if label:
            labels['k8s.ovn.org/primary-user-defined-network'] = ''
        snap['namespaces'][1]['metadata']['labels'] = labels
    return mutate


def _host_network_pod(namespace, pod_selector=None):
    def mutate(snap):
        snap['pods'].append({'metadata': {'name': 'agent-x', 'namespace': namespace, 'labels': {'app': 'agent'}},
                             'spec': {'hostNetwork': True}})
        if pod_selector is not None:
            snap['config']['objects'][0]['pod_selector'] = pod_selector
    return mutate


def _existing_egressip(ips, status=()):
    def mutate(snap):
        snap['egressips'] = [egressip('legacy', ips, status)]
    return mutate


def _label_workers(snap):
    for index in range(3):
        worker(snap, index)['metadata']['labels'][EGRESS_LABEL] = ''


def _both(*mutations):
    def mutate(snap):
        for mutation in mutations:
            mutation(snap)
    return mutate


CASES = [
    # (finding id, severity expected, trigger, close non-trigger, mode)
    ('preflight_read_incomplete', 'warning', _unreadable, lambda snap: None, 'plan'),
    ('platform_not_vsphere', 'error', _platform('AWS'), _platform('VSphere'), 'plan'),
    ('platform_network_type_not_ovn_kubernetes', 'error', _network_type('OpenShiftSDN'), _network_type('OVNKubernetes'), 'plan'),
    ('platform_version_unsupported', 'error', _version('4.13.20'), _version('4.14.0'), 'plan'),
    ('support_not_acknowledged', 'error', _acknowledge(False), _acknowledge(True), 'plan'),
    ('support_acknowledged', 'info', _acknowledge(True), _acknowledge(False), 'plan'),
    ('infrastructure_node_networking_not_pinned', 'warning', _node_networking({}),
     _node_networking({'internal': {'excludeNetworkSubnetCidr': ['10.20.0.0/16']}, 'external': {'network': 'VM Network'}}), 'plan'),
    ('nmstate_not_installed', 'error', _set(('nncps',), None), _set(('nncps',), []), 'plan'),
    ('egress_ip_in_nmstate_policy', 'error', _policy_with_address('10.20.0.200'), _policy_with_address('10.20.0.11'), 'plan'),
    ('machine_api_absent', 'info', _no_machines, lambda snap: None, 'plan'),
    ('machineset_missing_secondary_device', 'warning', lambda snap: None,
     _machineset_devices(['VM Network', '/DC0/network/ocp-egress-120']), 'audit'),
    ('machine_nic_count_mismatch', 'error', _vm_extra_nic_elsewhere, _vm_nic_count_equal, 'plan'),
    ('vsphere_not_checked', 'info', _no_vsphere, lambda snap: None, 'plan'),
    ('vsphere_cluster_not_found', 'error', _vsphere_not_found, lambda snap: None, 'plan'),
    ('vsphere_node_vm_not_found', 'error', _provider_id('vsphere://42100000-0000-0000-0000-999999999999'), _provider_id(
        'vsphere://%s' % uuid(3).upper()), 'plan'),
    ('switch_missing', 'error', _switch('vSwitch9'), _switch('vSwitch1'), 'plan'),
    ('portgroup_missing', 'error', _portgroup_on_hosts([120, 120, None]), _portgroup_on_hosts([120, 120, 120]), 'audit'),
    ('portgroup_vlan_mismatch', 'error', _portgroup_on_hosts([120, 130, 120]), _portgroup_on_hosts([120, 120, 120]), 'plan'),
    ('nsx_backed_network', 'error', _opaque('ocp-egress-120'), _opaque('nsx-other-segment'), 'plan'),
    ('secondary_cidr_overlaps_cluster_network', 'error', _cidr('172.30.8.0/24', '172.30.8.1', '172.30.8.10-172.30.8.99'),
     _cidr('172.31.8.0/24', '172.31.8.1', '172.31.8.10-172.31.8.99'), 'plan'),
    ('secondary_cidr_not_global_unicast', 'error', _cidr('169.254.20.0/24', '169.254.20.1', '169.254.20.10-169.254.20.99'),
     _cidr('10.20.0.0/24', '10.20.0.1', '10.20.0.10-10.20.0.99'), 'plan'),
    ('secondary_family_not_in_cluster', 'error', _ipv6_part(['fd00:20::200']), _dual_stack_cluster(['fd00:20::200']), 'plan'),
    ('egress_reachability_check_disabled', 'warning', _reachability(0), _reachability(5), 'plan'),
    ('egress_nodes_none_selected', 'error', _selector({'node-role.kubernetes.io/egress': ''}),
     _selector({'matchExpressions': [{'key': 'node-role.kubernetes.io/worker', 'operator': 'Exists'}]}), 'plan'),
    ('egress_nodes_capacity_insufficient', 'error', _egress_ips(['10.20.0.200', '10.20.0.201', '10.20.0.202']),
     _egress_ips(['10.20.0.200', '10.20.0.201']), 'plan'),
    ('namespace_primary_udn', 'error', _udn_namespace(True), _udn_namespace(False), 'plan'),
    ('host_network_pods_selected', 'warning', _host_network_pod('payments'),
     _host_network_pod('payments', {'matchLabels': {'app': 'api'}}), 'plan'),
    ('primary_egressips_present', 'info', _existing_egressip(['192.168.10.200'], [('192.168.10.200', 'ocp1-master-0')]),
     _existing_egressip(['10.99.0.5']), 'plan'),
    ('primary_egressips_affected_by_labels', 'warning', _existing_egressip(['192.168.10.200']),
     _both(_existing_egressip(['192.168.10.200']), _label_workers), 'plan'),
    ('variables_unknown_key', 'error', _set(('config', 'variables'), {'egressip_objcts': []}),
     _set(('config', 'variables'), {'egressip_objects': []}), 'plan'),
    ('variables_invalid', 'error', _set(('config', 'network', 'route_metric'), 2 ** 40),
     _set(('config', 'network', 'route_metric'), 4294967295), 'plan'),
    ('egress_nodes_selector_empty', 'error', _selector({}), _selector({'node-role.kubernetes.io/worker': ''}), 'plan'),
]


@pytest.mark.parametrize('finding_id,severity,trigger,other,mode', CASES, ids=[case[0] for case in CASES])
def test_finding_triggered(finding_id, severity, trigger, other, mode):
    snap = base_snapshot()
    trigger(snap)
    found = by_id(snap, finding_id, mode)
    assert found, '%s not reported: %s' % (finding_id, [item['id'] for item in findings_of(snap, mode)])
    assert found[0]['severity'] == severity
    assert found[0]['message'] and found[0]['remedy']


@pytest.mark.parametrize('finding_id,severity,trigger,other,mode', CASES, ids=[case[0] for case in CASES])
def test_finding_not_triggered(finding_id, severity, trigger, other, mode):
    snap = base_snapshot()
    other(snap)
    assert by_id(snap, finding_id, mode) == []


def test_every_preflight_id_has_a_case():
    assert set(_catalogue.PLATFORM_CHECKS) <= set(case[0] for case in CASES)


# --- details per check ------------------------------------------------------------------------

def test_version_that_cannot_be_read_is_a_warning():
    snap = base_snapshot()
    snap['cluster_version'] = {'metadata': {'name': 'version'}, 'status': {}}
    assert [item['severity'] for item in by_id(snap, 'platform_version_unsupported')] == ['warning']


def test_version_from_history_when_desired_is_missing():
    snap = {'cluster_version': {'status': {'history': [{'state': 'Partial', 'version': '4.17.1'},
                                                       {'state': 'Completed', 'version': '4.16.9'}]}}}
    assert preflight_cluster.cluster_version(snap) == '4.16.9'


def test_acknowledgement_is_not_asked_when_nothing_is_requested():
    snap = base_snapshot()
    snap['config'] = {'acknowledge_unsupported': False}
    assert by_id(snap, 'support_not_acknowledged') == []


def test_acknowledgement_message_says_plainly_outside_red_hat_support():
    snap = base_snapshot()
    snap['config']['acknowledge_unsupported'] = False
    message = by_id(snap, 'support_not_acknowledged')[0]['message']
    assert 'outside Red Hat support' in message and 'bare-metal' in message


def test_forwarding_plan_is_info_audit_is_error_global_is_fine():
    snap = base_snapshot()
    assert [item['severity'] for item in by_id(snap, 'node_ip_forwarding_off')] == ['info']
    snap = configured_snapshot()
    snap['tuneds'] = []
    assert [item['severity'] for item in by_id(snap, 'node_ip_forwarding_off', 'audit')] == ['error']
    snap['network_operator']['spec']['defaultNetwork']['ovnKubernetesConfig']['gatewayConfig']['ipForwarding'] = 'Global'
    assert by_id(snap, 'node_ip_forwarding_off', 'audit') == []


def test_forwarding_external_or_other_tuned_rules_cannot_be_confirmed():
    snap = configured_snapshot()
    snap['tuneds'] = []
    snap['config']['network']['ip_forwarding'] = 'external'
    assert [item['severity'] for item in by_id(snap, 'node_ip_forwarding_off', 'audit')] == ['warning']
    snap = configured_snapshot()
    snap['tuneds'] = [{'metadata': {'name': 'custom'}, 'spec': {
        'profile': [{'name': 'fwd', 'data': '[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'}],
        'recommend': [{'profile': 'fwd', 'match': [{'label': 'node-role.kubernetes.io/worker'}]}]}}]
    found = by_id(snap, 'node_ip_forwarding_off', 'audit')
    assert [item['severity'] for item in found] == ['warning'] and 'custom/fwd' in found[0]['message']


def test_forwarding_on_one_node_missing_is_named():
    snap = configured_snapshot()
    snap['tuneds'][0]['spec']['recommend'][0]['match'].pop()
    found = by_id(snap, 'node_ip_forwarding_off', 'audit')
    assert found and found[0]['objects'] == [{'kind': 'Node', 'name': 'ocp1-worker-2'}]


def test_node_networking_selecting_the_secondary_subnet_is_an_error():
    snap = base_snapshot()
    snap['infrastructure']['spec']['platformSpec']['vsphere']['nodeNetworking']['internal'] = {'networkSubnetCidr': ['10.0.0.0/8']}
    found = by_id(snap, 'infrastructure_node_networking_not_pinned')
    assert [item['severity'] for item in found] == ['error'] and 'internal' in found[0]['message']
    snap['infrastructure']['spec']['platformSpec']['vsphere']['nodeNetworking']['internal'] = {'network': 'ocp-egress-120'}
    assert [item['severity'] for item in by_id(snap, 'infrastructure_node_networking_not_pinned')] == ['error']


def test_node_networking_remedy_names_the_primary_subnet():
    snap = base_snapshot()
    snap['infrastructure']['spec']['platformSpec']['vsphere']['nodeNetworking'] = {'internal': {'networkSubnetCidr': ['192.168.10.0/24']}}
    found = by_id(snap, 'infrastructure_node_networking_not_pinned')
    assert 'external' in found[0]['message'] and 'internal' not in found[0]['message'].split('does not')[0]
    assert '192.168.10.0/24' in found[0]['remedy']


def test_nmstate_cr_missing():
    snap = base_snapshot()
    snap['nmstates'] = []
    assert 'NMState CR' in by_id(snap, 'nmstate_not_installed')[0]['message']


def test_machineset_missing_device_is_info_in_plan_mode():
    found = by_id(base_snapshot(), 'machineset_missing_secondary_device')
    assert [item['severity'] for item in found] == ['info']
    assert found[0]['objects'] == [{'kind': 'MachineSet', 'namespace': NS, 'name': 'ocp1-worker'}]


def _nic_count_findings(snap, mode='plan', align_machines=True):
    return [item for item in preflight.run_checks(snap, mode, align_machines) if item['id'] == 'machine_nic_count_mismatch']


def test_nic_count_mismatch_enable_aligns_is_a_notice_in_plan_mode():
    # a NIC added in vCenter only, on the configured port group: enable's vSphere step (align_machines) fixes it
    snap = base_snapshot()
    _vm_extra_nic(snap)
    found = _nic_count_findings(snap)
    assert [item['severity'] for item in found] == ['info']
    assert 'enable will align the Machine\'s providerSpec' in found[0]['message']
    assert 'Machine ocp1-worker-0 lists 1 network device(s), its VM ocp1-worker-0 has 2 NIC(s)' in found[0]['message']
    assert found[0]['objects'] == [{'kind': 'Machine', 'namespace': NS, 'name': 'ocp1-worker-0'},
                                   {'kind': 'VirtualMachine', 'name': 'ocp1-worker-0'}]
    assert [item['id'] for item in findings_of(snap) if item['severity'] == 'error'] == []


def test_nic_count_mismatch_on_every_egress_machine_is_a_notice_each():
    snap = base_snapshot()
    for index in (3, 4, 5):
        snap['vsphere']['vms'][index]['nics'].append(nic(20 + index, 'ocp-egress-120'))
    assert [item['severity'] for item in _nic_count_findings(snap)] == ['info'] * 3


@pytest.mark.parametrize('mode,align_machines', [('plan', False), ('audit', True), ('audit', False)])
def test_nic_count_mismatch_enable_would_align_stays_an_error_without_alignment_or_in_audit(mode, align_machines):
    snap = base_snapshot()
    _vm_extra_nic(snap)
    found = _nic_count_findings(snap, mode, align_machines)
    assert [item['severity'] for item in found] == ['error']
    assert 'enable will align' not in found[0]['message']


def _vm_two_extra_nics(snap):
    _vm_extra_nic(snap)
    snap['vsphere']['vms'][3]['nics'].append(nic(21, 'ocp-egress-120'))


def _vm_extra_nics_on_both(snap):
    _vm_extra_nic(snap)
    _vm_extra_nic_elsewhere(snap)


def _machine_lists_more_devices(snap):
    snap['machines'][0]['spec']['providerSpec']['value']['network']['devices'].append({'networkName': 'ocp-egress-120'})


def _machine_of_unselected_node(snap):
    # ocp1-master-0 is not an egress node (selector: workers): enable does not align its Machine
    snap['machines'].append(dict(machine('ocp1-master-0'), metadata={'name': 'ocp1-master-0', 'namespace': NS}))
    snap['vsphere']['vms'][0]['nics'].append(nic(30, 'ocp-egress-120'))


def _no_portgroup_configured(snap):
    _vm_extra_nic(snap)
    del snap['config']['vsphere']['portgroup']


def _machine_lists_two_more_devices(snap):
    devices = snap['machines'][0]['spec']['providerSpec']['value']['network']['devices']
    devices += [{'networkName': 'ocp-egress-120'}, {'networkName': 'storage'}]


@pytest.mark.parametrize('mutate', [_vm_extra_nic_elsewhere, _vm_two_extra_nics, _vm_extra_nics_on_both, _machine_lists_two_more_devices,
                                    _machine_of_unselected_node, _no_portgroup_configured])
def test_nic_count_mismatch_enable_does_not_fix_stays_an_error_in_plan_mode(mutate):
    snap = base_snapshot()
    mutate(snap)
    found = _nic_count_findings(snap)
    assert [item['severity'] for item in found] == ['error']
    assert 'enable will align' not in found[0]['message']


def test_egress_nic_removed_by_hand_is_what_enable_adds_again_in_plan_mode_an_error_in_audit_mode():
    """The Machine lists the port group, its VM lost that NIC: enable's vSphere step re-adds it (issue 13), not a stop."""
    snap = base_snapshot()
    _machine_lists_more_devices(snap)
    [found] = _nic_count_findings(snap)
    assert found['severity'] == 'info' and 'enable will add the NIC again' in found['message'], found
    [audit] = _nic_count_findings(snap, mode='audit')
    assert audit['severity'] == 'error' and 'vsphere_vm_nic' in audit['message'] and 'align_machines cannot help' in audit['message']


def test_machineset_of_other_nodes_is_not_checked():
    snap = base_snapshot()
    snap['machinesets'].append(dict(machineset(), metadata={'name': 'infra', 'namespace': NS}))
    assert [item['objects'][0]['name'] for item in by_id(snap, 'machineset_missing_secondary_device')] == ['ocp1-worker']


def test_node_without_provider_id():
    snap = base_snapshot()
    snap['nodes'][4]['spec'] = {}
    found = by_id(snap, 'vsphere_node_vm_not_found')
    assert found and found[0]['objects'] == [{'kind': 'Node', 'name': 'ocp1-worker-1'}]


def test_vm_at_the_nic_limit_is_refused_before_enable():
    snap = base_snapshot()
    snap['vsphere']['vms'][5]['nics'] = [nic(30 + index) for index in range(10)]
    assert by_id(snap, 'vsphere_vm_nic_limit')


def test_capacity_uses_vms_and_readiness_in_plan_mode():
    snap = base_snapshot()
    worker(snap, 0)['status']['conditions'][0]['status'] = 'False'
    found = by_id(snap, 'egress_nodes_capacity_insufficient')
    assert found and 'one node failure' in found[0]['message']


def test_capacity_in_audit_mode_counts_capable_nodes_only():
    snap = configured_snapshot()
    del worker(snap, 2)['metadata']['labels'][EGRESS_LABEL]
    found = by_id(snap, 'egress_nodes_capacity_insufficient', 'audit')
    assert found and 'capable node' in found[0]['message']
    assert [item['name'] for item in found[0]['objects'] if item['kind'] == 'Node'] == ['ocp1-worker-0', 'ocp1-worker-1']


def test_capacity_on_single_node_openshift_says_no_failover():
    snap = base_snapshot()
    snap['nodes'] = [node('sno', 0, 'worker', labels={'node-role.kubernetes.io/master': ''})]
    snap['vsphere']['vms'] = [vm('sno', 0)]
    snap['machines'], snap['machinesets'] = [], []
    snap['config']['objects'][0]['egress_ips'] = ['10.20.0.200']
    found = by_id(snap, 'egress_nodes_capacity_insufficient')
    assert found and 'single-node' in found[0]['message']


def test_capacity_with_fewer_nodes_than_ips_says_unassigned():
    snap = base_snapshot()
    snap['config']['objects'][0]['egress_ips'] = ['10.20.0.%d' % host_part for host_part in range(200, 204)]
    assert '1 of its IPs cannot be assigned' in by_id(snap, 'egress_nodes_capacity_insufficient')[0]['message']


def test_portgroup_missing_everywhere_in_plan_mode_is_info_and_says_it_will_be_created():
    found = by_id(base_snapshot(), 'portgroup_missing')
    assert [item['severity'] for item in found] == ['info'] and 'will create' in found[0]['message']


def test_portgroup_missing_on_some_hosts_names_them():
    snap = base_snapshot()
    _portgroup_on_hosts([120, None, 120])(snap)
    found = by_id(snap, 'portgroup_missing', 'audit')
    assert [item['name'] for item in found[0]['objects']] == ['DC0_C0_H1'] and 'DRS' in found[0]['message']


def test_portgroup_on_other_vswitch_uses_the_vsphere_step_id():
    snap = base_snapshot()
    snap['vsphere']['hosts'][0]['standard_portgroups'].append({'name': 'ocp-egress-120', 'vswitch': 'vSwitch0', 'vlan_id': 120})
    assert by_id(snap, 'vsphere_portgroup_on_other_vswitch')


def test_distributed_switch_checks():
    snap = base_snapshot()
    _distributed(switch='DSwitch9')(snap)
    assert 'DSwitch9' in by_id(snap, 'switch_missing')[0]['message']
    snap = base_snapshot()
    _distributed(members=HOSTS[:2])(snap)
    found = by_id(snap, 'switch_missing')
    assert found[0]['objects'] == [{'kind': 'HostSystem', 'name': 'DC0_C0_H2'}]
    snap = base_snapshot()
    _distributed()(snap)
    assert [item['severity'] for item in by_id(snap, 'portgroup_missing')] == ['info']
    assert [item['severity'] for item in by_id(snap, 'portgroup_missing', 'audit')] == ['error']
    snap = base_snapshot()
    _distributed(vlan=130)(snap)
    assert by_id(snap, 'portgroup_vlan_mismatch') and not by_id(snap, 'portgroup_missing')
    snap = base_snapshot()
    _distributed(vlan=120)(snap)
    assert not by_id(snap, 'portgroup_vlan_mismatch') and not by_id(snap, 'switch_missing')


def test_nsx_backed_distributed_portgroup_and_acceptance():
    snap = base_snapshot()
    _distributed(vlan=120, backing='nsx')(snap)
    assert [item['severity'] for item in by_id(snap, 'nsx_backed_network')] == ['error']
    snap['config']['vsphere']['accept_untested_nsx'] = True
    found = by_id(snap, 'nsx_backed_network')
    assert [item['severity'] for item in found] == ['warning'] and 'unconfirmed' in found[0]['message']
    snap = base_snapshot()
    _opaque('ocp-egress-120', accept=True)(snap)
    assert [item['severity'] for item in by_id(snap, 'nsx_backed_network')] == ['warning']


@pytest.mark.parametrize('cidr,owner', [('10.128.4.0/24', 'cluster network'), ('100.64.1.0/24', 'join subnet'),
                                        ('100.88.0.0/24', 'transit switch'), ('169.254.10.0/24', 'masquerade')])
def test_cidr_overlaps_each_cluster_network(cidr, owner):
    snap = base_snapshot()
    prefix = cidr.rsplit('.', 1)[0]
    _cidr(cidr, prefix + '.1', '%s.10-%s.99' % (prefix, prefix))(snap)
    found = by_id(snap, 'secondary_cidr_overlaps_cluster_network')
    assert found and owner in found[0]['message']


def test_cidr_overlap_honours_a_configured_join_subnet():
    snap = base_snapshot()
    snap['network_operator']['spec']['defaultNetwork']['ovnKubernetesConfig']['ipv4'] = {'internalJoinSubnet': '100.99.0.0/16'}
    _cidr('100.64.1.0/24', '100.64.1.1', '100.64.1.10-100.64.1.99')(snap)
    assert by_id(snap, 'secondary_cidr_overlaps_cluster_network') == []
    _cidr('100.99.1.0/24', '100.99.1.1', '100.99.1.10-100.99.1.99')(snap)
    assert 'as configured' in by_id(snap, 'secondary_cidr_overlaps_cluster_network')[0]['message']


def test_address_plan_rules_come_from_the_address_plan():
    snap = base_snapshot()
    snap['config']['network']['gateway'] = '10.30.0.1'
    assert by_id(snap, 'node_gateway_outside_cidr')
    snap = base_snapshot()
    _cidr('192.168.10.128/25', '192.168.10.129', '192.168.10.140-192.168.10.150')(snap)
    found = by_id(snap, 'node_network_overlaps_host_subnet')
    assert found and 'primary' in found[0]['message']
    snap = base_snapshot()
    worker(snap, 1)['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = json.dumps(['192.168.10.15/24', '10.20.0.5/16'])
    assert 'host-cidrs of node ocp1-worker-1' in by_id(snap, 'node_network_overlaps_host_subnet')[0]['message']


def test_route_metric_against_the_configure_ovs_default():
    snap = base_snapshot()
    snap['config']['network']['route_metric'] = 48
    found = by_id(snap, 'node_route_metric_too_low')
    assert found and '48' in found[0]['message']
    snap['config']['network']['route_metric'] = 49
    assert by_id(snap, 'node_route_metric_too_low') == []


def test_route_metric_against_node_network_state_when_read():
    snap = base_snapshot()
    snap['nns'] = [{'metadata': {'name': 'ocp1-worker-0'}, 'status': {'currentState': {'routes': {'running': [
        {'destination': '0.0.0.0/0', 'next-hop-interface': 'br-ex', 'metric': 300, 'table-id': 254}]}}}}]
    found = by_id(snap, 'node_route_metric_too_low')
    assert found and 'ocp1-worker-0' in found[0]['message']


def test_host_network_pod_in_another_namespace_is_not_reported():
    snap = base_snapshot()
    _host_network_pod('default')(snap)
    assert by_id(snap, 'host_network_pods_selected') == []


def test_namespace_selector_missing_selects_nothing():
    snap = base_snapshot()
    _udn_namespace(True)(snap)
    snap['config']['objects'][0]['namespace_selector'] = None
    assert by_id(snap, 'namespace_primary_udn') == []


def test_primary_egressips_record():
    snap = base_snapshot()
    snap['egressips'] = [egressip('legacy', ['192.168.10.200', '10.20.0.250'], [('192.168.10.200', 'ocp1-master-1')]),
                         egressip('other', ['192.168.10.201'])]
    assert preflight_egress.primary_egressips(snap) == [
        {'name': 'legacy', 'egress_ip': '192.168.10.200', 'node': 'ocp1-master-1', 'subnet': '192.168.10.0/24'},
        {'name': 'other', 'egress_ip': '192.168.10.201', 'node': None, 'subnet': '192.168.10.0/24'},
    ]


def test_primary_egressips_affected_lists_the_new_candidates():
    snap = base_snapshot()
    _existing_egressip(['192.168.10.200', '192.168.10.201'], [('192.168.10.201', 'ocp1-master-0')])(snap)
    worker(snap, 0)['metadata']['labels'][EGRESS_LABEL] = ''
    found = by_id(snap, 'primary_egressips_affected_by_labels')
    assert found[0]['severity'] == 'warning'
    assert 'legacy 192.168.10.200 (unassigned now' in found[0]['message']
    assert 'ocp1-worker-1, ocp1-worker-2' in found[0]['message'] and 'ocp1-worker-0' not in found[0]['message']


def test_primary_egressips_all_assigned_is_info_and_audit_mode_does_not_predict():
    snap = base_snapshot()
    _existing_egressip(['192.168.10.200'], [('192.168.10.200', 'ocp1-master-0')])(snap)
    assert [item['severity'] for item in by_id(snap, 'primary_egressips_affected_by_labels')] == ['info']
    assert by_id(snap, 'primary_egressips_affected_by_labels', 'audit') == []


def test_cluster_facts():
    facts = preflight.cluster_facts(configured_snapshot())
    assert facts['openshift_version'] == '4.16.3'
    assert facts['platform'] == 'VSphere' and facts['network_type'] == 'OVNKubernetes'
    assert facts['ip_forwarding'] == 'Restricted'
    assert facts['forwarding_by_hostname'] == dict(('ocp1-worker-%d' % i, ['ens224']) for i in range(3))
    assert facts['egress_assignable_nodes'] == ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
    assert facts['machine_api'] is True and facts['nmstate'] is True and facts['nodes'] == 6


def test_run_checks_does_not_modify_the_snapshot():
    snap = configured_snapshot()
    before = copy.deepcopy(snap)
    preflight.run_checks(snap, 'audit')
    assert snap == before


def test_egress_ip_plan_rules_come_from_the_egressip_validation():
    snap = base_snapshot()
    snap['config']['objects'][0]['egress_ips'] = ['10.30.0.200', '10.20.0.201']
    assert by_id(snap, 'egressip_outside_network')
    snap = base_snapshot()
    _existing_egressip(['10.20.0.201'])(snap)
    found = by_id(snap, 'egressip_claimed')
    assert found and 'legacy' in found[0]['message']
    snap = base_snapshot()
    snap['config']['objects'][0]['egress_ips'] = ['10.20.0.50', '10.20.0.201']
    assert by_id(snap, 'egressip_in_node_address_range')


def test_a_problem_two_rule_owners_report_is_listed_once():
    snap = base_snapshot()
    snap['config']['network']['gateway'] = '10.30.0.1'
    assert len(by_id(snap, 'node_gateway_outside_cidr')) == 1


def test_nmstate_handler_release_is_reported_and_an_unreadable_one_is_a_warning():
    snap = base_snapshot()
    states = [{'metadata': {'name': 'ocp1-worker-%d' % index}, 'status': {'handlerNmstateVersion': 'nmstatectl 2.2.38'}}
              for index in (0, 1)]
    states.append({'metadata': {'name': 'ocp1-worker-2'}, 'status': {}})
    states.append({'metadata': {'name': 'ocp1-master-0'}, 'status': {'handlerNmstateVersion': 'nmstatectl 2.2.43'}})
    snap['nns'] = states
    found = by_id(snap, 'node_nmstate_version')
    # only the nodes the selector picks (the workers) count
    assert [item['message'] for item in found] == ['NMState handler nmstate release: 2.2.38 on 2 node(s).']
    assert found[0]['severity'] == 'info'
    unknown = by_id(snap, 'node_nmstate_version_unknown')
    assert unknown[0]['severity'] == 'warning' and 'ocp1-worker-2' in unknown[0]['message']
    del snap['nns']
    assert by_id(snap, 'node_nmstate_version') == [] and by_id(snap, 'node_nmstate_version_unknown') == []


# --- refusals of later steps known to preflight (issue 13) ---------------------------------------

def _ids_and_messages(snap):
    return [(item['id'], item['message']) for item in findings_of(snap) if item['severity'] == 'error']


def test_node_address_range_too_small_for_the_selected_nodes_is_refused_by_preflight():
    snap = base_snapshot()
    snap['config']['network']['node_address_range'] = '10.20.0.10-10.20.0.11'
    found = [message for finding_id, message in _ids_and_messages(snap) if finding_id == 'node_address_range_too_small']
    assert found and 'egressip_network.node_address_range' in found[0] and '3 of the 3 node(s)' in found[0]


def test_node_address_range_without_a_dash_is_refused():
    snap = base_snapshot()
    snap['config']['network']['node_address_range'] = '10.20.0.10'
    assert any(finding_id == 'node_network_input_invalid' and 'egressip_network.node_address_range' in message
               and 'first-last' in message for finding_id, message in _ids_and_messages(snap))


def test_ipv6_family_that_is_not_ipv6_is_refused():
    snap = base_snapshot()
    snap['config']['network']['ipv6'] = {'cidr': '10.30.0.0/24', 'gateway': '10.30.0.1', 'node_address_range': '10.30.0.10-10.30.0.99'}
    assert any('egressip_network.ipv6.cidr' in message and 'IPv6' in message for _id, message in _ids_and_messages(snap))


def test_selector_with_an_unknown_operator_is_a_finding_not_an_exception():
    snap = base_snapshot()
    snap['config']['nodes']['selector'] = {'matchExpressions': [{'key': 'a', 'operator': 'Equals', 'values': ['b']}]}
    assert [finding_id for finding_id, _message in _ids_and_messages(snap)] == ['variables_invalid']


def test_portgroup_options_of_the_vsphere_step_are_checked_from_its_own_rules():
    snap = base_snapshot()
    portgroup = {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1', 'num_ports': 8}
    snap['config']['variables'] = {'egressip_vsphere': {'portgroup': portgroup}}
    found = [message for finding_id, message in _ids_and_messages(snap) if finding_id == 'variables_invalid']
    assert found == ['egressip_vsphere.portgroup.num_ports=8 applies to distributed port groups only: remove it, or set '
                     'switch_type=distributed.']


# --- IPv6 and dual stack ----------------------------------------------------------------------

def test_an_ipv6_egress_ip_needs_an_ipv6_part():
    snap = base_snapshot()
    snap['config']['objects'][0]['egress_ips'] = ['10.20.0.200', 'fd00:20::200']
    [finding] = by_id(snap, 'egressip_family_missing')
    assert 'fd00:20::200 (EgressIP payments) is IPv6 but the secondary network has no IPv6 part (egressip_network.ipv6 is missing)' \
        in finding['message']
    assert by_id(snap, 'egressip_outside_network') == []
    _dual_stack_cluster(['fd00:20::200'])(snap)
    ids = [item['id'] for item in findings_of(snap) if item['severity'] == 'error']
    assert 'egressip_family_missing' not in ids and 'egressip_outside_network' not in ids and 'secondary_family_not_in_cluster' not in ids


def test_an_ipv6_part_without_ipv6_egress_ips_on_an_ipv4_cluster_is_a_warning():
    snap = base_snapshot()
    _ipv6_part([])(snap)
    [finding] = by_id(snap, 'secondary_family_not_in_cluster')
    assert finding['severity'] == 'warning' and 'egressip_network.ipv6.cidr fd00:20::/64 is IPv6 but the cluster runs IPv4 only' in finding['message']


@pytest.mark.parametrize('cidr, owner', [('fd01:0:0:7::/64', 'cluster network fd01::/48'), ('fd02::/120', 'service network fd02::/112'),
                                         ('fd98::/64', 'OVN-Kubernetes IPv6 join subnet')])
def test_the_ipv6_part_must_not_overlap_the_cluster_networks(cidr, owner):
    snap = base_snapshot()
    _dual_stack_cluster([])(snap)
    for source in ('spec', 'status'):
        networks = (snap['network_config'].get(source) or {}).get('serviceNetwork')
        if networks is not None:
            networks.append('fd02::/112')
    snap['config']['network']['ipv6'] = {'cidr': cidr, 'gateway': str(next(ipaddress.ip_network(cidr).hosts())), 'node_address_range': None}
    found = by_id(snap, 'secondary_cidr_overlaps_cluster_network')
    assert found and 'egressip_network.ipv6.cidr %s overlaps the %s' % (cidr, owner) in found[0]['message'], found


def test_forwarding_counts_each_family_of_the_secondary_network():
    snap = configured_snapshot()
    snap['config']['network']['ipv6'] = dict(IPV6_PART)  # the Tuned forwards IPv4 only
    # IPv6 needs no per-interface key: Linux forwards it by net.ipv6.conf.all.forwarding, which ovnkube-node sets to 1
    assert by_id(snap, 'node_ip_forwarding_off', 'audit') == []
    profile = snap['tuneds'][0]['spec']['profile'][0]
    profile['data'] += 'net.ipv6.conf.all.forwarding=0\n'
    found = by_id(snap, 'node_ip_forwarding_off', 'audit')
    assert [item['severity'] for item in found] == ['warning'], found
    assert 'set net.ipv6.conf.all.forwarding to 0' in found[0]['message'] and profile['name'] in found[0]['message']
    assert found[0]['objects'] == [{'kind': 'Tuned', 'name': snap['tuneds'][0]['metadata']['name']}]
    snap['config']['network'].pop('ipv6')
    assert by_id(snap, 'node_ip_forwarding_off', 'audit') == [], 'an IPv4-only secondary network does not care'
    snap['config']['network']['ipv6'] = dict(IPV6_PART)
    profile['data'] = profile['data'].replace('net.ipv6.conf.all.forwarding=0\n', '').replace('net.ipv4.conf.ens224.forwarding=1', '')
    found = by_id(snap, 'node_ip_forwarding_off', 'audit')
    assert found and 'sets net.ipv4.conf.<interface>.forwarding=1 for them' in found[0]['message'] and 'ipv6' not in found[0]['message']
