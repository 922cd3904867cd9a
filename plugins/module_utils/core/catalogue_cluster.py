# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The catalogue entries of the cluster, platform and vSphere checks (preflight, the vSphere steps).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# --- cluster and platform (preflight) ---------------------------------------------------
PLATFORM_CHECKS = {
    'preflight_read_incomplete': {
        'severity': 'warning',
        'title': 'Preflight could not read some kinds; the checks that need them were skipped',
        'remedy': 'Give the credentials read (get/list) access to the kinds named, or accept that those checks did not run.',
    },
    'variables_unknown_key': {
        'severity': 'error',
        'title': 'The variables file has a variable or key the collection does not know (a misspelling is silently ignored otherwise)',
        'remedy': 'Rename the key to the one suggested, or remove it; docs/variables.md lists every variable and key.',
    },
    'variables_invalid': {
        'severity': 'error',
        'title': 'A value of the variables file has the wrong type, is out of bounds or is malformed',
        'remedy': 'Correct the named variable as the message says (docs/variables.md gives each type and range) and run again.',
    },
    'egress_nodes_selector_empty': {
        'severity': 'error',
        'title': 'The egress node selector is empty or missing: it would select every node, control plane included',
        'remedy': 'Set egressip_nodes.selector to the labels of the egress nodes, e.g. {node-role.kubernetes.io/worker: ""}.',
    },
    'platform_not_vsphere': {
        'severity': 'error',
        'title': 'The cluster does not run on VMware vSphere',
        'remedy': 'Use this collection only on OpenShift on vSphere (Infrastructure platform VSphere).',
    },
    'platform_network_type_not_ovn_kubernetes': {
        'severity': 'error',
        'title': 'The cluster network plugin is not OVN-Kubernetes',
        'remedy': 'EgressIP on a secondary interface needs OVN-Kubernetes; migrate the cluster network plugin first.',
    },
    'platform_version_unsupported': {
        'severity': 'error',
        'title': 'OpenShift is older than 4.14 (or its version cannot be read)',
        'remedy': 'Upgrade to OpenShift 4.14 or newer (secondary-interface EgressIP arrived in 4.14, GA in 4.15).',
    },
    'support_not_acknowledged': {
        'severity': 'error',
        'title': 'Secondary-network EgressIP on vSphere requested without acknowledging that it is outside Red Hat support',
        'remedy': 'Read docs/support-matrix.md, then set egressip_acknowledge_unsupported: true, or use EgressIP on the primary network (supported).',
    },
    'support_acknowledged': {
        'severity': 'info',
        'title': 'The configuration is outside Red Hat support, and that was acknowledged',
        'remedy': 'Nothing to do; keep this report with support cases (Red Hat supports secondary-interface EgressIP on bare metal only).',
    },
    'infrastructure_node_networking_not_pinned': {
        'severity': 'warning',
        'title': 'Infrastructure nodeNetworking does not pin node addresses to the primary subnet',
        'remedy': 'Set nodeNetworking.internal/external.networkSubnetCidr to the primary machine network in Infrastructure cluster.',
    },
    'nmstate_not_installed': {
        'severity': 'error',
        'title': 'The Kubernetes NMState Operator or its NMState CR is missing',
        'remedy': 'Install the Kubernetes NMState Operator and create the NMState CR named nmstate.',
    },
    'egress_ip_in_nmstate_policy': {
        'severity': 'error',
        'title': 'An egress IP is configured as a static address in a NodeNetworkConfigurationPolicy',
        'remedy': 'Remove the egress IP from the policy; only the NIC base address belongs in NetworkManager.',
    },
    'machine_api_absent': {
        'severity': 'info',
        'title': 'No Machine API Machines back the egress nodes (UPI or platform none): only the vCenter path applies',
        'remedy': 'Nothing to change; run enable again after adding nodes so their VMs get the secondary NIC.',
    },
    'machine_nic_count_mismatch': {
        'severity': 'error',
        'title': 'A Machine lists a different number of network devices than its VM has NICs (invalid network count)',
        'remedy': 'When the VM has the extra egress NIC, align the Machine providerSpec network.devices with the VM NICs (machineset_network '
                  'align_machines); when the VM lost the egress NIC the Machine lists, run enable (vsphere_vm_nic adds it again); '
                  'otherwise remove the extra NIC.',
    },
    'machineset_missing_secondary_device': {
        'severity': 'warning',
        'title': 'A MachineSet that builds egress nodes has no network device on the secondary port group',
        'remedy': 'Run the vSphere network step (machineset_network) so the template lists the port group after its existing devices.',
    },
    'vsphere_not_checked': {
        'severity': 'info',
        'title': 'vCenter was not read, so the vSphere checks were skipped',
        'remedy': 'Give egressip_vsphere and the VMWARE_* connection settings to run the vSphere checks.',
    },
    'vsphere_cluster_not_found': {
        'severity': 'error',
        'title': 'The vSphere datacenter or cluster named in egressip_vsphere does not exist',
        'remedy': 'Correct egressip_vsphere.datacenter / egressip_vsphere.cluster (names as vCenter shows them, case-sensitive).',
    },
    'vsphere_node_vm_not_found': {
        'severity': 'error',
        'title': 'A node has no VM: its providerID is not vsphere://<BIOS UUID>, or no VM has that BIOS UUID',
        'remedy': 'Check the node spec.providerID and that the vCenter user sees the VM in egressip_vsphere.datacenter; names are never guessed.',
    },
    'switch_missing': {
        'severity': 'error',
        'title': 'The switch of the secondary port group is missing: vSwitch absent on a host, distributed switch absent, or a host not a member',
        'remedy': 'Create the vSwitch on every host of the cluster, or add every host to the distributed switch, or correct egressip_vsphere.portgroup.switch.',
    },
    'portgroup_missing': {
        'severity': 'error',
        'title': 'The secondary port group does not exist, or not on every host of the vSphere cluster',
        'remedy': 'Run the vSphere network step (vsphere_portgroup) so it exists, with the same VLAN, on every host (or on the distributed switch).',
    },
    'portgroup_vlan_mismatch': {
        'severity': 'error',
        'title': 'The secondary port group has another VLAN than configured',
        'remedy': 'Find out which VLAN is right; correct egressip_vsphere.portgroup.vlan_id or the port group, knowing other VMs may use it.',
    },
    'nsx_backed_network': {
        'severity': 'error',
        'title': 'The secondary network is backed by NSX (untested, unconfirmed)',
        'remedy': 'Use a VLAN-backed standard or distributed port group, or set egressip_vsphere.accept_untested_nsx: true after testing.',
    },
    'secondary_cidr_not_global_unicast': {
        'severity': 'error',
        'title': 'The secondary cidr is link-local, loopback or multicast: OVN-Kubernetes never places an egress IP in it',
        'remedy': 'Choose a global unicast subnet (private IPv4 ranges and IPv6 unique-local fd00::/8 are global unicast in this sense).',
    },
    'secondary_family_not_in_cluster': {
        'severity': 'error',
        'title': 'The secondary network has an IP family the cluster does not run (an IPv6 part on an IPv4-only cluster)',
        'remedy': 'Remove that part of egressip_network (and its egress IPs), or convert the cluster to dual stack first.',
    },
    'secondary_cidr_overlaps_cluster_network': {
        'severity': 'error',
        'title': 'The secondary cidr overlaps the cluster, service or an OVN-Kubernetes internal network',
        'remedy': 'Choose a secondary subnet outside the cluster, service and OVN-Kubernetes internal networks.',
    },
    'egress_reachability_check_disabled': {
        'severity': 'warning',
        'title': 'The EgressIP reachability check is disabled (reachabilityTotalTimeoutSeconds: 0)',
        'remedy': 'Set egressIPConfig.reachabilityTotalTimeoutSeconds back to 1 (default) unless it was disabled on purpose.',
    },
    'egress_nodes_none_selected': {
        'severity': 'error',
        'title': 'The egress node selector matches no node',
        'remedy': 'Correct egressip_nodes.selector (compare with oc get nodes --show-labels).',
    },
    'egress_nodes_capacity_insufficient': {
        'severity': 'error',
        'title': 'Fewer capable egress nodes than IPs per EgressIP object + 1',
        'remedy': 'Select more egress nodes, or give the EgressIP fewer IPs: each object needs one more capable node than it has IPs.',
    },
    'namespace_primary_udn': {
        'severity': 'error',
        'title': 'An EgressIP selects namespaces on a user-defined primary network',
        'remedy': 'Narrow the namespace_selector to namespaces on the default cluster network.',
    },
    'host_network_pods_selected': {
        'severity': 'warning',
        'title': 'An EgressIP selects host-networked pods, which never use egress IPs',
        'remedy': 'Exclude those pods with pod_selector, or run the workload without hostNetwork.',
    },
    'primary_egressips_present': {
        'severity': 'info',
        'title': 'EgressIPs on the primary network exist; they are recorded and left unchanged',
        'remedy': 'Nothing to do; later runs compare them with this record.',
    },
    'primary_egressips_affected_by_labels': {
        'severity': 'warning',
        'title': 'Newly labelled egress nodes also become candidates for primary-network egress IPs',
        'remedy': 'Accept it, or keep the secondary egress nodes apart from the nodes meant for primary egress IPs.',
    },
}

# --- vSphere network: port group, VM NICs, Machine API ------------------------------------
VSPHERE_CHECKS = {
    # Also used here, defined with preflight in PLATFORM_CHECKS: vsphere_cluster_not_found, vsphere_node_vm_not_found,
    # switch_missing, portgroup_missing, machine_api_absent, machine_nic_count_mismatch.
    # failure domains (model/failure_domains.py): several vSphere clusters (possibly datacenters) behind one OpenShift cluster
    'failure_domain_unknown': {
        'severity': 'error',
        'title': 'egressip_vsphere.failure_domains names a failure domain the Infrastructure object does not have',
        'remedy': 'Use the names of `oc get infrastructure cluster -o jsonpath={.spec.platformSpec.vsphere.failureDomains[*].name}`, '
                  'or remove the entry.',
    },
    'failure_domain_incomplete': {
        'severity': 'error',
        'title': 'A failure domain has no datacenter, vSphere cluster or port group name (not in its entry, the Infrastructure '
                 'topology or egressip_vsphere)',
        'remedy': 'Give datacenter, cluster and portgroup in its egressip_vsphere.failure_domains entry (or at the top of egressip_vsphere).',
    },
    'failure_domain_node_unmapped': {
        'severity': 'error',
        'title': 'A selected node matches no failure domain (neither by its Machine\'s workspace nor by its zone/region labels)',
        'remedy': 'Check the node\'s Machine (spec.providerSpec.value.workspace) and its topology.kubernetes.io/zone and region '
                  'labels against the Infrastructure failure domains; the NIC step never guesses a domain.',
    },
    'failure_domain_portgroup_missing': {
        'severity': 'error',
        'title': 'The port group of a failure domain does not exist, or not on every host of that domain\'s vSphere cluster',
        'remedy': 'Run the vSphere network step (vsphere_portgroup with failure_domains, or enable): it creates each domain\'s '
                  'port group on every host of that domain\'s cluster (or on its distributed switch).',
    },
    'vsphere_cluster_without_hosts': {
        'severity': 'error',
        'title': 'The vSphere cluster has no ESXi host to place a standard port group on',
        'remedy': 'Check egressip_vsphere.cluster, or give the hosts explicitly.',
    },
    'vsphere_portgroup_on_other_vswitch': {
        'severity': 'error',
        'title': 'A port group of that name already exists on another vSwitch of a host',
        'remedy': 'Use the vSwitch the port group is on, or move it by hand (remove and re-add) after checking which VMs use it.',
    },
    'vsphere_portgroup_ambiguous': {
        'severity': 'error',
        'title': 'More than one network of that name exists in the datacenter',
        'remedy': 'Give the distributed switch (switch) so the port group is identified by its switch, or rename one of them.',
    },
    'vsphere_portgroup_in_use': {
        'severity': 'error',
        'title': 'The port group still backs VM NICs, so it is not removed',
        'remedy': 'Remove the NICs first (ocp.egressip.vsphere_vm_nic state=absent), or set force=true to leave them without a network.',
    },
    'vsphere_vm_not_found': {
        'severity': 'error',
        'title': 'A VM given by name, BIOS UUID or moid does not exist',
        'remedy': 'Correct the VM reference, or check that the vCenter user can see the VM.',
    },
    'vsphere_vm_ambiguous': {
        'severity': 'error',
        'title': 'A VM reference or a node providerID matches more than one VM',
        'remedy': 'Refer to the VM by moid; VMs sharing a BIOS UUID were cloned without a new UUID and must be fixed in vCenter.',
    },
    'vsphere_vm_nic_limit': {
        'severity': 'error',
        'title': 'The VM already has 10 NICs, the vSphere maximum',
        'remedy': 'Remove a NIC the VM does not need, then rerun.',
    },
    'vsphere_vm_nic_ambiguous': {
        'severity': 'error',
        'title': 'The VM has more than one NIC on the egress network',
        'remedy': 'Remove the extra NIC by hand (check which MAC the node address uses first), then rerun.',
    },
    'vsphere_vm_nic_adapter': {
        'severity': 'error',
        'title': 'The NIC on the egress network is not vmxnet3',
        'remedy': 'Replace it: remove it (state=absent), then add it again; the new NIC gets a new MAC.',
    },
    'vsphere_vm_nic_move_refused': {
        'severity': 'error',
        'title': "The collection's NIC is on another network and cannot be moved to the egress port group safely",
        'remedy': 'Keep one NIC for the egress network: remove the other one by hand (the MAC the NMState policy egressip-<node> '
                  'names is the one carrying the node address), then rerun.',
    },
    'vsphere_vm_nic_duplicate_removed': {
        'severity': 'warning',
        'title': 'Another writer added an egress NIC at the same time: the duplicate this run added was removed',
        'remedy': 'Nothing to do for the VM; find the other writer (a second job, or a module left running by a killed '
                  'ansible-playbook) and let one run at a time.',
    },
    'vsphere_vm_nic_hosts_egress_ips': {
        'severity': 'error',
        'title': 'The NIC is not removed because its node hosts egress IPs',
        'remedy': 'Move the egress IPs first (remove the egress-assignable label from the node and wait for reassignment), '
                  'or set force=true to accept the outage.',
    },
    'vsphere_vm_reconfigure_failed': {
        'severity': 'error',
        'title': 'vCenter refused or failed the reconfiguration of a VM',
        'remedy': 'Read the vCenter fault in the message, fix its cause, and rerun: VMs that were done are left as they are.',
    },
    'machine_api_node_without_machineset': {
        'severity': 'warning',
        'title': 'A node has no Machine, or its Machine belongs to no MachineSet',
        'remedy': 'Control-plane Machines (ControlPlaneMachineSet) and Machines created by hand are not covered: '
                  'a replacement of that node loses the NIC unless its template lists the port group.',
    },
    'machineset_device_limit': {
        'severity': 'error',
        'title': 'The MachineSet template already lists 10 network devices',
        'remedy': 'Remove a device from spec.template.spec.providerSpec.value.network.devices that the nodes do not need.',
    },
    'machine_api_device_rename_ambiguous': {
        'severity': 'error',
        'title': 'A MachineSet or Machine lists several devices on earlier names of the egress port group',
        'remedy': 'Edit the devices by hand so one names the egress port group (keep the order), then rerun.',
    },
    'machine_api_providerspec_unexpected': {
        'severity': 'error',
        'title': 'A providerSpec has no network.devices list',
        'remedy': 'Check the object is a vSphere MachineSet or Machine (VSphereMachineProviderSpec).',
    },
    'machine_api_device_hosts_egress_ips': {
        'severity': 'error',
        'title': 'The port group is not taken out of a MachineSet template or Machine whose node hosts egress IPs',
        'remedy': 'Delete the EgressIP objects or move their IPs off those nodes first (the disable role does both before this '
                  'step), or set force=true to accept that the egress IPs stop working once the NIC goes.',
    },
}
