"""ocp.egressip.preflight against the twin: one read, findings, zero writes, failures that name the problem.

Named test_preflight_module.py so that pytest does not confuse it with the unit tests' test_preflight.py.

Tests that change the twin (port groups, objects, faults) undo what they did, so each starts
from the seed state plus nothing.
"""

import copy

import pytest

from twin.fixture import kube_writes, vcsim_writes

REQUEST = {
    'acknowledge_unsupported': True,
    'datacenter': 'DC0',
    'cluster': 'DC0_C0',
    'portgroup': {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120},
    'network': {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99', 'route_metric': 200},
    'nodes': {'selector': {'node-role.kubernetes.io/worker': ''}},
    'objects': [{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'],
                 'namespace_selector': {'matchLabels': {'team': 'payments'}}}],
}
KUBE_LISTS = 14   # nodes, namespaces, pods and eleven custom kinds: one list each


def request(**changes):
    args = copy.deepcopy(REQUEST)
    args.update(changes)
    return args


def ids(result, severity=None):
    return [item['id'] for item in result['findings'] if severity is None or item['severity'] == severity]


@pytest.fixture
def quiet(twin):
    """Reset both request logs; yield the twin."""
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    yield twin
    twin.clear_kube_faults()


def _host_network_system(twin, host_name):
    from pyVmomi import vim  # pylint: disable=import-outside-toplevel
    content = twin.vsphere().RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.HostSystem], True)
    try:
        host = next(item for item in view.view if item.name == host_name)
    finally:
        view.DestroyView()
    return host.configManager.networkSystem


@pytest.fixture
def portgroups(twin):
    """Add standard port groups to hosts for one test: add(host, vlan); removed afterwards."""
    from pyVmomi import vim  # pylint: disable=import-outside-toplevel
    added = []

    def add(host_name, vlan, name='ocp-egress-120', vswitch='vSwitch1'):
        spec = vim.host.PortGroup.Specification(name=name, vlanId=vlan, vswitchName=vswitch, policy=vim.host.NetworkPolicy())
        _host_network_system(twin, host_name).AddPortGroup(portgrp=spec)
        added.append((host_name, name))

    yield add
    for host_name, name in added:
        _host_network_system(twin, host_name).RemovePortGroup(pgName=name)


@pytest.fixture
def kube_objects(twin):
    """Create Kubernetes objects for one test: create(kind, body); deleted afterwards."""
    created = []

    def create(kind, body):
        if kind == 'namespace':
            twin.core_v1().create_namespace(body)
        elif kind == 'pod':
            twin.core_v1().create_namespaced_pod(body['metadata']['namespace'], body)
        elif kind == 'egressip':
            twin.custom_objects().create_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', body)
        created.append((kind, body))

    yield create
    for kind, body in reversed(created):
        if kind == 'namespace':
            twin.core_v1().delete_namespace(body['metadata']['name'])
        elif kind == 'pod':
            twin.core_v1().delete_namespaced_pod(body['metadata']['name'], body['metadata']['namespace'])
        elif kind == 'egressip':
            twin.custom_objects().delete_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', body['metadata']['name'])


def test_fresh_twin_passes_with_the_expected_notices_and_writes_nothing(quiet, run_module):
    result = run_module('preflight', request())
    assert result['_rc'] == 0, result
    assert result['changed'] is False
    assert result['summary']['ok'] is True and result['summary']['error'] == 0
    # the twin runs IPI-style: Machine API MachineSets build the workers, without the secondary device yet
    assert set(ids(result)) == {'support_acknowledged', 'infrastructure_node_networking_not_pinned', 'node_ip_forwarding_off',
                                'machineset_missing_secondary_device', 'portgroup_missing', 'node_nmstate_version'}
    assert ids(result, 'warning') == ['infrastructure_node_networking_not_pinned']
    # the twin's default NMState handler: a release before routes could name a profile (the collection names the kernel NIC)
    release = [item for item in result['findings'] if item['id'] == 'node_nmstate_version'][0]
    assert release['severity'] == 'info' and release['message'] == 'NMState handler nmstate release: 2.2.38 on 3 node(s).'
    assert result['cluster']['platform'] == 'VSphere' and result['cluster']['network_type'] == 'OVNKubernetes'
    assert result['cluster']['openshift_version'].startswith('4.')
    assert result['checked'] == {'vcenter': True, 'pods': True}
    assert kube_writes(quiet) == 0 and vcsim_writes(quiet) == {}


def test_one_list_per_kind_and_a_fixed_number_of_vcenter_reads(quiet, run_module):
    run_module('preflight', request())
    counts = quiet.kube_requests()['counts']
    assert counts.get('list') == KUBE_LISTS and not counts.get('get')
    soap = quiet.vcsim_requests()['counts']
    # datacenters, cluster/hosts/switches, host network systems, VM index, VM devices, NSX backing
    assert soap.get('RetrievePropertiesEx') == 6, soap


def test_check_mode_gives_the_same_answer(quiet, run_module):
    normal = run_module('preflight', request())
    checked = run_module('preflight', request(), check=True)
    assert checked['_rc'] == 0 and checked['findings'] == normal['findings']
    assert kube_writes(quiet) == 0 and vcsim_writes(quiet) == {}


def test_missing_acknowledgement_fails_naming_the_finding_and_writes_nothing(quiet, run_module):
    result = run_module('preflight', request(acknowledge_unsupported=False))
    assert result['_rc'] != 0 and result['failed']
    assert '[support_not_acknowledged]' in result['msg'] and 'outside Red Hat support' in result['msg']
    assert 'nothing was written' in result['msg']
    assert 'support_not_acknowledged' in ids(result, 'error')
    assert kube_writes(quiet) == 0 and vcsim_writes(quiet) == {}


def test_fail_on_error_false_returns_the_errors(quiet, run_module):
    result = run_module('preflight', request(acknowledge_unsupported=False, fail_on_error=False))
    assert result['_rc'] == 0 and result['summary']['ok'] is False and result['summary']['error'] == 1


def test_audit_mode_turns_what_enable_would_create_into_errors(quiet, run_module):
    result = run_module('preflight', request(mode='audit', fail_on_error=False))
    # no node is capable yet: no egress node to lack forwarding, and no capacity at all
    assert {'portgroup_missing', 'egress_nodes_capacity_insufficient'} <= set(ids(result, 'error'))


def test_portgroup_on_one_host_with_another_vlan(quiet, run_module, portgroups):
    portgroups('DC0_C0_H1', 130)
    quiet.reset_vcsim_requests()
    result = run_module('preflight', request(mode='audit', fail_on_error=False))
    by_id = dict((item['id'], item) for item in result['findings'])
    assert [obj['name'] for obj in by_id['portgroup_vlan_mismatch']['objects']] == ['DC0_C0_H1']
    assert [obj['name'] for obj in by_id['portgroup_missing']['objects']] == ['DC0_C0_H0', 'DC0_C0_H2']
    assert vcsim_writes(quiet) == {}


def test_portgroup_on_one_host_with_the_right_vlan(quiet, run_module, portgroups):
    # govmomi 0.24's vcsim refuses the same standard port group name on a second host (DuplicateName on
    # its datacenter Network object), which a real vCenter accepts: the all-hosts case is covered by the
    # unit tests (test_preflight.py, portgroup_missing / portgroup_vlan_mismatch not triggered).
    portgroups('DC0_C0_H0', 120)
    result = run_module('preflight', request(fail_on_error=False))
    assert 'portgroup_vlan_mismatch' not in ids(result)
    missing = next(item for item in result['findings'] if item['id'] == 'portgroup_missing')
    assert missing['severity'] == 'info' and [obj['name'] for obj in missing['objects']] == ['DC0_C0_H1', 'DC0_C0_H2']


def test_missing_vswitch_is_named(quiet, run_module):
    args = request()
    args['portgroup']['switch'] = 'vSwitch7'
    result = run_module('preflight', args)
    assert result['_rc'] != 0 and '[switch_missing]' in result['msg'] and 'vSwitch7' in result['msg']


def test_unknown_vsphere_cluster_is_a_finding(quiet, run_module):
    result = run_module('preflight', request(cluster='DC0_C9', fail_on_error=False))
    assert 'vsphere_cluster_not_found' in ids(result, 'error')
    assert 'DC0_C9' in next(item['message'] for item in result['findings'] if item['id'] == 'vsphere_cluster_not_found')


def test_without_vcenter_the_vsphere_checks_are_skipped_and_said_so(quiet, run_module):
    args = request()
    del args['datacenter'], args['cluster']
    result = run_module('preflight', args)
    assert 'vsphere_not_checked' in ids(result, 'info') and result['checked']['vcenter'] is False
    assert quiet.vcsim_requests()['counts'] == {}


def test_capacity_and_selector(quiet, run_module):
    args = request(fail_on_error=False)
    args['objects'][0]['egress_ips'] = ['10.20.0.200', '10.20.0.201', '10.20.0.202']
    assert 'egress_nodes_capacity_insufficient' in ids(run_module('preflight', args), 'error')
    args = request(fail_on_error=False, nodes={'selector': {'node-role.kubernetes.io/egress': ''}})
    assert 'egress_nodes_none_selected' in ids(run_module('preflight', args), 'error')


def test_cidr_overlapping_the_service_network(quiet, run_module):
    args = request(fail_on_error=False, objects=[])
    args['network'] = {'cidr': '172.30.200.0/24', 'gateway': '172.30.200.1', 'node_address_range': '172.30.200.10-172.30.200.99'}
    assert 'secondary_cidr_overlaps_cluster_network' in ids(run_module('preflight', args), 'error')


def test_primary_egressips_are_recorded_and_the_new_candidates_named(quiet, run_module, kube_objects):
    kube_objects('egressip', {'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': 'legacy'},
                              'spec': {'egressIPs': ['192.168.10.200'], 'namespaceSelector': {'matchLabels': {'team': 'legacy'}}}})
    result = run_module('preflight', request())
    assert result['primary_egressips'][0]['name'] == 'legacy' and result['primary_egressips'][0]['egress_ip'] == '192.168.10.200'
    assert 'primary_egressips_present' in ids(result)
    affected = next(item for item in result['findings'] if item['id'] == 'primary_egressips_affected_by_labels')
    assert 'ocp1-worker-0' in affected['message']


def test_udn_namespace_and_host_network_pod(quiet, run_module, kube_objects):
    labels = {'team': 'payments', 'k8s.ovn.org/primary-user-defined-network': ''}
    kube_objects('namespace', {'metadata': {'name': 'payments', 'labels': labels}})
    kube_objects('pod', {'metadata': {'name': 'node-agent', 'namespace': 'payments'},
                         'spec': {'hostNetwork': True, 'containers': [{'name': 'agent', 'image': 'registry.example/agent:1'}]}})
    result = run_module('preflight', request(fail_on_error=False))
    assert 'namespace_primary_udn' in ids(result, 'error')
    assert 'host_network_pods_selected' in ids(result, 'warning')
    skipped = run_module('preflight', request(fail_on_error=False, read_pods=False))
    assert 'host_network_pods_selected' not in ids(skipped) and skipped['checked']['pods'] is False


def test_a_forbidden_list_is_reported_not_fatal(quiet, run_module):
    quiet.inject_kube_fault(verb='list', path='/api/v1/pods', code=403, count=1)
    result = run_module('preflight', request())
    assert result['_rc'] == 0
    finding = next(item for item in result['findings'] if item['id'] == 'preflight_read_incomplete')
    assert 'pods' in finding['message']


def test_a_server_error_fails_with_the_api_message(quiet, run_module):
    quiet.inject_kube_fault(verb='list', path='/apis/k8s.ovn.org/v1/egressips', code=500, count=1)
    result = run_module('preflight', request())
    assert result['_rc'] != 0 and 'egressips' in result['msg'] and '500' in result['msg']


def test_bad_input_fails_before_any_request(quiet, run_module):
    args = request()
    del args['objects'][0]['namespace_selector']
    result = run_module('preflight', args)
    assert result['_rc'] != 0 and 'namespace_selector' in result['msg']
    args = request(mode='later')
    result = run_module('preflight', args)
    assert result['_rc'] != 0 and 'mode' in result['msg']
    assert quiet.kube_requests()['requests'] == [] and quiet.vcsim_requests()['counts'] == {}


def test_secrets_never_show(quiet, run_module):
    result = run_module('preflight', request(acknowledge_unsupported=False))
    text = repr(result)
    assert quiet.kube_state['token'] not in text
    assert quiet.vcsim_state['password'] not in text


def test_a_vcenter_connection_without_certificate_checks_is_a_warning(quiet, run_module):
    """docs/aap.md: AAP's built-in vCenter credential injects VMWARE_VALIDATE_CERTS from a global setting, false by default."""
    checked = run_module('preflight', request())
    unchecked = run_module('preflight', request(), env={'VMWARE_VALIDATE_CERTS': 'false'})
    assert checked['checked']['vcenter'] and unchecked['checked']['vcenter']
    assert 'vcenter_tls_unverified' not in ids(checked) and 'kube_tls_unverified' not in ids(checked)
    assert 'vcenter_tls_unverified' in ids(unchecked, 'warning'), unchecked['findings']
