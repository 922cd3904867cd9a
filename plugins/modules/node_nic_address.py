#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_nic_address
short_description: Give each node's secondary NIC a stable base address and a gateway route (one NMState policy per node)
version_added: 0.1.0
description:
  - "Creates one C(NodeNetworkConfigurationPolicy) (C(nmstate.io/v1)) per node, selected by the node's
    C(kubernetes.io/hostname) label. The policy matches the secondary NIC by MAC (C(identifier: mac-address)),
    so the in-guest name (C(ens224), C(ens256), ...) does not matter; O(interface_name) is only the
    NetworkManager profile name."
  - The NIC gets one static base address in the secondary network, no DHCP, no DNS, no router
    advertisements (IPv6 C(autoconf) and C(dhcp) off), and per family a default route through its gateway with its
    route metric (O(network.route_metric), O(network.ipv6.route_metric)), which must be above the
    metric of the primary default route so C(br-ex) stays the default-route interface (the module checks it
    against every node's NodeNetworkState).
  - "Addresses are allocated from O(network.node_address_range) and never move: the allocation is recorded on the
    policy (annotations C(egressip.ocp/node) and C(egressip.ocp/addresses)) and read back on every run. A new
    node takes the lowest free address; an address a node already holds in the range (configured by hand) is
    kept; a node that leaves the list keeps its address reserved until it is released with O(state=absent)."
  - "Refuses, before any write and naming the value and the fix: a gateway or range outside O(network.cidr); a range that
    includes the network, broadcast or gateway address; a range too small for the nodes; a O(network.cidr) that
    overlaps the primary machine network or another host subnet of any node; an address already used by
    another node (C(k8s.ovn.org/host-cidrs)) or claimed by an EgressIP object; a policy of the same name
    not created by this collection."
  - Reads one list of Nodes, NodeNetworkConfigurationPolicies, NodeNetworkConfigurationEnactments,
    NodeNetworkStates and EgressIPs, whatever the number of nodes; writes only the policies that differ,
    in parallel.
  - "The gateway route names the NIC's B(kernel) interface (C(ens224), ...), read from the node's NodeNetworkState by MAC,
    while the interface itself stays matched by MAC. nmstate before 2.2.43 (the NMState handler of most OpenShift releases)
    does not resolve a profile name in C(next-hop-interface): it stores the route on no interface and rolls the whole
    policy back. NodeNetworkState is refreshed about every 60 s, so for a NIC added in vCenter a moment ago the module waits
    (up to O(state_wait_timeout)) until the node's NodeNetworkState lists that MAC, and says so when it gives up, naming
    the node and the interfaces it lists (a wrong MAC ends the same way). In check mode it does not wait: a policy for
    such a node shows C(<kernel name of MAC>) in its route and an info finding C(node_nic_not_in_state)."
  - "Safe beside another writer that ignores the cluster lock (M(ocp.egressip.cluster_lock)): a new policy is created
    B(parked), its C(nodeSelector) also asking for the label C(egressip.ocp/address-claim=pending) that no node has, then
    the policies are listed again; an address another policy of the collection claimed first (an active policy, else
    the older C(creationTimestamp); two claims in the same second both lose) is re-allocated while the policy is still
    parked, a re-allocated address then yields to any other policy holding it, and only then is the policy activated
    (the extra selector key removed). Every re-allocation and activation is a JSON patch whose C(test) operations hold only
    while the claim it was decided on stands (still parked, the same addresses), so a claim another writer changed in
    between is checked again instead of overwritten, and a policy another writer already activated never moves. A
    policy another writer created for the same node at the same moment is kept as it is. So one address is never
    configured on two nodes; a run killed in between leaves a parked policy that the next run activates. A parked
    policy that lost its claim is not an allocation: a run that finds one waits for its writer to re-allocate it
    (until its addresses have not changed for 40 s, its writer being gone, at most O(wait_timeout)), then re-allocates
    it itself when it is one of its nodes (and ignores it otherwise), instead of refusing both nodes with
    C(node_address_in_use). Re-allocating a lost claim avoids every address another policy holds, also one whose
    claims are contested, so writers that lost one address together never all take it again."
  - "With O(wait=true), waits until each policy is C(Available) on its node and fails on C(Degraded) with the
    node's enactment message (for example, no NIC holds the MAC). A newer NMState handler retries a failing apply a few
    times (its enactment is C(Failing) and C(Progressing) together): that is reported as C(retrying) and waited for."
  - "With O(replace_hand_made=true), once the collection's policy of a node is C(Available) there, the hand-made policies
    that configure only that node's secondary NIC, with the same address, are deleted (see O(replace_hand_made))."
  - O(state=absent) first updates the policy so the address and route are removed from the node (deleting a
    policy never rolls a node back), waits for that, then deletes the policy; refused while the node hosts
    egress IPs in that subnet unless O(force=true).
requirements:
  - netaddr >= 1.3.0
options:
  nodes:
    description:
      - "The nodes and their secondary NIC: a list of mappings with the keys C(node) (node name, required), C(mac)
        (MAC of the secondary NIC, any case, C(:) or C(-) separated; required with O(state=present)), C(address)
        (optional base address to give this node instead of allocating one: inside O(network.cidr), not in use; refused
        when the node already has a different allocation, since allocations never move) and C(ipv6_address)
        (the same for the IPv6 network of O(network.ipv6))."
      - Other keys are ignored, so the C(vms) list returned by M(ocp.egressip.vsphere_vm_nic) can be passed as it is
        (keep only entries with a MAC, for example with C(selectattr('mac'))).
      - With O(state=absent) only C(node) is needed.
    type: list
    elements: dict
    required: true
  cidr:
    description:
      - Deprecated (removed in 2.0.0), use O(network.cidr); mutually exclusive with O(network).
    type: str
  gateway:
    description: Deprecated (removed in 2.0.0), use O(network.gateway).
    type: str
  node_address_range:
    description: Deprecated (removed in 2.0.0), use O(network.node_address_range).
    type: str
  route_metric:
    description: Deprecated (removed in 2.0.0), use O(network.route_metric) (default 200).
    type: int
  ipv6:
    description: Deprecated (removed in 2.0.0), use O(network.ipv6).
    type: dict
    suboptions:
      cidr:
        description: IPv6 network, C(address/prefix).
        type: str
      gateway:
        description: IPv6 router of the network.
        type: str
      node_address_range:
        description: IPv6 base addresses for the node NICs, C(first-last) or a CIDR block.
        type: str
  interface_name:
    description:
      - NetworkManager profile name of the secondary NIC (the kernel name stays as it is). At most 15 characters.
    type: str
    default: egressip0
  state:
    description:
      - V(present) ensures the policies; V(absent) removes the address from the listed nodes and deletes their policies.
    type: str
    choices: [present, absent]
    default: present
  force:
    description: With O(state=absent), release a node's address even when it hosts egress IPs in that subnet (they go unassigned or move).
    type: bool
    default: false
  wait:
    description: Wait until every policy is C(Available) on its node; fail on C(Degraded). Not in check mode.
    type: bool
    default: true
  replace_hand_made:
    description:
      - "With O(state=present): after the collection's policy of a node is C(Available) on that node, delete the
        NodeNetworkConfigurationPolicies made by hand (without the label C(egressip.ocp/managed-by)) that configure
        B(only) that node's secondary NIC. Such a policy has the C(nodeSelector) C(kubernetes.io/hostname: <node>) and
        nothing else, one interface in its C(desiredState), the NIC (by MAC with C(identifier: mac-address), or by the
        NIC's kernel name from the node's NodeNetworkState), C(up), holding exactly the base address(es) the collection's
        policy gives it (no DHCP, no autoconf, no other setting), and optionally routes through that interface; nothing
        else (no other interface, no C(dns-resolver), no C(route-rules), no C(capture))."
      - "Deleting a policy never rolls a node back (nmstate keeps what it configured), and the collection's policy
        already configures the same, so the node does not change. Every other hand-made policy that configures the NIC
        is kept, reported in RV(kept_hand_made_policies) with the reason, and warned about: you decide."
      - Needs O(wait=true) (refused before any write otherwise). Ignored with O(state=absent).
      - In check mode, reports the policies that would be deleted (the deletes are sent as dry runs).
      - Typically set through the role variable C(node_network_replace_hand_made) after adopting a cluster configured by
        hand (C(playbooks/migrate.yml), finding C(migrate_policy_duplicate)).
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait for the policies.
    type: int
    default: 300
  state_wait_timeout:
    description:
      - Seconds to wait for each node's NodeNetworkState to list its NIC (by MAC) before the policies are written.
      - Above the handler's refresh interval (60 s, with jitter) so a NIC that exists is always seen.
      - With O(wait=false) the module does not wait and refuses nodes whose NIC is not listed yet.
    type: int
    default: 90
extends_documentation_fragment:
  - ocp.egressip.egressip_network
  - ocp.egressip.cluster_lock
  - ocp.egressip.k8s_auth
  - ocp.egressip.wait
  - ocp.egressip.progress
  - ocp.egressip.common
attributes:
  check_mode:
    details: Every write is sent with C(dryRun=All), so the API validates it and stores nothing.
  diff_mode:
    support: full
    details: Before and after of the parts of each policy the collection manages.
notes:
  - "Requires the Kubernetes NMState Operator (with the C(NMState) CR named C(nmstate)); C(identifier: mac-address) needs nmstate 2.2.10 or newer."
  - The gateway route is a default route in the main table with a higher metric than the primary one;
    OVN-Kubernetes copies the routes of the egress link into the per-link table it uses for egress IP traffic.
seealso:
  - module: ocp.egressip.ip_forwarding
  - module: ocp.egressip.egress_nodes
'''

EXAMPLES = r'''
- name: Address the secondary NICs (MACs from the vSphere step)
  ocp.egressip.node_nic_address:
    nodes:
      - {node: ocp1-worker-0, mac: "00:50:56:aa:bb:01"}
      - {node: ocp1-worker-1, mac: "00:50:56:aa:bb:02"}
    network: {cidr: 10.20.0.0/24, gateway: 10.20.0.1, node_address_range: 10.20.0.10-10.20.0.99, route_metric: 200}
  register: addresses

- name: Dual stack, with one address chosen by hand
  ocp.egressip.node_nic_address:
    nodes:
      - {node: ocp1-worker-0, mac: "00:50:56:aa:bb:01", address: 10.20.0.57}
    network:
      cidr: 10.20.0.0/24
      gateway: 10.20.0.1
      node_address_range: 10.20.0.10-10.20.0.99
      ipv6:
        cidr: fd00:20::/64
        gateway: fd00:20::1
        node_address_range: fd00:20::10-fd00:20::ff
        route_metric: 210

- name: After an adoption, replace the hand-made policies that duplicate the collection's
  ocp.egressip.node_nic_address:
    nodes:
      - {node: ocp1-worker-0, mac: "00:50:56:aa:bb:01"}
    network: "{{ egressip_network }}"
    interface_name: ens224
    replace_hand_made: true
  register: addresses

- name: Release the address of a node that leaves the egress pool
  ocp.egressip.node_nic_address:
    nodes:
      - node: ocp1-worker-2
    state: absent
'''

RETURN = r'''
allocations:
  description: One entry per node of O(nodes) (O(state=present)).
  returned: success or refusal after the read, with O(state=present)
  type: list
  elements: dict
  contains:
    node:
      description: Node name.
      type: str
      sample: ocp1-worker-0
    mac:
      description: MAC of the secondary NIC, lower case.
      type: str
      sample: "00:50:56:aa:bb:01"
    policy:
      description: Name of the NodeNetworkConfigurationPolicy.
      type: str
      sample: egressip-ocp1-worker-0
    address:
      description: The base address with prefix (IPv4, or IPv6 for an IPv6-only network).
      type: str
      sample: 10.20.0.10/24
    ipv6_address:
      description: The IPv6 base address with prefix in dual stack, else C(null).
      type: str
      sample: fd00:20::10/64
    source:
      description: C(existing) (read back from the policy), C(requested), C(current) (the node already held it) or C(allocated) (lowest free).
      type: str
      sample: existing
    interface:
      description: Kernel name of the NIC from the node's NodeNetworkState, C(null) until the node reports it.
      type: str
      sample: ens224
    status:
      description: C(available), C(progressing) or C(degraded) on the node, from the policy's enactment.
      type: str
      sample: available
    message:
      description: The enactment's message for that status.
      type: str
      sample: successfully reconciled
released:
  description: Nodes whose address was released and policy deleted (O(state=absent)).
  returned: success, with O(state=absent)
  type: list
  elements: dict
  sample: [{node: ocp1-worker-2, policy: egressip-ocp1-worker-2, addresses: [10.20.0.12/24]}]
created:
  description: Names of the policies created (or that would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [egressip-ocp1-worker-0]
updated:
  description: Names of the policies changed (or that would be).
  returned: always
  type: list
  elements: str
  sample: []
deleted:
  description: Names of the policies deleted (or that would be), including the hand-made ones of RV(replaced_policies).
  returned: always
  type: list
  elements: str
  sample: []
replaced_policies:
  description:
    - The hand-made policies deleted (or that would be, in check mode) because the collection's policy of that node
      configures exactly the same on the NIC (O(replace_hand_made=true)).
  returned: always (empty unless O(replace_hand_made=true))
  type: list
  elements: dict
  contains:
    name:
      description: Name of the hand-made NodeNetworkConfigurationPolicy.
      type: str
      sample: ocp1-worker-0-egress
    node:
      description: The node whose secondary NIC it configured.
      type: str
      sample: ocp1-worker-0
kept_hand_made_policies:
  description:
    - The hand-made policies that configure a node's secondary NIC but not only that, so they are not deleted
      (O(replace_hand_made=true)); one entry per policy and node, each also given as a warning.
  returned: always (empty unless O(replace_hand_made=true))
  type: list
  elements: dict
  contains:
    name:
      description: Name of the hand-made NodeNetworkConfigurationPolicy.
      type: str
      sample: workers-egress
    node:
      description: The node whose secondary NIC it configures.
      type: str
      sample: ocp1-worker-0
    reason:
      description: Why it is kept (everything it configures besides the collection's policy).
      type: str
      sample: 'its nodeSelector {"node-role.kubernetes.io/worker": ""} selects more than this node (kubernetes.io/hostname=ocp1-worker-0)'
findings:
  description: Findings (refusals, warnings such as a policy left for a node that no longer exists), C(docs/runbook.md) has each id.
  returned: always
  type: list
  elements: dict
  sample: [{id: node_policy_orphaned, severity: warning, message: "...", remedy: "...", docs: docs/runbook.md#node_policy_orphaned, objects: []}]
diff:
  description: Managed parts of the policies before and after, keyed by policy name; a replaced hand-made policy is in
    C(before) only. C(after) is what the run wrote in the end - a claim re-allocated after losing its address to another
    writer shows its new address, a policy another writer created at the same time shows that writer's allocation (as
    listed once the claims settled, again after the wait with O(wait=true), as it will be once active).
  returned: when diff mode is on
  type: dict
  sample: {before: {}, after: {egressip-ocp1-worker-0: {spec: {}}}}
'''

from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.clients import node_network_io as io
from ansible_collections.ocp.egressip.plugins.module_utils.clients import address_claims as claims
from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_BEFORE, PROGRESS_TRIES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.plan import hand_made as hm
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na

WHAT = 'node_nic_address'


KINDS = ('nodes', 'nncps', 'nnces', 'nns', 'egressips')  # one list per kind: five requests whatever the number of nodes
FLAT = ('cidr', 'gateway', 'node_address_range', 'route_metric', 'ipv6')  # deprecated: the network option's keys


def secondary_network(module):
    """(families, {version: route metric}, findings) of the network option (or the deprecated flat options), parsed once."""
    network, findings = _network.from_options(module.params, FLAT, module.deprecate)
    if network is None and not findings:
        findings = [catalogue_finding('node_network_input_invalid', 'network is required with state: present.',
                                      objects=[{'kind': 'option', 'name': 'network'}],
                                      remedy='pass the secondary network: network: "{{ egressip_network }}".')]
    return (network.families, network.route_metrics()) if network is not None else ([], {}), findings


def wait_for_interfaces(module, entries, networks, metrics, snapshot, plan):
    """Re-read NodeNetworkStates until each node lists its NIC (the route needs the kernel name); the plan made then.

    NodeNetworkState is refreshed about every 60 s, so a NIC added in vCenter a moment ago is listed a minute later.
    Check mode does not wait (the NIC may not exist yet): the policy shows a placeholder and an info finding says so.
    """
    params = module.params
    if not plan['pending']:
        return plan
    if module.check_mode:
        plan['findings'] += na.pending_findings(plan['pending'], 0, severity='info')
        return plan
    if not params['wait']:
        raise Refused(na.pending_findings(plan['pending'], 0))
    plan = io.wait_for_states(module.k8s, snapshot, plan, lambda again: na.plan_nic_addresses(
        entries, networks, metrics, params['interface_name'], again), params['state_wait_timeout'], params['wait_sleep'])
    if plan['pending']:
        raise Refused(na.pending_findings(plan['pending'], params['state_wait_timeout']))
    return plan


def wait_available(module, nodes_by_policy, purpose):
    """Poll policies and enactments until each named policy is available on its node.

    Returns ({policy: (status, message)}, findings): node_policy_degraded (node and the
    enactment's message) as soon as one is Degraded, node_policy_timeout after wait_timeout.
    """
    clock = parallel.Clock(module.params['wait_timeout'], module.params['wait_sleep'])
    while True:
        policies = dict((item['metadata']['name'], item) for item in kube.list_objects(module.k8s, kube.NNCPS))
        enactments = dict((item['metadata']['name'], item) for item in kube.list_objects(module.k8s, kube.NNCES))
        progress = {}
        for name, node in nodes_by_policy.items():
            policy = policies.get(name)
            progress[name] = (nn.policy_progress(policy, enactments.get(nn.enactment_name(node, name)))
                              if policy else (nn.PROGRESSING, 'policy not found'))
        degraded = degraded_findings(nodes_by_policy, progress)
        if degraded or all(state == nn.AVAILABLE for state, _message in progress.values()):
            return progress, degraded
        if clock.expired():
            late = sorted(name for name, (state, _message) in progress.items() if state != nn.AVAILABLE)
            return progress, [catalogue_finding(
                'node_policy_timeout', '%s: policies %s not Available on their nodes after %s s (%s).'
                % (purpose, ', '.join(late), module.params['wait_timeout'], '; '.join('%s: %s' % (name, progress[name][1]) for name in late)),
                objects=[{'kind': nn.POLICY_KIND, 'name': name} for name in late])]
        clock.sleep()


def _written(result):
    names = result['created'] + result['updated']
    return 'policies %s' % ', '.join(names) if names else 'nothing (the policies were already in place)'


def degraded_findings(nodes_by_policy, progress):
    findings = []
    for name in sorted(progress):
        state, message = progress[name]
        if state == nn.DEGRADED:
            findings.append(catalogue_finding(
                'node_policy_degraded', 'NodeNetworkConfigurationPolicy %s is Degraded on node %s: %s'
                % (name, nodes_by_policy[name], message),
                objects=[{'kind': nn.POLICY_KIND, 'name': name}, {'kind': 'Node', 'name': nodes_by_policy[name]}]))
    return findings


def check_replace_hand_made(params):
    if params['replace_hand_made'] and not params['wait']:
        return [catalogue_finding(
            'node_network_input_invalid', 'replace_hand_made: true needs wait: true: a hand-made policy is deleted only once the '
            'collection\'s policy of that node is Available there.',
            objects=[{'kind': 'option', 'name': 'replace_hand_made'}, {'kind': 'option', 'name': 'wait'}],
            remedy='set wait: true (node_network_wait), or leave replace_hand_made false.')]
    return []


def replace_hand_made(module, result, plan, snapshot):
    """Delete the hand-made policies that only duplicate the collection's, once that one is Available on the node."""
    replacement = hm.plan_hand_made_replacement(plan['allocations'], snapshot)
    result['kept_hand_made_policies'] = replacement['keep']
    for item in replacement['keep']:
        module.warn('Hand-made NodeNetworkConfigurationPolicy %s configures the secondary NIC of node %s and is kept: %s. '
                    'Delete or trim it yourself once the collection\'s policy %s is Available (deleting a policy never '
                    'changes the node).' % (item['name'], item['node'], item['reason'], nn.policy_name(item['node'])))
    status = dict((item['node'], item['status']) for item in plan['allocations'])
    check = module.check_mode
    # in check mode the collection's policy may not exist yet: what a real run would delete once it is Available
    delete = [item for item in replacement['delete'] if check or status.get(item['node']) == nn.AVAILABLE]
    result['replaced_policies'] = delete
    result['deleted'] = [item['name'] for item in delete]
    if not delete:
        return
    result['changed'] = True
    result['diff']['before'].update(nn.to_json(dict((item['name'], replacement['before'][item['name']]) for item in delete)))
    k8s = module.k8s
    results, failures = parallel.run_parallel([lambda name=item['name']: kube.delete(k8s, kube.NNCPS, name, check) for item in delete])
    parallel.raise_failures(failures, len([r for r in results if r is not None]), 'hand-made NodeNetworkConfigurationPolicy deletes')


def present(module, result):
    params = module.params
    entries, findings = na.nic_entries(params['nodes'])
    (networks, metrics), found = secondary_network(module)
    findings += na.validate_nic_entries(entries) + found + na.check_interface_name(params['interface_name'])
    findings += check_replace_hand_made(params)
    if errors(findings):
        raise Refused(findings)
    snapshot = kubernetes.read(module.k8s, KINDS)
    claims.settle_claims(module, snapshot)
    plan = na.plan_nic_addresses(entries, networks, metrics, params['interface_name'], snapshot)
    if errors(plan['findings']):
        raise Refused(plan['findings'])
    plan = wait_for_interfaces(module, entries, networks, metrics, snapshot, plan)
    result.update(allocations=plan['allocations'], findings=plan['findings'])
    if errors(plan['findings']):
        raise Refused(plan['findings'])
    result['created'] = [body['metadata']['name'] for body in plan['create']]
    result['updated'] = [name for name, _patch in plan['patch']]
    result['changed'] = bool(plan['create'] or plan['patch'])
    result['diff'] = {'before': nn.to_json(plan['before']), 'after': nn.to_json(plan['after'])}
    claims.write_policies(module, plan)
    if (plan['create'] or plan.get('taken') or plan['reclaim']) and not module.check_mode:
        written = claims.claim_addresses(module, entries, networks, metrics, snapshot, plan)
        result['created'] = [body['metadata']['name'] for body in plan['create']]
        # a claim re-allocated or activated after the plan (a parked loser taken over) is an update too
        result['updated'] = sorted(set(result['updated']) | (set(written) - set(result['created'])))
        result['allocations'] = plan['allocations']
        result['changed'] = bool(plan['create'] or result['updated'])
        result['diff']['after'] = nn.to_json(plan['after'])   # a claim re-allocated shows its new address
    if not module.check_mode and params['wait']:
        nodes_by_policy = dict((item['policy'], item['node']) for item in plan['allocations'])
        if result['changed'] or any(item['status'] != nn.AVAILABLE for item in plan['allocations']):
            progress, findings = wait_available(module, nodes_by_policy, 'node addresses')
            for item in plan['allocations']:
                item['status'], item['message'] = progress[item['policy']]
            if findings:
                raise Refused(findings, written=_written(result))
            if plan.get('taken'):
                # the other writer may have re-allocated the policy it created while this run waited for it
                listed = kube.list_objects(module.k8s, kube.NNCPS)
                claims.record_final_allocations(plan, listed)
                claims.record_final_views(plan, listed, plan['taken'])
                result['allocations'] = plan['allocations']
                result['diff']['after'] = nn.to_json(plan['after'])
    if params['replace_hand_made']:
        replace_hand_made(module, result, plan, snapshot)


def absent(module, result):
    params = module.params
    entries, findings = na.nic_entries(params['nodes'])
    findings += na.validate_nic_entries(entries, need_mac=False)
    if errors(findings):
        raise Refused(findings)
    snapshot = kubernetes.read(module.k8s, KINDS)
    plan = na.plan_nic_release(set(entry['node'] for entry in entries), snapshot, params['force'])
    result['findings'] = plan['findings']
    if errors(plan['findings']):
        raise Refused(plan['findings'])
    release = plan['release']
    result['deleted'] = [item['policy'] for item in release]
    result['released'] = [{'node': item['node'], 'policy': item['policy'],
                           'addresses': [item['allocation']['addresses'][v] for v in sorted(item['allocation']['addresses'])]}
                          for item in release]
    result['changed'] = bool(release)
    result['diff'] = {'before': nn.to_json(plan['before']), 'after': {}}
    k8s, check = module.k8s, module.check_mode
    cleanup = [item for item in release if item['cleanup']]
    calls = [lambda item=item: kube.patch(k8s, kube.NNCPS, item['policy'], {'spec': {'desiredState': nn.merge_patch(
        (item['current'].get('spec') or {}).get('desiredState') or {},
        na.cleanup_state(item['allocation'], params['interface_name'], item.get('interface')))}}, check)
        for item in cleanup]
    results, failures = parallel.run_parallel(calls)
    parallel.raise_failures(failures, len([r for r in results if r is not None]), 'address removal before deleting the policies')
    if cleanup and not check:
        _progress, findings = wait_available(module, dict((item['policy'], item['node']) for item in cleanup), 'address removal')
        if findings:
            raise Refused(findings, written=_written(result))
    results, failures = parallel.run_parallel([lambda item=item: kube.delete(k8s, kube.NNCPS, item['policy'], check) for item in release])
    parallel.raise_failures(failures, len([r for r in results if r is not None]), 'NodeNetworkConfigurationPolicy deletes')


def step(module, result):
    """Place the addresses (present) or remove them (absent), under the cluster lock."""
    if module.params['state'] == 'present':
        present(module, result)
    else:
        absent(module, result)


def argument_spec():
    return dict(
        _network.flat_argument_spec(FLAT),
        nodes=dict(type='list', elements='dict', required=True),
        network=_network.argument_spec(),
        interface_name=dict(type='str', default='egressip0'),
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        force=dict(type='bool', default=False),
        wait=dict(type='bool', default=True),
        replace_hand_made=dict(type='bool', default=False),
        wait_timeout=dict(type='int', default=300),
        state_wait_timeout=dict(type='int', default=90),
        wait_sleep=dict(type='int', default=2),
    )


def main():
    module = EgressModule(WHAT, argument_spec=argument_spec(), libraries=('netaddr',), lock=LOCK_BEFORE, progress=PROGRESS_TRIES,
                          mutually_exclusive=_network.exclusive_with(FLAT), supports_check_mode=True)
    module.run(step, allocations=[], released=[], created=[], updated=[], deleted=[], replaced_policies=[], kept_hand_made_policies=[], findings=[])


if __name__ == '__main__':
    main()
