"""The egressips role against the twin: from the public variables file, twice, and in check mode."""

import json

import pytest

from twin.fixture import kube_writes

import _prepare as prepare
from _prepare import NETWORK

TWIN_OPTIONS = {'workers': 3, 'random_seed': 3}
VARIABLES = {
    'egressip_network': dict(NETWORK, route_metric=200),
    'egressip_objects': [{'name': 'payments', 'egress_ips': ['10.20.0.200', '10.20.0.201'],
                          'namespace_selector': {'matchLabels': {'team': 'payments'}}}],
}


@pytest.fixture(scope='module', autouse=True)
def capable(twin):
    return prepare.make_capable(twin, prepare.workers(twin))


@pytest.fixture(name='playbook')
def playbook_fixture(tmp_path):
    path = tmp_path / 'egressips.yml'
    path.write_text('- hosts: localhost\n  connection: local\n  gather_facts: false\n  roles:\n    - role: ocp.egressip.egressips\n'
                    '  post_tasks:\n    - ansible.builtin.copy:\n        content: "{{ {\'result\': egressips_result, '
                    '\'plan\': egressips_plan_result | default(none)} | to_json }}"\n        dest: %s\n      check_mode: false\n      changed_when: false\n'
                    % (tmp_path / 'facts.json'))
    return str(path)


def facts(playbook):
    with open(playbook.replace('egressips.yml', 'facts.json'), encoding='utf-8') as handle:
        return json.load(handle)


def test_check_mode_writes_nothing(twin, run_playbook, playbook):
    twin.reset_kube_requests()
    run = run_playbook(playbook, VARIABLES, check=True, diff=True)
    assert run.rc == 0, run
    assert kube_writes(twin) == 0 and prepare.egressip(twin, 'payments') is None
    assert facts(playbook)['result']['changed'] is True


def test_apply_then_rerun_changes_nothing(twin, run_playbook, playbook):
    run = run_playbook(playbook, VARIABLES)
    assert run.rc == 0, run
    result = facts(playbook)
    assert result['result']['egressips'][0]['action'] == 'create'
    assert sorted(item['egressIP'] for item in result['result']['egressips'][0]['assignments']) == ['10.20.0.200', '10.20.0.201']
    assert result['plan']['single_points_of_failure'] == [] and len(result['plan']['what_if']) == 3
    run = run_playbook(playbook, VARIABLES)
    assert run.rc == 0 and run.changed == 0, run


def test_bad_variables_fail_naming_the_field(twin, run_playbook, playbook):
    twin.reset_kube_requests()
    bad = dict(VARIABLES, egressip_objects=[dict(VARIABLES['egressip_objects'][0], egress_ips=['10.20.0.200', '10.30.0.9'])])
    run = run_playbook(playbook, bad)
    assert run.rc != 0 and 'objects[0].egress_ips[1] 10.30.0.9 (EgressIP payments) is outside network.cidr 10.20.0.0/24' in run.stdout
    assert kube_writes(twin) == 0


def test_single_point_of_failure_can_be_refused(twin, run_playbook, playbook):
    prepare.label(twin, prepare.workers(twin)[2], present=False)
    variables = dict(VARIABLES, egressips_fail_on_single_point_of_failure=True, egressips_allow_insufficient_capacity=True,
                     egressips_wait_timeout=30)
    run = run_playbook(playbook, variables)
    assert run.rc != 0 and 'single points of failure' in run.stdout, run
    prepare.label(twin, prepare.workers(twin)[2])


def test_absent_removes_the_objects(twin, run_playbook, playbook):
    run = run_playbook(playbook, dict(VARIABLES, egressips_state='absent'))
    assert run.rc != 0 and 'egressip_delete_assigned' in run.stdout, run  # it carries traffic: refused without force
    assert prepare.egressip(twin, 'payments') is not None
    run = run_playbook(playbook, dict(VARIABLES, egressips_state='absent', egressips_force=True))
    assert run.rc == 0 and run.changed == 1, run
    assert prepare.egressip(twin, 'payments') is None
