"""egressip_verify against the twin with the egress NICs on a distributed port group (DSwitch1): healthy, then a
disconnected vNIC detected and remediated. The identity of the NIC is its port group key and switch UUID."""

import _egress_cluster as ec

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 13, 'carrier_loss': 'keep'}  # ignore-carrier: blackholes


def args(twin, **extra):
    options = dict(objects=[{'name': 'payments'}], network={'cidr': ec.CIDR}, fail_on_error=False, poll_interval=0.2,
                   wire={'echo_target': ec.ECHO_TARGET}, **ec.vsphere_options(twin, ec.DISTRIBUTED_PORTGROUP))
    options.update(extra)
    return options


def test_healthy_on_a_distributed_portgroup(twin, run_module):
    ec.make_egress_cluster(twin, distributed=True)
    result = run_module('egressip_verify', args(twin))
    assert result['summary']['ok'] is True and [item['id'] for item in result['findings']] == [], result['findings']
    assert all(node['nic']['network'] == 'ocp-egress-dpg' and node['nic']['portgroup_on_host'] is True for node in result['nodes'])
    assert all(row['status'] == 'ok' for row in result['egress_ips'])


def test_disconnected_vnic_on_the_distributed_portgroup_is_remediated(twin, run_module):
    victim = ec.assignments(twin)['10.20.0.200']
    ec.set_nic_connected(twin, victim, False)
    result = run_module('egressip_verify', args(twin, remediate=True))
    assert result['changed'] is True and result['remediation']['nodes'] == [victim]
    assert result['initial']['summary']['blackholed'] == 1
    assert result['remediation']['moves'][0]['to'] not in (None, victim)
    assert result['summary']['ok'] is True and all(probe['ok'] for probe in result['wire'])


def test_a_portgroup_that_does_not_exist_is_an_error(twin, run_module):
    missing = dict(ec.DISTRIBUTED_PORTGROUP, name='no-such-dpg')
    result = run_module('egressip_verify', dict(args(twin, wire=None), portgroup=missing))
    missing_findings = [item['message'] for item in result['findings'] if item['id'] == 'portgroup_missing']
    assert missing_findings and 'no-such-dpg does not exist on distributed switch DSwitch1' in missing_findings[0]
    assert result['summary']['ok'] is False
