#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_info
short_description: Read the EgressIP objects of an OVN-Kubernetes cluster and where each egress IP can go
version_added: 0.1.0
description:
  - Reads every C(EgressIP) object (C(k8s.ovn.org/v1)) with its spec and status, and every node with the
    OVN-Kubernetes annotations that decide where an egress IP can be hosted
    (C(k8s.ovn.org/host-cidrs), C(k8s.ovn.org/node-primary-ifaddr), C(k8s.ovn.org/secondary-host-egress-ips)).
  - For each egress IP, tells whether it falls on the primary network (inside a node's primary interface
    subnet) or on a secondary network (the longest-prefix match over the node's other host CIDRs, global
    unicast only) and which subnet, as the OVN-Kubernetes cluster manager decides; which egress-assignable
    nodes could host it; and which node it is assigned to now.
  - Costs two API requests up to 500 Nodes and 500 EgressIPs, one list of each; a list is read in pages of 500 items beyond that.
  - Read-only; this module never changes anything in the cluster.
requirements:
  - netaddr >= 1.3.0
  - jmespath >= 1.0.1 (only with O(query))
options:
  query:
    description:
      - A JMESPath expression applied to the result; the module then returns only RV(query_result).
      - The expression is checked before any API request, so a syntax error fails at once and names the expression.
    type: str
extends_documentation_fragment:
  - ocp.egressip.k8s_auth
  - ocp.egressip.common
  - ocp.egressip.common.read_only
notes:
  - A malformed node annotation does not fail the module; the node is reported with what could be read and
    RV(notes) says what was ignored and why.
  - Fails with a clear message when the cluster does not serve the EgressIP API (the network plugin is not OVN-Kubernetes).
seealso:
  - module: ocp.egressip.vsphere_network_info
'''

EXAMPLES = r'''
- name: Every EgressIP, node and classification (connection from K8S_AUTH_*, KUBECONFIG or ~/.kube/config)
  ocp.egressip.egressip_info:
  register: egress

- name: Egress IPs that no node can host
  ansible.builtin.debug:
    msg: "{{ egress.egressips | map(attribute='ips') | flatten | selectattr('network', 'eq', 'none') | map(attribute='ip') }}"

- name: Names of the EgressIP objects with an unassigned IP, with a given kubeconfig and context
  ocp.egressip.egressip_info:
    kubeconfig: /home/admin/cluster-a/kubeconfig
    context: admin
    query: "egressips[?!all_assigned].name"
  register: unassigned

- name: Secondary subnets of the egress-assignable nodes, with a token
  ocp.egressip.egressip_info:
    host: https://api.cluster-a.example.com:6443
    api_key: "{{ cluster_token }}"
    ca_cert: /etc/pki/cluster-a-ca.crt
    query: "nodes[?egress_assignable].{node: name, subnets: secondary_subnets}"
'''

RETURN = r'''
egressips:
  description: Every EgressIP object, sorted by name.
  returned: success, when O(query) is not set
  type: list
  elements: dict
  contains:
    name:
      description: Object name.
      type: str
      sample: payments
    resource_version:
      description: C(metadata.resourceVersion).
      type: str
      sample: "48213"
    mark:
      description: The C(k8s.ovn.org/egressip-mark) annotation set by the cluster manager, C(null) until set.
      type: str
      sample: "50000"
    egress_ips:
      description: C(spec.egressIPs).
      type: list
      elements: str
      sample: [10.20.0.200, 10.20.0.201]
    namespace_selector:
      description: C(spec.namespaceSelector).
      type: dict
      sample: {matchLabels: {team: payments}}
    pod_selector:
      description: C(spec.podSelector), C(null) when not set.
      type: dict
      sample: null
    status_items:
      description: C(status.items), the current assignments.
      type: list
      elements: dict
      sample: [{node: ocp1-worker-0, egress_ip: 10.20.0.200}]
    all_assigned:
      description: Whether every IP of the object is assigned to a node.
      type: bool
      sample: false
    ips:
      description: One entry per IP in C(spec.egressIPs), in that order.
      type: list
      elements: dict
      contains:
        ip:
          description: The egress IP.
          type: str
          sample: 10.20.0.200
        network:
          description:
            - C(primary) when inside a node's primary interface subnet, C(secondary) when inside one of the
              nodes' other host CIDRs, C(none) when no node has a matching network.
          type: str
          sample: secondary
        subnet:
          description: The subnet that matched (the most specific over all nodes), C(null) for C(none).
          type: str
          sample: 10.20.0.0/24
        assigned_node:
          description: The node hosting the IP according to C(status.items), C(null) when unassigned.
          type: str
          sample: ocp1-worker-0
        candidate_nodes:
          description: Egress-assignable nodes having that network, whatever their readiness (sorted).
          type: list
          elements: str
          sample: [ocp1-worker-0, ocp1-worker-1]
        node_address_conflicts:
          description: Nodes that hold this very address (OVN-K refuses such an egress IP).
          type: list
          elements: str
          sample: []
    spec:
      description: The object's C(spec) as stored.
      type: dict
      sample: {egressIPs: [10.20.0.200], namespaceSelector: {matchLabels: {team: payments}}}
    status:
      description: The object's C(status) as stored (empty when none).
      type: dict
      sample: {items: [{node: ocp1-worker-0, egressIP: 10.20.0.200}]}
nodes:
  description: Every node, sorted by name.
  returned: success, when O(query) is not set
  type: list
  elements: dict
  contains:
    name:
      description: Node name.
      type: str
      sample: ocp1-worker-0
    egress_assignable:
      description: Whether the node has the C(k8s.ovn.org/egress-assignable) label.
      type: bool
      sample: true
    ready:
      description: Whether the node's C(Ready) condition is C(True).
      type: bool
      sample: true
    provider_id:
      description: C(spec.providerID), C(vsphere://<BIOS UUID>) on vSphere.
      type: str
      sample: vsphere://4237a1b2-0c1d-2e3f-4a5b-6c7d8e9f0a1b
    host_cidrs:
      description: The C(k8s.ovn.org/host-cidrs) annotation, parsed; C(null) when absent or not valid JSON.
      type: list
      elements: str
      sample: [10.20.0.11/24, 192.168.10.14/24]
    primary_ifaddr:
      description: The C(k8s.ovn.org/node-primary-ifaddr) annotation, parsed; C(null) when absent or not valid JSON.
      type: dict
      sample: {ipv4: 192.168.10.14/24}
    secondary_host_egress_ips:
      description: The C(k8s.ovn.org/secondary-host-egress-ips) annotation, parsed; C(null) when absent or not valid JSON.
      type: list
      elements: str
      sample: [10.20.0.200]
    primary_subnets:
      description: Subnets of the primary interface addresses.
      type: list
      elements: str
      sample: [192.168.10.0/24]
    secondary_subnets:
      description: Subnets that can host a secondary egress IP on this node (host CIDRs minus primary, global unicast).
      type: list
      elements: str
      sample: [10.20.0.0/24]
    assigned_egress_ips:
      description: Egress IPs assigned to this node according to the EgressIP objects' status.
      type: list
      elements: dict
      sample: [{egressip: payments, ip: 10.20.0.200}]
    notes:
      description: What could not be read from this node's annotations, and why.
      type: list
      elements: str
      sample: []
egress_assignable_nodes:
  description: Names of the nodes labelled C(k8s.ovn.org/egress-assignable), sorted.
  returned: success, when O(query) is not set
  type: list
  elements: str
  sample: [ocp1-worker-0, ocp1-worker-1, ocp1-worker-2]
notes:
  description: Everything the module ignored (malformed annotations, malformed IPs), one sentence each.
  returned: success, when O(query) is not set
  type: list
  elements: str
  sample: ["node ocp1-worker-2: annotation k8s.ovn.org/host-cidrs is not valid JSON (Expecting value: line 1 column 1 (char 0)); ignored"]
query_result:
  description: The result of O(query) applied to the result the module returns without it.
  returned: success, when O(query) is set
  type: raw
  sample: [payments]
'''

from ansible_collections.ocp.egressip.plugins.module_utils.model.egressip_facts import egressip_facts
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.core.query import compile_query, run_query


def run(module, _result=None):
    expression = module.params['query']
    compiled = None
    if expression is not None:
        module.require('jmespath', reason='to use the query option')
        compiled = compile_query(expression)

    egressips = kube.list_objects(module.k8s, kube.EGRESSIPS)
    nodes = kube.list_objects(module.k8s, kube.NODES)
    result = egressip_facts(nodes, egressips)
    if compiled is not None:
        return dict(query_result=run_query(compiled, expression, result))
    return result


def main():
    module = EgressModule(
        'egressip_info', argument_spec=dict(query=dict(type='str')),
        libraries=('netaddr',), supports_check_mode=True,
    )
    module.run(run)


if __name__ == '__main__':
    main()
