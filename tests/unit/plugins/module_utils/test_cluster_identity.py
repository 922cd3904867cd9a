"""Which cluster a report is about and when it was made (model/cluster_identity.py), its one GET each
(snapshot/kubernetes.read_singletons), how the reports show it (JSON, Markdown, HTML), and a report file that differs
only by its time being kept (reports/files.py)."""

import datetime
import json
import os
import urllib.parse

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.checks import drill
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.model import cluster_identity as identity
from ansible_collections.ocp.egressip.plugins.module_utils.reports import files
from ansible_collections.ocp.egressip.plugins.module_utils.reports import html
from ansible_collections.ocp.egressip.plugins.module_utils.reports import migrate as migrate_report
from ansible_collections.ocp.egressip.plugins.module_utils.reports import report as _report
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from _file_module import FileModule as FakeModule  # pylint: disable=wrong-import-order
from test_k8s import client_with, status_body  # pylint: disable=wrong-import-order

CLUSTER_ID = '5c1e6a52-8f0e-5b4c-9d6f-3c0b0d6f2a11'
CLUSTER_VERSION = {'metadata': {'name': 'version'}, 'spec': {'clusterID': CLUSTER_ID},
                   'status': {'desired': {'version': '4.16.21'}, 'history': [{'state': 'Completed', 'version': '4.16.20'}]}}
INFRASTRUCTURE = {'metadata': {'name': 'cluster'}, 'status': {'infrastructureName': 'ocp1-x7k2p'}}
SNAPSHOT = {'cluster_version': CLUSTER_VERSION, 'infrastructure': INFRASTRUCTURE, 'unreadable': {}}
NOW = datetime.datetime(2026, 11, 30, 10, 0, 0, 123456, tzinfo=datetime.timezone.utc)
SECRET = 's3cr3t-t0ken'
FORBIDDEN = (403, status_body(403, 'Forbidden', 'forbidden'))
NOT_FOUND = (404, status_body(404, 'NotFound', 'not found'))


@pytest.mark.parametrize('url, expected', [
    ('https://api.ocp1.example.com:6443', 'https://api.ocp1.example.com:6443'),
    ('https://api.ocp1.example.com:6443/', 'https://api.ocp1.example.com:6443'),
    ('https://admin:%s@api.ocp1.example.com:6443/' % SECRET, 'https://api.ocp1.example.com:6443'),
    ('https://%s@api.ocp1.example.com:6443' % SECRET, 'https://api.ocp1.example.com:6443'),
    ('HTTPS://api.ocp1.example.com:6443?token=%s#x' % SECRET, 'https://api.ocp1.example.com:6443'),
    ('https://rancher.example.com/k8s/clusters/c-m-abc?access_token=%s' % SECRET, 'https://rancher.example.com/k8s/clusters/c-m-abc'),
    ('api.ocp1.example.com:6443', 'https://api.ocp1.example.com:6443'),
    ('https://u:p@[fd00::10]:6443', 'https://[fd00::10]:6443'),
    ('', None), (None, None), ('https://user:pw@', None),
])
def test_the_api_url_never_carries_userinfo_a_query_or_a_fragment(url, expected):
    assert identity.api_url(url) == expected


def test_generated_at_is_utc_to_the_second():
    assert identity.generated_at(NOW) == '2026-11-30T10:00:00Z'
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    assert identity.generated_at(datetime.datetime(2026, 11, 30, 12, 0, 5, tzinfo=plus_two)) == '2026-11-30T10:00:05Z'
    assert identity.generated_at(datetime.datetime(2026, 1, 2, 3, 4, 5)) == '2026-01-02T03:04:05Z'
    stamp = identity.generated_at(identity.utc_now())
    assert datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%SZ') and stamp.endswith('Z')


def test_the_cluster_block_from_what_was_read():
    made = identity.identity(SNAPSHOT, 'https://admin:%s@api.ocp1.example.com:6443' % SECRET, NOW)
    assert made == {'generated_at': '2026-11-30T10:00:00Z', 'cluster': {
        'name': 'ocp1-x7k2p', 'id': CLUSTER_ID, 'openshift_version': '4.16.21', 'api_url': 'https://api.ocp1.example.com:6443',
        'unknown': {}}}
    assert SECRET not in json.dumps(made)
    # a fixed time (an option) is used as it is
    assert identity.identity(SNAPSHOT, None, '2026-01-01T00:00:00Z')['generated_at'] == '2026-01-01T00:00:00Z'


def test_a_version_from_the_history_when_no_update_is_desired():
    history = [{'state': 'Partial', 'version': '4.17.1'}, {'state': 'Completed', 'version': '4.16.21'}]
    version = {'spec': {'clusterID': CLUSTER_ID}, 'status': {'history': history}}
    assert identity.cluster_block(dict(SNAPSHOT, cluster_version=version), None)['openshift_version'] == '4.16.21'


def test_forbidden_missing_and_empty_objects_say_what_is_unknown_and_why():
    forbidden = {'infrastructure': INFRASTRUCTURE,
                 'unreadable': {'clusterversions.config.openshift.io': 'HTTP 403: the credentials may not get clusterversions'}}
    block = identity.cluster_block(forbidden, 'https://api.ocp1.example.com:6443')
    assert block['name'] == 'ocp1-x7k2p' and block['id'] is None and block['openshift_version'] is None
    assert block['unknown'] == {'id': 'HTTP 403: the credentials may not get clusterversions',
                                'openshift_version': 'HTTP 403: the credentials may not get clusterversions'}
    missing = identity.cluster_block({'cluster_version': None, 'infrastructure': None, 'unreadable': {}}, None)
    assert set(missing['unknown']) == {'name', 'id', 'openshift_version', 'api_url'}
    assert missing['unknown']['name'].startswith('HTTP 404: infrastructures.config.openshift.io cluster does not exist')
    assert missing['unknown']['id'].startswith('HTTP 404: clusterversions.config.openshift.io version does not exist')
    empty = identity.cluster_block({'cluster_version': {'spec': {}}, 'infrastructure': {'status': {}}}, 'https://h:6443')
    assert empty['unknown'] == {'name': 'Infrastructure cluster has no status.infrastructureName',
                                'id': 'ClusterVersion version has no spec.clusterID',
                                'openshift_version': 'ClusterVersion version has neither status.desired.version nor a Completed update'}
    assert identity.cluster_block({}, None)['unknown']['id'] == 'clusterversions.config.openshift.io version was not read'


# --- the reads -----------------------------------------------------------------------------------------------

def test_one_get_each_and_403_or_404_is_no_failure():
    k8s, pool = client_with((200, json.dumps(CLUSTER_VERSION)), (200, json.dumps(INFRASTRUCTURE)))
    snapshot = kubernetes.read_singletons(k8s, identity.KINDS)
    assert snapshot == {'cluster_version': CLUSTER_VERSION, 'infrastructure': INFRASTRUCTURE, 'unreadable': {}}
    assert [(request['method'], urllib.parse.urlsplit(request['url']).path) for request in pool.requests] == [
        ('GET', '/apis/config.openshift.io/v1/clusterversions/version'), ('GET', '/apis/config.openshift.io/v1/infrastructures/cluster')]
    k8s, _pool = client_with(FORBIDDEN, NOT_FOUND)
    snapshot = kubernetes.read_singletons(k8s, identity.KINDS)
    assert 'cluster_version' not in snapshot and snapshot['infrastructure'] is None
    assert snapshot['unreadable'] == {
        'clusterversions.config.openshift.io': 'HTTP 403: the credentials may not get clusterversions.config.openshift.io version'}
    block = identity.cluster_block(snapshot, k8s.host)
    assert block['api_url'] == 'https://api.cluster-a.example.com:6443' and block['unknown']['id'].startswith('HTTP 403')
    assert block['unknown']['name'].startswith('HTTP 404')


def test_another_error_on_the_read_fails():
    k8s = client_with((500, status_body(500, 'InternalError', 'boom')))[0]
    with pytest.raises(ModuleFailure):
        kubernetes.read_singletons(k8s, ('cluster_version',))


# --- the renderers -------------------------------------------------------------------------------------------

MADE = identity.identity(SNAPSHOT, 'https://admin:%s@api.ocp1.example.com:6443' % SECRET, NOW)
VERIFY = dict({'kind': 'verify', 'network': {'cidr': '10.20.0.0/24', 'portgroup': 'egress'},
               'summary': {'ok': True, 'egress_ips': 1, 'assigned': 1, 'healthy': 1, 'blackholed': 0, 'errors': 0, 'warnings': 0},
               'egress_ips': [{'egressip': 'payments', 'ip': '10.20.0.200', 'node': 'w-0', 'status': 'ok'}],
               'nodes': [{'name': 'w-0', 'path': 'ok'}], 'findings': [],
               'remediation': {'nodes': ['w-1'], 'seconds': 1.23456, 'moves': [
                   {'egressip': 'payments', 'ip': '10.20.0.200', 'from': 'w-1', 'to': 'w-0', 'seconds': 1.23456}]}}, **MADE)
IDENTITY_LINE = ('Cluster `ocp1-x7k2p` (ID `%s`, OpenShift 4.16.21), API server https://api.ocp1.example.com:6443; '
                 'made 2026-11-30T10:00:00Z (UTC).' % CLUSTER_ID)


def test_markdown_names_the_cluster_and_time_after_the_verdict_and_rounds_seconds():
    markdown = _report.render_markdown(VERIFY)
    lines = markdown.splitlines()
    assert lines[2].startswith('**Result: PASSED**') and lines[4] == IDENTITY_LINE
    assert '1.23 s' in markdown and '1.23456' not in markdown
    assert json.loads(_report.render_json(VERIFY))['remediation']['seconds'] == 1.23456  # the measurement, exact
    assert json.loads(_report.render_json(VERIFY))['cluster']['id'] == CLUSTER_ID
    assert SECRET not in markdown and SECRET not in _report.render_json(VERIFY)


def test_what_is_unknown_is_said_once_per_reason():
    report = dict(VERIFY, cluster=identity.cluster_block({'infrastructure': INFRASTRUCTURE, 'unreadable': {
        'clusterversions.config.openshift.io': 'HTTP 403: no'}}, None))
    lines = _report.identity_lines(report)
    assert lines[0].startswith('Cluster `ocp1-x7k2p` (ID `unknown`, OpenShift unknown), API server unknown; made 2026-11-30T10:00:00Z')
    assert lines[1] == 'Unknown: Cluster ID, OpenShift (HTTP 403: no); API server (the connection has no API server URL).'
    assert _report.identity_lines({'kind': 'verify'}) == []  # a report made before the cluster block: nothing said


def test_html_puts_the_cluster_and_time_in_the_header_with_the_verdict():
    page = html.render_html(VERIFY)
    header = page[page.index('<header>'):page.index('</header>')]
    assert header.index('class="verdict passed"') < header.index('<dl class="identity">')
    for label, value in (('Cluster', 'ocp1-x7k2p'), ('Cluster ID', CLUSTER_ID), ('OpenShift', '4.16.21'),
                         ('API server', 'https://api.ocp1.example.com:6443')):
        assert '<dt>%s</dt><dd>%s</dd>' % (label, value) in header
    assert '<dt>Made</dt><dd><time datetime="2026-11-30T10:00:00Z">2026-11-30T10:00:00Z (UTC)</time></dd>' in header
    assert page.count(CLUSTER_ID) == 1, 'said once, in the header (not again from the Markdown lead)'
    assert '1.23 s' in page and SECRET not in page
    unknown = html.render_html(dict(VERIFY, cluster=dict(MADE['cluster'], id=None, unknown={'id': 'HTTP 403: <no>'})))
    assert '<dt>Cluster ID</dt><dd>unknown</dd>' in unknown and '<p class="unknown">Unknown: Cluster ID (HTTP 403: &lt;no&gt;).</p>' in unknown


def test_the_drill_report_takes_the_cluster_and_time_of_its_final_verification():
    baseline = dict(VERIFY, generated_at='2026-11-30T09:00:00Z')
    report = drill.assemble({'steps': [], 'baseline': baseline, 'final': VERIFY})
    assert report['cluster'] == MADE['cluster'] and report['generated_at'] == '2026-11-30T10:00:00Z'
    assert drill.assemble({'steps': [], 'baseline': baseline})['generated_at'] == '2026-11-30T09:00:00Z'
    assert IDENTITY_LINE in _report.render_markdown(report).splitlines()
    assert '<dt>Cluster ID</dt><dd>%s</dd>' % CLUSTER_ID in html.render_html(report)


def test_the_migrate_report_names_the_cluster():
    result = dict(MADE, summary={'complete': True, 'nodes': 0, 'egressip_objects': 0, 'error': 0, 'warning': 0, 'info': 0},
                  findings=[])
    data = migrate_report.report_data(result)
    assert data['cluster']['id'] == CLUSTER_ID and data['generated_at'] == '2026-11-30T10:00:00Z'
    assert IDENTITY_LINE in migrate_report.render_markdown(result).splitlines()


# --- the files -----------------------------------------------------------------------------------------------

def rendered(report):
    return [('.json', _report.render_json(report)), ('.md', _report.render_markdown(report)), ('.html', html.render_html(report))]


def test_a_report_that_differs_only_by_its_time_keeps_the_files_and_their_time(tmp_path):
    dest = str(tmp_path)
    paths, changed, _diffs = files.write_reports(FakeModule(), dest, 'verify', rendered(VERIFY), '0644', stamp=VERIFY['generated_at'])
    assert changed and all(os.path.exists(path) for path in paths)
    later = dict(VERIFY, generated_at='2026-11-30T11:30:00Z')
    _paths, changed, diffs = files.write_reports(FakeModule(), dest, 'verify', rendered(later), '0644', stamp=later['generated_at'])
    assert not changed and diffs == []
    assert json.loads(files.read_text(paths[0]))['generated_at'] == '2026-11-30T10:00:00Z'
    # without the stamp (or with another change) the files are written, with the new time
    moved = dict(later, summary=dict(VERIFY['summary'], healthy=0))
    _paths, changed, diffs = files.write_reports(FakeModule(), dest, 'verify', rendered(moved), '0644', stamp=moved['generated_at'])
    assert changed and len(diffs) == 3
    assert json.loads(files.read_text(paths[0]))['generated_at'] == '2026-11-30T11:30:00Z'
    assert '2026-11-30T11:30:00Z' in files.read_text(paths[2])


def test_same_but_time_is_strict():
    before = 'made 2026-11-30T10:00:00Z; healthy 2\n'
    assert files.same_but_time(before, 'made 2026-11-30T11:00:00Z; healthy 2\n', '2026-11-30T11:00:00Z')
    assert not files.same_but_time(before, 'made 2026-11-30T11:00:00Z; healthy 1\n', '2026-11-30T11:00:00Z')
    assert not files.same_but_time(before, before, None) and not files.same_but_time(None, before, '2026-11-30T10:00:00Z')
    assert not files.same_but_time('no time here\n', 'made 2026-11-30T11:00:00Z\n', '2026-11-30T11:00:00Z')
