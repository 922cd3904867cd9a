#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_fleet_report
short_description: Record one cluster's outcome of a fleet run and rebuild the fleet report (JSON, Markdown, HTML)
version_added: 0.1.0
description:
  - Runs on the controller (delegate it to C(localhost)) and connects to no cluster. The C(ocp.egressip.fleet_report) role calls it
    once per cluster (inventory host) at the end of each playbook's per-cluster play, failed or not.
  - Writes the cluster's row - made from O(record), see there - to C(<dest>/.fleet/<run_id>/<cluster>.json) (atomically), then,
    holding an exclusive lock on C(<dest>/.fleet/lock) so that concurrent forks take turns, removes the record directories of
    other runs and rebuilds C(<dest>/fleet_report.json), C(fleet_report.md) and C(fleet_report.html) from every record of
    O(run_id). Whichever cluster finishes last - or fails and stops the rollout - leaves the report of everything that ran.
  - The report has one row per cluster (inventory host, cluster name and ID, OpenShift version, API server, playbook, verdict
    C(ok), C(warning), C(error) or C(failed), egress IPs total, assigned, healthy and blackholed, error and warning findings,
    drift from the variables file, when its play finished), the clusters that failed with the task and its message, the
    clusters of O(clusters) without a record (not run), and totals. The JSON keeps the exact numbers.
  - Drift from the variables file counts the findings of verify and of the support report that say the cluster differs from
    it - C(egressip_object_missing) (an EgressIP object or IP of the variables missing from the cluster), C(portgroup_missing),
    C(portgroup_vlan_mismatch), C(blackhole_portgroup_vlan_mismatch) and C(machineset_missing_secondary_device).
  - Only the keys of O(record) documented here are read, each into a number or a line of text; nothing else of a record (a
    variable, a credential) reaches a file. Failure messages are shortened, and a value after a word such as C(password),
    C(token) or C(secret), and the user information of a URL, are replaced by C([redacted]).
  - A report file is only rewritten (and the task only C(changed)) when its text changed other than in its time stamps,
    so the same input twice changes nothing.
  - One run at a time per O(dest). A run removes the record directories of other runs, except those of a run whose
    ansible-playbook process still runs on this controller (a run ID the module derived, see O(run_id)) - those stay, with
    a warning, because the report files are shared and hold whichever run wrote last. Nothing tells whether a run with a
    given O(run_id) still runs, so its records go when another run records; give runs that overlap their own O(dest).
options:
  dest:
    description: Directory of the fleet report files; created when missing. Give every host of a run the same one.
    type: path
    default: reports
  run_id:
    description:
      - What identifies this ansible-playbook run - one value that all its hosts (all forks, all C(serial) batches, all plays)
        share and no other run has. Letters, digits, C(.), C(_) and C(-).
      - When left out, the ansible-playbook process the module runs under (its process ID and start time, from C(/proc);
        Linux controllers, execution environments) - the same for every host and batch of the run.
    type: str
  cluster:
    description: The cluster this record is about - the inventory host name (C(inventory_hostname)).
    type: str
    required: true
  clusters:
    description:
      - Every cluster of the play (C(ansible_play_hosts_all)); those without a record in this run are listed as not run (the
        rollout stopped before their batch, or their play has not ended yet).
    type: list
    elements: str
    default: []
  record:
    description:
      - What the cluster's run left, each key optional - C(playbook) (C(enable), C(verify), C(failover_drill),
        C(support_report), C(migrate), C(upgrade), C(disable), C(render), C(guard)); C(verify) (the C(report) of
        M(ocp.egressip.egressip_verify), or the whole result); C(support) (C(status), C(verdict), C(summary), C(findings),
        C(cluster), C(generated_at) of M(ocp.egressip.egressip_support_report)); C(guard) (C(verdict), C(summary));
        C(failover_drill) (the drill report, with C(final)); C(upgrade) (C(summary), C(findings), C(versions)); C(migrate)
        (C(summary), C(findings)); C(preflight) (C(summary), C(findings), C(cluster), used only when none of verify, the
        drill and the support report ran); C(cluster) (C(name), C(id), C(openshift_version), C(api_url), over what the
        reports say); C(changes) (lines saying what the run changed); C(failure) (C(task), C(message) - the play failed);
        C(time) (when its play finished, C(YYYY-MM-DDTHH:MM:SSZ); default now).
    type: dict
    default: {}
  formats:
    description: Which report files to write - V(json) for machines, V(markdown) and V(html) (one self-contained page) for people.
  html_template:
    description:
      - A Jinja2 template file that replaces the page's default template. It gets C(report) (the fleet report), C(title),
        C(verdict), C(headline), C(headers), C(rows) (C(inventory), C(verdict), C(cells) of each cluster), C(drift) (C(inventory),
        C(id), C(message)), C(changes) (C(inventory), C(change)), C(svg) (clusters per verdict) and C(generated_at); C(autoescape) is on.
  mode:
    description: Permissions of the report files written.
extends_documentation_fragment:
  - ocp.egressip.report_files
  - ocp.egressip.common
attributes:
  check_mode:
    details: Builds the report from the records on disk and this one and compares; writes, creates and removes nothing.
  diff_mode:
    support: full
    details: The Markdown report before and after.
  platform:
    platforms: posix
seealso:
  - module: ocp.egressip.egressip_verify
  - module: ocp.egressip.egressip_support_report
  - module: ocp.egressip.egressip_report
'''

EXAMPLES = r'''
- name: Record this cluster in the fleet report (the fleet_report role does this for every playbook)
  ocp.egressip.egressip_fleet_report:
    dest: reports
    cluster: "{{ inventory_hostname }}"
    clusters: "{{ ansible_play_hosts_all }}"
    record:
      playbook: verify
      verify: "{{ verify_result.report }}"
  delegate_to: localhost
'''

RETURN = r'''
report:
  description: The fleet report as written to C(fleet_report.json) (C(clusters), C(failed), C(not_run), C(totals), C(verdict)).
  returned: always
  type: dict
  sample: {kind: fleet, verdict: ok, totals: {clusters: 2, ok: 2, failed: 0}}
row:
  description: The row of O(cluster) (what its record file holds).
  returned: always
  type: dict
  sample: {inventory: cluster-a, verdict: ok, egress_ips: {total: 2, assigned: 2, healthy: 2, blackholed: 0}}
verdict:
  description: The verdict of O(cluster) - V(ok), V(warning), V(error) or V(failed).
  returned: always
  type: str
  sample: ok
run_id:
  description: The run the record belongs to (O(run_id), or the one derived from the ansible-playbook process).
  returned: always
  type: str
  sample: ansible-playbook-4242-8812345
paths:
  description: The report files written (or that would be written), JSON first.
  returned: always
  type: list
  elements: str
  sample: [reports/fleet_report.json, reports/fleet_report.md, reports/fleet_report.html]
record:
  description: The path of the cluster's record file.
  returned: always
  type: str
  sample: reports/.fleet/ansible-playbook-4242-8812345/cluster-a.json
removed_runs:
  description: The record directories of other runs that were removed (would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: []
kept_runs:
  description: The record directories of other runs that were kept because their ansible-playbook process still runs on this
    controller (a warning says so).
  returned: always
  type: list
  elements: str
  sample: [ansible-playbook-4250-8812399]
'''

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ocp.egressip.plugins.module_utils.clients import lease as _lease
from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as _identity
from ansible_collections.ocp.egressip.plugins.module_utils.reports import files as _report_files
from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet as _fleet
from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet_files as _fleet_files


def run_id(module):
    """O(run_id), else one per ansible-playbook process (its pid and start time), else the module fails saying what to set."""
    value = module.params.get('run_id')
    if value:
        problem = _fleet_files.run_id_problem(value)
        if problem:
            module.fail_json(msg='egressip_fleet_report: %s' % problem)
        return value
    owner = _lease.playbook_process()
    if not owner:
        module.fail_json(msg='egressip_fleet_report: run_id is not set and no ansible-playbook process was found above the module '
                             '(a controller without /proc, or not run by ansible-playbook). Fix: set run_id (fleet_report_run_id in '
                             'the role) to one value every host of the run shares, such as awx_job_id in AAP.')
    return 'ansible-playbook-%s-%s' % (owner['pid'], owner['start'])


PROCESS_RUN = re.compile(r'^ansible-playbook-(\d+)-(\d+)$')


def still_running(run):
    """Whether `run` is a run ID this module derived (run_id) whose ansible-playbook process still runs on this controller."""
    match = PROCESS_RUN.match(run)
    return bool(match) and _lease.owner_alive({'pid': match.group(1), 'start': match.group(2)})


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dest=dict(type='path', default='reports'),
            run_id=dict(type='str'),
            cluster=dict(type='str', required=True),
            clusters=dict(type='list', elements='str', default=[]),
            record=dict(type='dict', default={}),
            formats=dict(type='list', elements='str', choices=['json', 'markdown', 'html'], default=['json', 'markdown', 'html']),
            html_template=dict(type='path'),
            mode=dict(type='raw', default='0644'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    problem = _fleet_files.cluster_problem(params['cluster'])
    if problem:
        module.fail_json(msg='egressip_fleet_report: %s' % problem)
    time = params['record'].get('time')
    if time is not None and not _report_files.STAMP.match(str(time)):
        module.fail_json(msg='egressip_fleet_report: record.time=%r is not a time. Fix: give YYYY-MM-DDTHH:MM:SSZ (UTC), or leave it '
                             'out for now.' % (time,))
    run = run_id(module)
    row = _fleet.row(params['cluster'], params['record'], time or _identity.generated_at(_identity.utc_now()))
    template = _report_files.read_template(module, 'egressip_fleet_report')
    try:
        result = _fleet_files.update(module, params['dest'], run, params['cluster'], row, params['clusters'], params['formats'],
                                     template, params['mode'], running=still_running)
    except Exception as exc:  # pylint: disable=broad-except  # a user's html_template that Jinja2 cannot render
        if template is None:
            raise
        module.fail_json(msg='egressip_fleet_report: html_template=%s cannot be rendered: %s' % (params['html_template'], exc))
    for other in result['kept_runs']:
        module.warn('Another ansible-playbook run (%s) still records into dest=%s: its records are kept, and the report files '
                    'hold whichever run wrote last. Fix: give runs that overlap their own dest (fleet_report_dir).' % (other, params['dest']))
    diffs = result.pop('diffs')
    output = dict(result, run_id=run, verdict=result['row']['verdict'])
    output.pop('record_written')
    if module._diff and diffs:
        output['diff'] = [item for item in diffs if item['after_header'].endswith('.md')] or diffs
    module.exit_json(**output)


if __name__ == '__main__':
    main()
