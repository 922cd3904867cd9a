"""Dual stack end to end on the dual-stack twin (issue 18): enable with egress IPs of both families, a second enable
that changes nothing, verify with the wire over both families, the failover drill, disable; then an IPv6-only
secondary network on the same dual-stack cluster. One twin, the tests run in order."""

import copy
import json
import os

import pytest
import yaml

from twin.fixture import kube_writes


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)

pytestmark = pytest.mark.slow
TWIN_OPTIONS = {'dual_stack': True, 'probe_interval': 0.5, 'random_seed': 21}

IPV6 = {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::99', 'route_metric': 210}
DUAL = copy.deepcopy(TWIN_VARS)
DUAL['egressip_network']['ipv6'] = IPV6
DUAL['egressip_objects'][0]['egress_ips'] = ['10.20.0.200', 'fd00:20::200']
DUAL['egressip_verify']['wire']['echo_target_ipv6'] = '[2001:db8::10]:8080'
DUAL['egressip_drill'] = {'observe_seconds': 1.5, 'poll_interval': 0.2, 'wait_timeout': 60}


@pytest.fixture(scope='module', name='reports')
def reports_fixture(tmp_path_factory):
    """The report directory of the enable runs (enable's verify step writes verify.json there)."""
    return tmp_path_factory.mktemp('reports')


def _report(reports, name):
    with open(os.path.join(str(reports), name), encoding='utf-8') as handle:
        return json.load(handle)


def _assigned(twin, name='payments'):
    egressip = twin.custom_objects().get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', name)
    return {item['egressIP']: item['node'] for item in egressip.get('status', {}).get('items', [])}


def _host_cidrs(twin):
    return dict((node.metadata.name, json.loads((node.metadata.annotations or {}).get('k8s.ovn.org/host-cidrs', '[]')))
                for node in twin.core_v1().list_node().items)


def test_enable_places_egress_ips_of_both_families(twin, run_playbook, reports):
    run = run_playbook('playbooks/enable.yml', extra_vars=[DUAL, {'egressip_report_dir': str(reports)}])
    assert run.rc == 0, run.stdout[-6000:]
    assigned = _assigned(twin)
    assert sorted(assigned) == ['10.20.0.200', 'fd00:20::200'] and len(set(assigned.values())) == 2, assigned
    cidrs = _host_cidrs(twin)
    for node in assigned.values():
        assert any(entry.startswith('10.20.0.') for entry in cidrs[node]) and any(entry.startswith('fd00:20::') for entry in cidrs[node])


def test_a_second_enable_changes_nothing(twin, run_playbook):
    before = _assigned(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=DUAL)
    assert run.rc == 0, run.stdout[-6000:]
    assert run.changed == 0, run.stdout[-6000:]
    assert _assigned(twin) == before


def test_node_policies_and_forwarding_per_family(twin):
    objects = twin.custom_objects()
    policies = [item for item in objects.list_cluster_custom_object('nmstate.io', 'v1', 'nodenetworkconfigurationpolicies')['items']
                if item['metadata']['name'].startswith('egressip-')]
    assert len(policies) == 3
    for policy in policies:
        state = policy['spec']['desiredState']
        ipv6 = state['interfaces'][0]['ipv6']
        assert ipv6['enabled'] is True and ipv6['autoconf'] is False and ipv6['dhcp'] is False
        assert [(route['destination'], route['metric']) for route in state['routes']['config']] == [('0.0.0.0/0', 200), ('::/0', 210)]
    tuned = objects.get_namespaced_custom_object('tuned.openshift.io', 'v1', 'openshift-cluster-node-tuning-operator', 'tuneds',
                                                 'egressip-forwarding')
    data = '\n'.join(profile['data'] for profile in tuned['spec']['profile'])
    assert 'net.ipv4.conf.ens224.forwarding=1' in data and 'net.ipv6.conf.ens224.forwarding=1' in data


def test_enable_verified_the_wire_over_both_families(reports):
    report = _report(reports, 'verify.json')
    assert report['summary']['ok'] is True, report['summary']
    wire = sorted((probe.get('family'), probe['source_ip'], probe['ok']) for probe in report['wire'])
    assert wire == [(4, '10.20.0.200', True), (6, 'fd00:20::200', True)], report['wire']
    assert all(row['wire'] == 'seen' for row in report['egress_ips']), report['egress_ips']


def _secondary_nics(twin):
    """[{node, mac}] of the NIC that holds a 10.20.0.x address on each node (from its NodeNetworkState)."""
    nics = []
    for item in twin.custom_objects().list_cluster_custom_object('nmstate.io', 'v1beta1', 'nodenetworkstates')['items']:
        for interface in item['status']['currentState']['interfaces']:
            if any(entry['ip'].startswith('10.20.0.') for entry in (interface.get('ipv4') or {}).get('address') or []):
                nics.append({'node': item['metadata']['name'], 'mac': interface['mac-address']})
    return sorted(nics, key=lambda nic: nic['node'])


def test_removing_ipv6_forwarding_under_ipv6_egress_ips_is_refused(twin, run_module):
    """ip_forwarding shrunk to IPv4 (the IPv6 part left out) or absent: refused per family, nothing written (check mode too)."""
    holder6 = _assigned(twin)['fd00:20::200']
    nics = _secondary_nics(twin)
    assert len(nics) == 3, nics
    for check in (True, False):
        twin.reset_kube_requests()
        result = run_module('ip_forwarding', {'nodes': nics, 'network': {'cidr': '10.20.0.0/24'}, 'wait': False}, check=check)
        assert result['_rc'] != 0 and [item['id'] for item in result['findings']] == ['node_forwarding_hosts_egress_ips'], result
        assert ('removing IPv6 forwarding (net.ipv6.conf.ens224.forwarding=1) from ens224 of node %s would drop the traffic of '
                'IPv6 egress IP(s) fd00:20::200 (EgressIP payments)' % holder6) in result['msg'], result['msg']
        assert 'set ipv6: true or give the IPv6 family in network' in result['msg']
        assert kube_writes(twin) == 0 and result['changed'] is False
    assigned = _assigned(twin)
    result = run_module('ip_forwarding', {'state': 'absent'}, check=True)
    assert result['_rc'] != 0 and kube_writes(twin) == 0, result
    assert sorted(item['message'].split(' would ')[0] for item in result['findings']) == [
        'removing IPv4 forwarding (net.ipv4.conf.ens224.forwarding=1) from ens224 of node %s' % assigned['10.20.0.200'],
        'removing IPv6 forwarding (net.ipv6.conf.ens224.forwarding=1) from ens224 of node %s' % assigned['fd00:20::200']]
    again = run_module('ip_forwarding', {'nodes': nics, 'network': {'cidr': '10.20.0.0/24', 'ipv6': IPV6}, 'wait': False}, check=True)
    assert again['_rc'] == 0 and again['changed'] is False, again


TUNED_NS = 'openshift-cluster-node-tuning-operator'


def _node_profile(twin, node):
    return twin.custom_objects().get_namespaced_custom_object('tuned.openshift.io', 'v1', TUNED_NS, 'profiles', node)


def _hand_made_tuned(profile, sysctls, hostname):
    """A Tuned someone else wrote for one node, winning over the collection's (priority 10 before 20)."""
    data = '[main]\ninclude=openshift-node\n\n[sysctl]\n%s\n' % '\n'.join(sysctls)
    return {'apiVersion': 'tuned.openshift.io/v1', 'kind': 'Tuned', 'metadata': {'name': 'hand-made', 'namespace': TUNED_NS},
            'spec': {'profile': [{'name': profile, 'data': data}],
                     'recommend': [{'profile': profile, 'priority': 10, 'match': [{'label': 'kubernetes.io/hostname', 'value': hostname}]}]}}


def _apply_tuned(twin, tuned, node):
    objects = twin.custom_objects()
    if tuned is None:
        objects.delete_namespaced_custom_object('tuned.openshift.io', 'v1', TUNED_NS, 'tuneds', 'hand-made')
        wanted = 'egressip-forwarding-node-ens224'
    else:
        names = [item['metadata']['name'] for item in objects.list_namespaced_custom_object('tuned.openshift.io', 'v1', TUNED_NS, 'tuneds')['items']]
        if 'hand-made' in names:
            objects.patch_namespaced_custom_object('tuned.openshift.io', 'v1', TUNED_NS, 'tuneds', 'hand-made', {'spec': tuned['spec']})
        else:
            objects.create_namespaced_custom_object('tuned.openshift.io', 'v1', TUNED_NS, 'tuneds', tuned)
        wanted = tuned['spec']['profile'][0]['name']
    twin.wait_for(lambda: (_node_profile(twin, node).get('status') or {}).get('tunedProfile') == wanted, timeout=30,
                  what='TuneD on %s runs %s' % (node, wanted))


def test_verify_reads_ipv6_forwarding_node_wide_as_the_kernel_does(twin, run_module):
    """A hand-made profile forwarding IPv4 only leaves IPv6 on (ovnkube-node's net.ipv6.conf.all.forwarding=1); one that
    sets that switch to 0 is the named blackhole, and the twin's wire agrees."""
    holder6 = _assigned(twin)['fd00:20::200']
    hostname = twin.core_v1().read_node(holder6).metadata.labels['kubernetes.io/hostname']
    options = {'network': DUAL['egressip_network'], 'fail_on_error': False, 'poll_interval': 0.2}
    _apply_tuned(twin, _hand_made_tuned('v4-only', ['net.ipv4.conf.ens224.forwarding=1'], hostname), holder6)
    result = run_module('egressip_verify', options)
    assert result['summary']['ok'] is True and 'blackhole_forwarding_off' not in [item['id'] for item in result['findings']], result
    assert dict((row['name'], row.get('forwarding_families')) for row in result['nodes'])[holder6] == {'ipv4': True, 'ipv6': True}
    try:
        _apply_tuned(twin, _hand_made_tuned('v6-off', ['net.ipv4.conf.ens224.forwarding=1', 'net.ipv6.conf.all.forwarding=0'], hostname),
                     holder6)
        result = run_module('egressip_verify', dict(options, wire=DUAL['egressip_verify']['wire']))
        finding = next(item for item in result['findings'] if item['id'] == 'blackhole_forwarding_off')
        assert holder6 in finding['message'] and 'fd00:20::200' in finding['message'], finding
        assert 'profile v6-off, which TuneD applied on node %s, sets net.ipv6.conf.all.forwarding=0' % holder6 in finding['message']
        assert dict((row['ip'], row['status']) for row in result['egress_ips'])['fd00:20::200'] == 'blackhole', result['egress_ips']
        assert sorted((probe['family'], probe['outcome']) for probe in result['wire'])[1] == (6, 'no_answer'), result['wire']
    finally:
        _apply_tuned(twin, None, holder6)


def test_the_failover_drill_moves_both_families(twin, run_playbook, tmp_path):
    run = run_playbook('playbooks/failover_drill.yml', extra_vars=[DUAL, {'egressip_report_dir': str(tmp_path)}])
    assert run.rc == 0, run.stdout[-6000:]
    with open(os.path.join(str(tmp_path), 'failover_drill.json'), encoding='utf-8') as handle:
        report = json.load(handle)
    assert report['summary']['ok'] is True and report['summary']['moved'] == 2, report['summary']
    assert sorted(_assigned(twin)) == ['10.20.0.200', 'fd00:20::200']


def test_disable_removes_both_families(twin, run_playbook):
    run = run_playbook('playbooks/disable.yml', extra_vars=[DUAL, {'disable_delete_assigned_egressips': True}])
    assert run.rc == 0, run.stdout[-6000:]
    objects = twin.custom_objects()
    assert objects.list_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips')['items'] == []
    assert [item['metadata']['name'] for item in objects.list_cluster_custom_object('nmstate.io', 'v1', 'nodenetworkconfigurationpolicies')[
        'items'] if item['metadata']['name'].startswith('egressip-')] == []
    for node, cidrs in _host_cidrs(twin).items():
        assert not any(entry.startswith(('10.20.0.', 'fd00:20::')) for entry in cidrs), (node, cidrs)


def test_an_ipv6_only_secondary_network_on_the_dual_stack_cluster(twin, run_playbook, tmp_path):
    """After disable: enable with an IPv6-only secondary network (cidr IPv6, no ipv4 part) on the dual-stack cluster."""
    variables = copy.deepcopy(DUAL)
    variables['egressip_network'] = {'cidr': 'fd00:30::/64', 'gateway': 'fd00:30::1', 'node_address_range': 'fd00:30::10-fd00:30::99'}
    variables['egressip_objects'][0]['egress_ips'] = ['fd00:30::200', 'fd00:30::201']
    run = run_playbook('playbooks/enable.yml', extra_vars=[variables, {'egressip_report_dir': str(tmp_path)}])
    assert run.rc == 0, run.stdout[-6000:]
    assigned = _assigned(twin)
    assert sorted(assigned) == ['fd00:30::200', 'fd00:30::201'] and len(set(assigned.values())) == 2
    report = _report(tmp_path, 'verify.json')
    assert report['summary']['ok'] is True and [(probe['family'], probe['ok']) for probe in report['wire']] == [(6, True)], report['wire']
