# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight checks of vCenter: nodes to VMs, switches, standard and distributed port groups, NSX. Pure: each takes
the PreflightContext and returns findings.

With failure domains (egressip_vsphere.failure_domains; the snapshot's vsphere.domains, snapshot/cluster.py) every check
runs once per domain on that domain's read (its datacenter and cluster), port group and nodes (model/failure_domains.py
map_nodes); each message names the domain, and a port group missing in a domain is failure_domain_portgroup_missing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import functools

from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as _node_network
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as _vsphere_network
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_context as pc
from ansible_collections.ocp.egressip.plugins.module_utils.model import failure_domains as _failure_domains


# --- failure domains: each check once per domain ---------------------------------------------------

def domain_mode(ctx):
    return ctx.vsphere is not None and ctx.vsphere.get('domains') is not None


def _node_mapping(ctx):
    return _failure_domains.map_nodes(ctx.selected_nodes, ctx.kind('machines') or [], ctx.vsphere['domains'])


def domain_contexts(ctx):
    """[(domain, context)]: the context of each domain read - its vCenter read, port group and the selected nodes in it."""
    mapping = _node_mapping(ctx)[0]
    contexts = []
    for domain in ctx.vsphere['domains']:
        sub = copy.copy(ctx)
        sub.vsphere = domain['vsphere']
        sub.vms = sub.vsphere.get('vms') or []
        sub.vms_by_uuid = dict((_vsphere_network.normalize_uuid(vm.get('uuid')), vm) for vm in sub.vms if vm.get('uuid'))
        sub.portgroup_config = domain.get('portgroup') or {}
        sub.selected_nodes = [node for node in ctx.selected_nodes if mapping.get(_name(node)) == domain['name']]
        contexts.append((domain, sub))
    return contexts


def _in_domain(domain, findings):
    """The findings of one domain's check, naming the domain; a missing port group becomes failure_domain_portgroup_missing."""
    named = []
    for item in findings:
        message = 'Failure domain %s (datacenter %s, cluster %s): %s' % (domain['name'], domain['datacenter'], domain['cluster'],
                                                                         item['message'])
        if item['id'] == 'portgroup_missing':
            named.append(catalogue_finding('failure_domain_portgroup_missing', message, objects=item.get('objects'),
                                           severity=item['severity']))
        else:
            named.append(dict(item, message=message))
    return named


def per_domain(check):
    """The check as it is, or once per failure domain (each finding naming its domain)."""
    @functools.wraps(check)
    def run(ctx):
        if not domain_mode(ctx):
            return check(ctx)
        return [item for domain, sub in domain_contexts(ctx) if not sub.vsphere.get('not_found') for item in _in_domain(domain, check(sub))]
    return run


# --- vSphere: nodes to VMs, switches, port groups, NSX ---------------------------------------

def check_vsphere_read(ctx):
    if not ctx.requested():
        return []
    if ctx.vsphere is None:
        return [catalogue_finding(
            'vsphere_not_checked',
            'vCenter was not read (no datacenter/cluster or connection given): the port group, VM NIC, NSX and Machine '
            'NIC count checks were skipped.', objects=[{'kind': 'option', 'name': 'egressip_vsphere'}])]
    if domain_mode(ctx):
        return _domains_read(ctx)
    if ctx.vsphere.get('not_found'):
        return [catalogue_finding('vsphere_cluster_not_found', ctx.vsphere['not_found'],
                                  objects=[{'kind': 'option', 'name': 'egressip_vsphere'}])]
    return []


def _domains_read(ctx):
    """The failure domains unknown or incomplete, each domain whose datacenter or cluster is not found, and each selected
    node that matches no domain."""
    findings = list(ctx.vsphere.get('domain_findings') or [])
    findings += [catalogue_finding('vsphere_cluster_not_found', 'Failure domain %s: %s' % (domain['name'], domain['vsphere']['not_found']),
                                   objects=[{'kind': 'option', 'name': _failure_domains.OPTION}])
                 for domain in ctx.vsphere['domains'] if domain['vsphere'].get('not_found')]
    return findings + _node_mapping(ctx)[1]


def _vm_targets(ctx):
    nodes = [{'name': _name(node), 'provider_id': _dig(node, 'spec', 'providerID')} for node in ctx.selected_nodes]
    return _vsphere_network.resolve_targets(ctx.vms, nodes)


def _secondary_network(ctx):
    """The network the NICs go on, as _vsphere_network describes it, or None when it does not exist yet."""
    name = ctx.portgroup_config.get('name')
    if ctx.portgroup_config.get('switch_type') == _vsphere_network.DISTRIBUTED:
        for switch in ctx.vsphere.get('distributed_switches') or []:
            for portgroup in switch.get('portgroups') or []:
                if portgroup.get('name') == name and switch.get('name') == (ctx.portgroup_config.get('switch') or switch.get('name')):
                    return {'type': _vsphere_network.DISTRIBUTED, 'name': name, 'moid': portgroup.get('moid'),
                            'portgroup_key': portgroup.get('key'), 'switch_uuid': switch.get('uuid')}
        return None
    return {'type': _vsphere_network.STANDARD, 'name': name, 'moid': None}


@per_domain
def check_node_vms(ctx):
    """Every selected node has exactly one VM, and its VM can take the NIC (NIC limit, ambiguity, adapter)."""
    if not ctx.vsphere_cluster_read() or not ctx.selected_nodes:
        return []
    targets, findings = _vm_targets(ctx)
    network = _secondary_network(ctx) if ctx.portgroup_config.get('name') else None
    if network is not None:
        # the collection's NICs by MAC (its policies): a changed port group moves them, or is refused here, before any write
        owned = _vsphere_network.own_macs_by_node(_node_network.policy_allocation(policy) for policy in ctx.kind('nncps') or [])
        for entry in _vsphere_network.plan_vm_nics(targets, network, own_macs_by_node=owned):
            findings += entry['findings']
    return findings


def _portgroup_missing_severity(ctx):
    return INFO if ctx.mode == pc.PLAN else ERROR


def _standard_portgroup_state(ctx, name, vlan, switch):
    missing, vlan_mismatch, other_switch, no_switch = [], [], [], []
    for host in ctx.vsphere.get('hosts') or []:
        switches = [item.get('name') for item in host.get('standard_switches') or []]
        if switch and switch not in switches:
            no_switch.append(host['name'])
        portgroup = next((item for item in host.get('standard_portgroups') or [] if item.get('name') == name), None)
        if portgroup is None:
            missing.append(host['name'])
            continue
        if vlan is not None and portgroup.get('vlan_id') != vlan:
            vlan_mismatch.append('%s (VLAN %s)' % (host['name'], portgroup.get('vlan_id')))
        if switch and portgroup.get('vswitch') != switch:
            other_switch.append('%s (on %s)' % (host['name'], portgroup.get('vswitch')))
    return missing, vlan_mismatch, other_switch, no_switch


@per_domain
def check_standard_portgroup(ctx):
    if not ctx.vsphere_cluster_read() or ctx.portgroup_config.get('switch_type', 'standard') != 'standard':
        return []
    name, vlan, switch = ctx.portgroup_config.get('name'), ctx.portgroup_config.get('vlan_id'), ctx.portgroup_config.get('switch')
    if not name:
        return []
    missing, vlan_mismatch, other_switch, no_switch = _standard_portgroup_state(ctx, name, vlan, switch)
    hosts = [host['name'] for host in ctx.vsphere.get('hosts') or []]
    findings = []
    if no_switch:
        findings.append(catalogue_finding(
            'switch_missing', 'Standard vSwitch %s does not exist on host(s) %s of vSphere cluster %s.'
            % (switch, pc.names_text(no_switch), ctx.vsphere.get('cluster')),
            objects=[{'kind': 'HostSystem', 'name': host} for host in no_switch]))
    if other_switch:
        findings.append(catalogue_finding(
            'vsphere_portgroup_on_other_vswitch', 'Port group %s is not on vSwitch %s on host(s) %s.' % (name, switch, pc.names_text(other_switch)),
            objects=[{'kind': 'HostSystem', 'name': item.split(' ')[0]} for item in other_switch]))
    if vlan_mismatch:
        findings.append(catalogue_finding(
            'portgroup_vlan_mismatch', 'Standard port group %s has another VLAN than %s on host(s) %s: a node VM on (or moved '
            'by DRS, vMotion or HA to) such a host is on another network.' % (name, vlan, pc.names_text(vlan_mismatch)),
            objects=[{'kind': 'HostSystem', 'name': item.split(' ')[0]} for item in vlan_mismatch]))
    if missing and len(missing) == len(hosts):
        message = ('Standard port group %s does not exist on any host of vSphere cluster %s%s.'
                   % (name, ctx.vsphere.get('cluster'), '; the vSphere network step will create it on every host (VLAN %s)' % vlan
                      if ctx.mode == pc.PLAN else ''))
        findings.append(catalogue_finding('portgroup_missing', message, severity=_portgroup_missing_severity(ctx),
                                          objects=[{'kind': 'Network', 'name': name}]))
    elif missing:
        message = ('Standard port group %s is missing on host(s) %s of vSphere cluster %s: a node VM moved there by DRS, vMotion '
                   'or HA silently loses its secondary network and no EgressIP failover happens.%s'
                   % (name, pc.names_text(missing), ctx.vsphere.get('cluster'),
                      ' The vSphere network step will create it there.' if ctx.mode == pc.PLAN else ''))
        findings.append(catalogue_finding('portgroup_missing', message, severity=_portgroup_missing_severity(ctx),
                                          objects=[{'kind': 'HostSystem', 'name': host} for host in missing]))
    return findings


@per_domain
def check_distributed_portgroup(ctx):
    if not ctx.vsphere_cluster_read() or ctx.portgroup_config.get('switch_type') != 'distributed':
        return []
    name, vlan, switch = ctx.portgroup_config.get('name'), ctx.portgroup_config.get('vlan_id'), ctx.portgroup_config.get('switch')
    if not name:
        return []
    switches = dict((item.get('name'), item) for item in ctx.vsphere.get('distributed_switches') or [])
    if switch and switch not in switches:
        return [catalogue_finding(
            'switch_missing', "Distributed switch '%s' not found in datacenter %s; distributed switches there: %s."
            % (switch, ctx.vsphere.get('datacenter'), pc.names_text(switches) or 'none'),
            objects=[{'kind': 'option', 'name': 'egressip_vsphere.portgroup.switch'}])]
    findings = []
    if switch:
        members = set(switches[switch].get('hosts') or [])
        outside = [host['name'] for host in ctx.vsphere.get('hosts') or [] if host['name'] not in members]
        if outside:
            findings.append(catalogue_finding(
                'switch_missing', 'Host(s) %s of vSphere cluster %s are not members of distributed switch %s: a node VM '
                'placed there cannot connect to %s.' % (pc.names_text(outside), ctx.vsphere.get('cluster'), switch, name),
                objects=[{'kind': 'HostSystem', 'name': host} for host in outside]))
    candidates = [(item, portgroup) for item in switches.values() if not switch or item.get('name') == switch
                  for portgroup in item.get('portgroups') or [] if portgroup.get('name') == name]
    if not candidates:
        message = 'Distributed port group %s does not exist%s%s.' % (
            name, ' on %s' % switch if switch else '',
            '; the vSphere network step will create it (VLAN %s)' % vlan if ctx.mode == pc.PLAN else '')
        findings.append(catalogue_finding('portgroup_missing', message, severity=_portgroup_missing_severity(ctx),
                                          objects=[{'kind': 'DistributedVirtualPortgroup', 'name': name}]))
        return findings
    for item, portgroup in candidates:
        if vlan is not None and (portgroup.get('vlan_type') not in (None, 'vlan') or portgroup.get('vlan_id') != vlan):
            current = portgroup.get('vlan_id') if portgroup.get('vlan_type') in (None, 'vlan') else '%s %s' % (
                portgroup.get('vlan_type'), portgroup.get('vlan_ranges') or portgroup.get('vlan_id'))
            findings.append(catalogue_finding(
                'portgroup_vlan_mismatch', 'Distributed port group %s on %s has VLAN %s, not %s.' % (name, item.get('name'), current, vlan),
                objects=[{'kind': 'DistributedVirtualPortgroup', 'name': name, 'key': portgroup.get('key')}]))
    return findings


@per_domain
def check_nsx(ctx):
    if not ctx.vsphere_cluster_read() or not ctx.portgroup_config.get('name'):
        return []
    name = ctx.portgroup_config['name']
    backed = ['distributed port group %s on %s (backing type %s)' % (name, switch.get('name'), portgroup.get('backing_type'))
              for switch in ctx.vsphere.get('distributed_switches') or [] for portgroup in switch.get('portgroups') or []
              if portgroup.get('name') == name and str(portgroup.get('backing_type') or '').lower() == 'nsx']
    backed += ['opaque network %s (%s)' % (item.get('name'), item.get('type') or 'NSX')
               for item in ctx.vsphere.get('opaque_networks') or [] if item.get('name') == name]
    if not backed:
        return []
    accepted = ctx.vsphere_config.get('accept_untested_nsx') is True
    return [catalogue_finding(
        'nsx_backed_network',
        'The secondary network %s is backed by NSX: %s. NSX segments may limit the addresses learned per port (SpoofGuard, '
        'IP discovery), so egress IPs next to the NIC address may be dropped; this is untested and unconfirmed.%s'
        % (name, '; '.join(backed), ' Accepted with egressip_vsphere.accept_untested_nsx: true.' if accepted else ''),
        objects=[{'kind': 'Network', 'name': name}], severity=WARNING if accepted else ERROR)]
