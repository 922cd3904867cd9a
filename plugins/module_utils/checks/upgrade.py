# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrade checks around an OpenShift upgrade and around an upgrade of this collection (pure, no I/O).

Before an OpenShift upgrade (phase pre) what matters for secondary-network egress IPs:
- the target version is still 4.14 or newer (secondary-interface EgressIP arrived in 4.14) and not older
  than the current one;
- capacity during the rolling reboots: the Machine Config Operator reboots up to `maxUnavailable` nodes of
  each MachineConfigPool at a time (default 1; a percentage of the pool's machines, rounded down, at least
  1). A rebooting node is NotReady, so its egress IPs fail over (DOMAIN.md section 7). For every EgressIP
  object, capable egress nodes minus those that can be rebooting at once must stay >= its IPs + 1;
- NMState and forwarding in place: after each reboot a node gets its base address back only through its
  NMState policy (which must be Available), and forwarding only through `ipForwarding: Global` or the Tuned
  profile the node runs.
After it (phase post): the record is compared with the one taken before. Moves are expected (a rebooting
node loses its IPs, and there is no failback, so the IPs end up on the nodes rebooted first): reported as
info; an unassigned IP or a dropped node address is an error.
For an upgrade of this collection (phase collection): the objects it manages are recognised by their marks
(`_lifecycle`), then enable converges them and the records before and after must show no move.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    ADDRESSES_ANNOTATION, EGRESS_ASSIGNABLE_LABEL, HOSTNAME_LABEL, is_managed, MANAGED_BY_LABEL, MANAGED_BY_VALUE, NODE_ANNOTATION)
from ansible_collections.ocp.egressip.plugins.module_utils.model import lifecycle as _lifecycle
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_facts as _migrate_facts
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_forwarding as _migrate_forwarding
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import node_networks_from_node, parse_ip
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import host_cidr_holds
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING, dedupe
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_context import MINIMUM_VERSION, parse_version
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_cluster import cluster_version
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, meta as _meta, name as _name, node_ready
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches

DEFAULT_MAX_UNAVAILABLE = 1
POOL_ROLES = ('master', 'worker')
_PERCENT = re.compile(r'^\s*(\d+)\s*%\s*$')
_VERSION = re.compile(r'^\s*v?(\d+)\.(\d+)(?:\.(\d+))?')


def full_version(text):
    """(major, minor, patch) for ordering versions (patch 0 when absent), or None."""
    match = _VERSION.match(str(text or ''))
    return tuple(int(part or 0) for part in match.groups()) if match else None


# --- versions ----------------------------------------------------------------------------------

def target_version(snapshot, given):
    """(target text or None, where it came from)."""
    if given:
        return str(given), 'upgrade_target_version'
    wanted = _dig(snapshot.get('cluster_version'), 'spec', 'desiredUpdate', 'version')
    if wanted:
        return wanted, 'ClusterVersion spec.desiredUpdate'
    return None, None


def version_findings(current, target, source):
    objects = [{'kind': 'ClusterVersion', 'name': 'version'}]
    if not target:
        return [catalogue_finding('upgrade_target_version_unknown', 'No target version given; OpenShift %s is the version checked.' % current,
                                  objects=objects)]
    parsed = parse_version(target)
    if parsed is None:
        return [catalogue_finding('upgrade_target_version_unsupported', 'Target version %r (%s) cannot be read.' % (target, source),
                                  objects=objects)]
    if parsed < MINIMUM_VERSION:
        return [catalogue_finding('upgrade_target_version_unsupported', 'Target version %s (%s) is older than 4.14: secondary-interface '
                                  'EgressIP does not exist there.' % (target, source), objects=objects)]
    if full_version(current) and full_version(target) < full_version(current):
        return [catalogue_finding('upgrade_target_version_unsupported', 'Target version %s (%s) is older than the current version %s.'
                                  % (target, source, current), objects=objects)]
    return []


# --- capable egress nodes ------------------------------------------------------------------------

def holds_subnet(node, cidr):
    return any(host_cidr_holds(entry, cidr) for entry in node_networks_from_node(node).host_cidrs)


def capable_nodes(snapshot, cidr):
    """Labelled, Ready and holding the subnet in host-cidrs (where OVN-Kubernetes can place the IPs now)."""
    return sorted((node for node in snapshot.get('nodes') or []
                   if EGRESS_ASSIGNABLE_LABEL in _labels(node) and node_ready(node) and holds_subnet(node, cidr)), key=_name)


def egress_objects(snapshot, cidr, objects, ipv6_cidr=None):
    """[(name, number of IPs)]: the objects of the variables file, else the cluster's EgressIPs on the subnet (every IP in
    `cidr` or, on a dual-stack secondary network, in `ipv6_cidr`: an object may mix the families)."""
    if objects:
        return [(entry.get('name'), len(entry.get('egress_ips') or [])) for entry in objects]
    networks = [netaddr.IPNetwork(text) for text in (cidr, ipv6_cidr) if text]
    result = []
    for egressip in snapshot.get('egressips') or []:
        ips = [parse_ip(ip) for ip in _migrate_facts.spec_ips(egressip)]
        if ips and all(ip is not None and any(ip.version == network.version and ip in network for network in networks) for ip in ips):
            result.append((_name(egressip), len(ips)))
    return sorted(result)


# --- MachineConfigPools ----------------------------------------------------------------------------

def pool_of(node, pools):
    """The MachineConfigPool that rolls this node: a custom pool before worker/master (a node is in one custom pool at most)."""
    matching = [pool for pool in pools if selector_matches(_dig(pool, 'spec', 'nodeSelector') or {}, _labels(node))]
    custom = [pool for pool in matching if _name(pool) not in POOL_ROLES]
    chosen = sorted(custom or matching, key=_name)
    return chosen[0] if chosen else None


def scaled(value, total, default=DEFAULT_MAX_UNAVAILABLE):
    """maxUnavailable as the MCO reads it: an int, or a percentage of `total` rounded down; at least 1."""
    if value is None or value == '':
        return default
    match = _PERCENT.match(str(value))
    if match:
        number = int(total) * int(match.group(1)) // 100
    else:
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError('maxUnavailable %r is neither a number nor a percentage' % (value,))
    return max(1, number)


def rebooting_at_once(capable, all_nodes, pools, override=None, default=DEFAULT_MAX_UNAVAILABLE):
    """(how many capable egress nodes can be rebooting at the same time, rows per pool, findings)."""
    if override not in (None, ''):
        count = min(len(capable), scaled(override, len(capable), default))
        return count, [{'pool': '(upgrade_max_unavailable)', 'max_unavailable': str(override), 'egress_nodes': len(capable),
                        'rebooting_at_once': count}], []
    if pools is None:
        count = min(len(capable), default)
        return count, [{'pool': '(default)', 'max_unavailable': str(default), 'egress_nodes': len(capable), 'rebooting_at_once': count}], [
            catalogue_finding('upgrade_pools_not_read', 'MachineConfigPools are not served or not readable; up to %d egress node(s) are '
                              'assumed to reboot at once (upgrade_default_max_unavailable).' % default,
                              objects=[{'kind': 'MachineConfigPool', 'name': '*'}])]
    members = {}
    for node in all_nodes:
        pool = pool_of(node, pools)
        if pool is not None:
            members.setdefault(_name(pool), []).append(_name(node))
    capable_names = set(_name(node) for node in capable)
    rows, total = [], 0
    for pool in sorted(pools, key=_name):
        egress = [name for name in members.get(_name(pool), []) if name in capable_names]
        if not egress:
            continue
        machines = _dig(pool, 'status', 'machineCount') or len(members.get(_name(pool), []))
        limit = scaled(_dig(pool, 'spec', 'maxUnavailable'), machines)
        count = min(limit, len(egress))
        total += count
        rows.append({'pool': _name(pool), 'max_unavailable': str(_dig(pool, 'spec', 'maxUnavailable') or DEFAULT_MAX_UNAVAILABLE),
                     'egress_nodes': len(egress), 'rebooting_at_once': count})
    return total, rows, []


def capacity_rows(objects, capable, unavailable, pools_text):
    rows, findings = [], []
    for name, count in objects:
        remaining = len(capable) - unavailable
        row = {'egressip': name, 'ips': count, 'capable': len(capable), 'rebooting_at_once': unavailable, 'remaining': remaining,
               'needed': count + 1, 'ok': remaining >= count + 1}
        rows.append(row)
        if row['ok'] or count == 0:
            continue
        consequence = ('%d of its IPs go unassigned while they reboot' % (count - remaining) if remaining < count else
                       'one more failure during the reboots leaves an IP unassigned')
        findings.append(catalogue_finding(
            'upgrade_capacity_insufficient', 'EgressIP %s has %d IP(s); of %d capable egress node(s) up to %d reboot at once (%s), leaving %d, '
            'fewer than the %d needed: %s.' % (name, count, len(capable), unavailable, pools_text, remaining, count + 1, consequence),
            objects=[{'kind': 'EgressIP', 'name': name}]))
    return rows, findings


# --- NMState and forwarding -----------------------------------------------------------------------

def _condition(obj, kind):
    return next((item for item in _dig(obj, 'status', 'conditions') or [] if item.get('type') == kind), None)


def node_address_rows(snapshot, capable, cidr):
    """[{'node', 'address', 'interface', 'mac', 'policies': [(name, managed, available)]}] for the capable nodes."""
    states = dict((_name(item), item) for item in snapshot.get('nns') or [])
    rows = []
    for node in capable:
        address = _migrate_facts.base_address(node, cidr)
        interface = _migrate_facts.interface_holding(states.get(_name(node)), address) if address else None
        mac = nn.normalize_mac((interface or {}).get('mac-address')) or None
        found = _migrate_facts.policies_for(node, mac, (interface or {}).get('name'), snapshot.get('nncps') or []) if interface else []
        policies = [(_name(policy), is_managed(policy), (_condition(policy, 'Available') or {}).get('status') == 'True')
                    for policy, _profile in found]
        rows.append({'node': _name(node), 'hostname': _labels(node).get(HOSTNAME_LABEL) or _name(node), 'address': address,
                     'interface': (interface or {}).get('name'), 'mac': mac, 'policies': policies})
    return rows


def nmstate_findings(snapshot, rows):
    if not snapshot.get('nmstates'):
        return [catalogue_finding('upgrade_nmstate_not_ready', 'The NMState CR (nmstate) %s.' % (
            'API is not served' if snapshot.get('nmstates') is None else 'does not exist'), objects=[{'kind': 'NMState', 'name': 'nmstate'}])]
    findings = []
    broken = ['%s (policy %s)' % (row['node'], name) for row in rows for name, _managed, available in row['policies'] if not available]
    if broken:
        findings.append(catalogue_finding('upgrade_nmstate_not_ready', 'Address policies not Available: %s.' % ', '.join(broken),
                                          objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in broken]))
    outside = ['%s (%s%s)' % (row['node'], row['address'], ', hand-made policy %s' % ', '.join(name for name, _m, _a in row['policies'])
                              if row['policies'] else ', no NMState policy') for row in rows
               if not any(managed for _name_, managed, _available in row['policies'])]
    if outside:
        findings.append(catalogue_finding('upgrade_address_not_persistent', 'Base address of %s.' % '; '.join(outside),
                                          objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in outside]))
    return findings


def ipv6_forwarding_off(snapshot, rows):
    """Nodes of `rows` whose running profile sets net.ipv6.conf.all.forwarding to 0, unless Global. Linux forwards IPv6 by
    that node-wide switch alone (the per-interface key does not forward), and ovnkube-node sets it to 1 on a cluster with
    IPv6, so a node is off only where a profile turns the switch off again."""
    if fw.cluster_ip_forwarding(snapshot.get('network_operator')) == 'Global':
        return []
    tuneds = snapshot.get('tuneds') or []
    nodes = dict((_name(node), node) for node in snapshot.get('nodes') or [])
    off = []
    for row in rows:
        _tuned, profile = _migrate_forwarding.effective_profile(nodes[row['node']], tuneds)
        if profile and fw.ipv6_all_forwarding_in_profile(profile, tuneds) is False:
            off.append(row['node'])
    return off


def forwarding_findings(snapshot, rows, ip_forwarding, ipv6=False):
    """node_ip_forwarding_off for the nodes whose NIC does not forward IPv4 (or, with `ipv6`, IPv6: per family as enable sets it)."""
    _choice, _findings, state = _migrate_forwarding.forwarding_choice(snapshot, rows)
    off = [row['node'] for row in rows if state.get(row['node']) == 'off']
    off6 = ipv6_forwarding_off(snapshot, rows) if ipv6 else []
    if not (off or off6):
        return []
    external = ip_forwarding == 'external'
    parts = ['%s%s' % (', '.join(names), label) for names, label in ((off, ' (IPv4)' if ipv6 else ''), (off6, ' (IPv6)')) if names]
    return [catalogue_finding(
        'node_ip_forwarding_off', 'IP forwarding is off on the secondary NIC of %s (neither ipForwarding: Global nor a Tuned profile they '
        'run sets it)%s.' % ('; '.join(parts), ('; with ip_forwarding: external it may come from a MachineConfig, which is not read'
                                                if external else '')),
        objects=[{'kind': 'Node', 'name': name} for name in sorted(set(off + off6))], severity=WARNING if external else ERROR)]


# --- the phases -----------------------------------------------------------------------------------

def pre(snapshot, pools, cidr, objects=None, target=None, ip_forwarding='per_interface', override=None, default=DEFAULT_MAX_UNAVAILABLE,
        ipv6_cidr=None):
    """Checks before an OpenShift upgrade, and the record to compare with afterwards.

    `cidr` is the first family of the secondary network (capable nodes, base addresses); `ipv6_cidr` its IPv6 family when
    dual-stack. IPv6 forwarding is checked when either is IPv6."""
    current = cluster_version(snapshot)
    wanted, source = target_version(snapshot, target)
    findings = version_findings(current, wanted, source)
    capable = capable_nodes(snapshot, cidr)
    unavailable, pool_rows, pool_findings = rebooting_at_once(capable, snapshot.get('nodes') or [], pools, override, default)
    pools_text = ', '.join('%s maxUnavailable %s' % (row['pool'], row['max_unavailable']) for row in pool_rows) or 'no pool holds them'
    rows, capacity_findings = capacity_rows(egress_objects(snapshot, cidr, objects, ipv6_cidr), capable, unavailable, pools_text)
    addresses = node_address_rows(snapshot, capable, cidr)
    ipv6 = bool(ipv6_cidr) or netaddr.IPNetwork(cidr).version == 6
    findings += (pool_findings + capacity_findings + nmstate_findings(snapshot, addresses)
                 + forwarding_findings(snapshot, addresses, ip_forwarding, ipv6))
    return {'findings': dedupe(findings), 'versions': {'current': current, 'target': wanted, 'target_source': source},
            'capacity': rows, 'pools': pool_rows, 'egress_nodes': [dict(row, policies=[name for name, _m, _a in row['policies']])
                                                                   for row in addresses],
            'record': _lifecycle.record(snapshot)}


def placement_findings(record_value, capable):
    hosted = _lifecycle.hosted_by_node(record_value)
    counts = dict((_name(node), len(hosted.get(_name(node), []))) for node in capable)
    if len(counts) < 2 or max(counts.values()) - min(counts.values()) < 2:
        return []
    return [catalogue_finding('upgrade_placement_skewed', 'Egress IPs per capable egress node: %s.' % ', '.join(
        '%s %d' % item for item in sorted(counts.items())), objects=[{'kind': 'Node', 'name': name} for name in sorted(counts)])]


def post(snapshot, baseline, cidr):
    """After an OpenShift upgrade: what moved since the snapshot (moves are info, losses are errors)."""
    current = _lifecycle.record(snapshot)
    comparison = _lifecycle.compare(baseline, current)
    findings = _lifecycle.comparison_findings(comparison, 'since the snapshot taken before the upgrade', moved_severity=INFO,
                                              removed_severity=WARNING)
    versions = comparison['version']
    if versions['before'] != versions['after']:
        findings.append(catalogue_finding('upgrade_version_changed', 'OpenShift went from %s to %s.' % (versions['before'], versions['after']),
                                          objects=[{'kind': 'ClusterVersion', 'name': 'version'}]))
    if cidr and comparison['moved']:
        findings += placement_findings(current, capable_nodes(snapshot, cidr))
    return {'findings': dedupe(findings), 'record': current, 'comparison': comparison}


def collection(snapshot, baseline=None):
    """An upgrade of this collection: the objects it manages (by their marks) and, with a baseline, what converging moved."""
    current = _lifecycle.record(snapshot)
    findings = []
    managed = current['managed_objects']
    kinds = {}
    for item in managed:
        kinds.setdefault(item['kind'], []).append(item['name'])
    listed = '; '.join('%s %s' % (kind, ', '.join(sorted(names))) for kind, names in sorted(kinds.items())) or 'none'
    findings.append(catalogue_finding(
        'upgrade_managed_objects', 'Objects carrying %s=%s: %s.' % (MANAGED_BY_LABEL, MANAGED_BY_VALUE, listed),
        objects=[{'kind': item['kind'], 'name': item['name']} for item in managed[:_lifecycle.MAX_LISTED]]))
    marks = (NODE_ANNOTATION, ADDRESSES_ANNOTATION)
    incomplete = [_name(policy) for policy in snapshot.get('nncps') or []
                  if is_managed(policy) and not all((_meta(policy).get('annotations') or {}).get(key) for key in marks)]
    if incomplete:
        findings.append(catalogue_finding(
            'upgrade_marked_object_incomplete', 'NMState policies %s carry the label but not the annotations %s and %s that record the '
            'allocation; enable derives it from the address the node holds.' % ((', '.join(sorted(incomplete)),) + marks),
            objects=[{'kind': 'NodeNetworkConfigurationPolicy', 'name': name} for name in sorted(incomplete)]))
    result = {'record': current}
    if baseline is not None:
        result['comparison'] = _lifecycle.compare(baseline, current)
        findings += _lifecycle.comparison_findings(result['comparison'], 'while converging the objects of the collection')
    result['findings'] = dedupe(findings)
    return result
