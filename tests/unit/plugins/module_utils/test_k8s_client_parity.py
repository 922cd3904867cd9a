"""The Kubernetes client behaves as kubectl (client-go) does: proxies from the environment and NO_PROXY, the kubeconfig's
impersonation, and bounded retries (429 for any verb after Retry-After; 503 and connection resets for reads only).

The transport tests run against a plain-HTTP server on 127.0.0.1 that answers from a script of responses and records
what it received (headers included), so that what goes on the wire is asserted, not what the client meant to send.
"""

import http.server
import json
import socket
import threading

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.clients import k8s as _k8s
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import K8sClient, bypasses_proxy, build_configuration
from ansible_collections.ocp.egressip.plugins.module_utils.clients.kubeconfig import Connection, Kubeconfig, KubeconfigError

NODES = {'kind': 'NodeList', 'metadata': {}, 'items': [{'metadata': {'name': 'node-1'}}]}
PROXY_ENV = ('HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy')


@pytest.mark.parametrize('host, no_proxy, bypass', [
    ('https://api.ocp.example.com:6443', '*', True),
    ('https://api.ocp.example.com:6443', 'example.com', True),          # a domain matches its subdomains
    ('https://example.com:6443', 'example.com', True),                  # ... and itself
    ('https://example.com:6443', '.example.com', False),                # a leading dot: subdomains only
    ('https://api.example.com:6443', '.example.com', True),
    ('https://api.example.com.evil.net:6443', 'example.com', False),
    ('https://notexample.com:6443', 'example.com', False),
    ('https://api.ocp.example.com:6443', 'other.org, api.ocp.example.com:6443', True),
    ('https://api.ocp.example.com:6443', 'api.ocp.example.com:443', False),  # another port
    ('https://192.168.10.5:6443', '192.168.0.0/16', True),
    ('https://192.168.10.5:6443', '10.0.0.0/8', False),
    ('https://192.168.10.5:6443', '192.168.10.5', True),
    ('https://[fd00::5]:6443', 'fd00::/64', True),
    ('https://api.ocp.example.com:6443', '', False),
    ('https://127.0.0.1:6443', '', True),                               # loopback never through an environment proxy
    ('https://localhost:6443', None, True),
])
def test_no_proxy_follows_gos_rules(host, no_proxy, bypass):
    assert bypasses_proxy(host, no_proxy) is bypass


def test_an_explicit_proxy_is_used_for_loopback_too():
    assert bypasses_proxy('https://127.0.0.1:6443', '', loopback=False) is False


def _configuration(monkeypatch, tmp_path, env, cluster_extra=None, params=None):
    for name in PROXY_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    cluster = dict({'server': 'https://api.ocp.example.com:6443'}, **(cluster_extra or {}))
    config = {'clusters': [{'name': 'c', 'cluster': cluster}], 'users': [{'name': 'u', 'user': {'token': 'abc'}}],
              'contexts': [{'name': 'x', 'context': {'cluster': 'c', 'user': 'u'}}], 'current-context': 'x'}
    connection, _source = build_configuration(dict({'kubeconfig': config}, **(params or {})))
    return connection


def test_https_proxy_from_the_environment_like_kubectl(monkeypatch, tmp_path):
    connection = _configuration(monkeypatch, tmp_path, {'https_proxy': 'proxy.corp:3128', 'NO_PROXY': '.internal'})
    assert (connection.proxy, connection.proxy_from_env, connection.no_proxy) == ('http://proxy.corp:3128', True, '.internal')
    assert isinstance(_k8s.pool_manager(connection), _k8s.urllib3.ProxyManager)


def test_the_kubeconfig_proxy_url_and_the_option_win_over_the_environment(monkeypatch, tmp_path):
    env = {'HTTPS_PROXY': 'http://env-proxy:3128'}
    assert _configuration(monkeypatch, tmp_path, env, {'proxy-url': 'http://kc-proxy:8080'}).proxy == 'http://kc-proxy:8080'
    assert _configuration(monkeypatch, tmp_path, env, params={'proxy': 'http://opt-proxy:1'}).proxy == 'http://opt-proxy:1'
    # HTTP_PROXY is for http servers only
    assert _configuration(monkeypatch, tmp_path, {'HTTP_PROXY': 'http://p:1'}).proxy is None


def test_no_proxy_keeps_the_api_off_the_proxy(monkeypatch, tmp_path):
    connection = _configuration(monkeypatch, tmp_path, {'HTTPS_PROXY': 'http://p:3128', 'NO_PROXY': 'example.com'})
    assert not isinstance(_k8s.pool_manager(connection), _k8s.urllib3.ProxyManager)
    option = _configuration(monkeypatch, tmp_path, {'HTTPS_PROXY': 'http://p:3128', 'NO_PROXY': 'other.org'},
                            params={'no_proxy': 'ocp.example.com'})
    assert option.no_proxy == 'ocp.example.com'
    assert not isinstance(_k8s.pool_manager(option), _k8s.urllib3.ProxyManager)


def test_kubeconfig_impersonation_is_read(tmp_path):
    config = {'clusters': [{'name': 'c', 'cluster': {'server': 'https://api:6443'}}],
              'users': [{'name': 'u', 'user': {'token': 'abc', 'as': 'alice', 'as-groups': ['ops', 'sre'], 'as-uid': '42',
                                               'as-user-extra': {'scopes.example.com/team': ['a', 'b']}}}],
              'contexts': [{'name': 'x', 'context': {'cluster': 'c', 'user': 'u'}}], 'current-context': 'x'}
    connection = Kubeconfig.from_dict(config).connection()
    assert (connection.impersonate_user, connection.impersonate_groups, connection.impersonate_uid) == ('alice', ['ops', 'sre'], '42')
    assert connection.impersonate_extra == {'scopes.example.com/team': ['a', 'b']}
    config['users'][0]['user'].pop('as')
    with pytest.raises(KubeconfigError, match='without as'):
        Kubeconfig.from_dict(config).connection()


def test_impersonate_groups_without_a_user_is_refused(monkeypatch, tmp_path):
    with pytest.raises(ModuleFailure, match='impersonate_groups ops needs impersonate_user'):
        _configuration(monkeypatch, tmp_path, {}, params={'impersonate_groups': ['ops']})


class ScriptedServer(object):
    """Answers each request with the next scripted (status, headers, body) entry; 'reset' closes the socket unanswered."""

    def __init__(self):
        self.script = []
        self.received = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(length) if length else b''
                server.received.append({'method': self.command, 'path': self.path, 'headers': self.headers, 'body': body})
                status, headers, payload = server.script.pop(0) if server.script else (200, {}, NODES)
                if status == 'reset':
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')
                    self.close_connection = True
                    self.connection.close()
                    return
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d' % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def client(self, **attributes):
        connection = Connection(self.url)
        connection.set_token('t0ken')
        for key, value in attributes.items():
            setattr(connection, key, value)
        return K8sClient(connection, 'the test server')


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setattr(_k8s.time, 'sleep', sleeps.append)
    sleeps[:] = []
    scripted = ScriptedServer()
    yield scripted
    scripted.httpd.shutdown()


sleeps = []
TOO_MANY = (429, {'Retry-After': '1', 'Content-Type': 'text/plain; charset=utf-8'}, 'Too many requests, please try again later.\n')


def test_impersonation_headers_reach_the_server_one_per_group(server):
    client = server.client(impersonate_user='alice', impersonate_groups=['ops', 'sre'], impersonate_uid='42',
                           impersonate_extra={'scopes.example.com/team': ['a']})
    client.request('list', 'nodes', '/api/v1/nodes')
    headers = server.received[0]['headers']
    assert headers['Impersonate-User'] == 'alice' and headers['Impersonate-Uid'] == '42'
    assert headers.get_all('Impersonate-Group') == ['ops', 'sre']
    assert headers['Impersonate-Extra-scopes.example.com%2Fteam'] == 'a'
    assert headers['Authorization'] == 'Bearer t0ken'


def test_no_impersonation_headers_by_default(server):
    server.client().request('list', 'nodes', '/api/v1/nodes')
    assert not [key for key in server.received[0]['headers'] if key.lower().startswith('impersonate-')]


def test_429_is_retried_after_retry_after_for_a_write_too(server):
    server.script = [TOO_MANY, TOO_MANY, (201, {}, {'metadata': {'name': 'x'}})]
    client = server.client()
    assert client.request('create', 'egressips', '/apis/k8s.ovn.org/v1/egressips', body={'metadata': {'name': 'x'}}) == {'metadata': {'name': 'x'}}
    assert [item['method'] for item in server.received] == ['POST'] * 3
    assert sleeps == [1.0, 1.0] and client.retries == 2


def test_a_long_retry_after_is_capped_and_retries_are_bounded(server):
    server.script = [(429, {'Retry-After': '600'}, 'Too many requests, please try again later.\n')] * 10
    with pytest.raises(ModuleFailure, match='HTTP 429'):
        server.client().request('list', 'nodes', '/api/v1/nodes')
    assert len(server.received) == _k8s.MAX_RETRIES + 1
    assert sleeps == [_k8s.RETRY_AFTER_CAP] * _k8s.MAX_RETRIES


def test_503_is_retried_for_a_read_with_backoff(server):
    server.script = [(503, {}, {'kind': 'Status', 'code': 503, 'reason': 'ServiceUnavailable'})] * 2
    assert server.client().request('list', 'nodes', '/api/v1/nodes') == NODES
    assert len(server.received) == 3 and sleeps == [0.5, 1]


def test_503_is_not_retried_for_a_write(server):
    server.script = [(503, {}, {'kind': 'Status', 'code': 503, 'reason': 'ServiceUnavailable', 'message': 'etcd leader changed'})]
    with pytest.raises(ModuleFailure, match='etcd leader changed'):
        server.client().request('patch', 'nodes', '/api/v1/nodes/n', body={}, content_type='application/merge-patch+json')
    assert len(server.received) == 1 and sleeps == []


def test_a_connection_reset_is_retried_for_a_read_only(server):
    server.script = [('reset', {}, None)]
    assert server.client().request('get', 'nodes', '/api/v1/nodes/node-1') == NODES
    assert len(server.received) == 2
    server.received[:] = []
    server.script = [('reset', {}, None)]
    with pytest.raises(ModuleFailure):
        server.client().request('create', 'egressips', '/apis/k8s.ovn.org/v1/egressips', body={})
    assert len(server.received) == 1


# ---------------------------------------------------------------------------------------------------------------
# Differential: the same kubeconfigs through the kubernetes library's loader and through the collection's


def _library(config, context=None):
    kubernetes = pytest.importorskip('kubernetes')
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config_from_dict(config, context=context, client_configuration=configuration, persist_config=False)
    return configuration


def _read(path):
    if not path:
        return None
    with open(path, 'rb') as handle:
        return handle.read()


def _ca_of_library(configuration):
    return _read(configuration.ssl_ca_cert)


def _ca_of_ours(connection):
    return connection.ca_cert_data.encode() if connection.ca_cert_data else _read(connection.ssl_ca_cert)


PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2l0eQ==\n-----END CERTIFICATE-----\n'


def _b64(text):
    import base64
    return base64.b64encode(text.encode()).decode()


def _kubeconfigs(tmp_path):
    ca_file = tmp_path / 'ca.crt'
    ca_file.write_text(PEM)
    token_file = tmp_path / 'token'
    token_file.write_text('file-t0ken\n')
    cert, key = tmp_path / 'client.crt', tmp_path / 'client.key'
    cert.write_text('CERT\n')
    key.write_text('KEY\n')

    def config(cluster, user, **context):
        return {'clusters': [{'name': 'c', 'cluster': cluster}], 'users': [{'name': 'u', 'user': user}],
                'contexts': [{'name': 'x', 'context': dict({'cluster': 'c', 'user': 'u'}, **context)}], 'current-context': 'x'}
    return {
        'token and CA data': config({'server': 'https://api.a:6443', 'certificate-authority-data': _b64(PEM)}, {'token': 'sha256~a'}),
        'token file and CA file': config({'server': 'https://api.b:6443/', 'certificate-authority': str(ca_file)},
                                         {'tokenFile': str(token_file)}),
        'insecure': config({'server': 'https://10.0.0.5:6443', 'insecure-skip-tls-verify': True}, {'token': 't'}),
        'client certificate files': config({'server': 'https://api.c:6443'}, {'client-certificate': str(cert), 'client-key': str(key)}),
        'client certificate data': config({'server': 'https://api.d:6443'},
                                          {'client-certificate-data': _b64('CERT\n'), 'client-key-data': _b64('KEY\n')}),
        'basic auth': config({'server': 'https://api.e:6443'}, {'username': 'admin', 'password': 'pa55'}),
        'proxy-url and tls-server-name': config({'server': 'https://10.0.0.6:6443', 'proxy-url': 'http://proxy:3128',
                                                 'tls-server-name': 'api.internal'}, {'token': 't'}),
    }


@pytest.mark.parametrize('name', ['token and CA data', 'token file and CA file', 'insecure', 'client certificate files',
                                  'client certificate data', 'basic auth', 'proxy-url and tls-server-name'])
def test_the_collection_reads_a_kubeconfig_as_the_kubernetes_library_does(tmp_path, monkeypatch, name):
    for variable in PROXY_ENV:
        monkeypatch.delenv(variable, raising=False)
    config = _kubeconfigs(tmp_path)[name]
    library = _library(config)
    ours = Kubeconfig.from_dict(config).connection()
    assert ours.host == library.host.rstrip('/')
    assert ours.verify_ssl == bool(library.verify_ssl)
    assert _ca_of_ours(ours) == _ca_of_library(library)
    assert _read(ours.cert_file) == _read(library.cert_file) and _read(ours.key_file) == _read(library.key_file)
    basic = library.get_basic_auth_token() if library.username else None  # the library sends Basic only with a user name
    bearer = library.get_api_key_with_prefix('BearerToken')
    # the library keeps a tokenFile's trailing newline; client-go (kubectl) trims it (transport.NewCachedFileTokenSource), as we do
    bearer = bearer.rstrip() if bearer else bearer
    assert (ours.authorization or None) == (bearer or basic)
    assert (ours.proxy or None) == (library.proxy or None)
    assert (ours.tls_server_name or None) == (getattr(library, 'tls_server_name', None) or None)
