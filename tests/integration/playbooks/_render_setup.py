"""What the render tests do on a twin before render, as README.md lists it for a cluster enable does not write to: the
vCenter steps (port group and NICs by the vsphere_network role, Machine API left out), then the Machines aligned by hand;
and the files of a rendered directory, in the order its kustomization.yaml lists them.
"""

import os

import yaml

VARIABLES = '@examples/twin-cluster.yml'
PORTGROUP = 'ocp-egress-120'
MACHINE_API = ('machine.openshift.io', 'v1beta1', 'openshift-machine-api')
VCENTER_STEPS = '''
- name: vCenter steps only (port group, NICs), as README.md lists them
  hosts: localhost
  gather_facts: false
  roles:
    - role: ocp.egressip.vsphere_network
      vars:
        vsphere_network_machine_api: false
'''


def vcenter_steps(twin, run_playbook, folder):
    """README steps 1 to 3: the vCenter steps (a playbook written to `folder`), then the Machines aligned."""
    playbook = folder / 'vcenter.yml'
    playbook.write_text(VCENTER_STEPS)
    run = run_playbook(str(playbook), VARIABLES)
    assert run.rc == 0, run
    align_machines(twin)


def align_machines(twin):
    """README step 3 by hand: the Machines whose VM got the NIC list the port group."""
    objects = twin.custom_objects()
    for machine in objects.list_namespaced_custom_object(*MACHINE_API, 'machines')['items']:
        if 'worker' in machine['metadata']['name']:
            objects.patch_namespaced_custom_object(*MACHINE_API, 'machines', machine['metadata']['name'],
                                                   [{'op': 'add', 'path': '/spec/providerSpec/value/network/devices/-',
                                                     'value': {'networkName': PORTGROUP}}],
                                                   _content_type='application/json-patch+json')


def manifests(directory):
    """The paths of the files the directory's kustomization.yaml lists as resources."""
    with open(os.path.join(directory, 'kustomization.yaml'), encoding='utf-8') as handle:
        return [os.path.join(directory, name) for name in yaml.safe_load(handle)['resources']]
