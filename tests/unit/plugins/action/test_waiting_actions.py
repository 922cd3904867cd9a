"""The action plugins of the waiting modules (plugin_utils/progress.py): what a progress line names, how the tries make
one task result, which findings mean "not yet", and that each plugin's defaults are its module's."""

import os

import yaml

from ansible_collections.ocp.egressip.plugins.action import cluster_lock as cluster_lock_action
from ansible_collections.ocp.egressip.plugins.action import egressip as egressip_action
from ansible_collections.ocp.egressip.plugins.action import ip_forwarding as ip_forwarding_action
from ansible_collections.ocp.egressip.plugins.action import node_nic_address as node_nic_address_action
from ansible_collections.ocp.egressip.plugins.doc_fragments import progress as progress_fragment
from ansible_collections.ocp.egressip.plugins.modules import cluster_lock, egressip, ip_forwarding, node_nic_address
from ansible_collections.ocp.egressip.plugins.plugin_utils import progress


def test_each_plugins_time_limits_are_its_modules_defaults():
    for action, module in ((ip_forwarding_action, ip_forwarding), (node_nic_address_action, node_nic_address),
                           (egressip_action, egressip), (cluster_lock_action, cluster_lock)):
        documentation = yaml.safe_load(module.DOCUMENTATION)
        options = documentation['options']
        assert action.ActionModule.DEFAULTS == dict((name, options[name]['default']) for name in action.ActionModule.DEFAULTS)
        assert set(action.ActionModule.TIMEOUTS.values()) == set(action.ActionModule.DEFAULTS)
        assert 'ocp.egressip.progress' in documentation['extends_documentation_fragment']
    fragment = yaml.safe_load(progress_fragment.ModuleDocFragment.DOCUMENTATION)['options']['progress_interval']
    assert fragment['default'] == progress.WaitingAction.DEFAULT_INTERVAL


def test_a_progress_line_names_the_awaited_objects_once_and_counts_the_rest():
    findings = [{'objects': [{'kind': 'Node', 'name': 'w%d' % i}, {'kind': 'Profile', 'name': 'w%d' % i}, {'kind': 'option', 'name': 'x'}]}
                for i in range(4)] + [{'objects': [{'kind': 'Node', 'name': 'w0'}]}]
    assert progress.awaited(findings) == 'Node w0, Profile w0, Node w1, Profile w1, Node w2, Profile w2 and 2 more'
    assert progress.awaited([{'objects': []}]) == 'the cluster'
    assert progress.awaited([{'objects': ['Lease openshift-config/egressip-lock']}]) == 'Lease openshift-config/egressip-lock'


def test_the_task_result_is_the_last_try_with_what_every_try_changed_and_wrote():
    first = {'changed': True, 'created': ['p0', 'p1'], 'diff': {'before': {'a': 1}, 'after': {'a': 2}}, 'failed': True}
    second = {'changed': False, 'created': [], 'diff': {'before': {'a': 2}, 'after': {'a': 2}}, 'status': 'done'}
    merged = progress.merge([first, second], ('created', 'deleted'))
    assert merged == {'changed': True, 'created': ['p0', 'p1'], 'diff': {'before': {'a': 1}, 'after': {'a': 2}},
                      'status': 'done', 'tries': 2}


def test_only_a_failure_made_of_not_yet_findings_is_tried_again():
    action = node_nic_address_action.ActionModule.__new__(node_nic_address_action.ActionModule)
    late = {'id': 'node_policy_timeout', 'severity': 'error'}
    info = {'id': 'anything', 'severity': 'info'}
    assert action._not_yet({'failed': True, 'findings': [late, info]}) == [late]
    assert action._not_yet({'failed': True, 'findings': [late, {'id': 'node_policy_degraded', 'severity': 'error'}]}) is None
    assert action._not_yet({'failed': True, 'msg': 'no findings'}) is None
    assert action._not_yet({'changed': True, 'findings': [late]}) is None
    assert action._waits({'wait': 'no'}) is False and action._waits({}) is True and action._waits({'wait': 'maybe'}) is False


def test_the_egressip_report_keeps_the_action_of_the_try_that_wrote_each_object():
    first = {'changed': True, 'failed': True, 'egressips': [
        {'name': 'a', 'action': 'create'}, {'name': 'b', 'action': 'none'}, {'name': 'old', 'action': 'delete'}]}
    second = {'changed': False, 'egressips': [{'name': 'a', 'action': 'none', 'assignments': [1]}, {'name': 'b', 'action': 'none'}]}
    action = egressip_action.ActionModule.__new__(egressip_action.ActionModule)
    merged = action.merge([first, second])
    assert merged['egressips'] == [{'name': 'a', 'action': 'create', 'assignments': [1]}, {'name': 'b', 'action': 'none'},
                                   {'name': 'old', 'action': 'delete'}]
    assert second['egressips'][0]['action'] == 'none'   # the tries themselves are left as they were


def test_the_lock_wait_is_the_wait_of_every_try():
    action = cluster_lock_action.ActionModule.__new__(cluster_lock_action.ActionModule)
    merged = action.merge([{'failed': True, 'waited_seconds': 10.2}, {'changed': True, 'waited_seconds': 3.1}])
    assert merged['waited_seconds'] == 13.3 and merged['changed'] is True and merged['tries'] == 2


# --- NotingAction: the module once, in a thread, and a line from its last note every progress_interval -----------

NOTING_MODULES = ('egress_nodes', 'egressip_verify', 'preflight', 'egressip_failover', 'vsphere_vm_nic', 'vsphere_portgroup')


class _Task(object):
    def __init__(self, args, check_mode=False, no_log=False):
        self.args, self.check_mode, self.no_log, self.async_val = args, check_mode, no_log, 0

    def get_name(self):
        return 'Fail a node'


class _Connection(object):
    transport = 'local'


def _noting_action(monkeypatch, args, module, **task):
    """A NotingAction whose module is ``module(args)``, whose clock stands still until the module's first note, and whose
    progress lines are collected (returned with the action)."""
    import threading
    from ansible_collections.ocp.egressip.plugins.module_utils.core.progress import Notes
    action = progress.NotingAction.__new__(progress.NotingAction)
    action._task, action._connection = _Task(args, **task), _Connection()
    action.POLL = 0.001
    noted, lines, seen = threading.Event(), [], {}
    ticks = [0]

    def clock():
        if noted.is_set():
            ticks[0] += 1   # one second per look once the module has said what it waits for
        return ticks[0]

    def once(module_args, task_vars, wrap_async=False):
        seen['args'] = dict(module_args)
        notes = Notes()
        notes.configure(module_args.get('progress_file'))
        return module(notes, noted, lines)

    action.clock = clock
    action._once = once
    monkeypatch.setattr(progress.display, 'display', lines.append)
    return action, lines, seen


def _waits_for_two_lines(notes, noted, lines):
    import time
    notes.note('10.20.0.10 of EgressIP payments (on w0) to move to another node (wait_timeout 120 s)')
    noted.set()
    deadline = time.monotonic() + 30   # a safety net only: the action prints a line every two ticks of its clock
    while len(lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    return {'changed': True, 'moves': [1]}


def test_noting_action_prints_the_modules_last_note_every_interval_and_returns_its_one_result(monkeypatch):
    action, lines, seen = _noting_action(monkeypatch, {'node': 'w0', 'progress_interval': 2}, _waits_for_two_lines)
    result = action._run_module({}, False)
    assert result == {'changed': True, 'moves': [1]}
    assert lines[:2] == ['Fail a node: still waiting after 2 s for 10.20.0.10 of EgressIP payments (on w0) to move to another '
                         'node (wait_timeout 120 s)',
                         'Fail a node: still waiting after 4 s for 10.20.0.10 of EgressIP payments (on w0) to move to another '
                         'node (wait_timeout 120 s)']
    assert seen['args']['node'] == 'w0' and not os.path.exists(seen['args']['progress_file'])   # the notes file is gone


def test_under_no_log_the_line_leaves_the_note_out(monkeypatch):
    action, lines, _seen = _noting_action(monkeypatch, {'progress_interval': 2}, _waits_for_two_lines, no_log=True)
    action._run_module({}, False)
    assert lines[0] == 'Fail a node: still running after 2 s'


def test_check_mode_zero_and_a_bad_interval_run_the_module_once_without_notes(monkeypatch):
    def plain(notes, noted, lines):
        return {'changed': False, 'noted_to': notes.path}
    for args, task in (({'progress_interval': 0}, {}), ({'progress_interval': 'soon'}, {}), ({}, {'check_mode': True})):
        action, lines, seen = _noting_action(monkeypatch, args, plain, **task)
        assert action._run_module({}, False) == {'changed': False, 'noted_to': None}
        assert 'progress_file' not in seen['args'] and lines == []


def test_a_failure_of_the_module_run_is_raised_in_the_tasks_thread(monkeypatch):
    def broken(notes, noted, lines):
        raise RuntimeError('the connection broke')
    action, _lines, _seen = _noting_action(monkeypatch, {}, broken)
    try:
        action._run_module({}, False)
    except RuntimeError as error:
        assert str(error) == 'the connection broke'
    else:
        raise AssertionError('the failure was swallowed')


def test_each_noting_module_documents_and_accepts_the_notes_options():
    from ansible_collections.ocp.egressip.plugins.module_utils.core.progress import argument_spec
    import importlib
    fragment = yaml.safe_load(progress_fragment.ModuleDocFragment.NOTES)['options']
    assert fragment['progress_interval']['default'] == progress.NotingAction.DEFAULT_INTERVAL
    for name in NOTING_MODULES:
        module = importlib.import_module('ansible_collections.ocp.egressip.plugins.modules.%s' % name)
        action = importlib.import_module('ansible_collections.ocp.egressip.plugins.action.%s' % name)
        assert issubclass(action.ActionModule, progress.NotingAction), name
        assert 'ocp.egressip.progress.notes' in yaml.safe_load(module.DOCUMENTATION)['extends_documentation_fragment'], name
        assert set(argument_spec()) <= set(fragment)
