"""A kubeconfig dict in the ``kubernetes`` option of the vCenter modules is a secret from the moment the module reads its
parameters (issue 13): a failure before the Kubernetes client is built (the argument checks), while
it is built (a missing context) or when the API cannot be reached never shows the token, not even in the invocation -vvv prints."""

import json

import pytest

TOKEN = 'sha256~vsphere-kubeconfig-dict-token-0123456789'
KUBECONFIG = {
    'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'admin',
    'clusters': [{'name': 'c', 'cluster': {'server': 'https://127.0.0.1:9'}}],
    'users': [{'name': 'u', 'user': {'token': TOKEN}}],
    'contexts': [{'name': 'admin', 'context': {'cluster': 'c', 'user': 'u'}}],
}
# vCenter and the API on a closed port
VCENTER = {'hostname': '127.0.0.1', 'port': 9, 'username': 'administrator@vsphere.local', 'password': 'vcenter-pass-4711',
           'validate_certs': False}
MODULES = {
    'vsphere_vm_nic': {'datacenter': 'DC0', 'network': 'ocp-egress', 'node_names': ['worker-0']},
    'vsphere_network_info': {'datacenter': 'DC0', 'cluster': 'DC0_C0', 'node_names': ['worker-0']},
}
FAILURES = {
    'missing context': {},
    'argument check': {'port': 'not-a-port'},
    'API unreachable': {'kubernetes': {'kubeconfig': KUBECONFIG}},
}


@pytest.mark.parametrize('failure', sorted(FAILURES))
@pytest.mark.parametrize('name', sorted(MODULES))
def test_the_token_of_a_kubeconfig_dict_never_appears(run_module, name, failure):
    args = dict(MODULES[name], _ansible_verbosity=3, kubernetes={'kubeconfig': KUBECONFIG, 'context': 'missing-context'}, **VCENTER)
    args.update(FAILURES[failure])
    result = run_module(name, args, env={})
    assert result.get('failed'), result
    assert TOKEN not in json.dumps(result) and TOKEN not in result['_stderr'], (failure, result.get('msg'))
    invocation = result.get('invocation', {}).get('module_args', {})
    if invocation:  # the argument checks fail before Ansible adds the defaults; the credentials are masked either way
        assert invocation['kubernetes']['kubeconfig']['users'][0]['user']['token'] == 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'
        assert 'v1' in json.dumps(invocation['kubernetes']['kubeconfig'])  # only credentials are masked


def test_a_missing_context_is_named(run_module):
    args = dict(MODULES['vsphere_vm_nic'], kubernetes={'kubeconfig': KUBECONFIG, 'context': 'missing-context'}, **VCENTER)
    result = run_module('vsphere_vm_nic', args, env={})
    assert 'context missing-context is not defined' in result['msg'], result['msg']
