"""Each playbook run on the twin with a ServiceAccount token bound to exactly its ClusterRole (rbac/<playbook>.yml).

The twin authorizes these tokens by RBAC as the apiserver does (tests/twin/kube/authz.py), so a permission the playbook uses
and its ClusterRole lacks is an HTTP 403. The tests share one twin and run in order: the support report on the seed cluster,
enable, verify, the failover drill, migrate's discovery and upgrade's pre check, render; then a ClusterRole with one rule
less makes preflight stop enable before its first write (not even the cluster lock is taken), naming the verb, the resource
and the file to bind; disable last.
"""

import os

import pytest
import yaml

from twin.fixture import kube_writes, lock_writes, vcsim_writes

pytestmark = pytest.mark.slow

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
VARIABLES = '@examples/twin-cluster.yml'
RBAC = ('rbac.authorization.k8s.io', 'v1')
NAMESPACE = 'egressip-automation'


def cluster_role(playbook):
    with open(os.path.join(REPO_ROOT, 'rbac', playbook + '.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def bind(twin, tmp_path, role, account):
    """Create the ClusterRole and a ClusterRoleBinding of it to ServiceAccount NAMESPACE/account; the env of a run as that SA."""
    objects = twin.custom_objects()
    objects.create_cluster_custom_object(*RBAC, 'clusterroles', role)
    objects.create_cluster_custom_object(*RBAC, 'clusterrolebindings', {
        'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding', 'metadata': {'name': account},
        'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': role['metadata']['name']},
        'subjects': [{'kind': 'ServiceAccount', 'name': account, 'namespace': NAMESPACE}]})
    path = twin.kubeconfig_for(str(tmp_path / (account + '.kubeconfig')), serviceaccount='%s/%s' % (NAMESPACE, account))
    return {'KUBECONFIG': path, 'K8S_AUTH_KUBECONFIG': path}


def as_playbook_role(twin, tmp_path, playbook):
    return bind(twin, tmp_path, cluster_role(playbook), 'runner-' + playbook.replace('_', '-'))


def failed(run):
    """The failed tasks of a run, each with the two lines before it (the run's repr cuts long output)."""
    lines = run.stdout.splitlines()
    return '\n'.join('\n'.join(lines[max(0, index - 2):index + 1])[:3000] for index, line in enumerate(lines) if line.startswith('fatal:'))


def forbidden(twin):
    return [(entry['verb'], entry['path']) for entry in twin.kube_requests()['requests'] if entry.get('code') == 403]


def test_support_report_runs_with_its_read_only_role(twin, run_playbook, tmp_path):
    env = as_playbook_role(twin, tmp_path, 'support_report')
    twin.reset_kube_requests()
    run = run_playbook('playbooks/support_report.yml', [VARIABLES, {'egressip_report_dir': str(tmp_path / 'report')}], env=env)
    assert run.rc == 0, (forbidden(twin), failed(run))
    assert os.path.isfile(str(tmp_path / 'report' / 'support_report.json'))
    assert forbidden(twin) == [] and kube_writes(twin) == 0


def test_enable_runs_with_its_role(twin, run_playbook, tmp_path):
    env = as_playbook_role(twin, tmp_path, 'enable')
    twin.reset_kube_requests()
    run = run_playbook('playbooks/enable.yml', VARIABLES, env=env)
    assert run.rc == 0, (forbidden(twin), failed(run))
    assert forbidden(twin) == []
    assert twin.vcsim_requests()['counts'].get('HasPrivilegeOnEntities', 0) >= 2  # preflight asked for the hosts' and VMs' privileges
    users = set(entry.get('user') for entry in twin.kube_requests()['requests'])
    assert users == {'system:serviceaccount:%s:runner-enable' % NAMESPACE}, users  # every request was the bound SA's
    assert [item['metadata']['name'] for item in twin.custom_objects().list_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips')['items']] \
        == ['payments']


def test_verify_and_the_drill_run_with_their_roles(twin, run_playbook, tmp_path):
    twin.reset_kube_requests()
    run = run_playbook('playbooks/verify.yml', [VARIABLES, {'egressip_report_dir': str(tmp_path / 'verify')}],
                       env=as_playbook_role(twin, tmp_path, 'verify'))
    assert run.rc == 0, (forbidden(twin), failed(run))
    drill = {'egressip_report_dir': str(tmp_path / 'drill'), 'egressip_drill': {'poll_interval': 0.2, 'observe_seconds': 1.5, 'wait_timeout': 60}}
    run = run_playbook('playbooks/failover_drill.yml', [VARIABLES, drill], env=as_playbook_role(twin, tmp_path, 'failover_drill'))
    assert run.rc == 0, (forbidden(twin), failed(run))
    assert forbidden(twin) == []


def test_migrate_discovery_and_the_upgrade_check_run_with_their_roles(twin, run_playbook, tmp_path):
    run = run_playbook('playbooks/migrate.yml', {'migrate_dest': str(tmp_path / 'migrate'), 'migrate_acknowledge_unsupported': True},
                       env=as_playbook_role(twin, tmp_path, 'migrate'))
    assert run.rc == 0, (forbidden(twin), failed(run))
    assert os.listdir(str(tmp_path / 'migrate'))
    upgrade = {'upgrade_phase': 'pre', 'upgrade_snapshot_file': str(tmp_path / 'snapshot.json'), 'upgrade_target_version': '4.17.3'}
    run = run_playbook('playbooks/upgrade.yml', [VARIABLES, upgrade], env=as_playbook_role(twin, tmp_path, 'upgrade'))
    # three workers for two IPs leave no room for a reboot: the check read everything it needs and refused on capacity
    assert run.rc != 0 and 'upgrade_capacity_insufficient' in run.stdout, (forbidden(twin), failed(run))
    assert 'kube_permission_missing' not in run.stdout and forbidden(twin) == []


def test_render_runs_with_its_read_only_role(twin, run_playbook, tmp_path):
    # after enable: render's preflight wants the port group and the NICs that the README's vCenter steps put in place
    env = as_playbook_role(twin, tmp_path, 'render')
    twin.reset_kube_requests()
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(tmp_path / 'render')}], env=env)
    assert run.rc == 0, (forbidden(twin), failed(run))
    assert os.listdir(str(tmp_path / 'render'))
    assert forbidden(twin) == [] and kube_writes(twin) == 0


def test_a_role_without_one_rule_stops_preflight_before_any_write(twin, run_playbook, tmp_path):
    role = cluster_role('enable')
    role['metadata']['name'] = 'enable-without-node-patch'
    for rule in role['rules']:
        if rule['resources'] == ['nodes']:
            rule['verbs'].remove('patch')
    env = bind(twin, tmp_path, role, 'runner-partial')
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()
    run = run_playbook('playbooks/enable.yml', VARIABLES, env=env)
    assert run.rc != 0, run
    assert '[kube_permission_missing] The Kubernetes credentials lack 1 permission(s) the enable playbook uses: patch nodes cluster-wide.' \
        in run.stdout, run
    assert 'Bind ClusterRole ocp-egressip-enable (the file rbac/enable.yml' in run.stdout, run
    assert kube_writes(twin) == 0 and lock_writes(twin) == 0 and vcsim_writes(twin) == {}
    assert forbidden(twin) == []  # asked, never tried


def test_disable_runs_with_its_role(twin, run_playbook, tmp_path):
    run = run_playbook('playbooks/disable.yml', [VARIABLES, {'disable_delete_assigned_egressips': True}],
                       env=as_playbook_role(twin, tmp_path, 'disable'))
    assert run.rc == 0, (forbidden(twin), failed(run))
    assert twin.custom_objects().list_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips')['items'] == []
    assert forbidden(twin) == []
