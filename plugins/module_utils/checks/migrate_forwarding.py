# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Migrate's reader of IP forwarding on the secondary NIC (pure, no I/O): ``gatewayConfig.ipForwarding: Global``, else
the Tuned profile the Node Tuning Operator gives each egress node (its recommend rules, the lowest priority number
first) and what that profile and its custom includes set. Forwarding set in a hand-made profile is taken over by the
collection's Tuned (per_interface) when the profile sets nothing else, and left to the user (external) otherwise.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import is_managed
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, meta as _meta, name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_facts as mf

TUNED_NAMESPACE = nn.TUNED_NAMESPACE
STOCK_PARENTS = ('openshift-node', 'openshift-control-plane')
IPV6_ALL = 'net.ipv6.conf.all.forwarding'
FORWARDING_KEY = re.compile(r'^net\.ipv[46]\.conf\.(?P<interface>[^.]+(?:/[^.]+)?)\.forwarding$')


# --- IP forwarding (Node Tuning Operator) ----------------------------------------------------------

def profile_effect(name, profiles, seen=None):
    """(sysctls, other settings?, includes) of a custom profile, its custom includes loaded first."""
    seen = set() if seen is None else seen
    if name in seen or name not in profiles:
        return {}, False, ([name] if name not in profiles else [])
    seen.add(name)
    sections = fw.profile_sections(profiles[name])
    sysctls, other, includes = {}, False, []
    for key, value in sections.get('main') or []:
        if key == 'include':
            for parent in fw.profile_includes(value):
                parent_sysctls, parent_other, parent_includes = profile_effect(parent, profiles, seen)
                sysctls.update(parent_sysctls)
                other = other or parent_other
                includes += parent_includes
        elif key != 'summary':
            other = True
    for key, value in sections.get('sysctl') or []:
        sysctls[key] = value
        if not FORWARDING_KEY.match(key):
            other = True
    other = other or any(section not in ('main', 'sysctl') for section in sections)
    return sysctls, other, includes


def forwards(sysctls, interface, version=4):
    """Whether the sysctls turn IPv`version` forwarding on for the kernel interface (per interface, or for every link)."""
    if not interface:
        return False
    keys = ('net.ipv%d.conf.%s.forwarding' % (version, fw.sysctl_interface(interface)), 'net.ipv%d.conf.all.forwarding' % version)
    keys += ('net.ipv4.ip_forward',) if version == 4 else ()
    return any(str(sysctls.get(key, '')).strip() == '1' for key in keys)


def _match_item(item, labels):
    if (item.get('type') or 'node') != 'node':
        return False  # pod labels are not read: such a rule is taken as not matching
    key = item.get('label')
    if key not in labels or ('value' in item and item.get('value') is not None and labels[key] != str(item['value'])):
        return False
    return _match_list(item.get('match'), labels) if item.get('match') else True


def _match_list(items, labels):
    return any(_match_item(item, labels) for item in items or [])


def effective_profile(node, tuneds):
    """(Tuned, profile name) the Node Tuning Operator gives the node: lowest priority number among matching rules.

    Rules with machineConfigLabels (MachineConfigPool selection) or pod matches are not evaluated.
    """
    rules = []
    for tuned in tuneds:
        if _meta(tuned).get('namespace') not in (None, TUNED_NAMESPACE):
            continue
        for index, rule in enumerate(_dig(tuned, 'spec', 'recommend') or []):
            if rule.get('machineConfigLabels'):
                continue
            rules.append((rule.get('priority', 0), _name(tuned) or '', index, tuned, rule))
    for _priority, _tuned_name, _index, tuned, rule in sorted(rules, key=lambda entry: entry[:3]):
        if not rule.get('match') or _match_list(rule.get('match'), _labels(node)):
            return tuned, rule.get('profile')
    return None, None


def forwarding_state(versions, families, sysctls, where):
    """How forwarding is on now for one node, as the report says it. families: those the profile `where` sets forwarding for.

    IPv6 is forwarded by the node-wide net.ipv6.conf.all.forwarding alone (Linux ``ip6_forward``), which ovnkube-node sets
    to 1 on a cluster with IPv6: without the profile's key it is on by ovnkube-node, and off only where the profile sets it
    to 0 (as preflight, verify and upgrade read it).
    """
    texts = {}
    for version in versions:
        if version == 6 and str(sysctls.get(IPV6_ALL, '1')).strip() != '1':
            texts[6] = 'off (%s=%s in Tuned %s)' % (IPV6_ALL, str(sysctls[IPV6_ALL]).strip(), where)
        elif version in families:
            texts[version] = 'Tuned %s' % where
        else:
            texts[version] = 'ovnkube-node (%s)' % IPV6_ALL if version == 6 else 'off'
    if len(set(texts.values())) == 1:
        return texts[versions[0]]
    return '; '.join('IPv%d %s' % (version, texts[version]) for version in versions)


def forwarding_choice(snapshot, rows, versions=(4,)):
    """(ip_forwarding value, findings, {node: how forwarding is on now}) for the families `versions` of the network."""
    mode = fw.cluster_ip_forwarding(snapshot.get('network_operator')) or 'Restricted'
    if mode == 'Global':
        return fw.GLOBAL, [], dict((row['node'], 'gatewayConfig.ipForwarding Global') for row in rows)
    tuneds = snapshot.get('tuneds') or []
    profiles = {}
    for tuned in tuneds:
        for profile in _dig(tuned, 'spec', 'profile') or []:
            profiles.setdefault(profile.get('name'), profile.get('data') or '')
    nodes = dict((_name(node), node) for node in snapshot.get('nodes') or [])
    state, by_hand, by_hand_other = {}, [], []
    for row in rows:
        tuned, profile = effective_profile(nodes[row['node']], tuneds)
        sysctls, other, includes = profile_effect(profile, profiles) if profile else ({}, False, [])
        other = other or any(parent not in STOCK_PARENTS + (profile,) for parent in includes)
        families = [version for version in versions if forwards(sysctls, row.get('interface'), version)]
        where = '%s/%s' % (_name(tuned), profile)
        state[row['node']] = forwarding_state(versions, families, sysctls, where)
        if families and not is_managed(tuned):
            (by_hand_other if other else by_hand).append((row['node'], where))
    if by_hand_other:
        return 'external', [_by_hand_finding(by_hand_other, (
            ', which also tune other things. The collection\'s Tuned (priority 20, one profile per node) would replace them on these '
            'nodes and drop that tuning, so the variables file says ip_forwarding: external: the collection leaves forwarding to you.'))], state
    findings = []
    if by_hand:
        findings.append(_by_hand_finding(by_hand, (
            ' that only set forwarding. The collection\'s Tuned takes over for these nodes (ip_forwarding: per_interface, the same '
            'sysctl); remove the forwarding from your profile afterwards so one object decides.')))
    return fw.PER_INTERFACE, findings, state


def _by_hand_finding(by_hand, consequence):
    """migrate_forwarding_by_hand for [(node, 'Tuned/profile')]: forwarding comes from hand-made profiles, and what follows."""
    return catalogue_finding(
        'migrate_forwarding_by_hand', 'IP forwarding on the secondary NIC of %s comes from Tuned profile(s) %s made by hand%s' % (
            mf.names_text(node for node, _where in by_hand), mf.names_text(where for _node, where in by_hand), consequence),
        objects=[{'kind': 'Tuned', 'name': where.split('/')[0], 'namespace': TUNED_NAMESPACE}
                 for where in sorted(set(where for _node, where in by_hand))])
