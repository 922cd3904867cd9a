"""One writer per cluster, end to end: enable runs at the same time on one twin hold the cluster lock one at a time,
the one that may not wait fails naming the holder, a killed run's Lease expires and the next run takes it over.
Check mode takes no lock."""

import copy
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from twin.fixture import kube_writes, lock_writes, vcsim_writes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'modules'))
import _twin_reads as reads  # noqa: E402  pylint: disable=wrong-import-position

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
COLLECTIONS_DIR = os.path.join(REPO_ROOT, '.build')
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)

pytestmark = pytest.mark.slow


def _variables(**lock):
    variables = copy.deepcopy(TWIN_VARS)
    variables['egressip_lock'] = dict({'lease_duration': 6}, **lock)
    return variables


def _start(twin, variables, *extra, new_session=False, playbook='enable.yml'):
    env = dict(os.environ)
    env.pop('KUBECONFIG', None)
    env.update(twin.env)
    env.update({'ANSIBLE_COLLECTIONS_PATH': COLLECTIONS_DIR, 'PYTHONPATH': COLLECTIONS_DIR, 'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_FORCE_COLOR': '0'})
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), os.path.join(REPO_ROOT, 'playbooks', playbook),
            '-e', json.dumps(variables)] + list(extra)
    return subprocess.Popen(argv, env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=new_session)


def _finish(proc, timeout=900):
    out, _err = proc.communicate(timeout=timeout)
    return proc.returncode, out


def _holder(twin):
    lease = reads.lease(twin)
    return lease and lease.spec.holder_identity


def _recap_changed(out):
    recap = [line for line in out.splitlines() if line.startswith('localhost') and 'changed=' in line]
    return int(recap[-1].split('changed=')[1].split()[0])


def test_check_mode_takes_no_lock(twin):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    code, out = _finish(_start(twin, _variables(), '--check'))
    assert code == 0, out[-4000:]
    assert twin.kube_requests()['writes'] == 0 and not vcsim_writes(twin), 'not even the Lease is written'
    assert reads.lease(twin) is None


def test_two_enables_at_once_write_one_after_the_other_and_a_third_fails_naming_the_holder(twin):
    first = _start(twin, _variables(wait_timeout=600))
    holder = twin.wait_for(lambda: _holder(twin), timeout=120, what='the first run holding the cluster lock')
    assert holder.split('/ansible-playbook-')[1].split('.')[0] == str(first.pid), holder
    second = _start(twin, _variables(wait_timeout=600))
    third = _start(twin, _variables(wait_timeout=0))
    code, out = _finish(third)
    assert code != 0, out[-4000:]
    assert '[cluster_lock_held] Lease openshift-machine-api/egressip-lock is held by %s' % holder in out, out[-4000:]
    assert 'playbook enable, pid %d) since 20' % first.pid in out, out[-4000:]
    assert 'Preflight' not in out.split('Cluster lock - take the Lease')[1], 'the third run did nothing after the lock task'

    def renewed_by_first():
        lease = reads.lease(twin)
        return lease.spec.holder_identity == holder and lease.spec.renew_time > lease.spec.acquire_time
    # the renewer the lock task started (a detached process, past the end of that module run) renews every 2 s
    twin.wait_for(renewed_by_first, timeout=30, what="the first run's Lease renewed after its lock task ended")
    code, out = _finish(first)
    assert code == 0, out[-6000:]
    assert _recap_changed(out) > 0
    code, out = _finish(second)
    assert code == 0, out[-6000:]
    assert _recap_changed(out) == 0, 'the second run waited for the first, then found nothing left to do'
    lease = reads.lease(twin)
    assert lease.spec.holder_identity is None, 'the last run released it'
    assert lease.spec.lease_transitions == 1, 'created by the first run, taken over by the second'
    for vm in twin.inventory()['vms']:
        if '-worker-' in vm['name']:
            assert len(vm['nics']) == 2, (vm['name'], vm['nics'])


def test_verify_takes_the_lock_only_to_remediate(twin):
    transitions = reads.lease(twin).spec.lease_transitions
    for remediate in (False, True):
        variables = _variables()
        variables['egressip_verify'] = dict(variables['egressip_verify'], remediate=remediate)
        twin.reset_kube_requests()
        code, out = _finish(_start(twin, variables, playbook='verify.yml'))
        assert code == 0, out[-4000:]
        # taken and released (and renewed every 2 s while verify runs), or not written at all
        assert (lock_writes(twin) >= 2) if remediate else (lock_writes(twin) == 0), (remediate, lock_writes(twin))
    lease = reads.lease(twin)
    assert lease.spec.holder_identity is None and lease.spec.lease_transitions == transitions + 1


def test_a_killed_runs_lock_expires_and_the_next_run_takes_it_over(twin):
    killed = _start(twin, _variables(), new_session=True)  # its own process group, as in a terminal or AAP
    holder = twin.wait_for(lambda: _holder(twin), timeout=120, what='the run holding the cluster lock')
    before = reads.lease(twin).spec.lease_transitions
    os.kill(killed.pid, signal.SIGKILL)
    killed.communicate(timeout=60)
    assert _holder(twin) == holder, 'the Lease still names the killed run: nobody else writes meanwhile'
    twin.reset_kube_requests()
    started = time.monotonic()
    code, out = _finish(_start(twin, _variables(wait_timeout=300)))
    assert code == 0, out[-6000:]
    assert time.monotonic() - started < 300
    lease = reads.lease(twin)
    assert lease.spec.holder_identity is None and lease.spec.lease_transitions == before + 1, 'taken over from the killed run'
    assert lock_writes(twin) >= 2 and kube_writes(twin) == twin.kube_requests()['writes'] - lock_writes(twin)

    def group_left():
        try:
            os.killpg(killed.pid, 0)
        except ProcessLookupError:
            return True
        return False
    twin.wait_for(group_left, timeout=60, what='every process of the killed run (its renewal included) to end')
