"""_lease: times, expiry, the bodies the lock writes, and finding the ansible-playbook run (real processes)."""

import datetime
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from ansible_collections.ocp.egressip.plugins.module_utils.clients import lease

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 12, 1, 20, 0, 0, tzinfo=UTC)
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
COLLECTIONS = os.path.join(REPO_ROOT, '.build')


def _lease(holder='alice@bastion/run', renewed=NOW, duration=60, transitions=3, annotations=None):
    spec = {'leaseDurationSeconds': duration, 'leaseTransitions': transitions}
    if holder:
        spec.update(holderIdentity=holder, acquireTime='2026-12-01T19:50:00.000000Z', renewTime=lease.micro_time(renewed))
    return {'metadata': {'name': 'egressip-lock', 'namespace': 'openshift-machine-api', 'resourceVersion': '7',
                         'annotations': annotations or {}}, 'spec': spec}


def test_micro_time_has_six_fraction_digits_in_utc():
    moment = datetime.datetime(2026, 12, 1, 21, 0, 0, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert lease.micro_time(moment) == '2026-12-01T20:00:00.000005Z'


def test_parse_time_reads_what_the_api_and_other_writers_send():
    assert lease.parse_time('2026-12-01T20:00:00.123456Z') == NOW.replace(microsecond=123456)
    assert lease.parse_time('2026-12-01T21:00:00+01:00') == NOW
    assert lease.parse_time('2026-12-01T20:00:00.1Z') == NOW.replace(microsecond=100000)
    assert lease.parse_time('yesterday') is None and lease.parse_time(None) is None


def test_expiry_by_renew_time_and_by_an_unchanged_record():
    live = lease.describe(_lease(renewed=NOW - datetime.timedelta(seconds=30)), NOW)
    assert not live['expired'] and live['expires_at'] == '2026-12-01T20:00:30.000000Z'
    assert not lease.is_free(live) and lease.is_free(live, unchanged_seconds=60), 'seen unchanged for a whole duration'
    dead = lease.describe(_lease(renewed=NOW - datetime.timedelta(seconds=61)), NOW)
    assert dead['expired'] and lease.is_free(dead)
    released = lease.describe(_lease(holder=None), NOW)
    assert released['holder'] is None and not released['expired'] and lease.is_free(released)
    assert lease.is_free(None)


def test_holder_text_names_who_and_since_when():
    info = lease.describe(_lease(renewed=NOW - datetime.timedelta(seconds=5), annotations={
        'egressip.ocp/lock-user': 'alice', 'egressip.ocp/lock-host': 'bastion', 'egressip.ocp/lock-playbook': 'enable',
        'egressip.ocp/lock-pid': '4242'}), NOW)
    assert lease.holder_text(info, NOW) == (
        'alice@bastion/run (user alice, host bastion, playbook enable, pid 4242) since 2026-12-01T19:50:00.000000Z (600 s ago), '
        'last renewed 5 s ago, expires at 2026-12-01T20:00:55.000000Z unless renewed')


def test_take_over_counts_a_transition_only_for_a_new_holder_and_keeps_foreign_annotations():
    old = _lease(annotations={'egressip.ocp/lock-user': 'alice', 'team': 'net'})
    taken = lease.taken_over(old, 'bob@laptop/run', {'user': 'bob', 'host': 'laptop', 'pid': 7}, 30, NOW)
    assert taken['spec'] == {'holderIdentity': 'bob@laptop/run', 'leaseDurationSeconds': 30, 'acquireTime': '2026-12-01T20:00:00.000000Z',
                             'renewTime': '2026-12-01T20:00:00.000000Z', 'leaseTransitions': 4}
    assert taken['metadata']['annotations'] == {'team': 'net', 'egressip.ocp/lock-user': 'bob', 'egressip.ocp/lock-host': 'laptop',
                                                'egressip.ocp/lock-pid': '7'}
    assert taken['metadata']['resourceVersion'] == '7', 'the update says which version it replaces'
    same = lease.taken_over(old, 'alice@bastion/run', {'user': 'alice'}, 60, NOW)
    assert same['spec']['leaseTransitions'] == 3
    assert old['metadata']['annotations'] == {'egressip.ocp/lock-user': 'alice', 'team': 'net'}, 'the read Lease is not changed'


def test_release_drops_the_holder_and_keeps_the_transitions():
    free = lease.released(_lease(annotations={'egressip.ocp/lock-user': 'alice', 'team': 'net'}), NOW)
    assert free['spec'] == {'leaseDurationSeconds': 60, 'leaseTransitions': 3, 'renewTime': '2026-12-01T20:00:00.000000Z'}
    assert free['metadata']['annotations'] == {'team': 'net'}


def test_release_sets_keeps_or_clears_the_converged_record():
    record = {'egressip.ocp/lock-user': 'alice', lease.CONVERGED_ANNOTATION: 'v1:old'}
    assert lease.released(_lease(annotations=record), NOW)['metadata']['annotations'] == {lease.CONVERGED_ANNOTATION: 'v1:old'}
    assert lease.released(_lease(annotations=record), NOW, 'v1:new')['metadata']['annotations'] == {lease.CONVERGED_ANNOTATION: 'v1:new'}
    assert lease.released(_lease(annotations=record), NOW, '')['metadata']['annotations'] == {}
    assert lease.describe(_lease(annotations=record), NOW)['converged'] == 'v1:old'
    assert lease.describe(_lease(), NOW)['converged'] is None
    taken = lease.taken_over(_lease(holder=None, annotations=record), 'bob@bastion/run', {'user': 'bob'}, 60, NOW)
    assert taken['metadata']['annotations'][lease.CONVERGED_ANNOTATION] == 'v1:old', 'the next holder keeps the record'


def _run(script, *args, **kwargs):
    return subprocess.Popen([sys.executable, script] + list(args), stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=COLLECTIONS), **kwargs)


def test_playbook_process_is_the_topmost_ansible_playbook_ancestor(tmp_path):
    # ansible-playbook -> forked worker (same command line) -> /bin/sh -> the module, as Ansible runs a module locally
    child = tmp_path / 'module.py'
    child.write_text('import json\nfrom ansible_collections.ocp.egressip.plugins.module_utils.clients import lease as _lease\n'
                     'print(json.dumps(_lease.playbook_process()))\n')
    playbook = tmp_path / 'ansible-playbook'
    playbook.write_text(textwrap.dedent('''\
        import os, subprocess, sys
        if os.fork() == 0:
            subprocess.run(['/bin/sh', '-c', '%s %s'], check=True)
            os._exit(0)
        os.wait()
    ''' % (sys.executable, child)))
    proc = _run(str(playbook), 'ocp.egressip.enable', '-e', '@cluster.yml')
    found = json.loads(proc.communicate(timeout=60)[0])
    assert found['pid'] == proc.pid and found['playbooks'] == ['ocp.egressip.enable']
    assert found['start'] and found['process_group_leader'] is False
    assert lease.playbook_process() is None, 'pytest is no ansible-playbook run'


def _group_members(pgid):
    members = []
    for entry in os.listdir('/proc'):
        try:
            with open('/proc/%s/stat' % entry, encoding='utf-8') as handle:
                fields = handle.read().rsplit(')', 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:
            members.append((int(entry), fields[0]))
    return members


def _wait_for_group(pgid, count, seconds=20):
    """Until the process group has `count` members and its leader runs sleep (exec'd), at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        members = _group_members(pgid)
        if len(members) >= count and lease._stat(pgid) is not None:  # pylint: disable=protected-access
            with open('/proc/%d/comm' % pgid, encoding='utf-8') as handle:
                if handle.read().strip() == 'sleep':
                    return
        time.sleep(0.05)
    raise AssertionError('process group %d did not reach %d members: %s' % (pgid, count, _group_members(pgid)))


def test_owner_alive_follows_the_process_and_a_group_it_leads(tmp_path):
    leader = subprocess.Popen(['sh', '-c', 'sleep 60 & exec sleep 60'], start_new_session=True)
    _wait_for_group(leader.pid, 2)  # the shell has forked its background sleep and exec'd (slow on a loaded machine)
    owner = {'pid': leader.pid, 'start': lease._stat(leader.pid)[3], 'process_group_leader': True}  # pylint: disable=protected-access
    try:
        assert lease.owner_alive(owner)
        assert not lease.owner_alive(dict(owner, start='1', process_group_leader=False)), 'a reused pid is another process'
        leader.kill()
        leader.wait()
        assert lease.owner_alive(owner), 'the sleep it left behind is still in its group'
        assert not lease.owner_alive(dict(owner, process_group_leader=False))
    finally:
        os.killpg(leader.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while lease.owner_alive(owner) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not lease.owner_alive(owner)
