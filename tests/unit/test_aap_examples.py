"""examples/aap/: the AAP objects of the examples refer to each other and to the collection's playbooks consistently,
and each schedule's rrule is one AAP accepts (a DTSTART and an RRULE, parsed with dateutil as AWX parses it).

The infra.aap_configuration collection's argument specs are not available offline, so the keys themselves are not
validated against that collection here (noted in docs/aap.md).
"""

import glob
import os

import pytest
import yaml
from dateutil import rrule

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, 'examples', 'aap', '*.yml')))


def load(path):
    with open(path, encoding='utf-8') as handle:
        return yaml.safe_load(handle)


@pytest.mark.parametrize('path', FILES, ids=[os.path.basename(path) for path in FILES])
def test_the_objects_refer_to_each_other_and_to_the_playbooks(path):
    data = load(path)
    templates = dict((item['name'], item) for item in data.get('controller_templates') or [])
    workflows = dict((item['name'], item) for item in data.get('controller_workflows') or [])
    notifications = set(item['name'] for item in data.get('controller_notifications') or [])
    for template in templates.values():
        assert os.path.isfile(os.path.join(ROOT, 'playbooks', template['playbook'])), template['playbook']
    for workflow in workflows.values():
        identifiers = set(node['identifier'] for node in workflow['simplified_workflow_nodes'])
        for node in workflow['simplified_workflow_nodes']:
            assert node['unified_job_template'] in templates, node
            for key in ('success_nodes', 'failure_nodes', 'always_nodes'):
                assert set(node.get(key) or []) <= identifiers, (node, key)
        for key in ('notification_templates_error', 'notification_templates_success', 'notification_templates_started'):
            assert set(workflow.get(key) or []) <= notifications, (workflow['name'], key)
    for schedule in data.get('controller_schedules') or []:
        assert schedule['unified_job_template'] in set(templates) | set(workflows), schedule
        start, rule = schedule['rrule'].split(' RRULE:')
        occurrences = rrule.rrulestr('%s\nRRULE:%s' % (start, rule))
        first, second = occurrences[0], occurrences[1]
        assert (second - first).total_seconds() > 0


def test_the_guard_example_runs_the_guard_every_five_minutes_and_reports_on_failure():
    data = load(os.path.join(ROOT, 'examples', 'aap', 'guard.yml'))
    schedule = data['controller_schedules'][0]
    start, rule = schedule['rrule'].split(' RRULE:')
    occurrences = rrule.rrulestr('%s\nRRULE:%s' % (start, rule))
    assert (occurrences[1] - occurrences[0]).total_seconds() == 300
    workflow = data['controller_workflows'][0]
    guard = next(node for node in workflow['simplified_workflow_nodes'] if node['identifier'] == 'guard')
    assert guard['failure_nodes'] == ['support-report'] and workflow['notification_templates_error']
