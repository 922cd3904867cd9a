"""examples/aap/fleet.yml (docs/aap.md, docs/fleet.md): the credential type is one AWX accepts, each host's connection
variables - once AAP injects the credential and Ansible templates the host's variables - are what the modules take
and fit the variables schema, the hosts are the group the playbooks run on, and the job templates run the fleet with
forks, slices (verify) and a rollout the playbooks accept (enable)."""

import os
import re

import jinja2
import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.checks import variables_schema as schema
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import k8s_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_argument_spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECRETS = {'cluster-a': {'api_key': 'sha256~a-token', 'vcenter_password': 'a-password'},
           'cluster-b': {'api_key': 'sha256~b-token', 'vcenter_password': 'b-password'}}


def _as_aap_holds_it(value):
    """The objects as the infra.aap_configuration roles hand them to AAP: they turn the escaped `{  {` of injectors and
    variables into `{{` (tests/unit/test_aap_examples.py checks where the example writes it)."""
    if isinstance(value, dict):
        return dict((key, _as_aap_holds_it(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_as_aap_holds_it(item) for item in value]
    if isinstance(value, str):
        return value.replace('{  {', '{{')
    return value


@pytest.fixture(scope='module')
def fleet():
    with open(os.path.join(ROOT, 'examples', 'aap', 'fleet.yml'), encoding='utf-8') as handle:
        return _as_aap_holds_it(yaml.safe_load(handle))


@pytest.fixture(scope='module')
def preamble():
    with open(os.path.join(ROOT, 'playbooks', 'fleet_hosts.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)[0]['vars']


def _ansible_like(text, variables):
    """Render a host variable as Ansible would, with from_yaml (the one filter the example uses)."""
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    environment.filters['from_yaml'] = yaml.safe_load
    return environment.from_string(text).render(variables)


def _rendered(value, variables):
    if isinstance(value, dict):
        return dict((key, _rendered(item, variables)) for key, item in value.items())
    if isinstance(value, str) and '{{' in value:
        return _ansible_like(value, variables)
    return value


def test_the_credential_type_is_valid_for_awx_and_injects_the_secrets_per_cluster(fleet):
    kind = only_one(fleet['controller_credential_types'])
    assert kind['kind'] == 'cloud' and kind['name'] and kind['description']
    fields = kind['inputs']['fields']
    assert all(field['type'] in ('string', 'boolean') and field['id'] and field['label'] for field in fields)
    assert set(kind['inputs']['required']) <= set(field['id'] for field in fields)
    assert all(field.get('secret') for field in fields), 'every input is a secret: AAP never shows it again'
    credential = only_one(fleet['controller_credentials'])
    assert credential['credential_type'] == kind['name'] and set(credential['inputs']) <= set(field['id'] for field in fields)
    injected = dict((name, _ansible_like(template, {'clusters': yaml.safe_dump(SECRETS)}))
                    for name, template in kind['injectors']['extra_vars'].items())
    assert yaml.safe_load(injected['egressip_fleet_connections']) == SECRETS
    for template in fleet['controller_templates']:
        assert credential['name'] in template['credentials'], template['name']


def only_one(items):
    assert len(items) == 1, items
    return items[0]


def test_each_host_connects_with_its_own_secrets_and_the_option_names_of_the_modules(fleet, preamble):
    assert sorted(preamble['__fleet_kubernetes_keys']) == sorted(k8s_argument_spec())
    assert sorted(preamble['__fleet_vcenter_keys']) == sorted(vsphere_argument_spec())
    injected = {'egressip_fleet_connections': yaml.safe_dump(SECRETS)}
    inventory = only_one(fleet['controller_inventories'])
    assert inventory['variables']['ansible_connection'] == 'local'
    hosts = fleet['controller_hosts']
    assert sorted(host['name'] for host in hosts) == sorted(SECRETS)
    for host in hosts:
        assert host['inventory'] == inventory['name']
        variables = _rendered(host['variables'], dict(injected, inventory_hostname=host['name']))
        assert variables['egressip_kubernetes']['api_key'] == SECRETS[host['name']]['api_key']
        assert variables['egressip_vcenter']['password'] == SECRETS[host['name']]['vcenter_password']
        assert set(variables['egressip_kubernetes']) <= set(preamble['__fleet_kubernetes_keys'])
        assert set(variables['egressip_vcenter']) <= set(preamble['__fleet_vcenter_keys'])
        assert schema.validate(dict(variables, egressip_report_dir=inventory['variables']['egressip_report_dir'])) == []
    group = only_one(fleet['controller_groups'])
    assert group['name'] == 'egressip_clusters' and sorted(group['hosts']) == sorted(SECRETS)


def test_the_job_templates_run_the_fleet_and_enable_rolls_out_with_a_canary(fleet):
    templates = dict((template['name'], template) for template in fleet['controller_templates'])
    verify, enable = templates['EgressIP fleet - verify'], templates['EgressIP fleet - enable']
    for template in (verify, enable):
        assert template['inventory'] == 'EgressIP fleet' and template['forks'] >= 2
        assert os.path.isfile(os.path.join(ROOT, 'playbooks', template['playbook']))
    assert verify['job_slice_count'] > 1
    # the rollout needs every cluster in one job: its batches and its stop do not span slices
    assert enable['job_slice_count'] == 1
    rollout = enable['extra_vars']['egressip_rollout']
    assert rollout[0] == 1 and all(re.match(r'^([1-9][0-9]*|([1-9][0-9]?|100)%)$', str(size)) for size in rollout)
    assert schema.validate({'egressip_rollout': rollout, 'egressip_max_fail_percentage': enable['extra_vars']['egressip_max_fail_percentage']}) == []
