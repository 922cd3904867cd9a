"""_k8s.pool_manager and K8sClient.request against a real local HTTPS server: CA trust, client certificates, SNI."""

import base64
import datetime
import http.server
import importlib.util
import json
import shutil
import socket
import socketserver
import ssl
import subprocess
import threading
import time

import pytest
import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.clients import k8s as _k8s
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kubeconfig as _kubeconfig
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import K8sClient

if importlib.util.find_spec('cryptography') is not None:
    PKI_BACKEND = 'cryptography'
elif shutil.which('openssl'):
    PKI_BACKEND = 'openssl'
else:
    PKI_BACKEND = None

pytestmark = pytest.mark.skipif(PKI_BACKEND is None, reason='test certificates need the Python library cryptography or the openssl command')

TOKEN = 'sha256~transport-t0ken'
NODES = {'kind': 'NodeList', 'items': [{'metadata': {'name': 'node-1'}}]}

# name -> (issuer, common name, subjectAltName, extendedKeyUsage); issuer None: a self-signed CA
PKI = {
    'ca': (None, 'ocp.egressip test CA', None, None),
    'other-ca': (None, 'an unrelated CA', None, None),
    'server': ('ca', '127.0.0.1', ['IP:127.0.0.1', 'DNS:localhost'], 'serverAuth'),
    'internal': ('ca', 'api.internal', ['DNS:api.internal'], 'serverAuth'),
    'client': ('ca', 'test-client', None, 'clientAuth'),
}


# ---------------------------------------------------------------------------------------------------------------
# A throwaway PKI


def _cryptography_pki(directory):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    import ipaddress

    now = datetime.datetime.now(datetime.timezone.utc)
    keys, certs = {}, {}
    for name, (issuer, common_name, alt_names, usage) in PKI.items():
        key = keys[name] = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        signer = keys[issuer] if issuer else key
        builder = (x509.CertificateBuilder()
                   .subject_name(subject)
                   .issuer_name(certs[issuer].subject if issuer else subject)
                   .public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False))
        if issuer is None:
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False, key_agreement=False,
                key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        else:
            builder = builder.add_extension(x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if usage == 'serverAuth' else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        if alt_names:
            builder = builder.add_extension(x509.SubjectAlternativeName([
                x509.IPAddress(ipaddress.ip_address(value[3:])) if value.startswith('IP:') else x509.DNSName(value[4:])
                for value in alt_names]), critical=False)
        certs[name] = builder.sign(signer, hashes.SHA256())
        (directory / ('%s.pem' % name)).write_bytes(certs[name].public_bytes(serialization.Encoding.PEM))
        (directory / ('%s.key' % name)).write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def _openssl_pki(directory):
    def openssl(*args):
        subprocess.run(('openssl',) + args, cwd=str(directory), check=True, capture_output=True, timeout=30)

    new_key = ('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes')
    for serial, (name, (issuer, common_name, alt_names, usage)) in enumerate(PKI.items(), 1000):
        if issuer is None:
            openssl('req', '-x509', *new_key, '-keyout', name + '.key', '-out', name + '.pem', '-days', '1', '-subj', '/CN=' + common_name,
                    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,digitalSignature,keyCertSign,cRLSign')
            continue
        extensions = ['basicConstraints=critical,CA:FALSE', 'extendedKeyUsage=' + usage,
                      'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid']
        if alt_names:
            extensions.append('subjectAltName=' + ','.join(alt_names))
        (directory / (name + '.ext')).write_text('\n'.join(extensions) + '\n')
        openssl('req', '-new', *new_key, '-keyout', name + '.key', '-out', name + '.csr', '-subj', '/CN=' + common_name)
        openssl('x509', '-req', '-in', name + '.csr', '-CA', issuer + '.pem', '-CAkey', issuer + '.key', '-set_serial', str(serial),
                '-days', '1', '-sha256', '-extfile', name + '.ext', '-out', name + '.pem')


@pytest.fixture(scope='module')
def pki(tmp_path_factory):
    """``{name: (certificate path, key path)}`` for the names of PKI."""
    directory = tmp_path_factory.mktemp('pki')
    (_cryptography_pki if PKI_BACKEND == 'cryptography' else _openssl_pki)(directory)
    return dict((name, (str(directory / (name + '.pem')), str(directory / (name + '.key')))) for name in PKI)


def pem(pki, name):
    with open(pki[name][0]) as handle:
        return handle.read()


# ---------------------------------------------------------------------------------------------------------------
# A real HTTPS server


class _Handler(http.server.BaseHTTPRequestHandler):
    """Records each request and answers a NodeList (HTTP/1.0: one request per connection)."""

    def do_GET(self):  # noqa: N802  # pylint: disable=invalid-name
        self.server.seen.append({'path': self.path, 'headers': dict(self.headers.items()), 'peer': self.connection.getpeercert()})
        body = json.dumps(NODES).encode('utf-8')
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # pylint: disable=arguments-differ
        pass


class _TLSServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """The TLS handshake runs in the request's thread: a failing or stalled client never blocks the server."""

    daemon_threads = True

    def __init__(self, context):
        self.context = context
        self.seen = []
        self.tls_errors = []
        self.server_names = []
        context.sni_callback = self._sni
        http.server.HTTPServer.__init__(self, ('127.0.0.1', 0), _Handler)

    def _sni(self, _socket, server_name, _context):
        self.server_names.append(server_name)

    def finish_request(self, request, client_address):
        request.settimeout(5)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            self.tls_errors.append(exc)
            return
        try:
            http.server.HTTPServer.finish_request(self, tls, client_address)
        finally:
            tls.close()

    @property
    def url(self):
        return 'https://127.0.0.1:%d' % self.server_address[1]


@pytest.fixture
def https_server():
    """``start(certificate name, client_ca=None)`` -> a running server; all are shut down after the test."""
    servers = []

    def start(pki, name, client_ca=None):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*pki[name])
        if client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(pki[client_ca][0])
        server = _TLSServer(context)
        thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
        thread.start()
        servers.append((server, thread))
        return server

    yield start
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(5)


def connection_to(server, token=TOKEN, **attributes):
    connection = _kubeconfig.Connection(server.url)
    if token:
        connection.set_token(token)
    for name, value in attributes.items():
        setattr(connection, name, value)
    return connection


def list_nodes(connection):
    return K8sClient(connection, 'test source').request('list', 'nodes', '/api/v1/nodes', query={'limit': 5, 'continue': None})


def refused_handshakes(server, timeout=5):
    """The server's handshake errors: it sends its alert, then its thread records the error, so under load the client
    may read the alert first."""
    deadline = time.monotonic() + timeout
    while not server.tls_errors and time.monotonic() < deadline:
        time.sleep(0.05)
    return server.tls_errors


def failure_of(connection):
    with pytest.raises(ModuleFailure) as info:
        list_nodes(connection)
    assert TOKEN not in info.value.msg and TOKEN not in json.dumps(info.value.details)
    return info.value


# ---------------------------------------------------------------------------------------------------------------
# Server certificate trust


def test_trusted_ca_data_succeeds_and_sends_the_token(pki, https_server):
    server = https_server(pki, 'server')
    assert list_nodes(connection_to(server, ca_cert_data=pem(pki, 'ca'))) == NODES
    assert len(server.seen) == 1
    request = server.seen[0]
    assert request['path'] == '/api/v1/nodes?limit=5'
    assert request['headers']['Authorization'] == 'Bearer %s' % TOKEN
    assert request['headers']['User-Agent'] == _k8s.USER_AGENT
    assert request['peer'] is None  # no client certificate was asked for or sent


def test_trusted_ca_file_succeeds(pki, https_server):
    server = https_server(pki, 'server')
    assert list_nodes(connection_to(server, ssl_ca_cert=pki['ca'][0])) == NODES
    assert server.seen[0]['headers']['Authorization'] == 'Bearer %s' % TOKEN


@pytest.mark.parametrize('trust', ['other-ca', None], ids=['another-ca', 'system-store'])
def test_untrusted_server_certificate_is_certificate_untrusted(pki, https_server, trust):
    server = https_server(pki, 'server')
    failure = failure_of(connection_to(server, ca_cert_data=pem(pki, trust) if trust else None))
    assert failure.details['reason'] == 'certificate_untrusted'
    assert server.url in failure.msg
    assert 'list nodes' in failure.msg
    assert server.seen == []  # the token never left the client


def test_verify_ssl_false_works_against_an_untrusted_server(pki, https_server):
    server = https_server(pki, 'internal')  # neither trusted nor issued for 127.0.0.1
    connection = connection_to(server, verify_ssl=False, ca_cert_data=pem(pki, 'other-ca'), tls_server_name='wrong.example.com')
    assert list_nodes(connection) == NODES
    assert server.seen[0]['headers']['Authorization'] == 'Bearer %s' % TOKEN


def test_no_authorization_header_without_credentials(pki, https_server):
    server = https_server(pki, 'server')
    assert list_nodes(connection_to(server, token=None, ca_cert_data=pem(pki, 'ca'))) == NODES
    assert 'Authorization' not in server.seen[0]['headers']


# ---------------------------------------------------------------------------------------------------------------
# Client certificates


def test_client_certificate_is_presented_when_the_server_requires_one(pki, https_server):
    server = https_server(pki, 'server', client_ca='ca')
    connection = connection_to(server, token=None, ca_cert_data=pem(pki, 'ca'), cert_file=pki['client'][0], key_file=pki['client'][1])
    assert list_nodes(connection) == NODES
    peer = server.seen[0]['peer']
    assert ((('commonName', 'test-client'),),) == peer['subject']
    assert server.tls_errors == []


def test_without_a_client_certificate_the_server_refuses(pki, https_server):
    server = https_server(pki, 'server', client_ca='ca')
    failure = failure_of(connection_to(server, ca_cert_data=pem(pki, 'ca')))
    # TLS 1.3 sends the refusal after the client's handshake completed: a TLS alert or a reset connection.
    # Never 'certificate_untrusted': the server's certificate is trusted, the remedy is a client certificate.
    assert failure.details['reason'] in ('tls_handshake_failed', 'unreachable')
    if failure.details['reason'] == 'tls_handshake_failed':
        assert 'client_cert and client_key' in failure.msg
    assert server.seen == []
    assert refused_handshakes(server), 'the server refused the handshake'


def test_a_client_certificate_from_another_ca_is_refused(pki, https_server):
    server = https_server(pki, 'server', client_ca='other-ca')
    connection = connection_to(server, ca_cert_data=pem(pki, 'ca'), cert_file=pki['client'][0], key_file=pki['client'][1])
    failure_of(connection)
    assert server.seen == []
    assert refused_handshakes(server)


def test_client_certificate_data_from_a_kubeconfig_reaches_the_server(pki, https_server, tmp_path, monkeypatch):
    """The whole path: kubeconfig *-data -> private files -> pool_manager -> TLS handshake."""
    monkeypatch.setattr(_kubeconfig, '_TEMP_DIR', [])
    monkeypatch.setattr('tempfile.tempdir', str(tmp_path))
    server = https_server(pki, 'server', client_ca='ca')

    def data(path):
        with open(path, 'rb') as handle:
            return base64.b64encode(handle.read()).decode('ascii')

    kubeconfig = tmp_path / 'config'
    kubeconfig.write_text(yaml.safe_dump({
        'clusters': [{'name': 'local', 'cluster': {'server': server.url + '/', 'certificate-authority-data': data(pki['ca'][0])}}],
        'users': [{'name': 'cert-user', 'user': {'client-certificate-data': data(pki['client'][0]), 'client-key-data': data(pki['client'][1])}}],
        'contexts': [{'name': 'local', 'context': {'cluster': 'local', 'user': 'cert-user'}}],
        'current-context': 'local',
    }))
    params = dict((name, None) for name in _k8s.k8s_argument_spec())
    params['kubeconfig'] = str(kubeconfig)
    connection, source = _k8s.build_configuration(params)
    assert source == 'kubeconfig %s' % kubeconfig
    assert connection.host == server.url
    assert list_nodes(connection) == NODES
    assert ((('commonName', 'test-client'),),) == server.seen[0]['peer']['subject']


# ---------------------------------------------------------------------------------------------------------------
# tls-server-name


def test_tls_server_name_checks_the_certificate_against_that_name(pki, https_server):
    server = https_server(pki, 'internal')  # issued for api.internal only
    connection = connection_to(server, ca_cert_data=pem(pki, 'ca'), tls_server_name='api.internal')
    assert list_nodes(connection) == NODES
    assert server.server_names == ['api.internal']  # and sends it as SNI
    assert server.seen[0]['headers']['Authorization'] == 'Bearer %s' % TOKEN


def test_without_tls_server_name_a_certificate_for_another_name_is_untrusted(pki, https_server):
    server = https_server(pki, 'internal')
    failure = failure_of(connection_to(server, ca_cert_data=pem(pki, 'ca')))
    assert failure.details['reason'] == 'certificate_untrusted'
    assert server.seen == []


def test_a_wrong_tls_server_name_is_untrusted(pki, https_server):
    server = https_server(pki, 'server')  # issued for 127.0.0.1 and localhost
    failure = failure_of(connection_to(server, ca_cert_data=pem(pki, 'ca'), tls_server_name='api.internal'))
    assert failure.details['reason'] == 'certificate_untrusted'
    assert server.seen == []


def test_pool_manager_is_built_once_per_client(pki, https_server):
    server = https_server(pki, 'server')
    client = K8sClient(connection_to(server, ca_cert_data=pem(pki, 'ca')), 'test source')
    assert client.request('get', 'nodes', '/api/v1/nodes') == NODES
    pool = client.pool
    assert client.request('get', 'nodes', '/api/v1/nodes') == NODES
    assert client.pool is pool
    assert [request['path'] for request in server.seen] == ['/api/v1/nodes', '/api/v1/nodes']


def test_unreachable_server(pki):
    connection = _kubeconfig.Connection('https://127.0.0.1:%d' % _free_port())
    connection.ca_cert_data = pem(pki, 'ca')
    failure = failure_of(connection)
    assert failure.details['reason'] == 'unreachable'
    assert 'test source' in failure.msg


def _free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def test_untrusted_message_says_what_to_do(pki, https_server):
    server = https_server(pki, 'server')
    failure = failure_of(connection_to(server))
    assert 'ca_cert' in failure.msg and 'validate_certs' in failure.msg
