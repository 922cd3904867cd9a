"""ip_forwarding and verify against the twin's asynchronous Node Tuning Operator (issue 12 section 4, issue 13 section 2).

The twin's TuneD applies a changed Profile `tuned_delay` seconds later and can be told to fail on a node. Proven here:
ip_forwarding waits until every node's Profile runs the collection's profile (and does not without `wait`); a Degraded
node fails the run, naming the node and TuneD's message; removing forwarding from a NIC that carries egress IPs is
refused with zero writes (check mode too) unless `force`; verify names the blackhole once forwarding is off, and the wire
drops the traffic. Tests run in file order on one twin.
"""

import pytest

import _egress_cluster as ec
import _prepare as prepare

TWIN_OPTIONS = {'workers': 3, 'tuned_delay': 2.0, 'probe_interval': 0.5, 'random_seed': 17}
W = ['ocp1-worker-%d' % i for i in range(3)]
PROFILES = dict(group='tuned.openshift.io', version='v1', plural='profiles', namespace='openshift-cluster-node-tuning-operator')
OURS = 'egressip-forwarding-node-ens224'
FAILURE = " ERROR    tuned.plugins.plugin_sysctl: Failed to set sysctl parameter 'net.ipv4.conf.ens224.forwarding' to '1'"


@pytest.fixture(scope='module')
def macs(twin):
    """Each worker: a NIC on the egress port group, its base address, the egress-assignable label (no forwarding yet)."""
    ec.add_portgroup(twin)
    found = {}
    for index, node in enumerate(W):
        found[node] = ec.add_nic(twin, node)
        ec.address_policy(twin, node, found[node], '10.20.0.%d' % (10 + index), prepare.kernel_name(twin, node, found[node]))
        ec.label(twin, node)
    twin.wait_for(lambda: all('10.20.0.%d/24' % (10 + i) in ec.host_cidrs(twin, node) for i, node in enumerate(W)), timeout=30,
                  what='host-cidrs of the workers to show their secondary address')
    return found


def nics(macs, *nodes):
    return [{'node': node, 'mac': macs[node]} for node in nodes]


def profile(twin, node):
    return twin.custom_objects().get_namespaced_custom_object(name=node, **PROFILES)


def conditions(item):
    return dict((entry['type'], entry) for entry in (item.get('status') or {}).get('conditions') or [])


def ids(result):
    return [item['id'] for item in result['findings']]


def test_without_wait_the_run_returns_before_tuned_applies_it(twin, run_module, macs):
    result = run_module('ip_forwarding', {'nodes': nics(macs, W[0]), 'wait': False})
    assert result['_rc'] == 0 and result['changed'] is True and 'profiles' not in result, result
    # read at once: TuneD applies a changed profile tuned_delay (2 s) after the operator wrote it, which it does in the
    # twin's next round after the Tuned write (on a loaded machine that round may come after this read)
    assert profile(twin, W[0])['status']['tunedProfile'] == 'openshift-node'      # TuneD not yet: a cluster is not instant
    twin.wait_for(lambda: profile(twin, W[0])['spec']['config']['tunedProfile'] == OURS, timeout=10,
                  what='the operator to write the collection profile into the Profile of %s' % W[0])


def test_the_run_waits_until_every_profile_reports_it_applied(twin, run_module, macs):
    result = run_module('ip_forwarding', {'nodes': nics(macs, W[0], W[1]), 'wait_sleep': 1})
    assert result['_rc'] == 0 and result['changed'] is True, result
    assert [(item['node'], item['state']) for item in result['profiles']] == [(W[0], 'applied'), (W[1], 'applied')]
    for node in W[:2]:
        item = profile(twin, node)
        assert item['status']['tunedProfile'] == OURS and conditions(item)['Applied']['status'] == 'True'
    again = run_module('ip_forwarding', {'nodes': nics(macs, W[0], W[1]), 'wait_sleep': 1})
    assert again['changed'] is False and again['_rc'] == 0


def test_a_degraded_node_fails_the_run_naming_the_node_and_the_message(twin, run_module, macs):
    twin.set_tuned_failure(W[2], FAILURE)
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W), 'wait_sleep': 1})
    assert result['_rc'] != 0 and result['failed'] and result['changed'] is True, result
    assert ids(result) == ['node_forwarding_degraded']
    assert 'Profile %s is Degraded' % W[2] in result['msg'] and FAILURE.strip() in result['msg']
    assert 'after writing Tuned openshift-cluster-node-tuning-operator/egressip-forwarding' in result['msg']
    assert dict((item['node'], item['state']) for item in result['profiles']) == {W[0]: 'applied', W[1]: 'applied', W[2]: 'degraded'}
    twin.set_tuned_failure(W[2], None)  # the cause fixed: TuneD applies it again, and a rerun passes
    twin.wait_for(lambda: conditions(profile(twin, W[2]))['Degraded']['status'] == 'False', timeout=30, what='Profile healthy')
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W), 'wait_sleep': 1})
    assert result['_rc'] == 0 and result['changed'] is False, result


def test_a_late_profile_times_out_naming_the_node(twin, run_module, macs):
    twin.set_tuned_failure(W[2], None)
    result = run_module('ip_forwarding', {'nodes': nics(macs, W[0], W[1]), 'wait_sleep': 1})  # W[2] back to the stock profile
    assert result['_rc'] == 0, result
    twin.wait_for(lambda: profile(twin, W[2])['status']['tunedProfile'] == 'openshift-node', timeout=30, what='stock profile on W2')
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W), 'wait_sleep': 1, 'wait_timeout': 1})
    assert result['_rc'] != 0 and ids(result) == ['node_forwarding_timeout'], result
    assert 'profile %s not applied on node %s after 1 s' % (OURS, W[2]) in result['msg']
    assert run_module('ip_forwarding', {'nodes': nics(macs, *W), 'wait_sleep': 1})['_rc'] == 0  # a rerun converges


@pytest.fixture(scope='module')
def hosted(twin, macs):
    """EgressIP `payments` (10.20.0.200) assigned to one of the workers, whose NIC forwards."""
    ec.namespace(twin, 'payments', {'team': 'payments'})
    ec.create_egressip(twin, 'payments', ['10.20.0.200'])
    twin.wait_for(lambda: ec.assignments(twin), timeout=30, what='10.20.0.200 assigned')
    return ec.assignments(twin)['10.20.0.200']


def test_absent_is_refused_while_egress_ips_are_assigned_with_zero_writes(twin, run_module, macs, hosted):
    for check in (True, False):
        twin.reset_kube_requests()
        result = run_module('ip_forwarding', {'state': 'absent'}, check=check)
        assert result['_rc'] != 0 and ids(result) == ['node_forwarding_hosts_egress_ips'], result
        assert ('removing IPv4 forwarding (net.ipv4.conf.ens224.forwarding=1) from ens224 of node %s would drop the traffic of IPv4 '
                'egress IP(s) 10.20.0.200 (EgressIP payments)' % hosted) in result['msg']
        assert 'nothing was written' in result['msg'] and ec.kube_writes(twin) == [] and result['changed'] is False
    assert profile(twin, hosted)['spec']['config']['tunedProfile'] == OURS


def test_leaving_the_hosting_node_out_is_refused_too(twin, run_module, macs, hosted):
    twin.reset_kube_requests()
    others = [node for node in W if node != hosted]
    result = run_module('ip_forwarding', {'nodes': nics(macs, *others)})
    assert result['_rc'] != 0 and ids(result) == ['node_forwarding_hosts_egress_ips'] and ec.kube_writes(twin) == []
    # the primary machine network is not carried by the secondary NIC: given the secondary cidr, only its IPs count
    result = run_module('ip_forwarding', {'nodes': nics(macs, *others), 'cidr': '10.30.0.0/24'}, check=True)
    assert result['_rc'] == 0 and result['changed'] is True and ec.kube_writes(twin) == []


def verify_args(**extra):
    return dict({'network': {'cidr': ec.CIDR}, 'fail_on_error': False, 'poll_interval': 0.2}, **extra)


def test_verify_sees_forwarding_on_then_names_the_blackhole_when_it_goes(twin, run_module, macs, hosted):
    result = run_module('egressip_verify', verify_args())
    assert result['_rc'] == 0 and result['summary']['ok'] is True and 'blackhole_forwarding_off' not in ids(result), result
    assert dict((row['name'], row['forwarding']) for row in result['nodes'])[hosted] is True
    result = run_module('ip_forwarding', {'state': 'absent', 'force': True})
    assert result['_rc'] == 0 and result['changed'] is True, result
    twin.wait_for(lambda: profile(twin, hosted)['status']['tunedProfile'] == 'openshift-node', timeout=30, what='stock profile again')
    result = run_module('egressip_verify', verify_args(wire={'echo_target': ec.ECHO_TARGET}))
    assert result['summary']['ok'] is False and 'blackhole_forwarding_off' in ids(result), result
    finding = next(item for item in result['findings'] if item['id'] == 'blackhole_forwarding_off')
    assert finding['severity'] == 'error' and hosted in finding['message'] and '10.20.0.200' in finding['message']
    assert 'IP forwarding is off on ens224' in finding['message'] and 'openshift-node' in finding['message']
    assert dict((row['ip'], row['status']) for row in result['egress_ips']) == {'10.20.0.200': 'blackhole'}
    assert result['wire'][0]['outcome'] == 'no_answer'  # the twin's wire drops it: TuneD no longer forwards on ens224


def test_verify_names_a_degraded_profile(twin, run_module, macs, hosted):
    twin.set_tuned_failure(hosted, FAILURE, applied=False)  # the other possibility: TuneD never logged the profile applied
    result = run_module('ip_forwarding', {'nodes': nics(macs, *W), 'wait_sleep': 1})
    assert result['_rc'] != 0 and ids(result) == ['node_forwarding_degraded'], result
    result = run_module('egressip_verify', verify_args())
    finding = next(item for item in result['findings'] if item['id'] == 'blackhole_forwarding_off')
    assert 'Profile %s is Degraded' % hosted in finding['message'] and FAILURE.strip() in finding['message']
    twin.set_tuned_failure(hosted, None)
