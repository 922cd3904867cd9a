# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ocp.egressip.egressip_render (documented in plugins/modules/egressip_render.py).

It runs on the controller, because the manifests are files for the controller (a Git working tree). Every object is
built by the very plan function its module applies it with (plan/egressips.py, plan/node_network.py, ...). The cluster
is read once, read-only, through the collection's Kubernetes client: one list per kind.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.action import ActionBase

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    ADDRESSES_ANNOTATION, EGRESS_ASSIGNABLE_LABEL, HOSTNAME_LABEL, is_managed, MANAGED_BY_LABEL, MANAGED_BY_VALUE, NODE_ANNOTATION)
from ansible_collections.ocp.egressip.plugins.module_utils.checks import egressip_validation as validation
from ansible_collections.ocp.egressip.plugins.module_utils.checks import permissions
from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard_manifests as gm
from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as mapi
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egressips as egressip_plan
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import (
    SecondaryNetwork, argument_spec as network_argument_spec, networks_from)
from ansible_collections.ocp.egressip.plugins.module_utils.plan import render
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import HAS_K8S_LIBS, K8sClient, k8s_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.plan.vsphere_network import node_selected
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egress_labels as el
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na

WHAT = 'egressip_render'
NETWORK_OPERATOR = (kube.api_version(kube.NETWORK_OPERATOR), kube.NETWORK_OPERATOR.kind, kube.NETWORK_OPERATOR.name)
MACHINESET_API_VERSION = kube.api_version(kube.MACHINESETS)


def argument_spec():
    spec = dict(
        dest=dict(type='path', required=True),
        objects=dict(type='list', elements='dict', default=[]),
        network=network_argument_spec(required=True),
        node_selector=dict(type='dict', required=True),
        nics=dict(type='list', elements='dict', default=[]),
        macs_source=dict(type='str', default='variable', choices=['vcenter', 'variable']),
        vsphere=dict(type='dict', default={}),
        interface_name=dict(type='str', default='egressip0'),
        tuned_priority=dict(type='int', default=20),
        node_labels=dict(type='bool', default=True),
        machinesets=dict(type='bool', default=True),
        machineset_labels=dict(type='bool', default=False),
        adopt=dict(type='bool', default=False),
        guard=dict(type='dict', default={}),
        guard_variables=dict(type='dict', default={}),
        allow_insufficient_capacity=dict(type='bool', default=False),
    )
    spec.update(k8s_argument_spec())
    return spec


# --- the cluster, read once ------------------------------------------------------------------------

def read_cluster(k8s, params):
    """One list per kind: Nodes, NodeNetworkStates, policies, EgressIPs, the Tuned objects, MachineSets and Machines."""
    kinds = ['nodes', 'nns', 'nncps', 'egressips']
    if params['network']['ip_forwarding'] == fw.PER_INTERFACE:
        kinds.append('tuneds')
    if params['machinesets'] or params['machineset_labels']:
        kinds += ['machinesets', 'machines']
    # no Machine API (UPI): None
    snapshot = kubernetes.read(k8s, kinds, optional=('machinesets', 'machines'), namespaces={
        'tuneds': nn.TUNED_NAMESPACE, 'machinesets': kube.MACHINE_API_NAMESPACE, 'machines': kube.MACHINE_API_NAMESPACE})
    snapshot.setdefault('tuneds', [])
    snapshot.setdefault('machinesets', None)
    snapshot.setdefault('machines', None)
    return snapshot


# --- each object, built by the function its module applies it with -------------------------------

def plan_policies(params, entries, snapshot, networks, findings):
    """NodeNetworkConfigurationPolicies (node_nic_address's plan), their allocations and the findings (`findings`: the
    network's refusals)."""
    findings = findings + na.check_interface_name(params['interface_name'])
    if errors(findings):
        raise Refused(findings)
    # the route metric per family (egressip_network.ipv6.route_metric, else the network's), as node_nic_address takes it
    metrics = dict((network.version, network.route_metric) for network in networks)
    plan = na.plan_nic_addresses(entries, networks, metrics, params['interface_name'], snapshot)
    # a rendered route must name the NIC's kernel interface, which only the node's NodeNetworkState tells
    findings += na.pending_findings(plan['pending'], 0)
    nodes = dict((node['metadata']['name'], node) for node in snapshot['nodes'])
    gateways = dict((network.version, str(network.gateway)) for network in networks)
    policies = []
    for item in plan['allocations']:
        hostname = (nodes[item['node']]['metadata'].get('labels') or {}).get(HOSTNAME_LABEL) or item['node']
        addresses = dict((6 if ':' in address else 4, address) for address in (item['address'], item['ipv6_address']) if address)
        policies.append(nn.desired_policy(item['node'], hostname, item['mac'], addresses, gateways,
                                          metrics, params['interface_name'], item['interface']))
    return policies, plan['allocations'], findings + plan['findings']


def plan_forwarding(params, entries, snapshot, networks):
    """The Tuned of ip_forwarding (per_interface), the network operator patch (global), or nothing (external)."""
    mode = params['network']['ip_forwarding']
    if mode == fw.GLOBAL:
        return [render.partial(NETWORK_OPERATOR[0], NETWORK_OPERATOR[1], NETWORK_OPERATOR[2], fw.ip_forwarding_patch('Global'))], {}, []
    if mode != fw.PER_INTERFACE:
        return [], {}, []
    targets, findings = fw.forwarding_targets(entries, snapshot)
    current = next((item for item in snapshot['tuneds'] if item['metadata']['name'] == nn.TUNED_NAME), None)
    if current is not None and not is_managed(current):
        tuned_id = '%s/%s' % (nn.TUNED_NAMESPACE, nn.TUNED_NAME)
        findings.append(catalogue_finding(
            'node_object_not_owned', 'Tuned %s exists without the label %s=%s; it was not created by this collection.'
            % (tuned_id, MANAGED_BY_LABEL, MANAGED_BY_VALUE), objects=[{'kind': 'Tuned', 'name': tuned_id}]))
    ipv6 = any(network.version == 6 for network in networks)  # dual stack or IPv6 only: ip_forwarding's rule
    tuned = fw.desired_tuned(targets, params['tuned_priority'], ipv6)
    interfaces = dict((target['node'], target['interface']) for target in targets)
    return ([tuned] if tuned else []), interfaces, findings


def plan_labels(params, nodes):
    """Partial Nodes carrying the egress-assignable label (egress_nodes' label_patch)."""
    if not params['node_labels']:
        return []
    return [render.partial('v1', 'Node', name, el.label_patch(True)) for name in sorted(nodes)]


def plan_machinesets(params, selected, labelled, snapshot):
    """Partial MachineSets: the port group in the template devices (machineset_network's plan) and the template label.

    The MachineSets are those that build the selected nodes, as machineset_network and egress_nodes choose them.
    """
    machinesets, machines = snapshot['machinesets'], snapshot['machines']
    if machinesets is None or machines is None:
        return [], []
    rows = mapi.node_machines(selected, machines, machinesets)
    by_name = dict((item['metadata']['name'], item) for item in machinesets)
    manifests, findings = [], []
    if params['machinesets']:
        portgroup = (params['vsphere'].get('portgroup') or {}).get('name')
        if not portgroup:
            raise Refused([catalogue_finding('node_network_input_invalid', 'vsphere.portgroup.name is not set, so the MachineSet '
                                             'devices cannot be rendered.', objects=[{'kind': 'option', 'name': 'vsphere'}],
                                             remedy='give egressip_vsphere.portgroup.name, or machinesets: false.')])
        names = [row['machineset'] for row in rows if row['machineset']]
        for name in sorted(set(names), key=names.index):
            entry = mapi.plan_machineset(by_name[name], portgroup)
            findings += entry['findings']
            if entry['action'] != 'refused':
                manifests.append(_machineset_partial(by_name[name], _devices_patch(entry['after'])))
    if params['machineset_labels']:
        wanted = sorted(set(row['machineset'] for row in rows if row['node'] in labelled and row['machineset']))
        manifests += [_machineset_partial(by_name[name], el.machineset_label_patch(True)) for name in wanted]
    return manifests, findings


def _devices_patch(devices):
    patch = devices
    for key in reversed(mapi.TEMPLATE_DEVICES_PATH):
        patch = {key: patch}
    return patch


def _machineset_partial(machineset, patch):
    metadata = machineset['metadata']
    return render.partial(MACHINESET_API_VERSION, 'MachineSet', metadata['name'], patch, namespace=metadata.get('namespace'))


def plan_egressips(params, snapshot, addresses, labelled, network):
    """EgressIP objects (egressip's desired_object), checked as egressip checks them, against the cluster as it will be."""
    entries = [dict((key, entry.get(key)) for key in ('name', 'egress_ips', 'namespace_selector', 'pod_selector'))
               for entry in params['objects']]
    findings = validation.check_shape(entries, 'objects')
    if errors(findings):
        return [], findings
    existing = dict((obj['metadata']['name'], obj) for obj in snapshot['egressips'])
    _changes, refusals = egressip_plan.plan_changes(entries, existing, 'present', False, params['adopt'])
    after = placement.snapshot(render.predicted_nodes(snapshot['nodes'], addresses, labelled), snapshot['egressips'],
                               owner_label=egressip_plan.OWNER)
    findings += validation.validate(entries, network, after, allow_insufficient_capacity=params['allow_insufficient_capacity'])
    return [egressip_plan.desired_object(entry) for entry in entries], findings + refusals


def plan_guard(params):
    """The in-cluster guard's manifests when params['guard']['enabled'] (plan/guard_manifests.py), or its refusals."""
    guard = params.get('guard') or {}
    if not guard.get('enabled'):
        return [], []
    return gm.plan(guard, params.get('guard_variables') or {}, render.to_yaml, permissions.RULES['guard'], permissions.NAMESPACES)


GUARD_KINDS = {
    'Namespace': 'guard: its namespace', 'ServiceAccount': 'guard: the account its rounds run as',
    'ClusterRole': 'guard: what a round reads', 'ClusterRoleBinding': 'guard: binds the ClusterRole to its account',
    'Role': 'guard: what a round writes in this namespace', 'RoleBinding': 'guard: binds the Role to its account',
    'ConfigMap': 'guard: the variables a round reads', 'CronJob': 'guard: one round per schedule',
    'PrometheusRule': 'guard: alerts (round failed, not succeeding, egress node unreachable)',
}


def describe(manifest):
    """One line per rendered file for the README."""
    kind, name = manifest['kind'], manifest['metadata']['name']
    what = {
        'EgressIP': lambda: 'egress IPs %s' % ', '.join(manifest['spec']['egressIPs']),
        'NodeNetworkConfigurationPolicy': lambda: 'base address %s on the NIC with MAC %s of node %s' % (
            manifest['metadata']['annotations'][ADDRESSES_ANNOTATION],
            manifest['spec']['desiredState']['interfaces'][0]['mac-address'], manifest['metadata']['annotations'][NODE_ANNOTATION]),
        'Tuned': lambda: 'IP forwarding on the egress NIC of %d node(s)' % sum(len(item['match']) for item in manifest['spec']['recommend']),
        'Node': lambda: 'partial: label %s' % EGRESS_ASSIGNABLE_LABEL,
        'MachineSet': lambda: 'partial: %s' % ' and '.join(
            part for part, present in (('template network devices', _has_devices(manifest)),
                                       ('template label %s' % EGRESS_ASSIGNABLE_LABEL, _has_template_label(manifest))) if present),
        'Network': lambda: 'partial: gatewayConfig.ipForwarding Global',
    }
    return {'file': render.file_name(manifest), 'kind': kind, 'name': name, 'what': what.get(kind, lambda: GUARD_KINDS.get(kind, ''))()}


def _has_devices(manifest):
    return dig(manifest, *mapi.TEMPLATE_DEVICES_PATH) is not None


def _has_template_label(manifest):
    return EGRESS_ASSIGNABLE_LABEL in el.machineset_template_labels(manifest)


def build(params, snapshot):
    """(files, result facts, warnings) for the options and the cluster snapshot; raises Refused on error findings."""
    entries, findings = na.nic_entries(params['nics'], keys=('node', 'mac'))
    findings += na.validate_nic_entries(entries)
    findings += el.validate_selector(params['node_selector'])
    if errors(findings):
        raise Refused(findings)
    selected = sorted((node for node in snapshot['nodes'] if node_selected(params['node_selector'], node['metadata'].get('labels') or {})),
                      key=lambda node: node['metadata']['name'])
    selected_names = [node['metadata']['name'] for node in selected]
    for index, entry in enumerate(entries):
        if entry['node'] not in selected_names:
            findings.append(catalogue_finding('node_network_input_invalid', 'nics[%d].node %s is not selected by node_selector %s.'
                                              % (index, entry['node'], params['node_selector']),
                                              objects=[{'kind': 'option', 'name': 'nics[%d].node' % index}],
                                              remedy='list only the egress nodes (egressip_nodes.selector) in render_nics.'))
    entries = sorted((entry for entry in entries if entry['node'] in selected_names), key=lambda entry: entry['node'])
    # the network, parsed once: its refusals stop the render with those of the interface name
    networks, found = networks_from(params['network'], 'network.')
    policies, allocations, found = plan_policies(params, entries, snapshot, networks, found)
    findings += found
    forwarding, interfaces, found = plan_forwarding(params, entries, snapshot, networks)
    findings += found
    rendered = [item['node'] for item in allocations]
    addresses = dict((item['node'], [address for address in (item['address'], item['ipv6_address']) if address]) for item in allocations)
    labelled = rendered if params['node_labels'] or params['machineset_labels'] else []
    machinesets, found = plan_machinesets(params, selected, labelled, snapshot)
    findings += found
    egressips, found = plan_egressips(params, snapshot, addresses, labelled, SecondaryNetwork(networks, params['network']['route_metric']))
    findings += found
    if errors(findings):
        raise Refused(findings)
    guard, found = plan_guard(params)
    findings += found
    if errors(findings):
        raise Refused(findings)
    manifests = egressips + policies + forwarding + plan_labels(params, rendered) + machinesets + guard
    pending = [name for name in selected_names if name not in [entry['node'] for entry in entries]]
    nics = [{'node': item['node'], 'mac': item['mac'], 'interface': interfaces.get(item['node']),
             'address': ', '.join(addresses[item['node']])} for item in allocations]
    context = {'portgroup': params['vsphere'].get('portgroup') or {}, 'datacenter': params['vsphere'].get('datacenter'),
               'cluster': params['vsphere'].get('cluster'), 'macs_source': params['macs_source'], 'nics': nics, 'pending': pending,
               'manifests': [describe(manifest) for manifest in render.merge_manifests(manifests)],
               'ip_forwarding': params['network']['ip_forwarding'], 'machinesets': params['machinesets']}
    files = render.render_files(manifests, render.readme(context))
    warnings = ['node %s matches the node selector but its VM has no NIC on the egress port group yet: nothing is rendered for it; '
                'add the NIC on vCenter, then render again.' % name for name in pending]
    return files, {'nics': nics, 'pending': pending, 'manifests': context['manifests'], 'findings': findings}, warnings


# --- the directory ------------------------------------------------------------------------------------

def read_directory(dest):
    """{name: text} of the regular files directly in dest ({} when it does not exist)."""
    if not os.path.isdir(dest):
        if os.path.exists(dest):
            raise ModuleFailure('dest %s exists and is not a directory. Fix: choose a directory for the rendered manifests.' % dest)
        return {}
    existing = {}
    for name in sorted(os.listdir(dest)):
        path = os.path.join(dest, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, 'rb') as handle:
                existing[name] = to_text(handle.read(), errors='surrogate_or_strict')
    return existing


def write_directory(dest, files, changes):
    """Write each created or updated file atomically (temporary file + rename), delete the stale generated ones."""
    if not os.path.isdir(dest):
        os.makedirs(dest, 0o755)
    for change in changes:
        path = os.path.join(dest, change['name'])
        if change['action'] == 'delete':
            os.remove(path)
        elif change['action'] in ('create', 'update'):
            handle, temporary = tempfile.mkstemp(dir=dest, prefix='.%s.' % change['name'])
            with os.fdopen(handle, 'wb') as stream:
                stream.write(to_bytes(files[change['name']]))
            os.chmod(temporary, 0o644)
            os.rename(temporary, path)


class ActionModule(ActionBase):
    """Render every Kubernetes object of the enable flow into a directory instead of applying it."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, params = self.validate_argument_spec(argument_spec=argument_spec())
        result.update(changed=False, dest=params['dest'], files=[], findings=[])
        if not HAS_K8S_LIBS:
            raise AnsibleActionFail('egressip_render needs the Python library urllib3 on the controller (pip install kubernetes brings it).')
        if not render.HAS_YAML:
            raise AnsibleActionFail('egressip_render needs the Python library PyYAML on the controller.')
        try:
            snapshot = read_cluster(K8sClient.from_params(params), params)
            files, facts, warnings = build(params, snapshot)
            changes, conflicts = render.plan_files(files, read_directory(params['dest']))
        except Refused as refusal:
            result.update(failed=True, msg=refusal.message(WHAT), findings=refusal.findings)
            return result
        except ModuleFailure as failure:
            result.update(failed=True, **failure.to_result())
            return result
        result.update(facts)
        if conflicts:
            result.update(failed=True, msg='%s: dest %s holds %s, not written by render; they are left alone and nothing was written. Fix: '
                                           'render into a directory of its own, or move those files.'
                                           % (WHAT, params['dest'], ', '.join(conflicts)))
            return result
        changing = [change for change in changes if change['action'] != 'none']
        result['files'] = changes
        result['kustomization'] = os.path.join(params['dest'], render.KUSTOMIZATION)
        result['changed'] = bool(changing)
        if warnings:
            result['warnings'] = warnings
        if self._task.diff and changing:
            existing = read_directory(params['dest'])
            result['diff'] = [{'before_header': os.path.join(params['dest'], change['name']),
                               'after_header': os.path.join(params['dest'], change['name']),
                               'before': existing.get(change['name'], ''), 'after': files.get(change['name'], '')}
                              for change in changing]
        if changing and not self._task.check_mode:
            write_directory(params['dest'], files, changing)
        return result
