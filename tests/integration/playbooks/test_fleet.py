"""A fleet (issue 16, docs/fleet.md): three twins are three clusters of one inventory (group egressip_clusters), each
configured from its own host_vars - its own egress IPs and its own connection variables (egressip_kubernetes,
egressip_vcenter), the controller's environment holding none. Run with -f 3: enable and verify configure and check each
cluster from its variables and write each cluster's reports to <egressip_report_dir>/<cluster>; a cluster with a wrong
vCenter password fails alone; a canary that fails stops the rollout before any other cluster is read. The secrets
(api_key, password) never show in the output (-v, -vvv with every module's arguments) or the reports."""

import copy
import glob
import json
import os

import pytest
import yaml

from twin.fixture import Twin, _lease_writes, kube_writes, vcsim_writes

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
with open(os.path.join(REPO_ROOT, 'examples', 'twin-cluster.yml'), encoding='utf-8') as handle:
    TWIN_VARS = yaml.safe_load(handle)

pytestmark = pytest.mark.slow

CLUSTERS = ('cluster-a', 'cluster-b', 'cluster-c')
# each cluster its own egress IPs: a run that read another cluster's variables would assign the wrong ones
EGRESS_IPS = {'cluster-a': ['10.20.0.200', '10.20.0.201'], 'cluster-b': ['10.20.0.210', '10.20.0.211'],
              'cluster-c': ['10.20.0.220', '10.20.0.221']}
WRONG_PASSWORD = 'wrong-password-never-shown-7f3a'
# what the controller's environment must not hold: every cluster connects with its own host variables only
CONNECTION_ENV = ('KUBECONFIG', 'K8S_AUTH_KUBECONFIG', 'K8S_AUTH_HOST', 'K8S_AUTH_API_KEY', 'K8S_AUTH_CONTEXT', 'VMWARE_HOST',
                  'VMWARE_USER', 'VMWARE_PASSWORD', 'VMWARE_PORT', 'VMWARE_VALIDATE_CERTS')


class Fleet:
    def __init__(self, root, twins):
        self.root = root
        self.twins = twins
        bundle = os.path.join(root, 'vcenter-ca-bundle.crt')
        with open(bundle, 'w', encoding='utf-8') as out:
            for twin in twins.values():
                with open(os.path.join(twin.state_dir, 'vcsim-ca.crt'), encoding='utf-8') as handle:
                    out.write(handle.read())
        # the one vCenter CA bundle of the controller holds every twin's CA; nothing else of the environment connects
        self.env = dict(dict.fromkeys(CONNECTION_ENV), OCP_EGRESSIP_VCENTER_CA_BUNDLE=bundle)

    def host_vars(self, name):
        twin = self.twins[name]
        variables = copy.deepcopy(TWIN_VARS)
        variables['egressip_objects'][0]['egress_ips'] = EGRESS_IPS[name]
        # renewed every second: the background renewal of the cluster lock must connect with the host's variables too
        variables['egressip_lock'] = {'lease_duration': 3}
        if name == 'cluster-b':
            # a token (a secret) and the API URL instead of a kubeconfig
            variables['egressip_kubernetes'] = {'host': twin.kube_state['url'], 'api_key': twin.kube_state['token'],
                                                'ca_cert': twin.kube_state['ca_file']}
        else:
            variables['egressip_kubernetes'] = {'kubeconfig': twin.kube_state['kubeconfig']}
        vcsim = twin.vcsim_state
        variables['egressip_vcenter'] = {'hostname': vcsim['host'], 'port': int(vcsim['port']), 'username': vcsim['username'],
                                         'password': vcsim['password'], 'validate_certs': True}
        return variables

    def inventory(self, label, wrong_password=()):
        """An inventory directory: hosts.yml (the group egressip_clusters) and host_vars/<cluster>.yml."""
        directory = os.path.join(self.root, 'inventory-%s' % label)
        os.makedirs(os.path.join(directory, 'host_vars'), exist_ok=True)
        with open(os.path.join(directory, 'hosts.yml'), 'w', encoding='utf-8') as handle:
            yaml.safe_dump({'egressip_clusters': {'hosts': dict((name, None) for name in CLUSTERS),
                                                  'vars': {'ansible_connection': 'local'}}}, handle)
        for name in CLUSTERS:
            variables = self.host_vars(name)
            if name in wrong_password:
                variables['egressip_vcenter']['password'] = WRONG_PASSWORD
            with open(os.path.join(directory, 'host_vars', '%s.yml' % name), 'w', encoding='utf-8') as handle:
                yaml.safe_dump(variables, handle)
        return directory

    def secrets(self):
        return [twin.vcsim_state['password'] for twin in self.twins.values()] + [self.twins['cluster-b'].kube_state['token'],
                                                                                 WRONG_PASSWORD]

    def reset(self):
        for twin in self.twins.values():
            twin.reset_kube_requests()
            twin.reset_vcsim_requests()


@pytest.fixture(scope='module')
def fleet(tmp_path_factory, vcsim_binary):
    twins = {}
    try:
        for name in CLUSTERS:
            # small clusters: three egress nodes for two egress IPs (one node may fail)
            twins[name] = Twin.start(str(tmp_path_factory.mktemp('twin-' + name)), binary=vcsim_binary, workers=3, masters=1,
                                     hosts=2, nns_refresh=2.0)
        yield Fleet(str(tmp_path_factory.mktemp('fleet')), twins)
    finally:
        for twin in twins.values():
            twin.stop()


def _assigned(twin):
    egressip = twin.custom_objects().get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'payments')
    return sorted(item['egressIP'] for item in egressip.get('status', {}).get('items', []))


def _no_secret_in(fleet, run, report_dir=None):
    texts = [run.stdout, run.stderr]
    for path in glob.glob(os.path.join(report_dir or '/nonexistent', '**', '*'), recursive=True):
        if os.path.isfile(path):
            with open(path, encoding='utf-8', errors='replace') as handle:
                texts.append(handle.read())
    for secret in fleet.secrets():
        assert not [text for text in texts if secret in text], 'a secret shows in the output or a report'


def _fleet_report(reports):
    with open(os.path.join(reports, 'fleet_report.json'), encoding='utf-8') as handle:
        return json.load(handle)


def _fleet_rows(reports):
    return dict((row['inventory'], row) for row in _fleet_report(reports)['clusters'])


def test_a_canary_that_fails_stops_the_rollout_before_any_other_cluster_is_read(fleet, run_playbook, tmp_path):
    fleet.reset()
    inventory = fleet.inventory('canary', wrong_password=('cluster-a',))
    reports = str(tmp_path / 'reports')
    # the default rollout [1, "25%"]: cluster-a alone first, the canary
    run = run_playbook('playbooks/enable.yml', env=fleet.env, extra_vars={'egressip_report_dir': reports},
                       extra_args=['-i', inventory, '-f', '3', '-v'])
    assert run.rc != 0, run
    assert run.recap.get('cluster-a', {}).get('failed') == 1, run
    assert 'vCenter' in run.stdout and 'login' in run.stdout.lower(), run
    # the whole batch failed: Ansible ends the run there
    assert 'cluster-b' not in run.recap and 'cluster-c' not in run.recap, run
    for name in ('cluster-b', 'cluster-c'):
        assert fleet.twins[name].kube_requests()['requests'] == [], name
        assert not fleet.twins[name].vcsim_requests()['counts'], name
    assert kube_writes(fleet.twins['cluster-a']) == 0 and not vcsim_writes(fleet.twins['cluster-a'])
    # the fleet report (roles/fleet_report, in each play's always section) names the canary and what did not run
    report = _fleet_report(reports)
    assert [row['inventory'] for row in report['clusters']] == ['cluster-a'] and report['clusters'][0]['verdict'] == 'failed'
    assert report['not_run'] == ['cluster-b', 'cluster-c'], report
    _no_secret_in(fleet, run, reports)


def test_enable_configures_each_cluster_from_its_own_host_vars_and_connection(fleet, run_playbook, tmp_path):
    fleet.reset()
    reports = str(tmp_path / 'reports')
    run = run_playbook('playbooks/enable.yml', env=fleet.env, extra_vars={'egressip_rollout': [1, 2], 'egressip_report_dir': reports},
                       extra_args=['-i', fleet.inventory('all'), '-f', '3', '-vvv'])  # -vvv: every module's invocation too
    assert run.rc == 0, run
    assert sorted(run.recap) == ['cluster-a', 'cluster-b', 'cluster-c', 'localhost'], run
    assert all(run.recap[name]['failed'] == 0 and run.recap[name]['changed'] > 0 for name in CLUSTERS), run
    for name in CLUSTERS:
        twin = fleet.twins[name]
        assert _assigned(twin) == EGRESS_IPS[name], name
        # the lock was taken, renewed in the background (the renewer of the lock task has the host's connection too) and released
        assert _lease_writes(twin.kube_requests()) >= 4, name
        with open(os.path.join(reports, name, 'verify.json'), encoding='utf-8') as handle:
            report = json.load(handle)
        assert sorted(item['ip'] for item in report['egress_ips']) == EGRESS_IPS[name], name
        assert report['summary']['healthy'] == 2 and report['cluster']['api_url'] == twin.kube_state['url'].rstrip('/'), name
    assert not os.path.exists(os.path.join(reports, 'verify.json'))
    rows = _fleet_rows(reports)  # one row per cluster, each its own twin's
    assert sorted(rows) == list(CLUSTERS)
    for name in CLUSTERS:
        assert rows[name]['verdict'] == 'ok' and rows[name]['playbook'] == 'enable', rows[name]
        assert rows[name]['egress_ips'] == {'total': 2, 'assigned': 2, 'healthy': 2, 'blackholed': 0}, rows[name]
        assert rows[name]['cluster']['api_url'] == fleet.twins[name].kube_state['url'].rstrip('/'), rows[name]
    _no_secret_in(fleet, run, reports)


def test_a_cluster_with_a_wrong_password_fails_alone(fleet, run_playbook, tmp_path):
    fleet.reset()
    reports = str(tmp_path / 'reports')
    run = run_playbook('playbooks/verify.yml', env=fleet.env, extra_vars={'egressip_report_dir': reports},
                       extra_args=['-i', fleet.inventory('wrong-c', wrong_password=('cluster-c',)), '-f', '3', '-v'])
    assert run.rc != 0, run
    assert run.recap['cluster-c']['failed'] == 1, run
    assert 'fatal: [cluster-c]' in run.stdout and 'fatal: [cluster-a]' not in run.stdout and 'fatal: [cluster-b]' not in run.stdout, run
    assert run.recap['cluster-a']['failed'] == 0 and run.recap['cluster-b']['failed'] == 0, run
    for name in ('cluster-a', 'cluster-b'):
        with open(os.path.join(reports, name, 'verify.json'), encoding='utf-8') as handle:
            report = json.load(handle)
        assert report['summary']['errors'] == 0 and report['summary']['healthy'] == 2, report['summary']
        assert sorted(item['ip'] for item in report['egress_ips']) == EGRESS_IPS[name], name
        assert report['cluster']['api_url'] == fleet.twins[name].kube_state['url'].rstrip('/'), name
    assert not os.path.exists(os.path.join(reports, 'cluster-c', 'verify.json'))
    rows = _fleet_rows(reports)
    assert rows['cluster-a']['verdict'] == rows['cluster-b']['verdict'] == 'ok' and rows['cluster-c']['verdict'] == 'failed', rows
    failed = _fleet_report(reports)['failed']
    assert [item['inventory'] for item in failed] == ['cluster-c'] and 'vCenter' in failed[0]['message'], failed
    _no_secret_in(fleet, run, reports)


def test_a_failed_cluster_lets_its_batch_finish_and_stops_the_next_batch(fleet, run_playbook, tmp_path):
    fleet.reset()
    reports = str(tmp_path / 'reports')
    # batches [cluster-a, cluster-b], [cluster-c]; cluster-a cannot log in to vCenter
    # the fleet report only (no verify report to write): a run that changes no cluster says changed=0
    run = run_playbook('playbooks/enable.yml', env=fleet.env, extra_vars={'egressip_rollout': [2, 1], 'fleet_report_dir': reports},
                       extra_args=['-i', fleet.inventory('batch', wrong_password=('cluster-a',)), '-f', '3', '-v'])
    assert run.rc != 0, run
    assert run.recap['cluster-a']['failed'] == 1, run
    # cluster-b ran to its end beside it (enabled already: a second run changes nothing)
    assert run.recap['cluster-b']['failed'] == 0 and run.recap['cluster-b']['changed'] == 0, run
    assert _assigned(fleet.twins['cluster-b']) == EGRESS_IPS['cluster-b']
    assert ('Rollout stopped before cluster-c: 1 of the 2 cluster(s) run before this batch failed (cluster-a), more than '
            'egressip_max_fail_percentage=0%') in run.stdout, run
    assert run.recap['cluster-c']['failed'] == 1, run
    assert fleet.twins['cluster-c'].kube_requests()['requests'] == [] and not fleet.twins['cluster-c'].vcsim_requests()['counts']
    rows = _fleet_rows(reports)
    assert rows['cluster-a']['verdict'] == rows['cluster-c']['verdict'] == 'failed' and rows['cluster-b']['verdict'] == 'ok', rows
    _no_secret_in(fleet, run, reports)


def test_render_and_the_support_report_write_one_directory_per_cluster(fleet, run_playbook, tmp_path):
    fleet.reset()
    inventory = fleet.inventory('all')
    run = run_playbook('playbooks/render.yml', env=fleet.env,
                       extra_vars={'render_dest': str(tmp_path / 'gitops'), 'egressip_report_dir': str(tmp_path / 'render-reports')},
                       extra_args=['-i', inventory, '-f', '3'])
    assert run.rc == 0, run
    for name in CLUSTERS:
        directory = tmp_path / 'gitops' / name
        assert (directory / 'kustomization.yaml').is_file(), name
        manifests = ''.join(path.read_text() for path in directory.iterdir())
        assert all(ip in manifests for ip in EGRESS_IPS[name]), name
        assert not [ip for other in CLUSTERS if other != name for ip in EGRESS_IPS[other] if ip in manifests], name
    reports = str(tmp_path / 'reports')
    run = run_playbook('playbooks/support_report.yml', env=fleet.env, extra_vars={'egressip_report_dir': reports},
                       extra_args=['-i', inventory, '-f', '3', '-v'])
    assert run.rc == 0, run
    for name in CLUSTERS:
        with open(os.path.join(reports, name, 'support_report.json'), encoding='utf-8') as handle:
            report = json.load(handle)
        assert report['cluster']['api_url'] == fleet.twins[name].kube_state['url'].rstrip('/'), name
    assert all(kube_writes(twin) == 0 and not vcsim_writes(twin) for twin in fleet.twins.values())
    _no_secret_in(fleet, run, reports)
