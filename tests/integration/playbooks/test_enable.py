"""playbooks/enable.yml end to end on the twin: check mode first (nothing written), apply, a second
run that changes nothing, check mode on the enabled cluster, and a preflight error that stops the
run before anything is written."""

import copy
import os

import pytest
import yaml

from twin.fixture import kube_writes, vcsim_writes

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)

pytestmark = pytest.mark.slow


def _reset(twin):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()


def _assigned(twin):
    egressip = twin.custom_objects().get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'payments')
    return {item['egressIP']: item['node'] for item in egressip.get('status', {}).get('items', [])}


def test_preflight_error_stops_before_any_write(twin, run_playbook):
    variables = copy.deepcopy(TWIN_VARS)
    variables['egressip_acknowledge_unsupported'] = False
    _reset(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=variables)
    assert run.rc != 0, run
    assert 'support_not_acknowledged' in run.stdout, run
    assert kube_writes(twin) == 0
    assert not vcsim_writes(twin)


def test_check_mode_on_a_fresh_cluster_writes_nothing(twin, run_playbook):
    _reset(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS, check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed > 0, run
    assert 'verification is skipped' in run.stdout, run
    assert kube_writes(twin) == 0
    assert not vcsim_writes(twin)


def test_apply_assigns_every_egress_ip_on_the_secondary_network(twin, run_playbook):
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0, run
    assert run.changed > 0, run
    assigned = _assigned(twin)
    assert sorted(assigned) == ['10.20.0.200', '10.20.0.201']
    assert len(set(assigned.values())) == 2, 'two IPs of one object never share a node'
    nodes = {node.metadata.name: node for node in twin.core_v1().list_node().items}
    for node in assigned.values():
        assert '10.20.0.' in nodes[node].metadata.annotations['k8s.ovn.org/host-cidrs']
        assert 'k8s.ovn.org/egress-assignable' in nodes[node].metadata.labels
    # one closing summary of what changed, step by step
    summary = run.stdout[run.stdout.index('This run changed:'):]
    for line in ('- port group ', '- VM NICs: add ', '- NMState policies: created ', '- egress-assignable: label added on ',
                 '- EgressIP objects: create 1 (', '- IP forwarding: '):
        assert line in summary, summary[:2000]


SKIPPING = 'Skipping the vSphere network, node network, egress node and EgressIP steps'
CONVERGED = 'egressip.ocp/converged'
FROM_PREFLIGHT = "Verified on preflight's read of this run"


def _record(twin):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    lease = client.CoordinationV1Api(twin.api_client()).read_namespaced_lease('egressip-lock', 'openshift-machine-api')
    return (lease.metadata.annotations or {}).get(CONVERGED)


def _vm_device_reads(twin):
    """PropertyCollector retrievals of the VMs' devices in vcsim's log (a read of every VM's NICs is one of them)."""
    return twin.vcsim_requests()['counts'].get('RetrievePropertiesEx', 0)


def _lists(twin, resources):
    """How many times each resource was listed, in the order of ``resources``."""
    entries = twin.kube_requests()['requests']
    return [sum(1 for entry in entries if entry['verb'] == 'list' and entry.get('resource') == resource) for resource in resources]


def test_a_converged_cluster_skips_the_steps_and_still_verifies(twin, run_playbook):
    """The apply recorded the converged fingerprint on the lock Lease. A second run with egressip_skip_when_converged
    false runs every step and finds nothing to write; a rerun with the record skips the four steps, verifies (with the
    vCenter facts preflight read) and keeps the record."""
    record = _record(twin)
    assert record and record.startswith('v1:'), record
    before = _assigned(twin)
    _reset(twin)
    full = run_playbook('playbooks/enable.yml', extra_vars=[TWIN_VARS, {'egressip_skip_when_converged': False}])
    assert full.rc == 0, full
    assert full.changed == 0, full
    assert SKIPPING not in full.stdout and FROM_PREFLIGHT not in full.stdout, full
    assert _assigned(twin) == before
    assert 'Nothing changed: every step was already as the variables ask.' in full.stdout
    full_reads = _vm_device_reads(twin)
    _reset(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0, run
    assert run.changed == 0, run
    assert SKIPPING in run.stdout and record in run.stdout, run
    for step in ('One vmxnet3 NIC per selected node VM', 'Base address and gateway route', 'Label k8s.ovn.org/egress-assignable',
                 'Apply the EgressIP objects'):
        assert 'skipping: [localhost]' in run.stdout.split(step, 1)[1].split('TASK [', 1)[0], step
    assert '2 egress IP(s), 2 assigned, 2 healthy' in run.stdout, run
    # preflight verified on its own read, in its module run: every Node, EgressIP and NodeNetworkState listed once
    assert _lists(twin, ('nodes', 'egressips.k8s.ovn.org', 'nodenetworkstates.nmstate.io')) == [1, 1, 1], twin.kube_requests()['counts']
    assert FROM_PREFLIGHT in run.stdout, 'the verify role returned the verification preflight made'
    assert kube_writes(twin) == 4, 'the wire check only: its namespace and pod, created and deleted'
    assert not vcsim_writes(twin)
    assert _vm_device_reads(twin) < full_reads, 'verify took the vCenter facts preflight read'
    assert _record(twin) == record


def test_drift_by_hand_runs_the_steps_again_and_records_anew(twin, run_playbook):
    """A label removed by hand changes the fingerprint: the steps run and put it back; the next run skips again. Check mode
    and a changed step option record nothing."""
    record = _record(twin)
    node = sorted(_assigned(twin).values())[0]
    twin.core_v1().patch_node(node, {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': None}}})
    check = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS, check=True)
    assert check.rc == 0 and SKIPPING not in check.stdout and check.changed > 0, check
    assert _record(twin) == record, 'check mode records nothing'
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0, run
    assert SKIPPING not in run.stdout, run
    assert run.changed > 0, run
    assert 'k8s.ovn.org/egress-assignable' in twin.core_v1().read_node(node).metadata.labels
    assert _record(twin) not in (None, record)
    again = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert again.rc == 0 and again.changed == 0 and SKIPPING in again.stdout, again
    # another value of a step option is another configuration: every step runs
    other = run_playbook('playbooks/enable.yml', extra_vars=[TWIN_VARS, {'egress_nodes_wait_timeout': 121}])
    assert other.rc == 0 and other.changed == 0 and SKIPPING not in other.stdout, other


def test_check_mode_on_the_enabled_cluster_reports_no_change_and_writes_nothing(twin, run_playbook):
    _reset(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS, check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed == 0, run
    assert kube_writes(twin) == 0
    assert not vcsim_writes(twin)
