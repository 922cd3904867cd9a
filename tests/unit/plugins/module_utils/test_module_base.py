"""The module base and runner (clients/module.py) against fakes: how a run ends (Refused, ModuleFailure, success with
and without diff mode), one client per connection per run from flat or nested options, the library checks, and a
base that loads neither pyVmomi nor netaddr for a module that does not ask for them."""

import contextlib
import json
import os
import subprocess
import sys

import pytest

from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19 has no testing helper: its AnsibleModule reads basic._ANSIBLE_ARGS
    @contextlib.contextmanager
    def patch_module_args(args=None):
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = json.dumps({'ANSIBLE_MODULE_ARGS': args or {}}).encode()
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved

from ansible_collections.ocp.egressip.plugins.module_utils.clients import module as base
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere as _vsphere
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import k8s_nested_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_nested_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import failure_message


class Exited(Exception):
    def __init__(self, failed, result):
        super(Exited, self).__init__(result.get('msg'))
        self.failed = failed
        self.result = result


def finding(finding_id, severity='error'):
    return {'id': finding_id, 'severity': severity, 'message': '%s happened.' % finding_id, 'remedy': 'fix %s.' % finding_id, 'objects': []}


@pytest.fixture
def make(monkeypatch):
    """EgressModule(...) built from the given module arguments; exit_json and fail_json raise Exited."""
    def ended_with(failed):
        def end(_self, **result):
            raise Exited(failed, result)
        return end
    monkeypatch.setattr(base.EgressModule, 'exit_json', ended_with(False))
    monkeypatch.setattr(base.EgressModule, 'fail_json', ended_with(True))

    def build(args=None, **kwargs):
        kwargs.setdefault('argument_spec', dict(name=dict(type='str')))
        with patch_module_args(args or {}):
            return base.EgressModule('the_step', supports_check_mode=True, **kwargs)
    return build


def ended(module, body, **result):
    with pytest.raises(Exited) as exited:
        module.run(body, **result)
    return exited.value


def test_a_refusal_fails_with_its_message_and_the_findings_once(make):
    early, late = finding('early', 'warning'), finding('late')

    def body(_module, result):
        result['findings'] = [early]
        result['planned'] = ['w0']
        raise Refused([early, late])
    end = ended(make(), body, findings=[])
    assert end.failed and end.result['msg'] == failure_message([early, late], 'the_step')
    assert end.result['findings'] == [early, late]  # reported before and refused: listed once
    assert end.result['planned'] == ['w0'] and end.result['changed'] is False


def test_a_refusal_after_writes_names_what_was_written(make):
    def body(_module, _result):
        raise Refused([finding('late')], written='policies a, b')
    assert ended(make(), body).result['msg'] == 'the_step: 1 error(s) after writing policies a, b. [late] late happened. Fix: fix late.'


def test_a_module_failure_keeps_its_details_and_adds_the_result(make):
    def body(_module, result):
        result.update(created=['a'], status='kept')
        raise ModuleFailure('the API said no', status=403)
    end = ended(make(), body, created=[])
    assert end.failed and end.result['msg'] == 'the API said no'
    assert end.result['status'] == 403 and end.result['created'] == ['a']  # the failure's details win over the result's keys


def test_success_returns_the_diff_only_in_diff_mode(make):
    def body(_module, result):
        result['diff'] = {'before': {}, 'after': {'a': 1}}
        return {'changed': True, 'names': ['a']}
    end = ended(make(), body)
    assert not end.failed and end.result == {'changed': True, 'names': ['a']}
    assert ended(make({'_ansible_diff': True}), body).result['diff'] == {'before': {}, 'after': {'a': 1}}
    assert ended(make(), lambda _module, _result: None).result == {'changed': False}


def test_one_kubernetes_client_per_run_from_flat_options(make, monkeypatch):
    built = []
    monkeypatch.setattr(base, 'k8s_client_for', lambda module, params: built.append(dict(params)) or object())
    module = make({'host': 'https://api.example.com:6443'})
    assert module.k8s is module.k8s
    assert len(built) == 1 and built[0]['host'] == 'https://api.example.com:6443'


def test_a_vcenter_module_reads_kubernetes_from_its_nested_option(make, monkeypatch):
    built = []
    monkeypatch.setattr(base, 'k8s_client_for', lambda module, params: built.append(params) or object())
    module = make({'hostname': 'vc.example.com', 'kubernetes': {'host': 'https://api:6443'}}, argument_spec=k8s_nested_argument_spec(),
                  connection=base.VSPHERE)
    module.k8s  # pylint: disable=pointless-statement
    assert module.params['hostname'] == 'vc.example.com' and built == [module.params['kubernetes']]


def test_one_vcenter_session_per_run_from_the_nested_option(make, monkeypatch):
    logins = []
    monkeypatch.setattr(_vsphere, 'connect_vsphere', lambda params: logins.append(params) or object())
    monkeypatch.setattr(base, 'library_error', lambda name: None)
    module = make({'vsphere': {'hostname': 'vc.example.com', 'password': 'pw'}}, argument_spec=vsphere_nested_argument_spec())
    assert module.vsphere is module.vcenter(reason='to read the VMs')
    assert len(logins) == 1 and logins[0]['hostname'] == 'vc.example.com'


def test_a_vcenter_login_failure_ends_the_module_without_the_password(make, monkeypatch):

    def refuse(_params):
        raise ModuleFailure('vCenter vc.example.com:443 refused the login of user admin.', reason='login_refused')
    monkeypatch.setattr(_vsphere, 'connect_vsphere', refuse)
    monkeypatch.setattr(base, 'library_error', lambda name: None)
    module = make({'vsphere': {'hostname': 'vc.example.com', 'username': 'admin', 'password': 'S3cret!'}}, argument_spec=vsphere_nested_argument_spec())
    with pytest.raises(Exited) as exited:
        module.vsphere  # pylint: disable=pointless-statement
    assert exited.value.result['reason'] == 'login_refused' and 'S3cret!' not in json.dumps(exited.value.result)
    assert 'S3cret!' in module.no_log_values


def test_a_missing_library_is_named_with_the_reason(make, monkeypatch):
    monkeypatch.setitem(base.LIBRARIES, 'netaddr', 'no_such_module_for_the_test')
    with pytest.raises(Exited) as exited:
        make(libraries=('netaddr',))
    assert 'netaddr' in exited.value.result['msg'] and 'No module named' in exited.value.result['exception']
    monkeypatch.setitem(base.LIBRARIES, 'pyvmomi', 'no_such_module_for_the_test')
    module = make()
    with pytest.raises(Exited) as exited:
        module.vcenter(reason='for trigger=vm_power_off')
    assert 'pyvmomi' in exited.value.result['msg'] and 'for trigger=vm_power_off' in exited.value.result['msg']


def test_the_base_loads_neither_pyvmomi_nor_netaddr():
    code = ('import sys; from ansible_collections.ocp.egressip.plugins.module_utils.clients import module; '
            'print(sorted(name for name in ("pyVmomi", "netaddr", "kubernetes") if name in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.stdout.strip() == '[]'


class FakeLock(object):
    """clients/module_lock as the base sees it: its options, and each take() recorded."""

    def __init__(self):
        self.taken = []

    @staticmethod
    def argument_spec():
        return dict(lock_timeout=dict(type='int', default=120))

    def take(self, module, module_name, nested=False, wanted=True):
        self.taken.append((module_name, nested, wanted, module.params['lock_timeout']))


def test_a_writer_takes_the_lock_before_its_step(make, monkeypatch):
    lock = FakeLock()
    monkeypatch.setattr(base, '_module_lock', lambda: lock)
    module = make({'lock_timeout': 5}, lock=base.LOCK_BEFORE)
    ended(module, lambda _module, _result: lock.taken.append('step'))
    assert lock.taken == [('the_step', False, True, 5), 'step']


def test_a_vcenter_writer_locks_through_its_kubernetes_option_and_a_step_may_lock_later(make, monkeypatch):
    lock = FakeLock()
    monkeypatch.setattr(base, '_module_lock', lambda: lock)
    module = make(argument_spec=k8s_nested_argument_spec(), connection=base.VSPHERE, lock=base.LOCK_BEFORE)
    ended(module, lambda _module, _result: None)
    assert lock.taken == [('the_step', True, True, 120)]
    lock.taken = []
    module = make(lock=base.LOCK_IN_STEP)
    ended(module, lambda module, _result: module.take_lock(wanted=False))
    assert lock.taken == [('the_step', False, False, 120)]  # run() leaves it to the step
    assert 'lock_timeout' not in make().params  # a module that writes nothing has no lock options


def test_the_invocation_leaves_out_what_an_earlier_task_handed_over(monkeypatch):
    """verify's vcenter_facts (preflight's read, hundreds of KB at 500 nodes) are not echoed back in `invocation`; the other
    options are, and a module whose handed-over option is empty leaves the invocation to Ansible."""
    seen = []
    monkeypatch.setattr(basic.AnsibleModule, 'exit_json', lambda _self, **result: seen.append(result))
    spec = dict(name=dict(type='str'), facts=dict(type='dict'))
    with patch_module_args({'name': 'n1', 'facts': {'vms': [{'name': 'w0'}] * 3}}):
        module = base.EgressModule('the_step', argument_spec=spec, handed_over=('facts',))
    module.exit_json(changed=False)
    assert seen[-1]['invocation']['module_args']['facts'] == base.HANDED_OVER
    assert seen[-1]['invocation']['module_args']['name'] == 'n1'
    assert module.params['facts'] == {'vms': [{'name': 'w0'}] * 3}   # the run itself keeps the data
    with patch_module_args({'name': 'n1'}):
        base.EgressModule('the_step', argument_spec=spec, handed_over=('facts',)).exit_json(changed=False)
    assert 'invocation' not in seen[-1]
