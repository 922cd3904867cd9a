# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The vCenter connection options, apart from the connection code (no pyVmomi import), so that a module that
connects to vCenter only sometimes can take them without loading pyVmomi: machineset_network given ``vms``. (The
other Kubernetes-first modules with optional vCenter still import the connection code at start.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import env_fallback

# Option name -> environment variable, exactly as vmware.vmware (and AAP's vCenter credential).
VSPHERE_ENV = {
    'hostname': 'VMWARE_HOST',
    'username': 'VMWARE_USER',
    'password': 'VMWARE_PASSWORD',
    'port': 'VMWARE_PORT',
    'validate_certs': 'VMWARE_VALIDATE_CERTS',
    'proxy_host': 'VMWARE_PROXY_HOST',
    'proxy_port': 'VMWARE_PROXY_PORT',
}


def vsphere_argument_spec():
    """The vCenter connection options (documented by the ``ocp.egressip.vsphere_auth`` doc fragment)."""
    return dict(
        hostname=dict(type='str', fallback=(env_fallback, [VSPHERE_ENV['hostname']])),
        username=dict(type='str', aliases=['admin', 'user'], fallback=(env_fallback, [VSPHERE_ENV['username']])),
        password=dict(type='str', aliases=['pass', 'pwd'], no_log=True, fallback=(env_fallback, [VSPHERE_ENV['password']])),
        port=dict(type='int', default=443, fallback=(env_fallback, [VSPHERE_ENV['port']])),
        validate_certs=dict(type='bool', default=True, fallback=(env_fallback, [VSPHERE_ENV['validate_certs']])),
        proxy_host=dict(type='str', fallback=(env_fallback, [VSPHERE_ENV['proxy_host']])),
        proxy_port=dict(type='int', fallback=(env_fallback, [VSPHERE_ENV['proxy_port']])),
    )


def vsphere_nested_argument_spec():
    """The same options under one ``vsphere`` dict, for modules whose main connection is Kubernetes.

    Both connections have a ``validate_certs`` option, so a module needing both keeps the
    other domain's options in a dict (documented by ``ocp.egressip.vsphere_auth.nested``).
    """
    return dict(vsphere=dict(type='dict', apply_defaults=True, options=vsphere_argument_spec()))
