"""egressip_verify against the twin: a healthy cluster, the wire, check mode, bad input, and a disconnected vNIC
detected as a blackhole and remediated (check mode first, then for real, then a second run that changes nothing).

The tests of this module share one twin and run in order: each leaves the cluster as the next expects.
"""

import datetime

from twin.fixture import vcsim_writes

import _egress_cluster as ec

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 11, 'carrier_loss': 'keep'}  # ignore-carrier: blackholes
OBJECTS = [{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'], 'namespace_selector': {'matchLabels': {'team': 'payments'}}}]


def args(twin, **extra):
    options = dict(objects=OBJECTS, network=dict(ec.NETWORK), wire={'echo_target': ec.ECHO_TARGET}, fail_on_error=False,
                   poll_interval=0.2, **ec.vsphere_options(twin))
    options.update(extra)
    return options


def statuses(result):
    return dict((row['ip'], row['status']) for row in result['egress_ips'])


def ids(result):
    return sorted(item['id'] for item in result['findings'])


def test_healthy_cluster_passes_with_the_wire_and_a_constant_number_of_reads(twin, run_module):
    ec.make_egress_cluster(twin)
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    result = run_module('egressip_verify', args(twin))
    assert result['_rc'] == 0 and result['changed'] is False, result
    assert result['summary']['ok'] is True and ids(result) == []
    assert statuses(result) == {'10.20.0.200': 'ok', '10.20.0.201': 'ok'}
    assert [node['path'] for node in result['nodes']] == ['ok', 'ok', 'ok']
    assert all(node['nic']['portgroup_on_host'] and node['nic']['connected'] for node in result['nodes'])
    probe = result['wire'][0]
    assert probe['ok'] is True and probe['namespace'] == 'payments' and probe['source_ip'] in ('10.20.0.200', '10.20.0.201')
    assert set(row['wire'] for row in result['egress_ips']) == {'seen', None}
    counts = twin.kube_requests()['counts']
    # nodes, egressips, nodenetworkstates, namespaces and probe pods: one list each (the pod list is polled)
    assert counts['list'] >= 5 and counts['create'] == 1 and counts['deletecollection'] == 1 and counts['patch'] == 0
    assert vcsim_writes(twin) == {}
    assert twin.vcsim_requests()['counts']['RetrievePropertiesEx'] == 6  # the same for 3 nodes or 500
    assert twin.core_v1().list_pod_for_all_namespaces(label_selector='egressip.ocp/probe').items == []  # cleaned up
    assert result['report']['kind'] == 'verify' and result['report']['summary'] == result['summary']


def test_check_mode_writes_nothing_and_does_not_probe(twin, run_module):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    result = run_module('egressip_verify', args(twin, remediate=True), check=True, diff=True)
    assert result['_rc'] == 0 and result['changed'] is False
    assert ec.kube_writes(twin) == [] and vcsim_writes(twin) == {}
    assert ids(result) == ['egressip_wire_not_checked']
    assert result['findings'][0]['severity'] == 'info' and 'check mode' in result['findings'][0]['message']


def test_bad_input_names_field_value_and_fix_and_reads_nothing(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip_verify', args(twin, network={'cidr': '10.20.0.5/24'}, wire={'echo_target': 'http://echo/'}))
    assert result['_rc'] != 0 and result['failed']
    assert "network.cidr '10.20.0.5/24' has host bits set: it is not a network address in CIDR notation" in result['msg']
    assert "wire.echo_target='http://echo/' is not host:port" in result['msg']
    assert twin.kube_requests()['counts']['list'] == 0
    result = run_module('egressip_verify', args(twin, portgroup={'name': 'dpg', 'switch_type': 'distributed'}, wait_timeout=0))
    assert 'portgroup.switch is not set for the distributed port group dpg' in result['msg'] and 'wait_timeout=0 must be above 0' in result['msg']
    options = args(twin)
    del options['datacenter']
    result = run_module('egressip_verify', options)
    assert result['_rc'] != 0 and 'datacenter' in result['msg']  # required together with cluster and portgroup


def test_a_disconnected_vnic_is_a_blackhole_and_fails_the_module_by_default(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    ec.set_nic_connected(twin, victim, False)
    result = run_module('egressip_verify', args(twin, fail_on_error=True, wire=None))
    assert result['_rc'] != 0 and result['failed'] and result['summary']['ok'] is False
    assert statuses(result)['10.20.0.200'] == 'blackhole' and statuses(result)['10.20.0.201'] == 'ok'
    assert 'egressip_blackhole' in ids(result)
    assert '[egressip_blackhole] EgressIP payments: 10.20.0.200 is assigned to node %s' % victim in result['msg']
    assert 'is disconnected' in result['msg'] and 'remediate: true' in result['msg']
    assert ec.assignments(twin)['10.20.0.200'] == victim  # OVN-K did not notice: the IP stays (DOMAIN.md section 6)


def test_the_wire_sees_the_blackhole_too(twin, run_module):
    result = run_module('egressip_verify', args(twin, wire={'echo_target': ec.ECHO_TARGET, 'probes': 12}))
    outcomes = set(probe['outcome'] for probe in result['wire'])
    assert 'no_answer' in outcomes  # twelve flows over two IPs: at least one takes the blackholed one
    assert 'egressip_wire_failed' in ids(result)


def test_remediation_in_check_mode_says_what_would_move_and_writes_nothing(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    result = run_module('egressip_verify', args(twin, remediate=True), check=True, diff=True)
    assert result['changed'] is True
    remediation = result['remediation']
    assert remediation['check_mode'] is True and remediation['nodes'] == [victim] and remediation['refused'] is False
    spare = sorted(set(ec.workers(twin)) - set(ec.assignments(twin).values()))
    assert remediation['moves'][0]['candidates'] == spare
    stamp = result['diff']['after'][victim]['annotations']['egressip.ocp/remediated-at']
    assert result['diff'] == {'before': {victim: {'labels': {ec.LABEL: ''}}},
                              'after': {victim: {'labels': {}, 'annotations': {'egressip.ocp/remediated-at': stamp}}}}
    assert datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%SZ')
    assert ec.kube_writes(twin) == [] and vcsim_writes(twin) == {}
    dry_runs = [request for request in twin.kube_requests()['requests'] if request['verb'] == 'patch']
    assert dry_runs and all(request['dry_run'] for request in dry_runs)
    assert ec.labelled(twin, victim)


def test_remediation_unlabels_the_node_and_the_ip_moves_where_predicted(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    spare = sorted(set(ec.workers(twin)) - set(ec.assignments(twin).values()))
    twin.reset_kube_requests()
    result = run_module('egressip_verify', args(twin, remediate=True), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert ec.kube_writes(twin).count(('patch', 'nodes', victim)) == 1
    assert not ec.labelled(twin, victim)
    move = result['remediation']['moves'][0]
    assert (move['from'], move['to'], move['candidates']) == (victim, spare[0], spare)
    assert move['seconds'] > 0 and result['remediation']['seconds'] == move['seconds']
    assert result['remediation']['comparison'][0]['ok'] is True
    assert ec.assignments(twin)['10.20.0.200'] == spare[0]
    # the second verification, after the move
    assert result['summary']['ok'] is True and statuses(result) == {'10.20.0.200': 'ok', '10.20.0.201': 'ok'}
    assert 'egressip_blackhole_remediated' in ids(result)
    assert result['initial']['summary']['blackholed'] == 1
    assert all(probe['ok'] for probe in result['wire'])
    assert result['report']['remediation']['nodes'] == [victim]


def test_a_second_remediation_run_changes_nothing(twin, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip_verify', args(twin, remediate=True))
    assert result['_rc'] == 0 and result['changed'] is False
    assert 'remediation' not in result
    assert [write for write in ec.kube_writes(twin) if write[1] == 'nodes'] == []


def test_no_failback_when_the_node_is_repaired_and_labelled_again(twin, run_module):
    before = ec.assignments(twin)
    victim = sorted(set(ec.workers(twin)) - set(before.values()))[0]
    ec.set_nic_connected(twin, victim, True)
    ec.label(twin, victim)
    result = run_module('egressip_verify', args(twin))
    assert result['summary']['ok'] is True and ids(result) == []
    assert ec.assignments(twin) == before


def test_wire_without_a_selected_namespace_is_not_checked_or_uses_a_temporary_one(twin, run_module):
    twin.core_v1().delete_namespace('payments')
    twin.wait_for(lambda: 'payments' not in [ns.metadata.name for ns in twin.core_v1().list_namespace().items], what='payments gone')
    result = run_module('egressip_verify', args(twin))
    assert ids(result) == ['egressip_wire_not_checked'] and result['findings'][0]['severity'] == 'warning'
    assert 'no namespace is selected by EgressIP payments' in result['findings'][0]['message']
    twin.reset_kube_requests()
    result = run_module('egressip_verify', args(twin, wire={'echo_target': ec.ECHO_TARGET, 'create_namespace': True}))
    assert result['summary']['ok'] is True and ids(result) == []
    assert result['wire'][0]['namespace'] == 'egressip-probe-payments' and result['wire'][0]['ok'] is True
    writes = ec.kube_writes(twin)
    assert ('create', 'namespaces', None) in writes and ('delete', 'namespaces', 'egressip-probe-payments') in writes  # create: name in the body
    assert 'egressip-probe-payments' not in [ns.metadata.name for ns in twin.core_v1().list_namespace().items]
