"""The fleet_report role without a twin: a tiny playbook over an inventory of three fake clusters on connection local that
leave the facts the playbooks leave (verify_result, support_report_result, egressip_fleet_failure), run with -f 3, in
serial batches that stop after a failure, and on implicit localhost. One fleet report per run: one row per cluster, the
failed one named with its task, no secret, the page opens in Chromium without console errors."""

import json
import os

import yaml

CLUSTERS = {
    'cluster-a': {'fake_verify': {
        'kind': 'verify', 'generated_at': '2026-12-03T10:00:00Z', 'findings': [],
        'cluster': {'name': 'ocp-a-4xk2p', 'id': '11111111-aaaa', 'openshift_version': '4.16.3', 'api_url': 'https://api.a.example.com:6443'},
        'summary': {'ok': True, 'egress_ips': 2, 'assigned': 2, 'healthy': 2, 'blackholed': 0, 'errors': 0, 'warnings': 0},
        'nodes': [{'name': 'worker-0', 'vcenter_password': 'hunter2-fleet'}]}},
    'cluster-b': {'fake_support': {
        'verdict': 'Configured and degraded', 'status': 'degraded', 'ok': True, 'paths': [],
        'summary': {'error': 0, 'warning': 1, 'info': 0, 'egress_ips': 3, 'assigned': 2, 'ok': True},
        'findings': [{'id': 'egressip_object_missing', 'severity': 'warning', 'message': 'EgressIP payments lacks 10.20.0.9'}]},
        'fake_support_cluster': {'name': 'ocp-b-9zz1q', 'id': '22222222-bbbb', 'openshift_version': '4.17.1'}},
    'cluster-c': {'fake_fail': True},
}

PLAY = '''
- name: Fleet
  hosts: "{{ fleet_hosts | default('clusters') }}"
  gather_facts: false
  serial: "{{ fleet_serial | default(0) }}"
  max_fail_percentage: 0
  tasks:
    - name: Per cluster
      block:
        - name: Verify (fake)
          ansible.builtin.set_fact:
            verify_result: {report: "{{ fake_verify }}"}
          when: fake_verify is defined
        - name: Support report (fake)
          ansible.builtin.set_fact:
            support_report_result: "{{ fake_support }}"
            __support_report_result: {report: {cluster: "{{ fake_support_cluster }}"}}
          when: fake_support is defined
        - name: Log in to vCenter
          ansible.builtin.fail:
            msg: "cannot log in to vCenter with password={{ secret_password }}"
          when: fake_fail | default(false)
      rescue:
        - name: What failed
          ansible.builtin.set_fact:
            egressip_fleet_failure: {task: "{{ ansible_failed_task.name }}", message: "{{ ansible_failed_result.msg }}"}
        - name: Fail again, so that the cluster counts as failed and the rollout stops (as the playbooks do)
          ansible.builtin.fail:
            msg: "{{ egressip_fleet_failure.task }}: {{ egressip_fleet_failure.message }}"
      always:
        - name: Fleet report
          ansible.builtin.include_role:
            name: ocp.egressip.fleet_report
          vars:
            fleet_report_playbook: "{{ fleet_playbook | default('verify') }}"
'''


def setup(tmp_path, order=('cluster-a', 'cluster-b', 'cluster-c')):
    reports = tmp_path / 'reports'
    hosts = dict((name, CLUSTERS[name]) for name in order)
    inventory = {'all': {'children': {'clusters': {'hosts': hosts}}, 'vars': {
        'ansible_connection': 'local', 'ansible_python_interpreter': '{{ ansible_playbook_python }}',
        'egressip_report_dir': str(reports), 'secret_password': 'hunter2-fleet'}}}
    (tmp_path / 'inventory.yml').write_text(yaml.safe_dump(inventory, sort_keys=False))
    (tmp_path / 'play.yml').write_text(PLAY)
    return reports


def run(run_playbook, tmp_path, *args, extra_vars=None):
    return run_playbook(str(tmp_path / 'play.yml'), extra_vars=extra_vars, env={'ANSIBLE_SHOW_CUSTOM_STATS': '1'},
                        extra_args=('-i', str(tmp_path / 'inventory.yml')) + args)


def texts(reports):
    return dict((name, (reports / name).read_text()) for name in ('fleet_report.json', 'fleet_report.md', 'fleet_report.html'))


def test_three_clusters_in_parallel_give_one_report_with_a_row_each(run_playbook, tmp_path, browser):
    reports = setup(tmp_path)
    result = run(run_playbook, tmp_path, '-f', '3')
    assert result.rc == 2, result   # cluster-c fails (after its record)
    report = json.loads((reports / 'fleet_report.json').read_text())
    rows = dict((row['inventory'], row) for row in report['clusters'])
    assert sorted(rows) == ['cluster-a', 'cluster-b', 'cluster-c'] and report['not_run'] == []
    assert rows['cluster-a']['verdict'] == 'ok' and rows['cluster-a']['cluster']['id'] == '11111111-aaaa'
    assert rows['cluster-a']['egress_ips'] == {'total': 2, 'assigned': 2, 'healthy': 2, 'blackholed': 0}
    assert rows['cluster-b']['verdict'] == 'warning' and rows['cluster-b']['cluster']['name'] == 'ocp-b-9zz1q'
    assert rows['cluster-b']['drift']['count'] == 1 and rows['cluster-b']['support_status'] == 'degraded'
    assert rows['cluster-c']['verdict'] == 'failed'
    assert report['failed'] == [{'inventory': 'cluster-c', 'cluster': None, 'playbook': 'verify', 'task': 'Log in to vCenter',
                                 'message': 'cannot log in to vCenter with password=[redacted]'}]
    assert report['totals']['ok'] == 1 and report['totals']['warning'] == 1 and report['totals']['failed'] == 1
    for text in texts(reports).values():
        assert 'hunter2' not in text
    records = os.listdir(str(reports / '.fleet'))
    assert len(records) == 2 and 'lock' in records   # one run: one record directory
    # AAP: the verdict per cluster in the run's stats
    stats = result.stdout[result.stdout.index('CUSTOM STATS'):]
    for name, verdict in (('cluster-a', 'ok'), ('cluster-b', 'warning'), ('cluster-c', 'failed')):
        assert name in stats and "'verdict': '%s'" % verdict in stats.split(name, 1)[1][:600].replace('"', "'"), stats
    page = browser(reports / 'fleet_report.html')
    assert page['console'] == [] and page['png_ok']
    assert page['dom'].count('<tr class="cluster verdict-') == 3 and 'data-cluster="cluster-c"' in page['dom']
    assert 'hunter2' not in page['dom']

    # the next run finds the same: nothing changes, in check mode nothing is written either
    before = texts(reports)
    again = run(run_playbook, tmp_path, '-f', '3')
    assert again.rc == 2 and all(host['changed'] == 0 for host in again.recap.values()), again
    assert texts(reports) == before and len(os.listdir(str(reports / '.fleet'))) == 2
    check = run(run_playbook, tmp_path, '-f', '3', '--check')
    assert all(host['changed'] == 0 for host in check.recap.values()) and texts(reports) == before, check


def test_serial_batches_share_one_run_and_a_failed_batch_stops_the_rest(run_playbook, tmp_path):
    reports = setup(tmp_path, order=('cluster-a', 'cluster-c', 'cluster-b'))
    result = run(run_playbook, tmp_path, '-f', '2', extra_vars={'fleet_serial': 1})
    assert result.rc == 2 and 'cluster-b' not in result.recap, result
    report = json.loads((reports / 'fleet_report.json').read_text())
    assert [row['inventory'] for row in report['clusters']] == ['cluster-a', 'cluster-c'] and report['not_run'] == ['cluster-b']
    assert report['verdict'] == 'failed' and report['totals']['not_run'] == 1
    assert len(os.listdir(str(reports / '.fleet'))) == 2    # both batches wrote to the same run
    assert 'cluster-b' in (reports / 'fleet_report.md').read_text().split('## Not run', 1)[1]


def test_one_cluster_on_implicit_localhost_with_what_enable_changed_and_a_template_of_ones_own(run_playbook, tmp_path):
    reports = tmp_path / 'reports'
    (tmp_path / 'play.yml').write_text(PLAY)
    (tmp_path / 'inventory.yml').write_text('all: {}\n')
    egressips = {'changed': True, 'egressips': [{'name': 'payments', 'action': 'create'}, {'name': 'web', 'action': 'none'}]}
    template = tmp_path / 'page.html.j2'
    template.write_text('<p>{{ rows | length }} cluster(s): {{ verdict }}</p>\n')
    extra_vars = {'fleet_hosts': 'localhost', 'fleet_report_dir': str(reports), 'fleet_playbook': 'enable',
                  'fake_verify': CLUSTERS['cluster-a']['fake_verify'], 'egressips_module_result': egressips,
                  'fleet_report_html_template': str(template)}
    result = run(run_playbook, tmp_path, extra_vars=extra_vars)
    assert result.rc == 0, result
    report = json.loads((reports / 'fleet_report.json').read_text())
    assert [row['inventory'] for row in report['clusters']] == ['localhost'] and report['verdict'] == 'ok'
    assert report['clusters'][0]['cluster']['name'] == 'ocp-a-4xk2p' and report['playbooks'] == ['enable']
    assert report['clusters'][0]['changes'] == ['EgressIP objects: create 1 (payments)']
    assert '| localhost | EgressIP objects: create 1 (payments) |' in (reports / 'fleet_report.md').read_text()
    assert (reports / 'fleet_report.html').read_text() == '<p>1 cluster(s): OK</p>\n'   # the user's template


def test_one_cluster_on_localhost_writes_no_fleet_report_beside_its_reports_unless_asked(run_playbook, tmp_path):
    reports = tmp_path / 'reports'
    (tmp_path / 'play.yml').write_text(PLAY)
    (tmp_path / 'inventory.yml').write_text('all: {}\n')
    result = run(run_playbook, tmp_path, extra_vars={'fleet_hosts': 'localhost', 'egressip_report_dir': str(reports),
                                                     'fleet_playbook': 'verify', 'fake_verify': CLUSTERS['cluster-a']['fake_verify']})
    assert result.rc == 0, result
    assert not reports.exists() and 'CUSTOM STATS' not in result.stdout, result
