"""The action plugins of the waiting modules (plugin_utils/progress.py): what a progress line names, how the tries make
one task result, which findings mean "not yet", and that each plugin's defaults are its module's."""

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
