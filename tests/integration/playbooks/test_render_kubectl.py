"""The directory playbooks/render.yml writes, applied with the real kubectl (client-side validation on, from the twin's
OpenAPI documents), server-side and then client-side: what a person without GitOps tooling does with it.

The twin gets the vCenter steps the README lists (port group, NICs, Machines aligned), then render, then kubectl.
"""

import json
import os
import shutil
import subprocess

import pytest

from _render_setup import VARIABLES, manifests, vcenter_steps  # pylint: disable=wrong-import-order

pytestmark = pytest.mark.slow

KUBECTL = os.environ.get('TWIN_KUBECTL') or shutil.which('kubectl')


@pytest.fixture(scope='module')
def out(tmp_path_factory):
    if not KUBECTL:
        pytest.skip("kubectl is not installed (scripts/bootstrap.sh installs Debian's kubernetes-client)")
    return tmp_path_factory.mktemp('render-kubectl')


def test_vcenter_steps_then_render(twin, run_playbook, out):
    vcenter_steps(twin, run_playbook, out)
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'dir')}])
    assert run.rc == 0, run
    assert (out / 'dir' / 'kustomization.yaml').exists()


def kubectl(twin, home, *args):
    env = dict(os.environ, KUBECONFIG=twin.kube_state['kubeconfig'], HOME=str(home))
    done = subprocess.run([KUBECTL, '--request-timeout=30s'] + list(args), env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    return done.returncode, done.stdout, done.stderr


def test_kubectl_apply_server_side_of_the_rendered_files(twin, out, tmp_path):
    files = manifests(out / 'dir')
    args = ['apply', '--server-side', '--force-conflicts', '--field-manager=gitops']
    code, out, err = kubectl(twin, tmp_path, *(args + [x for name in files for x in ('-f', name)]))
    assert code == 0, err
    assert out.count('serverside-applied') == len(files), out
    eip = twin.custom_objects().get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'payments')
    assert eip['spec']['egressIPs'] and any(entry['manager'] == 'gitops' for entry in eip['metadata']['managedFields'])


def test_kubectl_client_side_apply_of_the_directory_validates_and_changes_nothing_more(twin, out, tmp_path):
    """`kubectl apply -f DIR` (kustomization.yaml moved aside: it is not a Kubernetes object) with validation on."""
    plain = tmp_path / 'plain'
    shutil.copytree(out / 'dir', plain)
    os.unlink(plain / 'kustomization.yaml')
    os.unlink(plain / 'README.md')
    code, out, err = kubectl(twin, tmp_path, 'apply', '-f', str(plain))
    assert code == 0, err
    assert 'error validating' not in err
    twin.reset_kube_requests()
    code, out, err = kubectl(twin, tmp_path, 'apply', '-f', str(plain))
    assert code == 0, err
    assert all(line.endswith('unchanged') for line in out.splitlines()), out
    writes = [r for r in twin.kube_requests()['requests'] if r['verb'] in ('create', 'update', 'patch') and r['code'] < 300]
    assert writes == [], json.dumps(writes)
