#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: machineset_network
short_description: Keep Machine API consistent with the egress NICs (MachineSet devices, Machine NIC counts)
version_added: 0.1.0
description:
  - With O(state=present), ensures that the selected MachineSets list the egress port group in
    C(spec.template.spec.providerSpec.value.network.devices), B(after) the existing devices, which are never
    reordered or dropped. Machine API builds a replacement Machine from this template with exactly the listed
    NICs, so without it a replaced node loses the egress NIC added in vCenter.
  - 'With O(state=absent), takes the device(s) naming the port group (C(networkName), matched as O(state=present)
    recognises it: the name or an inventory path ending in it) out of the selected MachineSets'' templates, leaving every
    other device where it is; and out of the C(providerSpec) of the selected nodes'' Machines B(once their VM no longer
    has the NIC): a Machine is changed only when its VM has no NIC on the port group and exactly as many NICs as the
    Machine lists without it, so the change ends an C(invalid network count) instead of starting one. A Machine whose
    VM still has the NIC is returned with action C(pending): remove the NIC (M(ocp.egressip.vsphere_vm_nic)
    O(ocp.egressip.vsphere_vm_nic#module:state=absent)), then run this module again. See the notes for why this order.'
  - With O(state=absent), a MachineSet whose Machines' nodes, or a Machine whose node, still host egress IPs (read once
    from the EgressIP objects' C(status.items)) is refused, naming the Machine, the node and the EgressIP, unless
    O(force=true). Nothing is written when anything is refused.
  - Template changes reach B(new Machines only); existing Machines keep their own C(providerSpec).
  - 'Reports Machines whose C(providerSpec) lists a different number of network devices than their VM has NICs;
    the vSphere machine controller then fails every reconcile with C(invalid network count: expected=N current=M).'
  - With O(state=present) and O(align_machines=true), a Machine whose only difference is the egress NIC gets the port
    group appended to its own C(providerSpec) devices; other differences are reported, never guessed at.
  - Detects clusters whose nodes are not managed by Machine API (UPI, platform none) and reports that only the
    vCenter path applies (finding C(machine_api_absent)); nothing is written then.
  - With O(failure_domains), each MachineSet (and Machine) gets its own failure domain's port group, the domain its
    C(providerSpec.value.workspace) names (server, datacenter, resource pool under the domain's C(computeCluster)); one
    whose workspace matches no domain is refused (C(failure_domain_node_unmapped)) before anything is written.
  - MachineSets are selected by name (O(machinesets)) or through the nodes they back (O(node_names), O(node_selector)).
    Control-plane Machines (ControlPlaneMachineSet) belong to no MachineSet and are reported, not changed.
  - One list per Kubernetes kind, one batched vCenter read for the Machines' VMs (none with O(vms)); MachineSets and Machines are changed
    with JSON patches whose C(test) operation makes a concurrent edit fail instead of being overwritten, sent in
    parallel (at most 8 at once); a patch that fails does not stop the others, and the module then fails naming each
    object whose patch failed, so a rerun has only those left.
requirements:
  - pyvmomi >= 9.0.0
options:
  network:
    description:
      - Name of the egress port group, as C(networkName) of the device appended (or taken out with O(state=absent)).
    type: str
    required: true
    aliases: [portgroup]
  state:
    description:
      - C(present) appends the device to the MachineSet templates (and, with O(align_machines), to Machines whose VM has
        the extra NIC). C(absent) takes it out of the templates, and out of the Machines whose VM has lost the NIC.
    type: str
    choices: [present, absent]
    default: present
  force:
    description:
      - With O(state=absent), take the port group out even where a node of the MachineSet's Machines, or of the
        Machine, still hosts egress IPs. Ignored with O(state=present).
    type: bool
    default: false
  switch:
    description:
      - Distributed switch of O(network), when several networks share its name (used to find the VMs' NICs on it).
    type: str
  datacenter:
    description:
      - Datacenter of the Machines' VMs, read to compare each Machine's device count with its VM's NIC count.
    type: str
    required: true
  machinesets:
    description:
      - Names of MachineSets (in O(namespace)) to give the device, in addition to those backing the selected nodes.
    type: list
    elements: str
    default: []
  node_names:
    description:
      - Nodes whose MachineSets get the device and whose Machines are checked.
    type: list
    elements: str
    default: []
  node_selector:
    description:
      - 'The nodes whose MachineSets get the device and whose Machines are checked, by label: a map of labels
        (C({node-role.kubernetes.io/worker: ""})), a LabelSelector, or a selector string.'
    type: raw
  namespace:
    description:
      - Namespace of the MachineSets and Machines.
    type: str
    default: openshift-machine-api
  device:
    description:
      - Extra fields of the device appended to a MachineSet, as Machine API names them. Unset fields are left out.
      - Leave them unset when the node address comes from NMState (the collection's node address step).
      - Ignored with O(state=absent) (every device naming the port group is taken out, whatever its fields).
    type: dict
    suboptions:
      gateway:
        description: Gateway of the device (static IP configuration through Machine API).
        type: str
      ipAddrs:
        description: Static addresses with prefix, for example C(10.20.0.11/24).
        type: list
        elements: str
      nameservers:
        description: DNS servers for the device.
        type: list
        elements: str
  align_machines:
    description:
      - Append the port group to the C(providerSpec) devices of each existing Machine whose VM has exactly one NIC more
        than its C(providerSpec) lists, that NIC being on O(network). This ends Machine API's C(invalid network count) for them.
      - O(state=absent) always aligns the Machines it can (see the description); this option only applies to O(state=present).
    type: bool
    default: false
  vms:
    description:
      - The VMs of the selected nodes as M(ocp.egressip.vsphere_vm_nic) returned them (its RV(ocp.egressip.vsphere_vm_nic#module:vms))
        in an earlier task of the same play. Each Machine's VM is then looked up there (instance UUID = Machine UID, else
        the name) and its NIC count (C(nic_count)) and NIC on O(network) (C(mac)) taken from it, so the module does not
        log in to vCenter; a Machine whose VM is not in the list is read from vCenter as without this option.
      - The ocp.egressip.vsphere_network role passes them. Pass only entries of the same run, after the NICs changed;
        older counts would make the Machine comparison wrong.
      - An entry's C(previous_network) (the network vsphere_vm_nic moved the VM's NIC from) counts as in O(previous_networks).
    type: list
    elements: dict
  previous_networks:
    description:
      - Names the egress port group had before (renamed in vCenter, or O(network) now names another port group). With
        O(state=present), a template (and, with O(align_machines), a consistent Machine) that lists one of them and not
        O(network) has that device renamed in place (action C(replace)); same position, same fields, so Machine API builds
        a replacement with one egress NIC, not two. More than one such device is refused (C(machine_api_device_rename_ambiguous)).
      - Found without this option too, from O(vms) (C(previous_network)), and for a port group renamed in vCenter (a
        distributed port group keeps its key, so no NIC moves) from a device that names no network of O(datacenter) and
        that the selected nodes' Machines list for their egress NIC (their VM has the NIC and one NIC per device).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ocp.egressip.cluster_lock
  - ocp.egressip.egress_cidr
  - ocp.egressip.egressip_network.secondary
  - ocp.egressip.failure_domains
  - ocp.egressip.k8s_auth
  - ocp.egressip.vsphere_auth.nested
  - ocp.egressip.common
attributes:
  check_mode:
    details: Reads, then sends the patches as server-side dry runs (validated by the API server, stored nowhere).
  diff_mode:
    support: full
    details: The devices lists of each MachineSet and Machine before and after.
notes:
  - Machine API counts every virtual NIC of the VM, connected or not (openshift/machine-api-operator
    C(pkg/controller/vsphere/reconciler.go) C(reconcileNetwork)) and finds a Machine's VM by instance UUID
    (the Machine's UID) or else by the Machine's name; this module does the same.
  - Never reorders devices or touches a device that does not name the port group. O(state=present) never removes one.
  - 'Order with O(state=absent): MachineSet templates first (a replacement Machine must not get a NIC on a port group that
    is about to go), then the VM NICs, then the Machines. A Machine can only agree with its VM before the NIC goes (it
    lists the device) or after (it does not), so one of the two changes starts an C(invalid network count) and the
    other ends it. The module only ever makes the change that ends it: when the NIC removal is refused or fails, the
    Machines of those VMs stay consistent, and the mismatch lasts only from the NIC removal to the next run of this
    module (the disable role runs it right after the NIC step, also when that step fails part way).'
  - Check mode with O(state=absent) plans on the VMs as they are, so a Machine whose VM a later step would take the
    NIC from is shown C(pending), not C(remove).
seealso:
  - module: ocp.egressip.vsphere_vm_nic
  - module: ocp.egressip.vsphere_portgroup
'''

EXAMPLES = r'''
- name: Worker MachineSets keep the egress NIC on replacement; report Machine/VM NIC count mismatches
  ocp.egressip.machineset_network:
    network: ocp-egress-120
    datacenter: DC1
    node_selector:
      node-role.kubernetes.io/worker: ""
  register: machine_api

- name: Same, and align the existing Machines whose VMs got the NIC
  ocp.egressip.machineset_network:
    network: ocp-egress-120
    datacenter: DC1
    machinesets: [ocp1-abcde-worker-0]
    align_machines: true

# Taking the egress network out again: templates, then the VM NICs, then the Machines (see notes)
- name: Take the port group out of the worker MachineSet templates (Machines whose VM has the NIC are pending)
  ocp.egressip.machineset_network:
    network: ocp-egress-120
    datacenter: DC1
    node_selector:
      node-role.kubernetes.io/worker: ""
    state: absent

- name: Remove the NICs from the VMs
  ocp.egressip.vsphere_vm_nic:
    network: ocp-egress-120
    datacenter: DC1
    node_selector:
      node-role.kubernetes.io/worker: ""
    state: absent

- name: Take the port group out of the Machines whose VM lost the NIC (ends their invalid network count)
  ocp.egressip.machineset_network:
    network: ocp-egress-120
    datacenter: DC1
    node_selector:
      node-role.kubernetes.io/worker: ""
    state: absent
'''

RETURN = r'''
changed:
  description: Whether a MachineSet or Machine was (or, in check mode, would be) patched.
  returned: always
  type: bool
machine_api:
  description: Whether Machine API manages the selected nodes (false on UPI / platform none clusters).
  returned: always
  type: bool
machinesets:
  description: >-
    Per MachineSet handled, C(name), C(namespace), C(action) (C(append), C(replace), C(remove), C(none), C(refused)), the resulting
    C(devices) and C(nodes) (the nodes of its Machines); with O(failure_domains) its C(domain) (from its template's
    workspace), whose port group its devices list.
  returned: always
  type: list
  elements: dict
machines:
  description: >-
    Per Machine of the selected nodes, C(name), C(node), C(machineset), C(vm), C(expected) (providerSpec devices),
    C(current) (VM NICs), C(mismatch), C(action) (C(append), C(replace), C(none), C(report); with O(state=absent) C(remove),
    C(pending) (the VM still has the NIC), C(refused)).
  returned: always
  type: list
  elements: dict
findings:
  description: >-
    C(machine_api_absent) (UPI), C(machine_api_node_without_machineset), C(machine_nic_count_mismatch),
    C(vsphere_node_vm_not_found) (warning, O(state=absent): a Machine listing the port group whose VM was not found),
    refusals (C(machine_api_device_hosts_egress_ips), ...); each with C(id), C(severity), C(message), C(remedy), C(docs),
    C(objects).
  returned: always
  type: list
  elements: dict
diff:
  description: C(before) and C(after) devices lists per C(MachineSet/<name>) and C(Machine/<name>).
  returned: when diff mode is on
  type: dict
'''

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import egress_networks, hosted_egress_ips
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import argument_spec as network_argument_spec, exclusive_with
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_BEFORE, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_nested_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as mapi
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as plan
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import failure_domains_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.model import failure_domains as fd
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.failure_domains import read_domains

WHAT = 'machineset_network'
KINDS = {'machinesets': kube.MACHINESETS, 'machines': kube.MACHINES}
JSON_PATCH = 'application/json-patch+json'
WRITES = ('append', 'replace', 'remove')


def argument_spec():
    spec = dict(
        network=dict(type='str', required=True, aliases=['portgroup']),
        switch=dict(type='str'),
        datacenter=dict(type='str', required=True),
        machinesets=dict(type='list', elements='str', default=[]),
        node_names=dict(type='list', elements='str', default=[]),
        node_selector=dict(type='raw'),
        namespace=dict(type='str', default='openshift-machine-api'),
        device=dict(type='dict', options=dict(gateway=dict(type='str'), ipAddrs=dict(type='list', elements='str'),
                                              nameservers=dict(type='list', elements='str'))),
        align_machines=dict(type='bool', default=False),
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        force=dict(type='bool', default=False),
        secondary_network=network_argument_spec(),
        cidr=dict(type='str'),
        ipv6_cidr=dict(type='str'),
        vms=dict(type='list', elements='dict'),
        previous_networks=dict(type='list', elements='str', default=[]),
        failure_domains=failure_domains_argument_spec(),
    )
    spec.update(vsphere_nested_argument_spec())
    return spec


def _patch(module, plural, obj, patch):
    k8s = module.k8s
    meta = obj['metadata']
    kind = KINDS[plural]
    return k8s.request('patch', kube.resource(kind, meta['name']), kube.path(kind, meta['name'], meta['namespace']),
                       query={'dryRun': 'All' if module.check_mode else None}, body=patch, content_type=JSON_PATCH)


def select_nodes(module, nodes):
    params = module.params
    selected = []
    if params['node_names']:
        known = dict((node['metadata']['name'], node) for node in nodes)
        unknown = [name for name in params['node_names'] if name not in known]
        if unknown:
            raise ModuleFailure('node_names=%s: no such node on %s. Fix: use the names `oc get nodes` shows. Nothing was written.'
                                % (', '.join(unknown), module.k8s.host))
        selected = [known[name] for name in params['node_names']]
    selector = params['node_selector']
    if selector:
        if not isinstance(selector, (dict, str)):
            raise ModuleFailure('node_selector=%r is neither a selector string nor a map of labels: use for example '
                                '{"node-role.kubernetes.io/worker": ""}. Nothing was written.' % (selector,))
        matching = [node for node in nodes if plan.node_selected(selector, node['metadata'].get('labels') or {})]
        if not matching:
            raise ModuleFailure('node_selector=%s matches no node on %s. Fix: compare with `oc get nodes --show-labels`. '
                                'Nothing was written.' % (selector, module.k8s.host))
        selected += [node for node in matching if node not in selected]
    return selected


def given_vms(entries):
    """The VMs of the ``vms`` option (vsphere_vm_nic's RV(vms)) as {'name', 'nic_count', 'on_network'}, by instance UUID and by name."""
    by_uuid, by_name = {}, {}
    for item in entries or []:
        if not isinstance(item, dict) or not item.get('name') or not isinstance(item.get('nic_count'), int):
            continue  # not an entry of vsphere_vm_nic's vms: that VM is read from vCenter instead
        vm = {'moid': item.get('moid'), 'name': item['name'], 'nic_count': item['nic_count'], 'on_network': bool(item.get('mac'))}
        by_name[item['name']] = vm
        if item.get('instance_uuid'):
            by_uuid[str(item['instance_uuid']).lower()] = vm
    return by_uuid, by_name


def vm_counts(module, machines):
    """The VMs of the Machines (instance UUID = Machine UID, else the Machine's name) and the egress network.

    With the ``vms`` option the Machines' VMs are taken from it; vCenter is read only for the Machines whose VM it
    does not list (none when it comes from vsphere_vm_nic over the same nodes).
    """
    params = module.params
    given = [None] * len(machines)
    if params['vms']:
        by_uuid, by_name = given_vms(params['vms'])
        given = [mapi.machine_vm(machine, by_uuid, by_name) for machine in machines]
        if all(given):
            return given, None
    read, network = _read_vm_counts(module, [machine for machine, vm in zip(machines, given) if vm is None])
    read = iter(read)
    return [vm if vm is not None else next(read) for vm in given], network


def _vcenter(module):
    """The vCenter session, datacenter and its networks, read once per run (and only when needed)."""
    # vCenter code (pyVmomi) is loaded only when vCenter is read: 0.1 s of every run otherwise.
    # pylint: disable=import-outside-toplevel
    from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter
    from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere_network_io as io
    read = module.__dict__.setdefault('_egress_vcenter', {})  # per datacenter (several with failure domains)
    name = module.params['datacenter']
    if name not in read:
        client = module.vcenter(reason='to read the port groups and the VMs of the Machines')
        datacenter = vcenter.find_datacenter(client, name, 'datacenter')
        read[name] = (vcenter, client, datacenter, vcenter.read_networks(client, datacenter), io)
    return read[name]


def _network_names(module):
    return [network['name'] for network in _vcenter(module)[3]]


def _read_vm_counts(module, machines):
    params = module.params
    vcenter, client, datacenter, networks, io = _vcenter(module)
    network, _findings = io.find_network(networks, params['network'], params['switch'])
    index = vcenter.index_vms(client, datacenter)
    by_uuid = dict((vm['instance_uuid'], vm) for vm in index if vm['instance_uuid'])
    by_name = dict((vm['name'], vm) for vm in index)
    wanted = [mapi.machine_vm(machine, by_uuid, by_name) for machine in machines]
    vms = vcenter.read_vm_devices(client, dict((vm['moid'], vm) for vm in wanted if vm).values(), networks)
    by_moid = dict((vm['moid'], vm) for vm in vms)
    return [by_moid.get(vm['moid']) if vm else None for vm in wanted], network


def run(module, _result=None):
    params = module.params
    if not (params['machinesets'] or params['node_names'] or params['node_selector']):
        raise ModuleFailure('nothing selected: set machinesets, node_names or node_selector. Nothing was written.')
    secondary, problems = egress_networks(params, module.deprecate, 'secondary_network')  # parsed once per run
    if problems:
        raise ModuleFailure(' '.join(problems) + ' Nothing was written.')
    nodes = kube.list_objects(module.k8s, kube.NODES)
    # None when the Machine API is not served (UPI)
    machinesets = kube.list_objects(module.k8s, kube.MACHINESETS, namespace=params['namespace'], absent=None)
    machines = kube.list_objects(module.k8s, kube.MACHINES, namespace=params['namespace'], absent=None) if machinesets is not None else None
    selected = select_nodes(module, nodes)
    result = {'changed': False, 'machine_api': True, 'machinesets': [], 'machines': [], 'findings': []}
    if machinesets is None or machines is None:
        result['machine_api'] = False
        result['findings'] = mapi.coverage_findings(mapi.node_machines(selected or nodes, [], []))
        return result
    rows = mapi.node_machines(selected, machines, machinesets)
    coverage = mapi.coverage_findings(rows)
    if any(item['id'] == 'machine_api_absent' for item in coverage) and not params['machinesets']:
        result.update(machine_api=False, findings=coverage)
        return result
    chosen = select_machinesets(module, machinesets, rows)
    row_machines = [row for row in rows if row['machine']]
    if params['failure_domains']:
        set_plans, machine_plans, findings = plan_domains(module, chosen, machines, row_machines, secondary)
    elif params['state'] == 'absent':
        set_plans, machine_plans, findings = plan_removal(module, chosen, machines, row_machines, secondary)
    else:
        set_plans, machine_plans, findings = plan_append(module, chosen, machines, row_machines, secondary)
    findings = coverage + findings
    apply(module, set_plans, machine_plans)
    result.update(changed=any(entry['action'] in WRITES for entry in set_plans + machine_plans), findings=findings,
                  machinesets=[dict({'name': e['object']['name'], 'namespace': e['object']['namespace'], 'action': e['action'],
                                     'devices': e['after'], 'nodes': e['nodes']}, **({'domain': e['domain']} if 'domain' in e else {}))
                               for e in set_plans],
                  machines=[{'name': e['object']['name'], 'node': e['node'], 'machineset': e['machineset'], 'vm': e['vm'],
                             'expected': e['expected'], 'current': e['current'], 'mismatch': e['mismatch'], 'action': e['action']}
                            for e in machine_plans])
    if module._diff:  # pylint: disable=protected-access
        result['diff'] = diff_of(set_plans + machine_plans)
    for item in findings:
        if item['id'] in ('machine_nic_count_mismatch', 'vsphere_node_vm_not_found'):
            module.warn('[%s] %s' % (item['id'], item['message']))
    return result


def previous_names(module, chosen, row_machines, vms, network):
    """Earlier names of the egress port group: the option, the networks vsphere_vm_nic moved NICs from, and a name renamed
    in vCenter (a distributed port group keeps its key, so no NIC moves): a template device naming no network of the
    datacenter that a selected node's Machine also lists while its VM has the egress NIC and one NIC per device.
    vCenter is read for that only when such a Machine exists."""
    params = module.params
    names = list(params['previous_networks'])
    names += [item['previous_network'] for item in params['vms'] or [] if isinstance(item, dict) and item.get('previous_network')]
    lacking = [obj for obj in chosen if not mapi.lists_network(obj, mapi.TEMPLATE_DEVICES_PATH, params['network'])]
    if lacking and not any(mapi.lists_network(obj, mapi.TEMPLATE_DEVICES_PATH, name) for obj in lacking for name in names):
        evidence = set()
        for row, vm in zip(row_machines, vms):
            if vm and on_network(vm, network) and mapi.machine_nic_agrees(row['machine'], vm, params['network']):
                evidence.update(device.get('networkName') for device in mapi.secondary_devices(row['machine'], mapi.MACHINE_DEVICES_PATH))
        candidates = [device.get('networkName') for obj in lacking for device in mapi.secondary_devices(obj, mapi.TEMPLATE_DEVICES_PATH)
                      if device.get('networkName') in evidence]
        if candidates:
            names += [name for name in candidates if not any(mapi.device_matches({'networkName': name}, other) for other in _network_names(module))]
    return sorted(set(name for name in names if name and name != params['network']))


def plan_append(module, chosen, machines, row_machines, _secondary=None):
    """state=present: append to (or rename in) the templates (refusals raise before any write), align Machines on request."""
    params = module.params
    device_options = dict((key, value) for key, value in (params['device'] or {}).items() if value)
    members = mapi.machineset_members(machines)
    vms, network = vm_counts(module, [row['machine'] for row in row_machines])
    previous = previous_names(module, chosen, row_machines, vms, network)
    set_plans = [dict(mapi.plan_machineset(obj, params['network'], device_options, previous),
                      nodes=sorted(set(node for _machine, node in members.get(obj['metadata']['name'], []) if node)))
                 for obj in chosen]
    findings = [item for entry in set_plans for item in entry['findings']]
    if errors(findings):
        raise Refused(findings)
    machine_plans = []
    for row, vm in zip(row_machines, vms):
        entry = mapi.plan_machine(row['machine'], vm, params['network'], on_network(vm, network), params['align_machines'], previous)
        machine_plans.append(dict(entry, node=row['node'], machineset=row['machineset']))
        findings.extend(entry['findings'])
    return set_plans, machine_plans, findings


def plan_removal(module, chosen, machines, row_machines, secondary):
    """state=absent: templates, and the Machines whose VM has lost the NIC; any refusal raises before a write."""
    params = module.params
    network_name = params['network']
    listing = ([obj for obj in chosen if mapi.lists_network(obj, mapi.TEMPLATE_DEVICES_PATH, network_name)]
               + [row['machine'] for row in row_machines if mapi.lists_network(row['machine'], mapi.MACHINE_DEVICES_PATH, network_name)])
    hosted = read_hosted_egress_ips(module, secondary) if listing else {}
    members = mapi.machineset_members(machines)
    set_plans = [mapi.plan_machineset_remove(obj, network_name, members.get(obj['metadata']['name'], []), hosted, params['force'])
                 for obj in chosen]
    vms, network = vm_counts(module, [row['machine'] for row in row_machines])
    machine_plans = []
    for row, vm in zip(row_machines, vms):
        entry = mapi.plan_machine_remove(row['machine'], vm, network_name, on_network(vm, network), row['node'], hosted,
                                         params['force'])
        machine_plans.append(dict(entry, node=row['node'], machineset=row['machineset']))
    refused = [item for entry in set_plans + machine_plans if entry['action'] == 'refused' for item in entry['findings']]
    if refused:
        raise Refused(refused)
    findings = [item for entry in set_plans + machine_plans for item in entry['findings']]
    return set_plans, machine_plans, findings


def plan_domains(module, chosen, machines, row_machines, secondary):
    """With failure_domains: each MachineSet and Machine planned with its own domain's port group (its workspace names
    the domain, as the installer writes it); one that matches no domain is refused before anything is written."""
    params = module.params
    switch_type = plan.DISTRIBUTED if params['switch'] else plan.STANDARD
    domains = read_domains(module.k8s, params['failure_domains'], {
        'datacenter': params['datacenter'], 'cluster': None,
        'portgroup': {'name': params['network'], 'switch': params['switch'], 'switch_type': switch_type}})
    groups, refusals = fd.machine_api_by_domain(chosen, row_machines, domains)
    if refusals:
        raise Refused(refusals)
    saved = dict((key, params[key]) for key in ('network', 'switch', 'datacenter'))
    set_plans, machine_plans, findings = [], [], []
    try:
        for domain in domains:
            sets, rows = groups[domain['name']]
            if not sets and not rows:
                continue
            portgroup = domain['portgroup']
            params.update(network=portgroup.get('name') or saved['network'], datacenter=domain['datacenter'],
                          switch=portgroup.get('switch') if portgroup.get('switch_type') == plan.DISTRIBUTED else None)
            planner = plan_removal if params['state'] == 'absent' else plan_append
            domain_sets, domain_machines, domain_findings = planner(module, sets, machines, rows, secondary)
            set_plans += [dict(entry, domain=domain['name']) for entry in domain_sets]
            machine_plans += [dict(entry, domain=domain['name']) for entry in domain_machines]
            findings += domain_findings
    finally:
        params.update(saved)
    return set_plans, machine_plans, findings


def on_network(vm, network):
    if vm and 'on_network' in vm:  # given by the vms option
        return vm['on_network']
    return bool(vm and network and any(plan.nic_on_network(nic, network) for nic in vm['nics']))


def read_hosted_egress_ips(module, networks):
    """{node: [(EgressIP, IP)]} from one list of the EgressIP objects; none when the EgressIP API is not served."""
    items = kube.list_objects(module.k8s, kube.EGRESSIPS, absent=None)
    return hosted_egress_ips(items, networks)


def select_machinesets(module, machinesets, rows):
    """The MachineSets named in `machinesets`, then those backing the selected nodes, in that order, each once."""
    params = module.params
    by_name = dict((item['metadata']['name'], item) for item in machinesets)
    unknown = [name for name in params['machinesets'] if name not in by_name]
    if unknown:
        raise ModuleFailure('machinesets=%s: no such MachineSet in namespace %s (there: %s). Nothing was written.'
                            % (', '.join(unknown), params['namespace'], ', '.join(sorted(by_name)) or 'none'))
    names = list(params['machinesets']) + [row['machineset'] for row in rows if row['machineset']]
    ordered = sorted(set(names), key=names.index)
    return [by_name[name] for name in ordered]


def apply(module, set_plans, machine_plans):
    """Patch what the plans append or remove (dry run in check mode); the test operation guards against concurrent edits.

    The patches run in parallel with a bound; one that fails does not stop the others, and the module then fails
    naming every failed object (a rerun has only those left).
    """
    writes = [(plural, entry) for plural, plans in (('machinesets', set_plans), ('machines', machine_plans))
              for entry in plans if entry['action'] in WRITES]
    results, failures = parallel.run_parallel([lambda plural=plural, entry=entry: _patch(module, plural, {'metadata': entry['object']}, entry['patch'])
                                               for plural, entry in writes])
    parallel.raise_failures(failures, len([item for item in results if item is not None]), 'Machine API patches')


def diff_of(entries):
    """before/after devices of the objects that change, built by one function for both sides."""
    def side(key):
        return dict(('%s/%s' % (entry['object']['kind'], entry['object']['name']), entry[key])
                    for entry in entries if entry['action'] in WRITES)
    return {'before': side('before'), 'after': side('after')}


def main():
    module = EgressModule(WHAT, argument_spec=argument_spec(), lock=LOCK_BEFORE, supports_check_mode=True,
                          mutually_exclusive=exclusive_with(('cidr', 'ipv6_cidr'), 'secondary_network'))
    module.run(run)


if __name__ == '__main__':
    main()
