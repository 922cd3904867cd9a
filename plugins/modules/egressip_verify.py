#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_verify
short_description: Verify that every egress IP is assigned and that its node can really carry it, and remove blackholes
version_added: 0.1.0
description:
  - Checks every egress IP of the EgressIP objects in O(objects) (all objects when empty). For each IP - it is assigned
    (C(status.items)) to a node that exists and whose C(k8s.ovn.org/host-cidrs) hold its network; that node is Ready and
    labelled C(k8s.ovn.org/egress-assignable); for an IP on the secondary network, the node's secondary path works - its
    VM is powered on, has a vNIC backed by O(portgroup), the vNIC is connected, the port group exists on the ESXi host
    the VM runs on B(now) (a standard port group is per host, and DRS or vMotion move VMs), and the node holds its base
    address on that NIC, up (NodeNetworkState).
  - B(Blackhole) detection. OVN-Kubernetes probes egress nodes over the primary network, so a broken secondary path whose
    node keeps its address does not move the IP - it stays assigned and its traffic is dropped (DOMAIN.md section 6).
    Such an IP is an error (C(egressip_blackhole)); an egress node with a broken path that hosts nothing is a warning
    (C(egressip_node_path_broken)). Each kind is also named once per node - C(blackhole_nic_disconnected) (the vNIC is
    disconnected and the node keeps its address, NetworkManager C(ignore-carrier)), C(blackhole_portgroup_missing_on_host)
    (the standard port group was removed or renamed on the VM's current host), C(blackhole_portgroup_vlan_mismatch) (the
    port group has another VLAN there than O(portgroup.vlan_id), or than most hosts when it is not given),
    C(blackhole_gateway_route_missing) (no route via O(network.gateway) on the NIC, checked when it is given),
    C(blackhole_vswitch_no_uplink) (the standard vSwitch of the port group on the VM's current host has no physical uplink,
    or every uplink's link is down; for a distributed port group the switch's uplinks are not checked).
  - B(Carrier loss). A disconnected vNIC whose address NetworkManager removed (no C(ignore-carrier), its default) is no
    blackhole - OVN-Kubernetes moves the node's IPs and places none there - but a capacity loss
    (C(egressip_node_capacity_lost), node C(path) C(no_address), C(carrier_loss) C(remove) in RV(nodes)); one whose node
    keeps the address is a blackhole (C(carrier_loss) C(keep)). The behaviour is read from vCenter (the vNIC) and
    NodeNetworkState (its address); it is not assumed.
  - With O(remediate=true), removes the C(k8s.ovn.org/egress-assignable) label (JSON merge patch) of every labelled node
    whose secondary path is broken, so OVN-Kubernetes moves their egress IPs; then waits until each moved IP is on
    another node, measures how long that took (monotonic clock), and verifies again. Nothing is changed when the
    placement prediction says a moved IP could be left unassigned (C(egressip_remediation_refused)). In check mode the
    label patches are sent as server-side dry runs and the result says what would move where.
  - B(IP forwarding). For each node whose secondary interface is known (NodeNetworkState), forwarding on it is read from
    the Node Tuning Operator - the profile its Profile (C(profiles.tuned.openshift.io)) reports TuneD runs, C(Applied) and
    not C(Degraded), and whether that profile's text in the Tuned objects sets C(net.ipv4.conf.<if>.forwarding=1) - or
    C(gatewayConfig.ipForwarding) C(Global). For a node with an IPv6 secondary subnet, IPv6 forwarding is node-wide - Linux
    forwards IPv6 only by C(net.ipv6.conf.all.forwarding), which ovnkube-node sets to 1 on clusters with IPv6, so it is on
    unless the profile TuneD applied sets C(net.ipv6.conf.all.forwarding=0) (C(net.ipv6.conf.<if>.forwarding) does not
    forward; a Degraded or not yet applied profile does not turn it off). Off on a node hosting an egress IP is the
    blackhole C(blackhole_forwarding_off) (OVN-Kubernetes does not check forwarding). MachineConfig sysctl files are not read.
  - With O(wire), a probe pod per object asks an echo service off the cluster which source address it sees.
  - Reads one list each of Nodes, EgressIPs, NodeNetworkStates, Profiles and Tuned objects, the network operator, and
    (with O(datacenter), O(cluster) and O(portgroup)) the vCenter inventory in a fixed number of batched PropertyCollector reads, whatever the cluster size.
    One GET each of the ClusterVersion C(version) and the Infrastructure C(cluster) names the cluster in the report; a 403 or
    404 on them leaves the name or ID unknown (said in the report), never fails the run.
  - Read-only unless O(remediate=true) finds a blackhole; the probe pods of O(wire) are deleted again.
requirements:
  - netaddr >= 1.3.0
  - pyvmomi >= 9.0.0 (only with O(datacenter))
options:
  objects:
    description:
      - The EgressIP objects to verify, as in C(egressip_objects) of the variables file. An object listed here but missing
        from the cluster, or whose C(spec.egressIPs) lack an IP listed here, is an error (C(egressip_object_missing)).
      - Empty verifies every EgressIP object of the cluster.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Object name.
        type: str
        required: true
      egress_ips:
        description: The egress IPs the object should have.
        type: list
        elements: str
      namespace_selector:
        description: Accepted so the entries of the variables file can be passed as they are; not compared.
        type: dict
      pod_selector:
        description: Accepted so the entries of the variables file can be passed as they are; not compared.
        type: dict
  datacenter:
    description:
      - The vSphere datacenter (C(egressip_vsphere.datacenter)). With O(cluster) and O(portgroup), the node VMs' vNICs and
        the port group on their current hosts are checked; without them the vCenter checks are skipped (C(vsphere_not_checked)).
    type: str
  cluster:
    description: The vSphere cluster whose hosts run the node VMs and carry a standard port group (C(egressip_vsphere.cluster)).
    type: str
  vcenter_facts:
    description:
      - The vCenter facts a C(ocp.egressip.preflight) of the same run read (its RV(ocp.egressip.preflight#module:vcenter) result,
        with O(ocp.egressip.preflight#module:vcenter_facts=true)), taken instead of reading vCenter again for the first look;
        a second look (after remediation) reads vCenter.
      - Only for a run that wrote nothing since that preflight (the enable playbook passes it when its converged record let it
        skip every step, docs/how-it-works.md#the-converged-record); otherwise the facts are stale.
      - Used with O(datacenter), O(cluster) and O(portgroup) only.
    type: dict
  precomputed:
    description:
      - The verification a C(ocp.egressip.preflight) of the same run made on its own read of a converged cluster (its
        RV(ocp.egressip.preflight#module:verify) result, given O(ocp.egressip.preflight#module:verify)). It is returned as
        this module's result, without reading the cluster again, when it was made with the same options as this task's
        and in the same mode (check or not); otherwise it is ignored and the module verifies as always.
      - The enable playbook passes it when its converged record let it skip every step (docs/how-it-works.md#the-converged-record).
        Nothing was written since that read, so verifying again would read the same cluster.
    type: dict
  remediate:
    description:
      - Remove the egress-assignable label of the egress nodes whose secondary path is broken, so OVN-Kubernetes moves
        their egress IPs to capable nodes, then verify again. Refused (nothing changed) when an IP could be left unassigned.
      - The label stays removed; put it back (M(ocp.egressip.egress_nodes), the enable playbook) once the path is fixed.
        The IPs do not move back (no failback).
    type: bool
    default: false
  remediation_limit:
    description:
      - With O(remediate=true), unlabel at most this many nodes in one run; the others keep their label until a later run
        (C(egressip_remediation_deferred)). Nodes hosting the most egress IPs go first. Unset, every broken node.
      - The guard playbook sets it from C(egressip_guard.max_remediations).
    type: int
  remediation_hold_down:
    description:
      - With O(remediate=true), seconds during which a node a remediation unlabelled (its C(egressip.ocp/remediated-at)
        annotation, written with each remediation) is not unlabelled again, once it was labelled again and broke again
        (C(egressip_remediation_deferred)). V(0) means no hold-down.
    type: int
    default: 0
  remediation_min_egress_nodes:
    description:
      - With O(remediate=true), never leave fewer egress-assignable nodes than this; the nodes whose label would go below it
        keep it (C(egressip_remediation_deferred)). V(0) means no floor (the placement prediction still refuses a remediation
        that could leave an IP unassigned).
    type: int
    default: 0
  wait_timeout:
    description: Seconds to wait, after a remediation, for every moved egress IP to be assigned to another node.
    type: int
    default: 120
  poll_interval:
    description: Seconds between two reads while waiting (remediation, probe pods).
    type: float
    default: 1.0
  fail_on_error:
    description:
      - Fail when any finding has severity C(error). With V(false) the module succeeds and the caller decides (the
        roles write the report first).
    type: bool
    default: true
extends_documentation_fragment:
  - ocp.egressip.egressip_config.portgroup_verify
  - ocp.egressip.egressip_network
  - ocp.egressip.failure_domains
  - ocp.egressip.cluster_lock
  - ocp.egressip.k8s_auth
  - ocp.egressip.vsphere_auth.nested
  - ocp.egressip.wire_probe
  - ocp.egressip.progress.notes
  - ocp.egressip.common
attributes:
  check_mode:
    details: No write at all; label patches are sent as server-side dry runs and no probe pod is created.
  diff_mode:
    support: full
    details: With O(remediate=true), the labels removed (before/after per node).
notes:
  - The probe pods of O(wire) carry the labels C(egressip.ocp/managed-by=ocp.egressip) and C(egressip.ocp/probe=<run id>)
    and the labels that satisfy the object's C(podSelector); C(activeDeadlineSeconds) ends them should the clean-up fail.
  - A NetworkPolicy that denies egress in the probe namespace makes the wire check fail although the path works; name a
    namespace without one in O(wire.namespaces).
seealso:
  - module: ocp.egressip.egressip_plan
  - module: ocp.egressip.egressip_failover
  - module: ocp.egressip.egressip_report
'''

EXAMPLES = r'''
- name: Verify the egress IPs of the variables file, including vCenter, without failing the play
  ocp.egressip.egressip_verify:
    objects: "{{ egressip_objects }}"
    network: {cidr: "{{ egressip_network.cidr }}"}
    datacenter: "{{ egressip_vsphere.datacenter }}"
    cluster: "{{ egressip_vsphere.cluster }}"
    portgroup: "{{ egressip_vsphere.portgroup }}"
    fail_on_error: false
  register: verify

- name: Verify on the wire through an echo service off the cluster
  ocp.egressip.egressip_verify:
    network: {cidr: 10.20.0.0/24}
    wire:
      echo_target: 192.0.2.10:8080
      namespaces: {payments: payments-prod}

- name: Move egress IPs off nodes whose secondary vNIC is broken (what would happen first)
  ocp.egressip.egressip_verify:
    network: {cidr: 10.20.0.0/24}
    datacenter: DC1
    cluster: Cluster1
    portgroup: {name: ocp-egress-120, switch_type: standard, switch: vSwitch1}
    remediate: true
  check_mode: true
'''

RETURN = r'''
summary:
  description:
    - Counts and the verdict (C(ok) is false when any error finding exists).
    - With O(wire), C(wire_writes) counts the API writes of the wire check itself (probe pods and namespaces, created and
      deleted again), since the run reports C(changed=false) but is not a run without writes.
  returned: always
  type: dict
  sample: {ok: true, egress_ips: 2, assigned: 2, healthy: 2, blackholed: 0, errors: 0, warnings: 0, info: 0, wire_writes: 4}
egress_ips:
  description: One row per verified egress IP, sorted by object, in spec order.
  returned: always
  type: list
  elements: dict
  contains:
    egressip:
      description: Object name.
      type: str
      sample: payments
    ip:
      description: The egress IP (canonical form).
      type: str
      sample: 10.20.0.200
    node:
      description: The node it is assigned to, or C(null).
      type: str
      sample: ocp1-worker-0
    network:
      description: C(secondary), C(primary) or C(null) (no node holds its network).
      type: str
      sample: secondary
    status:
      description:
        - C(ok), C(unassigned), C(node_missing), C(node_lacks_network), C(unhealthy_node) (not Ready or unlabelled),
          C(blackhole), or C(path_not_checked) (neither vCenter nor NodeNetworkState could be read for its node).
      type: str
      sample: ok
    problems:
      description: What is wrong, in words.
      type: list
      elements: str
      sample: []
    wire:
      description:
        - With O(wire), C(seen) when the echo target saw this IP as the source of a probe; otherwise C(null).
        - An object's flows spread over its IPs, so one probe sees one of them; the check passes when each probe sees one of
          the object's assigned IPs (RV(wire)).
      type: str
      sample: seen
nodes:
  description:
    - One row per egress-assignable node and per node hosting an egress IP.
    - C(path) is C(ok), C(broken), C(not_checked) or C(no_address) (the vNIC is disconnected and NetworkManager removed its
      address - a capacity loss, not a blackhole). C(blackhole_kinds) lists the named blackhole findings of the node.
      C(carrier_loss) is C(remove) or C(keep) when the vNIC is disconnected (what NetworkManager did with the address),
      else C(null).
    - C(forwarding) (when the node's secondary interface is known) is C(true) when C(gatewayConfig.ipForwarding) is
      C(Global) or the profile TuneD reports applied on the node (its Profile, not Degraded) sets
      C(net.ipv4.conf.<if>.forwarding=1), C(false) otherwise (C(blackhole_forwarding_off)), C(null) when it cannot be told;
      with an IPv6 secondary subnet it is C(false) when either family is off. C(forwarding_families) gives each family's
      answer (C(ipv4), C(ipv6)); IPv6 is C(false) only when the applied profile sets C(net.ipv6.conf.all.forwarding=0).
  returned: always
  type: list
  elements: dict
  sample:
    - name: ocp1-worker-0
      exists: true
      ready: true
      labelled: true
      cordoned: false
      egress_ips: [10.20.0.200]
      vm: ocp1-worker-0
      esxi_host: DC0_C0_H0
      power_state: poweredOn
      nic: {mac: "00:50:56:a1:b2:c3", connected: true, network: ocp-egress-120, portgroup_on_host: true}
      interface: ens224
      interface_state: up
      address: 10.20.0.10/24
      path: ok
      forwarding: true
      forwarding_families: {ipv4: true}
      problems: []
      notes: []
      blackhole_kinds: []
      carrier_loss: null
findings:
  description: Findings of the catalogue (C(id), C(severity), C(message), C(remedy), C(docs), C(objects)), see docs/runbook.md.
  returned: always
  type: list
  elements: dict
  sample: []
wire:
  description: With O(wire), one entry per probe - C(egressip), C(namespace), C(pod), C(outcome) (C(answered), C(no_answer),
    C(not_run)), C(source_ip), C(expected), C(ok), C(reason).
  returned: when O(wire) is set
  type: list
  elements: dict
  sample: [{egressip: payments, namespace: payments, outcome: answered, source_ip: 10.20.0.201, expected: [10.20.0.200, 10.20.0.201], ok: true}]
remediation:
  description:
    - With O(remediate=true) and a broken egress node - C(nodes) unlabelled (or that would be), C(moves) (C(egressip),
      C(ip), C(from), C(to), C(candidates) predicted, C(seconds) after the label patch), C(seconds) until every moved IP
      was assigned elsewhere, C(refused), C(check_mode), C(comparison) with the prediction, C(skipped) and C(deferred)
      (node -> why it keeps its label - set by hand or hosting IPs the collection does not own; the hold-down, the floor
      O(remediation_min_egress_nodes) or the limit O(remediation_limit)).
  returned: when O(remediate=true) found a broken egress node
  type: dict
  sample: {nodes: [ocp1-worker-0], refused: false, check_mode: false, seconds: 1.52,
           moves: [{egressip: payments, ip: 10.20.0.200, from: ocp1-worker-0, to: ocp1-worker-2, candidates: [ocp1-worker-2], seconds: 1.52}]}
initial:
  description: After a remediation, the summary and findings of the first verification (before the labels were removed).
  returned: when a remediation changed something
  type: dict
  sample: {summary: {ok: false, blackholed: 1}, findings: []}
report:
  description:
    - The report (kind C(verify)) for M(ocp.egressip.egressip_report) - summary, rows, findings, wire, remediation.
    - C(cluster) names the cluster - C(name) (the Infrastructure's C(status.infrastructureName)), C(id) (ClusterVersion
      C(spec.clusterID)), C(openshift_version), C(api_url) (the API server the module used, without credentials or query)
      and C(unknown) (why any of them is not known); C(generated_at) is when the report was made (UTC, ISO 8601).
  returned: always
  type: dict
  sample: {kind: verify}
notes:
  description: What could not be read (for example NodeNetworkStates when the NMState API is absent).
  returned: always
  type: list
  elements: str
  sample: []
from_preflight:
  description:
    - C(true) when the result is the one given in O(precomputed) (made by the preflight of this run on its read); the
      module did not read the cluster or vCenter.
  returned: when O(precomputed) was used
  type: bool
  sample: true
diff:
  description: With diff mode and a remediation, the egress-assignable label of each node before and after.
  returned: when diff mode is on and a label is (or would be) removed
  type: dict
  sample: {before: {ocp1-worker-0: {labels: {k8s.ovn.org/egress-assignable: ""}}}, after: {ocp1-worker-0: {labels: {}}}}
'''

from ansible_collections.ocp.egressip.plugins.module_utils.checks import verification_io as verification
from ansible_collections.ocp.egressip.plugins.module_utils.checks.verify_options import option_spec, reusable, REQUIRED_TOGETHER
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_IN_STEP, PROGRESS_NOTES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_nested_argument_spec


def argument_spec():
    spec = option_spec()
    spec.update(
        vcenter_facts=dict(type='dict'),
        precomputed=dict(type='dict'),
        fail_on_error=dict(type='bool', default=True),
    )
    spec.update(vsphere_nested_argument_spec())
    return spec


def step(module, result):
    """Take the lock (only remediation writes), verify (or return what a preflight of this run verified with the same
    options), and fail on error findings when told to."""
    params = module.params
    output = reusable(params['precomputed'], params, module.check_mode)
    if output is not None:
        output['from_preflight'] = True
    else:
        module.take_lock(wanted=params['remediate'])
        result['changed'], output = verification.run(module, params, facts=params['vcenter_facts'])
    result.update(output)
    if params['fail_on_error'] and not result['summary']['ok']:
        module.fail_json(msg=verification.failure_text(result['findings']), **result)


def main():
    module = EgressModule(
        'egressip_verify', argument_spec=argument_spec(), required_together=REQUIRED_TOGETHER,
        libraries=('netaddr',), lock=LOCK_IN_STEP, progress=PROGRESS_NOTES, supports_check_mode=True,
        handed_over=('vcenter_facts', 'precomputed'),
    )
    module.run(step)


if __name__ == '__main__':
    main()
