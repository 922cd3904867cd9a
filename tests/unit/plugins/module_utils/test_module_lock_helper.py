"""_module_lock: the identity of a module run, when a module takes no lock, the message naming the holder and the module's
option, and the Lease under a fake store (taken once, released once; a run's own lock is not taken again)."""

import datetime
import os

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.clients import lease
from ansible_collections.ocp.egressip.plugins.module_utils.clients import module_lock

UTC = datetime.timezone.utc


class Exit(Exception):
    pass


class FakeModule(object):
    def __init__(self, check_mode=False, **params):
        self.check_mode = check_mode
        self.params = dict(dict((key, spec.get('default')) for key, spec in module_lock.argument_spec().items()), **params)
        self.failed = None
        self.warnings = []

    @property
    def k8s(self):
        raise AssertionError('the Kubernetes client was used')

    def fail_json(self, **result):
        self.failed = result
        raise Exit(result['msg'])

    def warn(self, text):
        self.warnings.append(text)


class FakeStore(object):
    def __init__(self, current=None):
        self.current = current
        self.writes = []
        self.namespace, self.name = 'openshift-machine-api', 'egressip-lock'

    def read(self):
        return self.current

    def create(self, body):
        return self._write('create', body)

    def replace(self, body):
        return self._write('replace', body)

    def _write(self, verb, body):
        self.writes.append((verb, (body.get('spec') or {}).get('holderIdentity')))
        self.current = dict(body, metadata=dict(body['metadata'], resourceVersion=str(len(self.writes))))
        return self.current


def test_a_module_outside_ansible_playbook_is_its_own_holder_named_by_module_and_pid():
    run_holder, own, details = module_lock._module_identity('egress_nodes')  # pylint: disable=protected-access
    assert run_holder is None, 'pytest is no ansible-playbook run'
    assert '/egress_nodes-%d.' % os.getpid() in own and own.startswith('%s@' % details['user'].replace(' ', '-'))
    assert details['module'] == 'egress_nodes' and details['pid'] == os.getpid()
    assert 'module' in lease.DETAIL_KEYS, 'the module is written into the Lease annotations and named in messages'


@pytest.mark.parametrize('options', [{'check_mode': True}, {'wanted': False}])
def test_check_mode_and_read_only_choices_touch_no_lease(options):
    module = FakeModule(check_mode=options.get('check_mode', False))
    held = module_lock.ModuleLock(module, 'egressip', wanted=options.get('wanted', True)).__enter__()
    assert held.holder is None and module.failed is None  # FakeModule.k8s would have raised


def test_a_negative_lock_timeout_is_refused_naming_the_option():
    module = FakeModule(lock_timeout=-1)
    with pytest.raises(Exit):
        module_lock.ModuleLock(module, 'egressip').__enter__()
    assert module.failed['msg'].startswith('lock_timeout=-1: must be 0')


def test_the_held_message_names_the_module_option_and_its_remedy():
    moment = datetime.datetime(2026, 12, 1, 20, 0, 0, tzinfo=UTC)
    info = lease.describe({'metadata': {'name': 'egressip-lock', 'namespace': 'openshift-machine-api', 'annotations': {
        'egressip.ocp/lock-module': 'egress_nodes'}}, 'spec': {
        'holderIdentity': 'alice@bastion/egress_nodes-42.7', 'acquireTime': '2026-12-01T19:59:00.000000Z',
        'renewTime': '2026-12-01T19:59:50.000000Z', 'leaseDurationSeconds': 60}}, moment)
    params = {'namespace': 'openshift-machine-api', 'name': 'egressip-lock', 'wait_timeout': 5}
    finding = module_lock.held_finding(info, moment, params, 5.2, False, 'lock_timeout', module_lock.MODULE_REMEDY)
    assert finding['message'].startswith('Lease openshift-machine-api/egressip-lock is held by alice@bastion/egress_nodes-42.7 '
                                         '(module egress_nodes) since 2026-12-01T19:59:00.000000Z (60 s ago)'), finding['message']
    assert '(lock_timeout=5)' in finding['message'] and 'raise lock_timeout' in finding['remedy']


def test_acquire_and_release_write_the_lease_once_each():
    store = FakeStore()
    params = {'namespace': 'openshift-machine-api', 'name': 'egressip-lock', 'lease_duration': 60, 'wait_timeout': 0, 'poll_interval': 0.1}
    changed, _written, previous = module_lock.acquire(False, store, 'me', {'user': 'me'}, params)
    assert changed and previous is None and store.writes == [('create', 'me')]
    with pytest.raises(module_lock.LockHeld):
        module_lock.acquire(False, store, 'other', {'user': 'other'}, params)
    released, _after, _before = module_lock.release(store, 'me')
    assert released and store.writes == [('create', 'me'), ('replace', None)]
