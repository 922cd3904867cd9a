#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: preflight
short_description: Check a cluster and vCenter for secondary-network EgressIP before anything is written
version_added: 0.1.0
description:
  - Reads the OpenShift cluster and, when O(datacenter) and O(cluster) are given, the vCenter once, then runs every
    guardrail of the collection on that one snapshot and returns the findings, each with a stable C(id),
    a C(severity) (C(error), C(warning), C(info)), a C(message), a C(remedy), a C(docs) anchor in C(docs/runbook.md)
    and the objects it concerns.
  - "Checks: platform VSphere, network type OVNKubernetes, OpenShift 4.14 or newer; the acknowledgement that
    secondary-network EgressIP on vSphere is outside Red Hat support; IP forwarding for the secondary NIC;
    Infrastructure C(nodeNetworking) pinning the primary subnet; the Kubernetes NMState Operator; egress IPs
    configured in NMState policies; MachineSets without the secondary device and Machines whose device count
    differs from their VM's NICs; nodes without a VM; the standard vSwitch or distributed switch and the port group
    (present on every host, same VLAN); NSX-backed networks; the secondary cidr against the cluster, service and
    OVN-Kubernetes internal networks, the primary machine network and other host subnets; the address plan; the
    gateway route metric; the reachability check; the egress node selector and capacity (at least IPs per
    EgressIP object + 1 capable nodes); namespaces on a user-defined primary network; host-networked pods;
    EgressIPs on the primary network and which of them newly labelled nodes could take."
  - Kubernetes costs one list request per kind; vCenter a fixed number of batched reads, whatever the number of nodes.
  - Fails when any error finding exists, unless O(fail_on_error=false); the findings are returned either way.
  - Read-only; this module never changes anything in the cluster or in vCenter, except the probe pods of a wire check
    that O(verify) asks for (created and deleted again, as M(ocp.egressip.egressip_verify) does).
requirements:
  - netaddr >= 1.3.0
  - pyvmomi >= 9.0.0 (only with O(datacenter) and O(cluster))
options:
  mode:
    description:
      - V(plan) checks before the collection writes anything (what enable would create is reported as C(info)).
      - V(audit) expects the configuration in place (verify, support report), so anything missing is an error.
    type: str
    choices: [plan, audit]
    default: plan
  align_machines:
    description:
      - Whether the enable run that follows aligns existing Machines with their VMs (the vSphere network step's
        C(align_machines), role variable C(vsphere_network_align_machines)).
      - In O(mode=plan), a Machine of a selected egress node whose VM has exactly one NIC more than its C(providerSpec)
        lists devices, that NIC on the configured port group, is then reported as C(info) (enable appends the port group to
        the Machine's C(providerSpec)) instead of an error. Every other Machine/VM NIC count mismatch stays an error.
      - Ignored in O(mode=audit).
    type: bool
    default: true
  fail_on_error:
    description:
      - Fail when any finding has severity C(error). With V(false) the module always succeeds and the caller decides.
    type: bool
    default: true
  variables:
    description:
      - The public variables file as a dictionary of every C(egressip_*) variable (C(egressip_network), C(egressip_objects), ...),
        as the C(ocp.egressip.preflight) role passes it. When given, it replaces O(acknowledge_unsupported), O(datacenter),
        O(cluster), O(portgroup), O(accept_untested_nsx), O(network), O(nodes) and O(objects).
      - It is first checked against the schema of C(docs/variables.md) - an unknown variable or key (with the nearest known one),
        a value of the wrong type, out of bounds (C(route_metric) 0 to 4294967295, port group names up to 80 characters,
        C(vlan_id) 0 to 4094) or a malformed selector is an error finding (C(variables_unknown_key), C(variables_invalid))
        naming the public variable; the cluster and vCenter are then not read.
    type: dict
  permissions:
    description:
      - The playbook whose Kubernetes permissions to check first (docs/rbac.md), with one SelfSubjectAccessReview per verb and
        resource it uses. A missing one is the error finding C(kube_permission_missing) naming each verb and resource and the
        ClusterRole file (C(rbac/<playbook>.yml)) to bind; the cluster and vCenter are then not read.
      - Unset, no permission is checked.
    type: str
    choices: [enable, verify, failover_drill, support_report, migrate, upgrade, disable, render, guard]
  permissions_only:
    description:
      - Check only the permissions of O(permissions) (a read-only check before a playbook's first write); nothing else is read.
    type: bool
    default: false
  lock_namespace:
    description: The namespace of the cluster lock's Lease (C(egressip_lock.namespace)), where its permissions are checked.
    type: str
    default: openshift-machine-api
  takes_lock:
    description: Whether the run takes the cluster lock, so that the Lease permissions are checked (verify takes it only to remediate).
    type: bool
    default: true
  guard:
    description:
      - Whether the run applies or removes the in-cluster guard (C(egressip_guard.in_cluster.enabled), enable and disable),
        so that the permissions on its objects are checked too.
    type: bool
    default: false
  vcenter_privileges:
    description:
      - The playbook whose vCenter privileges to check on the datacenter, the hosts of the vSphere cluster and the node VMs, with
        C(AuthorizationManager.HasPrivilegeOnEntities) for this session (docs/rbac.md lists them). A missing one is the error
        finding C(vcenter_privilege_missing). Needs O(datacenter) and O(cluster); unset, no privilege is checked.
    type: str
    choices: [enable, verify, failover_drill, support_report, migrate, upgrade, disable, render, guard]
  converged:
    description:
      - The converged record (docs/how-it-works.md#the-converged-record). Given, the module returns the fingerprint of this
        snapshot in RV(fingerprint) (a hash of every part of the cluster and vCenter enable's vSphere network, node network,
        egress node and EgressIP steps decide from, and of their configuration) and whether it equals O(converged.record) in
        RV(converged).
    type: dict
    suboptions:
      record:
        description: The recorded fingerprint (the cluster lock Lease's C(egressip.ocp/converged) annotation); empty for none.
        type: str
        default: ''
      steps:
        description: The step roles' options the run uses (part of the configuration hashed).
        type: dict
        default: {}
      collection_version:
        description: This collection's version (part of the configuration hashed).
        type: str
      only:
        description: Read and return the fingerprint only, without the checks (enable's record of a run that wrote).
        type: bool
        default: false
  vcenter_facts:
    description:
      - Return the vCenter part of the snapshot as RV(vcenter), for a step of the same run that may use it instead of reading
        vCenter again (the verify of an enable that skipped its steps, O(ocp.egressip.egressip_verify#module:vcenter_facts)).
    type: bool
    default: false
  verify:
    description:
      - The options of M(ocp.egressip.egressip_verify) besides its connections (C(objects), C(network), C(datacenter),
        C(cluster), C(failure_domains), C(portgroup), C(wire), C(remediate), C(remediation_limit), C(remediation_hold_down),
        C(remediation_min_egress_nodes), C(wait_timeout), C(poll_interval)), validated as that module validates them.
      - When RV(converged) is true, this run verifies the cluster as that module would with these options, on the read
        it has just made (with the Profiles of the Node Tuning Operator, one more list), and returns it as RV(verify);
        given to that module as O(ocp.egressip.egressip_verify#module:precomputed), it is its result without a second
        module run and a second read (the enable playbook does this when its converged record lets it skip every step).
      - Nothing is verified here (RV(verify) is absent, and that module verifies as always) when the read is not
        converged, with C(remediate=true) (a remediation writes, under the cluster lock), when an option has a problem (that
        module names it), when the EgressIPs could not be read, or when the verification fails (that module reports why).
    type: dict
extends_documentation_fragment:
  - ocp.egressip.egressip_config
  - ocp.egressip.failure_domains
  - ocp.egressip.egressip_network
  - ocp.egressip.k8s_auth
  - ocp.egressip.vsphere_auth.nested
  - ocp.egressip.common
  - ocp.egressip.progress.notes
attributes:
  check_mode:
    support: full
    details: The module only reads; a wire check of O(verify) creates no probe pod in check mode.
  diff_mode:
    support: none
notes:
  - Run it before every change; the C(ocp.egressip.preflight) role does so and stops on errors before any write.
  - Each finding id has a section in C(docs/runbook.md) with what to check and how to fix it.
seealso:
  - module: ocp.egressip.egressip_info
  - module: ocp.egressip.vsphere_network_info
'''

EXAMPLES = r'''
- name: Check the cluster before enabling secondary-network EgressIP
  ocp.egressip.preflight:
    acknowledge_unsupported: true
    datacenter: DC1
    cluster: Cluster1
    portgroup: {name: ocp-egress-120, switch_type: distributed, switch: DSwitch1, vlan_id: 120}
    network:
      cidr: 10.20.0.0/24
      gateway: 10.20.0.1
      node_address_range: 10.20.0.10-10.20.0.99
      route_metric: 200
    nodes:
      selector: {node-role.kubernetes.io/worker: ""}
    objects:
      - name: payments
        egress_ips: [10.20.0.200, 10.20.0.201]
        namespace_selector: {matchLabels: {team: payments}}
  register: preflight

- name: Audit a configured cluster without failing, for a report
  ocp.egressip.preflight:
    mode: audit
    fail_on_error: false
    acknowledge_unsupported: true
    network: {cidr: 10.20.0.0/24, gateway: 10.20.0.1, node_address_range: 10.20.0.10-10.20.0.99}
    objects:
      - name: payments
        egress_ips: [10.20.0.200, 10.20.0.201]
        namespace_selector: {matchLabels: {team: payments}}
  register: audit

- name: Only the cluster-level checks, with an explicit kubeconfig and vCenter connection
  ocp.egressip.preflight:
    kubeconfig: ~/.kube/cluster-a
    datacenter: DC1
    cluster: Cluster1
    vsphere:
      hostname: vcenter.example.com
      username: readonly@vsphere.local
      password: "{{ vcenter_password }}"
'''

RETURN = r'''
findings:
  description: Every finding, errors first, then warnings, then info.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: Stable id of the finding; C(docs/runbook.md) has a section of that name.
      type: str
      sample: portgroup_missing
    severity:
      description: C(error) (stops enable), C(warning) or C(info).
      type: str
      sample: error
    message:
      description: What is wrong with which object.
      type: str
      sample: "Standard port group ocp-egress-120 is missing on host(s) DC0_C0_H2 of vSphere cluster DC0_C0: ..."
    remedy:
      description: What to do about it.
      type: str
    docs:
      description: The runbook anchor.
      type: str
      sample: docs/runbook.md#portgroup_missing
    objects:
      description: The objects the finding concerns, each with C(kind) and C(name) (and C(namespace) where it has one).
      type: list
      elements: dict
      sample: [{kind: HostSystem, name: DC0_C0_H2}]
summary:
  description: Counts of findings per severity, and whether the run may proceed (no error).
  returned: always
  type: dict
  sample: {error: 0, warning: 1, info: 3, ok: true, mode: plan}
cluster:
  description: What the snapshot says about the cluster.
  returned: always
  type: dict
  contains:
    openshift_version:
      description: C(status.desired.version) of ClusterVersion C(version).
      type: str
      sample: 4.16.3
    platform:
      description: Infrastructure platform type.
      type: str
      sample: VSphere
    network_type:
      description: Cluster network type.
      type: str
      sample: OVNKubernetes
    ip_forwarding:
      description: C(gatewayConfig.ipForwarding) of the network operator (C(Restricted) when unset).
      type: str
      sample: Restricted
    forwarding_by_hostname:
      description: Interfaces a Tuned profile recommended per hostname sets IPv4 forwarding on.
      type: dict
      sample: {ocp1-worker-0: [ens224]}
    nodes:
      description: Number of nodes.
      type: int
      sample: 6
    egress_assignable_nodes:
      description: Nodes labelled C(k8s.ovn.org/egress-assignable).
      type: list
      elements: str
    machine_api:
      description: Whether Machine API Machines exist.
      type: bool
    nmstate:
      description: Whether the NMState API is served.
      type: bool
    egressips:
      description: Number of EgressIP objects.
      type: int
primary_egressips:
  description:
    - Every egress IP of the cluster that lies on the primary network, with the node it is assigned to; recorded
      so that later runs can prove these were not changed by this collection.
  returned: always
  type: list
  elements: dict
  sample: [{name: legacy, egress_ip: 192.168.10.200, node: ocp1-worker-1, subnet: 192.168.10.0/24}]
checked:
  description: Which parts were read; checks on the other parts were skipped.
  returned: always
  type: dict
  sample: {vcenter: true, pods: true}
fingerprint:
  description: The fingerprint of the converged record for this snapshot and configuration (model/converged.py).
  returned: when O(converged) is given
  type: str
  sample: v1:5f1c0d7e9a2b4c6d8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d
converged:
  description:
    - Whether RV(fingerprint) equals O(converged.record) and no finding is an error, so enable may skip its steps.
  returned: when O(converged) is given
  type: bool
vcenter:
  description: The vCenter part of the snapshot (hosts, switches, the node VMs and their NICs); null when vCenter was not read.
  returned: when O(vcenter_facts=true) (with O(converged), only when RV(converged) is true and RV(verify) was not made)
  type: dict
verify:
  description:
    - The result M(ocp.egressip.egressip_verify) would return with the options of O(verify) (C(summary), C(egress_ips),
      C(nodes), C(findings), C(notes), C(report), C(wire)), made on this run's read, and C(made_with) (those options,
      validated, and whether the run was in check mode) by which that module knows it may return it as its own.
    - C(report) leaves out the rows it shares with the result, C(nodes) and C(egress_ips) (hundreds of KB at 500 nodes, sent
      once); that module puts them back.
  returned: when O(verify) is given and RV(converged) is true (see O(verify) for when it is not made)
  type: dict
msg:
  description: On failure, every error finding with its remedy in one message.
  returned: failure
  type: str
'''

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors, summarize
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import PROGRESS_NOTES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.checks.verification_io import on_converged_read
from ansible_collections.ocp.egressip.plugins.module_utils.checks.permissions import PLAYBOOKS
from ansible_collections.ocp.egressip.plugins.module_utils.checks.permissions import check as check_permissions
from ansible_collections.ocp.egressip.plugins.module_utils.checks.permissions import vcenter_findings, vcenter_privileges
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight import SEVERITY_ORDER, cluster_facts, run_checks
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_egress import primary_egressips
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.cluster import (
    CONFIG_MODULE,
    config_argument_spec,
    options_from_variables,
    read_snapshot,
)
from ansible_collections.ocp.egressip.plugins.module_utils.checks.tls import tls_findings
from ansible_collections.ocp.egressip.plugins.module_utils.model import converged as _converged
from ansible_collections.ocp.egressip.plugins.module_utils.checks.variables_schema import check as check_variables
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_nested_argument_spec


def argument_spec():
    spec = config_argument_spec()
    spec.update(
        mode=dict(type='str', choices=['plan', 'audit'], default='plan'),
        align_machines=dict(type='bool', default=True),
        fail_on_error=dict(type='bool', default=True),
        variables=dict(type='dict'),
        permissions=dict(type='str', choices=list(PLAYBOOKS)),
        permissions_only=dict(type='bool', default=False),
        lock_namespace=dict(type='str', default='openshift-machine-api'),
        takes_lock=dict(type='bool', default=True),
        guard=dict(type='bool', default=False),
        vcenter_privileges=dict(type='str', choices=list(PLAYBOOKS)),
        converged=dict(type='dict', options=dict(record=dict(type='str', default=''), steps=dict(type='dict', default={}),
                                                 collection_version=dict(type='str'), only=dict(type='bool', default=False))),
        vcenter_facts=dict(type='bool', default=False),
        verify=dict(type='dict'),
    )
    spec.update(vsphere_nested_argument_spec())
    return spec


def run(module):
    variables = module.params['variables']
    if variables is not None:
        normalized, schema_findings = check_variables(variables)
        if errors(schema_findings):
            # the other checks would read a configuration the user did not mean: fix the file first
            return result_of({'config': {'variables': variables}, 'vsphere': None}, module.params)
        module.params.update(options_from_variables(normalized))
    permissions = permission_findings(module)
    if module.params['permissions_only'] or errors(permissions):
        # a missing permission would fail the reads too: report it alone, before anything else is asked
        return result_of({'vsphere': None}, module.params, permissions, checks=False)
    wanted = module.params['vcenter_privileges']
    snapshot = read_snapshot(module, vcenter_privileges(wanted, (module.params['portgroup'] or {}).get('switch_type')) if wanted else None)
    converged = converged_result(snapshot, module.params['converged'], variables)
    if converged.get('only'):
        return {'fingerprint': converged['fingerprint'], 'converged': converged['converged']}
    privileges = vcenter_findings((snapshot['vsphere'] or {}).get('privileges'), module.params['vcenter_privileges'])
    tls = tls_findings(module.k8s.connection, module.params['vsphere'] if snapshot['vsphere'] is not None else None)
    result = result_of(snapshot, module.params, permissions + privileges + tls)
    if converged:
        # converged only when nothing stands in the way: an error finding makes the run stop before the steps anyway
        result.update(fingerprint=converged['fingerprint'], converged=converged['converged'] and result['summary']['ok'])
    facts = dict((key, value) for key, value in (snapshot['vsphere'] or {}).items() if key != 'privileges') or None
    if module.params['verify'] and result.get('converged'):
        verified = on_converged_read(module, module.params['verify'], facts, snapshot)
        if verified is not None:
            result['verify'] = verified
    if module.params['vcenter_facts'] and result.get('converged', True) and 'verify' not in result:
        result['vcenter'] = facts
    return result


def converged_result(snapshot, options, variables):
    """{'fingerprint', 'converged', 'only'} of the converged record (model/converged.py), or {} when not asked."""
    if not options:
        return {}
    if variables is None:  # module options: the same values under the public names
        variables = dict(('egressip_' + key, value) for key, value in (snapshot.get('config') or {}).items())
    config = _converged.step_config(variables, options['steps'], options['collection_version'])
    current = _converged.fingerprint(snapshot, config)
    return {'fingerprint': current, 'converged': _converged.converged(options['record'], current), 'only': options['only']}


def permission_findings(module):
    params = module.params
    if not params['permissions']:
        return []
    return check_permissions(module.k8s, params['permissions'], params['lock_namespace'], params['takes_lock'], guard=params['guard'])


def result_of(snapshot, params, extra=(), checks=True):
    findings = run_checks(snapshot, params['mode'], params['align_machines']) if checks else []
    findings = sorted(list(extra) + findings, key=lambda item: SEVERITY_ORDER[item['severity']])
    summary = summarize(findings)
    summary.update(ok=not errors(findings), mode=params['mode'])
    return dict(
        findings=findings,
        summary=summary,
        cluster=cluster_facts(snapshot),
        primary_egressips=primary_egressips(snapshot),
        checked={'vcenter': snapshot['vsphere'] is not None, 'pods': 'pods' in snapshot},
    )


def step(module, result):
    """Run the checks; with fail_on_error, error findings fail the task (the result is returned all the same)."""
    result.update(run(module))
    if module.params['fail_on_error'] and not result['summary']['ok']:
        raise Refused(result['findings'])


def main():
    module = EgressModule('preflight', argument_spec=argument_spec(), progress=PROGRESS_NOTES, **CONFIG_MODULE)
    module.run(step)


if __name__ == '__main__':
    main()
