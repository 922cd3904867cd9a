# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kubernetes client (plain JSON requests over urllib3) and the module base class.

Connection options and environment variables are those of kubernetes.core, so the same AAP
credential, kubeconfig and ``module_defaults`` serve both collections. The kubeconfig is read by
``kubeconfig.py`` (kubectl's rules); the kubernetes library is imported only for a kubeconfig user with a
credential plugin. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json
import os
import time
import traceback

try:
    import urllib3
    from urllib3._collections import HTTPHeaderDict  # urllib3 1.26 and 2.x (top-level only in 2.x)
    HAS_K8S_LIBS = True
    K8S_LIBS_ERROR = None
except ImportError:
    HAS_K8S_LIBS = False
    K8S_LIBS_ERROR = traceback.format_exc()

from ansible.module_utils.basic import env_fallback, missing_required_lib
from ansible.module_utils.six.moves.http_client import RemoteDisconnected
from ansible.module_utils.six.moves.urllib.parse import quote, urlencode

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import (
    ModuleFailure,
    fail_with,
    library_versions,
)
from ansible_collections.ocp.egressip.plugins.module_utils.clients.kubeconfig import (
    IN_CLUSTER_HOST_ENV,
    Connection,
    Kubeconfig,
    KubeconfigError,
    in_cluster_connection,
)

# (connect, read) seconds for each API request.
REQUEST_TIMEOUT = (15, 120)

USER_AGENT = 'ocp.egressip'

# Items per list request (limit/continue): kubectl's --chunk-size default; a 5,000-node cluster is read in 10 pages.
LIST_PAGE_SIZE = 500

# verb of K8sClient.request -> HTTP method
HTTP_METHODS = {'list': 'GET', 'get': 'GET', 'create': 'POST', 'replace': 'PUT', 'patch': 'PATCH', 'delete': 'DELETE'}

# Option name -> environment variable, exactly as kubernetes.core (and AAP's OpenShift credential).
K8S_ENV = {
    'kubeconfig': 'K8S_AUTH_KUBECONFIG',
    'context': 'K8S_AUTH_CONTEXT',
    'host': 'K8S_AUTH_HOST',
    'api_key': 'K8S_AUTH_API_KEY',
    'validate_certs': 'K8S_AUTH_VERIFY_SSL',
    'ca_cert': 'K8S_AUTH_SSL_CA_CERT',
    'client_cert': 'K8S_AUTH_CERT_FILE',
    'client_key': 'K8S_AUTH_KEY_FILE',
    'proxy': 'K8S_AUTH_PROXY',
    'no_proxy': 'K8S_AUTH_NO_PROXY',
    'impersonate_user': 'K8S_AUTH_IMPERSONATE_USER',
    'impersonate_groups': 'K8S_AUTH_IMPERSONATE_GROUPS',
}

# Bounded retries, as client-go's: a 429 (the server's flow control refused it before doing anything) for any verb,
# waiting its Retry-After; a 503 or a connection reset only for reads, which are safe to repeat.
MAX_RETRIES = 4
RETRY_AFTER_CAP = 10  # seconds: a longer Retry-After is waited for this long at most
RETRY_BACKOFF = (0.5, 1, 2, 4)
READ_VERBS = ('get', 'list')

# Connections kept per API server: machineset_network and node steps send up to `parallel` (default 8) at once.
POOL_MAXSIZE = 16


def k8s_argument_spec():
    """The Kubernetes connection options (documented by the ``ocp.egressip.k8s_auth`` doc fragment)."""
    return dict(
        kubeconfig=dict(type='raw', fallback=(env_fallback, [K8S_ENV['kubeconfig']])),
        context=dict(type='str', fallback=(env_fallback, [K8S_ENV['context']])),
        host=dict(type='str', fallback=(env_fallback, [K8S_ENV['host']])),
        api_key=dict(type='str', no_log=True, fallback=(env_fallback, [K8S_ENV['api_key']])),
        validate_certs=dict(type='bool', aliases=['verify_ssl'], fallback=(env_fallback, [K8S_ENV['validate_certs']])),
        ca_cert=dict(type='path', aliases=['ssl_ca_cert'], fallback=(env_fallback, [K8S_ENV['ca_cert']])),
        client_cert=dict(type='path', aliases=['cert_file'], fallback=(env_fallback, [K8S_ENV['client_cert']])),
        client_key=dict(type='path', aliases=['key_file'], fallback=(env_fallback, [K8S_ENV['client_key']])),
        proxy=dict(type='str', fallback=(env_fallback, [K8S_ENV['proxy']])),
        no_proxy=dict(type='str', fallback=(env_fallback, [K8S_ENV['no_proxy']])),
        impersonate_user=dict(type='str', fallback=(env_fallback, [K8S_ENV['impersonate_user']])),
        impersonate_groups=dict(type='list', elements='str', fallback=(env_fallback, [K8S_ENV['impersonate_groups']])),
    )


def k8s_nested_argument_spec():
    """The same options under one ``kubernetes`` dict, for modules whose main connection is vCenter.

    Both connections have a ``validate_certs`` option, so a module needing both keeps the
    other domain's options in a dict (documented by ``ocp.egressip.k8s_auth.nested``).
    """
    return dict(kubernetes=dict(type='dict', apply_defaults=True, options=k8s_argument_spec()))


def _failure(msg, **details):
    details.update(library_versions('kubernetes', 'urllib3'))
    return ModuleFailure(msg, **details)


def _default_kubeconfig():
    """``(paths, origin)`` of the kubeconfig kubectl would load by default, or ``(None, None)``."""
    env = os.environ.get('KUBECONFIG')
    if env:
        return [path for path in env.split(os.pathsep) if path], 'the KUBECONFIG environment variable'
    default = os.path.expanduser(os.path.join('~', '.kube', 'config'))
    if os.path.exists(default):
        return [default], 'the default location'
    return None, None


def _load_kubeconfig(kubeconfig, context, origin):
    """``(Connection, description)`` from a kubeconfig: a path, a list of paths, or a dict."""
    if isinstance(kubeconfig, dict):
        description = 'the kubeconfig given as a dictionary'
    else:
        paths = [os.path.expanduser(path) for path in (kubeconfig if isinstance(kubeconfig, list) else [kubeconfig])]
        missing = [path for path in paths if not os.path.exists(path)]
        if missing:
            raise _failure('kubeconfig %s (from %s) does not exist' % (', '.join(missing), origin), reason='kubeconfig_missing')
        description = 'kubeconfig %s' % os.pathsep.join(paths)
    if context:
        description += ' (context %s)' % context
    try:
        merged = Kubeconfig.from_dict(kubeconfig) if isinstance(kubeconfig, dict) else Kubeconfig.from_files(paths)
        connection = merged.connection(context)
    except KubeconfigError as exc:
        raise _failure('Cannot use %s: %s' % (description, exc), reason='kubeconfig_invalid')
    return connection, description


def build_configuration(params):
    """The Connection from the connection options, and a description of its source.

    Like kubernetes.core: ``host`` with ``api_key`` or a client certificate needs no file;
    otherwise the kubeconfig from the options, else ``KUBECONFIG`` or ``~/.kube/config``
    like kubectl, else the Pod's service account (in-cluster). Explicit options override
    what the kubeconfig says.
    """
    host, api_key, client_cert = params.get('host'), params.get('api_key'), params.get('client_cert')
    kubeconfig, context = params.get('kubeconfig'), params.get('context')
    if host and (api_key or client_cert):
        connection, source = Connection(), 'the host option (%s)' % K8S_ENV['host']
    elif kubeconfig:
        connection, source = _load_kubeconfig(kubeconfig, context, 'the kubeconfig option or %s' % K8S_ENV['kubeconfig'])
    else:
        paths, origin = _default_kubeconfig()
        if paths:
            connection, source = _load_kubeconfig(paths, context, origin)
        elif os.environ.get(IN_CLUSTER_HOST_ENV):
            try:
                connection = in_cluster_connection()
            except KubeconfigError as exc:
                raise _failure('Cannot use the in-cluster service account: %s' % exc, reason='in_cluster_invalid')
            source = 'the in-cluster service account'
        elif host:
            connection, source = Connection(), 'the host option (%s), without credentials' % K8S_ENV['host']
        else:
            raise _failure('No Kubernetes connection configured: set kubeconfig (%s), or host with api_key (%s, %s); '
                           'KUBECONFIG is not set, %s does not exist and the module does not run in a Pod.'
                           % (K8S_ENV['kubeconfig'], K8S_ENV['host'], K8S_ENV['api_key'], os.path.join('~', '.kube', 'config')),
                           reason='kubeconfig_missing')
    if api_key and not source.startswith('the host option'):
        source += ' with the token from api_key (%s)' % K8S_ENV['api_key']
    _apply_overrides(connection, params)
    return connection, source


def _apply_overrides(connection, params):
    if params.get('host'):
        connection.host = params['host'].rstrip('/')
    if params.get('api_key'):
        connection.set_token(params['api_key'])
    if params.get('validate_certs') is not None:
        connection.verify_ssl = params['validate_certs']
    if params.get('ca_cert'):
        connection.ssl_ca_cert, connection.ca_cert_data = params['ca_cert'], None
    for option, attribute in (('client_cert', 'cert_file'), ('client_key', 'key_file'), ('proxy', 'proxy'), ('no_proxy', 'no_proxy'),
                              ('impersonate_user', 'impersonate_user'), ('impersonate_groups', 'impersonate_groups')):
        if params.get(option):
            setattr(connection, attribute, params[option])
    if params.get('impersonate_groups') and not connection.impersonate_user:
        raise _failure('impersonate_groups %s needs impersonate_user (%s): the API refuses groups without the user to impersonate.'
                       % (', '.join(params['impersonate_groups']), K8S_ENV['impersonate_user']), reason='impersonation_invalid')
    if not connection.proxy:
        _proxy_from_environment(connection, os.environ)


def _proxy_from_environment(connection, environ):
    """kubectl's proxy when neither the proxy option nor the kubeconfig's proxy-url sets one: HTTPS_PROXY (https_proxy)
    for an https server, HTTP_PROXY (http_proxy) for http, unless NO_PROXY (no_proxy) or the no_proxy option lists it."""
    scheme = connection.host.split('://', 1)[0].lower() if connection.host and '://' in connection.host else 'https'
    names = ('HTTPS_PROXY', 'https_proxy') if scheme == 'https' else ('HTTP_PROXY', 'http_proxy')
    proxy = next((environ[name] for name in names if environ.get(name)), None)
    if not proxy:
        return
    connection.proxy = proxy if '://' in proxy else 'http://' + proxy  # Go assumes http:// without a scheme
    connection.proxy_from_env = True
    if not connection.no_proxy:
        connection.no_proxy = next((environ[name] for name in ('NO_PROXY', 'no_proxy') if environ.get(name)), None)


def bypasses_proxy(host_url, no_proxy, loopback=True):
    """Whether ``no_proxy`` (Go's NO_PROXY rules, which kubectl follows) exempts the server of ``host_url``.

    Entries: ``*`` (everything), an IP, a CIDR, a domain (``example.com`` matches it and its subdomains,
    ``.example.com`` its subdomains only), each optionally with ``:port``. localhost and loopback addresses never go
    through a proxy taken from the environment (``loopback``); a proxy given explicitly is used for them too, as
    client-go does with a kubeconfig's proxy-url.
    """
    parsed = urllib3.util.parse_url(host_url)
    host = (parsed.host or '').strip('[]').lower()
    port = parsed.port or (443 if (parsed.scheme or 'https') == 'https' else 80)
    address = _ip(host)
    if loopback and (host == 'localhost' or (address is not None and address.is_loopback)):
        return True
    for entry in (item.strip().lower() for item in (no_proxy or '').split(',')):
        if not entry:
            continue
        if entry == '*':
            return True
        if '/' in entry and address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name, entry_port = _split_port(entry)
        if entry_port is not None and entry_port != port:
            continue
        if address is not None and _ip(name) is not None:
            if _ip(name) == address:
                return True
        elif name.startswith('.') and host.endswith(name):
            return True
        elif name and not name.startswith('.') and (host == name or host.endswith('.' + name)):
            return True
    return False


def _ip(text):
    try:
        return ipaddress.ip_address(text.strip('[]'))
    except ValueError:
        return None


def _split_port(entry):
    if entry.startswith('['):
        host, _sep, rest = entry[1:].partition(']')
        return host, int(rest[1:]) if rest.startswith(':') and rest[1:].isdigit() else None
    if entry.count(':') == 1:
        host, port = entry.split(':')
        return host, int(port) if port.isdigit() else None
    return entry, None


def configuration_secrets(connection):
    """Tokens and passwords the connection holds, to hide from any module output."""
    return set(secret for secret in connection.secrets if secret)


def _status_from_body(body):
    """``(reason, message)`` from a Kubernetes ``Status`` body; plain text bodies become the message."""
    if body is None:
        return None, None
    if isinstance(body, bytes):
        body = body.decode('utf-8', 'replace')
    try:
        status = json.loads(body)
    except ValueError:
        text = ' '.join(body.split())
        return None, (text[:300] + '...') if len(text) > 300 else (text or None)
    if not isinstance(status, dict):
        return None, None
    return status.get('reason'), status.get('message')


def api_error_message(exc, verb, resource, method, url):
    """``<verb> <resource> (<METHOD> <url>) failed: HTTP <status> <reason>: <server message>``.

    Built from the status and the server's Status body only: request headers (which carry
    the token) never reach the message.
    """
    status_reason, message = _status_from_body(getattr(exc, 'body', None))
    text = '%s %s (%s %s) failed: HTTP %s %s' % (verb, resource, method, url, getattr(exc, 'status', None), status_reason or getattr(exc, 'reason', None) or '')
    text = text.rstrip()
    if message:
        text += ': %s' % message
    return text


def _is_verification_failure(exc):
    """Whether a TLS error is ours refusing the server's certificate (not the server refusing us, nor a broken handshake)."""
    text = str(getattr(exc, 'reason', None) or exc).lower()
    return 'certificate verify failed' in text or "doesn't match" in text or 'hostname mismatch' in text


def _network_error_text(exc):
    reason = getattr(exc, 'reason', None) or exc
    text = str(reason)
    marker = ': Failed to establish a new connection: '
    if marker in text:  # drop urllib3's connection object repr
        text = 'failed to establish a new connection: ' + text.split(marker, 1)[1]
    return text


class ApiError(Exception):
    """An HTTP answer outside 2xx: status, reason phrase and the body (a Kubernetes ``Status`` or text)."""

    def __init__(self, status, reason=None, body=None):
        super(ApiError, self).__init__('HTTP %s %s' % (status, reason or ''))
        self.status = status
        self.reason = reason
        self.body = body


def pool_manager(connection, maxsize=POOL_MAXSIZE):
    """The urllib3 pool for a Connection: its TLS trust and client certificate, its proxy (never one from the environment)."""
    kwargs = dict(maxsize=maxsize, cert_reqs='CERT_REQUIRED' if connection.verify_ssl else 'CERT_NONE')
    if connection.verify_ssl:
        kwargs.update(ca_certs=connection.ssl_ca_cert, ca_cert_data=connection.ca_cert_data)
        if connection.tls_server_name:
            kwargs['server_hostname'] = connection.tls_server_name
    else:
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    if connection.cert_file:
        kwargs.update(cert_file=connection.cert_file, key_file=connection.key_file)
    if not connection.proxy or (
            (connection.no_proxy or connection.proxy_from_env)
            and bypasses_proxy(connection.host, connection.no_proxy, loopback=connection.proxy_from_env)):
        return urllib3.PoolManager(**kwargs)
    if connection.proxy.split('://', 1)[0].lower() in ('socks4', 'socks4a', 'socks5', 'socks5h'):
        try:
            from urllib3.contrib.socks import SOCKSProxyManager  # pylint: disable=import-outside-toplevel
        except ImportError:
            raise _failure('proxy %s is a SOCKS proxy, which needs the Python library PySocks (pip install pysocks); or use an HTTP proxy.'
                           % _without_credentials(connection.proxy), reason='proxy_unsupported')
        return SOCKSProxyManager(connection.proxy, **kwargs)
    proxy_headers = urllib3.util.make_headers(proxy_basic_auth=urllib3.util.parse_url(connection.proxy).auth)
    return urllib3.ProxyManager(connection.proxy, proxy_headers=proxy_headers or None, **kwargs)


def _is_connection_reset(exc):
    """A connection the server (or a load balancer) dropped mid-request: reset or closed without an answer (an EOF).
    With retries off, urllib3 raises these as ProtocolError; the socket's own errors may come bare."""
    return isinstance(exc, (urllib3.exceptions.ProtocolError, ConnectionResetError, BrokenPipeError, RemoteDisconnected))


def _without_credentials(url):
    """A proxy URL without its user and password, for messages."""
    parsed = urllib3.util.parse_url(url)
    return parsed._replace(auth=None).url if parsed.auth else url


class K8sClient(object):
    """A Kubernetes API connection: plain JSON requests, and failures that name the endpoint.

    Objects come and go as the JSON the API sends: no typed client (importing ``kubernetes.client.CoreV1Api``
    builds about 250 pydantic models, 0.5-0.6 s of CPU; importing the kubernetes library at all costs 0.2 s,
    more than the rest of a no-op run of some modules: docs/benchmarks.md).
    """

    def __init__(self, connection, source, pool=None):
        self.connection = connection
        self.source = source
        self.host = connection.host
        self._pool = pool
        self.retries = 0  # requests repeated after a 429, a 503 or a connection reset

    @classmethod
    def from_params(cls, params):
        """Build a client from the connection options (see build_configuration)."""
        connection, source = build_configuration(params)
        return cls(connection, source)

    @property
    def pool(self):
        if self._pool is None:
            self._pool = pool_manager(self.connection)
        return self._pool

    def secrets(self):
        """Tokens to hide from module output."""
        return configuration_secrets(self.connection)

    def request(self, verb, resource, path, query=None, body=None, content_type=None, text=False):
        """One API request, answered as plain data: the decoded JSON body (a dict), or the text with ``text=True``.

        ``verb`` is one of HTTP_METHODS (``list``, ``get``, ``create``, ``patch``...), ``resource`` names the
        object(s) in messages, ``query`` a dict of query parameters (``None`` values dropped), ``body`` a JSON
        body sent with ``content_type`` (``application/json`` by default; a merge or JSON patch content type for
        ``patch``). An error becomes a ModuleFailure naming verb, resource, URL, status and the server's message
        (never the token).
        """
        method = HTTP_METHODS.get(verb, verb.upper())
        url = self.host + path
        query_items = [(key, value) for key, value in sorted((query or {}).items()) if value is not None]
        if query_items:
            url += '?' + urlencode(query_items)
        headers = self._headers()
        headers['Accept'] = 'text/plain, */*' if text else 'application/json'
        payload = None
        if body is not None:
            headers['Content-Type'] = content_type or 'application/json'
            payload = json.dumps(body)
        timeout = urllib3.Timeout(connect=REQUEST_TIMEOUT[0], read=REQUEST_TIMEOUT[1])
        for attempt in range(MAX_RETRIES + 1):
            try:
                response = self.pool.request(method, url, headers=headers, body=payload, timeout=timeout, preload_content=True,
                                             redirect=False, retries=False)
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                if attempt < MAX_RETRIES and verb in READ_VERBS and _is_connection_reset(exc):
                    self._wait(attempt, None)
                    continue
                raise self._network_failure(exc, verb, resource, method, url)
            if attempt < MAX_RETRIES and (response.status == 429 or (response.status == 503 and verb in READ_VERBS)):
                self._wait(attempt, response.headers.get('Retry-After'))
                continue
            break
        answer = response.data.decode('utf-8', 'replace') if response.data is not None else None
        if not 200 <= response.status <= 299:
            raise self._api_failure(ApiError(response.status, response.reason, answer), verb, resource, method, url)
        if text or not answer:
            return answer
        return json.loads(answer)

    def watch(self, resource, path, query, seconds):
        """The events of one watch request (``watch=true``, ended by the server after ``seconds``), decoded as they arrive;
        a refusal becomes the ModuleFailure ``request`` raises. No retry: the caller lists again instead."""
        url = '%s%s?%s' % (self.host, path, urlencode(sorted(dict(query, watch='true', timeoutSeconds=int(seconds)).items())))
        headers = self._headers()
        headers['Accept'] = 'application/json'
        timeout = urllib3.Timeout(connect=REQUEST_TIMEOUT[0], read=seconds + REQUEST_TIMEOUT[0])
        response = None
        try:
            response = self.pool.request('GET', url, headers=headers, timeout=timeout, preload_content=False, redirect=False, retries=False)
            if not 200 <= response.status <= 299:
                answer = response.data.decode('utf-8', 'replace')
                raise self._api_failure(ApiError(response.status, response.reason, answer), 'watch', resource, 'GET', url)
            for line in response:   # one JSON event per line, as the API server streams them
                if line.strip():
                    yield json.loads(line)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._network_failure(exc, 'watch', resource, 'GET', url)
        finally:
            if response is not None:
                response.release_conn()

    def _headers(self):
        """Authorization, User-Agent and kubectl's Impersonate-* headers (one header per group or extra value, as kubectl sends them:
        the API server reads each header value as one group)."""
        connection = self.connection
        headers = HTTPHeaderDict({'User-Agent': USER_AGENT})
        if connection.authorization:
            headers['Authorization'] = connection.authorization
        if connection.impersonate_user:
            headers['Impersonate-User'] = connection.impersonate_user
            if connection.impersonate_uid:
                headers['Impersonate-Uid'] = connection.impersonate_uid
            for group in connection.impersonate_groups or []:
                headers.add('Impersonate-Group', group)
            for key, values in sorted((connection.impersonate_extra or {}).items()):
                for value in values:
                    headers.add('Impersonate-Extra-' + quote(key, safe=''), value)
        return headers

    def _wait(self, attempt, retry_after):
        """Sleep before retry ``attempt``: the server's Retry-After (capped), else an exponential backoff."""
        try:
            seconds = min(float(retry_after), RETRY_AFTER_CAP)
        except (TypeError, ValueError):
            seconds = RETRY_BACKOFF[min(attempt, len(RETRY_BACKOFF) - 1)]
        self.retries += 1
        time.sleep(max(seconds, 0))

    def _api_failure(self, exc, verb, resource, method, url):
        message = api_error_message(exc, verb, resource, method, url)
        status_reason = _status_from_body(exc.body)[0]
        if exc.status == 401:
            message += ('. The API refused the credentials from %s: the token is wrong or expired '
                        '(log in again, or fix api_key / %s).' % (self.source, K8S_ENV['api_key']))
        elif exc.status == 403:
            message += '. The user lacks the RBAC permission to %s %s.' % (verb, resource)
        return _failure(message, status=exc.status, reason=status_reason or exc.reason)

    def _network_failure(self, exc, verb, resource, method, url):
        reason = getattr(exc, 'reason', None)
        tls = isinstance(exc, urllib3.exceptions.SSLError) or isinstance(reason, urllib3.exceptions.SSLError)
        if tls and not _is_verification_failure(exc):
            return _failure('%s %s (%s %s) failed: the TLS handshake with the Kubernetes API at %s failed: %s. When the API asks for a client '
                            'certificate, set client_cert and client_key (%s, %s) or use a kubeconfig that has one.'
                            % (verb, resource, method, url, self.host, _network_error_text(exc), K8S_ENV['client_cert'], K8S_ENV['client_key']),
                            reason='tls_handshake_failed')
        if tls:
            return _failure('%s %s (%s %s) failed: the TLS certificate of the Kubernetes API at %s is not trusted: %s. Set ca_cert (%s) to the CA '
                            'that signed it, or validate_certs: false (%s=false) where the network is trusted.'
                            % (verb, resource, method, url, self.host, _network_error_text(exc), K8S_ENV['ca_cert'], K8S_ENV['validate_certs']),
                            reason='certificate_untrusted')
        return _failure('%s %s (%s %s) failed: cannot reach the Kubernetes API at %s (from %s): %s'
                        % (verb, resource, method, url, self.host, self.source, _network_error_text(exc)), reason='unreachable')

    def list_items(self, resource, path, query=None, page_size=None):
        """Every item of a list, read in pages of ``page_size`` (LIST_PAGE_SIZE) with limit/continue, as kubectl does.

        One request per page. A continue token the server no longer honours (410 Expired: etcd compacted the
        snapshot) restarts the list in one request without ``limit``, as client-go's pager does.
        """
        query = dict(query or {}, limit=page_size or LIST_PAGE_SIZE)
        items = []
        while True:
            try:
                result = self.request('list', resource, path, query=query)
            except ModuleFailure as failure:
                if not query.get('continue') or failure.details.get('status') != 410:
                    raise
                return list(self.request('list', resource, path, query=dict(query, limit=None, **{'continue': None})).get('items') or [])
            items.extend(result.get('items') or [])
            token = (result.get('metadata') or {}).get('continue')
            if not token:
                return items
            query['continue'] = token


# Keys of a kubeconfig user whose values are credentials; auth-provider config keys holding tokens or secrets too.
SECRET_USER_KEYS = ('token', 'password', 'client-key-data', 'client-certificate-data')
SECRET_WORDS = ('token', 'secret', 'password', 'key')


def kubeconfig_secrets(kubeconfig):
    """The credentials of a kubeconfig given as a dict (its users), for the module's no_log values: the option is
    ``raw`` (a path or a dict), so Ansible cannot mask it, and a failure (an unknown context) or -vvv would show it.
    Only credentials: masking every string of the dict would mask words such as v1 everywhere in the output."""
    secrets = set()
    if not isinstance(kubeconfig, dict):
        return secrets
    for item in kubeconfig.get('users') or []:
        user = item.get('user') if isinstance(item, dict) else None
        if not isinstance(user, dict):
            continue
        secrets.update(str(user[key]) for key in SECRET_USER_KEYS if user.get(key))
        provider = (user.get('auth-provider') or {}).get('config') or {}
        secrets.update(str(value) for key, value in provider.items() if value and any(word in key.lower() for word in SECRET_WORDS))
        for env in (user.get('exec') or {}).get('env') or []:
            if isinstance(env, dict) and env.get('value') and any(word in str(env.get('name', '')).lower() for word in SECRET_WORDS):
                secrets.add(str(env['value']))
    return secrets


class KubeconfigMasking(object):
    """AnsibleModule mix-in: masks the credentials of a kubeconfig dict (``kubeconfig`` or ``kubernetes.kubeconfig``) as soon
    as the parameters are read, so a failure of the argument checks (whose invocation -vvv shows) cannot print them."""

    def _load_params(self):
        super(KubeconfigMasking, self)._load_params()
        params = self.params if isinstance(self.params, dict) else {}
        nested = params.get('kubernetes') if isinstance(params.get('kubernetes'), dict) else {}
        # preflight's variables file holds a fleet cluster's connection variables too (docs/fleet.md)
        variables = params.get('variables') if isinstance(params.get('variables'), dict) else {}
        fleet_k8s, fleet_vcenter = (variables.get(name) if isinstance(variables.get(name), dict) else {}
                                    for name in ('egressip_kubernetes', 'egressip_vcenter'))
        self.no_log_values.update(str(value) for value in (fleet_k8s.get('api_key'), fleet_vcenter.get('password')) if value)
        for kubeconfig in (params.get('kubeconfig'), nested.get('kubeconfig'), fleet_k8s.get('kubeconfig')):
            self.no_log_values.update(kubeconfig_secrets(kubeconfig))


def k8s_client_for(module, params):
    """A K8sClient for a module, from ``params``; ends the module on a missing library or a connection failure.

    Tokens the client holds are added to the module's no_log values, so no output shows them.
    """
    if not HAS_K8S_LIBS:
        module.fail_json(msg=missing_required_lib('urllib3 (pip install kubernetes brings it)'), exception=K8S_LIBS_ERROR)
    module.no_log_values.update(kubeconfig_secrets(params.get('kubeconfig')))
    try:
        client = K8sClient.from_params(params)
    except ModuleFailure as failure:
        fail_with(module, failure)
    module.no_log_values.update(client.secrets())
    return client
