"""reports/html.py: the self-contained HTML report - verdict first, the topology as an inline SVG with a node per
node, the tables of the Markdown report, findings with remedies and runbook anchors - checked as text and in a real
browser (headless Chromium: no console error, the SVG drawn, a PNG of the page)."""

import re

from ansible_collections.ocp.egressip.plugins.module_utils.reports import html
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report

NODES = [
    {'name': 'w-0', 'esxi_host': 'H0', 'address': '10.20.0.10/24', 'interface': 'ens224', 'ready': True, 'labelled': True,
     'nic': {'mac': '00:50:56:00:00:01', 'connected': False, 'network': 'ocp-egress-120', 'portgroup_on_host': True}, 'path': 'broken'},
    {'name': 'w-1', 'esxi_host': 'H1', 'address': '10.20.0.11/24', 'interface': 'ens224', 'ready': True, 'labelled': True,
     'nic': {'mac': '00:50:56:00:00:02', 'connected': True, 'network': 'ocp-egress-120', 'portgroup_on_host': True}, 'path': 'ok'},
    {'name': 'w-2', 'esxi_host': 'H1', 'address': '10.20.0.12/24', 'interface': 'ens224', 'ready': True, 'labelled': True,
     'nic': {'mac': '00:50:56:00:00:03', 'connected': True, 'network': 'ocp-egress-120', 'portgroup_on_host': True}, 'path': 'ok'},
]
VERIFY = {
    'kind': 'verify', 'network': {'cidr': '10.20.0.0/24', 'portgroup': 'ocp-egress-120'},
    'summary': {'ok': False, 'egress_ips': 3, 'assigned': 2, 'healthy': 1, 'blackholed': 1, 'errors': 2, 'warnings': 0},
    'egress_ips': [{'egressip': 'payments', 'ip': '10.20.0.200', 'node': 'w-0', 'network': 'secondary', 'status': 'blackhole',
                    'problems': ['vNIC disconnected']},
                   {'egressip': 'payments', 'ip': '10.20.0.201', 'node': 'w-1', 'network': 'secondary', 'status': 'ok', 'problems': []},
                   {'egressip': 'audit', 'ip': '10.20.0.210', 'node': None, 'network': None, 'status': 'unassigned', 'problems': []}],
    'nodes': NODES,
    'findings': [{'id': 'blackhole_nic_disconnected', 'severity': 'error', 'message': 'The vNIC of w-0 is <disconnected> & "off".',
                  'remedy': 'Connect it.', 'objects': []},
                 {'id': 'egressip_unassigned', 'severity': 'error', 'message': 'audit is on no node.', 'remedy': 'Label nodes.'}],
}


def test_the_page_starts_with_the_verdict_and_holds_every_part():
    page = html.render_html(VERIFY)
    body = page[page.index('<body>'):]
    assert body.index('class="verdict failed"') < body.index('<svg') < body.index('<h2>Egress IPs</h2>') < body.index('<h2>Findings</h2>')
    assert '<strong>Result: FAILED</strong>' in page and '<title>EgressIP verification - FAILED</title>' in page
    assert page.count('class="node ') == 3 and page.count('class="egress-ip ') == 3
    assert 'data-node="w-0"' in page and '<g class="node broken" data-node="w-0">' in page
    assert '<g class="egress-ip broken" data-ip="10.20.0.210">' in page and '>unassigned<' in page
    assert '<td>BLACKHOLE</td>' in page and '<a href="docs/runbook.md#blackhole_nic_disconnected">' in page
    assert '```' not in page and 'mermaid' not in page


def test_everything_from_the_data_is_escaped_and_the_page_has_no_script_or_external_asset():
    page = html.render_html(VERIFY)
    assert 'The vNIC of w-0 is &lt;disconnected&gt; &amp; &#34;off&#34;.' in page or 'The vNIC of w-0 is &lt;disconnected&gt; &amp; &quot;off&quot;.' in page
    assert '<disconnected>' not in page
    assert '<script' not in page.lower()
    assert not re.search(r'(src|href)="(https?:)?//', page), 'nothing loaded from elsewhere'


def test_the_same_data_gives_the_same_bytes_and_a_users_template_replaces_the_page():
    assert html.render_html(VERIFY) == html.render_html(VERIFY)
    page = html.render_html(VERIFY, template='{{ title }}|{{ verdict }}|{{ report.summary.blackholed }}|{{ findings | length }}\n')
    assert page == 'EgressIP verification|FAILED|1|2\n'


def test_the_drill_report_draws_its_final_state():
    final = dict(VERIFY, summary=dict(VERIFY['summary'], ok=True))
    drill = {'kind': 'failover_drill', 'summary': {'ok': True, 'steps': 0, 'nodes': [], 'moved': 0}, 'steps': [],
             'step_summaries': [], 'final': final, 'findings': []}
    page = html.render_html(drill)
    assert '<h1>EgressIP failover drill</h1>' in page and page.count('class="node ') == 3 and '<h2>Steps</h2>' in page
    assert '<p>No finding.</p>' in page


def test_sections_turn_the_markdown_tables_into_html_tables():
    parts = html.sections(_report.render_markdown(VERIFY))
    titles = [part['title'] for part in parts]
    assert titles == ['Egress IPs', 'Nodes'], 'the page draws the diagram and the findings itself'
    assert parts[0]['html'].startswith('<table><thead><tr><th>EgressIP</th><th>IP</th>')
    assert parts[0]['html'].count('<tr>') == 4


def test_a_browser_shows_the_page_without_console_errors_and_draws_a_node_per_node(browser, tmp_path):
    path = tmp_path / 'verify.html'
    path.write_text(html.render_html(VERIFY), encoding='utf-8')
    seen = browser(path)
    assert seen['png_ok'], seen
    assert seen['console'] == []
    assert seen['dom'].count('<g class="node ') == len(NODES), seen['dom'][:2000]
    assert '<svg' in seen['dom'] and 'Result: FAILED' in seen['dom']
