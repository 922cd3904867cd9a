"""Kubernetes connection: configuration sources, error messages (never the token), client helpers."""

import json
import urllib.parse

import pytest
import urllib3
import yaml
from kubernetes.client.exceptions import ApiException

from ansible_collections.ocp.egressip.plugins.module_utils import _k8s
from ansible_collections.ocp.egressip.plugins.module_utils._errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils._k8s import (
    K8sClient,
    api_error_message,
    build_configuration,
    configuration_secrets,
    k8s_client_for,
)

TOKEN = 'sha256~s3cr3t-t0ken-value'
OTHER_TOKEN = 'sha256~0ther-t0ken'


class FailJson(Exception):
    pass


class FakeModule:
    def __init__(self):
        self.no_log_values = set()
        self.failed = None

    def fail_json(self, **kwargs):
        self.failed = kwargs
        raise FailJson(kwargs)


def params(**kwargs):
    base = dict((name, None) for name in _k8s.k8s_argument_spec())
    base.update(kwargs)
    return base


def write_kubeconfig(path, server='https://api.cluster-a.example.com:6443', token=TOKEN, contexts=('admin',)):
    config = {
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': contexts[0],
        'clusters': [{'name': 'cluster-a', 'cluster': {'server': server, 'insecure-skip-tls-verify': False}}],
        'users': [{'name': 'admin', 'user': {'token': token}}],
        'contexts': [{'name': name, 'context': {'cluster': 'cluster-a', 'user': 'admin'}} for name in contexts],
    }
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.fixture
def no_default_config(monkeypatch, tmp_path):
    """No KUBECONFIG, an empty home, not in a Pod."""
    monkeypatch.delenv('KUBECONFIG', raising=False)
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    return tmp_path


def status_body(code, reason, message):
    return json.dumps({'kind': 'Status', 'apiVersion': 'v1', 'status': 'Failure', 'message': message, 'reason': reason, 'code': code})


class Response:
    """Enough of a urllib3 response for ApiException(http_resp=...)."""

    def __init__(self, status, reason, body, headers):
        self.status = status
        self.reason = reason
        self.data = body.encode()
        self.headers = headers


# --- configuration -------------------------------------------------------------------------------

def test_host_and_api_key_need_no_file(no_default_config):
    configuration, source = build_configuration(params(host='https://api.example.com:6443/', api_key=TOKEN))
    assert configuration.host == 'https://api.example.com:6443'
    assert configuration.api_key == {'authorization': 'Bearer %s' % TOKEN}
    assert source == 'the host option (K8S_AUTH_HOST)'
    assert TOKEN in configuration_secrets(configuration)


def test_explicit_kubeconfig(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig')
    configuration, source = build_configuration(params(kubeconfig=path))
    assert configuration.host == 'https://api.cluster-a.example.com:6443'
    assert source == 'kubeconfig %s' % path
    assert TOKEN in configuration_secrets(configuration)


def test_kubeconfig_as_dict(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig')
    configuration, source = build_configuration(params(kubeconfig=yaml.safe_load(open(path).read())))
    assert configuration.host == 'https://api.cluster-a.example.com:6443'
    assert source == 'the kubeconfig given as a dictionary'


def test_context_is_named_in_the_source(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig', contexts=('admin', 'viewer'))
    source = build_configuration(params(kubeconfig=path, context='viewer'))[1]
    assert source == 'kubeconfig %s (context viewer)' % path


def test_unknown_context_fails_naming_the_kubeconfig(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig')
    with pytest.raises(ModuleFailure) as failure:
        build_configuration(params(kubeconfig=path, context='nope'))
    assert path in failure.value.msg and 'nope' in failure.value.msg
    assert failure.value.details['reason'] == 'kubeconfig_invalid'
    assert TOKEN not in failure.value.msg


def test_missing_kubeconfig_names_the_path(no_default_config):
    with pytest.raises(ModuleFailure) as failure:
        build_configuration(params(kubeconfig='/nonexistent/kubeconfig'))
    assert failure.value.msg == 'kubeconfig /nonexistent/kubeconfig (from the kubeconfig option or K8S_AUTH_KUBECONFIG) does not exist'
    assert failure.value.details['reason'] == 'kubeconfig_missing'
    assert 'kubernetes_version' in failure.value.details


def test_garbage_kubeconfig(no_default_config):
    path = no_default_config / 'kubeconfig'
    path.write_text('this: [is not: a kubeconfig')
    with pytest.raises(ModuleFailure) as failure:
        build_configuration(params(kubeconfig=str(path)))
    assert failure.value.msg.startswith('Cannot use kubeconfig %s: ' % path)


def test_kubeconfig_env_variable_like_the_kubernetes_client(no_default_config, monkeypatch):
    path = write_kubeconfig(no_default_config / 'from-env')
    monkeypatch.setenv('KUBECONFIG', path)
    configuration, source = build_configuration(params())
    assert configuration.host == 'https://api.cluster-a.example.com:6443' and source == 'kubeconfig %s' % path


def test_kubeconfig_env_pointing_nowhere(no_default_config, monkeypatch):
    monkeypatch.setenv('KUBECONFIG', '/gone/config')
    with pytest.raises(ModuleFailure) as failure:
        build_configuration(params())
    assert failure.value.msg == 'kubeconfig /gone/config (from the KUBECONFIG environment variable) does not exist'


def test_home_kubeconfig(no_default_config):
    home = no_default_config / 'home' / '.kube'
    home.mkdir(parents=True)
    path = write_kubeconfig(home / 'config')
    assert build_configuration(params())[1] == 'kubeconfig %s' % path


def test_nothing_configured(no_default_config):
    with pytest.raises(ModuleFailure) as failure:
        build_configuration(params())
    assert failure.value.msg.startswith('No Kubernetes connection configured: set kubeconfig (K8S_AUTH_KUBECONFIG), or host with api_key')
    assert failure.value.details['reason'] == 'kubeconfig_missing'


def test_in_cluster_is_tried_in_a_pod(no_default_config, monkeypatch):
    monkeypatch.setenv('KUBERNETES_SERVICE_HOST', '172.30.0.1')
    monkeypatch.setenv('KUBERNETES_SERVICE_PORT', '443')
    with pytest.raises(ModuleFailure) as failure:  # no service account token on this machine
        build_configuration(params())
    assert failure.value.msg.startswith('Cannot use the in-cluster service account')


def test_overrides_apply_over_the_kubeconfig(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig')
    configuration, source = build_configuration(params(kubeconfig=path, api_key=OTHER_TOKEN, validate_certs=False, ca_cert='/etc/ca.crt'))
    assert configuration.host == 'https://api.cluster-a.example.com:6443'
    assert configuration.api_key == {'authorization': 'Bearer %s' % OTHER_TOKEN}
    assert configuration.refresh_api_key_hook is None
    assert configuration.verify_ssl is False and configuration.ssl_ca_cert == '/etc/ca.crt'
    assert source == 'kubeconfig %s with the token from api_key (K8S_AUTH_API_KEY)' % path


def test_host_overrides_the_kubeconfig_server(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig')
    configuration, source = build_configuration(params(kubeconfig=path, host='https://other:6443'))
    assert configuration.host == 'https://other:6443' and source == 'kubeconfig %s' % path
    assert TOKEN in configuration_secrets(configuration)


# --- error messages ------------------------------------------------------------------------------

def test_api_error_message_from_status_body():
    exc = ApiException(status=404, reason='Not Found', body=status_body(404, 'NotFound', 'nodes "w9" not found'))
    message = api_error_message(exc, 'get', 'nodes/w9', 'GET', 'https://api:6443/api/v1/nodes/w9')
    assert message == 'get nodes/w9 (GET https://api:6443/api/v1/nodes/w9) failed: HTTP 404 NotFound: nodes "w9" not found'


def test_api_error_message_from_plain_text_body():
    exc = ApiException(status=404, reason='Not Found', body='404 page not found\n')
    message = api_error_message(exc, 'list', 'egressips.k8s.ovn.org', 'GET', 'https://api:6443/apis/k8s.ovn.org/v1/egressips')
    assert message.endswith('failed: HTTP 404 Not Found: 404 page not found')


def test_api_error_message_without_body():
    exc = ApiException(status=500, reason='Internal Server Error')
    assert api_error_message(exc, 'list', 'nodes', 'GET', 'https://api/api/v1/nodes').endswith('HTTP 500 Internal Server Error')


def test_api_error_message_never_contains_request_headers_or_token():
    response = Response(401, 'Unauthorized', status_body(401, 'Unauthorized', 'Unauthorized'),
                        {'Authorization': 'Bearer %s' % TOKEN, 'Audit-Id': 'abc'})
    exc = ApiException(http_resp=response)
    message = api_error_message(exc, 'list', 'nodes', 'GET', 'https://api/api/v1/nodes')
    assert TOKEN not in message and 'Authorization' not in message


def client(host='https://api.cluster-a.example.com:6443', source='kubeconfig /tmp/kc'):
    configuration = _k8s.kubernetes.client.Configuration()
    configuration.host = host
    configuration.api_key = {'authorization': 'Bearer %s' % TOKEN}
    return K8sClient(_k8s.kubernetes.client.ApiClient(configuration), source)


def raising(exc):
    def func(*args, **kwargs):
        raise exc
    return func


def test_call_401_names_the_credentials_source_not_the_token():
    exc = ApiException(http_resp=Response(401, 'Unauthorized', status_body(401, 'Unauthorized', 'Unauthorized'),
                                          {'WWW-Authenticate': 'Bearer'}))
    with pytest.raises(ModuleFailure) as failure:
        client().call('list', 'nodes', '/api/v1/nodes', raising(exc))
    msg = failure.value.msg
    assert msg.startswith('list nodes (GET https://api.cluster-a.example.com:6443/api/v1/nodes) failed: HTTP 401 Unauthorized')
    assert 'refused the credentials from kubeconfig /tmp/kc' in msg
    assert TOKEN not in msg and TOKEN not in json.dumps(failure.value.details)
    assert failure.value.details['status'] == 401 and failure.value.details['reason'] == 'Unauthorized'
    assert 'kubernetes_version' in failure.value.details


def test_call_403_mentions_rbac():
    exc = ApiException(status=403, reason='Forbidden',
                       body=status_body(403, 'Forbidden', 'nodes is forbidden: User "dev" cannot list resource "nodes"'))
    with pytest.raises(ModuleFailure) as failure:
        client().call('list', 'nodes', '/api/v1/nodes', raising(exc))
    assert 'User "dev" cannot list resource "nodes"' in failure.value.msg and 'RBAC permission to list nodes' in failure.value.msg


def test_call_passes_a_request_timeout():
    seen = {}

    def func(*args, **kwargs):
        seen.update(kwargs)
        return 'ok'
    assert client().call('list', 'nodes', '/api/v1/nodes', func, label_selector='a=b') == 'ok'
    assert seen == {'label_selector': 'a=b', '_request_timeout': _k8s.REQUEST_TIMEOUT}


def test_unreachable_api():
    reason = urllib3.exceptions.NewConnectionError(None, 'HTTPSConnection(host=...): Failed to establish a new connection: [Errno 111] Connection refused')
    exc = urllib3.exceptions.MaxRetryError(None, '/api/v1/nodes', reason=reason)
    with pytest.raises(ModuleFailure) as failure:
        client().call('list', 'nodes', '/api/v1/nodes', raising(exc))
    assert failure.value.msg == ('list nodes (GET https://api.cluster-a.example.com:6443/api/v1/nodes) failed: cannot reach the Kubernetes API at '
                                 'https://api.cluster-a.example.com:6443 (from kubeconfig /tmp/kc): '
                                 'failed to establish a new connection: [Errno 111] Connection refused')
    assert failure.value.details['reason'] == 'unreachable'


def test_untrusted_certificate():
    reason = urllib3.exceptions.SSLError('[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate')
    exc = urllib3.exceptions.MaxRetryError(None, '/api/v1/nodes', reason=reason)
    with pytest.raises(ModuleFailure) as failure:
        client().call('list', 'nodes', '/api/v1/nodes', raising(exc))
    assert 'TLS certificate of the Kubernetes API at https://api.cluster-a.example.com:6443 is not trusted' in failure.value.msg
    assert 'CERTIFICATE_VERIFY_FAILED' in failure.value.msg and 'K8S_AUTH_SSL_CA_CERT' in failure.value.msg
    assert failure.value.details['reason'] == 'certificate_untrusted'


def test_custom_resource_not_served_gets_the_callers_message():
    k8s = client()
    k8s.custom_objects.list_cluster_custom_object = raising(ApiException(status=404, reason='Not Found', body='404 page not found'))
    with pytest.raises(ModuleFailure) as failure:
        k8s.list_cluster_custom_objects('k8s.ovn.org', 'v1', 'egressips', not_found_msg='EgressIP API not found on {host}')
    assert failure.value.msg == 'EgressIP API not found on https://api.cluster-a.example.com:6443'
    assert failure.value.details['reason'] == 'api_not_found'
    with pytest.raises(ModuleFailure) as failure:
        k8s.list_cluster_custom_objects('k8s.ovn.org', 'v1', 'egressips')
    assert 'list egressips.k8s.ovn.org (GET https://api.cluster-a.example.com:6443/apis/k8s.ovn.org/v1/egressips) failed: HTTP 404' in failure.value.msg


class FakePool:
    """The urllib3 pool manager under the kubernetes RESTClient: records each request, answers from a list."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    def request(self, method, url, **kwargs):
        self.requests.append(dict(kwargs, method=method, url=url))
        status, body = self.answers.pop(0)
        return urllib3.HTTPResponse(body=body.encode(), status=status, headers={'content-type': 'application/json'},
                                    preload_content=True)


def client_with(*answers):
    k8s = client()
    pool = FakePool(*answers)
    k8s.api_client.rest_client.pool_manager = pool
    return k8s, pool


def test_list_nodes_is_one_plain_json_request():
    node = {'metadata': {'name': 'w0', 'annotations': {'a': '1'}, 'creationTimestamp': '2026-11-30T01:02:03Z'},
            'spec': {'providerID': 'vsphere://x'}, 'status': {'unknownField': True}}
    k8s, pool = client_with((200, json.dumps({'kind': 'NodeList', 'items': [node]})))
    assert k8s.list_nodes(label_selector='node-role.kubernetes.io/worker') == [node]  # as the API sent it, nothing dropped
    [request] = pool.requests
    assert request['method'] == 'GET'
    url = urllib.parse.urlsplit(request['url'])
    assert (url.netloc, url.path) == ('api.cluster-a.example.com:6443', '/api/v1/nodes')
    assert urllib.parse.parse_qs(url.query) == {'labelSelector': ['node-role.kubernetes.io/worker']}
    assert request['headers']['authorization'] == 'Bearer %s' % TOKEN
    assert request['headers']['Accept'] == 'application/json'
    assert request['timeout'].connect_timeout == _k8s.REQUEST_TIMEOUT[0]


def test_request_sends_a_merge_patch_with_dry_run_and_drops_unset_query_values():
    k8s, pool = client_with((200, '{"metadata": {"name": "w0"}}'), (200, '{}'))
    body = {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': None}}}
    assert k8s.request('patch', 'nodes w0', '/api/v1/nodes/w0', query={'dryRun': 'All'}, body=body,
                       content_type='application/merge-patch+json') == {'metadata': {'name': 'w0'}}
    k8s.request('patch', 'nodes w0', '/api/v1/nodes/w0', query={'dryRun': None}, body=body, content_type='application/merge-patch+json')
    first, second = pool.requests
    assert first['method'] == 'PATCH' and first['url'].endswith('/api/v1/nodes/w0?dryRun=All')
    assert first['headers']['Content-Type'] == 'application/merge-patch+json'
    assert json.loads(first['body']) == body
    assert second['url'].endswith('/api/v1/nodes/w0')


def test_request_text_answer_and_error_status():
    k8s, pool = client_with((200, 'EGRESS 10.20.0.200\n'), (404, status_body(404, 'NotFound', 'pods "p" not found')))
    assert k8s.request('get', 'pods/log ns/p', '/api/v1/namespaces/ns/pods/p/log', text=True) == 'EGRESS 10.20.0.200\n'
    with pytest.raises(ModuleFailure) as failure:
        k8s.request('get', 'pods/log ns/p', '/api/v1/namespaces/ns/pods/p/log', text=True)
    assert failure.value.msg == ('get pods/log ns/p (GET https://api.cluster-a.example.com:6443/api/v1/namespaces/ns/pods/p/log) '
                                 'failed: HTTP 404 NotFound: pods "p" not found')
    assert failure.value.details['status'] == 404
    assert TOKEN not in failure.value.msg


def test_list_cluster_custom_objects_returns_plain_dicts():
    k8s = client()
    k8s.custom_objects.list_cluster_custom_object = lambda *args, **kwargs: {'items': [{'metadata': {'name': 'e'}}]}
    assert k8s.list_cluster_custom_objects('k8s.ovn.org', 'v1', 'egressips') == [{'metadata': {'name': 'e'}}]


# --- module glue ---------------------------------------------------------------------------------

def test_client_for_module_hides_the_token(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig')
    module = FakeModule()
    k8s = k8s_client_for(module, params(kubeconfig=path))
    assert k8s.source == 'kubeconfig %s' % path
    assert TOKEN in module.no_log_values  # AnsibleModule masks these in every output


def test_client_for_module_fails_with_versions(no_default_config):
    module = FakeModule()
    with pytest.raises(FailJson):
        k8s_client_for(module, params(kubeconfig='/nope'))
    assert module.failed['msg'].startswith('kubeconfig /nope')
    assert module.failed['kubernetes_version']
