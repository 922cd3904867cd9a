# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kubernetes connection options: the documentation of ``k8s_argument_spec()`` in module_utils/clients/k8s.py.

Option names, aliases and environment variables are those of kubernetes.core.
``ocp.egressip.k8s_auth`` documents them as top-level options; ``ocp.egressip.k8s_auth.nested``, made from
those by plugin_utils/fragments.py, documents them under a ``kubernetes`` dict (``k8s_nested_argument_spec()``),
for the vCenter-first modules (both connections have validate_certs).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.fragments import nested_options


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Path to an existing Kubernetes config file, or the config itself as a dictionary.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_KUBECONFIG) will be used instead.
      - When neither is set and O(host) with O(api_key) is not given either, the module does what the
        C(kubectl) does - it loads the files in the E(KUBECONFIG) environment variable (merged, the first file to
        define a name wins), else C(~/.kube/config), else the service account of the Pod it runs in.
      - A kubeconfig user with a token, a token file, a client certificate or a user name and password is read by
        the collection itself. A user with an C(exec) or C(auth-provider) credential plugin needs the Python
        library C(kubernetes), which runs the plugin.
      - Given as a dictionary, its credentials (C(token), C(password), C(client-key-data), C(client-certificate-data), the
        token and secret values of C(auth-provider) and of C(exec) environment variables) are masked in all output,
        errors and C(-vvv) included. Certificate and key data are written to files only this user reads, under
        C(<tmp>/ocp-egressip-k8s-<uid>/<pid>-*), removed at exit; after a C(SIGKILL) the next run removes them.
    type: raw
  context:
    description:
      - The name of a context in the kubeconfig; the current context when not set.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_CONTEXT) will be used instead.
    type: str
  host:
    description:
      - The URL of the Kubernetes API, for example C(https://api.cluster.example.com:6443).
      - With O(api_key) (or O(client_cert)) no kubeconfig is needed; otherwise it overrides the server of the kubeconfig.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_HOST) will be used instead.
    type: str
  api_key:
    description:
      - Bearer token to authenticate with, for example the output of C(oc whoami -t) or a service account token.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_API_KEY) will be used instead.
      - Never shown in any output or error message.
    type: str
  validate_certs:
    description:
      - Whether to verify the TLS certificate of the API server. When not set, the kubeconfig decides (verification on by default).
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_VERIFY_SSL) will be used instead.
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - Path to the CA certificate (full chain) that signed the API server certificate.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_SSL_CA_CERT) will be used instead.
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Path to a client certificate to authenticate with.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_CERT_FILE) will be used instead.
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Path to the key of O(client_cert).
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_KEY_FILE) will be used instead.
    type: path
    aliases: [key_file]
  proxy:
    description:
      - The URL of an HTTP proxy (or, with the Python library C(PySocks), a C(socks5://) proxy) to reach the API through.
        The kubeconfig's C(proxy-url) is used when this is not set.
      - When neither is set, the proxy comes from the environment as for C(kubectl) - E(HTTPS_PROXY) (or E(https_proxy)) for an
        C(https) API, E(HTTP_PROXY) for C(http), except for the hosts E(NO_PROXY) lists and for localhost and loopback addresses.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_PROXY) will be used instead.
    type: str
  no_proxy:
    description:
      - Comma-separated hosts the proxy is not used for - C(*), IP addresses, CIDRs, domains (C(example.com) and its
        subdomains; C(.example.com) its subdomains only), each optionally with C(:port). Overrides E(NO_PROXY).
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_NO_PROXY) will be used instead.
    type: str
  impersonate_user:
    description:
      - The user to act as (the C(Impersonate-User) header, like C(kubectl --as)); the authenticated user needs the
        C(impersonate) permission. Overrides the kubeconfig user's C(as); its C(as-groups), C(as-uid) and C(as-user-extra) are sent too.
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_IMPERSONATE_USER) will be used instead.
    type: str
  impersonate_groups:
    description:
      - The groups to act as (C(kubectl --as-group)); needs O(impersonate_user) or a kubeconfig C(as).
      - If the value is not specified in the task, the value of environment variable E(K8S_AUTH_IMPERSONATE_GROUPS) will be used instead.
    type: list
    elements: str


notes:
  - The Kubernetes connection options, their aliases and environment variables are the same as in the
    C(kubernetes.core) collection, so the same kubeconfig and AAP OpenShift or Kubernetes API credential work.
  - Errors name the kubeconfig or the API URL, never the token.
  - Like client-go, a request the API answers C(429 Too Many Requests) is repeated after its C(Retry-After) (at most 10 s,
    4 times); a read answered C(503) or cut by a connection reset is repeated with a backoff of 0.5 to 4 s; a write is never repeated otherwise.
requirements:
  - kubernetes >= 31.0.0 (only for a kubeconfig user with an C(exec) or C(auth-provider) credential plugin)
'''


ModuleDocFragment.NESTED = nested_options(ModuleDocFragment.DOCUMENTATION, 'kubernetes', '''
      - Connection to the Kubernetes API.
      - Every suboption falls back to its environment variable, so leaving this out uses
        E(K8S_AUTH_KUBECONFIG), E(K8S_AUTH_HOST), E(K8S_AUTH_API_KEY) and the other E(K8S_AUTH_*) variables,
        then E(KUBECONFIG) or C(~/.kube/config), then the service account of the Pod.
''')
