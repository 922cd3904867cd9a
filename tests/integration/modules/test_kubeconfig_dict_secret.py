"""A kubeconfig given as a dict is a secret (issue 13): its credentials never appear in a module's output, not in the
failure for an unknown context, not in the invocation that -vvv shows."""

import json

import pytest

TOKEN = 'sha256~kubeconfig-dict-token-0123456789abcdef'
KEY_DATA = 'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCnNlY3JldAo='
KUBECONFIG = {
    'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'admin',
    'clusters': [{'name': 'c', 'cluster': {'server': 'https://127.0.0.1:9'}}],
    'users': [{'name': 'u', 'user': {'token': TOKEN}}, {'name': 'k', 'user': {'client-key-data': KEY_DATA}}],
    'contexts': [{'name': 'admin', 'context': {'cluster': 'c', 'user': 'u'}}],
}


@pytest.mark.parametrize('context', ['missing-context', None])
def test_kubeconfig_dict_credentials_are_masked_everywhere(run_module, context):
    args = {'kubeconfig': KUBECONFIG, '_ansible_verbosity': 3}
    if context:
        args['context'] = context
    result = run_module('egressip_info', args, env={})
    assert result.get('failed'), result
    text = json.dumps(result)
    assert TOKEN not in text and KEY_DATA not in text
    assert result['invocation']['module_args']['kubeconfig']['users'][0]['user']['token'] == 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'
    assert 'v1' in json.dumps(result['invocation']['module_args']['kubeconfig'])  # only credentials are masked
