# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reports for machines (JSON) and for people (Markdown), rendered from plain result data.

Pure code: no I/O. A report is a JSON-serialisable dict with a ``kind`` (``verify``,
``failover_drill``, ...); ``render_json`` and ``render_markdown`` turn it into file
contents. The building blocks (tables, the findings section, the Mermaid diagram of nodes,
NICs and egress IPs) are shared by every kind, so all reports of the collection look alike.
Renderers for a kind are registered in ``RENDERERS``. Output is deterministic: the same data
gives the same bytes, so a report file only changes when what it reports changes.
Private module_util: no API promise outside this collection.
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


# --- renderers per report kind ----------------------------------------------------------------------

RENDERERS = {}


def render_markdown(report):
    """The human report for a report dict, by its ``kind``; raises ValueError for an unknown kind."""
    kind = report.get('kind')
    if kind not in RENDERERS:
        raise ValueError('report kind must be one of %s, not %r' % (', '.join(sorted(RENDERERS)) or 'none', kind))
    return RENDERERS[kind](report)
