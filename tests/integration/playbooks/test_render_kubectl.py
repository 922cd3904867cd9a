"""The directory playbooks/render.yml writes, applied with the real kubectl (client-side validation on, from the twin's
OpenAPI documents), server-side and then client-side: what a person without GitOps tooling does with it.

The twin gets the vCenter steps the README lists (port group, NICs, Machines aligned), then render, then kubectl.
"""

import json
import os
import shutil
import subprocess

import pytest
import yaml

pytestmark = pytest.mark.slow

VARIABLES = '@examples/twin-cluster.yml'
PORTGROUP = 'ocp-egress-120'
MACHINE_API = ('machine.openshift.io', 'v1beta1', 'openshift-machine-api')
KUBECTL = os.environ.get('TWIN_KUBECTL') or shutil.which('kubectl')
VCENTER_STEPS = '''
- name: vCenter steps only (port group, NICs), as README.md lists them
  hosts: localhost
  gather_facts: false
  roles:
    - role: ocp.egressip.vsphere_network
      vars:
        vsphere_network_machine_api: false
'''


@pytest.fixture(scope='module')
def out(tmp_path_factory):
    if not KUBECTL:
        pytest.skip("kubectl is not installed (scripts/bootstrap.sh installs Debian's kubernetes-client)")
    return tmp_path_factory.mktemp('render-kubectl')


def test_vcenter_steps_then_render(twin, run_playbook, out):
    (out / 'vcenter.yml').write_text(VCENTER_STEPS)
    assert run_playbook(str(out / 'vcenter.yml'), VARIABLES).rc == 0
    objects = twin.custom_objects()
    for machine in objects.list_namespaced_custom_object(*MACHINE_API, 'machines')['items']:
        if 'worker' in machine['metadata']['name']:
            objects.patch_namespaced_custom_object(*MACHINE_API, 'machines', machine['metadata']['name'],
                                                   [{'op': 'add', 'path': '/spec/providerSpec/value/network/devices/-',
                                                     'value': {'networkName': PORTGROUP}}],
                                                   _content_type='application/json-patch+json')
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'dir')}])
    assert run.rc == 0, run
    assert (out / 'dir' / 'kustomization.yaml').exists()


def kubectl(twin, home, *args):
    env = dict(os.environ, KUBECONFIG=twin.kube_state['kubeconfig'], HOME=str(home))
    done = subprocess.run([KUBECTL, '--request-timeout=30s'] + list(args), env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    return done.returncode, done.stdout, done.stderr


def manifests(directory):
    with open(os.path.join(directory, 'kustomization.yaml'), encoding='utf-8') as handle:
        return [os.path.join(directory, name) for name in yaml.safe_load(handle)['resources']]


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
