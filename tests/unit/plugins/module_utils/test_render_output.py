"""GitOps render, the pure part: deterministic YAML, file names, partial manifests, the directory plan, the README."""

import json

import yaml

from ansible_collections.ocp.egressip.plugins.module_utils.plan import render


class TaggedStr(str):
    """Stands for Ansible's tagged strings, which SafeDumper cannot represent."""


def test_yaml_is_sorted_block_style_and_the_same_for_equal_objects():
    first = {'spec': {'b': [1, 2], 'a': 'x'}, 'kind': 'K', 'apiVersion': 'v1'}
    second = {'apiVersion': 'v1', 'kind': 'K', 'spec': {'a': 'x', 'b': [1, 2]}}
    assert render.to_yaml(first) == render.to_yaml(second) == 'apiVersion: v1\nkind: K\nspec:\n  a: x\n  b:\n  - 1\n  - 2\n'


def test_multi_line_strings_are_literal_blocks_and_read_back_unchanged():
    data = '[main]\ninclude=openshift-node\n\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n'
    text = render.to_yaml({'profile': [{'data': data}]})
    assert '- data: |\n    [main]\n' in text
    assert yaml.safe_load(text) == {'profile': [{'data': data}]}


def test_subclasses_of_plain_types_render_like_plain_types():
    assert render.to_yaml({TaggedStr('name'): TaggedStr('payments')}) == 'name: payments\n'


def test_no_anchors_for_repeated_objects():
    shared = {'label': 'kubernetes.io/hostname'}
    assert '&' not in render.to_yaml({'a': shared, 'b': shared})


def test_every_file_starts_with_the_generated_mark():
    text = render.manifest_text({'kind': 'K'})
    assert render.is_generated(text)
    assert not render.is_generated('kind: K\n# %s\n' % render.GENERATED)


def test_partial_manifest_is_identity_patch_and_the_gitops_safety_annotations():
    manifest = render.partial('v1', 'Node', 'ocp1-worker-0', {'metadata': {'labels': {'k8s.ovn.org/egress-assignable': ''}}})
    assert manifest == {'apiVersion': 'v1', 'kind': 'Node',
                        'metadata': {'name': 'ocp1-worker-0', 'labels': {'k8s.ovn.org/egress-assignable': ''},
                                     'annotations': render.PARTIAL_ANNOTATIONS}}
    assert 'Prune=false' in render.PARTIAL_ANNOTATIONS['argocd.argoproj.io/sync-options']
    assert render.PARTIAL_ANNOTATIONS['kustomize.toolkit.fluxcd.io/prune'] == 'disabled'


def test_file_names_from_kind_namespace_and_name():
    assert render.file_name({'kind': 'EgressIP', 'metadata': {'name': 'payments'}}) == 'egressip-payments.yaml'
    assert render.file_name({'kind': 'Tuned', 'metadata': {'name': 'egressip-forwarding', 'namespace': 'openshift-cluster-node-tuning-operator'}}) \
        == 'tuned-openshift-cluster-node-tuning-operator-egressip-forwarding.yaml'


def test_partial_manifests_of_one_object_are_merged():
    devices = render.partial('machine.openshift.io/v1beta1', 'MachineSet', 'w', {'spec': {'template': {'spec': {'a': 1}}}}, namespace='ns')
    label = render.partial('machine.openshift.io/v1beta1', 'MachineSet', 'w', {'spec': {'template': {'spec': {'b': 2}}}}, namespace='ns')
    other = render.partial('v1', 'Node', 'n', {})
    merged = render.merge_manifests([devices, other, label])
    assert [render.file_name(item) for item in merged] == ['machineset-ns-w.yaml', 'node-n.yaml']
    assert merged[0]['spec']['template']['spec'] == {'a': 1, 'b': 2}
    assert devices['spec']['template']['spec'] == {'a': 1}  # inputs untouched


def test_render_files_lists_every_manifest_in_the_kustomization_in_order():
    files = render.render_files([{'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': 'b'}},
                                 {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': 'a'}}], 'readme\n')
    assert sorted(files) == ['README.md', 'kustomization.yaml', 'node-a.yaml', 'node-b.yaml']
    assert yaml.safe_load(files['kustomization.yaml']) == {'apiVersion': 'kustomize.config.k8s.io/v1beta1', 'kind': 'Kustomization',
                                                           'resources': ['node-a.yaml', 'node-b.yaml']}
    assert render.is_generated(files['README.md']) and files['README.md'].endswith('readme\n')
    again = render.render_files([{'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': 'a'}},
                                 {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': 'b'}}], 'readme\n')
    assert again == files


def test_plan_files_creates_updates_deletes_only_generated_files_and_reports_foreign_ones():
    mine = render.manifest_text({'kind': 'Old'})
    desired = {'a.yaml': render.manifest_text({'kind': 'A'}), 'b.yaml': render.manifest_text({'kind': 'B'}),
               'c.yaml': render.manifest_text({'kind': 'C'}), 'd.yaml': render.manifest_text({'kind': 'D'})}
    existing = {'a.yaml': desired['a.yaml'], 'b.yaml': mine, 'd.yaml': 'kind: ByHand\n', 'gone.yaml': mine, 'notes.txt': 'mine\n'}
    changes, conflicts = render.plan_files(desired, existing)
    assert changes == [{'name': 'a.yaml', 'action': 'none'}, {'name': 'b.yaml', 'action': 'update'},
                       {'name': 'c.yaml', 'action': 'create'}, {'name': 'gone.yaml', 'action': 'delete'}]
    assert conflicts == ['d.yaml']


def test_predicted_nodes_carry_the_label_and_the_planned_address():
    nodes = [{'metadata': {'name': 'w0', 'labels': {'role': 'w'}, 'annotations': {render.HOST_CIDRS_ANNOTATION: '["192.168.10.14/24"]'}}},
             {'metadata': {'name': 'w1'}}]
    predicted = render.predicted_nodes(nodes, {'w0': ['10.20.0.10/24']}, ['w0'])
    assert predicted[0]['metadata']['labels'] == {'role': 'w', 'k8s.ovn.org/egress-assignable': ''}
    assert json.loads(predicted[0]['metadata']['annotations'][render.HOST_CIDRS_ANNOTATION]) == ['192.168.10.14/24', '10.20.0.10/24']
    assert predicted[1] == {'metadata': {'name': 'w1'}}
    assert 'k8s.ovn.org/egress-assignable' not in nodes[0]['metadata']['labels']  # inputs untouched


def test_readme_lists_the_vcenter_steps_with_macs_and_pending_nodes():
    text = render.readme({'portgroup': {'name': 'ocp-egress-120', 'switch_type': 'standard', 'switch': 'vSwitch1', 'vlan_id': 120},
                          'datacenter': 'DC0', 'cluster': 'DC0_C0', 'macs_source': 'vcenter',
                          'nics': [{'node': 'w0', 'mac': '00:50:56:aa:bb:01', 'interface': 'ens224', 'address': '10.20.0.10/24'}],
                          'pending': ['w1'], 'manifests': [{'file': 'node-w0.yaml', 'kind': 'Node', 'name': 'w0', 'what': 'partial'}],
                          'ip_forwarding': 'per_interface', 'machinesets': True})
    assert 'Port group `ocp-egress-120` on the standard vSwitch `vSwitch1` of **every** host of vSphere cluster `DC0_C0`' in text
    assert '| w0 | 00:50:56:aa:bb:01 | ens224 | 10.20.0.10/24 | rendered |' in text
    assert '| w1 | - | - | - | no NIC yet: add it, then render again |' in text
    assert '| node-w0.yaml | Node | w0 | partial |' in text
    assert 'read from vCenter' in text and '--server-side' in text
    distributed = render.readme({'portgroup': {'name': 'pg', 'switch_type': 'distributed', 'switch': 'DSwitch1'}, 'macs_source': 'variable'})
    assert 'on the distributed switch `DSwitch1`' in distributed and 'VLAN as it is' in distributed and 'render_nics' in distributed
