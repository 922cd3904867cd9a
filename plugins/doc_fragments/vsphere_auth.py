# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vCenter connection options: the documentation of ``vsphere_argument_spec()`` in module_utils/clients/vsphere.py.

Option names and environment variables are those of vmware.vmware. ``ocp.egressip.vsphere_auth``
documents them as top-level options for the vCenter-first modules; the Kubernetes-first modules that also read or
write vCenter take them under a ``vsphere`` dict (``vsphere_nested_argument_spec()``), documented by
``ocp.egressip.vsphere_auth.nested``: the top-level variant rewritten by plugin_utils/fragments.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.fragments import nested_options


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  hostname:
    description:
      - The hostname or IP address of the vCenter server.
      - If the value is not specified in the task, the value of environment variable E(VMWARE_HOST) will be used instead.
    type: str
  username:
    description:
      - The user name to log in to the vCenter server with.
      - If the value is not specified in the task, the value of environment variable E(VMWARE_USER) will be used instead.
    type: str
    aliases: [admin, user]
  password:
    description:
      - The password of O(username).
      - If the value is not specified in the task, the value of environment variable E(VMWARE_PASSWORD) will be used instead.
      - Never shown in any output or error message.
    type: str
    aliases: [pass, pwd]
  port:
    description:
      - The TCP port of the vCenter server API.
      - If the value is not specified in the task, the value of environment variable E(VMWARE_PORT) will be used instead.
    type: int
    default: 443
  validate_certs:
    description:
      - Whether to verify the TLS certificate of the vCenter server against the system trust store
        (or the file named by the E(SSL_CERT_FILE) environment variable).
      - Set to V(false) only where the network is trusted, for example a lab with a self-signed certificate.
      - If the value is not specified in the task, the value of environment variable E(VMWARE_VALIDATE_CERTS) will be used instead.
    type: bool
    default: true
  proxy_host:
    description:
      - Hostname or IP address of an HTTPS proxy that relays every request to vCenter.
      - If the value is not specified in the task, the value of environment variable E(VMWARE_PROXY_HOST) will be used instead.
    type: str
  proxy_port:
    description:
      - TCP port of the proxy in O(proxy_host); required with it.
      - If the value is not specified in the task, the value of environment variable E(VMWARE_PROXY_PORT) will be used instead.
    type: int


notes:
  - The vCenter connection options and their environment variables are the same as in the
    C(vmware.vmware) collection, so the same AAP VMware vCenter credential works.
  - Errors name the vCenter host and port, never the password.
'''


ModuleDocFragment.NESTED = nested_options(ModuleDocFragment.DOCUMENTATION, 'vsphere', '''
      - Connection to the vCenter server.
      - Every suboption falls back to its environment variable, so leaving this out uses
        E(VMWARE_HOST), E(VMWARE_USER), E(VMWARE_PASSWORD) and the other E(VMWARE_*) variables.
''')
