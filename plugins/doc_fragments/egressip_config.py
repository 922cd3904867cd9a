# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The requested configuration (the public variables file) as module options: the documentation of
``config_argument_spec()`` in module_utils/snapshot/cluster.py, shared by the modules that read the
preflight snapshot (preflight, egressip_support_report); its ``network`` option is the egressip_network fragment.
``ocp.egressip.egressip_config.portgroup_failover`` and ``.portgroup_verify``: its ``portgroup`` option alone, as
egressip_failover and egressip_verify take it (the one ``portgroup_argument_spec()``), rewritten by
plugin_utils/fragments.py where those modules use a key differently."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.fragments import only_options, rewritten


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  acknowledge_unsupported:
    description:
      - Acknowledges that EgressIP on a secondary host interface is outside Red Hat support on vSphere
        (Red Hat documents it for bare metal only). Without it, a requested secondary network is an error finding.
      - The public variable is C(egressip_acknowledge_unsupported).
    type: bool
    default: false
  datacenter:
    description:
      - Name of the vSphere datacenter (C(egressip_vsphere.datacenter)). With O(cluster), enables the vCenter checks.
    type: str
  cluster:
    description:
      - Name of the vSphere cluster whose hosts run the node VMs (C(egressip_vsphere.cluster)).
    type: str
  portgroup:
    description:
      - The secondary port group (C(egressip_vsphere.portgroup)).
    type: dict
    suboptions:
      name:
        description: Name of the port group.
        type: str
        required: true
      switch_type:
        description: A standard port group (on every host of the cluster) or a distributed port group.
        type: str
        choices: [standard, distributed]
        default: standard
      switch:
        description: The standard vSwitch (on every host) or the distributed switch that holds the port group.
        type: str
      vlan_id:
        description: The VLAN of the port group (0 untagged, up to 4094).
        type: int
  accept_untested_nsx:
    description:
      - Lowers the NSX finding from error to warning. It applies when the port group is backed by NSX (opaque network or
        NSX distributed port group), where address learning limits (SpoofGuard, IP discovery) may drop egress IPs.
        This combination is untested and unconfirmed (C(egressip_vsphere.accept_untested_nsx)).
    type: bool
    default: false
  nodes:
    description:
      - Which nodes are egress nodes (C(egressip_nodes)).
    type: dict
    suboptions:
      selector:
        description:
          - Labels a node must carry, as a map of label to value (for example C(node-role.kubernetes.io/worker) with an
            empty value) or as a label selector with C(matchLabels)/C(matchExpressions). Empty selects every node.
        type: dict
        default: {}
  objects:
    description:
      - The EgressIP objects (C(egressip_objects)).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Name of the EgressIP object.
        type: str
        required: true
      egress_ips:
        description: Its egress IPs, on the secondary network.
        type: list
        elements: str
        required: true
      namespace_selector:
        description: Label selector of the namespaces whose pods use the egress IPs.
        type: dict
        required: true
      pod_selector:
        description: Label selector of the pods within those namespaces (all pods when omitted).
        type: dict
  read_pods:
    description:
      - List the pods of the cluster (one request) to find host-networked pods the EgressIP objects would select.
        Set V(false) on very large clusters to skip that check.
    type: bool
    default: true
'''


_SWITCH = ('        description: The standard vSwitch (on every host) or the distributed switch that holds the port group.\n',
           '        description: The standard vSwitch (on every host) or the distributed switch that holds the port group'
           ' (required for a distributed one).\n')
ModuleDocFragment.PORTGROUP_FAILOVER = rewritten(
    only_options(ModuleDocFragment.DOCUMENTATION, 'portgroup'),
    ('      - The secondary port group (C(egressip_vsphere.portgroup)).\n',
     '      - The secondary port group (C(egressip_vsphere.portgroup)); required for V(disconnect_nic).\n'),
    _SWITCH,
    ('        description: The VLAN of the port group (0 untagged, up to 4094).\n',
     '        description: Accepted so C(egressip_vsphere.portgroup) can be passed as it is; not used.\n'),
)
ModuleDocFragment.PORTGROUP_VERIFY = rewritten(
    only_options(ModuleDocFragment.DOCUMENTATION, 'portgroup'),
    _SWITCH,
    ('        description: The VLAN of the port group (0 untagged, up to 4094).\n', """        description:
          - The VLAN the port group must have on the ESXi host each VM runs on now (C(blackhole_portgroup_vlan_mismatch));
            without it, the VLAN most hosts give the port group.
"""),
)
