# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Self-contained HTML reports: one file, no external assets, no JavaScript, readable in any browser, a mail client
or a support-case attachment viewer.

The header has the verdict and the cluster the report is about (name, ID, OpenShift version, API server) with the time
it was made (``identity``, ``generated_at``; report.identity_rows); then the topology as an inline SVG drawn here (egress IPs, the nodes on their ESXi hosts,
each node's path to the secondary network, broken ones in red), then the sections of the Markdown report (tables of
IPs, nodes, steps) and the findings with their remedies and runbook anchors. The page is a Jinja2 template (Jinja2
ships with Ansible) that gets the report data itself (``report``) besides these pieces, so a user's template can lay
it out differently. Output is deterministic, as for the other formats.

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    import jinja2
    HAS_JINJA2 = True
except ImportError:  # pragma: no cover - Ansible brings Jinja2
    jinja2 = None
    HAS_JINJA2 = False

from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report

# the runbook section of each finding, relative to the collection (docs/runbook.md is in the built collection)
RUNBOOK = 'docs/runbook.md#%s'
INLINE_CODE = re.compile(r'`([^`]+)`')
BOLD = re.compile(r'\*\*([^*]+)\*\*')


def escape(text):
    return (str(text).replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;'))


def inline(text):
    """One line of the Markdown subset the reports write (code, bold, <br> in cells) as HTML."""
    html = escape(text).replace('&lt;br&gt;', '<br>').replace('\\|', '|')
    html = INLINE_CODE.sub(r'<code>\1</code>', html)
    return BOLD.sub(r'<strong>\1</strong>', html)


def _cells(line):
    cells = re.split(r'(?<!\\)\|', line.strip())[1:-1]
    return [cell.strip() for cell in cells]


def sections(markdown, skip=('Findings', 'Diagram')):
    """The ``##`` sections of a Markdown report as [{'title', 'html'}]: paragraphs, tables, ``###`` headings; the
    Mermaid block and the sections in `skip` left out (the page draws the topology and the findings itself)."""
    result, current, lines = [], None, markdown.splitlines()
    index = 0
    body = []

    def close():
        if current is not None and current not in skip:
            result.append({'title': current, 'html': '\n'.join(body)})

    while index < len(lines):
        line = lines[index]
        if line.startswith('## '):
            close()
            current, body = line[3:].strip(), []
        elif line.startswith('```'):
            index += 1
            while index < len(lines) and not lines[index].startswith('```'):
                index += 1
        elif line.startswith('### '):
            body.append('<h3>%s</h3>' % inline(line[4:]))
        elif line.startswith('|'):
            rows = []
            while index < len(lines) and lines[index].startswith('|'):
                rows.append(lines[index])
                index += 1
            index -= 1
            head = ''.join('<th>%s</th>' % inline(cell) for cell in _cells(rows[0]))
            cells = ''.join('<tr>%s</tr>' % ''.join('<td>%s</td>' % inline(cell) for cell in _cells(row)) for row in rows[2:])
            body.append('<table><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (head, cells))
        elif line.strip() and not line.startswith('# ') and current is not None:
            body.append('<p>%s</p>' % inline(line))
        index += 1
    close()
    return result


def lead(markdown):
    """The lines between the title and the first section (the verdict and what was checked)."""
    text = markdown.split('\n## ', 1)[0]
    return [inline(line) for line in text.splitlines()[1:] if line.strip()]


# --- the topology -----------------------------------------------------------------------------------

NODE_W, NODE_H, GAP, HOST_PAD, IP_R = 220, 44, 14, 26, 40


def svg_topology(network, nodes, egress_ips):
    """The topology as an inline SVG: egress IPs (left) -> nodes grouped by ESXi host (middle) -> the secondary
    network (right). Same inputs as report.topology_diagram. Every node is a ``<g class="node" data-node=...>``, every
    IP a ``<g class="egress-ip" data-ip=...>``; broken paths and IPs not on a working path are red and dashed."""
    hosts = {}
    for node in nodes:
        hosts.setdefault(node.get('host') or '', []).append(node)
    ips = sorted(egress_ips, key=lambda entry: (entry.get('egressip') or '', entry.get('ip') or ''))
    node_y, parts, y = {}, [], 20
    host_x, node_x = 300, 320
    for host in sorted(hosts):
        members = sorted(hosts[host], key=lambda item: item['name'])
        top = y
        y += HOST_PAD
        for node in members:
            node_y[node['name']] = y
            y += NODE_H + GAP
        height = y - top + 6
        parts.append('<g class="host"><rect x="%d" y="%d" width="%d" height="%d" rx="8" class="host-box"/>'
                     '<text x="%d" y="%d" class="host-label">%s</text></g>'
                     % (host_x, top, NODE_W + 40, height, host_x + 10, top + 17, escape('ESXi ' + host if host else 'host unknown')))
        y += 20
    ip_step = max(2 * IP_R + 16, 1)
    height = max(y, 40 + len(ips) * ip_step, 160)
    net_x, net_w = 700, 180
    parts.append('<g class="network"><rect x="%d" y="20" width="%d" height="%d" rx="10" class="net-box"/>'
                 '<text x="%d" y="48" class="net-label">%s</text><text x="%d" y="68" class="net-label">%s</text></g>'
                 % (net_x, net_w, height - 40, net_x + 12, escape(network.get('name') or 'secondary network'), net_x + 12,
                    escape(network.get('cidr') or '')))
    for node in sorted(nodes, key=lambda item: item['name']):
        top = node_y[node['name']]
        broken = node.get('path_ok') is False
        middle = top + NODE_H // 2
        link = 'broken' if broken else 'ok'
        state = {True: 'connected', False: 'disconnected'}.get(node.get('connected'))
        label = ' '.join(part for part in (node.get('nic'), state) if part)
        parts.append('<g class="node %s" data-node="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="6" class="node-box"/>'
                     '<text x="%d" y="%d" class="node-name">%s</text><text x="%d" y="%d" class="node-address">%s</text>'
                     '<line x1="%d" y1="%d" x2="%d" y2="%d" class="path %s"/><text x="%d" y="%d" class="path-label">%s</text></g>'
                     % (link, escape(node['name']), node_x, top, NODE_W, NODE_H, node_x + 10, top + 18, escape(node['name']),
                        node_x + 10, top + 35, escape(node.get('address') or 'no address'), node_x + NODE_W, middle, net_x, middle,
                        link, node_x + NODE_W + 12, middle - 6, escape(label or ('broken' if broken else 'NIC'))))
    for index, item in enumerate(ips):
        cy = 20 + IP_R + index * ip_step
        state = 'ok' if item.get('ok') is not False else 'broken'
        arrow = ''
        if item.get('node') in node_y:
            arrow = '<line x1="%d" y1="%d" x2="%d" y2="%d" class="assignment %s"/>' % (
                40 + 2 * IP_R, cy, node_x, node_y[item['node']] + NODE_H // 2, state)
        parts.append('<g class="egress-ip %s" data-ip="%s">%s<circle cx="%d" cy="%d" r="%d" class="ip-circle"/>'
                     '<text x="%d" y="%d" class="ip-label">%s</text><text x="%d" y="%d" class="ip-object">%s</text></g>'
                     % (state, escape(item['ip']), arrow, 40 + IP_R, cy, IP_R, 40 + IP_R, cy - 2, escape(item['ip']),
                        40 + IP_R, cy + 13, escape(item.get('egressip') or '') if item.get('node') else 'unassigned'))
    return ('<svg xmlns="http://www.w3.org/2000/svg" class="topology" viewBox="0 0 900 %d" width="900" height="%d" role="img" '
            'aria-label="Egress IPs, nodes on their ESXi hosts, and the secondary network">%s</svg>' % (height, height, ''.join(parts)))


def topology(report):
    """The SVG of a verify report (the final state of a drill report)."""
    return svg_topology(*_report.topology_inputs(report))


# --- the page ------------------------------------------------------------------------------------------

TITLES = {'verify': 'EgressIP verification', 'failover_drill': 'EgressIP failover drill'}

# The start of every report page and its table style (reports/fleet_html.py uses them too).
PAGE_HEAD = '''<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} - {{ verdict }}</title>
<style>
'''
TABLE_STYLE = '''table { border-collapse: collapse; margin: .5em 0 1.5em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f1f1f1; }
'''

TEMPLATE = PAGE_HEAD + '''\
body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 2em; color: #1b1b1b; max-width: 1200px; }
.verdict { font-size: 1.4em; padding: .6em 1em; border-radius: 6px; margin: 0 0 1em 0; }
.verdict.passed { background: #e4f4e4; border: 2px solid #2e7d32; }
.verdict.failed { background: #fde4e4; border: 2px solid #c62828; }
''' + TABLE_STYLE + '''code { background: #f4f4f4; padding: 0 .2em; }
.severity-error { color: #b71c1c; font-weight: bold; }
.severity-warning { color: #8a5a00; font-weight: bold; }
svg.topology { border: 1px solid #ddd; border-radius: 6px; background: #fcfcfc; max-width: 100%; height: auto; }
.host-box { fill: #eef3fb; stroke: #7a95c2; }
.host-label, .net-label { font-size: 13px; font-weight: bold; fill: #263a5e; }
.net-box { fill: #eef8ee; stroke: #5a9a5a; }
.node-box { fill: #fff; stroke: #555; }
.node.broken .node-box { stroke: #c62828; stroke-width: 2; }
.node-name { font-size: 13px; font-weight: bold; }
.node-address, .path-label, .ip-object { font-size: 11px; fill: #444; }
.path, .assignment { stroke-width: 2; }
.path.ok, .assignment.ok { stroke: #2e7d32; }
.path.broken, .assignment.broken { stroke: #c62828; stroke-dasharray: 6 4; }
.ip-circle { fill: #fff8e1; stroke: #b58900; stroke-width: 2; }
.egress-ip.broken .ip-circle { fill: #fde4e4; stroke: #c62828; }
.ip-label { font-size: 11px; font-weight: bold; text-anchor: middle; }
.ip-object { text-anchor: middle; }
dl.identity { display: grid; grid-template-columns: max-content auto; gap: .15em 1em; margin: 0 0 1em 0; font-size: .95em; }
dl.identity dt { font-weight: bold; color: #444; }
dl.identity dd { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace; }
p.unknown { color: #8a5a00; margin: 0 0 1em 0; }
</style>
</head>
<body>
<header>
<h1>{{ title }}</h1>
<p class="verdict {{ 'passed' if ok else 'failed' }}">{{ lead[0] | safe }}</p>
{% if identity %}<dl class="identity">
{% for label, value in identity %}<dt>{{ label }}</dt><dd>
{%- if label == 'Made' and generated_at %}<time datetime="{{ generated_at }}">{{ value }}</time>
{%- else %}{{ value }}{% endif %}</dd>
{% endfor %}</dl>
{% endif %}{% for reason in unknown %}<p class="unknown">{{ reason }}</p>
{% endfor %}</header>
{% for line in lead[1:] %}<p>{{ line | safe }}</p>
{% endfor %}
{% if svg %}<h2>Topology</h2>
{{ svg | safe }}
{% endif %}
{% for section in sections %}<h2>{{ section.title }}</h2>
{{ section.html | safe }}
{% endfor %}
<h2>Findings</h2>
{% if findings %}<table><thead><tr><th>Severity</th><th>Id</th><th>Message</th><th>Remedy</th></tr></thead><tbody>
{% for item in findings %}<tr><td class="severity-{{ item.severity }}">{{ item.severity | upper }}</td>
<td><a href="{{ runbook % item.id }}"><code>{{ item.id }}</code></a></td><td>{{ item.message }}</td><td>{{ item.remedy }}</td></tr>
{% endfor %}</tbody></table>
{% else %}<p>No finding.</p>
{% endif %}
</body>
</html>
'''


def render_html(report, template=None, markdown=None, title=None):
    """The HTML page of a report; `template` replaces the default Jinja2 template text. `markdown` is the report's
    Markdown when its kind has a renderer of its own (the support report), else report.render_markdown's."""
    if not HAS_JINJA2:
        raise ValueError('the HTML report needs the Python library Jinja2 (it comes with ansible-core)')
    markdown = markdown if markdown is not None else _report.render_markdown(report)
    identity_lines = [line for line in _report.identity_lines(report) if line]  # shown in the header, not in the lead
    identity_html = [inline(line) for line in identity_lines]
    svg_source = report if report.get('kind') == 'verify' else report.get('final')
    environment = jinja2.Environment(autoescape=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    page = environment.from_string(template or TEMPLATE)
    return page.render(
        report=report, title=title or TITLES.get(report.get('kind'), 'EgressIP report'), ok=bool((report.get('summary') or {}).get('ok')),
        verdict='PASSED' if (report.get('summary') or {}).get('ok') else 'FAILED', sections=sections(markdown),
        lead=[line for line in lead(markdown) if line not in identity_html], identity=_report.identity_rows(report),
        generated_at=report.get('generated_at') or '', unknown=identity_lines[1:],
        svg=topology(svg_source) if svg_source else '', runbook=RUNBOOK,
        findings=[dict((key, item.get(key) or '') for key in ('id', 'severity', 'message', 'remedy'))
                  for item in _report.sorted_findings(report.get('findings'))])
