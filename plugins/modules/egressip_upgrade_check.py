#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_upgrade_check
short_description: Checks and records around an OpenShift upgrade, or an upgrade of this collection, for secondary-network EgressIP
version_added: 0.1.0
description:
  - "O(phase=pre), before an OpenShift upgrade: the target version is 4.14 or newer and not older than the current one
    (O(target_version), else C(spec.desiredUpdate) of ClusterVersion); capacity during the rolling reboots - for each EgressIP
    object, the capable egress nodes (labelled, Ready, holding O(network.cidr) in C(host-cidrs)) minus those the Machine Config
    Operator may reboot at the same time (C(maxUnavailable) of their MachineConfigPool, default 1, a percentage rounded down and at
    least 1) must stay at least its IPs + 1; NMState in place (the C(NMState) CR, an Available policy for every egress node's base
    address, which is how the address comes back after the reboot); IP forwarding in place for every egress node's NIC
    (C(ipForwarding: Global) or the Tuned profile the node runs). Returns RV(record), the assignment to keep."
  - "O(phase=post), after it: compares the current assignment with O(baseline). Moves are reported as C(info) - a rebooting node
    is NotReady, its egress IPs fail over and there is no failback; an unassigned egress IP or a dropped node address is an error.
    Also reports the version change and an uneven spread of the egress IPs."
  - "O(phase=collection), around an upgrade of this collection: lists the objects the collection manages, recognised by the label
    C(egressip.ocp/managed-by=ocp.egressip) (EgressIP, NodeNetworkConfigurationPolicy, Tuned; the policies also carry the annotations
    C(egressip.ocp/node) and C(egressip.ocp/addresses)), flags marked objects lacking those annotations, and with O(baseline)
    compares the assignment - converging must move nothing, so any move is an error."
  - "MachineConfigPools are read when the API serves them; otherwise (the twin, or no permission) O(default_max_unavailable) is used
    and the finding C(upgrade_pools_not_read) says so. O(max_unavailable) overrides both."
  - Read-only; this module never changes anything.
requirements:
  - netaddr >= 1.3.0
options:
  phase:
    description: Which check, see the description.
    type: str
    choices: [pre, post, collection]
    required: true
  network:
    required: true
  objects:
    description:
      - The EgressIP objects, as C(egressip_objects) of the variables file (only C(name) and C(egress_ips) are read). Empty - every
        EgressIP object whose IPs are all in O(network.cidr).
    type: list
    elements: dict
    default: []
  target_version:
    description: The OpenShift version the cluster is about to be upgraded to (O(phase=pre)).
    type: str
  max_unavailable:
    description:
      - How many egress nodes may reboot at once, an int or a percentage (of the capable egress nodes); overrides the
        MachineConfigPools (O(phase=pre)).
    type: raw
  default_max_unavailable:
    description: Used when the MachineConfigPools cannot be read (O(phase=pre)).
    type: int
    default: 1
  baseline:
    description:
      - The RV(record) of an earlier run (O(phase=pre), or O(phase=collection) before converging). Required with O(phase=post).
    type: dict
extends_documentation_fragment:
  - ocp.egressip.egressip_network
  - ocp.egressip.k8s_auth
  - ocp.egressip.common
  - ocp.egressip.common.read_only
notes:
  - The C(upgrade) role runs it (C(upgrade_phase)); see C(docs/lifecycle.md).
  - No object records which version of the collection wrote it; converging re-renders every marked object from the variables file.
seealso:
  - module: ocp.egressip.egressip_discover
  - module: ocp.egressip.egressip_verify
'''

EXAMPLES = r'''
- name: Before the OpenShift upgrade
  ocp.egressip.egressip_upgrade_check:
    phase: pre
    network: "{{ egressip_network }}"
    objects: "{{ egressip_objects }}"
    target_version: 4.17.5
  register: before

- name: Keep the record
  ansible.builtin.copy:
    content: "{{ before.record | to_nice_json }}"
    dest: egressip-upgrade-snapshot.json
    mode: '0644'

- name: After the upgrade
  ocp.egressip.egressip_upgrade_check:
    phase: post
    network: "{{ egressip_network }}"
    baseline: "{{ lookup('ansible.builtin.file', 'egressip-upgrade-snapshot.json') | from_json }}"
  register: after
'''

RETURN = r'''
cluster:
  description:
    - The cluster the result is about - C(name) (the Infrastructure's C(status.infrastructureName)), C(id) (ClusterVersion
      C(spec.clusterID)), C(openshift_version), C(api_url) (the API server the module used, without credentials or query) and
      C(unknown) (why any of them is not known; HTTP 403 or 404 on those reads is no failure). From the same lists as the
      checks (no request of its own).
  returned: always
  type: dict
  sample: {name: ocp1-x7k2p, id: 5c1e6a52-8f0e-5b4c-9d6f-3c0b0d6f2a11, openshift_version: 4.16.21,
           api_url: "https://api.ocp1.example.com:6443", unknown: {}}
generated_at:
  description: When the result was made, UTC, ISO 8601 (C(2026-11-30T10:00:00Z)). Not part of RV(record).
  returned: always
  type: str
  sample: "2026-11-30T10:00:00Z"
findings:
  description: Findings, errors first (ids in C(docs/runbook.md)).
  returned: always
  type: list
  elements: dict
summary:
  description: Counts per severity and C(ok) (no error).
  returned: always
  type: dict
record:
  description: The assignment of every egress IP, every node's host-cidrs and label, the marked objects, the version (see M(ocp.egressip.egressip_discover)).
  returned: always
  type: dict
versions:
  description: C(current), C(target) and C(target_source).
  returned: with O(phase=pre)
  type: dict
capacity:
  description: Per EgressIP object - C(ips), C(capable), C(rebooting_at_once), C(remaining), C(needed), C(ok).
  returned: with O(phase=pre)
  type: list
  elements: dict
pools:
  description: Per MachineConfigPool holding egress nodes - C(max_unavailable), C(egress_nodes), C(rebooting_at_once).
  returned: with O(phase=pre)
  type: list
  elements: dict
egress_nodes:
  description: Per capable egress node - C(address), C(interface), C(mac), C(policies) configuring the address.
  returned: with O(phase=pre)
  type: list
  elements: dict
comparison:
  description: With O(baseline) - what changed (see M(ocp.egressip.egressip_discover)).
  returned: with O(baseline)
  type: dict
changes:
  description: With O(baseline), one line per change.
  returned: with O(baseline)
  type: list
  elements: str
'''

from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as _identity
from ansible_collections.ocp.egressip.plugins.module_utils.model import lifecycle as _lifecycle
from ansible_collections.ocp.egressip.plugins.module_utils.checks import upgrade as _upgrade
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import parse as parse_network
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import argument_spec as network_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, summarize
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.cluster import read_cluster

SKIP = ('pods', 'namespaces', 'network_config', 'machinesets', 'machines')


def read_pools(k8s):
    """The MachineConfigPools, or None when the API does not serve them or the credentials may not list them."""
    pools = ('machineconfigpools',)
    return kubernetes.read(k8s, pools, optional=pools, forbidden_ok=pools).get('machineconfigpools')


def baseline_problems(params, record):
    baseline = params['baseline']
    if baseline is None:
        return ['no baseline was given'] if params['phase'] == 'post' else []
    problems = _lifecycle.valid_record(baseline)
    if not problems and baseline.get('cluster') and record.get('cluster') and baseline['cluster'] != record['cluster']:
        problems.append('it was taken on cluster %s, this is %s' % (baseline['cluster'], record['cluster']))
    return problems


def run(module, _result=None):
    params = module.params
    network, findings = parse_network(params['network'], 'network.', needs=('cidr',))
    if findings:
        raise Refused(findings)
    snapshot = read_cluster(module.k8s, skip=SKIP)
    problems = baseline_problems(params, _lifecycle.record(snapshot))
    if problems:
        result = {'record': _lifecycle.record(snapshot), 'findings': [catalogue_finding(
            'lifecycle_baseline_invalid', 'The snapshot to compare with cannot be used: %s.' % '; '.join(problems),
            objects=[{'kind': 'option', 'name': 'baseline'}])]}
    elif params['phase'] == 'pre':
        try:
            dual = network.family(6) if network.first.version == 4 else None
            result = _upgrade.pre(snapshot, read_pools(module.k8s), str(network.cidr), params['objects'], params['target_version'],
                                  network.ip_forwarding, params['max_unavailable'], params['default_max_unavailable'],
                                  ipv6_cidr=str(dual.cidr) if dual is not None else None)
        except ValueError as exc:
            module.fail_json(msg='max_unavailable: %s; give a number (2) or a percentage (10%%).' % exc)
    elif params['phase'] == 'post':
        result = _upgrade.post(snapshot, params['baseline'], str(network.cidr))
    else:
        result = _upgrade.collection(snapshot, params['baseline'])
    if 'comparison' in result:
        result['changes'] = _lifecycle.changes_text(result['comparison'])
    summary = summarize(result['findings'])
    summary['ok'] = summary[ERROR] == 0
    result['summary'] = summary
    result.update(_identity.identity(snapshot, module.k8s.host, _identity.utc_now()))
    return result


def main():
    module = EgressModule(
        'egressip_upgrade_check', argument_spec=dict(
            phase=dict(type='str', choices=['pre', 'post', 'collection'], required=True),
            network=network_argument_spec(required=True),
            objects=dict(type='list', elements='dict', default=[]),
            target_version=dict(type='str'),
            max_unavailable=dict(type='raw'),
            default_max_unavailable=dict(type='int', default=1),
            baseline=dict(type='dict'),
        ),
        libraries=('netaddr',), supports_check_mode=True,
    )
    module.run(run)


if __name__ == '__main__':
    main()
