# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report as one self-contained HTML page, in the style of the other reports (reports/html.py): no external
asset, no JavaScript. The verdict first, the clusters per verdict as an inline SVG bar, then one table row per cluster
(``<tr class="cluster verdict-<verdict>" data-cluster="<inventory host>">``), the failed clusters with their task and
message, those not run, the drift from the variables files, what the runs changed and the totals.

The page is a Jinja2 template (``TEMPLATE``; a user's template replaces it through the module's ``html_template``) that
gets ``report`` (the fleet report itself), ``title``, ``verdict``, ``headline``, ``headers`` and ``rows``
(the cells of each cluster's row, with ``verdict`` and ``inventory``), ``drift`` (``inventory``, ``id``, ``message``), ``changes``
(``inventory``, ``change``), ``svg`` and ``generated_at``; autoescape is on.
Output is deterministic. Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.reports import fleet as _fleet
from ansible_collections.ocp.egressip.plugins.module_utils.reports import html as _html

COLOURS = {'ok': '#2e7d32', 'warning': '#b58900', 'error': '#c62828', 'failed': '#6a1b1b', 'not_run': '#9e9e9e'}
BAR_W, BAR_H = 860, 28


def svg_verdicts(report):
    """The clusters per verdict as one horizontal bar (``<rect class="verdict-<name>" data-count=...>``) with a legend."""
    counts = report['totals']
    parts, x = [], 20.0
    names = list(_fleet.VERDICTS) + ['not_run']
    total = sum(counts[name] for name in names) or 1
    for name in names:
        if not counts[name]:
            continue
        width = BAR_W * counts[name] / float(total)
        parts.append('<rect x="%.1f" y="10" width="%.1f" height="%d" class="verdict-%s" data-count="%d" fill="%s"><title>%s: %d</title></rect>'
                     % (x, width, BAR_H, name, counts[name], COLOURS[name], name.replace('_', ' '), counts[name]))
        x += width
    legend_x = 20
    for name in names:
        parts.append('<rect x="%d" y="52" width="12" height="12" fill="%s"/><text x="%d" y="63" class="legend">%s %d</text>'
                     % (legend_x, COLOURS[name], legend_x + 18, name.replace('_', ' '), counts[name]))
        legend_x += 140
    return ('<svg xmlns="http://www.w3.org/2000/svg" class="verdicts" viewBox="0 0 900 76" width="900" height="76" role="img" '
            'aria-label="Clusters per verdict">%s</svg>' % ''.join(parts))


TEMPLATE = _html.PAGE_HEAD + '''\
body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 2em; color: #1b1b1b; max-width: 1400px; }
.verdict { font-size: 1.3em; padding: .6em 1em; border-radius: 6px; margin: 0 0 1em 0; }
.verdict.ok { background: #e4f4e4; border: 2px solid #2e7d32; }
.verdict.warning { background: #fff8e1; border: 2px solid #b58900; }
.verdict.error, .verdict.failed { background: #fde4e4; border: 2px solid #c62828; }
''' + _html.TABLE_STYLE + '''td.number { text-align: right; }
code { background: #f4f4f4; padding: 0 .2em; }
tr.verdict-ok td.verdict-cell { color: #2e7d32; font-weight: bold; }
tr.verdict-warning td.verdict-cell { color: #8a5a00; font-weight: bold; }
tr.verdict-error td.verdict-cell, tr.verdict-failed td.verdict-cell { color: #b71c1c; font-weight: bold; }
svg.verdicts { border: 1px solid #ddd; border-radius: 6px; background: #fcfcfc; max-width: 100%; height: auto; }
.legend { font-size: 12px; fill: #333; }
</style>
</head>
<body>
<header>
<h1>{{ title }}</h1>
<p class="verdict {{ report.verdict }}">{{ headline }}</p>
<p>Playbook(s): {{ report.playbooks | join(', ') or 'none' }}; the last cluster finished
{% if generated_at %}<time datetime="{{ generated_at }}">{{ generated_at }} (UTC)</time>{% else %}at an unknown time{% endif %}.</p>
</header>
{{ svg | safe }}
<h2>Clusters</h2>
{% if rows %}<table class="clusters"><thead><tr>{% for header in headers %}<th>{{ header }}</th>{% endfor %}</tr></thead><tbody>
{% for row in rows %}<tr class="cluster verdict-{{ row.verdict }}" data-cluster="{{ row.inventory }}">
{%- for cell in row.cells %}<td{% if loop.index0 == 5 %} class="verdict-cell"{% elif loop.index0 > 5 and loop.index0 < 13 %} class="number"{% endif %}>
{{- cell if cell is not none else '-' }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>
{% else %}<p>No cluster has reported yet.</p>
{% endif %}
<h2>Failed clusters</h2>
{% if report.failed %}<table class="failed"><thead><tr><th>Inventory host</th><th>Cluster</th><th>Playbook</th><th>Task</th><th>Message</th></tr></thead><tbody>
{% for item in report.failed %}<tr class="failed-cluster" data-cluster="{{ item.inventory }}"><td>{{ item.inventory }}</td><td>{{ item.cluster or '-' }}</td>
<td>{{ item.playbook or '-' }}</td><td>{{ item.task }}</td><td>{{ item.message }}</td></tr>
{% endfor %}</tbody></table>
{% else %}<p>No cluster failed.</p>
{% endif %}
{% if report.not_run %}<h2>Not run</h2>
<p>Clusters of the play without a record in this run (the rollout stopped before their batch, or their play has not ended yet):
{% for name in report.not_run %}<code>{{ name }}</code>{{ ', ' if not loop.last else '.' }}{% endfor %}</p>
{% endif %}
<h2>Drift from the variables files</h2>
{% if drift %}<table class="drift"><thead><tr><th>Inventory host</th><th>Id</th><th>Message</th></tr></thead><tbody>
{% for item in drift %}<tr><td>{{ item.inventory }}</td><td><a href="{{ runbook % item.id }}"><code>{{ item.id }}</code></a></td>
<td>{{ item.message }}</td></tr>
{% endfor %}</tbody></table>
{% else %}<p>No drift found.</p>
{% endif %}
{% if changes %}<h2>What the runs changed</h2>
<table class="changes"><thead><tr><th>Inventory host</th><th>Change</th></tr></thead><tbody>
{% for item in changes %}<tr><td>{{ item.inventory }}</td><td>{{ item.change }}</td></tr>
{% endfor %}</tbody></table>
{% endif %}
<h2>Totals</h2>
<table class="totals"><thead><tr><th>Clusters</th><th>OK</th><th>Warning</th><th>Error</th><th>Failed</th><th>Not run</th><th>Egress IPs</th>
<th>Assigned</th><th>Healthy</th><th>Blackholed</th><th>Errors</th><th>Warnings</th><th>Drift</th></tr></thead><tbody>
{% set t = report.totals %}<tr><td>{{ t.clusters }}</td><td>{{ t.ok }}</td><td>{{ t.warning }}</td><td>{{ t.error }}</td><td>{{ t.failed }}</td>
<td>{{ t.not_run }}</td><td>{{ t.egress_ips.total }}</td><td>{{ t.egress_ips.assigned }}</td><td>{{ t.egress_ips.healthy }}</td>
<td>{{ t.egress_ips.blackholed }}</td><td>{{ t.errors }}</td><td>{{ t.warnings }}</td><td>{{ t.drift }}</td></tr>
</tbody></table>
</body>
</html>
'''


def render_html(report, template=None):
    """The HTML page of a fleet report (fleet.build); `template` replaces the default Jinja2 template text."""
    if not _html.HAS_JINJA2:
        raise ValueError('the HTML report needs the Python library Jinja2 (it comes with ansible-core)')
    environment = _html.jinja2.Environment(autoescape=True, keep_trailing_newline=True, undefined=_html.jinja2.StrictUndefined)
    page = environment.from_string(template or TEMPLATE)
    rows = [{'inventory': item['inventory'], 'verdict': item['verdict'], 'cells': _fleet.cluster_cells(item)} for item in report['clusters']]
    drift = [dict(entry, inventory=item['inventory']) for item in report['clusters'] for entry in item['drift']['items']]
    changes = [{'inventory': item['inventory'], 'change': line} for item in report['clusters'] for line in item['changes']]
    return page.render(report=report, drift=drift, changes=changes, title='EgressIP fleet report', verdict=_fleet.VERDICT_WORDS[report['verdict']],
                       headline=_fleet.headline(report), headers=_fleet.CLUSTER_HEADERS, rows=rows,
                       svg=svg_verdicts(report), generated_at=report.get('generated_at') or '', runbook=_html.RUNBOOK)
