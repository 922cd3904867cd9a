#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_support_report
short_description: Write the support report of a cluster (JSON and Markdown, no secrets) to attach to a support case
version_added: 0.1.0
description:
  - "Reads the cluster and, when O(datacenter) and O(cluster) are given, the vCenter B(once) - the same read as
    M(ocp.egressip.preflight) - and writes one JSON document and one Markdown page with the verdict in one line (for
    example C(Configured and healthy; outside Red Hat support: secondary-network EgressIP on vSphere)), the versions,
    the configuration, every finding with its remedy, the current placement of every egress IP, the egress nodes with
    their VM, ESXi host and secondary NIC, a diagram, the what-if summary (what happens when each egress node fails)
    and the EgressIPs on the primary network."
  - "The findings are those of M(ocp.egressip.preflight) in audit mode (the configuration is expected in place) and,
    with O(verify=true), those of the per-IP verification of M(ocp.egressip.egressip_verify) on the same snapshot:
    assignment, node health, the secondary path of the hosting node (a blackhole), single points of failure. The wire
    check is not run: it needs pods, and this module writes nothing to the cluster."
  - The what-if summary is the prediction of M(ocp.egressip.egressip_plan) on the same snapshot.
  - Read-only for the cluster and vCenter; safe to run at any time. The only writes are the report files in O(dest).
  - Contains no secrets - credentials are never part of the configuration, the snapshot holds none, and any
    configuration or O(about) key that names a credential is dropped.
  - Never fails because of findings; it fails only when the cluster (or vCenter) cannot be read.
requirements:
  - netaddr >= 1.3.0
  - pyvmomi >= 9.0.0 (only with O(datacenter) and O(cluster))
options:
  verify:
    description:
      - Also verify every egress IP of the requested objects (all EgressIP objects when O(objects) is empty) on the
        same snapshot, as M(ocp.egressip.egressip_verify) does without its wire check.
    type: bool
    default: true
  what_if:
    description: Predict, for each egress node, what happens when it fails with O(trigger).
    type: bool
    default: true
  trigger:
    description: The failure the what-if summary predicts for each egress node (see M(ocp.egressip.egressip_plan)).
    type: str
    choices: [cordon, deleted, disconnect_nic, not_ready, power_off, subnet_gone, unlabel, unreachable]
    default: unlabel
  recorded_primary_egressips:
    description:
      - An earlier record of the EgressIPs on the primary network - the C(primary_egressips) result of
        M(ocp.egressip.preflight), or the C(preflight_primary_egressips) fact of the C(preflight) role - to compare
        with the current ones. The report lists what changed since.
      - Without it, the record of the previous report in O(dest) (C(<name>.json)) is used, when there is one.
    type: list
    elements: dict
  about:
    description:
      - Facts the caller knows, copied into the report (for example C(collection_version), C(ansible_version),
        C(generated_by)). C(collection_version) and C(ansible_version) also fill the versions table.
      - C(generated_at) (also the report's C(generated_at)) defaults to the current UTC time, C(YYYY-MM-DDTHH:MM:SSZ); set it
        for byte-identical reports of an unchanged cluster. Unlike the other reports, a support report is made for one point
        in time, so without it every run writes the files again with its own time.
    type: dict
    default: {}
  dest:
    description:
      - Directory to write the files to; created when missing. Without it, the report is only returned.
    type: path
  name:
    description: Base name of the files (C(<name>.json), C(<name>.md), C(<name>.html)).
    type: str
    default: support_report
extends_documentation_fragment:
  - ocp.egressip.egressip_config
  - ocp.egressip.failure_domains
  - ocp.egressip.egressip_network
  - ocp.egressip.k8s_auth
  - ocp.egressip.vsphere_auth.nested
  - ocp.egressip.report_files
  - ocp.egressip.common
attributes:
  check_mode:
    details: Reads and renders; writes no file.
  diff_mode:
    support: full
    details: The report files before and after.
  platform:
    platforms: posix
notes:
  - The C(ocp.egressip.support_report) role and playbook run this module with the public variables file.
  - Kubernetes costs one list request per kind and vCenter a fixed number of batched reads, whatever the number of nodes.
  - Each finding id has a section in C(docs/runbook.md).
seealso:
  - module: ocp.egressip.preflight
  - module: ocp.egressip.egressip_verify
  - module: ocp.egressip.egressip_plan
'''

EXAMPLES = r'''
- name: Write reports/support_report.json and reports/support_report.md for the cluster of the variables file
  ocp.egressip.egressip_support_report:
    acknowledge_unsupported: "{{ egressip_acknowledge_unsupported }}"
    datacenter: "{{ egressip_vsphere.datacenter }}"
    cluster: "{{ egressip_vsphere.cluster }}"
    portgroup: "{{ egressip_vsphere.portgroup }}"
    network: "{{ egressip_network }}"
    nodes: "{{ egressip_nodes }}"
    objects: "{{ egressip_objects }}"
    about:
      ansible_version: "{{ ansible_version.full }}"
    dest: reports
  register: support

- name: Show the verdict
  ansible.builtin.debug:
    msg: "{{ support.verdict }}"

- name: Only the cluster-level view (no configuration, no vCenter), returned but not written
  ocp.egressip.egressip_support_report:
    what_if: false
  register: support
'''

RETURN = r'''
verdict:
  description: The verdict in one line.
  returned: always
  type: str
  sample: "Configured and healthy; outside Red Hat support: secondary-network EgressIP on vSphere"
status:
  description: C(healthy), C(degraded) (warnings), C(partial) (egress IPs unassigned), C(failing) (errors) or C(not_configured).
  returned: always
  type: str
  sample: healthy
ok:
  description: Whether the status is C(healthy) or C(degraded).
  returned: always
  type: bool
  sample: true
report:
  description:
    - The report as written to the JSON file - C(kind) C(support), C(verdict), C(status), C(support), C(versions),
      C(about), C(configuration), C(cluster), C(generated_at), C(summary), C(findings), C(placement), C(nodes), C(what_if),
      C(single_points_of_failure), C(primary_egressips), C(checked).
    - C(cluster) names the cluster - C(name) (the Infrastructure's C(status.infrastructureName)), C(id) (ClusterVersion
      C(spec.clusterID)), C(openshift_version), C(api_url) (the API server the module used, without credentials or query)
      and C(unknown) (why any of them is not known - HTTP 403 or 404 on the read is no failure) - beside the facts
      preflight shows (platform, network type, node counts). C(generated_at) is when it was made (UTC, ISO 8601).
  returned: always
  type: dict
  sample: {kind: support, status: healthy, summary: {error: 0, warning: 0, info: 1, egress_ips: 2, assigned: 2, ok: true}}
markdown:
  description: The Markdown report.
  returned: always
  type: str
  sample: "# EgressIP support report\n\n**Configured and healthy; outside Red Hat support: secondary-network EgressIP on vSphere.**\n"
paths:
  description: The files written (or that would be written), JSON first; empty without O(dest).
  returned: always
  type: list
  elements: str
  sample: [reports/support_report.json, reports/support_report.md]
primary_egressips:
  description: The EgressIPs on the primary network now (a record for the next report's O(recorded_primary_egressips)).
  returned: always
  type: list
  elements: dict
  sample: [{name: legacy, egress_ip: 192.168.10.200, node: ocp1-worker-1, subnet: 192.168.10.0/24}]
'''

import json
import os

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as _identity
from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.reports import files as _report_files
from ansible_collections.ocp.egressip.plugins.module_utils.reports import html as _html
from ansible_collections.ocp.egressip.plugins.module_utils.reports import support as _support_report
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify as _verify
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path as _verify_path
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_context import AUDIT
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_egress import primary_egressips
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight import run_checks
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot.cluster import CONFIG_MODULE, config_argument_spec, read_snapshot
from ansible_collections.ocp.egressip.plugins.module_utils.checks.verify_io import relevant_nodes
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_nested_argument_spec

OWNER = (MANAGED_BY_LABEL, MANAGED_BY_VALUE)


def argument_spec():
    spec = config_argument_spec()
    spec.update(
        verify=dict(type='bool', default=True),
        what_if=dict(type='bool', default=True),
        trigger=dict(type='str', choices=sorted(_placement.TRIGGERS), default='unlabel'),
        recorded_primary_egressips=dict(type='list', elements='dict'),
        about=dict(type='dict', default={}),
        dest=dict(type='path'),
        name=dict(type='str', default='support_report'),
        formats=dict(type='list', elements='str', choices=['json', 'markdown', 'html'], default=['json', 'markdown', 'html']),
        html_template=dict(type='path'),
        mode=dict(type='raw', default='0644'),
    )
    spec.update(vsphere_nested_argument_spec())
    return spec


def plan(snapshot, trigger):
    """The egressip_plan prediction on the snapshot: placements, what-if per egress node, single points of failure."""
    snap = _placement.snapshot(snapshot['nodes'], snapshot.get('egressips') or [], owner_label=OWNER)
    what_if = _placement.what_if_all(snap, trigger)
    return {'placements': _placement.predict(snap)['placements'], 'what_if': what_if,
            'single_points_of_failure': _placement.single_points_of_failure(what_if)}


def network_cidrs(network):
    """The cidr of every family of egressip_network (IPv4 and the ipv6 part), as egressip_verify takes them; the raw
    cidr when the network does not parse (preflight reports why)."""
    parsed, _findings = _network.parse(network or {}, 'egressip_network.', needs=('cidr',))
    if parsed is None:
        return (network or {}).get('cidr')
    return [str(family.cidr) for family in parsed.families]


def verification_findings(snapshot):
    """The per-IP findings of egressip_verify on the same snapshot (no wire check); [] when EgressIP is not served.

    The vCenter read's own findings (port group missing, node without VM) are left to preflight, which reports them.
    """
    if snapshot.get('egressips') is None:
        return []
    config = snapshot['config']
    egressips = snapshot['egressips']
    portgroup = config['vsphere'].get('portgroup') or {}
    vsphere = None
    if snapshot.get('vsphere') is not None and portgroup.get('name'):
        vsphere = _verify_path.vsphere_facts(snapshot['vsphere'], portgroup, relevant_nodes(snapshot['nodes'], egressips))
        vsphere['findings'] = []
    nns = None
    if snapshot.get('nns') is not None:
        nns = dict(((item.get('metadata') or {}).get('name'), item) for item in snapshot['nns'])
    objects = config['objects']
    result = _verify.evaluate(_verify.build_snapshot(snapshot['nodes'], egressips, nns=nns, vsphere=vsphere, owner_label=OWNER),
                              cidr=network_cidrs(config['network']), names=[entry['name'] for entry in objects] or None,
                              expected=dict((entry['name'], entry['egress_ips']) for entry in objects) or None)
    return result['findings']


def _key(item):
    return item['id'], tuple(sorted((obj.get('kind'), obj.get('name')) for obj in item.get('objects') or []))


def merged(findings, more):
    """`findings` plus those of `more` that no finding with the same id about the same objects already says."""
    seen = set(_key(item) for item in findings)
    return findings + [item for item in more if _key(item) not in seen]


def previous_record(params):
    """The primary-network EgressIPs of the previous report in dest, or None (no file, not a support report, unreadable)."""
    if not params['dest'] or 'json' not in params['formats']:
        return None
    try:
        previous = json.loads(_report_files.read_text(os.path.join(params['dest'], params['name'] + '.json')) or 'null')
    except ValueError:
        return None
    if not isinstance(previous, dict) or previous.get('kind') != _support_report.KIND:
        return None
    current = (previous.get('primary_egressips') or {}).get('current')
    return current if isinstance(current, list) else None


def about(params):
    facts = dict(params['about'])
    if not facts.get('generated_at'):
        facts['generated_at'] = _identity.generated_at(_identity.utc_now())
    return facts


def run(module, _result=None):
    params = module.params
    problem = _report_files.check_name(params['name'])
    if problem:
        module.fail_json(msg='egressip_support_report: %s Nothing was read or written.' % problem)
    snapshot = read_snapshot(module)
    findings = run_checks(snapshot, AUDIT)
    if params['verify']:
        findings = merged(findings, verification_findings(snapshot))
    prediction = plan(snapshot, params['trigger']) if params['what_if'] and snapshot.get('egressips') is not None else None
    recorded = params['recorded_primary_egressips']
    if recorded is None:
        recorded = previous_record(params)
    report = _support_report.build(snapshot, findings, plan=prediction, recorded_primary=recorded, about=about(params),
                                   api_url=module.k8s.host)
    json_text, markdown_text = _support_report.render(report)
    contents = [(suffix, text) for fmt, suffix, text in (('json', '.json', json_text), ('markdown', '.md', markdown_text))
                if fmt in params['formats']]
    if 'html' in params['formats']:
        template = _report_files.read_template(module, 'egressip_support_report')
        contents.append(('.html', _html.render_html(report, template=template, markdown=markdown_text, title='EgressIP support report')))
    paths, changed, diffs = [], False, []
    if params['dest']:
        paths, changed, diffs = _report_files.write_reports(module, params['dest'], params['name'], contents, params['mode'])
    result = dict(changed=changed, verdict=report['verdict'], status=report['status'], ok=report['summary']['ok'], report=report,
                  markdown=markdown_text, paths=paths, primary_egressips=primary_egressips(snapshot))
    if module._diff and diffs:
        result['diff'] = diffs
    return result


def main():
    module = EgressModule('egressip_support_report', argument_spec=argument_spec(), **CONFIG_MODULE)
    module.run(run)


if __name__ == '__main__':
    main()
