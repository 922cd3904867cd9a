"""examples/aap/: every item of every infra.aap_configuration variable in the examples uses only the keys the
collection's role passes on, has the required ones, with the right types and allowed choices, nested structures
included (credential type inputs and injectors, survey specs, simplified workflow nodes, webhook notification
configurations), and carries no `{{` that the role would render on the host applying the configuration. What the
collection accepts is tests/unit/data/aap_configuration_spec.yml, written from reading the collection's roles (the
file names the repository, paths and commits). Also: the AAP objects refer to each other and to the collection's
playbooks consistently, and each schedule's rrule is one AAP accepts (a DTSTART and an RRULE, parsed with dateutil as
AWX parses it).
"""

import glob
import os

import pytest
import yaml
from dateutil import rrule

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, 'examples', 'aap', '*.yml')))
SPEC_PATH = os.path.join(ROOT, 'tests', 'unit', 'data', 'aap_configuration_spec.yml')


def load(path):
    with open(path, encoding='utf-8') as handle:
        return yaml.safe_load(handle)


SPEC = load(SPEC_PATH)
TYPES = {
    'str': lambda value: isinstance(value, str),
    'int': lambda value: isinstance(value, int) and not isinstance(value, bool),
    'bool': lambda value: isinstance(value, bool),
    'list': lambda value: isinstance(value, list),
    'dict': lambda value: isinstance(value, dict),
    'ref': lambda value: isinstance(value, str) or (isinstance(value, dict) and isinstance(value.get('name'), str)),
    'vars': lambda value: isinstance(value, (dict, str)),
    'any': lambda value: True,
}


def strings(value):
    """Every string inside value, keys of mappings included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def check_mapping(where, value, schema):
    """The problems of one mapping against a schema of the spec file (keys, required, choices, nested, list_items,
    one_of), each naming where it is and the key."""
    if not isinstance(value, dict):
        return ['%s: is a %s, the collection expects a mapping' % (where, type(value).__name__)]
    problems = []
    keys = schema.get('keys') or {}
    for key in schema.get('required') or []:
        if key not in value:
            problems.append('%s: the required key %s is missing' % (where, key))
    for key, item in value.items():
        if key not in keys:
            problems.append('%s: key %s is not one the collection accepts (accepted: %s)' % (where, key, ', '.join(sorted(keys))))
            continue
        kind = keys[key]
        if not TYPES[kind](item):
            problems.append('%s: key %s is %r, the collection expects a %s' % (where, key, item, kind))
            continue
        if kind == 'list' and key not in (schema.get('list_items') or {}) and key not in (schema.get('nested') or {}):
            problems.extend('%s: key %s has the element %r, the collection expects names (str)' % (where, key, element)
                            for element in item if not isinstance(element, str))
        choices = (schema.get('choices') or {}).get(key)
        if choices is not None and item not in choices:
            problems.append('%s: key %s is %r, not one of %s' % (where, key, item, choices))
        nested = (schema.get('nested') or {}).get(key)
        if nested is not None:
            structure = SPEC['structures'][nested]
            if isinstance(item, list):
                for index, element in enumerate(item):
                    problems.extend(check_mapping('%s %s[%d]' % (where, key, index), element, structure))
            else:
                problems.extend(check_mapping('%s %s' % (where, key), item, structure))
        element_schema = (schema.get('list_items') or {}).get(key)
        if element_schema is not None:
            for index, element in enumerate(item):
                problems.extend(check_mapping('%s %s[%d]' % (where, key, index), element, element_schema))
    one_of = schema.get('one_of')
    if one_of and sum(1 for key in one_of if key in value) != 1:
        problems.append('%s: exactly one of %s is needed' % (where, ', '.join(one_of)))
    return problems


def check_templating(where, item, entry):
    """A `{{` in an item is rendered by the role on the host applying the configuration: in the keys the role
    un-escapes, a value for AAP is written `{  {`; elsewhere neither form belongs."""
    problems = []
    templated = set(entry.get('templated_keys') or [])
    for key, value in item.items():
        for text in strings(value):
            if '{{' in text:
                fix = 'write it {  { ... }} there' if key in templated else 'the role does not un-escape this key'
                problems.append('%s: key %s has %r, which the role would render itself (%s)' % (where, key, text, fix))
            elif '{  {' in text and key not in templated:
                problems.append('%s: key %s has %r, which the role passes on as it is (only %s un-escape {  {)'
                                % (where, key, text, ', '.join(sorted(templated)) or 'no key'))
    return problems


def check_item(where, item, entry):
    problems = check_mapping(where, item, entry)
    if not isinstance(item, dict):
        return problems
    problems.extend(check_templating(where, item, entry))
    configuration = (entry.get('configurations') or {}).get(item.get('notification_type'))
    if configuration is not None and 'notification_configuration' in item:
        problems.extend(check_mapping('%s notification_configuration' % where, item['notification_configuration'], configuration))
    return problems


def problems_of(name, data):
    problems = []
    for variable, items in data.items():
        entry = SPEC['variables'].get(variable)
        if entry is None:
            problems.append('%s: variable %s is not one of the infra.aap_configuration variables the spec file knows (%s)'
                            % (name, variable, ', '.join(sorted(SPEC['variables']))))
            continue
        if not isinstance(items, list):
            problems.append('%s: variable %s is not a list of items' % (name, variable))
            continue
        for index, item in enumerate(items):
            label = item.get('name', index) if isinstance(item, dict) else index
            problems.extend(check_item('%s: %s[%d] (%s)' % (name, variable, index, label), item, entry))
    return problems


@pytest.mark.parametrize('path', FILES, ids=[os.path.basename(path) for path in FILES])
def test_every_item_is_in_the_format_of_infra_aap_configuration(path):
    problems = problems_of(os.path.basename(path), load(path))
    assert not problems, '\n'.join(problems)


def test_the_spec_file_names_its_sources_and_covers_every_variable_of_the_examples():
    used = set()
    for path in FILES:
        used |= set(load(path))
    assert used <= set(SPEC['variables']), used - set(SPEC['variables'])
    for variable, entry in SPEC['variables'].items():
        assert entry['role'] and entry['required'] and entry['keys'], variable
        for source in entry['sources']:
            assert source['path'].startswith('roles/%s/' % entry['role']), (variable, source)
            assert len(source['commit']) == 40 and int(source['commit'], 16) >= 0, (variable, source)
        assert set(entry['required']) <= set(entry['keys']), variable
        assert set(entry.get('choices') or {}) <= set(entry['keys']), variable
        assert set(entry.get('templated_keys') or []) <= set(entry['keys']), variable
        for structure in (entry.get('nested') or {}).values():
            assert structure in SPEC['structures'], (variable, structure)
        for kind in entry['keys'].values():
            assert kind in TYPES, (variable, kind)


BROKEN = {
    'controller_credential_types': [{
        'name': 'broken', 'kind': 'ssh',
        'inputs': {'fields': [{'id': 'token', 'type': 'secret'}], 'required': ['token']},
        'injectors': {'extra_vars': {'token': '{{ token }}'}, 'environment': {}}}],
    'controller_templates': [{
        'name': 'broken', 'job_type': 'dry-run', 'forks': '10', 'playbok': 'x.yml', 'credentials': [{'id': 1}],
        'survey_spec': {'name': '', 'description': '', 'spec': [{'question_name': 'q', 'variable': 'v', 'type': 'dropdown'}]}}],
    'controller_workflows': [{
        'name': 'broken', 'simplified_workflow_nodes': [{'identifier': 'a', 'next_nodes': ['b']}, {'unified_job_template': 'x'}]}],
    'controller_notifications': [{
        'name': 'broken', 'notification_type': 'webhook', 'notification_configuration': {'url': 'https://x', 'method': 'POST'}}],
    'controller_hosts': [{'name': 'h', 'variables': {'a': '{  { b }}'}}],
    'controller_schedules': [{'name': 's', 'rrule': 'x', 'unified_job_template': 'y', 'extra_vars': {}}],
    'controller_projects': [],
}


def test_the_check_names_file_variable_item_and_key_of_each_problem():
    problems = problems_of('broken.yml', BROKEN)
    expected = [
        "broken.yml: controller_credential_types[0] (broken): key kind is 'ssh', not one of ['cloud', 'net']",
        'broken.yml: controller_credential_types[0] (broken) inputs fields[0]: the required key label is missing',
        "broken.yml: controller_credential_types[0] (broken) inputs fields[0]: key type is 'secret', not one of",
        'broken.yml: controller_credential_types[0] (broken) injectors: key environment is not one',
        'broken.yml: controller_credential_types[0] (broken): key injectors has',
        "broken.yml: controller_templates[0] (broken): key job_type is 'dry-run', not one of ['run', 'check']",
        "broken.yml: controller_templates[0] (broken): key forks is '10', the collection expects a int",
        'broken.yml: controller_templates[0] (broken): key playbok is not one the collection accepts',
        'broken.yml: controller_templates[0] (broken): key credentials has the element',
        "broken.yml: controller_templates[0] (broken) survey_spec spec[0]: key type is 'dropdown'",
        'broken.yml: controller_workflows[0] (broken) simplified_workflow_nodes[0]: key next_nodes is not one',
        'broken.yml: controller_workflows[0] (broken) simplified_workflow_nodes[0]: exactly one of',
        'broken.yml: controller_workflows[0] (broken) simplified_workflow_nodes[1]: the required key identifier is missing',
        'broken.yml: controller_notifications[0] (broken) notification_configuration: the required key headers is missing',
        'broken.yml: controller_notifications[0] (broken) notification_configuration: key method is not one',
        'broken.yml: controller_hosts[0] (h): the required key inventory is missing',
        'broken.yml: controller_schedules[0] (s): key extra_vars is not one',
        'broken.yml: variable controller_projects is not one of',
    ]
    for start in expected:
        assert any(problem.startswith(start) for problem in problems), (start, problems)
    assert not any(problem.startswith('broken.yml: controller_hosts[0] (h): key variables') for problem in problems), problems


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
