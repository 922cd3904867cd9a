# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``nodes`` option of the node steps that take the secondary NIC of each node: the C(vms) list of vsphere_vm_nic.

``ocp.egressip.node_nics`` is egress_nodes' (a listed node's NIC is found by its MAC); ``ocp.egressip.node_nics.forwarding``
is ip_forwarding's (the nodes the Tuned covers), the first variant rewritten by plugin_utils/fragments.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.fragments import rewritten


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  nodes:
    description:
      - The secondary NIC of each node, as returned by the vSphere step. When a node is listed, its NIC is found by
        this MAC; otherwise any interface holding an address in O(network.cidr) counts.
      - With O(wait=true), the listed nodes are the ones waited for.
      - Each entry has the keys C(node) (node name) and C(mac) (MAC of its secondary NIC); other keys are ignored, so
        the C(vms) list returned by M(ocp.egressip.vsphere_vm_nic) can be passed as it is.
    type: list
    elements: dict
'''


ModuleDocFragment.FORWARDING = rewritten(ModuleDocFragment.DOCUMENTATION, ('''
      - The secondary NIC of each node, as returned by the vSphere step. When a node is listed, its NIC is found by
        this MAC; otherwise any interface holding an address in O(network.cidr) counts.
      - With O(wait=true), the listed nodes are the ones waited for.
''', '''
      - The egress nodes and the MAC of their secondary NIC (as for M(ocp.egressip.node_nic_address)).
      - Required with O(mode=per_interface) and O(state=present); the Tuned then covers exactly these nodes.
'''))
