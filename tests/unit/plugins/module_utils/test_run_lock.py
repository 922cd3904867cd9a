"""Taking the lock of a playbook run (clients/run_lock.py), the one way cluster_lock and preflight's lock option take it:
the options' problems named by public variable, and what a run that finds the lock held, or free, returns."""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.clients import run_lock
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module_lock import LockHeld
from ansible_collections.ocp.egressip.plugins.modules import preflight
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure

DEFAULTS = {'name': 'egressip-lock', 'namespace': 'openshift-machine-api', 'lease_duration': 60, 'wait_timeout': 120,
            'poll_interval': 2.0, 'playbook': 'enable', 'renew': False, 'max_hold': 21600}


@pytest.mark.parametrize('change, named', [
    ({'lease_duration': 2}, 'lease_duration=2 (egressip_lock.lease_duration): must be at least 3 seconds'),
    ({'wait_timeout': -1}, 'wait_timeout=-1 (egressip_lock.wait_timeout)'),
    ({'poll_interval': 0}, 'poll_interval=0'),
    ({'max_hold': 0}, 'max_hold=0 (egressip_lock.max_hold)'),
])
def test_each_problem_names_the_public_variable_and_the_fix(change, named):
    messages = run_lock.problems(dict(DEFAULTS, **change))
    assert len(messages) == 1 and messages[0].startswith(named), messages
    assert run_lock.problems(DEFAULTS) == []


def test_preflight_validates_its_lock_option_as_cluster_lock_does_before_anything_is_read():
    options = preflight.lock_options({'namespace': 'team-a', 'permissions': 'enable', 'wait_timeout': '30'})
    assert options == dict(DEFAULTS, namespace='team-a', playbook=None, wait_timeout=30, permissions='enable', permissions_guard=False)
    with pytest.raises(ModuleFailure) as failure:
        preflight.lock_options({'lease_duration': 1})
    assert 'invalid lock options; nothing was read or written' in failure.value.msg and 'egressip_lock.lease_duration' in failure.value.msg
    with pytest.raises(ModuleFailure) as failure:
        preflight.lock_options({'permissions': 'everything'})
    assert 'permissions' in failure.value.msg


class _Store(object):
    """The Lease store acquire_run makes (each test gives it a read; acquire is replaced, so nothing is written)."""

    def __init__(self, client, namespace, name):
        self.client, self.namespace, self.name = client, namespace, name


class _Module(object):
    k8s = object()

    def __init__(self, check_mode=False):
        self.check_mode = check_mode


def test_a_held_lock_is_returned_as_the_finding_and_the_holder_s_lease_with_nothing_written(monkeypatch):
    finding = {'id': 'cluster_lock_held', 'message': 'Lease openshift-machine-api/egressip-lock is held by bob.', 'remedy': 'Wait.'}

    def held(*_args, **_kwargs):
        raise LockHeld(finding, {'holder': 'bob'})
    monkeypatch.setattr(run_lock.lease, 'LeaseStore', _Store)
    monkeypatch.setattr(run_lock.lease, 'describe', lambda current, moment: {'holder': 'bob', 'converged': 'v1:abc'})
    monkeypatch.setattr(_Store, 'read', lambda self: {'kind': 'Lease'}, raising=False)
    monkeypatch.setattr(run_lock, 'acquire', held)
    result, before = run_lock.acquire_run(_Module(), DEFAULTS, 'alice', {}, None)
    assert result['held'] == finding and result['findings'] == [finding] and result['lock'] == {'holder': 'bob'}
    assert result['acquired'] is False and 'renewer' not in result and before['holder'] == 'bob'
    assert run_lock.held_message(finding) == '[cluster_lock_held] Lease openshift-machine-api/egressip-lock is held by bob. Fix: Wait.'


def test_a_free_lock_is_taken_with_the_record_it_carried_and_renewed_only_when_asked(monkeypatch):
    monkeypatch.setattr(run_lock.lease, 'LeaseStore', _Store)
    monkeypatch.setattr(_Store, 'read', lambda self: None, raising=False)
    monkeypatch.setattr(run_lock.lease, 'describe', lambda current, moment: current and {'holder': current['holder'], 'converged': 'v1:abc'})
    monkeypatch.setattr(run_lock, 'acquire', lambda check_mode, store, holder, details, params: (not check_mode, {'holder': holder}, None))
    started = []
    monkeypatch.setattr(run_lock, 'start_renewer', lambda store, holder, params, owner: started.append(holder) or 4242)
    result, before = run_lock.acquire_run(_Module(), DEFAULTS, 'alice', {}, {'pid': 1})
    assert before is None and result['acquired'] is True and result['lock']['holder'] == 'alice' and result['converged'] is None
    assert started == [] and 'renewer' not in result
    result, _before = run_lock.acquire_run(_Module(), dict(DEFAULTS, renew=True), 'alice', {}, {'pid': 1})
    assert result['renewer'] == 4242 and started == ['alice']
    result, _before = run_lock.acquire_run(_Module(check_mode=True), dict(DEFAULTS, renew=True), 'alice', {}, {'pid': 1})
    assert result['acquired'] is False and started == ['alice'], 'check mode takes nothing and starts no renewer'
