"""cluster_lock on the twin: three writers at once, the loser's message, a killed holder's Lease expiring,
renewal while the run lives, check mode without writes, idempotent release.

Each module run is its own process, as Ansible runs it; the writers run at the same time in threads.
"""

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from twin.fixture import kube_writes

import _twin_reads as reads

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
COLLECTIONS_DIR = os.path.join(REPO_ROOT, '.build')


def _env(twin):
    env = dict(os.environ)
    env.pop('KUBECONFIG', None)
    env.update(twin.env)
    env.update({'PYTHONPATH': COLLECTIONS_DIR, 'ANSIBLE_COLLECTIONS_PATH': COLLECTIONS_DIR})
    return env


def _start(twin, tmp_path, args, check=False):
    """Start one module process; returns (Popen, args file)."""
    module_args = dict(args, _ansible_check_mode=check, _ansible_diff=True, _ansible_no_log=False)
    fd_path = tmp_path / ('args-%s-%s.json' % (time.monotonic_ns(), threading.get_ident()))
    fd_path.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': module_args}))
    argv = [sys.executable, '-m', 'ansible_collections.ocp.egressip.plugins.modules.cluster_lock', str(fd_path)]
    return subprocess.Popen(argv, env=_env(twin), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    try:
        result = json.loads(out)
    except ValueError:
        pytest.fail('cluster_lock printed no JSON (rc %s):\n%s\n%s' % (proc.returncode, out, err))
    result['_rc'] = proc.returncode
    return result


def lock(twin, tmp_path, check=False, **args):
    return _result(_start(twin, tmp_path, args, check=check))


def warnings(result):
    """The warning texts (ansible-core 2.19 returns each as a WarningSummary with the text in event.msg)."""
    return [item if isinstance(item, str) else (item.get('event') or {}).get('msg', '') for item in result.get('warnings') or []]


def _start_time(pid):
    with open('/proc/%d/stat' % pid) as handle:
        data = handle.read()
    return data[data.rindex(')') + 2:].split()[19]


def test_three_writers_at_once_hold_it_one_at_a_time(twin, tmp_path):
    name = 'three-writers'
    intervals, results, errors = {}, {}, []

    def writer(identity):
        try:
            got = lock(twin, tmp_path, name=name, holder=identity, playbook='enable', wait_timeout=60, poll_interval=0.2)
            results[identity] = got
            if got['_rc'] != 0:
                return
            start = time.monotonic()
            holder = reads.lease(twin, name).spec.holder_identity
            time.sleep(1.0)  # the writes of this writer would happen here
            intervals[identity] = (start, time.monotonic(), holder)
            released = lock(twin, tmp_path, state='released', name=name, holder=identity)
            assert released['_rc'] == 0 and released['released'], released
        except Exception as exc:  # pylint: disable=broad-except  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=('writer-%d' % i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert not errors, errors
    assert sorted(results) == ['writer-0', 'writer-1', 'writer-2']
    assert all(r['_rc'] == 0 and r['acquired'] for r in results.values()), results
    # while each held it, the Lease named it, and no two holding periods overlap
    assert all(holder == identity for identity, (_s, _e, holder) in intervals.items()), intervals
    spans = sorted(intervals.values())
    assert all(earlier[1] <= later[0] for earlier, later in zip(spans, spans[1:])), spans
    assert sum(1 for r in results.values() if r['waited_seconds'] >= 0.9) == 2, 'two of the three waited for the first'
    final = reads.lease(twin, name)
    assert final.spec.holder_identity is None
    assert final.spec.lease_transitions == 2, 'created by the first, taken over twice'


def test_the_loser_fails_naming_the_holder_and_since_when(twin, tmp_path):
    name = 'loser'
    first = lock(twin, tmp_path, name=name, holder='alice@bastion/run-1', playbook='enable')
    assert first['_rc'] == 0 and first['acquired'] and first['changed'], first
    since = first['lock']['acquire_time']
    twin.reset_kube_requests()
    loser = lock(twin, tmp_path, name=name, holder='bob@laptop/run-2', playbook='disable', wait_timeout=0)
    assert loser['_rc'] != 0 and not loser['acquired'], loser
    assert loser['msg'].startswith('[cluster_lock_held] Lease openshift-machine-api/loser is held by alice@bastion/run-1'), loser['msg']
    assert 'playbook enable' in loser['msg'] and 'since %s' % since in loser['msg'], loser['msg']
    assert 'expires at' in loser['msg'] and 'wait_timeout=0' in loser['msg'], loser['msg']
    assert kube_writes(twin) == 0 and twin.kube_requests()['writes'] == 0, 'the loser wrote nothing'
    started = time.monotonic()
    waiting = lock(twin, tmp_path, name=name, holder='bob@laptop/run-2', wait_timeout=2, poll_interval=0.5)
    assert waiting['_rc'] != 0 and 2 <= time.monotonic() - started < 30, waiting
    assert waiting['waited_seconds'] >= 2 and 'waited 2 s' in waiting['msg'], waiting
    assert reads.lease(twin, name).spec.holder_identity == 'alice@bastion/run-1'


def test_renewal_follows_the_run_and_a_killed_runs_lease_expires(twin, tmp_path):
    name = 'killed'
    run = subprocess.Popen(['sleep', '120'])  # stands for the ansible-playbook process of the run
    try:
        owner = {'pid': run.pid, 'start': _start_time(run.pid), 'process_group_leader': False}
        first = lock(twin, tmp_path, name=name, holder='killed-run', lease_duration=3)
        assert first['_rc'] == 0 and first['acquired'], first
        renewer = _start(twin, tmp_path, dict(state='held', name=name, holder='killed-run', lease_duration=3, owner=owner))
        time.sleep(4.5)  # longer than the lease: only the renewal keeps it
        renewed = reads.lease(twin, name)
        assert renewed.spec.holder_identity == 'killed-run'
        assert renewed.spec.renew_time > renewed.spec.acquire_time
        blocked = lock(twin, tmp_path, name=name, holder='next-run', wait_timeout=0)
        assert blocked['_rc'] != 0 and 'killed-run' in blocked['msg'], blocked
        run.kill()
        run.wait()
        stopped = _result(renewer, timeout=30)
        assert stopped['_rc'] == 0 and stopped['stopped'] == 'owner_gone' and stopped['renewals'] >= 2, stopped
    finally:
        if run.poll() is None:
            run.kill()
    started = time.monotonic()
    taken = lock(twin, tmp_path, name=name, holder='next-run', wait_timeout=30, poll_interval=0.3)
    assert taken['_rc'] == 0 and taken['acquired'] and taken['previous_holder'] == 'killed-run', taken
    assert time.monotonic() - started < 10, 'the lease expired 3 s after the last renewal'
    after = reads.lease(twin, name)
    assert after.spec.holder_identity == 'next-run' and after.spec.lease_transitions == 1


def test_renewal_ends_when_the_lock_is_released(twin, tmp_path):
    name = 'released-renewer'
    assert lock(twin, tmp_path, name=name, holder='run-r', lease_duration=3)['acquired']
    renewer = _start(twin, tmp_path, dict(state='held', name=name, holder='run-r', lease_duration=3))
    time.sleep(1.5)
    assert lock(twin, tmp_path, state='released', name=name, holder='run-r')['released']
    stopped = _result(renewer, timeout=30)
    assert stopped['_rc'] == 0 and stopped['stopped'] == 'released', stopped
    assert reads.lease(twin, name).spec.holder_identity is None


def _process_gone(pid):
    """The detached renewer is nobody's child here: gone, or a zombie waiting for init."""
    try:
        with open('/proc/%d/stat' % pid) as handle:
            data = handle.read()
    except OSError:
        return True
    return data[data.rindex(')') + 2:].split()[0] == 'Z'


def test_renew_keeps_the_lock_after_the_task_ends_and_stops_on_release(twin, tmp_path):
    name = 'renew-inline'
    taken = lock(twin, tmp_path, name=name, holder='run-i', lease_duration=3, renew=True)
    assert taken['_rc'] == 0 and taken['acquired'] and isinstance(taken.get('renewer'), int), taken
    assert not _process_gone(taken['renewer']), 'the renewer outlives the module run'
    time.sleep(4.5)  # longer than the lease: only the background renewal keeps it
    renewed = reads.lease(twin, name)
    assert renewed.spec.holder_identity == 'run-i' and renewed.spec.renew_time > renewed.spec.acquire_time
    blocked = lock(twin, tmp_path, name=name, holder='next-run', wait_timeout=0)
    assert blocked['_rc'] != 0 and 'run-i' in blocked['msg'], blocked
    assert lock(twin, tmp_path, state='released', name=name, holder='run-i')['released']
    twin.wait_for(lambda: _process_gone(taken['renewer']), timeout=15, what='the renewer to notice the release and end')
    assert reads.lease(twin, name).spec.holder_identity is None


def test_renew_stops_at_max_hold_and_the_lease_then_expires(twin, tmp_path):
    name = 'renew-max-hold'
    taken = lock(twin, tmp_path, name=name, holder='run-m', lease_duration=3, renew=True, max_hold=2)
    assert taken['_rc'] == 0 and taken['acquired'] and taken['renewer'], taken
    twin.wait_for(lambda: _process_gone(taken['renewer']), timeout=15, what='the renewer to stop at max_hold')
    started = time.monotonic()
    next_run = lock(twin, tmp_path, name=name, holder='next-run', wait_timeout=30, poll_interval=0.3)
    assert next_run['_rc'] == 0 and next_run['previous_holder'] == 'run-m', next_run
    assert time.monotonic() - started < 10, 'nobody renews it after max_hold: it expires 3 s after the last renewal'


def test_renew_in_check_mode_starts_nothing(twin, tmp_path):
    twin.reset_kube_requests()
    result = lock(twin, tmp_path, check=True, name='renew-check', holder='run-c', renew=True)
    assert result['_rc'] == 0 and not result['acquired'] and 'renewer' not in result, result
    assert twin.kube_requests()['writes'] == 0 and reads.lease(twin, 'renew-check') is None


def test_check_mode_takes_no_lock_and_reports_a_held_one(twin, tmp_path):
    name = 'check-mode'
    twin.reset_kube_requests()
    free = lock(twin, tmp_path, check=True, name=name, holder='checker')
    assert free['_rc'] == 0 and not free['acquired'] and free['changed'], free
    assert twin.kube_requests()['writes'] == 0 and reads.lease(twin, name) is None
    assert lock(twin, tmp_path, name=name, holder='writer', playbook='enable')['acquired']
    twin.reset_kube_requests()
    held = lock(twin, tmp_path, check=True, name=name, holder='checker', wait_timeout=60)
    assert held['_rc'] == 0 and not held['acquired'] and not held['changed'], held
    assert [f['id'] for f in held['findings']] == ['cluster_lock_held'] and held['findings'][0]['severity'] == 'warning'
    assert 'held by writer' in held['findings'][0]['message'], held
    assert any('cluster_lock_held' in text for text in warnings(held)), held
    assert twin.kube_requests()['writes'] == 0
    assert reads.lease(twin, name).spec.holder_identity == 'writer'


def test_release_is_idempotent_and_never_frees_another_holders_lock(twin, tmp_path):
    name = 'release'
    assert lock(twin, tmp_path, name=name, holder='owner')['acquired']
    other = lock(twin, tmp_path, state='released', name=name, holder='someone-else')
    assert other['_rc'] == 0 and not other['changed'] and not other['released'], other
    assert [f['id'] for f in other['findings']] == ['cluster_lock_lost']
    assert reads.lease(twin, name).spec.holder_identity == 'owner'
    first = lock(twin, tmp_path, state='released', name=name, holder='owner')
    assert first['changed'] and first['released'] and first['diff'] == {'before': {'holder': 'owner'}, 'after': {'holder': None}}
    twin.reset_kube_requests()
    second = lock(twin, tmp_path, state='released', name=name, holder='owner')
    assert second['_rc'] == 0 and not second['changed'] and not second['findings'], second
    assert twin.kube_requests()['writes'] == 0
    again = lock(twin, tmp_path, name=name, holder='owner')
    # a holding after a release is a transition (client-go leader election counts a holder change from none too)
    assert again['acquired'] and reads.lease(twin, name).spec.lease_transitions == 1


def test_reacquiring_in_the_same_run_keeps_the_lock(twin, tmp_path):
    name = 'reentrant'
    first = lock(twin, tmp_path, name=name, holder='run-x')
    again = lock(twin, tmp_path, name=name, holder='run-x', wait_timeout=0)
    assert again['_rc'] == 0 and again['acquired'] and not again['changed'], again
    assert again['lock']['acquire_time'] == first['lock']['acquire_time']


@pytest.mark.parametrize('args, message', [
    ({'lease_duration': 2}, 'lease_duration=2 (egressip_lock.lease_duration): must be at least 3 seconds'),
    ({'wait_timeout': -1}, 'wait_timeout=-1 (egressip_lock.wait_timeout): must be 0'),
    ({'renew': True, 'max_hold': 0}, 'max_hold=0 (egressip_lock.max_hold): must be more than 0 seconds'),
])
def test_bad_options_fail_before_any_request(twin, tmp_path, args, message):
    twin.reset_kube_requests()
    result = lock(twin, tmp_path, name='bad', holder='h', **args)
    assert result['_rc'] != 0 and message in result['msg'], result
    assert twin.kube_requests()['requests'] == []


def test_without_ansible_playbook_and_holder_it_refuses(twin, tmp_path):
    result = lock(twin, tmp_path, name='anonymous')
    assert result['_rc'] != 0 and result['msg'].startswith('[cluster_lock_owner_unknown]'), result
    assert reads.lease(twin, 'anonymous') is None


def test_a_missing_namespace_is_named(twin, tmp_path):
    result = lock(twin, tmp_path, name='x', namespace='no-such-namespace', holder='h')
    assert result['_rc'] != 0 and 'Namespace no-such-namespace must exist' in result['msg'], result
