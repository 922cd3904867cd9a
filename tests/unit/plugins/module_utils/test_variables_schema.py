"""The public variables file against one schema (issue 13): unknown keys at any level with the nearest known one,
types converted as Ansible converts module options, bounds that are the real systems' (route metric u32, vSphere
names of 80 characters, VLAN 0-4094), selectors, and messages that name the public variable, never a Python type."""

import copy
import os

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.checks import variables_schema as schema

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)


def variables(**changes):
    data = copy.deepcopy(TWIN_VARS)
    data.update(changes)
    return data


def only(findings):
    assert len(findings) == 1, findings
    return findings[0]


def test_the_examples_fit_the_schema():
    assert schema.validate(TWIN_VARS) == []
    with open(os.path.join(REPO_ROOT, 'docs', 'variables.md'), encoding='utf-8') as handle:
        text = handle.read()
    example = yaml.safe_load(text.split('## Complete example', 1)[1].split('```yaml', 1)[1].split('```', 1)[0])
    assert schema.validate(example) == []


def test_every_documented_variable_is_in_the_schema():
    with open(os.path.join(REPO_ROOT, 'docs', 'variables.md'), encoding='utf-8') as handle:
        headings = [line[4:].strip().strip('`') for line in handle if line.startswith('## `egressip_')]
    assert sorted(headings) == sorted(schema.SCHEMA)


@pytest.mark.parametrize('path, wrong, hint', [
    ('', 'egressip_objcts', 'did you mean egressip_objects?'),
    ('egressip_network', 'route_metrc', 'did you mean route_metric?'),
    ('egressip_vsphere.portgroup', 'vlan', 'did you mean vlan_id?'),
    ('egressip_verify.wire', 'echo_targt', 'did you mean echo_target?'),
])
def test_unknown_key_names_the_nearest_known_one(path, wrong, hint):
    data = variables()
    target = data
    for key in path.split('.') if path else []:
        target = target[key]
    target[wrong] = target.pop(hint.split()[-1].rstrip('?'), 1)
    finding = only(schema.validate(data))
    where = '%s.%s' % (path, wrong) if path else wrong
    assert finding['id'] == 'variables_unknown_key'
    assert finding['message'].startswith(where + ' is not ') and hint in finding['message']
    assert finding['objects'] == [{'kind': 'option', 'name': where}]


def test_unknown_key_inside_an_egressip_object():
    data = variables()
    data['egressip_objects'][0]['pod_selectr'] = {'matchLabels': {'app': 'api'}}
    finding = only(schema.validate(data))
    assert 'egressip_objects[0].pod_selectr' in finding['message'] and 'did you mean pod_selector?' in finding['message']


def test_a_playbook_variable_is_not_part_of_the_file():
    assert schema.validate(variables(egressip_enable_pending=False)) == []


@pytest.mark.parametrize('metric, ok', [(0, True), (49, True), (4294967295, True), ('300', True), (4294967296, False),
                                        (2 ** 40, False), (-1, False), ('high', False), (True, False), (2.5, False)])
def test_route_metric_is_an_unsigned_32_bit_number(metric, ok):
    data = variables()
    data['egressip_network']['route_metric'] = metric
    findings = schema.validate(data)
    assert (findings == []) is ok, findings
    if not ok:
        assert only(findings)['message'].startswith('egressip_network.route_metric ')


def test_route_metric_message_states_the_real_range():
    data = variables()
    data['egressip_network']['route_metric'] = 2 ** 40
    assert '0 to 4294967295' in only(schema.validate(data))['message']


@pytest.mark.parametrize('name, ok', [('p' * 80, True), ('p' * 81, False), ('a/b' + 'p' * 75, True), ('a/b' + 'p' * 76, False), ('', False)])
def test_portgroup_name_is_at_most_80_characters_as_vcenter_counts_them(name, ok):
    data = variables()
    data['egressip_vsphere']['portgroup']['name'] = name
    findings = schema.validate(data)
    assert (findings == []) is ok, findings


def test_portgroup_needs_name_switch_type_and_switch():
    data = variables()
    del data['egressip_vsphere']['portgroup']['switch']
    assert 'has no switch' in only(schema.validate(data))['message']


@pytest.mark.parametrize('variable, value, text', [
    ('egressip_network', ['10.20.0.0/24'], 'egressip_network ["10.20.0.0/24"] is not a dictionary'),
    ('egressip_objects', {'name': 'payments'}, 'egressip_objects {"name": "payments"} is not a list'),
    ('egressip_acknowledge_unsupported', 'maybe', "egressip_acknowledge_unsupported 'maybe' is not true or false"),
])
def test_wrong_types_are_named_in_words_not_python_types(variable, value, text):
    finding = only(schema.validate(variables(**{variable: value})))
    assert text in finding['message']
    assert 'class' not in finding['message'] and 'Tagged' not in finding['message']


def test_values_are_converted_as_ansible_converts_options():
    data = variables(egressip_acknowledge_unsupported='yes')
    data['egressip_vsphere']['portgroup']['vlan_id'] = '120'
    normalized, findings = schema.check(data)
    assert findings == []
    assert normalized['egressip_acknowledge_unsupported'] is True
    assert normalized['egressip_vsphere']['portgroup']['vlan_id'] == 120


@pytest.mark.parametrize('selector, text', [
    ({'matchExpressions': [{'key': 'a', 'operator': 'Equals', 'values': ['x']}]}, 'one of In, NotIn, Exists, DoesNotExist'),
    ({'matchExpressions': [{'key': 'a', 'operator': 'In'}]}, 'has operator In but no values'),
    ({'matchLabel': {'a': 'b'}}, 'did you mean matchLabels?'),
    ('node-role.kubernetes.io/worker', 'is not a dictionary'),
])
def test_malformed_node_selectors(selector, text):
    finding = only(schema.validate(variables(egressip_nodes={'selector': selector})))
    assert finding['id'] == 'variables_invalid' and finding['message'].startswith('egressip_nodes.selector') and text in finding['message']


def test_choice_suggests_the_nearest():
    data = variables()
    data['egressip_network']['ip_forwarding'] = 'per-interface'
    assert 'did you mean per_interface?' in only(schema.validate(data))['message']


def test_field_findings_by_public_path():
    assert schema.field_findings('egressip_network.route_metric', 200) == []
    assert schema.field_findings('egressip_vsphere.portgroup.vlan_id', 4095)[0]['id'] == 'variables_invalid'


# --- the fleet variables (issue 16, docs/fleet.md) ------------------------------------------------------------


def test_the_fleet_variables_fit_the_schema():
    fleet = dict(egressip_hosts='egressip_clusters:!lab', egressip_rollout=[1, '25%', '100%'], egressip_max_fail_percentage=10,
                 egressip_kubernetes={'host': 'https://api.a.example.com:6443', 'api_key': 'sha256~x', 'validate_certs': 'yes',
                                      'ca_cert': '/ca.crt', 'proxy': 'http://proxy:3128', 'context': 'a', 'kubeconfig': {'apiVersion': 'v1'}},
                 egressip_vcenter={'hostname': 'vc.example.com', 'username': 'u', 'password': 'p', 'port': '443', 'validate_certs': False},
                 egressip_fleet_failure={'task': 'Preflight', 'message': 'x'})
    normalized, findings = schema.check(variables(**fleet))
    assert findings == []
    assert normalized['egressip_vcenter']['port'] == 443 and normalized['egressip_kubernetes']['validate_certs'] is True
    assert schema.validate(variables(egressip_rollout=2)) == []


@pytest.mark.parametrize('rollout, where', [([1, '0%'], 'egressip_rollout[1]'), (['a'], 'egressip_rollout[0]'), (0, 'egressip_rollout'),
                                            ([1, '150%'], 'egressip_rollout[1]'), ([True], 'egressip_rollout[0]'), ([], 'egressip_rollout')])
def test_a_rollout_that_is_not_a_list_of_batch_sizes_is_refused_with_the_fix(rollout, where):
    finding = only(schema.validate(variables(egressip_rollout=rollout)))
    assert finding['id'] == 'variables_invalid' and finding['message'].startswith(where)
    assert 'e.g. [1, "25%"]' in finding['remedy']


def test_a_connection_key_kubernetes_core_lacks_is_refused_with_the_nearest_name():
    finding = only(schema.validate(variables(egressip_kubernetes={'kube_config': '/k'})))
    assert finding['id'] == 'variables_unknown_key' and 'did you mean kubeconfig?' in finding['message']
    finding = only(schema.validate(variables(egressip_vcenter={'host': 'vc'})))
    assert 'egressip_vcenter.host' in finding['message'] and 'hostname' in finding['remedy']
    assert only(schema.validate(variables(egressip_max_fail_percentage=101)))['message'].startswith('egressip_max_fail_percentage 101')


def test_a_secret_is_never_shown_in_a_finding():
    for changes in ({'egressip_vcenter': {'password': ['hunter2-secret']}}, {'egressip_kubernetes': {'api_key': {'token': 'hunter2-secret'}}},
                    {'egressip_vcenter': 'hunter2-secret'}, {'egressip_kubernetes': ['hunter2-secret']}):
        finding = only(schema.validate(variables(**changes)))
        assert finding['id'] == 'variables_invalid', finding
        assert 'hunter2' not in finding['message'] + finding['remedy'] and schema.SECRET_SHOWN in finding['message']


def test_the_guard_resources_are_requests_and_limits():
    data = variables()
    data['egressip_guard'] = {'in_cluster': {'resources': {'requests': {'cpu': '100m'}, 'limits': {'memory': '1Gi'}}}}
    assert schema.validate(data) == []
    data['egressip_guard']['in_cluster']['resources'] = {'limit': {'memory': '1Gi'}}
    finding = only(schema.validate(data))
    assert finding['id'] == 'variables_unknown_key' and 'did you mean limits?' in finding['message']
