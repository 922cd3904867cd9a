#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: vsphere_vm_nic
short_description: Give each OpenShift node VM exactly one vmxnet3 NIC on the egress port group
version_added: 0.1.0
description:
  - Ensures that every VM of a batch has exactly one vmxnet3 NIC on the given network (a standard port group
    or a distributed port group), connected now (when the VM is powered on) and connected at power-on.
    Powered-on VMs get the NIC hot-added.
  - VMs are given as Kubernetes nodes (O(node_names) or O(node_selector), each resolved through the node's
    C(spec.providerID), C(vsphere://<BIOS UUID>), never by guessing from names), or as VM names, BIOS UUIDs or moids.
  - The NIC is identified by its backing (the network for a standard port group; C(portgroupKey) and
    C(switchUuid) for a distributed one), never by its label, and MAC addresses compare case-insensitively.
    NICs on other networks are never touched.
  - All VMs are read with one batched PropertyCollector retrieval. Reconfigure tasks are started in parallel,
    at most O(parallel) at a time, and polled together; a run that changes nothing costs the same number of
    vCenter requests for three VMs or five hundred.
  - Refusals (a VM at the 10-NIC limit, a VM with two NICs on the network, a node without providerID or VM,
    a NIC whose node hosts egress IPs) are listed for every offending VM before anything is written.
  - With O(state=absent) the NICs on the network are removed; a VM whose node hosts egress IPs
    (EgressIP C(status.items)) is refused unless O(force=true).
  - 'The collection knows its NIC by MAC: the one its NMState policy (C(egressip-<node>)) matches. With O(node_names) or
    O(node_selector) the module reads those policies (one list of NodeNetworkConfigurationPolicies with the label
    C(egressip.ocp/managed-by: ocp.egressip)) and, when the VM has no NIC on O(network) but has the policy''s NIC on another
    network (the port group was renamed in vCenter, or the variables now name another one), moves that NIC (action
    C(move): its backing is changed, the device and the MAC stay, so the node keeps its address) instead of adding a
    second one. It refuses (C(vsphere_vm_nic_move_refused)) when it cannot tell which NIC is the collection''s: another
    NIC already on O(network), several NICs with the policies'' MACs, or the policy''s NIC being the VM''s only NIC.
    The module reads the policies itself rather than taking the MACs as an option, so a caller cannot pass stale
    ones and every caller (the vsphere_network role, a playbook of its own) gets the same protection; VMs given only
    by name, UUID or moid are not matched to nodes, so no NIC is moved for them.'
  - With O(failure_domains) (nodes in several vSphere clusters), each selected node is mapped to its failure domain
    (its Machine's workspace, else its zone/region labels) and its VM gets the NIC on that domain's port group (the
    domain's O(failure_domains[].portgroup.name), else O(network)), found in that domain's datacenter; every domain is
    planned, and any refusal reported, before anything is written. A node of no domain is refused
    (C(failure_domain_node_unmapped)). VMs must then be given as nodes.
  - Every reconfigure carries the VM's C(changeVersion) as read; vCenter applies it only if nobody changed the VM in
    between, so a concurrent writer that ignores the cluster lock cannot make a VM get two NICs. A VM refused that way
    (C(ConcurrentAccess)) is read and planned again (up to 3 times); so is a VM on which another task was running
    (C(TaskInProgress), vCenter runs one task at a time per VM), after waiting 1, 2 and 4 seconds. Right after its writes the module reads the VMs
    back; a VM with more than one NIC on O(network) (a server that ignores C(changeVersion)) keeps the NIC every run
    keeps (the one a policy names, else the lowest device key) and loses the ones this run added, reported as finding
    C(vsphere_vm_nic_duplicate_removed).
requirements:
  - pyvmomi >= 9.0.0
options:
  datacenter:
    description:
      - Name (or moid) of the datacenter holding the VMs and the network.
    type: str
    required: true
  network:
    description:
      - Name of the port group the NIC connects to.
    type: str
    required: true
    aliases: [portgroup]
  switch:
    description:
      - Name of the distributed switch that holds O(network).
      - Needed only when several networks share the name (for example the same port group name on two distributed switches).
    type: str
  node_names:
    description:
      - Kubernetes node names whose VMs get the NIC, found through each node's C(spec.providerID).
      - Needs the Kubernetes connection (O(kubernetes)).
    type: list
    elements: str
    default: []
  node_selector:
    description:
      - 'The nodes whose VMs get the NIC, by label. Either a selector string (C(node-role.kubernetes.io/worker)),
        a map of labels (C({node-role.kubernetes.io/worker: ""})), or a LabelSelector with C(matchLabels)/C(matchExpressions).'
      - Needs the Kubernetes connection (O(kubernetes)).
    type: raw
  vm_names:
    description:
      - VM names; a name shared by several VMs is refused (give the moid).
    type: list
    elements: str
    default: []
  vm_uuids:
    description:
      - VM BIOS UUIDs (C(config.uuid)); case does not matter.
    type: list
    elements: str
    default: []
  vm_moids:
    description:
      - VM managed object ids (for example C(vm-42)).
    type: list
    elements: str
    default: []
  state:
    description:
      - V(present) ensures one NIC on the network per VM (moving the collection's NIC there when it is on another network);
        V(absent) removes the VMs' NICs on the network.
    type: str
    choices: [present, absent]
    default: present
  force:
    description:
      - With O(state=absent), remove the NIC even when the VM's node hosts egress IPs (they stop working until reassigned).
    type: bool
    default: false
  continue_on_error:
    description:
      - V(false) (default) refuses the whole batch, writing nothing, when any VM or node is refused; a failed
        reconfigure task fails the module after the other VMs are done.
      - V(true) configures the VMs that can be configured and reports the others in RV(vms) (C(failed)) and
        RV(findings) with a warning, without failing the module.
    type: bool
    default: false
  parallel:
    description:
      - How many reconfigure tasks run at the same time.
    type: int
    default: 8
  timeout:
    description:
      - Seconds to wait for the reconfigure tasks of the batch to finish.
    type: int
    default: 600
  network_planned:
    description:
      - In check mode only, V(true) says that an earlier task of the same run would create O(network) (for example
        M(ocp.egressip.vsphere_portgroup) reporting C(action=create)); when it does not exist yet, every VM is planned
        to get a new NIC, with a warning, instead of the run failing. Ignored outside check mode, where a missing
        port group is always an error.
    type: bool
    default: false
extends_documentation_fragment:
  - ocp.egressip.cluster_lock.nested
  - ocp.egressip.egress_cidr
  - ocp.egressip.egressip_network.secondary
  - ocp.egressip.failure_domains
  - ocp.egressip.vsphere_auth
  - ocp.egressip.k8s_auth.nested
  - ocp.egressip.progress.notes
  - ocp.egressip.common
attributes:
  check_mode:
    details: Reads vCenter and the cluster, reports what would change, writes nothing.
  diff_mode:
    support: full
    details: Per VM, the NICs on the network before and after.
notes:
  - A NIC added only in vCenter is lost when Machine API replaces the node; run M(ocp.egressip.machineset_network)
    so the MachineSet template lists the port group, and so Machine API does not report C(invalid network count).
  - 'The returned C(mac) is what the node address step matches the NIC on (NMState C(identifier: mac-address)).'
  - A powered-off VM reports every NIC disconnected; only C(start_connected) is ensured for it.
seealso:
  - module: ocp.egressip.vsphere_portgroup
  - module: ocp.egressip.machineset_network
'''

EXAMPLES = r'''
- name: One NIC on the egress port group for every worker node VM
  ocp.egressip.vsphere_vm_nic:
    datacenter: DC1
    network: ocp-egress-120
    node_selector:
      node-role.kubernetes.io/worker: ""
  register: egress_nics

- name: Show the MAC of each node's new NIC
  ansible.builtin.debug:
    msg: "{{ egress_nics.vms | items2dict(key_name='node', value_name='mac') }}"

- name: Two VMs by name, on a distributed port group, ten tasks at a time
  ocp.egressip.vsphere_vm_nic:
    datacenter: DC1
    network: ocp-egress-120
    switch: DSwitch1
    vm_names: [ocp1-worker-0, ocp1-worker-1]
    parallel: 10

- name: Remove the NIC from a node that no longer carries egress traffic
  ocp.egressip.vsphere_vm_nic:
    datacenter: DC1
    network: ocp-egress-120
    node_names: [ocp1-worker-2]
    state: absent
'''

RETURN = r'''
changed:
  description: Whether any VM was (or, in check mode, would be) reconfigured.
  returned: always
  type: bool
vms:
  description: One entry per VM of the batch, in the order asked for.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: VM name.
      type: str
      sample: ocp1-worker-0
    uuid:
      description: VM BIOS UUID (lower case).
      type: str
      sample: 4230a1b2-0c3d-4e5f-8a9b-0123456789ab
    moid:
      description: VM managed object id.
      type: str
      sample: vm-42
    node:
      description: The Kubernetes node the VM backs, when known (always with O(node_names)/O(node_selector)).
      type: str
      sample: ocp1-worker-0
    domain:
      description: With O(failure_domains), the failure domain of the VM's node (whose port group the NIC is on).
      type: str
      sample: us-east-1a
    action:
      description: C(add), C(move) (the collection's NIC moved from another network), C(connect), C(remove), C(none), or C(refused).
      type: str
      sample: add
    previous_network:
      description: With C(action=move), the network the NIC was on (M(ocp.egressip.machineset_network) renames that device).
      type: str
      returned: when the NIC was moved
      sample: ocp-egress-old
    changed:
      description: Whether this VM was (or would be) reconfigured.
      type: bool
    mac:
      description: MAC address (lower case) of the VM's NIC on the network; null when removed, refused, or not yet known in check mode.
      type: str
      sample: 00:50:56:aa:bb:cc
    device_key:
      description: vCenter device key of that NIC (do not rely on labels such as C(Network adapter 2)).
      type: int
      sample: 4001
    instance_uuid:
      description: VM instance UUID (lower case); Machine API names a Machine's VM by it (the Machine's UID).
      type: str
      sample: 5030a1b2-0c3d-4e5f-8a9b-0123456789ab
    nic_count:
      description:
        - Number of NICs the VM has on every network after this run (in check mode, as it is now).
        - M(ocp.egressip.machineset_network) compares it with the Machine's device count when given these entries as
          its O(ocp.egressip.machineset_network#module:vms) option.
      type: int
      sample: 2
    failed:
      description: Present and true when the VM was refused or its reconfigure task failed.
      type: bool
    error:
      description: Why the VM failed, with the vCenter fault for a failed task.
      type: str
domains:
  description: With O(failure_domains), per failure domain its C(name), C(datacenter), C(network) (as RV(network)) and C(nodes).
  returned: with failure_domains
  type: list
  elements: dict
network:
  description: The network the NICs are on (with O(failure_domains), the first domain's; each RV(vms) entry names its C(domain)).
  returned: always
  type: dict
  sample: {name: ocp-egress-120, type: distributed, moid: dvportgroup-41, portgroup_key: dvportgroup-41, switch: DSwitch1}
findings:
  description: Refusals and failures as findings (C(id), C(severity), C(message), C(remedy), C(docs), C(objects)).
  returned: always
  type: list
  elements: dict
diff:
  description:
    - Per VM name, the NICs on the network before and after (C(key), C(mac), C(adapter), C(connected), C(start_connected)).
    - A moved NIC also shows its C(network) on both sides.
  returned: when diff mode is on
  type: dict
'''

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import egress_networks
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import argument_spec as network_argument_spec, exclusive_with
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import k8s_nested_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.plan.node_network import policy_allocation
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import VCENTER_WRITER, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as plan
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere_network_io as io
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vm_nic_writes as writes
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import failure_domains_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import failure_domains as domains_io

WHAT = 'vsphere_vm_nic'
MAX_PARALLEL = 64


def argument_spec():
    spec = dict(
        datacenter=dict(type='str', required=True),
        network=dict(type='str', required=True, aliases=['portgroup']),
        switch=dict(type='str'),
        node_names=dict(type='list', elements='str', default=[]),
        node_selector=dict(type='raw'),
        vm_names=dict(type='list', elements='str', default=[]),
        vm_uuids=dict(type='list', elements='str', default=[]),
        vm_moids=dict(type='list', elements='str', default=[]),
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        force=dict(type='bool', default=False),
        secondary_network=network_argument_spec(),
        cidr=dict(type='str'),
        ipv6_cidr=dict(type='str'),
        continue_on_error=dict(type='bool', default=False),
        parallel=dict(type='int', default=8),
        timeout=dict(type='int', default=600),
        network_planned=dict(type='bool', default=False),
        failure_domains=failure_domains_argument_spec(),
    )
    spec.update(k8s_nested_argument_spec())
    return spec


def validate(params, networks_problems=()):
    """Messages naming field, value and fix for input the argument spec cannot check."""
    problems = []
    if not any(params[key] for key in ('node_names', 'node_selector', 'vm_names', 'vm_uuids', 'vm_moids')):
        problems.append('no VM given: set node_names, node_selector, vm_names, vm_uuids or vm_moids.')
    if not 1 <= params['parallel'] <= MAX_PARALLEL:
        problems.append('parallel=%s is out of range: use 1 to %d.' % (params['parallel'], MAX_PARALLEL))
    if params['timeout'] < 1:
        problems.append('timeout=%s must be at least 1 second.' % params['timeout'])
    problems += list(networks_problems)
    if params['failure_domains'] and (params['vm_names'] or params['vm_uuids'] or params['vm_moids']):
        problems.append('vm_names, vm_uuids and vm_moids cannot be combined with failure_domains: a VM is put in its failure '
                        'domain through its node; give node_names or node_selector.')
    if params['failure_domains'] and not (params['node_names'] or params['node_selector']):
        problems.append('failure_domains needs the nodes (node_names or node_selector) to map each VM to its domain.')
    selector = params['node_selector']
    if selector is not None and not isinstance(selector, (dict, str)):
        problems.append('node_selector=%r is neither a selector string nor a map of labels: use for example '
                        '{"node-role.kubernetes.io/worker": ""}.' % (selector,))
    return problems


def read_nodes(module):
    """The selected Nodes as {'name', 'provider_id', 'labels'} (one list), and all Nodes for naming VMs' nodes."""
    params = module.params
    wanted = params['node_names'] or params['node_selector'] or params['state'] == 'absent'
    if not wanted:
        return None, []
    k8s = module.k8s
    everything = [{'name': node['metadata']['name'], 'provider_id': (node.get('spec') or {}).get('providerID'),
                   'labels': node['metadata'].get('labels') or {}, 'object': node} for node in kube.list_objects(k8s, kube.NODES)]
    selector = params['node_selector']
    selected = []
    if params['node_names']:
        known = dict((node['name'], node) for node in everything)
        unknown = [name for name in params['node_names'] if name not in known]
        if unknown:
            raise ModuleFailure('node_names=%s: no such node on %s. Fix: use the names `oc get nodes` shows.'
                                % (', '.join(unknown), k8s.host))
        selected += [known[name] for name in params['node_names']]
    if selector:
        matching = [node for node in everything if plan.node_selected(selector, node['labels'])]
        if not matching:
            raise ModuleFailure('node_selector=%s matches no node on %s. Fix: compare with `oc get nodes --show-labels`.'
                                % (selector, k8s.host))
        selected += [node for node in matching if node not in selected]
    return (selected if (params['node_names'] or selector) else []), everything


def own_macs(module):
    """{node: [MACs]} of the collection's NICs: the MAC each of its NMState policies matches (one list, by the managed-by label).

    None of them when the nodes are not read (VMs given by name, UUID or moid only) or NMState is not installed.
    """
    params = module.params
    if not (params['node_names'] or params['node_selector']):
        return {}
    k8s = module.k8s
    try:
        found = k8s.request('list', kube.resource(kube.NNCPS), kube.path(kube.NNCPS),
                            query={'labelSelector': '%s=%s' % (MANAGED_BY_LABEL, MANAGED_BY_VALUE)})
    except ModuleFailure as failure:
        if failure.details.get('status') == 404:
            return {}
        raise
    return plan.own_macs_by_node(policy_allocation(policy) for policy in found.get('items') or [])


def egress_ips(module, networks):
    """{node: [egress IPs]} from EgressIP status (one list); none when the EgressIP API is not served."""
    items = kube.list_objects(module.k8s, kube.EGRESSIPS, absent=None)
    return plan.egress_ips_by_node(items, networks)


def vm_refs(params):
    return ([{'by': 'name', 'value': value} for value in params['vm_names']]
            + [{'by': 'uuid', 'value': value} for value in params['vm_uuids']]
            + [{'by': 'moid', 'value': value} for value in params['vm_moids']])


def network_result(network):
    result = {'name': network['name'], 'type': network['type'], 'moid': network['moid']}
    if network['type'] == plan.DISTRIBUTED:
        result.update(portgroup_key=network['portgroup_key'], switch=network['switch'])
    return result


def diff_of(entries):
    """before/after per VM, built by one function for both sides."""
    def side(key):
        return dict((entry['vm'], entry[key]) for entry in entries)
    return {'before': side('before'), 'after': side('after')}


def groups_of(module, nodes):
    """[(domain name or None, datacenter, network name, switch, nodes)]: one group without failure_domains, else one per
    domain with its selected nodes; and the findings of nodes mapped to no domain."""
    params = module.params
    if not params['failure_domains']:
        return [(None, params['datacenter'], params['network'], params['switch'], nodes)], []
    switch_type = plan.DISTRIBUTED if params['switch'] else plan.STANDARD
    domains = domains_io.read_domains(module.k8s, params['failure_domains'], {
        'datacenter': params['datacenter'], 'cluster': None,
        'portgroup': {'name': params['network'], 'switch': params['switch'], 'switch_type': switch_type}})
    mapping, findings = domains_io.node_domains(module.k8s, [node['object'] for node in nodes], domains)
    groups = []
    for domain in domains:
        portgroup = domain['portgroup']
        switch = portgroup.get('switch') if portgroup.get('switch_type') == plan.DISTRIBUTED else None
        members = [node for node in nodes if mapping.get(node['name']) == domain['name']]
        groups.append((domain['name'], domain['datacenter'], portgroup.get('name') or params['network'], switch, members))
    return [group for group in groups if group[4]], findings


def prepare(module, client, group, all_nodes, hosted, owned):
    """Read and plan one group (datacenter, network, its nodes' VMs): a dict the writes and the report take."""
    params = module.params
    domain, datacenter_name, network_name, switch, nodes = group
    option = 'datacenter' if domain is None else 'failure_domains[%s].datacenter' % domain
    datacenter = vcenter.find_datacenter(client, datacenter_name, option)
    networks = vcenter.read_networks(client, datacenter)
    network, findings = io.find_network(networks, network_name, switch)
    if findings and module.check_mode and params['network_planned'] and findings[0]['id'] == 'portgroup_missing':
        module.warn('port group %s does not exist yet (an earlier task of this check run would create it): '
                    'every VM is planned to get a new NIC on it.' % network_name)
        network, findings = plan.planned_network(network_name, switch), []
    if findings:
        raise Refused(findings)
    index = vcenter.index_vms(client, datacenter)
    targets, findings = plan.resolve_targets(index, nodes=nodes, vm_refs=vm_refs(params) if domain is None else [])
    node_of = plan.nodes_of_vms(all_nodes)
    snapshots = dict((vm['moid'], vm) for vm in vcenter.read_vm_devices(client, [target['vm'] for target in targets], networks))
    targets = [dict(target, vm=snapshots[target['vm']['moid']], node=target['node'] or node_of.get(target['vm']['uuid']))
               for target in targets if target['vm']['moid'] in snapshots]
    entries = plan.plan_vm_nics(targets, network, params['state'], params['force'], hosted, owned)
    for entry in entries:
        findings.extend(entry['findings'])
    return {'domain': domain, 'datacenter': datacenter_name, 'network': network, 'networks': networks, 'targets': targets,
            'snapshots': snapshots, 'entries': entries, 'findings': findings, 'nodes': [node['name'] for node in nodes or []]}


def run(module, _result=None):
    params = module.params
    secondary, networks_problems = egress_networks(params, module.deprecate, 'secondary_network')  # parsed once per run
    problems = validate(params, networks_problems)
    if problems:
        raise ModuleFailure(' '.join(problems) + ' Nothing was written.')
    nodes, all_nodes = read_nodes(module)
    client = module.vsphere
    groups, findings = groups_of(module, nodes)
    hosted = egress_ips(module, secondary) if params['state'] == 'absent' else {}
    owned = own_macs(module) if params['state'] == 'present' else {}
    prepared = [prepare(module, client, group, all_nodes, hosted, owned) for group in groups]
    for item in prepared:
        findings.extend(item['findings'])
    entries = [entry for item in prepared for entry in item['entries']]
    if errors(findings) and not params['continue_on_error']:
        raise Refused(findings, vms=[plan.vm_result(entry, _current_nic(entry), False, _refusal(entry)) for entry in entries])
    results = {}
    if not module.check_mode:
        for item in prepared:
            replan = writes.replanner(client, item['targets'], item['networks'], item['network'], params, hosted, owned)
            results.update(writes.apply(client, item['entries'], item['snapshots'], item['network'], replan, owned, params))
            findings.extend(results.pop('findings'))
    return report(module, prepared, results, findings)


def _current_nic(entry):
    return entry['nics'][0] if len(entry['nics']) == 1 and entry['action'] != 'remove' else None


def _refusal(entry):
    return ' '.join(item['message'] for item in entry['findings']) or None


def report(module, prepared, results, findings):
    params = module.params
    vms, failed, entries = [], [], []
    for item in prepared:
        for entry in item['entries']:
            entries.append(entry)
            if entry['action'] == 'refused':
                vms.append(_in_domain(plan.vm_result(entry, _current_nic(entry), False, _refusal(entry)), item))
                continue
            nic, error, count = results.get(entry['moid'], (_current_nic(entry), None, None))
            if error:
                failed.append(entry)
                findings.append(catalogue_finding('vsphere_vm_reconfigure_failed', 'VM %s: %s' % (entry['vm'], error),
                                                  objects=[{'kind': 'VirtualMachine', 'name': entry['vm'], 'moid': entry['moid']}]))
            vms.append(_in_domain(plan.vm_result(entry, nic, entry['action'] in writes.CHANGING and not error, error, count), item))
    changed = any(entry['action'] in writes.CHANGING for entry in entries if entry not in failed)
    first = prepared[0]['network'] if prepared else plan.planned_network(params['network'], params['switch'])
    result = {'changed': changed, 'vms': vms, 'network': network_result(first), 'findings': findings}
    if params['failure_domains']:
        result['domains'] = [{'name': item['domain'], 'datacenter': item['datacenter'], 'network': network_result(item['network']),
                              'nodes': item['nodes']} for item in prepared]
    if module._diff:  # pylint: disable=protected-access
        result['diff'] = diff_of(_with_results(entries, vms))
    if failed and not params['continue_on_error']:
        names = ', '.join('%s (%s)' % (entry['vm'], results[entry['moid']][1]) for entry in failed)
        raise ModuleFailure('Reconfiguring the NICs failed for %d of %d VM(s): %s. The other VMs were configured; '
                            'fix the cause and rerun (done VMs are left as they are).' % (len(failed), len(entries), names),
                            **result)
    for item in errors(findings):
        module.warn('[%s] %s' % (item['id'], item['message']))
    return result


def _in_domain(vm, item):
    if item['domain'] is not None:
        vm['domain'] = item['domain']
    return vm


def _with_results(entries, vms):
    """Entries whose after-side NIC carries the key and MAC vCenter gave it."""
    merged = []
    for entry, vm in zip(entries, vms):
        entry = copy.deepcopy(dict((key, value) for key, value in entry.items() if key != 'nics'))
        if entry['action'] == 'add' and vm.get('mac'):
            entry['after'] = [dict(entry['after'][0], key=vm['device_key'], mac=vm['mac'])]
        merged.append(entry)
    return merged


def main():
    EgressModule(WHAT, argument_spec=argument_spec(), mutually_exclusive=exclusive_with(('cidr', 'ipv6_cidr'), 'secondary_network'),
                 **VCENTER_WRITER).run(run)


if __name__ == '__main__':
    main()
