"""What the collection does not own stays where it is through enable, verify, the failover drill and disable (issue 13,
section 2): a control-plane node outside egressip_nodes.selector labelled egress-assignable by hand hosts a primary-network
EgressIP made by hand (`legacy`, no managed-by label), as an OpenShift SDN migration leaves it.

Today's defect: enable (egress_nodes exclusive) removed that label and the primary-network egress IP moved. Now the label
is kept (no record egressip.ocp/egress-assignable beside it: set by hand) and reported; every playbook leaves `legacy` on
its node. migrate and upgrade prove the same in test_migrate.py and test_upgrade.py (their hand-made setups carry one too).
Tests run in file order on one twin.
"""

import copy
import os

import pytest
import yaml

from twin.fixture import kube_writes

import _by_hand as bh  # pylint: disable=wrong-import-order

pytestmark = pytest.mark.slow
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)
HAND_LABELLED = 'ocp1-master-0'
LEGACY = ('legacy', '192.168.10.250')  # the primary network (br-ex) of the twin's nodes: 192.168.10.0/24
RECORD = 'egressip.ocp/egress-assignable'


@pytest.fixture(scope='module')
def unowned(twin):
    bh.label(twin, HAND_LABELLED, {bh.ASSIGNABLE: ''})
    twin.core_v1().create_namespace({'metadata': {'name': 'legacy'}})
    twin.custom_objects().create_cluster_custom_object(body={
        'apiVersion': 'k8s.ovn.org/v1', 'kind': 'EgressIP', 'metadata': {'name': LEGACY[0]},
        'spec': {'egressIPs': [LEGACY[1]], 'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'legacy'}}}}, **bh.EGRESSIPS)
    twin.wait_for(lambda: bh.assignments(twin).get(LEGACY) == HAND_LABELLED, timeout=30, what='legacy on the hand-labelled node')
    return {LEGACY: HAND_LABELLED}


def node(twin, name):
    return twin.core_v1().read_node(name).metadata


def unowned_placement(twin):
    return dict((key, value) for key, value in bh.assignments(twin).items() if key == LEGACY)


def test_enable_keeps_the_hand_made_label_and_the_primary_network_placement(twin, unowned, run_playbook):
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0, run
    assert bh.ASSIGNABLE in (node(twin, HAND_LABELLED).labels or {}), 'a label the collection did not set is never removed'
    assert RECORD not in (node(twin, HAND_LABELLED).annotations or {})
    assert unowned_placement(twin) == unowned
    assert 'egress_label_set_by_hand' in run.stdout and HAND_LABELLED in run.stdout, run
    for worker in ('ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2'):
        assert (node(twin, worker).annotations or {}).get(RECORD) == 'ocp.egressip', 'the collection records the labels it sets'


def test_rerun_changes_nothing(twin, unowned, run_playbook):
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0 and run.changed == 0, run
    assert unowned_placement(twin) == unowned


def test_labels_of_a_release_before_the_record_are_kept_then_handed_over(twin, unowned, run_playbook):
    workers = ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
    payments = dict((key, value) for key, value in bh.assignments(twin).items() if key[0] == 'payments')
    for worker in workers:  # as an older release left them: the label without the record
        twin.core_v1().patch_node(worker, {'metadata': {'annotations': {RECORD: None}}})
    run = run_playbook('playbooks/enable.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0 and run.changed == 0, run
    assert '[egress_label_set_by_hand] node ocp1-worker-0 carries' in run.stdout, run
    run = run_playbook('playbooks/enable.yml', extra_vars=[TWIN_VARS, {'egress_nodes_adopt': True}])
    assert run.rc == 0 and run.changed == 1, run
    assert all((node(twin, worker).annotations or {}).get(RECORD) == 'ocp.egressip' for worker in workers)
    assert RECORD not in (node(twin, HAND_LABELLED).annotations or {}), 'a label outside the selector is never adopted'
    assert unowned_placement(twin) == unowned
    assert dict((key, value) for key, value in bh.assignments(twin).items() if key[0] == 'payments') == payments


def test_verify_moves_nothing(twin, unowned, run_playbook):
    run = run_playbook('playbooks/verify.yml', extra_vars=TWIN_VARS)
    assert unowned_placement(twin) == unowned, run
    assert bh.ASSIGNABLE in (node(twin, HAND_LABELLED).labels or {}), run


def test_the_drill_leaves_the_primary_network_egress_ip_where_it_is(twin, unowned, run_playbook):
    run = run_playbook('playbooks/failover_drill.yml', extra_vars=TWIN_VARS)
    assert run.rc == 0, run
    assert unowned_placement(twin) == unowned, run
    assert '(item=ocp1-worker-' in run.stdout and '(item=%s)' % HAND_LABELLED not in run.stdout, run


def test_a_drill_step_on_the_hand_labelled_node_needs_a_confirmation(twin, unowned, run_module):
    twin.reset_kube_requests()
    result = run_module('egressip_failover', {'node': HAND_LABELLED, 'trigger': 'unlabel', 'observe_seconds': 0})
    assert result['_rc'] != 0, result
    assert '192.168.10.250 of legacy (primary network)' in result['msg'] and 'confirm_unowned_moves: true' in result['msg'], result
    assert kube_writes(twin) == 0
    assert unowned_placement(twin) == unowned and bh.ASSIGNABLE in (node(twin, HAND_LABELLED).labels or {})


def test_disable_refuses_assigned_egressips_then_keeps_what_it_does_not_own(twin, unowned, run_playbook):
    twin.reset_kube_requests()
    refused = run_playbook('playbooks/disable.yml', extra_vars=TWIN_VARS)
    assert refused.rc != 0 and 'disable_delete_assigned_egressips' in refused.stdout, refused
    assert kube_writes(twin) == 0
    variables = dict(copy.deepcopy(TWIN_VARS), disable_delete_assigned_egressips=True)
    run = run_playbook('playbooks/disable.yml', extra_vars=variables)
    assert run.rc == 0, run
    assert 'payments' not in set(name for name, _ip in bh.assignments(twin))
    assert unowned_placement(twin) == unowned
    assert bh.ASSIGNABLE in (node(twin, HAND_LABELLED).labels or {})
    again = run_playbook('playbooks/disable.yml', extra_vars=variables)
    assert again.rc == 0 and again.changed == 0, again
    assert unowned_placement(twin) == unowned
