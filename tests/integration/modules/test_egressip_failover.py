"""egressip_failover against the twin: each trigger with measured times, the prediction held, cordon and no failback.

The tests share one twin (three egress workers, two egress IPs, one spare) and run in order; each
step restores what it failed. Times are only checked for consistency (measured, positive), never
for speed.
"""

from twin.fixture import vcsim_writes

import _egress_cluster as ec

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 5, 'carrier_loss': 'keep'}  # ignore-carrier: blackholes


def args(twin, node, **extra):
    options = dict(node=node, poll_interval=0.2, wait_timeout=60, observe_seconds=2, **ec.vsphere_options(twin))
    del options['cluster']
    options.update(extra)
    return options


def ids(result):
    return sorted(item['id'] for item in result['findings'])


def holder(twin, ip='10.20.0.200'):
    return ec.assignments(twin)[ip]


def spare(twin):
    return sorted(set(ec.workers(twin)) - set(ec.assignments(twin).values()))


def test_unlabel_in_check_mode_predicts_and_writes_nothing(twin, run_module):
    ec.make_egress_cluster(twin)
    node = holder(twin)
    twin.reset_kube_requests()
    result = run_module('egressip_failover', args(twin, node), check=True, diff=True)
    assert result['_rc'] == 0 and result['changed'] is True and result['action'] == 'unlabel'
    assert result['prediction']['effect'] == 'moves'
    assert result['prediction']['moved'][0]['candidates'] == spare(twin)
    assert result['diff'] == {'before': {'egress_assignable': True}, 'after': {'egress_assignable': False}}
    assert ec.kube_writes(twin) == [] and ec.labelled(twin, node)
    assert result['moves'] == [] and result['reassignment_seconds'] is None


def test_unlabel_moves_the_ip_to_a_predicted_node_with_measured_times_and_the_wire(twin, run_module):
    node, target = holder(twin), spare(twin)
    result = run_module('egressip_failover', args(twin, node, wire={'echo_target': ec.ECHO_TARGET}))
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert not ec.labelled(twin, node)
    move = result['moves'][0]
    assert (move['egressip'], move['ip'], move['from'], move['to']) == ('payments', '10.20.0.200', node, target[0])
    assert move['seconds'] > 0 and result['reassignment_seconds'] == move['seconds']
    assert result['comparison'] == [{'egressip': 'payments', 'ip': '10.20.0.200', 'predicted': target, 'may_be_unassigned': False,
                                     'actual': target[0], 'ok': True}]
    wire = result['wire'][0]
    assert wire['ok'] is True and wire['ips'] == ['10.20.0.200'] and wire['seen']['10.20.0.200'] == wire['seconds']
    assert wire['seconds'] >= move['seconds'] and wire['attempts'] >= 4  # at least two probes per IP of the object
    assert ids(result) == []
    assert {'egressip': 'payments', 'ip': '10.20.0.200', 'node': target[0]} in result['after']


def test_unlabel_again_changes_nothing(twin, run_module):
    node = spare(twin)[0]  # the node unlabelled above now hosts nothing and has no label
    assert not ec.labelled(twin, node)
    twin.reset_kube_requests()
    result = run_module('egressip_failover', args(twin, node))
    assert result['_rc'] == 0 and result['changed'] is False and result['action'] == 'none'
    assert ec.kube_writes(twin) == []


def test_restore_labels_the_node_and_nothing_fails_back(twin, run_module):
    node = spare(twin)[0]
    before = ec.assignments(twin)
    result = run_module('egressip_failover', args(twin, node, state='restored'), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True and result['action'] == 'label'
    assert ec.labelled(twin, node) and result['seconds'] >= 0
    assert result['unexpected_moves'] == [] and result['observed_seconds'] >= 2 and ids(result) == []
    assert ec.assignments(twin) == before
    again = run_module('egressip_failover', args(twin, node, state='restored'))
    assert again['changed'] is False


def test_cordon_moves_nothing(twin, run_module):
    node = holder(twin)
    before = ec.assignments(twin)
    result = run_module('egressip_failover', args(twin, node, trigger='cordon'))
    assert result['_rc'] == 0 and result['changed'] is True and result['action'] == 'cordon'
    assert twin.core_v1().read_node(node).spec.unschedulable is True
    assert result['prediction']['effect'] == 'none'
    assert result['unexpected_moves'] == [] and result['observed_seconds'] >= 2
    assert [move['to'] for move in result['moves']] == [None] and ids(result) == []
    assert ec.assignments(twin) == before
    restored = run_module('egressip_failover', args(twin, node, trigger='cordon', state='restored'))
    assert restored['changed'] is True and restored['action'] == 'uncordon'
    assert not twin.core_v1().read_node(node).spec.unschedulable


def test_disconnect_nic_is_a_blackhole_nothing_moves(twin, run_module):
    node = holder(twin)
    before = ec.assignments(twin)
    twin.reset_vcsim_requests()
    check = run_module('egressip_failover', args(twin, node, trigger='disconnect_nic'), check=True)
    assert check['changed'] is True and vcsim_writes(twin) == {}
    result = run_module('egressip_failover', args(twin, node, trigger='disconnect_nic'), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert vcsim_writes(twin) == {'ReconfigVM_Task': 1}
    assert result['diff']['after']['nic_connected'] is False
    assert result['prediction']['effect'] == 'blackhole'
    assert result['prediction']['blackholed'] == [{'egressip': 'payments', 'ip': '10.20.0.200'}]
    assert result['unexpected_moves'] == [] and ec.assignments(twin) == before
    nic = next(item for item in ec.inventory_vm(twin, node)['nics'] if item['network'] == ec.PORTGROUP['name'])
    assert nic['connected'] is False
    assert ids(result) == []


def test_verify_remediates_the_blackhole_then_restore_reconnects_and_relabels(twin, run_module):
    node = holder(twin)
    verify = run_module('egressip_verify', dict(objects=[{'name': 'payments'}], network={'cidr': ec.CIDR}, remediate=True,
                                                fail_on_error=False, poll_interval=0.2, **ec.vsphere_options(twin)))
    assert verify['changed'] is True and verify['remediation']['nodes'] == [node]
    assert verify['remediation']['moves'][0]['to'] and verify['remediation']['seconds'] > 0
    result = run_module('egressip_failover', args(twin, node, trigger='disconnect_nic', state='restored'))
    assert result['changed'] is True and result['action'] == 'reconnect_nic+label'
    assert ec.labelled(twin, node)
    nic = next(item for item in ec.inventory_vm(twin, node)['nics'] if item['network'] == ec.PORTGROUP['name'])
    assert nic['connected'] is True
    assert result['unexpected_moves'] == []


def test_a_node_hosting_nothing_reports_nothing_to_move(twin, run_module):
    node = spare(twin)[0]
    result = run_module('egressip_failover', args(twin, node))
    assert result['changed'] is True and result['moves'] == []
    assert ids(result) == ['egressip_drill_nothing_to_move']
    run_module('egressip_failover', args(twin, node, state='restored', observe_seconds=0))


def test_power_off_moves_the_ip_after_the_reachability_probe_and_power_on_restores(twin, run_module):
    node, before = holder(twin), ec.assignments(twin)
    twin.reset_vcsim_requests()
    result = run_module('egressip_failover', args(twin, node, trigger='power_off', confirm_power_off=True), diff=True)
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert vcsim_writes(twin) == {'PowerOffVM_Task': 1}
    assert ec.inventory_vm(twin, node)['power_state'] == 'poweredOff'
    assert result['diff'] == {'before': {'power_state': 'poweredOn'}, 'after': {'power_state': 'poweredOff'}}
    move = result['moves'][0]
    assert move['from'] == node and move['to'] not in (None, node) and move['seconds'] > 0
    assert result['comparison'][0]['ok'] is True and ids(result) == []
    restored = run_module('egressip_failover', args(twin, node, trigger='power_off', state='restored'))
    assert restored['changed'] is True and restored['action'] == 'power_on'
    assert ec.inventory_vm(twin, node)['power_state'] == 'poweredOn'
    assert restored['unexpected_moves'] == []
    assert ec.assignments(twin)['10.20.0.200'] == move['to'] != before['10.20.0.200']  # no failback


def test_bad_input_and_power_off_without_confirmation_do_nothing(twin, run_module):
    node = holder(twin)
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    result = run_module('egressip_failover', args(twin, node, trigger='power_off'))
    assert result['_rc'] != 0 and 'set confirm_power_off: true' in result['msg']
    result = run_module('egressip_failover', dict(node=node, trigger='disconnect_nic', poll_interval=0))
    assert 'set datacenter' in result['msg'] and 'set portgroup' in result['msg'] and 'poll_interval=0.0 must be above 0' in result['msg']
    assert twin.kube_requests()['counts']['list'] == 0 and twin.vcsim_requests()['counts'].get('Login', 0) == 0
    result = run_module('egressip_failover', args(twin, 'no-such-node'))
    assert result['_rc'] != 0 and 'node=no-such-node: no such node in the cluster (nodes: ' in result['msg']
    assert ec.kube_writes(twin) == [] and vcsim_writes(twin) == {}
