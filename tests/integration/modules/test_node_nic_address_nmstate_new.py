"""node_nic_address on a newer NMState handler (nmstate 2.2.43 or later, kubernetes-nmstate that retries).

nmstate 2.2.43 resolves a profile name in a route's next-hop-interface (PR #2841), so the collection's policy
shape (kernel name) and the previous one (profile name) both work; a failing apply is retried by the handler
(Failing and Progressing both True, reason Retrying) before it fails for good: the module waits through the
retries and reports the final reason, never "Degraded" while the handler is still trying.
"""

from test_node_nic_address_nmstate import NNCP, W, args, conditions, enactment, nns, old_shape_policy, primary_mac

import _prepare as prepare

TWIN_OPTIONS = {'workers': 4, 'nmstate_version': '2.2.43', 'nmstate_retry_backoff': 0.5}


def test_the_handler_reports_its_release(twin):
    assert nns(twin, W[0])['status']['handlerNmstateVersion'] == 'nmstatectl 2.2.43'


def test_the_previous_policy_shape_works_on_this_release(twin):
    mac = prepare.add_nic(twin, W[0])
    twin.custom_objects().create_cluster_custom_object(body=old_shape_policy(W[0], mac, '10.20.0.10'), **NNCP)
    twin.wait_for(lambda: any(c.startswith('10.20.0.10/') for c in prepare.host_cidrs(twin, W[0])), timeout=20,
                  what='the base address of the old-shape policy in host-cidrs')
    config = nns(twin, W[0])['status']['currentState']['routes']['config']
    assert [(r['next-hop-interface'], r['metric']) for r in config] == [('ens224', 200)]


def test_node_nic_address_names_the_kernel_interface_here_too(twin, run_module):
    mac = prepare.add_nic(twin, W[1])
    result = run_module('node_nic_address', args([{'node': W[1], 'mac': mac}]))
    assert result['_rc'] == 0, result
    policy = twin.custom_objects().get_cluster_custom_object(name='egressip-' + W[1], **NNCP)
    assert policy['spec']['desiredState']['routes']['config'][0]['next-hop-interface'] == 'ens224'
    assert result['allocations'][0]['status'] == 'available'


def test_a_failing_apply_is_waited_through_the_retries_then_reported(twin, run_module):
    result = run_module('node_nic_address', args([{'node': W[2], 'mac': primary_mac(twin, W[2])}]))
    assert result['_rc'] != 0 and result['changed'] is True
    assert [item['id'] for item in result['findings']] == ['node_policy_degraded']
    # the final reason is nmstate's, not the handler's "Retrying n/5" of the attempts before
    assert 'rolling back desired state configuration' in result['msg'] and 'Retrying' not in result['msg']
    final = enactment(twin, W[2], 'egressip-' + W[2])
    assert conditions(final)['Failing']['reason'] == 'FailedToConfigure'
    assert conditions(final)['Progressing']['status'] == 'False'
    assert list(final['status']['retryCount'].values()) == [5]
