#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_report
short_description: Write the report of a verification or a failover drill as JSON (for machines), Markdown and HTML (for people)
version_added: 0.1.0
description:
  - Renders O(data) - the C(report) that M(ocp.egressip.egressip_verify) returns, or what the C(failover_drill) role
    collected - into C(<name>.json) (sorted keys, the whole data) and C(<name>.md) (result line, tables of egress IPs,
    nodes and timings, findings with their remedies, a Mermaid diagram of nodes, NICs and egress IPs) and C(<name>.html)
    (the same as one self-contained page, the topology drawn as an inline SVG) in O(dest).
  - The reports name the cluster (C(cluster) - name, ID, OpenShift version, API server URL without credentials) and the time
    they were made (C(generated_at), UTC), from the data (M(ocp.egressip.egressip_verify) puts them in its report; a drill
    report takes those of its final verification, else of its baseline). Seconds are shown with two decimals in Markdown
    and HTML; the JSON keeps the measured values as they are.
  - Output is deterministic - the same data gives the same bytes - so a file is only rewritten (and the task only
    C(changed)) when what it reports changed. Files in O(dest) that differ from the new report only by their time are
    kept as they are, with their time.
  - Without O(dest), only returns the rendered report.
options:
  kind:
    description:
      - V(verify) - O(data) is the C(report) returned by M(ocp.egressip.egressip_verify).
      - V(failover_drill) - O(data) holds C(steps) (each C(node), C(trigger), C(failure), C(remediation), C(restore), which are the
        results of M(ocp.egressip.egressip_failover) and M(ocp.egressip.egressip_verify)), and optionally C(cordon),
        C(baseline), C(final) (verify reports), C(trigger) and C(settings); the summary is computed here.
    type: str
    choices: [verify, failover_drill]
    required: true
  data:
    description: The report data (see O(kind)).
    type: dict
    required: true
  dest:
    description: Directory to write the files to; created when missing.
    type: path
  name:
    description: Base name of the files; defaults to O(kind) (C(verify.json), C(verify.md), C(failover_drill.md)...).
    type: str
extends_documentation_fragment:
  - ocp.egressip.report_files
  - ocp.egressip.common
attributes:
  check_mode:
    details: Renders and compares, writes nothing.
  diff_mode:
    support: full
    details: The Markdown file before and after.
  platform:
    platforms: posix
seealso:
  - module: ocp.egressip.egressip_verify
  - module: ocp.egressip.egressip_failover
'''

EXAMPLES = r'''
- name: Verify, then write reports/verify.json and reports/verify.md
  ocp.egressip.egressip_verify:
    fail_on_error: false
  register: verify

- name: Write the verify report
  ocp.egressip.egressip_report:
    kind: verify
    data: "{{ verify.report }}"
    dest: reports
'''

RETURN = r'''
report:
  description:
    - The report as written to the JSON file (for V(failover_drill), with its computed C(summary) and C(step_summaries), and
      C(cluster) and C(generated_at)); when the files were kept because only the time differed, they keep their own C(generated_at).
  returned: always
  type: dict
  sample: {kind: verify, summary: {ok: true}}
markdown:
  description: The Markdown report.
  returned: always
  type: str
  sample: "# EgressIP verification\n\n**Result: PASSED** - 2 egress IP(s), 2 assigned, 2 healthy, 0 blackholed; 0 error(s), 0 warning(s).\n"
paths:
  description: The files written (or that would be written), JSON first.
  returned: always
  type: list
  elements: str
  sample: [reports/verify.json, reports/verify.md]
ok:
  description: The report's verdict (no error finding).
  returned: always
  type: bool
  sample: true
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill as _drill
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report
from ansible_collections.ocp.egressip.plugins.module_utils.reports import files as _report_files
from ansible_collections.ocp.egressip.plugins.module_utils.reports import html as _html


def build(kind, data):
    """The report dict for a kind: the drill's summary is computed from its steps."""
    if kind == 'failover_drill':
        return _drill.assemble(data)
    report = dict(data)
    if report.get('kind') not in (None, kind):
        raise ValueError("data.kind is %r, but kind=%s; pass the report of egressip_verify (its 'report' result) as data."
                         % (report.get('kind'), kind))
    report['kind'] = kind
    return report


def main():
    module = AnsibleModule(
        argument_spec=dict(
            kind=dict(type='str', choices=['verify', 'failover_drill'], required=True),
            data=dict(type='dict', required=True),
            dest=dict(type='path'),
            name=dict(type='str'),
            formats=dict(type='list', elements='str', choices=['json', 'markdown', 'html'], default=['json', 'markdown', 'html']),
            html_template=dict(type='path'),
            mode=dict(type='raw', default='0644'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        report = build(params['kind'], params['data'])
        markdown = _report.render_markdown(report)
        contents = [(suffix, text) for fmt, suffix, text in (('json', '.json', _report.render_json(report)), ('markdown', '.md', markdown))
                    if fmt in params['formats']]
        if 'html' in params['formats']:
            template = _report_files.read_template(module, 'egressip_report')
            contents.append(('.html', _html.render_html(report, template=template, markdown=markdown)))
    except (ValueError, KeyError, TypeError) as exc:
        module.fail_json(msg='egressip_report: data is not a %s report: %s' % (params['kind'], exc))
    except Exception as exc:  # pylint: disable=broad-except  # a user's html_template that Jinja2 cannot render
        module.fail_json(msg='egressip_report: html_template cannot be rendered: %s' % exc)
    name = params['name'] or params['kind']
    problem = _report_files.check_name(name)
    if problem:
        module.fail_json(msg=problem)
    paths, changed, diffs = [], False, []
    if params['dest']:
        paths, changed, diffs = _report_files.write_reports(module, params['dest'], name, contents, params['mode'],
                                                            stamp=report.get('generated_at'))
    result = dict(changed=changed, report=report, markdown=markdown, paths=paths, ok=bool(report.get('summary', {}).get('ok')))
    if module._diff and diffs:
        result['diff'] = [item for item in diffs if item['after_header'].endswith('.md')] or diffs
    module.exit_json(**result)


if __name__ == '__main__':
    main()
