#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_render
short_description: Write every Kubernetes object of the enable flow into a directory (GitOps) instead of applying it
version_added: 0.1.0
description:
  - Renders, into O(dest), each Kubernetes object the enable flow applies - the C(EgressIP) objects, one
    C(NodeNetworkConfigurationPolicy) per egress node, the C(Tuned) that turns on IP forwarding on the egress NICs (or
    the network operator change for O(network.ip_forwarding=global)), the C(k8s.ovn.org/egress-assignable) label of the
    egress nodes, and the MachineSet template changes (the port group in C(network.devices), optionally the label) - plus
    a C(kustomization.yaml) listing them and a C(README.md).
  - Every object is built by the same function the module that applies it uses (M(ocp.egressip.egressip),
    M(ocp.egressip.node_nic_address), M(ocp.egressip.ip_forwarding), M(ocp.egressip.egress_nodes),
    M(ocp.egressip.machineset_network)), and checked as they check it (addresses, ownership, capacity, route metric),
    so rendering and applying give the same objects. Capacity is checked against the cluster as it will be once the
    directory is applied.
  - Objects the collection creates are whole manifests. Objects it only changes (Node labels, MachineSets, the network
    operator) are partial manifests holding only the fields it sets; apply the directory with server-side apply
    (C(oc apply --server-side --force-conflicts -k DIR), Argo CD C(ServerSideApply=true), Flux).
  - Deterministic - the same options and cluster state give the same bytes (sorted keys, stable file names, no
    timestamps). A second render with nothing changed reports C(changed=false) and writes nothing.
  - vCenter steps (the port group, the NICs, aligning existing Machines) are not Kubernetes objects and are not rendered;
    the README lists them with the MAC and kernel name of each egress NIC. The NMState policies match each NIC by MAC, so
    the NICs must exist first; selected nodes without one are listed as pending, with a warning, and left out.
  - Reads the cluster once, read-only - one list each of Nodes, NodeNetworkStates, NodeNetworkConfigurationPolicies,
    EgressIPs, Tuned objects, MachineSets and Machines. Allocations already made (the collection's policies) are kept.
  - Files in O(dest) that render did not write are never changed or deleted (render refuses instead); files it wrote
    earlier that are no longer wanted are deleted.
  - Runs on the controller (an action plugin), where O(dest) is; the Kubernetes connection options and their
    C(K8S_AUTH_*) environment variables are read from the task and the controller's environment.
requirements:
  - netaddr >= 1.3.0 (on the controller)
  - PyYAML (on the controller; comes with ansible-core)
options:
  dest:
    description: Directory to write into (created when missing). Give it a directory of its own, for example in a Git working tree.
    type: path
    required: true
  objects:
    description: The EgressIP objects (C(egressip_objects) of the variables file) - C(name), C(egress_ips), C(namespace_selector), C(pod_selector).
    type: list
    elements: dict
    default: []
  network:
    required: true
  node_selector:
    description: The egress nodes (C(egressip_nodes.selector)), a label map or a LabelSelector.
    type: dict
    required: true
  nics:
    description:
      - The egress NIC of each egress node, C(node) and C(mac); other keys are ignored, so the C(vms) list of
        M(ocp.egressip.vsphere_vm_nic) can be passed as it is. Selected nodes missing here are pending (not rendered).
    type: list
    elements: dict
    default: []
  macs_source:
    description: Where O(nics) came from, for the README - V(vcenter) (read by the render role) or V(variable).
    type: str
    choices: [vcenter, variable]
    default: variable
  vsphere:
    description:
      - The vSphere side (C(egressip_vsphere) of the variables file) - C(portgroup.name) names the device rendered into the
        MachineSet templates; datacenter, cluster and the port group are listed in the README as the vCenter steps.
    type: dict
    default: {}
  interface_name:
    description: NetworkManager profile name of the egress NIC in the policies (as M(ocp.egressip.node_nic_address)).
    type: str
    default: egressip0
  tuned_priority:
    description: Priority of the Tuned recommend entries (as M(ocp.egressip.ip_forwarding)).
    type: int
    default: 20
  node_labels:
    description: Render the egress-assignable label of the rendered egress nodes as partial Node manifests.
    type: bool
    default: true
  machinesets:
    description: Render the port group in the template devices of the MachineSets that build the egress nodes.
    type: bool
    default: true
  machineset_labels:
    description: Render the egress-assignable label in the template of the MachineSets that build the rendered egress nodes.
    type: bool
    default: false
  adopt:
    description: Render EgressIP objects whose name an object without the collection's label already has (as M(ocp.egressip.egressip)).
    type: bool
    default: false
  allow_insufficient_capacity:
    description: Turn the capacity refusal into a warning (as M(ocp.egressip.egressip)).
    type: bool
    default: false
  guard:
    description:
      - The in-cluster guard (C(egressip_guard.in_cluster), docs/guard.md). With C(enabled=true) the directory also holds
        its Namespace, ServiceAccount, least-privilege ClusterRole and Roles with their bindings, the ConfigMap of the
        variables a round reads (O(guard_variables)), the CronJob that runs one guard round per C(schedule) in C(image)
        (the execution environment), and, with C(alerts) (default), the PrometheusRule of its alerts.
      - Keys (all optional but C(image)) - C(enabled), C(namespace) (default C(ocp-egressip-guard)), C(schedule)
        (default every minute), C(image), C(image_pull_secret), C(vcenter_secret) (the Secret with C(VMWARE_HOST),
        C(VMWARE_USER), C(VMWARE_PASSWORD) that the user creates; default C(egressip-guard-vcenter), optional),
        C(starting_deadline_seconds) (50), C(active_deadline_seconds) (300), C(successful_jobs_history_limit) (1),
        C(failed_jobs_history_limit) (3), C(alerts) (true), C(platform_monitoring) (true - labels the namespace
        C(openshift.io/cluster-monitoring=true) so that the platform Prometheus evaluates the alerts), C(resources) (the
        container's C(requests) and C(limits), each a map of resource name to quantity; by default requests of 100m CPU
        and 256Mi memory and a 512Mi memory limit, replaced whole when given).
    type: dict
    default: {}
  guard_variables:
    description:
      - The public variables the in-cluster guard's rounds read (C(egressip_objects), C(egressip_network),
        C(egressip_vsphere), C(egressip_nodes), C(egressip_verify), C(egressip_acknowledge_unsupported)); other keys are
        left out, and no credential is ever written.
    type: dict
    default: {}
extends_documentation_fragment:
  - ocp.egressip.egressip_network
  - ocp.egressip.k8s_auth
  - ocp.egressip.common
attributes:
  check_mode:
    details: Reads the cluster, renders and compares, writes no file.
  diff_mode:
    support: full
    details: Each file that changes, before and after.
  platform:
    platforms: posix
notes:
  - Applying the directory on its own does nothing on vCenter; run it after the vCenter steps (the
    M(ocp.egressip.vsphere_vm_nic) module or the C(vsphere_network) role) and render again when nodes are added.
seealso:
  - module: ocp.egressip.egressip
  - module: ocp.egressip.node_nic_address
  - module: ocp.egressip.ip_forwarding
  - module: ocp.egressip.egress_nodes
  - module: ocp.egressip.machineset_network
'''

EXAMPLES = r'''
- name: Render the cluster's EgressIP configuration into a Git working tree
  ocp.egressip.egressip_render:
    dest: gitops/clusters/cluster-a/egressip
    objects: "{{ egressip_objects }}"
    network: "{{ egressip_network }}"
    node_selector: "{{ egressip_nodes.selector }}"
    vsphere: "{{ egressip_vsphere }}"
    nics:
      - {node: ocp1-worker-0, mac: "00:50:56:aa:bb:01"}
      - {node: ocp1-worker-1, mac: "00:50:56:aa:bb:02"}
      - {node: ocp1-worker-2, mac: "00:50:56:aa:bb:03"}
  register: rendered

- name: Files written
  ansible.builtin.debug:
    msg: "{{ rendered.files | rejectattr('action', 'eq', 'none') | list }}"
'''

RETURN = r'''
dest:
  description: The directory.
  returned: always
  type: str
  sample: gitops/clusters/cluster-a/egressip
kustomization:
  description: Path of the kustomization.yaml.
  returned: success
  type: str
  sample: gitops/clusters/cluster-a/egressip/kustomization.yaml
files:
  description: Every file render manages in O(dest), sorted, with C(action) C(create), C(update), C(delete) or C(none).
  returned: success
  type: list
  elements: dict
  sample: [{name: egressip-payments.yaml, action: create}, {name: kustomization.yaml, action: create}]
manifests:
  description: One entry per rendered object - C(file), C(kind), C(name) and what it carries.
  returned: success
  type: list
  elements: dict
  sample: [{file: egressip-payments.yaml, kind: EgressIP, name: payments, what: "egress IPs 10.20.0.200, 10.20.0.201"}]
nics:
  description: The egress NIC of each rendered node - C(node), C(mac), C(interface) (kernel name, per-interface forwarding only), C(address).
  returned: success
  type: list
  elements: dict
  sample: [{node: ocp1-worker-0, mac: "00:50:56:aa:bb:01", interface: ens224, address: 10.20.0.10/24}]
pending:
  description: Selected nodes whose VM has no egress NIC yet; nothing is rendered for them.
  returned: success
  type: list
  elements: str
  sample: []
findings:
  description: Refusals (on failure) and warnings, as findings (C(id), C(severity), C(message), C(remedy), C(docs), C(objects)).
  returned: always
  type: list
  elements: dict
  sample: []
'''
