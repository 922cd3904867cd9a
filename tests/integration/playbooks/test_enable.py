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


def test_second_run_changes_nothing(twin, run_playbook):
    before = _assigned(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0, run
    assert run.changed == 0, run
    assert _assigned(twin) == before
    assert 'Nothing changed: every step was already as the variables ask.' in run.stdout


def test_check_mode_on_the_enabled_cluster_reports_no_change_and_writes_nothing(twin, run_playbook):
    _reset(twin)
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS, check=True, diff=True)
    assert run.rc == 0, run
    assert run.changed == 0, run
    assert kube_writes(twin) == 0
    assert not vcsim_writes(twin)
