# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reports for machines (JSON) and for people (Markdown), rendered from plain result data.

Pure code: no I/O. A report is a JSON-serialisable dict with a ``kind`` (``verify``,
``failover_drill``, ...); ``render_json`` and ``render_markdown`` turn it into file
contents. The building blocks (tables, the findings section, the Mermaid diagram of nodes,
NICs and egress IPs, the lines naming the cluster and the time after the verdict: ``identity_lines``) are shared by
every kind, so all reports of the collection look alike.
Renderers for a kind are registered in ``RENDERERS``. Output is deterministic: the same data
gives the same bytes, so a report file only changes when what it reports changes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

SEVERITY_ORDER = {'error': 0, 'warning': 1, 'info': 2}
SEVERITY_WORDS = {'error': 'ERROR', 'warning': 'WARNING', 'info': 'info'}
_MERMAID_ID = re.compile(r'[^A-Za-z0-9_]')


# --- JSON -------------------------------------------------------------------------------------

def render_json(report):
    """The machine-readable report: sorted keys, two-space indent, trailing newline."""
    return json.dumps(report, sort_keys=True, indent=2, separators=(',', ': ')) + '\n'


# --- Markdown building blocks -------------------------------------------------------------------

def cell(value):
    """A table cell: ``-`` for nothing, booleans as yes/no, lists comma-joined, pipes and newlines escaped."""
    if value is None or value == '' or value == []:
        return '-'
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, (list, tuple)):
        return cell(', '.join(str(item) for item in value))
    if isinstance(value, float):
        return '%.2f' % value
    return str(value).replace('|', '\\|').replace('\r', '').replace('\n', '<br>')


def seconds(value):
    """A measured duration for a table: ``12.34 s``, or ``-`` when not measured."""
    if value is None:
        return '-'
    return '%.2f s' % value


def table(headers, rows):
    """A Markdown table as a list of lines (an empty table says so instead)."""
    if not rows:
        return ['_none_']
    lines = ['| %s |' % ' | '.join(cell(header) for header in headers),
             '|%s|' % '|'.join(' --- ' for _header in headers)]
    for row in rows:
        lines.append('| %s |' % ' | '.join(cell(value) for value in row))
    return lines


def sorted_findings(findings):
    """Errors first, then warnings, then info; stable within a severity."""
    return sorted(findings or [], key=lambda item: SEVERITY_ORDER.get(item.get('severity'), 3))


def findings_section(findings, title='Findings'):
    """``## Findings`` with a one-line count and a table of severity, id, message and remedy."""
    findings = sorted_findings(findings)
    counts = dict((severity, len([item for item in findings if item.get('severity') == severity])) for severity in SEVERITY_ORDER)
    lines = ['## %s' % title, '',
             '%d error(s), %d warning(s), %d info.' % (counts['error'], counts['warning'], counts['info']), '']
    rows = [(SEVERITY_WORDS.get(item.get('severity'), item.get('severity')), '`%s`' % item.get('id'), item.get('message'),
             item.get('remedy')) for item in findings]
    lines += table(['Severity', 'Id', 'Message', 'Remedy'], rows)
    return lines + ['']


def mermaid_id(prefix, name):
    """A Mermaid node id: letters, digits and underscores only."""
    return '%s_%s' % (prefix, _MERMAID_ID.sub('_', str(name)))


def mermaid_label(*parts):
    """A quoted Mermaid label from text parts, one per line; quotes replaced by Mermaid's entity."""
    text = '<br/>'.join(str(part) for part in parts if part not in (None, ''))
    return '"%s"' % text.replace('"', '#quot;')


def topology_diagram(network, nodes, egress_ips):
    """A Mermaid flowchart: egress IPs -> nodes (grouped by ESXi host) -> the secondary network.

    network: ``{'name', 'cidr'}`` (port group and subnet). nodes: ``[{'name', 'host', 'address',
    'nic', 'connected', 'path_ok'}]`` where ``nic`` names the NIC (kernel name or MAC) and
    ``path_ok`` False marks a broken secondary path. egress_ips: ``[{'egressip', 'ip', 'node',
    'ok'}]``; an IP without a node is drawn alone (unassigned).
    """
    lines = ['```mermaid', 'flowchart LR']
    net_id = 'net'
    lines.append('  %s([%s])' % (net_id, mermaid_label(network.get('name') or 'secondary network', network.get('cidr'))))
    broken = []
    by_host = {}
    for node in nodes:
        by_host.setdefault(node.get('host') or '', []).append(node)
    for host in sorted(by_host):
        members = sorted(by_host[host], key=lambda item: item['name'])
        if host:
            lines.append('  subgraph %s[%s]' % (mermaid_id('esx', host), mermaid_label('ESXi ' + host)))
        for node in members:
            node_id = mermaid_id('node', node['name'])
            lines.append('  %s%s[%s]' % ('  ' if host else '', node_id, mermaid_label(node['name'], node.get('address'))))
            if node.get('path_ok') is False:
                broken.append(node_id)
        if host:
            lines.append('  end')
    for node in sorted(nodes, key=lambda item: item['name']):
        node_id = mermaid_id('node', node['name'])
        text = ' '.join(part for part in (node.get('nic'), 'connected' if node.get('connected') else
                                          ('disconnected' if node.get('connected') is False else None)) if part)
        if node.get('path_ok') is False:
            lines.append('  %s -. %s .-> %s' % (node_id, mermaid_label(text or 'broken'), net_id))
        else:
            lines.append('  %s -- %s --> %s' % (node_id, mermaid_label(text or 'NIC'), net_id))
    for item in sorted(egress_ips, key=lambda entry: (entry.get('egressip') or '', entry.get('ip') or '')):
        ip_id = mermaid_id('ip', item['ip'])
        label = mermaid_label(item.get('egressip'), item['ip'], None if item.get('node') else 'unassigned')
        lines.append('  %s((%s))' % (ip_id, label))
        if item.get('node'):
            lines.append('  %s --> %s' % (ip_id, mermaid_id('node', item['node'])))
        if item.get('ok') is False:
            broken.append(ip_id)
    if broken:
        lines.append('  classDef broken fill:#fdd,stroke:#c00,color:#600')
        lines.append('  class %s broken' % ','.join(broken))
    lines.append('```')
    return lines


IDENTITY_LABELS = (('name', 'Cluster'), ('id', 'Cluster ID'), ('openshift_version', 'OpenShift'), ('api_url', 'API server'))


def identity_rows(report):
    """[(label, value or 'unknown')] of the report's ``cluster`` block (model/cluster_identity.py), then the time it was
    made; [] for a report without either."""
    cluster = report.get('cluster') or {}
    if not any(field in cluster for field, _label in IDENTITY_LABELS) and not report.get('generated_at'):
        return []
    rows = [(label, cluster.get(field) or 'unknown') for field, label in IDENTITY_LABELS]
    return rows + [('Made', '%s (UTC)' % report['generated_at'] if report.get('generated_at') else 'unknown')]


def identity_lines(report):
    """The lines after a report's verdict naming the cluster and the time: ``Cluster `name` (ID `id`, OpenShift x.y.z),
    API server https://...; made 2026-11-30T10:00:00Z (UTC).``, then why a part is unknown, if one is."""
    rows = dict(identity_rows(report))
    if not rows:
        return []
    lines = ['Cluster `%s` (ID `%s`, OpenShift %s), API server %s; made %s.' % (
        rows['Cluster'], rows['Cluster ID'], rows['OpenShift'], rows['API server'], rows['Made'])]
    unknown = (report.get('cluster') or {}).get('unknown') or {}
    by_reason = {}
    for field, label in IDENTITY_LABELS:
        if field in unknown:
            by_reason.setdefault(unknown[field], []).append(label)
    if by_reason:
        lines.append('Unknown: %s.' % '; '.join('%s (%s)' % (', '.join(labels), reason) for reason, labels in sorted(by_reason.items())))
    return lines + ['']


def document(title, sections):
    """The whole Markdown document: a title and sections (lists of lines), ending with one newline."""
    lines = ['# %s' % title, '']
    for section in sections:
        lines.extend(section)
        if lines and lines[-1] != '':
            lines.append('')
    while lines and lines[-1] == '':
        lines.pop()
    return '\n'.join(lines) + '\n'


# --- verify -----------------------------------------------------------------------------------------

STATUS_WORDS = {
    'ok': 'OK', 'unassigned': 'UNASSIGNED', 'node_missing': 'NODE MISSING', 'node_lacks_network': 'NODE LACKS NETWORK',
    'unhealthy_node': 'NODE NOT READY/UNLABELLED', 'blackhole': 'BLACKHOLE', 'path_not_checked': 'path not checked',
}


def _verdict(ok):
    return 'PASSED' if ok else 'FAILED'


def _nic_text(node):
    nic = node.get('nic') or {}
    if not nic:
        return None
    return ' '.join(part for part in (node.get('interface'), nic.get('mac'), 'connected' if nic.get('connected') else 'DISCONNECTED') if part)


def _portgroup_text(node):
    nic = node.get('nic') or {}
    if not nic:
        return None
    if nic.get('portgroup_on_host') is None:
        return nic.get('network')
    return '%s (%s)' % (nic.get('network'), 'on host' if nic.get('portgroup_on_host') else 'MISSING on host')


def verify_ip_rows(report):
    rows = []
    for row in report.get('egress_ips') or []:
        rows.append((row['egressip'], row['ip'], row.get('node'), row.get('network'), STATUS_WORDS.get(row['status'], row['status']),
                     row.get('wire'), '; '.join(row.get('problems') or [])))
    return table(['EgressIP', 'IP', 'Node', 'Network', 'Status', 'Wire', 'Problems'], rows)


def verify_node_rows(report):
    rows = []
    for node in report.get('nodes') or []:
        rows.append((node['name'], node.get('ready'), node.get('labelled'), node.get('vm'), node.get('esxi_host'), _nic_text(node),
                     _portgroup_text(node), node.get('address'), node.get('egress_ips'), (node.get('path') or '').upper() or None))
    return table(['Node', 'Ready', 'Egress label', 'VM', 'ESXi host', 'NIC', 'Port group', 'Address', 'Egress IPs', 'Path'], rows)


def topology_inputs(report):
    """(network, nodes, egress_ips) of a verify report for a topology drawing (topology_diagram, html.svg_topology)."""
    network = report.get('network') or {}
    nodes = [{'name': node['name'], 'host': node.get('esxi_host'), 'address': node.get('address'),
              'nic': node.get('interface') or (node.get('nic') or {}).get('mac'),
              'connected': (node.get('nic') or {}).get('connected'), 'path_ok': node.get('path') != 'broken'}
             for node in report.get('nodes') or []]
    ips = [{'egressip': row['egressip'], 'ip': row['ip'], 'node': row.get('node'), 'ok': row['status'] == 'ok'}
           for row in report.get('egress_ips') or []]
    return {'name': network.get('portgroup'), 'cidr': network.get('cidr')}, nodes, ips


def diagram(report):
    """The Mermaid diagram of a verify report."""
    return topology_diagram(*topology_inputs(report))


def wire_rows(probes):
    rows = [(probe['egressip'], probe.get('namespace'), probe.get('outcome'), probe.get('source_ip'), probe.get('expected'),
             'yes' if probe.get('ok') else ('-' if probe.get('outcome') == 'not_run' else 'NO'), probe.get('reason'))
            for probe in probes or []]
    return table(['EgressIP', 'Namespace', 'Outcome', 'Source seen', 'Expected one of', 'OK', 'Note'], rows)


def remediation_section(remediation):
    lines = ['## Blackhole remediation', '']
    if remediation.get('refused'):
        lines.append('Refused: removing the egress-assignable label from %s would leave egress IPs unassigned; nothing was changed.'
                     % ', '.join(remediation.get('nodes') or []))
        return lines + ['']
    verb = 'Would remove' if remediation.get('check_mode') else 'Removed'
    lines.append('%s the `k8s.ovn.org/egress-assignable` label from %s%s.' % (
        verb, ', '.join(remediation.get('nodes') or []) or 'no node',
        '' if remediation.get('check_mode') or remediation.get('seconds') is None else
        '; every moved egress IP was assigned elsewhere after %s' % seconds(remediation['seconds'])))
    lines.append('')
    rows = [(move['egressip'], move['ip'], move.get('from'), move.get('to'), move.get('candidates'), seconds(move.get('seconds')))
            for move in remediation.get('moves') or []]
    lines += table(['EgressIP', 'IP', 'From', 'To', 'Predicted candidates', 'Reassigned after'], rows)
    return lines + ['']


def verify_markdown(report):
    summary = report.get('summary') or {}
    network = report.get('network') or {}
    head = ['**Result: %s** - %d egress IP(s), %d assigned, %d healthy, %d blackholed; %d error(s), %d warning(s).'
            % (_verdict(summary.get('ok')), summary.get('egress_ips', 0), summary.get('assigned', 0), summary.get('healthy', 0),
               summary.get('blackholed', 0), summary.get('errors', 0), summary.get('warnings', 0)), '']
    head += identity_lines(report)
    head += ['Secondary network %s, port group %s.' % (network.get('cidr') or '-', network.get('portgroup') or '-'), '']
    sections = [head, ['## Egress IPs', ''] + verify_ip_rows(report) + [''], ['## Nodes', ''] + verify_node_rows(report) + ['']]
    if report.get('wire') is not None:
        sections.append(['## Wire check', '', 'A probe pod per EgressIP asks an echo target off the cluster which source address it '
                         'sees; it must be one of the egress IPs assigned to the object.', ''] + wire_rows(report['wire']) + [''])
    if report.get('remediation'):
        sections.append(remediation_section(report['remediation']))
    sections.append(['## Diagram', ''] + diagram(report) + [''])
    sections.append(findings_section(report.get('findings')))
    return document('EgressIP verification', sections)


# --- failover drill ---------------------------------------------------------------------------------

def _held(value):
    return {True: 'yes', False: 'NO', None: '-'}[value]


def drill_step_rows(report):
    """The steps' table. Capitals mark what went wrong: a prediction that did not hold (NO), a failback (YES: OVN-K has
    none, so an IP that moved back is a finding)."""
    rows = []
    for index, row in enumerate(report.get('step_summaries') or [], 1):
        rows.append((index, row['node'], row['trigger'], row['egress_ips_before'], row['moved'], seconds(row['reassigned_seconds']),
                     seconds(row['wire_seconds']), _held(row['prediction_held']),
                     'yes' if row['blackhole_detected'] else '-', 'YES' if row['failback'] else 'no'))
    return table(['#', 'Node', 'Trigger', 'IPs on node', 'IPs moved', 'Reassigned after', 'Wire back after', 'Prediction held',
                  'Blackhole detected', 'Failback'], rows)


def _carrier_lines(carrier):
    """What NetworkManager did after disconnect_nic: the behaviour predicted (and why) and the one observed."""
    if not carrier:
        return []
    observed = {'remove': 'NetworkManager removed the address (no ignore-carrier) after %s, so the IPs moved (a failover)',
                'keep': 'the address stayed for %s (ignore-carrier), so nothing moved (a blackhole)'}.get(carrier.get('observed'))
    text = 'Carrier loss: predicted %s (%s); ' % (carrier.get('predicted'), carrier.get('source'))
    text += (observed % seconds(carrier.get('observed_seconds'))) if observed else 'not observed'
    return [text + '.', '']


def _step_detail(index, step):
    failure = step.get('failure') or {}
    remediation = step.get('remediation') or {}
    restore = step.get('restore') or {}
    prediction = failure.get('prediction') or {}
    lines = ['### %d. %s: %s' % (index, step.get('node'), step.get('trigger')), '']
    lines.append('Prediction: %s.' % '; '.join(prediction.get('notes') or ['-']))
    lines.append('')
    comparison = dict(((row['egressip'], row['ip']), row) for row in (failure.get('comparison') or []) + (remediation.get('comparison') or []))
    moves = remediation.get('moves') or failure.get('moves') or []
    lines += _carrier_lines(failure.get('carrier_loss'))
    if prediction.get('effect') == 'blackhole':
        blackholed = ', '.join('%s %s' % (item['egressip'], item['ip']) for item in prediction.get('blackholed') or []) or 'none'
        lines.append('The node kept its address (ignore-carrier), so OVN-Kubernetes does not notice a disconnected secondary vNIC: '
                     '%s stayed on %s (observed for %s). '
                     'Verify %s the blackhole%s.' % (
                         blackholed, step.get('node'), seconds(failure.get('observed_seconds')),
                         'detected' if remediation.get('detected') else 'did not detect',
                         ' and removed the label of %s (the times below run from that label removal)' % ', '.join(remediation.get('nodes') or [])
                         if remediation.get('moves') else ''))
        lines.append('')
    rows = []
    for move in moves:
        row = comparison.get((move['egressip'], move['ip'])) or {}
        rows.append((move['egressip'], move['ip'], move.get('from'), move.get('to') or 'not moved', move.get('candidates') or row.get('predicted'),
                     seconds(move.get('seconds')), _held(row.get('ok')) if row else '-'))
    lines += table(['EgressIP', 'IP', 'From', 'To', 'Predicted candidates', 'Reassigned after', 'As predicted'], rows)
    wire = failure.get('wire') or []
    if wire:
        lines += ['', 'Wire after the failover:', '']
        lines += table(['EgressIP', 'Moved IP', 'Seen by the echo target after', 'Probe pods'],
                       [(item['egressip'], ip, seconds((item.get('seen') or {}).get(ip)), item.get('attempts'))
                        for item in wire for ip in item.get('ips') or [None]])
    if restore:
        moved = ', '.join('%s %s %s->%s' % (m['egressip'], m['ip'], m['from'], m['to']) for m in restore.get('unexpected_moves') or [])
        lines += ['', 'Restored (%s) after %s; watched for %s: %s.' % (
            restore.get('action') or 'undo', seconds(restore.get('seconds')), seconds(restore.get('observed_seconds')),
            'egress IPs moved: %s' % moved if moved else 'no egress IP moved back (no failback)')]
    return lines + ['']


def cordon_section(cordon):
    lines = ['## Cordon moves nothing', '']
    moved = cordon.get('unexpected_moves') or []
    lines.append('Node %s was cordoned (spec.unschedulable) and watched for %s: %s. It was uncordoned afterwards.' % (
        cordon.get('node'), seconds(cordon.get('observed_seconds')),
        'no egress IP moved, as OVN-Kubernetes ignores cordon' if not moved else
        '%d egress IP(s) moved, which OVN-Kubernetes should not do' % len(moved)))
    return lines + ['']


def drill_markdown(report):
    summary = report.get('summary') or {}
    head = ['**Result: %s** - %d step(s) on %s, %d egress IP move(s); slowest reassignment %s, mean %s; prediction %s; failback %s.'
            % (_verdict(summary.get('ok')), summary.get('steps', 0), ', '.join(summary.get('nodes') or []) or 'no node',
               summary.get('moved', 0), seconds(summary.get('reassigned_seconds_max')), seconds(summary.get('reassigned_seconds_mean')),
               'held' if summary.get('prediction_held') else 'DID NOT HOLD', 'OBSERVED' if summary.get('failback') else 'none'), '']
    head += identity_lines(report)
    head += ['Times are measured with a monotonic clock from the moment the trigger took effect until the egress IP showed on '
             'another node in EgressIP status (polling every %s s), and until the echo target saw the IP again (wire).'
             % ((report.get('settings') or {}).get('poll_interval', '-')), '']
    sections = [head, ['## Steps', ''] + drill_step_rows(report) + ['']]
    details = ['## Step details', '']
    for index, step in enumerate(report.get('steps') or [], 1):
        details += _step_detail(index, step)
    sections.append(details)
    if report.get('cordon'):
        sections.append(cordon_section(report['cordon']))
    final = report.get('final')
    if final:
        sections.append(['## Final state', ''] + verify_ip_rows(final) + [''] + diagram(final) + [''])
    sections.append(findings_section(report.get('findings')))
    return document('EgressIP failover drill', sections)


# --- renderers per report kind ----------------------------------------------------------------------

RENDERERS = {'verify': verify_markdown, 'failover_drill': drill_markdown}


def render_markdown(report):
    """The human report for a report dict, by its ``kind``; raises ValueError for an unknown kind."""
    kind = report.get('kind')
    if kind not in RENDERERS:
        raise ValueError('report kind must be one of %s, not %r' % (', '.join(sorted(RENDERERS)) or 'none', kind))
    return RENDERERS[kind](report)
