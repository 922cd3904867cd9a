"""The AAP credential types shipped in extensions/aap/credential_types are valid and inject what the modules read.

AWX validates a credential type's inputs (fields with id, label and type string or boolean; required ids that exist)
and renders each injector value as a Jinja template over the inputs, `tower.filename` naming the file injector's file
(awx/main/models/credential/__init__.py CredentialType, injectors). The test does the same and checks the variables
against the modules' own tables, so a renamed variable breaks it.
"""

import os
import re

import jinja2
import pytest
import yaml
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import K8S_ENV
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import VCENTER_CA_BUNDLE_ENV
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import VSPHERE_ENV

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRECTORY = os.path.join(ROOT, 'extensions', 'aap', 'credential_types')
READ_BY_THE_COLLECTION = set(VSPHERE_ENV.values()) | set(K8S_ENV.values()) | {VCENTER_CA_BUNDLE_ENV}


def load(name):
    with open(os.path.join(DIRECTORY, name)) as handle:
        return yaml.safe_load(handle)


def render(value, inputs):
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(value).render(dict(inputs, tower={'filename': '/tmp/awx_f'}))


@pytest.mark.parametrize('name', sorted(os.listdir(DIRECTORY)))
def test_the_credential_type_is_valid_for_awx(name):
    kind = load(name)
    assert kind['kind'] == 'cloud' and kind['name'] and kind['description']
    fields = kind['inputs']['fields']
    ids = [field['id'] for field in fields]
    assert len(ids) == len(set(ids))
    for field in fields:
        assert set(field) <= {'id', 'label', 'type', 'secret', 'multiline', 'default', 'help_text', 'choices', 'format'}, field
        assert field['label'] and field['type'] in ('string', 'boolean')
        if field['id'] in ('password', 'kubeconfig'):
            assert field.get('secret') is True, field
    assert set(kind['inputs']['required']) <= set(ids)
    used = set()
    for value in list(kind['injectors']['env'].values()) + list(kind['injectors'].get('file', {}).values()):
        used.update(name for name in re.findall(r'\b([a-z_]+)\b', ' '.join(re.findall(r'{[{%](.*?)[}%]}', value))) if name in ids)
        render(value, dict((field['id'], field.get('default', '')) for field in fields))
    assert used == set(ids), 'every input is injected'
    assert set(kind['injectors']['env']) <= READ_BY_THE_COLLECTION


def test_the_vcenter_type_sets_every_vcenter_variable_and_verification_renders_as_a_boolean():
    kind = load('vcenter.yml')
    env = kind['injectors']['env']
    assert {VSPHERE_ENV[key] for key in ('hostname', 'port', 'username', 'password', 'validate_certs')} <= set(env)
    for checked in (True, False):
        inputs = {'host': 'vc', 'port': '443', 'username': 'u', 'password': 'p', 'validate_certs': checked, 'ca_bundle': ''}
        assert boolean(render(env['VMWARE_VALIDATE_CERTS'], inputs)) is checked
    assert render(env[VCENTER_CA_BUNDLE_ENV], dict(inputs, ca_bundle='')) == ''
    assert render(env[VCENTER_CA_BUNDLE_ENV], dict(inputs, ca_bundle='-----BEGIN CERTIFICATE-----')) == '/tmp/awx_f'


def test_the_kubeconfig_type_points_the_collection_at_the_file():
    env = load('openshift_kubeconfig.yml')['injectors']['env']
    assert render(env['K8S_AUTH_KUBECONFIG'], {'kubeconfig': 'x', 'context': ''}) == '/tmp/awx_f'
