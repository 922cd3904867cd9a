"""The in-cluster guard's alert rules, checked and unit-tested by Prometheus's own promtool (Debian package
prometheus, installed by scripts/bootstrap.sh): the expressions parse, each alert fires on the series that should
raise it, with its labels and annotations, and stays silent on a healthy history."""

import os
import shutil
import subprocess

import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard_manifests as gm

NAMESPACE = 'ocp-egressip-guard'
JOB = 'egressip-guard-29430720'
PROMTOOL = shutil.which('promtool')


def rules_file(tmp_path):
    path = tmp_path / 'rules.yml'
    path.write_text(yaml.safe_dump({'groups': gm.alert_rules(NAMESPACE)}, sort_keys=False))
    return path


def annotations(alert, **labels):
    """The alert's annotations with the label templates filled in as Prometheus fills them."""
    rule = next(item for item in gm.alert_rules(NAMESPACE)[0]['rules'] if item['alert'] == alert)
    result = {}
    for key, text in rule['annotations'].items():
        for name, value in labels.items():
            text = text.replace('{{ $labels.%s }}' % name, value)
        result[key] = text
    return result


def promtool(*argv):
    assert PROMTOOL, 'promtool is not installed (Debian package prometheus; scripts/bootstrap.sh installs it)'
    return subprocess.run([PROMTOOL] + list(argv), capture_output=True, text=True, check=False, timeout=60)


def test_the_rules_parse(tmp_path):
    proc = promtool('check', 'rules', str(rules_file(tmp_path)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'SUCCESS: 3 rules found' in proc.stdout, proc.stdout


def test_each_alert_fires_when_it_should_and_only_then(tmp_path):
    rules = rules_file(tmp_path)
    job = 'namespace="%s", job_name="%s"' % (NAMESPACE, JOB)
    round_failed = {'severity': 'critical', 'namespace': NAMESPACE, 'job_name': JOB}
    tests = {'rule_files': [str(rules)], 'evaluation_interval': '1m', 'tests': [
        {'interval': '1m', 'input_series': [
            # a Job started at 0 s that failed a minute later, and stays in the history
            {'series': 'kube_job_status_failed{%s}' % job, 'values': '0 1x20'},
            {'series': 'kube_job_status_start_time{%s}' % job, 'values': '0x20'},
        ], 'alert_rule_test': [
            {'eval_time': '2m', 'alertname': 'EgressIPGuardRoundFailed', 'exp_alerts': [
                {'exp_labels': round_failed, 'exp_annotations': annotations('EgressIPGuardRoundFailed', job_name=JOB, namespace=NAMESPACE)}]},
            # five minutes after it started, a failed Job kept in the history no longer alerts
            {'eval_time': '10m', 'alertname': 'EgressIPGuardRoundFailed', 'exp_alerts': []},
        ]},
        {'interval': '1m', 'input_series': [
            # the last successful round at 0 s, none since
            {'series': 'kube_cronjob_status_last_successful_time{namespace="%s", cronjob="egressip-guard"}' % NAMESPACE,
             'values': '0x20'},
        ], 'alert_rule_test': [
            {'eval_time': '4m', 'alertname': 'EgressIPGuardNotSucceeding', 'exp_alerts': []},
            {'eval_time': '7m', 'alertname': 'EgressIPGuardNotSucceeding', 'exp_alerts': [
                {'exp_labels': {'severity': 'warning', 'namespace': NAMESPACE},
                 'exp_annotations': dict(annotations('EgressIPGuardNotSucceeding', namespace=NAMESPACE),
                                         description=annotations('EgressIPGuardNotSucceeding', namespace=NAMESPACE)['description']
                                         .replace('{{ $value | humanizeDuration }}', '7m 0s'))}]},
        ]},
        {'interval': '1m', 'input_series': [
            # a round succeeds every minute
            {'series': 'kube_cronjob_status_last_successful_time{namespace="%s", cronjob="egressip-guard"}' % NAMESPACE,
             'values': '0+60x20'},
            {'series': 'kube_job_status_failed{%s}' % job, 'values': '0x20'},
            {'series': 'kube_job_status_start_time{%s}' % job, 'values': '0x20'},
        ], 'alert_rule_test': [
            {'eval_time': '15m', 'alertname': 'EgressIPGuardNotSucceeding', 'exp_alerts': []},
            {'eval_time': '2m', 'alertname': 'EgressIPGuardRoundFailed', 'exp_alerts': []},
        ]},
        {'interval': '1m', 'input_series': [
            {'series': 'ovnkube_clustermanager_egress_ips_node_unreachable_total{namespace="openshift-ovn-kubernetes"}',
             'values': '0 0 0 1x20'},
        ], 'alert_rule_test': [
            {'eval_time': '2m', 'alertname': 'EgressIPNodeUnreachable', 'exp_alerts': []},
            {'eval_time': '4m', 'alertname': 'EgressIPNodeUnreachable', 'exp_alerts': [
                {'exp_labels': {'severity': 'warning', 'namespace': 'openshift-ovn-kubernetes'},
                 'exp_annotations': annotations('EgressIPNodeUnreachable')}]},
            {'eval_time': '12m', 'alertname': 'EgressIPNodeUnreachable', 'exp_alerts': []},
        ]},
    ]}
    path = tmp_path / 'tests.yml'
    path.write_text(yaml.safe_dump(tests, sort_keys=False))
    proc = promtool('test', 'rules', str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'SUCCESS' in proc.stdout, proc.stdout


def test_every_alert_names_its_severity_and_a_runbook_section_that_exists():
    with open(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'docs', 'guard.md'), encoding='utf-8') as handle:
        text = handle.read()
    anchors = set(line[3:].strip().lower().replace(' ', '-').replace(',', '').replace('.', '')
                  for line in text.splitlines() if line.startswith('## ') or line.startswith('### '))
    for rule in gm.alert_rules(NAMESPACE)[0]['rules']:
        assert rule['labels']['severity'] in ('critical', 'warning')
        assert rule['annotations']['summary'] and rule['annotations']['description']
        anchor = rule['annotations']['runbook_url'].split('#')[1]
        assert anchor in anchors, (anchor, sorted(anchors))
