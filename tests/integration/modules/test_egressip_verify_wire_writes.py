"""The verify wire probe's own writes are reported (issue 13): the run says changed=false, but the probe pod and,
with create_namespace, the probe namespace are created and deleted; summary.wire_writes counts exactly the writes
the API saw, so a "0 writes" claim can subtract them or refuse them."""

from twin.fixture import kube_writes

import _egress_cluster as ec

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 11}
OBJECTS = [{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'], 'namespace_selector': {'matchLabels': {'team': 'payments'}}}]


def _verify(twin, run_module, wire, check=False):
    twin.reset_kube_requests()
    options = dict(objects=OBJECTS, network=dict(ec.NETWORK), wire=wire, fail_on_error=False, poll_interval=0.2,
                   **ec.vsphere_options(twin))
    return run_module('egressip_verify', options, check=check)


def test_wire_writes_are_counted_in_the_summary(twin, run_module):
    ec.make_egress_cluster(twin)
    result = _verify(twin, run_module, {'echo_target': ec.ECHO_TARGET})
    assert result['_rc'] == 0 and result['changed'] is False and result['summary']['ok'] is True, result
    assert result['summary']['wire_writes'] == kube_writes(twin) == 2  # the probe pod, created and deleted (one collection)
    assert result['report']['summary']['wire_writes'] == 2


def test_a_probe_namespace_counts_too(twin, run_module):
    twin.core_v1().delete_namespace('payments')
    twin.wait_for(lambda: 'payments' not in [ns.metadata.name for ns in twin.core_v1().list_namespace().items], what='payments gone')
    result = _verify(twin, run_module, {'echo_target': ec.ECHO_TARGET, 'create_namespace': True})
    assert result['wire'][0]['namespace'] == 'egressip-probe-payments', result
    assert result['summary']['wire_writes'] == kube_writes(twin) == 4


def test_check_mode_and_no_wire_write_nothing(twin, run_module):
    result = _verify(twin, run_module, {'echo_target': ec.ECHO_TARGET, 'create_namespace': True}, check=True)
    assert result['summary']['wire_writes'] == kube_writes(twin) == 0
    result = _verify(twin, run_module, None)
    assert 'wire_writes' not in result['summary'] and kube_writes(twin) == 0
