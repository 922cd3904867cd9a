"""The ocp.egressip.preflight role against the twin: prints warnings and a summary, stops on errors with zero writes."""

import os

import yaml

from twin.fixture import kube_writes, vcsim_writes

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
VARIABLES = os.path.join(REPO, 'examples', 'twin-cluster.yml')


def playbook(tmp_path):
    path = tmp_path / 'preflight.yml'
    path.write_text(yaml.safe_dump([{
        'name': 'preflight only', 'hosts': 'localhost', 'gather_facts': False,
        'roles': ['ocp.egressip.preflight'],
        'post_tasks': [{'name': 'facts for the test', 'ansible.builtin.debug': {
            'msg': 'FACTS {{ preflight_summary.error }} {{ preflight_summary.warning }} {{ preflight_primary_egressips | length }}'}}],
    }]))
    return str(path)


def variables(**changes):
    with open(VARIABLES, encoding='utf-8') as handle:
        data = yaml.safe_load(handle)
    data.update(changes)
    return data


def test_role_passes_on_the_twin_and_prints_warnings_and_summary(twin, run_playbook, tmp_path):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run = run_playbook(playbook(tmp_path), variables())
    assert run.rc == 0, run
    assert 'WARNING [infrastructure_node_networking_not_pinned]' in run.stdout
    assert 'Preflight (plan): 0 error(s), 1 warning(s)' in run.stdout
    assert 'FACTS 0 1 0' in run.stdout
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}


def test_role_stops_on_errors_and_names_them(twin, run_playbook, tmp_path):
    twin.reset_kube_requests()
    run = run_playbook(playbook(tmp_path), variables(egressip_acknowledge_unsupported=False))
    assert run.rc != 0, run
    assert '[support_not_acknowledged]' in run.stdout and 'nothing was written' in run.stdout
    assert 'FACTS' not in run.stdout
    assert kube_writes(twin) == 0


def test_keys_of_other_steps_pass_and_unknown_keys_are_refused(twin, run_playbook, tmp_path):
    data = variables()
    data['egressip_vsphere']['portgroup']['security'] = {'forged_transmits': False}
    data['egressip_drill'] = {'trigger': 'unlabel'}
    run = run_playbook(playbook(tmp_path), data)
    assert run.rc == 0, run
    # keys no step reads were silently ignored before (issue 13): now refused, naming the nearest known key
    data['egressip_network']['interface_name'] = 'egressip0'
    data['egressip_objects'][0]['state'] = 'present'
    run = run_playbook(playbook(tmp_path), data)
    assert run.rc != 0, run
    assert '[variables_unknown_key] egressip_network.interface_name is not a key of egressip_network' in run.stdout, run
    assert 'egressip_objects[0].state is not a key' in run.stdout, run


def test_fail_on_error_false_only_records(twin, run_playbook, tmp_path):
    data = variables(egressip_acknowledge_unsupported=False, preflight_fail_on_error=False)
    run = run_playbook(playbook(tmp_path), data)
    assert run.rc == 0, run
    assert 'FACTS 1 1 0' in run.stdout
