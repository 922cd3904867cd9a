# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The secondary network's CIDRs as options, whether an egress IP lies in them, and the egress IPs each node hosts
(standard library only).

Used by the ``state=absent`` refusals of vsphere_vm_nic, machineset_network and ip_forwarding: egress IPs of the primary
network on the same nodes are not carried by the secondary NIC, so they must not block its removal. The
options follow the rules of model/network.py; the networks are standard-library objects. Private module_util: no
API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network


FLAT = (('cidr', 4), ('ipv6_cidr', 6))  # deprecated options (model/network.py cidr_options)


def egress_networks(params, deprecate=None, option='network'):
    """``(networks, problems)`` from the module's secondary network option ``option`` (the public egressip_network
    whole) or the deprecated ``cidr`` and ``ipv6_cidr`` options: the secondary network(s) whose egress IPs make a
    ``state=absent`` refuse, checked by the rules of model/network.py. Neither set: ``None``, every egress IP counts."""
    cidrs, found = _network.cidr_options(params, FLAT, deprecate, option)
    problems = ['%s Fix: %s' % (item['message'], item['remedy'][:1].upper() + item['remedy'][1:]) for item in found]
    if problems:
        return None, problems
    return ([ipaddress.ip_network(cidr) for cidr in cidrs] or None), problems


def in_egress_networks(ip, networks):
    """Whether an egress IP counts: always without networks, else when inside one of them."""
    if networks is None:
        return True
    try:
        address = ipaddress.ip_address(str(ip).strip())
    except ValueError:
        return True  # an unparsable status entry is not silently ignored by a safety check
    return any(address.version == network.version and address in network for network in networks)


def hosted_egress_ips(egressips, networks=None):
    """{node: [(EgressIP name, egress IP)]} from `status.items` of the EgressIP objects (DOMAIN.md section 2).

    `networks` (from egress_networks): only the egress IPs inside them; None: all.
    """
    hosted = {}
    for obj in egressips or []:
        name = (obj.get('metadata') or {}).get('name')
        for item in (obj.get('status') or {}).get('items') or []:
            if item.get('node') and item.get('egressIP') and in_egress_networks(item['egressIP'], networks):
                hosted.setdefault(item['node'], []).append((name, item['egressIP']))
    return hosted
