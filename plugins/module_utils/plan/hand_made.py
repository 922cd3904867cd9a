# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hand-made NodeNetworkConfigurationPolicies of the same NIC (node_nic_address replace_hand_made, migrate), as pure
functions (no I/O): which one names the NIC, what blocks replacing it, and the replacement plan.
"""


from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import HOSTNAME_LABEL, is_managed, MANAGED_BY_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn


# --- hand-made policies of the same NIC (node_nic_address replace_hand_made, migrate) -------------

REPLACEABLE_SPEC_KEYS = ('nodeSelector', 'desiredState', 'maxUnavailable')
REPLACEABLE_STATE_KEYS = ('interfaces', 'routes')
REPLACEABLE_INTERFACE_KEYS = ('name', 'type', 'state', 'identifier', 'mac-address', 'profile-name', 'ipv4', 'ipv6')
REPLACEABLE_FAMILY_KEYS = ('enabled', 'dhcp', 'autoconf', 'address')


def names_nic(interface, mac, kernel_name):
    """Whether one desiredState interface names this NIC: by MAC (`identifier: mac-address`), else by its kernel name."""
    if not isinstance(interface, dict):
        return False
    if interface.get('identifier') == 'mac-address':
        return bool(mac) and nn.normalize_mac(interface.get('mac-address')) == nn.normalize_mac(mac)
    return bool(kernel_name) and interface.get('name') == kernel_name


def policy_nic_interface(policy, labels, mac, kernel_name):
    """The interface of `policy` that configures this NIC of the node with `labels`, or None.

    The policy's nodeSelector must match the node (an empty one matches every node) and one of its
    interfaces must name the NIC (names_nic).
    """
    spec = (policy or {}).get('spec') or {}
    if not selector_matches(spec.get('nodeSelector') or {}, labels or {}):
        return None
    for interface in (spec.get('desiredState') or {}).get('interfaces') or []:
        if names_nic(interface, mac, kernel_name):
            return interface
    return None


def _address_key(text):
    entry = netaddr.IPNetwork(str(text))
    return (entry.version, int(entry.ip), entry.prefixlen)


def _family_blockers(interface, addresses):
    """Why the NIC's IP settings in a hand-made interface differ from the collection's ([] when they are the same)."""
    reasons = []
    for version, key in ((4, 'ipv4'), (6, 'ipv6')):
        family = interface.get(key)
        wanted = addresses.get(version)
        if not wanted:
            if isinstance(family, dict) and family.get('enabled'):
                reasons.append('it enables %s, which the collection\'s policy leaves off' % key)
            continue
        if not isinstance(family, dict) or not family.get('enabled'):
            reasons.append('it does not give the NIC the %s address %s' % (key, wanted))
            continue
        for flag in ('dhcp', 'autoconf'):
            if family.get(flag):
                reasons.append('it turns %s %s on' % (key, flag))
        extra = sorted(set(family) - set(REPLACEABLE_FAMILY_KEYS))
        if extra:
            reasons.append('it also sets %s' % ', '.join('%s.%s' % (key, name) for name in extra))
        held = []
        for entry in family.get('address') or []:
            entry = entry if isinstance(entry, dict) else {}
            held.append('%s/%s' % (entry.get('ip'), entry.get('prefix-length')))
        try:
            same = sorted(_address_key(text) for text in held) == [_address_key(wanted)]
        except (netaddr.AddrFormatError, ValueError, TypeError):
            same = False
        if not same:
            reasons.append('its %s address(es) %s differ from the collection\'s %s' % (key, ', '.join(held) or 'none', wanted))
    return reasons


def replace_blockers(policy, hostname, mac, kernel_name, addresses):
    """Why deleting a hand-made policy could change what configures the node ([] when it only duplicates the collection's).

    Replaceable means: no ownership label; nodeSelector exactly {kubernetes.io/hostname: hostname};
    a desiredState of exactly one interface, this NIC (names_nic), up, of type ethernet, holding exactly
    the base address(es) `addresses` ({4: 'ip/prefix', 6: ...}) with no DHCP or autoconf and no other
    setting, plus optionally routes through that interface; nothing else (no other interface, no
    dns-resolver, no route-rules, no capture). Once the collection's policy is Available on the node,
    deleting such a policy changes nothing there (nmstate never rolls back on deletion).
    """
    reasons = []
    metadata = (policy or {}).get('metadata') or {}
    labels = metadata.get('labels') or {}
    if MANAGED_BY_LABEL in labels:
        reasons.append('it carries the label %s=%s' % (MANAGED_BY_LABEL, labels[MANAGED_BY_LABEL]))
    spec = (policy or {}).get('spec') or {}
    selector = spec.get('nodeSelector') or {}
    if selector != {HOSTNAME_LABEL: hostname}:
        reasons.append('its nodeSelector %s selects more than this node (%s=%s)' % (json.dumps(selector, sort_keys=True), HOSTNAME_LABEL, hostname))
    extra = sorted(set(spec) - set(REPLACEABLE_SPEC_KEYS))
    if extra:
        reasons.append('it also sets spec.%s' % ', spec.'.join(extra))
    state = spec.get('desiredState') or {}
    extra = sorted(set(state) - set(REPLACEABLE_STATE_KEYS))
    if extra:
        reasons.append('its desiredState also configures %s' % ', '.join(extra))
    interfaces = state.get('interfaces') or []
    nic = [item for item in interfaces if names_nic(item, mac, kernel_name)]
    others = [item for item in interfaces if not names_nic(item, mac, kernel_name)]
    if others:
        reasons.append('it also configures the interface(s) %s' % ', '.join(
            str(item.get('name')) if isinstance(item, dict) else repr(item) for item in others))
    if not nic:
        reasons.append('it does not configure the secondary NIC')
        return reasons
    interface = nic[0]
    if len(nic) > 1:
        reasons.append('it lists the secondary NIC %d times' % len(nic))
    if interface.get('type', 'ethernet') != 'ethernet':
        reasons.append('it gives the NIC the type %s' % interface.get('type'))
    if interface.get('state', 'up') != 'up':
        reasons.append('it sets the NIC %s' % interface.get('state'))
    extra = sorted(set(interface) - set(REPLACEABLE_INTERFACE_KEYS))
    if extra:
        reasons.append('it also sets %s on the NIC' % ', '.join(extra))
    reasons += _family_blockers(interface, addresses)
    routes = state.get('routes') or {}
    if not isinstance(routes, dict):
        reasons.append('its routes are not a mapping')
        return reasons
    extra = sorted(set(routes) - set(['config']))
    if extra:
        reasons.append('it also sets routes.%s' % ', routes.'.join(extra))
    through = set(name for name in (interface.get('name'), interface.get('profile-name'), kernel_name) if name)
    elsewhere = [route for route in routes.get('config') or [] if not isinstance(route, dict) or route.get('next-hop-interface') not in through]
    if elsewhere:
        reasons.append('it has route(s) not through the NIC: %s' % ', '.join(
            '%s via %s' % (route.get('destination'), route.get('next-hop-interface')) if isinstance(route, dict) else repr(route)
            for route in elsewhere))
    return reasons


def plan_hand_made_replacement(allocations, snapshot):
    """Hand-made policies that the collection's policy of each node makes redundant, and the others that configure the NIC.

    allocations: the allocations of plan_nic_addresses (node, mac, policy, address, ipv6_address, interface).
    snapshot: {'nodes', 'nncps'}. Returns {'delete': [{'name', 'node'}], 'keep': [{'name', 'node', 'reason'}],
    'before': {name: view}}: a policy without the ownership label that configures this NIC (policy_nic_interface)
    is deleted when replace_blockers finds nothing, else kept with the reasons.
    """
    nodes = nn.by_name(snapshot['nodes'])
    policies = sorted(snapshot['nncps'] or [], key=lambda item: item['metadata']['name'])
    plan = {'delete': [], 'keep': [], 'before': {}}
    for allocation in allocations:
        node = nodes.get(allocation['node'])
        if node is None:
            continue
        labels = (node.get('metadata') or {}).get('labels') or {}
        hostname = labels.get(HOSTNAME_LABEL) or allocation['node']
        addresses = {}
        for text in (allocation.get('address'), allocation.get('ipv6_address')):
            if text:
                addresses[6 if ':' in text else 4] = text
        for policy in policies:
            name = policy['metadata']['name']
            if is_managed(policy) or name == allocation['policy']:
                continue
            if policy_nic_interface(policy, labels, allocation['mac'], allocation.get('interface')) is None:
                continue
            reasons = replace_blockers(policy, hostname, allocation['mac'], allocation.get('interface'), addresses)
            if reasons:
                plan['keep'].append({'name': name, 'node': allocation['node'], 'reason': '; '.join(reasons)})
            else:
                plan['delete'].append({'name': name, 'node': allocation['node']})
                plan['before'][name] = nn.owned_view(policy, {'spec': {'nodeSelector': None, 'desiredState': None}})
    return plan
