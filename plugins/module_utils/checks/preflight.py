# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight guardrails: pure checks from ONE snapshot of the cluster and vCenter to findings.

DOMAIN.md sections 1, 5 and 6 are the list of what is checked. Nothing here does I/O: the
`preflight` module reads everything once into a snapshot (a plain dict, shape below) and
`run_checks` turns it into findings from the catalogue (`core/catalogue.py`). Where another
module_util already owns a rule (address plan, Machine API, VM NICs, node network), the check
calls it, so preflight and the step that writes report the same finding ids.

Snapshot (every key optional; None for a kind means its API is not served, a kind missing
from the dict means it was not read):

    {
      'infrastructure': Infrastructure 'cluster' (config.openshift.io/v1),
      'network_config': Network 'cluster' (config.openshift.io/v1),
      'network_operator': Network 'cluster' (operator.openshift.io/v1),
      'cluster_version': ClusterVersion 'version',
      'nodes': [Node], 'namespaces': [Namespace], 'pods': [Pod],
      'egressips': [EgressIP] or None,
      'nncps': [NodeNetworkConfigurationPolicy] or None (NMState not installed),
      'nmstates': [NMState] or None, 'nns': [NodeNetworkState] or None,
      'tuneds': [Tuned] or None,
      'machinesets': [MachineSet] or None (no Machine API), 'machines': [Machine] or None,
      'unreadable': {kind: reason},                  # reads that failed (e.g. HTTP 403)
      'vsphere': None (not read) or {
          'about': vCenter's full name and version, 'datacenter': name, 'cluster': name, 'not_found': message or None,
          'hosts': [_vsphere_facts.host_network_facts],
          'distributed_switches': [_vsphere_facts.distributed_switch_facts
                                   (port groups may carry 'backing_type')],
          'opaque_networks': [{'name', 'type'}],
          'vms': [VM facts of clients/vcenter.read_vm_nics: {'name', 'moid', 'uuid', 'host', 'power_state', 'nics'}],
      },
      'config': the requested configuration: {'acknowledge_unsupported', 'vsphere': {'datacenter',
                'cluster', 'portgroup', 'accept_untested_nsx'}, 'network', 'nodes', 'objects'}
                (the public variables schema without the egressip_ prefix),
    }

`mode` says what to expect: 'plan' (before enable writes anything: what the collection will
create is reported as info) or 'audit' (the configuration should be in place: anything
missing is a problem), used by verify and the support report. `align_machines` (plan mode only) says whether
enable's vSphere network step will align the Machines' providerSpec with their VMs' NICs, so a Machine/VM NIC count
mismatch that step fixes is a notice rather than an error.

The checks live by area: preflight_cluster.py (platform, version, support, forwarding, nodeNetworking, NMState, Machine
API), preflight_vsphere.py (VMs, switches, port groups, NSX), preflight_egress.py (subnets, address plan, route metric,
egress nodes and capacity, namespaces and pods, EgressIPs, the EgressIP plan), all reading one PreflightContext
(preflight_context.py). This file holds the order they run in (``CHECKS``) and the cluster facts of the summary.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_context as pc
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_cluster
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_vsphere
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_egress


# --- reads that failed ------------------------------------------------------------------------

def check_unreadable(ctx):
    unreadable = ctx.snapshot.get('unreadable') or {}
    if not unreadable:
        return []
    return [catalogue_finding(
        'preflight_read_incomplete',
        'Preflight could not read %s; the checks that need them were skipped.' % '; '.join(
            '%s (%s)' % (kind, reason) for kind, reason in sorted(unreadable.items())),
        objects=[{'kind': kind} for kind in sorted(unreadable)])]


CHECKS = (
    check_unreadable,
    preflight_egress.check_variables,
    preflight_egress.check_bounds,
    preflight_cluster.check_platform,
    preflight_cluster.check_network_type,
    preflight_cluster.check_openshift_version,
    preflight_cluster.check_acknowledgement,
    preflight_cluster.check_ip_forwarding,
    preflight_cluster.check_node_networking,
    preflight_cluster.check_nmstate,
    preflight_cluster.check_nmstate_version,
    preflight_cluster.check_egress_ips_in_policies,
    preflight_vsphere.check_vsphere_read,
    preflight_vsphere.check_node_vms,
    preflight_cluster.check_machine_api,
    preflight_cluster.check_machine_nic_counts,
    preflight_vsphere.check_standard_portgroup,
    preflight_vsphere.check_distributed_portgroup,
    preflight_vsphere.check_nsx,
    preflight_egress.check_cluster_network_overlap,
    preflight_egress.check_address_plan,
    preflight_egress.check_route_metric,
    preflight_egress.check_reachability,
    preflight_egress.check_node_selector,
    preflight_egress.check_egress_nodes,
    preflight_egress.check_capacity,
    preflight_egress.check_egressip_plan,
    preflight_egress.check_udn_namespaces,
    preflight_egress.check_host_network_pods,
    preflight_egress.check_primary_egressips,
)

SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


def run_checks(snapshot, mode=pc.PLAN, align_machines=True):
    """Every finding for one snapshot, errors first (stable order within a severity).

    align_machines: whether the enable run that follows aligns the Machines' providerSpec with their VMs' NICs
    (the vSphere network step's align_machines); read in plan mode only."""
    ctx = pc.PreflightContext(snapshot, mode, align_machines)
    findings, seen = [], set()
    for check in CHECKS:
        for item in check(ctx):
            # two rule owners may report the same problem (the address plan is validated by both steps)
            if (item['id'], item['message']) not in seen:
                seen.add((item['id'], item['message']))
                findings.append(item)
    return sorted(findings, key=lambda item: SEVERITY_ORDER[item['severity']])


def cluster_facts(snapshot):
    """What the summary and the report show about the cluster: versions, platform, forwarding, counts."""
    infrastructure = snapshot.get('infrastructure')
    state = preflight_cluster.forwarding_state(snapshot)
    nodes = snapshot.get('nodes') or []
    return {
        'openshift_version': preflight_cluster.cluster_version(snapshot),
        'platform': _dig(infrastructure, 'status', 'platformStatus', 'type') or _dig(infrastructure, 'status', 'platform'),
        'network_type': _dig(snapshot.get('network_config'), 'status', 'networkType') or _dig(snapshot.get('network_config'), 'spec', 'networkType'),
        'ip_forwarding': state['ip_forwarding'],
        'forwarding_by_hostname': state['by_hostname'],
        'nodes': len(nodes),
        'egress_assignable_nodes': sorted(_name(node) for node in nodes if EGRESS_ASSIGNABLE_LABEL in _labels(node)),
        'machine_api': bool(snapshot.get('machines')),
        'nmstate': snapshot.get('nncps') is not None,
        'egressips': len(snapshot.get('egressips') or []),
    }
