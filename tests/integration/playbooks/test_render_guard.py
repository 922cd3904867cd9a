"""playbooks/render.yml with the in-cluster guard (egressip_guard.in_cluster): its manifests beside the others, listed
in kustomization.yaml, the PrometheusRule accepted by the API server's schema of the upstream CRD (server-side apply on
the twin), no credential in any file, the same bytes on a rerun, and a missing image refused before a file is written.
"""

import os

import pytest
import yaml

from _render_setup import VARIABLES, manifests, vcenter_steps  # pylint: disable=wrong-import-order

pytestmark = pytest.mark.slow

GUARD = {'egressip_guard': {'in_cluster': {'enabled': True, 'image': 'registry.example.com/platform/ocp-egressip-ee:1.0'}}}
GUARD_FILES = ['namespace-ocp-egressip-guard.yaml', 'serviceaccount-ocp-egressip-guard-egressip-guard.yaml',
               'clusterrole-egressip-guard.yaml', 'clusterrolebinding-egressip-guard.yaml',
               'role-default-egressip-guard.yaml', 'rolebinding-default-egressip-guard.yaml',
               'role-ocp-egressip-guard-egressip-guard.yaml', 'rolebinding-ocp-egressip-guard-egressip-guard.yaml',
               'configmap-ocp-egressip-guard-egressip-guard-variables.yaml', 'cronjob-ocp-egressip-guard-egressip-guard.yaml',
               'prometheusrule-ocp-egressip-guard-egressip-guard.yaml']


@pytest.fixture(scope='module')
def out(tmp_path_factory):
    return tmp_path_factory.mktemp('render-guard')


def test_a_guard_without_image_is_refused_before_any_file(twin, run_playbook, out, tmp_path):
    vcenter_steps(twin, run_playbook, tmp_path)
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'refused'),
                                                            'egressip_guard': {'in_cluster': {'enabled': True}}}])
    assert run.rc != 0, run
    assert 'guard_input_invalid' in run.stdout and 'egressip_guard.in_cluster.image' in run.stdout, run
    assert not (out / 'refused').exists()


def test_the_guard_is_rendered_with_the_rest_and_its_alerts_fit_the_crd(twin, run_playbook, out):
    run = run_playbook('playbooks/render.yml', [VARIABLES, GUARD, {'render_dest': str(out / 'guard')}])
    assert run.rc == 0, run
    names = os.listdir(out / 'guard')
    assert set(GUARD_FILES) <= set(names), sorted(set(GUARD_FILES) - set(names))
    listed = [os.path.basename(path) for path in manifests(str(out / 'guard'))]
    assert set(GUARD_FILES) <= set(listed)
    readme = (out / 'guard' / 'README.md').read_text()
    assert 'guard: one round per schedule' in readme
    for name in names:
        text = (out / 'guard' / name).read_text()
        assert 'VMWARE_PASSWORD=' not in text and 'password:' not in text.lower(), name
    with open(out / 'guard' / 'prometheusrule-ocp-egressip-guard-egressip-guard.yaml', encoding='utf-8') as handle:
        rule = yaml.safe_load(handle)
    twin.core_v1().create_namespace({'metadata': {'name': 'ocp-egressip-guard'}})
    from kubernetes import dynamic  # pylint: disable=import-outside-toplevel
    api = dynamic.DynamicClient(twin.api_client()).resources.get(api_version='monitoring.coreos.com/v1', kind='PrometheusRule')
    api.server_side_apply(body=rule, name=rule['metadata']['name'], namespace='ocp-egressip-guard', field_manager='gitops')
    stored = api.get(name='egressip-guard', namespace='ocp-egressip-guard')
    alerts = ['EgressIPGuardRoundFailed', 'EgressIPGuardNotSucceeding', 'EgressIPNodeUnreachable']
    assert [item.alert for item in stored.spec.groups[0].rules] == alerts
    again = run_playbook('playbooks/render.yml', [VARIABLES, GUARD, {'render_dest': str(out / 'guard')}])
    assert again.rc == 0 and again.changed == 0, again
