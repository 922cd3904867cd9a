"""The connection doc fragments document exactly the connection argument specs, one to one.

Names, types, aliases, defaults and environment variables must also stay those of
vmware.vmware and kubernetes.core (AAP credentials inject these variables).
"""

import re

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.doc_fragments import k8s_auth, vsphere_auth
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import K8S_ENV, k8s_argument_spec, k8s_nested_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import VSPHERE_ENV, vsphere_argument_spec, vsphere_nested_argument_spec

# As vmware.vmware (plugins/doc_fragments/base_options.py) and kubernetes.core (plugins/doc_fragments/k8s_auth_options.py).
UPSTREAM = {
    'vsphere': {
        'hostname': ('VMWARE_HOST', 'str', []),
        'username': ('VMWARE_USER', 'str', ['admin', 'user']),
        'password': ('VMWARE_PASSWORD', 'str', ['pass', 'pwd']),
        'port': ('VMWARE_PORT', 'int', []),
        'validate_certs': ('VMWARE_VALIDATE_CERTS', 'bool', []),
        'proxy_host': ('VMWARE_PROXY_HOST', 'str', []),
        'proxy_port': ('VMWARE_PROXY_PORT', 'int', []),
    },
    'k8s': {
        'kubeconfig': ('K8S_AUTH_KUBECONFIG', 'raw', []),
        'context': ('K8S_AUTH_CONTEXT', 'str', []),
        'host': ('K8S_AUTH_HOST', 'str', []),
        'api_key': ('K8S_AUTH_API_KEY', 'str', []),
        'validate_certs': ('K8S_AUTH_VERIFY_SSL', 'bool', ['verify_ssl']),
        'ca_cert': ('K8S_AUTH_SSL_CA_CERT', 'path', ['ssl_ca_cert']),
        'client_cert': ('K8S_AUTH_CERT_FILE', 'path', ['cert_file']),
        'client_key': ('K8S_AUTH_KEY_FILE', 'path', ['key_file']),
        'proxy': ('K8S_AUTH_PROXY', 'str', []),
        'no_proxy': ('K8S_AUTH_NO_PROXY', 'str', []),  # kubernetes.core 2.3.0
        'impersonate_user': ('K8S_AUTH_IMPERSONATE_USER', 'str', []),
        'impersonate_groups': ('K8S_AUTH_IMPERSONATE_GROUPS', 'list', []),
    },
}

CASES = [
    ('vsphere', vsphere_auth.ModuleDocFragment, vsphere_argument_spec, vsphere_nested_argument_spec, VSPHERE_ENV, 'vsphere', ['password']),
    ('k8s', k8s_auth.ModuleDocFragment, k8s_argument_spec, k8s_nested_argument_spec, K8S_ENV, 'kubernetes', ['api_key']),
]
IDS = [case[0] for case in CASES]


def documented_options(fragment):
    return yaml.safe_load(fragment.DOCUMENTATION)['options']


def nested_options(fragment, dict_name):
    return yaml.safe_load(fragment.NESTED)['options'][dict_name]


def env_of(spec_entry):
    fallback = spec_entry.get('fallback')
    assert fallback is not None, 'every connection option falls back to an environment variable'
    return fallback[1]


@pytest.mark.parametrize('domain, fragment, spec_function, nested_function, env, dict_name, secrets', CASES, ids=IDS)
def test_names_types_aliases_defaults_match(domain, fragment, spec_function, nested_function, env, dict_name, secrets):
    spec = spec_function()
    docs = documented_options(fragment)
    assert sorted(docs) == sorted(spec)
    for name, entry in spec.items():
        doc = docs[name]
        assert doc.get('type', 'str') == entry.get('type', 'str'), name
        assert sorted(doc.get('aliases', [])) == sorted(entry.get('aliases', [])), name
        assert doc.get('default') == entry.get('default'), name
        assert bool(doc.get('required', False)) == bool(entry.get('required', False)), name
        assert bool(entry.get('no_log', False)) == (name in secrets), name


@pytest.mark.parametrize('domain, fragment, spec_function, nested_function, env, dict_name, secrets', CASES, ids=IDS)
def test_environment_variables_match_spec_docs_and_upstream(domain, fragment, spec_function, nested_function, env, dict_name, secrets):
    spec = spec_function()
    docs = documented_options(fragment)
    upstream = UPSTREAM[domain]
    assert sorted(upstream) == sorted(spec)
    for name, entry in spec.items():
        variable, kind, aliases = upstream[name]
        assert env_of(entry) == [variable] == [env[name]], name
        assert entry.get('type', 'str') == kind and sorted(entry.get('aliases', [])) == aliases, name
        description = ' '.join(docs[name]['description'])
        assert 'E(%s)' % variable in description, name
        # no other connection variable is mentioned as this option's source
        assert re.findall(r'environment variable E\(([A-Z0-9_]+)\)', description) == [variable], name


@pytest.mark.parametrize('domain, fragment, spec_function, nested_function, env, dict_name, secrets', CASES, ids=IDS)
def test_secrets_are_documented_as_never_shown(domain, fragment, spec_function, nested_function, env, dict_name, secrets):
    docs = documented_options(fragment)
    for name in secrets:
        assert 'Never shown' in ' '.join(docs[name]['description'])


@pytest.mark.parametrize('domain, fragment, spec_function, nested_function, env, dict_name, secrets', CASES, ids=IDS)
def test_nested_variant_is_the_same_options_in_a_dict(domain, fragment, spec_function, nested_function, env, dict_name, secrets):
    nested_spec = nested_function()
    assert list(nested_spec) == [dict_name]
    assert nested_spec[dict_name]['type'] == 'dict'
    assert nested_spec[dict_name]['apply_defaults'] is True  # so the env fallbacks apply when the dict is left out
    assert nested_spec[dict_name]['options'] == spec_function()

    nested_doc = nested_options(fragment, dict_name)
    assert nested_doc['type'] == 'dict' and 'default' not in nested_doc
    top_level = documented_options(fragment)
    suboptions = nested_doc['suboptions']
    assert sorted(suboptions) == sorted(top_level)
    for name, doc in suboptions.items():
        # identical text, except that option references point into the dict
        unprefixed = yaml.safe_load(yaml.safe_dump(doc).replace('O(%s.' % dict_name, 'O('))
        assert unprefixed == top_level[name], name


@pytest.mark.parametrize('domain, fragment, spec_function, nested_function, env, dict_name, secrets', CASES, ids=IDS)
def test_option_references_resolve(domain, fragment, spec_function, nested_function, env, dict_name, secrets):
    names = set(spec_function())
    top = fragment.DOCUMENTATION
    assert set(re.findall(r'O\(([a-z_]+)\)', top)) <= names
    nested = fragment.NESTED
    assert set(re.findall(r'O\(%s\.([a-z_]+)\)' % dict_name, nested)) <= names
    assert not re.findall(r'O\((?!%s\.)[a-z_]+\)' % dict_name, nested), 'a nested reference lacks the dict prefix'
