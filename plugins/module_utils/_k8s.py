# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kubernetes client (plain JSON requests for core kinds, CustomObjectsApi for CRs) and the module base class.

Connection options and environment variables are those of kubernetes.core, so the same AAP
credential, kubeconfig and ``module_defaults`` serve both collections. Private module_util:
no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import traceback

try:
    import kubernetes
    from kubernetes.client.exceptions import ApiException
    import urllib3
    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError:
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = traceback.format_exc()

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ansible_collections.ocp.egressip.plugins.module_utils._errors import (
    ModuleFailure,
    fail_with,
    library_versions,
)

# (connect, read) seconds for each API request.
REQUEST_TIMEOUT = (15, 120)

# verb of K8sClient.call -> HTTP method (for messages and for K8sClient.request)
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
}

# Where a Pod finds its service account (the kubernetes client's in-cluster config).
IN_CLUSTER_HOST_ENV = 'KUBERNETES_SERVICE_HOST'


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
    )


def k8s_nested_argument_spec():
    """The same options under one ``kubernetes`` dict, for modules whose main connection is vCenter.

    Both connections have a ``validate_certs`` option, so a module needing both keeps the
    other domain's options in a dict (documented by ``ocp.egressip.k8s_auth.nested``).
    """
    return dict(kubernetes=dict(type='dict', apply_defaults=True, options=k8s_argument_spec()))


def _failure(msg, **details):
    details.update(library_versions('kubernetes'))
    return ModuleFailure(msg, **details)


def _default_kubeconfig():
    """``(paths, origin)`` of the kubeconfig the kubernetes client would load by default, or ``(None, None)``."""
    env = os.environ.get('KUBECONFIG')
    if env:
        return [path for path in env.split(os.pathsep) if path], 'the KUBECONFIG environment variable'
    default = os.path.expanduser(os.path.join('~', '.kube', 'config'))
    if os.path.exists(default):
        return [default], 'the default location'
    return None, None


def _load_kubeconfig(configuration, kubeconfig, context, origin):
    """Load a kubeconfig (path, list of paths, or dict) into ``configuration``; returns its description."""
    if isinstance(kubeconfig, dict):
        loader = kubernetes.config.load_kube_config_from_dict
        description = 'the kubeconfig given as a dictionary'
        argument = kubeconfig
    else:
        paths = [os.path.expanduser(path) for path in (kubeconfig if isinstance(kubeconfig, list) else [kubeconfig])]
        missing = [path for path in paths if not os.path.exists(path)]
        if missing:
            raise _failure('kubeconfig %s (from %s) does not exist' % (', '.join(missing), origin), reason='kubeconfig_missing')
        loader = kubernetes.config.load_kube_config
        description = 'kubeconfig %s' % os.pathsep.join(paths)
        argument = os.pathsep.join(paths)
    if context:
        description += ' (context %s)' % context
    try:
        loader(argument, context=context, client_configuration=configuration, persist_config=False)
    except Exception as exc:  # pylint: disable=broad-except
        # ConfigException, YAML and file errors all mean the same to the user: this kubeconfig is unusable.
        raise _failure('Cannot use %s: %s' % (description, exc), reason='kubeconfig_invalid')
    return description


def build_configuration(params):
    """A kubernetes client Configuration from the connection options, and a description of its source.

    Like kubernetes.core: ``host`` with ``api_key`` or a client certificate needs no file;
    otherwise the kubeconfig from the options, else ``KUBECONFIG`` or ``~/.kube/config``
    like the kubernetes client, else the Pod's service account (in-cluster). Explicit
    options override what the kubeconfig says.
    """
    configuration = kubernetes.client.Configuration()
    host, api_key, client_cert = params.get('host'), params.get('api_key'), params.get('client_cert')
    kubeconfig, context = params.get('kubeconfig'), params.get('context')
    if host and (api_key or client_cert):
        source = 'the host option (%s)' % K8S_ENV['host']
    elif kubeconfig:
        source = _load_kubeconfig(configuration, kubeconfig, context, 'the kubeconfig option or %s' % K8S_ENV['kubeconfig'])
    else:
        paths, origin = _default_kubeconfig()
        if paths:
            source = _load_kubeconfig(configuration, paths, context, origin)
        elif os.environ.get(IN_CLUSTER_HOST_ENV):
            try:
                kubernetes.config.load_incluster_config(client_configuration=configuration)
            except Exception as exc:  # pylint: disable=broad-except
                raise _failure('Cannot use the in-cluster service account: %s' % exc, reason='in_cluster_invalid')
            source = 'the in-cluster service account'
        elif host:
            source = 'the host option (%s), without credentials' % K8S_ENV['host']
        else:
            raise _failure('No Kubernetes connection configured: set kubeconfig (%s), or host with api_key (%s, %s); '
                           'KUBECONFIG is not set, %s does not exist and the module does not run in a Pod.'
                           % (K8S_ENV['kubeconfig'], K8S_ENV['host'], K8S_ENV['api_key'], os.path.join('~', '.kube', 'config')),
                           reason='kubeconfig_missing')
    if params.get('api_key') and not source.startswith('the host option'):
        source += ' with the token from api_key (%s)' % K8S_ENV['api_key']
    _apply_overrides(configuration, params)
    return configuration, source


def _apply_overrides(configuration, params):
    if params.get('host'):
        configuration.host = params['host'].rstrip('/')
    if params.get('api_key'):
        configuration.api_key = {'authorization': 'Bearer %s' % params['api_key']}
        configuration.api_key_prefix = {}
        configuration.refresh_api_key_hook = None  # a kubeconfig's token refresh would put its own token back
    if params.get('validate_certs') is not None:
        configuration.verify_ssl = params['validate_certs']
    for option, attribute in (('ca_cert', 'ssl_ca_cert'), ('client_cert', 'cert_file'), ('client_key', 'key_file'), ('proxy', 'proxy')):
        if params.get(option):
            setattr(configuration, attribute, params[option])
    if not configuration.verify_ssl:
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def configuration_secrets(configuration):
    """Tokens held by the configuration, to hide from any module output."""
    secrets = set()
    for value in (configuration.api_key or {}).values():
        if value:
            secrets.add(value)
            secrets.add(value.split(' ', 1)[-1])
    return secrets


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


def _network_error_text(exc):
    reason = getattr(exc, 'reason', None) or exc
    text = str(reason)
    marker = ': Failed to establish a new connection: '
    if marker in text:  # drop urllib3's connection object repr
        text = 'failed to establish a new connection: ' + text.split(marker, 1)[1]
    return text


class K8sClient(object):
    """A Kubernetes API connection: plain JSON requests, CustomObjectsApi, and failures that name the endpoint.

    Core kinds (Nodes, Pods, Namespaces, Events) go through ``request`` as plain dicts, not through the typed
    ``kubernetes.client.CoreV1Api``: importing that class builds about 250 pydantic models, 0.5-0.6 s of CPU in
    every module run, more than all the rest of a no-op run (docs/benchmarks.md).
    """

    def __init__(self, api_client, source):
        self.api_client = api_client
        self.source = source
        self.host = api_client.configuration.host
        self.custom_objects = kubernetes.client.CustomObjectsApi(api_client)

    @classmethod
    def from_params(cls, params):
        """Build a client from the connection options (see build_configuration)."""
        configuration, source = build_configuration(params)
        return cls(kubernetes.client.ApiClient(configuration), source)

    def secrets(self):
        """Tokens to hide from module output."""
        return configuration_secrets(self.api_client.configuration)

    def call(self, verb, resource, path, func, *args, **kwargs):
        """Run one API request; an error becomes a ModuleFailure naming verb, resource, URL, status and the server's message."""
        kwargs.setdefault('_request_timeout', REQUEST_TIMEOUT)
        method = HTTP_METHODS.get(verb, verb.upper())
        url = self.host + path
        try:
            return func(*args, **kwargs)
        except ApiException as exc:
            message = api_error_message(exc, verb, resource, method, url)
            status_reason = _status_from_body(exc.body)[0]
            if exc.status == 401:
                message += ('. The API refused the credentials from %s: the token is wrong or expired '
                            '(log in again, or fix api_key / %s).' % (self.source, K8S_ENV['api_key']))
            elif exc.status == 403:
                message += '. The user lacks the RBAC permission to %s %s.' % (verb, resource)
            raise _failure(message, status=exc.status, reason=status_reason or exc.reason)
        except urllib3.exceptions.HTTPError as exc:
            raise self._network_failure(exc, verb, resource, method, url)
        except OSError as exc:
            raise self._network_failure(exc, verb, resource, method, url)

    def _network_failure(self, exc, verb, resource, method, url):
        reason = getattr(exc, 'reason', None)
        if isinstance(exc, urllib3.exceptions.SSLError) or isinstance(reason, urllib3.exceptions.SSLError):
            return _failure('%s %s (%s %s) failed: the TLS certificate of the Kubernetes API at %s is not trusted: %s. Set ca_cert (%s) to the CA '
                            'that signed it, or validate_certs: false (%s=false) where the network is trusted.'
                            % (verb, resource, method, url, self.host, _network_error_text(exc), K8S_ENV['ca_cert'], K8S_ENV['validate_certs']),
                            reason='certificate_untrusted')
        return _failure('%s %s (%s %s) failed: cannot reach the Kubernetes API at %s (from %s): %s'
                        % (verb, resource, method, url, self.host, self.source, _network_error_text(exc)), reason='unreachable')

    def request(self, verb, resource, path, query=None, body=None, content_type=None, text=False):
        """One API request, answered as plain data: the decoded JSON body (a dict), or the text with ``text=True``.

        ``verb`` is one of HTTP_METHODS (``list``, ``get``, ``create``, ``patch``...), ``resource`` names the
        object(s) in messages, ``query`` a dict of query parameters (``None`` values dropped), ``body`` a JSON
        body sent with ``content_type`` (``application/json`` by default; a merge or JSON patch content type for
        ``patch``). Errors are those of ``call``.
        """
        return self.call(verb, resource, path, self._request, HTTP_METHODS.get(verb, verb.upper()), path, query, body, content_type, text)

    def _request(self, method, path, query, body, content_type, text, _request_timeout=None):
        headers = {'Accept': 'text/plain, */*' if text else 'application/json'}
        if body is not None:
            headers['Content-Type'] = content_type or 'application/json'
        query_params = [(key, value) for key, value in sorted((query or {}).items()) if value is not None]
        method, url, headers, body, _post_params = self.api_client.param_serialize(
            method, path, query_params=query_params or None, header_params=headers, body=body, auth_settings=['BearerToken'])
        response = self.api_client.call_api(method, url, header_params=headers, body=body, _request_timeout=_request_timeout)
        data = response.read()
        answer = data.decode('utf-8', 'replace') if data is not None else None
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=answer, data=None)
        if text or not answer:
            return answer
        return json.loads(answer)

    def list_nodes(self, label_selector=None):
        """All Nodes (one list request) as plain dicts."""
        node_list = self.request('list', 'nodes', '/api/v1/nodes', query={'labelSelector': label_selector or None})
        return list(node_list.get('items') or [])

    def list_cluster_custom_objects(self, group, version, plural, not_found_msg=None):
        """All objects of a cluster-scoped custom resource (one list request) as plain dicts.

        ``not_found_msg`` replaces the generic message when the API does not serve the
        resource (HTTP 404: CRD absent); ``{host}`` in it is replaced by the API URL.
        """
        path = '/apis/%s/%s/%s' % (group, version, plural)
        try:
            result = self.call('list', '%s.%s' % (plural, group), path, self.custom_objects.list_cluster_custom_object, group, version, plural)
        except ModuleFailure as failure:
            if not_found_msg and failure.details.get('status') == 404:
                raise _failure(not_found_msg.format(host=self.host), status=404, reason='api_not_found')
            raise
        return list(result.get('items') or [])


def k8s_client_for(module, params):
    """A K8sClient for a module, from ``params``; ends the module on a missing library or a connection failure.

    Tokens the client holds are added to the module's no_log values, so no output shows them.
    """
    if not HAS_KUBERNETES:
        module.fail_json(msg=missing_required_lib('kubernetes'), exception=KUBERNETES_IMPORT_ERROR)
    try:
        client = K8sClient.from_params(params)
    except ModuleFailure as failure:
        fail_with(module, failure)
    module.no_log_values.update(client.secrets())
    return client


class K8sModule(AnsibleModule):
    """AnsibleModule with the Kubernetes connection options, the kubernetes library check and a lazy client."""

    def __init__(self, argument_spec=None, **kwargs):
        spec = k8s_argument_spec()
        spec.update(argument_spec or {})
        super(K8sModule, self).__init__(argument_spec=spec, **kwargs)
        if not HAS_KUBERNETES:
            self.fail_json(msg=missing_required_lib('kubernetes'), exception=KUBERNETES_IMPORT_ERROR)
        self._k8s = None

    @property
    def k8s(self):
        """The K8sClient, built on first use; a configuration failure ends the module."""
        if self._k8s is None:
            self._k8s = k8s_client_for(self, self.params)
        return self._k8s

    def fail_failure(self, failure):
        """End the module with a ModuleFailure (message plus details, library versions included)."""
        fail_with(self, failure)
