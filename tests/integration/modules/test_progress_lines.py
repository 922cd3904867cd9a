"""Progress lines while a module waits (issue 19): the action plugin of ip_forwarding (and node_nic_address) runs the
module in tries of at most `progress_interval` s of waiting and prints, between two tries, a line naming what is still
awaited. Against the twin's asynchronous TuneD (it applies a changed Profile `tuned_delay` s later), through
ansible-playbook, since the action plugin runs on the controller. Tests run in file order on one twin.

The twin's TuneD delay is long beside the tries (15 s against tries of 2 s) so that the counts hold however slow the
machine starts a module: a try costs its start-up (seconds on a loaded CI machine) plus at most 2 s of waiting, so at
least one try ends before TuneD applies unless a start-up takes over 13 s. The tests assert what the tries must show
(a line per unfinished try, the write in the first try's diff, the module's own limit), not how many tries a given
machine manages.
"""

import json
import re

import yaml

import test_ip_forwarding_tuned as tuned

W, nics = tuned.W, tuned.nics
macs = tuned.macs  # the fixture: each worker's NIC, base address and egress label

TWIN_OPTIONS = {'workers': 3, 'tuned_delay': 15.0, 'probe_interval': 0.5, 'random_seed': 23}


def playbook(tmp_path, module_args, module='ip_forwarding', name='Forwarding on the egress NIC'):
    """A play running the module once with module_args and printing its registered result as JSON."""
    path = tmp_path / 'forwarding.yml'
    path.write_text(yaml.safe_dump([{
        'name': 'Progress', 'hosts': 'localhost', 'connection': 'local', 'gather_facts': False,
        'tasks': [
            {'name': name, 'ocp.egressip.%s' % module: module_args, 'register': 'forwarding', 'ignore_errors': True},
            {'name': 'Result', 'ansible.builtin.debug': {'msg': 'RESULT {{ forwarding | to_json }}'}},
        ]}]))
    return str(path)


def result_of(run):
    line = [text for text in run.stdout.splitlines() if '"msg": "RESULT ' in text][0]
    return json.loads(json.loads('{%s}' % line.strip().rstrip(','))['msg'][len('RESULT '):])


def progress_lines(run):
    return [line for line in run.stdout.splitlines() if 'still waiting after' in line]


def test_a_long_wait_prints_a_line_per_try_naming_what_is_awaited(run_playbook, tmp_path, macs):
    args = {'nodes': nics(macs, W[0]), 'wait_sleep': 1, 'progress_interval': 2}
    run = run_playbook(playbook(tmp_path, args))
    result = result_of(run)
    assert result.get('failed') is not True and result['changed'] is True, run
    # TuneD applies 15 s after the write: tries of at most 2 s of waiting, so a progress line before it is applied
    lines = progress_lines(run)
    assert lines and result['tries'] == len(lines) + 1, run.stdout
    assert all('Forwarding on the egress NIC: still waiting after' in line and '(of wait_timeout 300 s)' in line
               and 'Profile %s' % W[0] in line for line in lines), lines
    assert [(item['node'], item['state']) for item in result['profiles']] == [(W[0], 'applied')]
    assert result['diff']['before'] != result['diff']['after']   # the first try's write is in the task's diff


def test_a_wait_that_ends_in_its_first_try_prints_nothing_and_a_second_run_changes_nothing(run_playbook, tmp_path, macs):
    run = run_playbook(playbook(tmp_path, {'nodes': nics(macs, W[0]), 'wait_sleep': 1, 'progress_interval': 2}))
    result = result_of(run)
    assert result['changed'] is False and result['tries'] == 1 and not progress_lines(run), run


def test_the_time_limit_is_the_modules_own_and_the_failure_says_how_long_it_waited(run_playbook, tmp_path, macs):
    args = {'nodes': nics(macs, W[1]), 'wait_sleep': 1, 'progress_interval': 2, 'wait_timeout': 4}
    run = run_playbook(playbook(tmp_path, args))
    result = result_of(run)
    assert result['failed'] is True and result['changed'] is True, run
    assert [item['id'] for item in result['findings']] == ['node_forwarding_timeout']
    waited = re.search(r'\(waited ([0-9]+) s in all, in tries of up to 2 s: progress_interval\)$', result['msg'])
    # the limit stopped it: at least wait_timeout, and TuneD (15 s) had not applied (the timeout finding says so)
    assert waited and int(waited.group(1)) >= 4, result['msg']
    assert result['tries'] == len(progress_lines(run)) + 1, run.stdout


def test_zero_waits_in_one_try_and_check_mode_does_not_try_again(run_playbook, tmp_path, macs):
    run = run_playbook(playbook(tmp_path, {'nodes': nics(macs, W[2]), 'wait_sleep': 1, 'progress_interval': 0}))
    result = result_of(run)
    assert result['changed'] is True and 'tries' not in result and not progress_lines(run), run
    run = run_playbook(playbook(tmp_path, {'nodes': nics(macs, W[2]), 'state': 'absent', 'progress_interval': 2}), check=True)
    assert 'tries' not in result_of(run) and not progress_lines(run), run


def test_waiting_for_another_runs_lock_names_the_lease_and_counts_every_try(run_playbook, run_module, tmp_path):
    lock = {'state': 'acquired', 'namespace': 'openshift-machine-api', 'name': 'progress-lock', 'playbook': 'enable'}
    first = run_module('cluster_lock', dict(lock, holder='alice@ci/run-1'))
    assert first['_rc'] == 0 and first['changed'] is True, first
    try:
        run = run_playbook(playbook(tmp_path, dict(lock, holder='bob@ci/run-2', wait_timeout=12, progress_interval=2),
                                    module='cluster_lock', name='Take the cluster lock'))
        result = result_of(run)
        assert result['failed'] is True and [item['id'] for item in result['findings']] == ['cluster_lock_held'], run
        lines = progress_lines(run)
        assert lines and all('Take the cluster lock: still waiting after' in line and '(of wait_timeout 12 s)' in line
                             and 'Lease openshift-machine-api/progress-lock' in line for line in lines), run.stdout
        assert result['tries'] == len(lines) + 1 and result['waited_seconds'] >= 4, result
        assert 'alice@ci/run-1' in result['msg'] and 'waited' in result['msg'], result['msg']
    finally:
        run_module('cluster_lock', dict(lock, state='released', holder='alice@ci/run-1'))


def test_a_drill_step_runs_once_and_its_lines_say_what_it_waits_for(twin, run_playbook, tmp_path, macs):
    """egressip_failover cannot run in tries (it measures from its own trigger): its action plugin runs it once and prints
    what the module notes. vCenter takes 6 s to apply each reconfigure, so the NIC disconnect and the reconnect each
    span at least three lines 2 s apart, however slow the module starts."""
    import _egress_cluster as ec
    options = dict(node=W[2], trigger='disconnect_nic', poll_interval=0.5, wait_timeout=60, observe_seconds=2,
                   progress_interval=2, **ec.vsphere_options(twin))
    del options['cluster']
    twin._vcsim('POST', '/_twin/options', {'reconfigure_delay': 6.0})  # pylint: disable=protected-access
    try:
        failed = run_playbook(playbook(tmp_path, options, module='egressip_failover', name='Fail a node'))
        restored = run_playbook(playbook(tmp_path, dict(options, state='restored'), module='egressip_failover', name='Fail a node'))
    finally:
        twin._vcsim('POST', '/_twin/options', {'reconfigure_delay': 0})  # pylint: disable=protected-access
    for run, action in ((failed, 'disconnect_nic'), (restored, 'reconnect_nic')):
        result = result_of(run)
        assert result.get('failed') is not True and result['changed'] is True and 'tries' not in result, run
        lines = progress_lines(run)
        awaited = re.compile(r'^Fail a node: still waiting after [0-9]+ s for %s of node %s \(vCenter\)$' % (action, W[2]))
        assert len([line for line in lines if awaited.match(line)]) >= 2, run.stdout
