"""Every writing module called directly holds the cluster lock (issue 13, "every writing playbook and module"): it waits
for another holder, then fails naming it with zero writes; with no holder it takes the Lease before its first write and
releases it after its last (a failed run too); check mode takes none; under a playbook that holds it, no second lock."""

import threading
import time

import pytest

from twin.fixture import kube_writes, lock_writes, vcsim_writes

import _twin_reads as reads

TWIN_OPTIONS = {'workers': 3}
LEASE = 'leases.coordination.k8s.io'
WORKER = 'ocp1-worker-0'
SELECTOR = {'node-role.kubernetes.io/worker': ''}
NETWORK = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.20'}
# options that pass each module's own checks, so the lock is what stops it
WRITERS = {
    'egress_nodes': {'selector': SELECTOR, 'cidr': NETWORK['cidr']},
    'egressip': {'objects': [{'name': 'team-a', 'egress_ips': ['10.20.0.100'], 'namespace_selector': {'matchLabels': {'team': 'a'}}}],
                 'network': {'cidr': NETWORK['cidr']}},
    'node_nic_address': dict(NETWORK, nodes=[{'node': WORKER, 'mac': '00:50:56:aa:bb:01'}]),
    'ip_forwarding': {'nodes': [{'node': WORKER, 'mac': '00:50:56:aa:bb:01'}]},
    'machineset_network': {'network': 'ocp-egress', 'datacenter': 'DC0', 'node_selector': SELECTOR},
    'egressip_failover': {'node': WORKER},
    'egressip_verify': {'remediate': True, 'network': {'cidr': NETWORK['cidr']}},
    'vsphere_portgroup': {'datacenter': 'DC0', 'name': 'ocp-egress-lock', 'switch_type': 'distributed', 'switch': 'DSwitch1'},
    'vsphere_vm_nic': {'datacenter': 'DC0', 'network': 'ocp-egress-lock', 'switch': 'DSwitch1', 'node_names': [WORKER]},
}


def next_transitions(twin):
    """leaseTransitions after one more holder: a new Lease starts at 0."""
    current = reads.lease(twin)
    return current.spec.lease_transitions + 1 if current else 0


def lease_requests(twin):
    return [entry for entry in twin.kube_requests()['requests'] if entry.get('resource') == LEASE]


@pytest.fixture
def alice_holds_it(twin, run_module):
    held = run_module('cluster_lock', {'holder': 'alice@bastion/run-1', 'playbook': 'enable'})
    assert held['_rc'] == 0 and held['acquired'], held
    yield held
    released = run_module('cluster_lock', {'state': 'released', 'holder': 'alice@bastion/run-1'})
    assert released['_rc'] == 0 and released['released'], released


@pytest.mark.parametrize('name', sorted(WRITERS))
def test_a_direct_call_waits_for_the_holder_then_fails_naming_it_with_zero_writes(twin, run_module, alice_holds_it, name):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    started = time.monotonic()
    result = run_module(name, dict(WRITERS[name], lock_timeout=2))
    waited = time.monotonic() - started
    assert result['_rc'] != 0 and not result['changed'], result
    assert result['msg'].startswith('[cluster_lock_held] Lease openshift-machine-api/egressip-lock is held by alice@bastion/run-1'), result['msg']
    assert 'since %s' % alice_holds_it['lock']['acquire_time'] in result['msg'] and 'lock_timeout=2' in result['msg'], result['msg']
    assert waited >= 2, 'it waited lock_timeout before failing'
    assert twin.kube_requests()['writes'] == 0 and not vcsim_writes(twin), 'nothing written, not even the Lease'
    assert reads.lease(twin).spec.holder_identity == 'alice@bastion/run-1'


@pytest.mark.parametrize('name', ['egress_nodes', 'vsphere_portgroup'])
def test_check_mode_takes_no_lock_and_reads_no_lease(twin, run_module, alice_holds_it, name):
    twin.reset_kube_requests()
    result = run_module(name, dict(WRITERS[name], lock_timeout=0), check=True)
    assert result['_rc'] == 0, result.get('msg')
    assert twin.kube_requests()['writes'] == 0 and not lease_requests(twin)


EGRESSIP = dict(WRITERS['egressip'], wait=False, allow_insufficient_capacity=True)  # nothing to wait for: no egress node yet


def test_a_direct_call_with_no_holder_takes_the_lease_before_its_first_write_and_releases_it_after_its_last(twin, run_module):
    expected = next_transitions(twin)
    twin.reset_kube_requests()
    result = run_module('egressip', EGRESSIP)
    assert result['_rc'] == 0 and result['changed'], result.get('msg')
    writes = [entry['resource'] for entry in twin.kube_requests()['requests']
              if entry['verb'] in ('create', 'update', 'patch', 'delete') and 200 <= entry.get('code', 0) < 300]
    assert writes[0] == LEASE and writes[-1] == LEASE and writes.count(LEASE) == 2 and kube_writes(twin) >= 1, writes
    after = reads.lease(twin)
    assert after.spec.holder_identity is None and after.spec.lease_transitions == expected, 'taken once, then released'
    twin.reset_kube_requests()
    again = run_module('egressip', EGRESSIP)
    assert again['_rc'] == 0 and not again['changed'] and kube_writes(twin) == 0 and lock_writes(twin) == 2


def test_the_module_is_named_while_it_holds_the_lease_and_a_failed_run_releases_it(twin, run_module):
    # the EgressIP write hangs 4 s, then fails (504): meanwhile the Lease names the module; afterwards nobody holds it
    twin.inject_kube_fault(verb='create', path='/egressips', code='timeout', seconds=4, count=5)
    outcome = {}
    args = dict(EGRESSIP, objects=[dict(EGRESSIP['objects'][0], name='team-b', egress_ips=['10.20.0.101'])])
    writer = threading.Thread(target=lambda: outcome.update(run_module('egressip', args)))
    writer.start()
    try:
        holder = twin.wait_for(lambda: (reads.lease(twin).spec.holder_identity or '') if writer.is_alive() else 'ended', timeout=60,
                               what='egressip holding the cluster lock')
        assert '/egressip-' in holder, holder
        loser = run_module('cluster_lock', {'holder': 'bob@laptop/run-2', 'wait_timeout': 0})
        assert loser['_rc'] != 0 and 'module egressip' in loser['msg'] and holder in loser['msg'], loser['msg']
    finally:
        writer.join(120)
        twin.clear_kube_faults()
    assert outcome['_rc'] != 0, 'the write failed'
    assert reads.lease(twin).spec.holder_identity is None, 'released although the run failed'


PLAYBOOK = '''
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - block:
        - ansible.builtin.import_role:
            name: ocp.egressip.cluster_lock
          vars:
            cluster_lock_playbook: lock-test
        - ocp.egressip.egress_nodes:
            selector: {"node-role.kubernetes.io/worker": ""}
            cidr: 10.20.0.0/24
            lock_timeout: 0
        - ocp.egressip.vsphere_portgroup:
            datacenter: DC0
            name: ocp-egress-lock
            switch_type: distributed
            switch: DSwitch1
            lock_timeout: 0
      always:
        - ansible.builtin.import_role:
            name: ocp.egressip.cluster_lock
            tasks_from: release
'''


def test_under_a_playbook_that_holds_the_lease_the_modules_take_no_second_lock(twin, run_playbook, tmp_path):
    expected = next_transitions(twin)
    path = tmp_path / 'lock-test.yml'
    path.write_text(PLAYBOOK)
    run = run_playbook(str(path))
    assert run.rc == 0, run  # lock_timeout 0: a module not recognising its run's lock would fail at once
    after = reads.lease(twin)
    assert after.spec.holder_identity is None and after.spec.lease_transitions == expected, 'taken once, by the playbook'
    assert run.changed == 1, 'the port group was created under the playbook\'s lock (the lock tasks never count as changed)'


def test_a_vcenter_module_without_any_kubernetes_connection_takes_no_lock_and_says_so(twin, run_module):
    twin.reset_kube_requests()
    args = dict(WRITERS['vsphere_portgroup'], name='ocp-egress-no-kube')
    result = run_module('vsphere_portgroup', args, env={'KUBECONFIG': None, 'K8S_AUTH_KUBECONFIG': None, 'HOME': '/nonexistent'})
    assert result['_rc'] == 0 and result['changed'], result.get('msg')
    warnings = [item if isinstance(item, str) else (item.get('event') or {}).get('msg', '') for item in result.get('warnings') or []]
    assert any('takes no cluster lock (Lease openshift-machine-api/egressip-lock)' in text for text in warnings), warnings
    assert lock_writes(twin) == 0  # (a playbook's renewal job may still read the Lease once after its run ended)
