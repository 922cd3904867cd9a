# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``failure_domains`` option (core/option_specs.py failure_domains_argument_spec, model/failure_domains.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  failure_domains:
    description:
      - vSphere failure domains (C(egressip_vsphere.failure_domains), docs/how-it-works.md, Failure domains) - an OpenShift cluster whose
        nodes run in several vSphere clusters. Empty (default) - one datacenter and cluster, as before.
      - Not empty - every failure domain of the Infrastructure object (C(spec.platformSpec.vsphere.failureDomains)) is a
        domain; an entry overrides its datacenter, vSphere cluster or any port group key, and a domain without an entry
        takes its datacenter and cluster from the Infrastructure topology (C(computeCluster) C(/dc/host/cluster)), the
        rest from the top-level options.
      - Each node is mapped to its domain by its Machine's C(providerSpec.value.workspace) (server, datacenter, resource
        pool), else by its C(topology.kubernetes.io/zone) and C(region) labels; a node matching no domain is an error
        (C(failure_domain_node_unmapped)), never a guess.
      - All domains must be on the one vCenter of the connection options; several vCenters are not supported yet.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The failure domain name, as in the Infrastructure object.
        type: str
        required: true
      datacenter:
        description: The domain's datacenter (default - its Infrastructure topology, then the top-level datacenter).
        type: str
      cluster:
        description: The domain's vSphere cluster (default - the last element of its topology C(computeCluster)).
        type: str
      portgroup:
        description: Overrides of the port group for this domain; unset keys are the top-level port group's.
        type: dict
        suboptions:
          name:
            description: Port group name.
            type: str
          switch_type:
            description: C(standard) or C(distributed).
            type: str
            choices: [standard, distributed]
          switch:
            description: The standard vSwitch or the distributed switch.
            type: str
          vlan_id:
            description: VLAN id, 0 to 4094.
            type: int
          port_binding:
            description: Port binding of a distributed port group.
            type: str
            choices: [static, ephemeral]
          num_ports:
            description: Number of ports of a distributed port group.
            type: int
          elastic:
            description: Whether a static distributed port group grows as needed.
            type: bool
          security:
            description: Security policy (promiscuous, mac_changes, forged_transmits); each changed only when set.
            type: dict
            suboptions:
              promiscuous:
                description: Allow promiscuous mode.
                type: bool
              mac_changes:
                description: Allow MAC address changes.
                type: bool
              forged_transmits:
                description: Allow forged transmits.
                type: bool
'''
