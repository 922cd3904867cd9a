#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_discover
short_description: Describe an EgressIP setup made by hand as the collection's variables file, and record the assignment
version_added: 0.1.0
description:
  - Reads the cluster and vCenter once (as M(ocp.egressip.preflight) does) and describes the secondary egress network that
    exists on a cluster configured without this collection, in the public variables schema that the C(enable) playbook reads
    (C(egressip_vsphere), C(egressip_network), C(egressip_nodes), C(egressip_objects); see C(docs/variables.md)), so that
    C(enable) with those variables changes only what closes gaps and moves no egress IP.
  - "Discovers: the secondary subnet (node C(k8s.ovn.org/host-cidrs) minus the primary network; the one holding the EgressIP
    objects' addresses), and on a dual-stack NIC the subnet of the other family that the same interfaces hold (IPv6 /128
    addresses and link-local addresses are no subnets), giving C(egressip_network) an C(ipv6) part, or an IPv6-only network;
    each node's secondary NIC (the NodeNetworkState interface holding the base address gives the MAC, the MAC
    the VM NIC, its backing the port group, standard or distributed, and the VLAN), whether it is connected, its base address and
    the NMState policies configuring it; per family the gateway and route metric of the default route through it and a node
    address range holding every base address and no egress IP; a label selecting exactly the egress nodes (else their hostnames); the IP
    forwarding in place per family (C(ipForwarding: Global), or the Tuned profile the Node Tuning Operator gives each egress node); the
    EgressIP objects (copied exactly; objects of the OpenShift SDN migration, C(egressip-<namespace>), are named as such; objects on
    the primary network are left out and untouched); the MachineSets building the egress nodes and whether they list the port group."
  - Returns the role variables adoption needs besides the public ones (RV(overrides)) and what C(enable) would change
    (RV(adoption_plan)), and the findings - this module's (ids C(migrate_*)) and preflight's in C(plan) mode over the discovered
    variables, so every problem C(enable) would meet shows up now.
  - Also returns RV(record), the assignment of every egress IP and the addresses of every node, and with O(baseline) compares it
    with an earlier record (RV(comparison)); moved or unassigned egress IPs and dropped node addresses are error findings.
  - Read-only; this module never changes anything in the cluster or in vCenter.
requirements:
  - netaddr >= 1.3.0
  - pyvmomi >= 9.0.0
options:
  hints:
    description:
      - What you already know; each given key is used instead of being discovered. Unknown keys are refused.
    type: dict
    default: {}
    suboptions:
      datacenter:
        description: vCenter datacenter of the node VMs (default - the Infrastructure object's one failure domain).
        type: str
      cluster:
        description: vSphere cluster of the node VMs (default - the Infrastructure object's one failure domain).
        type: str
      portgroup:
        description:
          - The egress port group name, or the whole C(egressip_vsphere.portgroup) dict (C(name), C(switch_type), C(switch),
            C(vlan_id)) to take as it is.
        type: raw
      cidr:
        description:
          - The secondary egress subnet (needed only when the nodes hold addresses in several secondary subnets of one family).
          - IPv4, or IPv6 for an IPv6-only network (then an IPv4 subnet on the same NIC is left out).
        type: str
      gateway:
        description: The gateway of the subnet (needed only when no default route through the secondary NIC names it).
        type: str
      node_address_range:
        description: The node address range (needed only when no single range holds the base addresses without an egress IP).
        type: str
      ipv6:
        description:
          - The IPv6 family of the secondary network, as for the IPv4 keys above (C(egressip_network.ipv6)).
          - Needed only when the findings name C(migrate_hints.ipv6.*) - several IPv6 subnets on the secondary NIC, no IPv6
            default route naming a gateway inside the subnet (a link-local next hop from router advertisements is not), or no
            single IPv6 range.
        type: dict
        suboptions:
          cidr:
            description: The IPv6 secondary egress subnet (the IPv4 one is then still the one the same NIC holds, if any).
            type: str
          gateway:
            description: The IPv6 gateway (global address inside the IPv6 subnet).
            type: str
          node_address_range:
            description: The IPv6 node address range.
            type: str
  acknowledge_unsupported:
    description:
      - Written as C(egressip_acknowledge_unsupported) into the variables; C(enable) refuses to run without it.
    type: bool
    default: false
  mode:
    description:
      - V(discover) reads cluster and vCenter and describes the setup.
      - V(record) reads only the Kubernetes kinds the record needs (Nodes, EgressIPs, NMState policies, Tuned, Infrastructure,
        ClusterVersion) and returns RV(record) (and RV(comparison) with O(baseline)); no vCenter connection.
    type: str
    choices: [discover, record]
    default: discover
  baseline:
    description:
      - A RV(record) of an earlier run of this module (or of M(ocp.egressip.egressip_upgrade_check)) to compare the current one with.
    type: dict
extends_documentation_fragment:
  - ocp.egressip.k8s_auth
  - ocp.egressip.vsphere_auth.nested
  - ocp.egressip.common
  - ocp.egressip.common.read_only
notes:
  - The C(migrate) role writes RV(variables) and RV(overrides) into a variables file and, with C(migrate_adopt=true), runs the
    enable roles with them and compares the records taken before and after; see C(docs/lifecycle.md).
  - Because OVN-Kubernetes has no failback, an egress IP that moved at any time between two records is still elsewhere when the
    second is taken, so comparing two records catches every move in between.
  - A hand-made NMState policy that turns IPv6 C(autoconf) or C(dhcp) on for the secondary NIC is reported
    (C(migrate_ipv6_dynamic)); the collection's policy sets the IPv6 base address statically with both off.
seealso:
  - module: ocp.egressip.preflight
  - module: ocp.egressip.egressip_upgrade_check
'''

EXAMPLES = r'''
- name: Describe the hand-made setup of the cluster
  ocp.egressip.egressip_discover:
    acknowledge_unsupported: true
  register: discovered

- name: Write the variables file
  ansible.builtin.copy:
    content: "{{ discovered.variables | combine(discovered.overrides) | to_nice_yaml(indent=2) }}"
    dest: cluster-a.yml
    mode: '0644'

- name: When two subnets are present, say which one carries the egress IPs
  ocp.egressip.egressip_discover:
    hints:
      cidr: 10.20.0.0/24
      datacenter: DC1
      cluster: Cluster1

- name: After a change, compare with the record taken before it
  ocp.egressip.egressip_discover:
    mode: record
    baseline: "{{ discovered.record }}"
  register: after
  failed_when: not after.comparison.ok
'''

RETURN = r'''
variables:
  description:
    - The public variables (docs/variables.md) describing what exists; C(null) when discovery could not complete (see RV(findings)).
  returned: with O(mode=discover)
  type: dict
  sample:
    egressip_acknowledge_unsupported: true
    egressip_vsphere: {datacenter: DC0, cluster: DC0_C0, portgroup: {name: egress-120, switch_type: standard, switch: vSwitch1, vlan_id: 120}}
    egressip_network: {cidr: 10.30.0.0/24, gateway: 10.30.0.1, node_address_range: 10.30.0.11-10.30.0.13, route_metric: 150,
                       ip_forwarding: per_interface, ipv6: {cidr: "fd00:30::/64", gateway: "fd00:30::1",
                                                            node_address_range: "fd00:30::11-fd00:30::13", route_metric: 160}}
    egressip_nodes: {selector: {egress.example.com/gateway: "true"}}
    egressip_objects: [{name: payments, egress_ips: [10.30.0.200, 10.30.0.201], namespace_selector: {matchLabels: {team: payments}}}]
overrides:
  description:
    - Role variables adoption needs besides the public ones (C(egressips_adopt), C(node_network_interface_name),
      C(egress_nodes_exclusive), C(node_network_replace_hand_made)); RV(override_reasons) says why each is set.
    - C(node_network_replace_hand_made) is written V(false) when hand-made NMState policies duplicate the collection's;
      set it to V(true) to have M(ocp.egressip.node_nic_address) delete them once its own policy is Available.
  returned: with O(mode=discover)
  type: dict
  sample: {egressips_adopt: true, node_network_interface_name: ens224}
override_reasons:
  description: Why each entry of RV(overrides) is set.
  returned: with O(mode=discover)
  type: dict
networks:
  description: Every network a node VM has a NIC on (C(network), C(primary), C(nodes)), as vCenter shows it.
  returned: with O(mode=discover)
  type: list
  elements: dict
nodes:
  description:
    - One entry per egress node found - C(node), C(vm), C(host), C(address) (of the first family), C(ipv6_address) (dual stack
      only), C(interface) (kernel name), C(mac), C(network),
      C(adapter), C(connected), C(start_connected), C(egress_assignable), C(capable), C(not_capable_because), C(policies),
      C(forwarding) (how forwarding is on now), C(egress_ips) (the IPs it hosts).
  returned: with O(mode=discover)
  type: list
  elements: dict
egressips:
  description: One entry per EgressIP object - C(name), C(egress_ips), C(network), C(owned), C(sdn_converted_namespace), C(action).
  returned: with O(mode=discover)
  type: list
  elements: dict
portgroup:
  description: The egress port group as found, with C(hosts_missing) (standard port groups) and the VLANs seen.
  returned: with O(mode=discover)
  type: dict
machinesets:
  description: The MachineSets building the egress nodes, their device networks and whether the port group is among them.
  returned: with O(mode=discover)
  type: list
  elements: dict
adoption_plan:
  description: What C(enable) with the discovered variables would change (the gaps it closes), one sentence each.
  returned: with O(mode=discover)
  type: list
  elements: str
findings:
  description: Findings, errors first (ids in C(docs/runbook.md)).
  returned: always
  type: list
  elements: dict
summary:
  description: Counts per severity, C(ok) (no error), C(complete) (the variables could be built).
  returned: always
  type: dict
record:
  description:
    - The assignment of every egress IP (C(egress_ips) - C(egressip), C(ip), C(node), C(network)), every node's host-cidrs and label
      (C(nodes)), the objects carrying the collection's label (C(managed_objects)), the OpenShift version and the cluster's
      infrastructure name. Deterministic - the same cluster state gives the same record.
  returned: always
  type: dict
comparison:
  description:
    - With O(baseline) - C(moved), C(unassigned), C(removed), C(dropped_addresses), C(nodes_gone) (problems) and C(newly_assigned),
      C(added), C(labels_added), C(labels_removed), C(version); C(ok) is true when nothing moved, was unassigned or removed and no
      address was dropped.
  returned: with O(baseline)
  type: dict
changes:
  description: With O(baseline), one line per change (also those that are no problem - new assignments, labels added).
  returned: with O(baseline)
  type: list
  elements: str
cluster:
  description:
    - The cluster the report is about - C(name) (the Infrastructure's C(status.infrastructureName), the prefix of its vCenter
      objects), C(id) (ClusterVersion C(spec.clusterID)), C(openshift_version), C(api_url) (the API server the module used,
      without credentials or query) and C(unknown) (why any of them is not known; HTTP 403 or 404 on those reads is no failure).
    - Read from the same lists as the discovery (no request of its own).
  returned: with O(mode=discover)
  type: dict
  sample: {name: ocp1-x7k2p, id: 5c1e6a52-8f0e-5b4c-9d6f-3c0b0d6f2a11, openshift_version: 4.16.21,
           api_url: "https://api.ocp1.example.com:6443", unknown: {}}
generated_at:
  description: When the report was made, UTC, ISO 8601 (C(2026-11-30T10:00:00Z)).
  returned: with O(mode=discover)
  type: str
  sample: "2026-11-30T10:00:00Z"
report:
  description:
    - The migrate report for machines - RV(cluster), RV(generated_at), RV(variables), RV(overrides), RV(networks), RV(nodes),
      RV(egressips), RV(portgroup), RV(machinesets), RV(adoption_plan), RV(findings), RV(summary) and, with O(baseline),
      C(adoption_check) (the problems of RV(comparison) only, so a rerun that changes nothing gives the same report but for
      RV(generated_at); the C(migrate) role then keeps the file, and its time, as it is).
  returned: with O(mode=discover)
  type: dict
markdown:
  description:
    - The migrate report for people (the cluster and the time, discovered settings, nodes, EgressIP objects, findings; with
      O(baseline), the check).
  returned: with O(mode=discover)
  type: str
'''

from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as _identity
from ansible_collections.ocp.egressip.plugins.module_utils.model import lifecycle as _lifecycle
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate as _migrate
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_facts as _migrate_facts
from ansible_collections.ocp.egressip.plugins.module_utils.reports import migrate as _migrate_report
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, dedupe, summarize
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.cluster import read_cluster, read_vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_nested_argument_spec

RECORD_SKIP = ('pods', 'namespaces', 'network_config', 'network_operator', 'nmstates', 'nns', 'machinesets', 'machines')


def argument_spec():
    spec = dict(
        hints=dict(type='dict', default={}, options=dict(
            datacenter=dict(type='str'),
            cluster=dict(type='str'),
            portgroup=dict(type='raw'),
            cidr=dict(type='str'),
            gateway=dict(type='str'),
            node_address_range=dict(type='str'),
            ipv6=dict(type='dict', options=dict(cidr=dict(type='str'), gateway=dict(type='str'), node_address_range=dict(type='str'))),
        )),
        acknowledge_unsupported=dict(type='bool', default=False),
        mode=dict(type='str', choices=['discover', 'record'], default='discover'),
        baseline=dict(type='dict'),
    )
    spec.update(vsphere_nested_argument_spec())
    return spec


def read_discovery(module):
    params = module.params
    if params['mode'] == 'record':
        return read_cluster(module.k8s, skip=RECORD_SKIP)
    snapshot = read_cluster(module.k8s, skip=('pods',))
    snapshot['vsphere'] = None
    datacenter, cluster, _findings = _migrate_facts.vsphere_target(snapshot.get('infrastructure'), params['hints'] or {})
    if datacenter and cluster:
        vcenter = module.vcenter(reason='to read the port group and the node VM NICs')
        snapshot['vsphere'] = read_vcenter(vcenter, datacenter, cluster, snapshot['nodes'])
    return snapshot


def compare_with(result, baseline):
    problems = _lifecycle.valid_record(baseline)
    if problems:
        return [catalogue_finding('lifecycle_baseline_invalid', 'The baseline cannot be used: %s.' % '; '.join(problems),
                                  objects=[{'kind': 'option', 'name': 'baseline'}])]
    if baseline.get('cluster') and result['record'].get('cluster') and baseline['cluster'] != result['record']['cluster']:
        return [catalogue_finding(
            'lifecycle_baseline_invalid', 'The baseline was taken on cluster %s, this is %s.' % (baseline['cluster'], result['record']['cluster']),
            objects=[{'kind': 'option', 'name': 'baseline'}])]
    result['comparison'] = _lifecycle.compare(baseline, result['record'])
    return _lifecycle.comparison_findings(result['comparison'], 'since the baseline')


def run(module, _result=None):
    params = module.params
    snapshot = read_discovery(module)
    if params['mode'] == 'record':
        result = {'record': _lifecycle.record(snapshot), 'findings': []}
    else:
        result = _migrate.discover(snapshot, params['hints'] or {}, params['acknowledge_unsupported'])
    if params['baseline'] is not None:
        result['findings'] = dedupe(compare_with(result, params['baseline']) + result['findings'])
    summary = dict(result.get('summary') or {})
    summary.update(summarize(result['findings']))
    summary['ok'] = summary[ERROR] == 0
    result['summary'] = summary
    if 'comparison' in result:
        result['changes'] = _lifecycle.changes_text(result['comparison'])
    if params['mode'] == 'discover':
        result.update(_identity.identity(snapshot, module.k8s.host, _identity.utc_now()))
        result['markdown'] = _migrate_report.render_markdown(result)
        result['report'] = _migrate_report.report_data(result)
    return result


def main():
    module = EgressModule('egressip_discover', argument_spec=argument_spec(), libraries=('netaddr',), supports_check_mode=True)
    module.run(run)


if __name__ == '__main__':
    main()
