# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``network`` option: the public ``egressip_network`` variable whole (``argument_spec()`` of
module_utils/model/network.py), shared by every module that reads the secondary network."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.fragments import rewritten


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  network:
    description:
      - The secondary network, the public variable C(egressip_network) passed whole. This module reads only the keys
        it needs and ignores the others.
      - One set of rules for every module (docs/variables.md) - O(network.cidr) is C(address/prefix) with the host bits
        clear; O(network.gateway) is inside it and not its network or broadcast address; O(network.node_address_range)
        is inside it, needs O(network.gateway) and does not include the network, broadcast or gateway address. A key
        the module needs and that is missing, or a value that breaks a rule, is refused before anything is written,
        naming the key, the value and the fix.
    type: dict
    suboptions:
      cidr:
        description: The secondary subnet, for example C(10.20.0.0/24).
        type: str
      gateway:
        description: The router of the secondary subnet, for example C(10.20.0.1).
        type: str
      node_address_range:
        description:
          - The base addresses of the node NICs, C(first-last) or a CIDR block inside O(network.cidr). Egress IPs must be
            outside it.
        type: str
      route_metric:
        description:
          - Metric of the default route via O(network.gateway) on the secondary NIC; must be above the primary default
            route (br-ex, metric 48 as configure-ovs sets it).
        type: int
        default: 200
      ip_forwarding:
        description:
          - How IP forwarding on the secondary NIC is enabled. C(per_interface) (a Tuned profile) and C(global)
            (C(gatewayConfig.ipForwarding=Global)) are done by the node network step; C(external) means the user
            manages it (for example with a MachineConfig, which the checks cannot see).
        type: str
        choices: [per_interface, global, external]
        default: per_interface
      ipv6:
        description:
          - The IPv6 family of a dual-stack secondary network (then O(network.cidr) is IPv4). A module that places node
            addresses needs all three of O(network.ipv6.cidr), O(network.ipv6.gateway), O(network.ipv6.node_address_range).
        type: dict
        suboptions:
          cidr:
            description: The IPv6 subnet, for example C(fd00:20::/64).
            type: str
          gateway:
            description: Its router.
            type: str
          node_address_range:
            description: The IPv6 base addresses of the node NICs, inside O(network.ipv6.cidr).
            type: str
          route_metric:
            description:
              - Metric of the IPv6 default route via O(network.ipv6.gateway); must be above the primary IPv6 default
                route. Unset - O(network.route_metric).
            type: int
'''


# vsphere_vm_nic and machineset_network name the port group O(network): there the secondary network is O(secondary_network)
ModuleDocFragment.SECONDARY = rewritten(ModuleDocFragment.DOCUMENTATION, ('options:\n  network:\n', 'options:\n  secondary_network:\n')).replace(
    'O(network.', 'O(secondary_network.')
