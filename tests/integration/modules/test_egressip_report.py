"""egressip_report: files written atomically, unchanged data leaves them unchanged, check mode and diff, bad data."""

import json
import os

NO_TWIN = {}  # run_module without a twin: the report module talks to no API
VERIFY = {
    'kind': 'verify',
    'summary': {'ok': True, 'egress_ips': 1, 'assigned': 1, 'healthy': 1, 'blackholed': 0, 'errors': 0, 'warnings': 0, 'info': 0},
    'network': {'cidr': '10.20.0.0/24', 'portgroup': 'ocp-egress-120'},
    'egress_ips': [{'egressip': 'payments', 'ip': '10.20.0.200', 'node': 'w0', 'network': 'secondary', 'status': 'ok', 'problems': [],
                    'wire': None}],
    'nodes': [{'name': 'w0', 'ready': True, 'labelled': True, 'vm': 'w0', 'esxi_host': 'H0', 'interface': 'ens224',
               'nic': {'mac': '00:50:56:aa:00:00', 'connected': True, 'network': 'ocp-egress-120', 'portgroup_on_host': True},
               'address': '10.20.0.10/24', 'egress_ips': ['10.20.0.200'], 'path': 'ok'}],
    'findings': [], 'wire': None, 'remediation': None, 'initial': None,
}


def test_writes_json_markdown_and_html_then_changes_nothing(run_module, tmp_path, browser):
    dest = str(tmp_path / 'reports')
    result = run_module('egressip_report', {'kind': 'verify', 'data': VERIFY, 'dest': dest}, env=NO_TWIN)
    assert result['_rc'] == 0 and result['changed'] is True and result['ok'] is True
    assert result['paths'] == [os.path.join(dest, name) for name in ('verify.json', 'verify.md', 'verify.html')]
    seen = browser(os.path.join(dest, 'verify.html'))
    assert seen['png_ok'] and seen['console'] == [] and seen['dom'].count('<g class="node ') == 1
    with open(os.path.join(dest, 'verify.json'), encoding='utf-8') as handle:
        assert json.load(handle)['summary']['healthy'] == 1
    with open(os.path.join(dest, 'verify.md'), encoding='utf-8') as handle:
        assert handle.read() == result['markdown']
    assert '| payments | 10.20.0.200 | w0 | secondary | OK | - | - |' in result['markdown']
    assert oct(os.stat(os.path.join(dest, 'verify.md')).st_mode & 0o777) == '0o644'
    again = run_module('egressip_report', {'kind': 'verify', 'data': VERIFY, 'dest': dest}, env=NO_TWIN)
    assert again['changed'] is False


def test_check_mode_and_diff_write_nothing(run_module, tmp_path):
    dest = str(tmp_path / 'reports')
    result = run_module('egressip_report', {'kind': 'verify', 'data': VERIFY, 'dest': dest, 'name': 'cluster-a'}, check=True, diff=True,
                        env=NO_TWIN)
    assert result['changed'] is True and not os.path.exists(dest)
    assert result['diff'][0]['after_header'] == os.path.join(dest, 'cluster-a.md') and result['diff'][0]['before'] == ''


def test_drill_data_is_assembled_and_markdown_only(run_module, tmp_path):
    data = {'trigger': 'unlabel', 'steps': [], 'settings': {'poll_interval': 1.0}}
    dest = str(tmp_path / 'reports')
    result = run_module('egressip_report', {'kind': 'failover_drill', 'data': data, 'dest': dest, 'formats': ['markdown']}, env=NO_TWIN)
    assert result['report']['summary']['steps'] == 0 and result['paths'] == [os.path.join(dest, 'failover_drill.md')]
    assert os.listdir(dest) == ['failover_drill.md']
    assert result['markdown'].startswith('# EgressIP failover drill')


def test_a_users_html_template_replaces_the_page_and_a_missing_one_is_named(run_module, tmp_path):
    template = tmp_path / 'page.html.j2'
    template.write_text('<p>{{ verdict }}: {{ report.summary.healthy }} healthy</p>\n')
    dest = str(tmp_path / 'reports')
    result = run_module('egressip_report', {'kind': 'verify', 'data': VERIFY, 'dest': dest, 'formats': ['html'],
                                            'html_template': str(template)}, env=NO_TWIN)
    assert result['_rc'] == 0 and result['paths'] == [os.path.join(dest, 'verify.html')]
    with open(os.path.join(dest, 'verify.html'), encoding='utf-8') as handle:
        assert handle.read() == '<p>PASSED: 1 healthy</p>\n'
    missing = run_module('egressip_report', {'kind': 'verify', 'data': VERIFY, 'dest': str(tmp_path / 'other'), 'formats': ['html'],
                                             'html_template': str(tmp_path / 'nope.j2')}, env=NO_TWIN)
    assert missing['_rc'] != 0 and 'egressip_report: html_template=%s cannot be read' % (tmp_path / 'nope.j2') in missing['msg']
    assert not os.path.exists(str(tmp_path / 'other'))


def test_bad_data_and_name_are_refused(run_module, tmp_path):
    result = run_module('egressip_report', {'kind': 'verify', 'data': {'kind': 'support'}}, env=NO_TWIN)
    assert result['_rc'] != 0 and "data.kind is 'support', but kind=verify" in result['msg']
    dest = str(tmp_path / 'reports')
    result = run_module('egressip_report', {'kind': 'verify', 'data': VERIFY, 'dest': dest, 'name': '../x'}, env=NO_TWIN)
    assert result['_rc'] != 0 and "name='../x' must be a plain file name" in result['msg']
    assert not os.path.exists(dest)
