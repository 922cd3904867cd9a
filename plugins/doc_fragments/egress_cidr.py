# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The deprecated ``cidr`` / ``ipv6_cidr`` options of the state=absent refusals (module_utils/model/ip_networks.py egress_networks)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  cidr:
    description:
      - Deprecated (removed in 2.0.0) - pass the secondary network whole instead, the option that takes the public
        variable C(egressip_network) (mutually exclusive with this one).
      - The secondary network's IPv4 CIDR. With O(state=absent), only egress IPs inside it (or inside O(ipv6_cidr))
        make the removal refuse, so egress IPs of the primary machine network on the same nodes, which the secondary
        NIC does not carry, do not block it.
      - Neither the secondary network nor O(cidr) nor O(ipv6_cidr) set (default) - every egress IP the node hosts counts.
    type: str
  ipv6_cidr:
    description:
      - Deprecated (removed in 2.0.0), as O(cidr). The secondary network's IPv6 CIDR, for a dual-stack or IPv6
        secondary network; see O(cidr).
    type: str
'''
