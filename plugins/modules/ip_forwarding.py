#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: ip_forwarding
short_description: Turn on IP forwarding for the secondary NIC of the egress nodes (per interface or cluster wide)
version_added: 0.1.0
description:
  - Since OpenShift 4.14 IP forwarding is off by default. OVN-Kubernetes does not check it, and without it the
    traffic of an egress IP on a secondary NIC is silently dropped. This module makes the choice explicit.
  - "O(mode=per_interface) (default): one Node Tuning Operator C(Tuned) object
    (C(openshift-cluster-node-tuning-operator/egressip-forwarding)) sets C(net.ipv4.conf.<if>.forwarding=1) on the
    secondary NIC of exactly the listed nodes, and nothing else. The kernel name C(<if>) is read from each node's
    C(NodeNetworkState): the interface whose MAC is the NIC's (the NMState policy matches the NIC by MAC and never
    names it). Nodes whose NIC has a different kernel name, and control-plane nodes, get separate profiles; each
    profile includes the stock profile the node runs (C(openshift-node) or C(openshift-control-plane)), so no
    tuning is lost."
  - "O(mode=global): sets C(spec.defaultNetwork.ovnKubernetesConfig.gatewayConfig.ipForwarding: Global) in
    C(networks.operator.openshift.io/cluster). This is a cluster-wide change: every interface of every node
    forwards IP traffic, and the network operator rolls it out to all nodes. Prefer O(mode=per_interface) unless
    your security policy accepts a router on every node."
  - Reports the mode the cluster is in now (before the change) for the listed NICs.
  - "The Node Tuning Operator is asynchronous: it writes each node's C(profiles.tuned.openshift.io) (named after the node)
    at once, and the node's TuneD daemon applies the sysctl seconds later and reports it there (C(status.tunedProfile),
    conditions C(Applied) and C(Degraded)). With O(wait=true) (default, O(mode=per_interface), O(state=present), not in
    check mode) the module waits until the Profile of every listed node runs the collection's profile with C(Applied)
    true and C(Degraded) not true, and fails naming each node and TuneD's message (C(node_forwarding_degraded)), or each
    node still pending after O(wait_timeout) (C(node_forwarding_timeout))."
  - "A write that removes forwarding of a family from a NIC (O(state=absent), a node left out of O(nodes), or the IPv6
    sysctl when neither O(ipv6) nor O(network) asks for IPv6 any longer) is refused while the node hosts egress IPs of
    that family (C(node_forwarding_hosts_egress_ips), naming the family): IPs inside the O(network) of that family, or,
    when O(network) has none of that family, inside the subnet of an address NodeNetworkState shows on that NIC. IPv4
    and IPv6 count alike, unless O(force=true). A refusal writes nothing, in check mode too."
  - O(state=absent) deletes the C(Tuned) of the collection (O(mode=per_interface)) or sets C(ipForwarding) back to
    C(Restricted) (O(mode=global)).
  - Reads one list of Nodes, NodeNetworkStates and Tuned objects and the network operator configuration (and, when
    forwarding is removed from a NIC, the EgressIPs; while waiting, the NodeNetworkStates or the Profiles once per
    O(wait_sleep)); writes at most one object.
options:
  mode:
    description: Where forwarding is turned on, see the description.
    type: str
    choices: [per_interface, global]
    default: per_interface
  ipv6:
    description:
      - Also set C(net.ipv6.conf.<if>.forwarding=1) (dual-stack or IPv6 secondary network; O(mode=per_interface)).
      - Also done without it when O(network) has an IPv6 family (O(network.ipv6), or an IPv6 O(network.cidr)).
    type: bool
    default: false
  tuned_priority:
    description:
      - Priority of the recommend entries (lower wins). It must beat the stock profiles (40) and lose to nothing
        else that targets these nodes, or the node runs the other profile and forwarding stays off.
    type: int
    default: 20
  state:
    description: V(present) turns forwarding on, V(absent) removes what this module set.
    type: str
    choices: [present, absent]
    default: present
  force:
    description: Remove forwarding from a NIC even while its node hosts egress IPs of the secondary network (their traffic is dropped).
    type: bool
    default: false
  wait:
    description:
      - Wait until the Profile of every listed node reports the collection's profile applied; fail on C(Degraded).
      - Only with O(mode=per_interface) and O(state=present), not in check mode.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for the Profiles.
    type: int
    default: 300
  state_wait_timeout:
    description:
      - Seconds to wait for each listed node's NodeNetworkState to list its NIC (by MAC) before the Tuned is written. The
        kernel name of the NIC comes from there, and NodeNetworkState is refreshed about every 60 s, so a NIC added in
        vCenter a moment ago is listed later (as in M(ocp.egressip.node_nic_address)).
      - Only with O(state=present) and O(wait=true), not in check mode; otherwise a NIC not listed yet is refused at once
        (C(node_nic_not_found)).
    type: int
    default: 90
extends_documentation_fragment:
  - ocp.egressip.node_nics.forwarding
  - ocp.egressip.egressip_network
  - ocp.egressip.cluster_lock
  - ocp.egressip.k8s_auth
  - ocp.egressip.egress_cidr
  - ocp.egressip.wait
  - ocp.egressip.progress
  - ocp.egressip.common
attributes:
  check_mode:
    details: The write is sent with C(dryRun=All), so the API validates it and stores nothing.
  diff_mode:
    support: full
    details: Before and after of the managed part of the Tuned object, or of the C(ipForwarding) value.
notes:
  - Per-interface forwarding needs the Node Tuning Operator (present on every OpenShift cluster) and the NodeNetworkState
    of the Kubernetes NMState Operator.
  - The Node Tuning Operator gives each node one profile, the highest-priority match among all Tuned objects; another
    custom Tuned with a lower priority number for the same nodes wins over this one.
seealso:
  - module: ocp.egressip.node_nic_address
'''

EXAMPLES = r'''
- name: Forwarding on the secondary NIC only (kernel names read from NodeNetworkState)
  ocp.egressip.ip_forwarding:
    mode: per_interface
    nodes: "{{ nics }}"     # [{node: ocp1-worker-0, mac: "00:50:56:aa:bb:01"}, ...]
  register: forwarding

- name: Show the mode the cluster was in
  ansible.builtin.debug:
    var: forwarding.current_mode

- name: Forwarding on every interface of every node (cluster-wide change)
  ocp.egressip.ip_forwarding:
    mode: global
'''

RETURN = r'''
mode:
  description: The mode asked for.
  returned: always
  type: str
  sample: per_interface
current_mode:
  description:
    - The mode the cluster was in before this run, for the listed NICs. C(global) (C(ipForwarding) is C(Global)),
      C(per_interface) (the collection's Tuned covers every listed NIC), C(partial) (some), C(off) (none).
    - With O(mode=global) the NICs are not read; the value is C(global) or C(restricted).
  returned: always
  type: str
  sample: off
cluster_ip_forwarding:
  description: C(gatewayConfig.ipForwarding) of the network operator before this run (empty when unset, which means C(Restricted)).
  returned: always
  type: str
  sample: Restricted
interfaces:
  description: Per listed node, the kernel name of its secondary NIC and whether forwarding is on before and after.
  returned: with O(mode=per_interface)
  type: list
  elements: dict
  sample: [{node: ocp1-worker-0, interface: ens224, forwarding_before: false, forwarding_after: true}]
profiles:
  description: Per listed node, the state of its Profile after the wait - C(applied), C(pending) or C(degraded) - and its message.
  returned: with O(mode=per_interface), O(state=present) and O(wait=true), not in check mode
  type: list
  elements: dict
  sample: [{node: ocp1-worker-0, profile: egressip-forwarding-node-ens224, state: applied, message: TuneD profile applied.}]
tuned:
  description: Namespace and name of the collection's Tuned object.
  returned: with O(mode=per_interface)
  type: str
  sample: openshift-cluster-node-tuning-operator/egressip-forwarding
findings:
  description: Refusals and warnings (for example C(node_ip_forwarding_global) when forwarding is cluster wide).
  returned: always
  type: list
  elements: dict
  sample: []
diff:
  description: Before and after of the managed part of the Tuned, or of C(ipForwarding).
  returned: when diff mode is on
  type: dict
  sample: {before: {ipForwarding: Restricted}, after: {ipForwarding: Global}}
'''

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import is_managed, MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.clients import node_network_io as io
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import egress_networks
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import argument_spec as network_argument_spec, exclusive_with
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_BEFORE, PROGRESS_TRIES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na

WHAT = 'ip_forwarding'
TUNED_ID = '%s/%s' % (nn.TUNED_NAMESPACE, nn.TUNED_NAME)
PENDING_IDS = ('node_nic_not_found', 'node_network_state_missing')  # what a NodeNetworkState refresh may still resolve


def read_network_operator(k8s):
    return kube.get_object(k8s, kube.NETWORK_OPERATOR, 'cluster', absent=kube.FAIL)


def read_tuned(k8s):
    tuneds = kube.list_objects(k8s, kube.TUNEDS, namespace=nn.TUNED_NAMESPACE)
    return next((item for item in tuneds if item['metadata']['name'] == nn.TUNED_NAME), None)


def per_interface(module, result, operator):
    params = module.params
    entries, findings = na.nic_entries(params['nodes'], keys=('node', 'mac'))
    findings += na.validate_nic_entries(entries)
    if params['state'] == 'present' and not entries:
        findings.append(catalogue_finding('node_network_input_invalid', 'nodes is empty with mode: per_interface.',
                                          objects=[{'kind': 'option', 'name': 'nodes'}],
                                          remedy='list the egress nodes and their secondary NIC MACs, or use mode: global.'))
    networks, problems = egress_networks(params, module.deprecate)  # parsed once: the refusals, the IPv6 sysctl, the removal guard
    findings += cidr_findings(problems)
    if errors(findings):
        raise Refused(findings)
    snapshot = kubernetes.read(module.k8s, ('nodes', 'nns'))
    current = read_tuned(module.k8s)
    targets, found = wait_for_interfaces(module, entries, snapshot)
    findings += found
    if current is not None and not is_managed(current):
        findings.append(catalogue_finding(
            'node_object_not_owned', 'Tuned %s exists without the label %s=%s; it was not created by this collection.'
            % (TUNED_ID, MANAGED_BY_LABEL, MANAGED_BY_VALUE), objects=[{'kind': 'Tuned', 'name': TUNED_ID}]))
    result['current_mode'] = fw.forwarding_mode(result['cluster_ip_forwarding'], targets, current)
    result['tuned'] = TUNED_ID
    if errors(findings):
        result['findings'] = findings
        raise Refused(findings)
    ipv6 = params['ipv6'] or any(network.version == 6 for network in networks or [])
    desired = fw.desired_tuned(targets, params['tuned_priority'], ipv6) if params['state'] == 'present' else None
    result['interfaces'] = fw.forwarding_report(targets, result['cluster_ip_forwarding'], current, desired)
    result['findings'] = findings
    guard_removal(module, snapshot, current, desired, networks)
    write_tuned(module, result, current, desired)
    if desired is not None and params['wait'] and not module.check_mode:
        wait_applied(module, result, targets)


def forwarding_plan(entries, snapshot):
    """Targets and findings of forwarding_targets, and the entries whose NodeNetworkState does not list the NIC yet (pending)."""
    targets, findings = fw.forwarding_targets(entries, snapshot)
    found = set(target['node'] for target in targets)
    names = set((item.get('metadata') or {}).get('name') for item in snapshot['nodes'])
    pending = [entry for entry in entries if entry['node'] in names and entry['node'] not in found]
    return {'targets': targets, 'findings': findings, 'pending': pending}


def wait_for_interfaces(module, entries, snapshot):
    """(targets, findings) once every listed node's NodeNetworkState lists its NIC (the sysctl needs the kernel name).

    A NIC added in vCenter a moment ago is listed about a minute later; only a real run of state=present with wait waits.
    """
    params = module.params
    plan = forwarding_plan(entries, snapshot)
    if plan['pending'] and params['state'] == 'present' and params['wait'] and not module.check_mode:
        plan = io.wait_for_states(module.k8s, snapshot, plan, lambda again: forwarding_plan(entries, again),
                                  params['state_wait_timeout'], params['wait_sleep'])
        for item in plan['findings']:
            if plan['pending'] and item['id'] in PENDING_IDS:
                item['message'] += ' Waited %d s for it (state_wait_timeout).' % params['state_wait_timeout']
    return plan['targets'], plan['findings']


def guard_removal(module, snapshot, current, desired, networks):
    """Refuse (before any write) to take forwarding off a NIC whose node hosts egress IPs of the secondary network."""
    removed = fw.forwarding_removals(snapshot['nodes'], current, desired)
    if not removed or module.params['force']:
        return
    states = dict((item['metadata']['name'], item) for item in snapshot['nns'])
    stranded = fw.forwarding_stranded(removed, states, kube.list_objects(module.k8s, kube.EGRESSIPS, absent=None), networks)
    if stranded:
        raise Refused([catalogue_finding(
            'node_forwarding_hosts_egress_ips', _stranded_message(node, version, interfaces, ips),
            objects=[{'kind': 'Node', 'name': node}] + [{'kind': 'EgressIP', 'name': name} for name in sorted(set(n for n, _ip in ips))])
            for node, version, interfaces, ips in stranded])


def _stranded_message(node, version, interfaces, ips):
    family = fw.family_name(version)
    sysctls = ', '.join('%s=1' % fw.forwarding_sysctl(name, version) for name in interfaces)
    hosted = ', '.join('%s (EgressIP %s)' % (ip, name) for name, ip in ips)
    return 'removing %s forwarding (%s) from %s of node %s would drop the traffic of %s egress IP(s) %s it hosts.%s' % (
        family, sysctls, ', '.join(interfaces), node, family, hosted, _keep_hint(version))


def _keep_hint(version):
    if version != 6:
        return ''
    return ' To keep it, set ipv6: true or give the IPv6 family in network (network.ipv6, or an IPv6 network.cidr).'


def write_tuned(module, result, current, desired):
    if desired is None:
        if current is not None:
            result['changed'] = True
            result['diff'] = {'before': nn.to_json(nn.owned_view(current, _owned_shape())), 'after': {}}
            kube.delete(module.k8s, kube.TUNEDS, nn.TUNED_NAME, module.check_mode, namespace=nn.TUNED_NAMESPACE)
        return
    if current is None:
        result['changed'] = True
        result['diff'] = {'before': {}, 'after': nn.to_json(nn.owned_view(desired, desired))}
        kube.create(module.k8s, kube.TUNEDS, desired, module.check_mode, namespace=nn.TUNED_NAMESPACE)
        return
    patch = nn.owned_patch(current, desired)
    if patch:
        result['changed'] = True
        result['diff'] = {'before': nn.to_json(nn.owned_view(current, desired)), 'after': nn.to_json(nn.owned_view(desired, desired))}
        kube.patch(module.k8s, kube.TUNEDS, nn.TUNED_NAME, patch, module.check_mode, namespace=nn.TUNED_NAMESPACE)


def read_profiles(k8s):
    return dict((item['metadata']['name'], item) for item in kube.list_objects(k8s, kube.PROFILES, namespace=nn.TUNED_NAMESPACE))


def wait_applied(module, result, targets):
    """Poll the nodes' Profiles until each runs the collection's profile (applied), failing on Degraded or at the timeout."""
    expected = fw.expected_profiles(targets)
    clock = parallel.Clock(module.params['wait_timeout'], module.params['wait_sleep'])
    while True:
        profiles = read_profiles(module.k8s)
        progress = dict((node, fw.forwarding_progress(profiles.get(node), name)) for node, name in expected.items())
        result['profiles'] = [{'node': node, 'profile': expected[node], 'state': state, 'message': message}
                              for node, (state, message) in sorted(progress.items())]
        degraded = [(node, message) for node, (state, message) in sorted(progress.items()) if state == fw.FORWARDING_DEGRADED]
        if degraded:
            raise Refused([catalogue_finding(
                'node_forwarding_degraded', 'Profile %s is Degraded: TuneD could not apply %s: %s' % (node, expected[node], message),
                objects=[{'kind': 'Node', 'name': node}, {'kind': 'Profile', 'name': node}]) for node, message in degraded],
                written=_written(result))
        late = [(node, message) for node, (state, message) in sorted(progress.items()) if state != fw.FORWARDING_APPLIED]
        if not late:
            return
        if clock.expired():
            raise Refused([catalogue_finding(
                'node_forwarding_timeout', 'profile %s not applied on node %s after %s s: %s'
                % (expected[node], node, module.params['wait_timeout'], message),
                objects=[{'kind': 'Node', 'name': node}, {'kind': 'Profile', 'name': node}]) for node, message in late],
                written=_written(result))
        clock.sleep()


def _written(result):
    return 'Tuned %s' % TUNED_ID if result['changed'] else 'nothing (Tuned %s was already in place)' % TUNED_ID


def cidr_findings(problems):
    return [catalogue_finding('node_network_input_invalid', problem, objects=[{'kind': 'option', 'name': 'cidr'}]) for problem in problems]


def _owned_shape():
    return {'metadata': {'labels': {MANAGED_BY_LABEL: None}}, 'spec': {'profile': None, 'recommend': None}}


def cluster_wide(module, result, operator):
    wanted = 'Global' if module.params['state'] == 'present' else 'Restricted'
    current = result['cluster_ip_forwarding']
    result['current_mode'] = fw.GLOBAL if current == 'Global' else 'restricted'
    if module.params['state'] == 'present':
        result['findings'].append(catalogue_finding(
            'node_ip_forwarding_global', 'gatewayConfig.ipForwarding is %s in networks.operator.openshift.io/cluster: every interface '
            'of every node forwards IP traffic.' % ('already Global' if current == 'Global' else 'set to Global'),
            objects=[{'kind': 'Network', 'name': 'cluster'}]))
    if (current or 'Restricted') == wanted:
        return
    result['changed'] = True
    result['diff'] = {'before': {'ipForwarding': current}, 'after': {'ipForwarding': wanted}}
    kube.patch(module.k8s, kube.NETWORK_OPERATOR, 'cluster', fw.ip_forwarding_patch(wanted), module.check_mode)


def step(module, result):
    """Read the cluster's forwarding, then write the Tuned (per_interface) or the operator's setting (global)."""
    operator = read_network_operator(module.k8s)
    result['cluster_ip_forwarding'] = fw.cluster_ip_forwarding(operator)
    if module.params['mode'] == fw.PER_INTERFACE:
        per_interface(module, result, operator)
    else:
        cluster_wide(module, result, operator)


def main():
    module = EgressModule(
        WHAT, argument_spec=dict(
            mode=dict(type='str', choices=[fw.PER_INTERFACE, fw.GLOBAL], default=fw.PER_INTERFACE),
            nodes=dict(type='list', elements='dict'),
            ipv6=dict(type='bool', default=False),
            tuned_priority=dict(type='int', default=20),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            force=dict(type='bool', default=False),
            wait=dict(type='bool', default=True),
            wait_timeout=dict(type='int', default=300),
            wait_sleep=dict(type='int', default=2),
            state_wait_timeout=dict(type='int', default=90),
            network=network_argument_spec(),
            cidr=dict(type='str'),
            ipv6_cidr=dict(type='str'),
        ),
        lock=LOCK_BEFORE, progress=PROGRESS_TRIES, supports_check_mode=True,
        mutually_exclusive=exclusive_with(('cidr', 'ipv6_cidr')),
    )
    module.run(step, mode=module.params['mode'], findings=[])


if __name__ == '__main__':
    main()
