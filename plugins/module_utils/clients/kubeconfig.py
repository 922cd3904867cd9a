# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the Kubernetes API is and how to authenticate: kubeconfig files, a kubeconfig dict, the Pod's service account.

Read with kubectl's rules (https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/):
several files merge, the first file to define a cluster, user or context by name wins, and so does the first
``current-context``; relative paths are relative to the file that holds them. A user with a token, a token file,
a client certificate or a user name and password is read here. A user with ``exec`` or ``auth-provider`` (a
credential plugin) is handed to the kubernetes library's loader, imported only then: importing the library costs
0.2 s of CPU in every module run, as much as a whole no-op run of some modules (docs/benchmarks.md).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import atexit
import base64
import binascii
import errno
import os
import shutil
import stat
import tempfile

# Where a Pod finds its service account (kubernetes "Accessing the API from a Pod").
SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'
IN_CLUSTER_HOST_ENV = 'KUBERNETES_SERVICE_HOST'
IN_CLUSTER_PORT_ENV = 'KUBERNETES_SERVICE_PORT'

_NAMED_LISTS = (('clusters', 'cluster'), ('users', 'user'), ('contexts', 'context'))


class KubeconfigError(Exception):
    """The kubeconfig (or service account) cannot be used; the message says why and never holds a secret."""


class Connection(object):
    """The API endpoint and credentials: what a kubeconfig, the options or the service account give.

    ``authorization`` is the whole Authorization header value (``Bearer <token>`` or ``Basic <...>``);
    ``ssl_ca_cert``, ``cert_file``, ``key_file`` are paths; ``ca_cert_data`` is PEM text.
    """

    def __init__(self, host=None):
        self.host, self.authorization, self.verify_ssl = host, None, True
        self.ssl_ca_cert = self.ca_cert_data = self.cert_file = self.key_file = self.tls_server_name = None
        # no_proxy: comma-separated hosts, domains, IPs or CIDRs the proxy is not used for; proxy_from_env: the proxy came
        # from HTTPS_PROXY/HTTP_PROXY (then NO_PROXY applies too)
        self.proxy, self.no_proxy, self.proxy_from_env = None, None, False
        # kubeconfig `as`, `as-groups`, `as-uid`, `as-user-extra`: sent as Impersonate-* headers, as kubectl does
        self.impersonate_user = self.impersonate_uid = None
        self.impersonate_groups, self.impersonate_extra = [], {}
        self.secrets = set()

    def set_token(self, token):
        self.authorization = 'Bearer %s' % token
        self.secrets.update((token, self.authorization))


class _Entry(object):
    """One named cluster, user or context and the directory its relative paths start from."""

    def __init__(self, value, base_dir):
        self.value = value if isinstance(value, dict) else {}
        self.base_dir = base_dir


def _load_yaml_file(path):
    import yaml  # PyYAML comes with ansible-core and the kubernetes library
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    try:
        with open(path) as handle:
            return yaml.load(handle, Loader=loader)  # nosec: a safe loader
    except (OSError, IOError) as exc:
        raise KubeconfigError('cannot read %s: %s' % (path, exc.strerror or exc))
    except yaml.YAMLError as exc:
        raise KubeconfigError('%s is not valid YAML: %s' % (path, ' '.join(str(exc).split())))


class Kubeconfig(object):
    """Merged kubeconfig content: named clusters, users, contexts and the current context."""

    def __init__(self):
        self.entries = dict((plural, {}) for plural, _singular in _NAMED_LISTS)
        self.current_context = None
        self.uses_library = None  # what the kubernetes library loader gets for a credential plugin: paths or the dict

    def add(self, config, base_dir, origin):
        """Merge one file's (or the dict's) content: names already defined are kept (the first wins)."""
        if not isinstance(config, dict):
            raise KubeconfigError('%s is not a kubeconfig: expected a mapping with clusters, users and contexts' % origin)
        for plural, singular in _NAMED_LISTS:
            items = config.get(plural) or []
            if not isinstance(items, list):
                raise KubeconfigError('%s: %s must be a list' % (origin, plural))
            for item in items:
                if not isinstance(item, dict) or not item.get('name'):
                    raise KubeconfigError('%s: an entry of %s has no name' % (origin, plural))
                self.entries[plural].setdefault(item['name'], _Entry(item.get(singular), base_dir))
        if not self.current_context and config.get('current-context'):
            self.current_context = config['current-context']

    @classmethod
    def from_files(cls, paths):
        kubeconfig = cls()
        for path in paths:
            content = _load_yaml_file(path)
            if content is None:
                raise KubeconfigError('%s is empty' % path)
            kubeconfig.add(content, os.path.dirname(os.path.abspath(path)), path)
        kubeconfig.uses_library = os.pathsep.join(paths)
        return kubeconfig

    @classmethod
    def from_dict(cls, config):
        kubeconfig = cls()
        kubeconfig.add(config, os.getcwd(), 'the kubeconfig dictionary')
        kubeconfig.uses_library = config
        return kubeconfig

    def _names(self, plural):
        return ', '.join(sorted(self.entries[plural])) or 'none'

    def connection(self, context=None):
        """The Connection of ``context`` (default the current context)."""
        name = context or self.current_context
        if not name:
            raise KubeconfigError('no current-context is set and no context was given (contexts: %s)' % self._names('contexts'))
        if name not in self.entries['contexts']:
            raise KubeconfigError('context %s is not defined (contexts: %s)' % (name, self._names('contexts')))
        context_value = self.entries['contexts'][name].value
        cluster_name, user_name = context_value.get('cluster'), context_value.get('user')
        if cluster_name not in self.entries['clusters']:
            raise KubeconfigError('context %s names cluster %s, which is not defined (clusters: %s)'
                                  % (name, cluster_name, self._names('clusters')))
        cluster = self.entries['clusters'][cluster_name]
        user = self.entries['users'].get(user_name) if user_name else None  # like kubectl, an unknown user means no credentials
        user_value = user.value if user else {}
        if 'auth-provider' in user_value or ('exec' in user_value and not (user_value.get('token') or user_value.get('tokenFile'))):
            return _library_connection(self.uses_library, name)
        return _connection(name, cluster_name, cluster, user_name, user)


def _path(entry, key):
    return os.path.normpath(os.path.join(entry.base_dir, os.path.expanduser(entry.value[key])))


def _existing(entry, key, owner):
    path = _path(entry, key)
    if not os.path.isfile(path):
        raise KubeconfigError('%s %s of %s does not exist' % (key, path, owner))
    return path


def _decoded(entry, key, owner):
    try:  # line breaks are allowed, as kubectl allows them (a wrapped `base64` output in a YAML block)
        return base64.b64decode(''.join(str(entry.value[key]).split()), validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise KubeconfigError('%s of %s is not valid base64' % (key, owner))


_TEMP_DIR = []
# <tempdir>/ocp-egressip-k8s-<uid>/<pid>-<random>/: a run killed by SIGKILL skips atexit, so the next run removes
# the directories of processes that are gone.
TEMP_BASE_PREFIX = 'ocp-egressip-k8s-'


def temp_base(root=None):
    """The per-user directory of the per-run directories, or None when it is not this user's alone (then a fresh
    mkdtemp is used, as before: never trust a directory someone else could have made)."""
    base = os.path.join(root or tempfile.gettempdir(), '%s%d' % (TEMP_BASE_PREFIX, os.getuid()))
    try:
        os.mkdir(base, 0o700)
    except OSError:
        pass
    try:
        info = os.lstat(base)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return base


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno != errno.ESRCH
    return True


def remove_stale_run_dirs(base):
    """Remove the per-run directories under ``base`` whose process is gone (a run killed before its atexit)."""
    for name in os.listdir(base):
        pid = name.split('-', 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            shutil.rmtree(os.path.join(base, name), True)


def _run_dir():
    base = temp_base()
    if base is None:
        return tempfile.mkdtemp(prefix=TEMP_BASE_PREFIX)  # mode 0700
    remove_stale_run_dirs(base)
    return tempfile.mkdtemp(prefix='%d-' % os.getpid(), dir=base)  # mode 0700


def _private_file(content):
    """A file only this user reads, holding ``content`` (a client key or certificate given as data), removed at exit
    (or, after a SIGKILL, by the next run: see ``remove_stale_run_dirs``).

    Python's ssl module loads client certificates from files only (the kubernetes library writes such files too).
    """
    if not _TEMP_DIR:
        _TEMP_DIR.append(_run_dir())
        atexit.register(shutil.rmtree, _TEMP_DIR[0], True)
    handle, path = tempfile.mkstemp(dir=_TEMP_DIR[0])  # mode 0600
    with os.fdopen(handle, 'wb') as out:
        out.write(content)
    return path


def detached_copies(connection):
    """For a process forked from this run that outlives it (cluster_lock's renewer): read now the client certificate and
    key this run wrote from kubeconfig data (``_private_file``: removed when this run ends), and return a function that,
    called in that process, writes them again into files of its own, points ``connection`` at them and returns their
    directory (None when there was nothing to copy), which that process removes when it ends. Files the kubeconfig names
    by path are the user's and stay as they are."""
    contents = {}
    for attribute in ('cert_file', 'key_file'):
        path = getattr(connection, attribute, None)
        if path and _TEMP_DIR and os.path.dirname(path) == _TEMP_DIR[0]:
            with open(path, 'rb') as handle:
                contents[attribute] = handle.read()

    def in_child():
        if not contents:
            return None
        del _TEMP_DIR[:]   # this process's own directory (named by its pid, so no other run removes it while it lives)
        for attribute, content in contents.items():
            setattr(connection, attribute, _private_file(content))
        return _TEMP_DIR[0]
    return in_child


def _connection(context_name, cluster_name, cluster, user_name, user):
    owner = 'cluster %s' % cluster_name
    server = cluster.value.get('server')
    if not server:
        raise KubeconfigError('%s (context %s) has no server' % (owner, context_name))
    connection = Connection(str(server).rstrip('/'))
    if cluster.value.get('certificate-authority-data'):
        connection.ca_cert_data = _decoded(cluster, 'certificate-authority-data', owner).decode('utf-8', 'replace')
    elif cluster.value.get('certificate-authority'):
        connection.ssl_ca_cert = _existing(cluster, 'certificate-authority', owner)
    if 'insecure-skip-tls-verify' in cluster.value:
        connection.verify_ssl = not cluster.value['insecure-skip-tls-verify']
    connection.tls_server_name = cluster.value.get('tls-server-name') or None
    connection.proxy = cluster.value.get('proxy-url') or None
    if user is None:
        return connection
    owner = 'user %s' % user_name
    values = user.value
    if values.get('token'):
        connection.set_token(str(values['token']).strip())
    elif values.get('tokenFile'):
        path = _existing(user, 'tokenFile', owner)
        with open(path) as handle:
            token = handle.read().strip()
        if not token:
            raise KubeconfigError('tokenFile %s of %s is empty' % (path, owner))
        connection.set_token(token)
    elif values.get('username') and values.get('password') is not None:
        credentials = base64.b64encode(('%s:%s' % (values['username'], values['password'])).encode('utf-8')).decode('ascii')
        connection.authorization = 'Basic %s' % credentials
        connection.secrets.update((credentials, connection.authorization, str(values['password'])))
    for key, attribute in (('client-certificate', 'cert_file'), ('client-key', 'key_file')):
        if values.get(key + '-data'):
            setattr(connection, attribute, _private_file(_decoded(user, key + '-data', owner)))
        elif values.get(key):
            setattr(connection, attribute, _existing(user, key, owner))
    if bool(connection.cert_file) != bool(connection.key_file):
        raise KubeconfigError('%s has a client certificate without its key, or a key without its certificate' % owner)
    _impersonation(connection, values, owner)
    return connection


def _impersonation(connection, values, owner):
    """kubectl's `as`, `as-groups`, `as-uid` and `as-user-extra` of a kubeconfig user."""
    connection.impersonate_user = str(values['as']) if values.get('as') else None
    groups = values.get('as-groups') or []
    extra = values.get('as-user-extra') or {}
    if not isinstance(groups, list) or not isinstance(extra, dict) or not all(isinstance(item, list) for item in extra.values()):
        raise KubeconfigError('%s: as-groups must be a list and as-user-extra a mapping of lists' % owner)
    connection.impersonate_groups = [str(group) for group in groups]
    connection.impersonate_uid = str(values['as-uid']) if values.get('as-uid') else None
    connection.impersonate_extra = dict((str(key), [str(item) for item in items]) for key, items in extra.items())
    if (connection.impersonate_groups or connection.impersonate_uid or connection.impersonate_extra) and not connection.impersonate_user:
        # kube-apiserver refuses Impersonate-Group/-Uid/-Extra without Impersonate-User; kubectl sends them as given
        raise KubeconfigError('%s has as-groups, as-uid or as-user-extra without as (the user to impersonate)' % owner)


def _library_connection(kubeconfig, context):
    """A user with a credential plugin (``exec``, ``auth-provider``): the kubernetes library runs it."""
    try:
        from kubernetes import client as k8s_client, config as k8s_config  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise KubeconfigError('the user of context %s authenticates with a credential plugin (exec or auth-provider), which needs '
                              'the Python library kubernetes (pip install kubernetes)' % context)
    configuration = k8s_client.Configuration()
    try:
        if isinstance(kubeconfig, dict):
            k8s_config.load_kube_config_from_dict(kubeconfig, context=context, client_configuration=configuration, persist_config=False)
        else:
            k8s_config.load_kube_config(kubeconfig, context=context, client_configuration=configuration, persist_config=False)
    except Exception as exc:  # pylint: disable=broad-except
        # ConfigException, a failing plugin command, file errors: all mean this kubeconfig cannot be used.
        raise KubeconfigError('the credential plugin of context %s failed: %s' % (context, exc))
    connection = Connection(configuration.host)
    authorization = configuration.get_api_key_with_prefix('BearerToken')
    if not authorization and not configuration.cert_file:
        # The library logs a failing exec plugin and goes on without credentials; the API would then see an anonymous user.
        raise KubeconfigError('the credential plugin of context %s gave neither a token nor a client certificate: run the command '
                              'of its exec section by hand to see why (it must print an ExecCredential)' % context)
    if authorization:
        connection.authorization = authorization
        connection.secrets.update((authorization, authorization.split(' ', 1)[-1]))
    for attribute in ('verify_ssl', 'ssl_ca_cert', 'cert_file', 'key_file', 'tls_server_name', 'proxy'):
        setattr(connection, attribute, getattr(configuration, attribute, None))
    connection.verify_ssl = bool(connection.verify_ssl)
    return connection


def in_cluster_connection(environ=None, account_dir=SERVICE_ACCOUNT_DIR):
    """The Pod's service account: the API at ``KUBERNETES_SERVICE_HOST:PORT``, its token and CA."""
    environ = os.environ if environ is None else environ
    host, port = environ.get(IN_CLUSTER_HOST_ENV), environ.get(IN_CLUSTER_PORT_ENV)
    if not host or not port:
        raise KubeconfigError('%s and %s must both be set (they are in a Pod)' % (IN_CLUSTER_HOST_ENV, IN_CLUSTER_PORT_ENV))
    if ':' in host:  # IPv6 service address
        host = '[%s]' % host
    connection = Connection('https://%s:%s' % (host, port))
    token_path, ca_path = os.path.join(account_dir, 'token'), os.path.join(account_dir, 'ca.crt')
    for path in (token_path, ca_path):
        if not os.path.isfile(path):
            raise KubeconfigError('%s does not exist (the Pod has no service account token mounted)' % path)
    with open(token_path) as handle:
        token = handle.read().strip()
    if not token:
        raise KubeconfigError('%s is empty' % token_path)
    connection.set_token(token)
    connection.ssl_ca_cert = ca_path
    return connection
