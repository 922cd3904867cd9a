"""playbooks/render.yml on the twin: the rendered directory, applied with server-side apply to a fresh twin, gives the
objects enable gives on another fresh twin; the same input renders the same bytes; check mode writes nothing.

Twin A (started here) runs enable. Twin B (the module's `twin`) gets only the vCenter steps the README lists (port
group, NICs, Machines aligned), then render, then the directory is applied with the kubernetes client. The tests run in
order on these two twins.
"""

import filecmp
import json
import os

import pytest
import yaml

from twin.fixture import Twin, kube_writes, lock_writes, vcsim_writes

from _render_setup import MACHINE_API, PORTGROUP, VARIABLES, manifests, vcenter_steps  # pylint: disable=wrong-import-order

pytestmark = pytest.mark.slow

WORKERS = ['ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
RESULTS = {}


@pytest.fixture(scope='module')
def twin_a(tmp_path_factory, vcsim_binary):
    handle = Twin.start(str(tmp_path_factory.mktemp('twin-a')), binary=vcsim_binary)
    yield handle
    handle.stop()


@pytest.fixture(scope='module')
def out(tmp_path_factory):
    return tmp_path_factory.mktemp('render')


def reset(twin):
    twin.reset_kube_requests()
    twin.reset_vcsim_requests()


def server_side_apply(twin, directory):
    """What Argo CD (ServerSideApply=true) or Flux does with the directory: each resource of kustomization.yaml."""
    from kubernetes import dynamic  # pylint: disable=import-outside-toplevel
    client = dynamic.DynamicClient(twin.api_client())
    for path in manifests(directory):
        with open(path, encoding='utf-8') as handle:
            manifest = yaml.safe_load(handle)
        api = client.resources.get(api_version=manifest['apiVersion'], kind=manifest['kind'])
        api.server_side_apply(body=manifest, name=manifest['metadata']['name'], namespace=manifest['metadata'].get('namespace'),
                              field_manager='gitops', force_conflicts=True)


def objects_of(twin):
    """Every object enable touches (spec, labels, the collection's annotations), each NIC MAC replaced by its node."""
    objects = twin.custom_objects()
    policies = objects.list_cluster_custom_object('nmstate.io', 'v1', 'nodenetworkconfigurationpolicies')['items']

    def kept(obj):
        annotations = obj['metadata'].get('annotations') or {}
        return {'labels': obj['metadata'].get('labels'), 'spec': obj.get('spec'),
                'annotations': dict((key, value) for key, value in annotations.items() if key.startswith('egressip.ocp/'))}
    tuneds = objects.list_namespaced_custom_object('tuned.openshift.io', 'v1', 'openshift-cluster-node-tuning-operator', 'tuneds')['items']
    operator = objects.get_cluster_custom_object('operator.openshift.io', 'v1', 'networks', 'cluster')
    text = json.dumps({
        'egressips': dict((obj['metadata']['name'], kept(obj)) for obj in objects.list_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips')['items']),
        'policies': dict((obj['metadata']['name'], kept(obj)) for obj in policies),
        'tuneds': dict((obj['metadata']['name'], kept(obj)) for obj in tuneds),
        'labelled': sorted(node.metadata.name for node in twin.core_v1().list_node().items
                           if 'k8s.ovn.org/egress-assignable' in (node.metadata.labels or {})),
        'machinesets': dict((obj['metadata']['name'], obj['spec']['template']['spec'])
                            for obj in objects.list_namespaced_custom_object(*MACHINE_API, 'machinesets')['items']),
        'machines': dict((obj['metadata']['name'], obj['spec']['providerSpec']['value']['network'])
                         for obj in objects.list_namespaced_custom_object(*MACHINE_API, 'machines')['items']),
        'gateway_config': operator['spec']['defaultNetwork']['ovnKubernetesConfig']['gatewayConfig'],
    }, sort_keys=True)
    for policy in policies:  # each twin's vcsim hands out its own MACs
        text = text.replace(policy['spec']['desiredState']['interfaces'][0]['mac-address'], '<MAC of %s>' % policy['metadata']['name'])
    return json.loads(text)


def egress_nics(twin):
    return dict((vm['name'], nic['mac']) for vm in twin.inventory()['vms'] for nic in vm['nics'] if nic['network'] == PORTGROUP)


def test_enable_on_twin_a(twin_a, run_playbook):
    run = run_playbook('playbooks/enable.yml', VARIABLES, env=twin_a.env)
    assert run.rc == 0, run
    RESULTS['enabled'] = objects_of(twin_a)
    assert len(RESULTS['enabled']['policies']) == 3 and RESULTS['enabled']['labelled'] == WORKERS


def test_check_mode_renders_nothing_and_writes_nothing(twin, run_playbook, out, tmp_path):
    vcenter_steps(twin, run_playbook, tmp_path)
    reset(twin)
    check = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'one')}], check=True, diff=True)
    assert check.rc == 0, check
    assert check.changed == 1, check
    assert not (out / 'one').exists()
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}


def test_render_writes_the_directory_and_a_rerun_changes_nothing(twin, run_playbook, out):
    reset(twin)
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'one')}])
    assert run.rc == 0, run
    assert run.changed == 1, run
    assert sorted(os.listdir(out / 'one')) == sorted(
        ['README.md', 'kustomization.yaml', 'egressip-payments.yaml', 'tuned-openshift-cluster-node-tuning-operator-egressip-forwarding.yaml']
        + ['nodenetworkconfigurationpolicy-egressip-%s.yaml' % name for name in WORKERS] + ['node-%s.yaml' % name for name in WORKERS]
        + [name for name in os.listdir(out / 'one') if name.startswith('machineset-openshift-machine-api-')])
    readme = (out / 'one' / 'README.md').read_text()
    for node, mac in egress_nics(twin).items():
        assert '| %s | %s | ens224 |' % (node, mac.lower()) in readme
    assert 'Port group `ocp-egress-120` on the standard vSwitch `vSwitch1` of **every** host' in readme
    again = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'one')}])
    assert again.rc == 0 and again.changed == 0, again
    assert kube_writes(twin) == 0 and vcsim_writes(twin) == {}


def test_same_input_same_bytes(twin, run_playbook, out):
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'two')}])
    assert run.rc == 0, run
    names = sorted(os.listdir(out / 'one'))
    assert sorted(os.listdir(out / 'two')) == names
    assert filecmp.cmpfiles(out / 'one', out / 'two', names, shallow=False)[0] == names
    # MACs given as a variable instead of read from vCenter: only the README's sentence about their source differs
    nics = [{'node': node, 'mac': mac} for node, mac in sorted(egress_nics(twin).items())]
    given = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'three'), 'render_nics': nics}])
    assert given.rc == 0, given
    manifests = [name for name in names if name != 'README.md']
    assert filecmp.cmpfiles(out / 'one', out / 'three', manifests, shallow=False)[0] == manifests
    assert 'MACs were given in the variables (render_nics)' in (out / 'three' / 'README.md').read_text()


def test_the_role_variables_of_a_migrated_cluster_apply_to_render_too(run_playbook, out):
    """migrate writes node_network_interface_name (and egressips_adopt) for enable: render must produce the same objects."""
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'migrated'), 'node_network_interface_name': 'ens224',
                                                            'node_network_tuned_priority': 30}])
    assert run.rc == 0, run
    documents = [yaml.safe_load((out / 'migrated' / name).read_text()) for name in sorted(os.listdir(out / 'migrated'))
                 if name.endswith('.yaml') and name != 'kustomization.yaml']
    policies = [doc for doc in documents if doc['kind'] == 'NodeNetworkConfigurationPolicy']
    assert policies and all([item['name'] for item in doc['spec']['desiredState']['interfaces']] == ['ens224'] for doc in policies)
    [tuned] = [doc for doc in documents if doc['kind'] == 'Tuned']
    assert set(item['priority'] for item in tuned['spec']['recommend']) == {30}


def test_a_node_without_nic_is_pending_and_capacity_is_checked_as_after_the_apply(twin, run_playbook, out):
    nics = [{'node': node, 'mac': mac} for node, mac in sorted(egress_nics(twin).items())][:2]
    refused = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'four'), 'render_nics': nics}])
    assert refused.rc != 0, refused
    assert 'egress_nodes_capacity_insufficient' in refused.stdout and 'has 2 IP(s) but only 2 capable node(s)' in refused.stdout, refused
    assert not (out / 'four').exists()
    accepted = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'four'), 'render_nics': nics,
                                                                 'render_allow_insufficient_capacity': True}])
    assert accepted.rc == 0, accepted
    assert 'node ocp1-worker-2 matches the node selector but its VM has no NIC' in ' '.join((accepted.stdout + accepted.stderr).split())
    assert '| ocp1-worker-2 | - | - | - | no NIC yet: add it, then render again |' in (out / 'four' / 'README.md').read_text()
    assert not (out / 'four' / 'nodenetworkconfigurationpolicy-egressip-ocp1-worker-2.yaml').exists()


def test_applying_the_directory_gives_the_objects_enable_gives(twin, out):
    server_side_apply(twin, str(out / 'one'))

    def assigned():
        items = twin.custom_objects().get_cluster_custom_object('k8s.ovn.org', 'v1', 'egressips', 'payments').get('status', {}).get('items')
        return len(items or []) == 2
    twin.wait_for(assigned, timeout=60, what='both egress IPs of payments assigned on twin B')
    assert objects_of(twin) == RESULTS['enabled']


def test_enable_after_the_gitops_apply_changes_nothing(twin, run_playbook):
    reset(twin)
    run = run_playbook('playbooks/enable.yml', VARIABLES)
    assert run.rc == 0, run
    assert run.changed == 0, run
    # the verify step's wire check creates its probe namespace and pods, and enable holds the cluster lock (a Lease, taken
    # and released); nothing else may be written
    writes = [(item['verb'], item['path']) for item in twin.kube_requests()['requests']
              if item['verb'] in ('create', 'update', 'patch', 'delete') and not item['dry_run']
              and item['resource'] not in ('namespaces', 'pods', 'leases.coordination.k8s.io', 'selfsubjectaccessreviews.authorization.k8s.io')]
    assert lock_writes(twin) >= 2  # taken, then released
    assert writes == [] and vcsim_writes(twin) == {}


def test_files_render_did_not_write_are_left_alone(run_playbook, out):
    (out / 'one' / 'mine.yaml').write_text('kind: ConfigMap\n')
    (out / 'one' / 'egressip-payments.yaml').write_text('# edited by hand\n')
    run = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'one')}])
    assert run.rc != 0, run
    assert 'holds egressip-payments.yaml, not written by render' in run.stdout, run
    assert (out / 'one' / 'egressip-payments.yaml').read_text() == '# edited by hand\n'
    (out / 'one' / 'egressip-payments.yaml').unlink()
    again = run_playbook('playbooks/render.yml', [VARIABLES, {'render_dest': str(out / 'one')}])
    assert again.rc == 0 and again.changed == 1, again
    assert (out / 'one' / 'mine.yaml').read_text() == 'kind: ConfigMap\n'
