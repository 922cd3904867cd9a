"""Kubernetes connection: configuration sources, error messages (never the token), client helpers."""

import http.client
import io
import json
import sys
import urllib.parse

import pytest
import urllib3
import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.clients import k8s as _k8s
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import (
    ApiError,
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


# --- configuration -------------------------------------------------------------------------------

def test_host_and_api_key_need_no_file(no_default_config):
    configuration, source = build_configuration(params(host='https://api.example.com:6443/', api_key=TOKEN))
    assert configuration.host == 'https://api.example.com:6443'
    assert configuration.authorization == 'Bearer %s' % TOKEN
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
    assert configuration.authorization == 'Bearer %s' % OTHER_TOKEN
    assert configuration.verify_ssl is False and configuration.ssl_ca_cert == '/etc/ca.crt'
    assert {TOKEN, OTHER_TOKEN} <= configuration_secrets(configuration)  # both hidden: the kubeconfig's is still in the file
    assert source == 'kubeconfig %s with the token from api_key (K8S_AUTH_API_KEY)' % path


def test_host_overrides_the_kubeconfig_server(no_default_config):
    path = write_kubeconfig(no_default_config / 'kubeconfig')
    configuration, source = build_configuration(params(kubeconfig=path, host='https://other:6443'))
    assert configuration.host == 'https://other:6443' and source == 'kubeconfig %s' % path
    assert TOKEN in configuration_secrets(configuration)


# --- error messages ------------------------------------------------------------------------------

def test_api_error_message_from_status_body():
    exc = ApiError(404, 'Not Found', status_body(404, 'NotFound', 'nodes "w9" not found'))
    message = api_error_message(exc, 'get', 'nodes/w9', 'GET', 'https://api:6443/api/v1/nodes/w9')
    assert message == 'get nodes/w9 (GET https://api:6443/api/v1/nodes/w9) failed: HTTP 404 NotFound: nodes "w9" not found'


def test_api_error_message_from_plain_text_body():
    exc = ApiError(404, 'Not Found', '404 page not found\n')
    message = api_error_message(exc, 'list', 'egressips.k8s.ovn.org', 'GET', 'https://api:6443/apis/k8s.ovn.org/v1/egressips')
    assert message.endswith('failed: HTTP 404 Not Found: 404 page not found')


def test_api_error_message_without_body():
    exc = ApiError(500, 'Internal Server Error')
    assert api_error_message(exc, 'list', 'nodes', 'GET', 'https://api/api/v1/nodes').endswith('HTTP 500 Internal Server Error')


class FakePool:
    """Stands in for the urllib3 pool manager: records each request, answers from a list (an exception is raised)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    def request(self, method, url, **kwargs):
        self.requests.append(dict(kwargs, method=method, url=url))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, body = answer[:2]
        headers = answer[2] if len(answer) > 2 else {'content-type': 'application/json'}
        return urllib3.HTTPResponse(body=body.encode(), status=status, headers=headers, preload_content=True,
                                    reason=http.client.responses.get(status))


def client_with(*answers, **kwargs):
    connection = _k8s.Connection(kwargs.get('host', 'https://api.cluster-a.example.com:6443'))
    connection.set_token(TOKEN)
    pool = FakePool(*answers)
    return K8sClient(connection, kwargs.get('source', 'kubeconfig /tmp/kc'), pool=pool), pool


def test_401_names_the_credentials_source_not_the_token():
    k8s, pool = client_with((401, status_body(401, 'Unauthorized', 'Unauthorized'), {'WWW-Authenticate': 'Bearer'}))
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.NODES)
    msg = failure.value.msg
    assert msg.startswith('list nodes (GET https://api.cluster-a.example.com:6443/api/v1/nodes?limit=500) failed: HTTP 401 Unauthorized')
    assert 'refused the credentials from kubeconfig /tmp/kc' in msg
    assert TOKEN not in msg and TOKEN not in json.dumps(failure.value.details)
    assert failure.value.details['status'] == 401 and failure.value.details['reason'] == 'Unauthorized'
    assert 'kubernetes_version' in failure.value.details and 'urllib3_version' in failure.value.details
    assert pool.requests[0]['headers']['Authorization'] == 'Bearer %s' % TOKEN  # sent, never shown


def test_403_mentions_rbac():
    k8s = client_with((403, status_body(403, 'Forbidden', 'nodes is forbidden: User "dev" cannot list resource "nodes"')))[0]
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.NODES)
    assert 'User "dev" cannot list resource "nodes"' in failure.value.msg and 'RBAC permission to list nodes' in failure.value.msg


def test_plain_text_error_body_keeps_the_http_reason():
    k8s = client_with((404, '404 page not found\n', {'content-type': 'text/plain'}))[0]
    with pytest.raises(ModuleFailure) as failure:
        k8s.request('get', 'nodes w9', '/api/v1/nodes/w9')
    assert failure.value.msg == 'get nodes w9 (GET https://api.cluster-a.example.com:6443/api/v1/nodes/w9) failed: HTTP 404 Not Found: 404 page not found'
    assert failure.value.details['reason'] == 'Not Found'


def test_unreachable_api():
    reason = urllib3.exceptions.NewConnectionError(None, 'HTTPSConnection(host=...): Failed to establish a new connection: [Errno 111] Connection refused')
    k8s = client_with(urllib3.exceptions.MaxRetryError(None, '/api/v1/nodes', reason=reason))[0]
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.NODES)
    assert failure.value.msg == ('list nodes (GET https://api.cluster-a.example.com:6443/api/v1/nodes?limit=500) failed: cannot reach the Kubernetes API at '
                                 'https://api.cluster-a.example.com:6443 (from kubeconfig /tmp/kc): '
                                 'failed to establish a new connection: [Errno 111] Connection refused')
    assert failure.value.details['reason'] == 'unreachable'


def test_socket_error_is_unreachable_too(monkeypatch):
    # a read cut by resets is repeated (test_k8s_client_parity.py), then reported as unreachable
    monkeypatch.setattr(_k8s.time, 'sleep', lambda seconds: None)
    k8s, pool = client_with(*[ConnectionResetError(104, 'Connection reset by peer')] * (_k8s.MAX_RETRIES + 1))
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.NODES)
    assert failure.value.details['reason'] == 'unreachable' and 'Connection reset by peer' in failure.value.msg
    assert len(pool.requests) == _k8s.MAX_RETRIES + 1


def test_untrusted_certificate():
    reason = urllib3.exceptions.SSLError('[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate')
    k8s = client_with(urllib3.exceptions.MaxRetryError(None, '/api/v1/nodes', reason=reason))[0]
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.NODES)
    assert 'TLS certificate of the Kubernetes API at https://api.cluster-a.example.com:6443 is not trusted' in failure.value.msg
    assert 'CERTIFICATE_VERIFY_FAILED' in failure.value.msg and 'K8S_AUTH_SSL_CA_CERT' in failure.value.msg
    assert failure.value.details['reason'] == 'certificate_untrusted'


def test_tls_failure_that_is_not_about_the_servers_certificate_points_at_the_client_certificate():
    reason = urllib3.exceptions.SSLError('[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED] tlsv13 alert certificate required (_ssl.c:2580)')
    k8s = client_with(urllib3.exceptions.MaxRetryError(None, '/api/v1/nodes', reason=reason))[0]
    with pytest.raises(ModuleFailure) as failure:
        kube.list_objects(k8s, kube.NODES)
    assert failure.value.details['reason'] == 'tls_handshake_failed'
    assert 'TLS handshake with the Kubernetes API at https://api.cluster-a.example.com:6443 failed' in failure.value.msg
    assert 'set client_cert and client_key (K8S_AUTH_CERT_FILE, K8S_AUTH_KEY_FILE)' in failure.value.msg


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
    k8s, pool = client_with((200, 'EGRESS 10.20.0.200\n', {'content-type': 'text/plain'}), (404, status_body(404, 'NotFound', 'pods "p" not found')))
    assert k8s.request('get', 'pods/log ns/p', '/api/v1/namespaces/ns/pods/p/log', text=True) == 'EGRESS 10.20.0.200\n'
    with pytest.raises(ModuleFailure) as failure:
        k8s.request('get', 'pods/log ns/p', '/api/v1/namespaces/ns/pods/p/log', text=True)
    assert failure.value.msg == ('get pods/log ns/p (GET https://api.cluster-a.example.com:6443/api/v1/namespaces/ns/pods/p/log) '
                                 'failed: HTTP 404 NotFound: pods "p" not found')
    assert failure.value.details['status'] == 404
    assert TOKEN not in failure.value.msg


def _page(names, token=None, remaining=None):
    meta = {'resourceVersion': '1042'}
    if token:
        meta.update({'continue': token, 'remainingItemCount': remaining})
    return (200, json.dumps({'kind': 'NodeList', 'metadata': meta, 'items': [{'metadata': {'name': n}} for n in names]}))


def _query(request):
    return urllib.parse.parse_qs(urllib.parse.urlsplit(request['url']).query)


def test_lists_follow_continue_with_a_page_size_of_two():
    k8s, pool = client_with(_page(['a', 'b'], 'tok1', 3), _page(['c', 'd'], 'tok2', 1), _page(['e']))
    nodes = k8s.list_items('nodes', '/api/v1/nodes', query={'labelSelector': 'x=y'}, page_size=2)
    assert [n['metadata']['name'] for n in nodes] == ['a', 'b', 'c', 'd', 'e']
    assert [_query(r) for r in pool.requests] == [
        {'labelSelector': ['x=y'], 'limit': ['2']},
        {'labelSelector': ['x=y'], 'limit': ['2'], 'continue': ['tok1']},
        {'labelSelector': ['x=y'], 'limit': ['2'], 'continue': ['tok2']},
    ]


def test_list_pages_are_lists_page_size_items_each():
    # the request-count budget (docs/benchmarks.md): one list request per LIST_PAGE_SIZE items
    assert _k8s.LIST_PAGE_SIZE == 500
    k8s, pool = client_with(_page(['n%d' % i for i in range(500)], 'tok', 1), _page(['n500']))
    assert len(kube.list_objects(k8s, kube.NODES)) == 501
    assert [_query(r)['limit'] for r in pool.requests] == [['500'], ['500']]


def test_an_expired_continue_token_restarts_the_list_in_one_request_without_limit():
    expired = status_body(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.')
    k8s, pool = client_with(_page(['a', 'b'], 'tok1', 3), (410, expired), _page(['a', 'b', 'c', 'd', 'e']))
    nodes = k8s.list_items('nodes', '/api/v1/nodes', page_size=2)
    assert [n['metadata']['name'] for n in nodes] == ['a', 'b', 'c', 'd', 'e']
    assert [_query(r) for r in pool.requests] == [{'limit': ['2']}, {'limit': ['2'], 'continue': ['tok1']}, {}]


def test_a_410_on_the_first_page_is_a_failure():
    k8s, pool = client_with((410, status_body(410, 'Expired', 'too old')))
    with pytest.raises(ModuleFailure) as failure:
        k8s.list_items('nodes', '/api/v1/nodes', page_size=2)
    assert failure.value.details['status'] == 410 and len(pool.requests) == 1


def test_no_authorization_header_without_credentials():
    connection = _k8s.Connection('https://api.cluster-a.example.com:6443')
    pool = FakePool((200, '{"items": []}'))
    kube.list_objects(K8sClient(connection, 'the host option (K8S_AUTH_HOST), without credentials', pool=pool), kube.NODES)
    assert 'Authorization' not in pool.requests[0]['headers']


def test_pool_manager_follows_the_connection():
    connection = _k8s.Connection('https://api.cluster-a.example.com:6443')
    connection.ca_cert_data = '-----BEGIN CERTIFICATE-----\n...'
    connection.tls_server_name = 'api.internal'
    pool = _k8s.pool_manager(connection)
    assert isinstance(pool, urllib3.PoolManager) and not isinstance(pool, urllib3.ProxyManager)
    assert pool.connection_pool_kw['cert_reqs'] == 'CERT_REQUIRED'
    assert pool.connection_pool_kw['ca_cert_data'] == connection.ca_cert_data
    assert pool.connection_pool_kw['server_hostname'] == 'api.internal'
    connection.verify_ssl = False
    connection.proxy = 'http://user:pw@proxy.example.com:3128'
    pool = _k8s.pool_manager(connection)
    assert isinstance(pool, urllib3.ProxyManager) and pool.connection_pool_kw['cert_reqs'] == 'CERT_NONE'
    assert pool.proxy.host == 'proxy.example.com' and pool.proxy_headers['proxy-authorization'].startswith('Basic ')


def test_environment_proxy_is_not_read(monkeypatch):
    monkeypatch.setenv('HTTPS_PROXY', 'http://proxy.example.com:3128')
    assert not isinstance(_k8s.pool_manager(_k8s.Connection('https://api:6443')), urllib3.ProxyManager)


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


def test_socks_proxy_without_pysocks_names_the_library_not_the_password(monkeypatch):
    monkeypatch.setitem(sys.modules, 'urllib3.contrib.socks', None)  # as when PySocks is not installed
    connection = _k8s.Connection('https://api:6443')
    connection.proxy = 'socks5h://user:pr0xy-secret@proxy.example.com:1080'
    with pytest.raises(ModuleFailure) as failure:
        _k8s.pool_manager(connection)
    assert failure.value.msg.startswith('proxy socks5h://proxy.example.com:1080 is a SOCKS proxy, which needs the Python library PySocks')
    assert 'pr0xy-secret' not in failure.value.msg and failure.value.details['reason'] == 'proxy_unsupported'


class StreamPool(FakePool):
    """A pool whose answers stream (a watch): each body is read line by line as the API server sends events."""

    def request(self, method, url, **kwargs):
        self.requests.append(dict(kwargs, method=method, url=url))
        status, body = self.answers.pop(0)
        return urllib3.HTTPResponse(body=io.BytesIO(body.encode()), status=status, headers={'content-type': 'application/json'},
                                    preload_content=False, reason=http.client.responses.get(status))


def test_a_watch_yields_each_event_as_a_line_and_a_refusal_fails_as_a_request_does():
    connection = _k8s.Connection('https://api.cluster-a.example.com:6443')
    connection.set_token(TOKEN)
    events = [{'type': 'ADDED', 'object': {'metadata': {'name': 'p1'}}}, {'type': 'MODIFIED', 'object': {'metadata': {'name': 'p1'}}}]
    pool = StreamPool((200, '\n'.join(json.dumps(event) for event in events) + '\n\n'), (403, status_body(403, 'Forbidden', 'no watch')))
    k8s = K8sClient(connection, 'kubeconfig /tmp/kc', pool=pool)
    assert list(k8s.watch('pods', '/api/v1/pods', {'labelSelector': 'run=r1', 'resourceVersion': '41'}, 30)) == events
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(pool.requests[0]['url']).query))
    assert query == {'labelSelector': 'run=r1', 'resourceVersion': '41', 'watch': 'true', 'timeoutSeconds': '30'}
    assert pool.requests[0]['preload_content'] is False and pool.requests[0]['timeout'].read_timeout > 30
    with pytest.raises(ModuleFailure) as refused:
        list(k8s.watch('pods', '/api/v1/pods', {}, 30))
    assert refused.value.details['status'] == 403 and 'watch pods' in refused.value.msg
