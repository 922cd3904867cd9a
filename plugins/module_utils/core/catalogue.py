# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guardrail catalogue: every finding id the collection can report, as data.

Each entry: default `severity`, a one-line `title` (what the runbook entry is about) and the
generic `remedy`. Check functions build findings with `catalogue_finding(id, message,
objects)`: the message is specific (which node, which IP), the remedy comes from here unless
the check has a more precise one. docs/runbook.md has one section per id (a test checks it).
Each area keeps its entries in its own dict; CATALOGUE merges them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import finding

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

# --- node network: addresses, routes, forwarding, labels -------------------------------------
NODE_CHECKS = {
    'node_network_input_invalid': {
        'severity': 'error',
        'title': 'An option of the secondary network or node list is malformed',
        'remedy': 'Correct the named option as the message says and run again.',
    },
    'node_gateway_outside_cidr': {
        'severity': 'error',
        'title': 'The secondary gateway is not inside the secondary cidr',
        'remedy': 'Set egressip_network.gateway to the router address of egressip_network.cidr.',
    },
    'node_address_range_outside_cidr': {
        'severity': 'error',
        'title': 'node_address_range is not inside the secondary cidr',
        'remedy': 'Choose egressip_network.node_address_range inside egressip_network.cidr.',
    },
    'node_address_range_reserved': {
        'severity': 'error',
        'title': 'node_address_range includes the network, broadcast or gateway address',
        'remedy': 'Start the range after the network and gateway addresses and end it before the broadcast address.',
    },
    'node_address_range_too_small': {
        'severity': 'error',
        'title': 'node_address_range has fewer free addresses than nodes to address',
        'remedy': 'Widen egressip_network.node_address_range, or address fewer nodes.',
    },
    'node_network_overlaps_host_subnet': {
        'severity': 'error',
        'title': 'The secondary cidr overlaps the primary machine network or another host subnet',
        'remedy': 'Use a secondary subnet that no node already has on another interface (DOMAIN: prerequisite 4).',
    },
    'node_address_in_use': {
        'severity': 'error',
        'title': 'A node base address is already used by another node or an EgressIP object',
        'remedy': 'Free the address, or give the node another one; allocations never move on their own.',
    },
    'node_address_allocation_fixed': {
        'severity': 'error',
        'title': 'A node already has an allocation that would have to move',
        'remedy': 'Allocations never move: release the node with state: absent first (it loses its address), then run again.',
    },
    'node_object_not_owned': {
        'severity': 'error',
        'title': 'A policy or Tuned with the name the collection uses exists but was not created by it',
        'remedy': 'Rename or delete that object, or label it egressip.ocp/managed-by=ocp.egressip to let the collection adopt it.',
    },
    'node_policy_degraded': {
        'severity': 'error',
        'title': 'NMState could not apply the secondary NIC address on a node',
        'remedy': 'Read the enactment message: usually the MAC has no NIC on that node VM (NIC not added or wrong MAC).',
    },
    'node_nic_not_in_state': {
        'severity': 'error',
        'title': 'The NodeNetworkState of a node does not list its secondary NIC (needed for the route\'s kernel interface name)',
        'remedy': 'Check that the MAC is the one of the node VM\'s secondary NIC (vsphere_vm_nic\'s result) and that the NMState '
                  'handler runs on the node (oc get nns <node> -o yaml). NodeNetworkState is refreshed about every 60 s; raise '
                  'state_wait_timeout (node_network_state_wait_timeout) if the cluster is slower.',
    },
    'node_address_claim_conflict': {
        'severity': 'error',
        'title': 'Another writer claimed the same node base address at the same time, again and again',
        'remedy': 'Several runs write the node addresses of this cluster at once without the cluster lock; let one finish '
                  '(ocp.egressip.cluster_lock) and run again: the policies stay parked (matching no node) until then.',
    },
    'node_nmstate_version': {
        'severity': 'info',
        'title': 'The nmstate release of the NMState handler on the nodes',
        'remedy': 'Nothing to do: the collection names the kernel interface in routes, which every nmstate release accepts.',
    },
    'kube_tls_unverified': {
        'severity': 'warning',
        'title': 'The Kubernetes API certificate is not checked',
        'remedy': 'Give the CA of the API (ca_cert / K8S_AUTH_SSL_CA_CERT, or certificate-authority-data in the kubeconfig) and leave '
                  'validate_certs on; under AAP fill the CA field of the Bearer Token credential or use the kubeconfig credential type '
                  '(docs/aap.md).',
    },
    'vcenter_tls_unverified': {
        'severity': 'warning',
        'title': 'The vCenter certificate is not checked',
        'remedy': 'Trust the vCenter CA (system trust store, SSL_CERT_FILE or OCP_EGRESSIP_VCENTER_CA_BUNDLE) and set validate_certs true; '
                  'under AAP use the collection\'s vCenter credential type, extensions/aap/credential_types/vcenter.yml (docs/aap.md).',
    },
    'node_nmstate_version_unknown': {
        'severity': 'warning',
        'title': 'The nmstate release of the NMState handler could not be read',
        'remedy': 'Check that the NMState handler runs on every node (oc get nns -o yaml shows status.handlerNmstateVersion); the '
                  'collection does not depend on the release, but a support case needs it.',
    },
    'node_policy_timeout': {
        'severity': 'error',
        'title': 'A NodeNetworkConfigurationPolicy did not become Available in time',
        'remedy': 'Check the NodeNetworkConfigurationEnactment of the node and the nmstate handler pod, or raise wait_timeout.',
    },
    'node_policy_orphaned': {
        'severity': 'warning',
        'title': 'A policy of the collection names a node that no longer exists; its address stays reserved',
        'remedy': 'Release it with state: absent for that node to free the address.',
    },
    'node_hosts_egress_ips': {
        'severity': 'error',
        'title': 'Removing a node\'s address or label would strand the egress IPs it hosts',
        'remedy': 'Move the egress IPs first (label a capable replacement node), or set force: true to accept the interruption.',
    },
    'node_hosts_unowned_egress_ips': {
        'severity': 'error',
        'title': 'Removing a node\'s label would move an egress IP this collection does not own',
        'remedy': 'Keep the label: hand it back (oc annotate node <node> egressip.ocp/egress-assignable-, so it counts as set by hand), '
                  'or move that egress IP first, or set force: true to accept the move.',
    },
    'egress_label_set_by_hand': {
        'severity': 'warning',
        'title': 'A node carries the egress-assignable label without the record that this collection set it',
        'remedy': 'Leave it (it is kept), hand it over with adopt: true (egress_nodes_adopt) or '
                  'oc annotate node <node> egressip.ocp/egress-assignable=ocp.egressip, or remove it by hand.',
    },
    'node_route_metric_too_low': {
        'severity': 'error',
        'title': 'The secondary gateway route metric is not above the primary default route',
        'remedy': 'Set egressip_network.route_metric above the metric of the primary default route (br-ex stays the default-route interface).',
    },
    'node_network_state_missing': {
        'severity': 'error',
        'title': 'A node has no NodeNetworkState (is the Kubernetes NMState Operator running?)',
        'remedy': 'Install the Kubernetes NMState Operator and create the NMState CR named nmstate, then wait for its handler on the node.',
    },
    'node_nic_not_found': {
        'severity': 'error',
        'title': 'No interface with the NIC\'s MAC address is visible on the node',
        'remedy': 'Check that the vNIC was added to the node VM with this MAC and is connected; NodeNetworkState refreshes within a minute.',
    },
    'node_ip_forwarding_global': {
        'severity': 'warning',
        'title': 'IP forwarding is enabled cluster wide (gatewayConfig.ipForwarding: Global)',
        'remedy': 'Intended when chosen: every interface of every node forwards. Use per_interface to limit it to the secondary NIC.',
    },
    'node_ip_forwarding_off': {
        'severity': 'warning',
        'title': 'IP forwarding is not enabled on the secondary NIC of an egress node',
        'remedy': 'Run ip_forwarding (per_interface or global); without forwarding, egress traffic is silently dropped.',
    },
    'node_forwarding_degraded': {
        'severity': 'error',
        'title': 'TuneD reported an error applying the forwarding profile on a node (Profile Degraded)',
        'remedy': 'Read the TuneD message in the finding (oc -n openshift-cluster-node-tuning-operator get profile <node> -o yaml and the '
                  'tuned pod log of that node), fix its cause, and run again; forwarding stays off on that node until then.',
    },
    'node_forwarding_timeout': {
        'severity': 'error',
        'title': 'The forwarding profile was not reported applied on a node in time',
        'remedy': 'Check the Profile of the node (which profile the operator recommends, the Applied message) and the tuned pod of '
                  'that node, or raise wait_timeout; a Tuned with a lower priority number for the node wins over this one.',
    },
    'node_forwarding_hosts_egress_ips': {
        'severity': 'error',
        'title': 'IP forwarding is not removed from a NIC whose node hosts egress IPs of the secondary network',
        'remedy': 'Delete the EgressIP objects or move their IPs off those nodes first (the disable role deletes them before this '
                  'step), or set force: true to accept that their traffic is dropped once forwarding is off.',
    },
    'node_not_capable': {
        'severity': 'warning',
        'title': 'A node matches the egress node selector but cannot host secondary-network egress IPs',
        'remedy': 'Give the node its secondary NIC and address (vSphere NIC, node_nic_address) and wait for host-cidrs to show the subnet.',
    },
}

# --- egress IPs: plan, placement, verification ------------------------------------------------
EGRESSIP_CHECKS = {
    # Also used here, defined with preflight in PLATFORM_CHECKS: egress_nodes_capacity_insufficient.
    'egressip_input_invalid': {
        'severity': 'error',
        'title': 'An EgressIP entry of the variables file is malformed (name, IP list, selector)',
        'remedy': 'Correct the named field as the message says and run again.',
    },
    'egressip_selector_missing': {
        'severity': 'error',
        'title': 'An EgressIP has no namespace_selector, or an empty one that selects every namespace',
        'remedy': 'Give namespace_selector the labels of the namespaces that should use the egress IPs, e.g. {matchLabels: {team: payments}}.',
    },
    'egressip_outside_network': {
        'severity': 'error',
        'title': 'An egress IP is outside the secondary network (egressip_network.cidr)',
        'remedy': 'Use an address inside egressip_network.cidr; an IP no node network holds is never assigned (NoMatchingNodeFound).',
    },
    'egressip_reserved_address': {
        'severity': 'error',
        'title': 'An egress IP is the network, broadcast or gateway address of the secondary network',
        'remedy': 'Use a host address of the secondary network other than the gateway.',
    },
    'egressip_in_node_address_range': {
        'severity': 'error',
        'title': 'An egress IP is inside node_address_range, which the address plan keeps for the node NIC base addresses',
        'remedy': 'Choose egress IPs outside egressip_network.node_address_range (e.g. above it), or shrink the range.',
    },
    'egressip_node_address': {
        'severity': 'error',
        'title': 'An egress IP is the address of a node (OVN-Kubernetes refuses it: EgressIPConflict)',
        'remedy': 'Choose an address no node holds; oc get nodes -o yaml shows k8s.ovn.org/host-cidrs of each node.',
    },
    'egressip_claimed': {
        'severity': 'error',
        'title': 'An egress IP is already requested by another EgressIP object (OVN-Kubernetes refuses it: UnsupportedRequest)',
        'remedy': 'Choose another address, or remove it from the other object first (or manage that object here and set exclusive).',
    },
    'egressip_duplicate': {
        'severity': 'error',
        'title': 'An egress IP is listed twice in the EgressIP objects of the variables file',
        'remedy': 'List each egress IP once, in one object.',
    },
    'egressip_not_owned': {
        'severity': 'error',
        'title': 'An EgressIP object of that name exists and was not created by this collection',
        'remedy': 'Rename the entry, or set adopt: true to take the object over (its spec is then replaced by the variables file).',
    },
    'egressip_delete_assigned': {
        'severity': 'error',
        'title': 'Deleting an EgressIP object whose egress IPs are assigned would stop the traffic they carry',
        'remedy': 'Move the workloads off those egress IPs first, or set force: true (disable_force: true, egressips_force: true) '
                  'to delete the object and accept that its egress IPs stop carrying traffic.',
    },
    'egressip_unassigned': {
        'severity': 'error',
        'title': 'An egress IP is not assigned, or not to a node whose host-cidrs hold its network',
        'remedy': 'Read the Warning events quoted in the message (NoMatchingNodeFound: no labelled node holds the subnet; '
                  'EgressIPConflict: a node has the address; UnsupportedRequest: another object claims it), fix the cause, run again.',
    },
    'egressip_single_point_of_failure': {
        'severity': 'warning',
        'title': 'The failure of one node would leave an egress IP unassigned',
        'remedy': 'Label one more capable node (NIC, address, k8s.ovn.org/egress-assignable) than the largest EgressIP object has IPs.',
    },
    # verify: the secondary path of each assigned egress IP, the wire check, blackhole remediation
    'egressip_object_missing': {
        'severity': 'error',
        'title': 'An EgressIP object of the variables file is missing from the cluster, or lacks some of its IPs',
        'remedy': 'Run the enable playbook (or the egressips role) so the cluster holds the objects of the variables file.',
    },
    'egressip_on_unhealthy_node': {
        'severity': 'warning',
        'title': 'An egress IP is still listed on a node that is not Ready or no longer egress-assignable',
        'remedy': 'OVN-Kubernetes moves it within seconds: run verify again. If it stays, read the ovnkube-cluster-manager logs '
                  'in openshift-ovn-kubernetes.',
    },
    'blackhole_forwarding_off': {
        'severity': 'error',
        'title': 'IP forwarding is off on the secondary NIC of a node hosting an egress IP, so its traffic is dropped (blackhole)',
        'remedy': 'Run ip_forwarding (node_network role) and wait until the node\'s Profile reports the profile applied; if its '
                  'Profile is Degraded, fix what TuneD reports. OVN-Kubernetes does not check forwarding and never moves the IP.',
    },
    'egressip_blackhole': {
        'severity': 'error',
        'title': 'An egress IP is assigned to a node whose secondary path is broken, so its traffic is dropped (blackhole)',
        'remedy': 'Fix the path named in the message (reconnect the vNIC, create the port group on every host, restore the base '
                  'address, power the VM on), or run verify with remediate: true to remove the node\'s egress-assignable label so '
                  'OVN-Kubernetes moves the IP to a capable node (OVN-Kubernetes does not notice this failure by itself).',
    },
    'egressip_node_path_broken': {
        'severity': 'warning',
        'title': 'An egress-assignable node hosts no egress IP, but its secondary path is broken: an IP placed there would be dropped',
        'remedy': 'Fix the path named in the message, or remove the node\'s k8s.ovn.org/egress-assignable label until it is fixed '
                  '(verify with remediate: true does).',
    },
    'egressip_node_capacity_lost': {
        'severity': 'warning',
        'title': 'An egress node lost its secondary address when its vNIC was disconnected: a failover and less capacity, not a blackhole',
        'remedy': 'Connect the vNIC again (NetworkManager autoconnect restores the address; the moved IPs do not move back); check '
                  'that the capable nodes left are at least the IPs per EgressIP object + 1.',
    },
    'blackhole_nic_disconnected': {
        'severity': 'error',
        'title': 'The secondary vNIC of an egress node is disconnected but the node keeps its address (ignore-carrier): its IPs stay and are dropped',
        'remedy': 'Connect the vNIC again in vCenter, or run verify with remediate: true so OVN-Kubernetes moves the IPs.',
    },
    'blackhole_portgroup_missing_on_host': {
        'severity': 'error',
        'title': 'The standard port group of an egress node\'s vNIC is missing (removed or renamed) on the ESXi host its VM runs on now',
        'remedy': 'Create the port group with the same name and VLAN on that host (vsphere_portgroup), or move the VM back; '
                  'remediate: true moves the IPs meanwhile.',
    },
    'blackhole_portgroup_vlan_mismatch': {
        'severity': 'error',
        'title': 'The port group has another VLAN on the ESXi host an egress node\'s VM runs on than the network\'s VLAN',
        'remedy': 'Set the port group\'s VLAN on that host back to the network\'s VLAN (vsphere_portgroup), or move the VM; '
                  'remediate: true moves the IPs meanwhile.',
    },
    'blackhole_vswitch_no_uplink': {
        'severity': 'error',
        'title': 'The standard vSwitch of the port group on the ESXi host an egress node\'s VM runs on has no working physical uplink',
        'remedy': 'Bridge a connected physical NIC to that vSwitch on that host (or fix its cable or switch port), or move the VM; '
                  'remediate: true moves the IPs meanwhile.',
    },
    'blackhole_gateway_route_missing': {
        'severity': 'error',
        'title': 'The secondary NIC of an egress node has no route via the network\'s gateway in NodeNetworkState',
        'remedy': 'Run the node step (node_nic_address) so the NIC gets its gateway route back; remediate: true moves the IPs meanwhile.',
    },
    'egressip_remediation_skipped': {
        'severity': 'warning',
        'title': 'Remediation left a broken node labelled: the collection did not set its label, or it hosts egress IPs the collection does not own',
        'remedy': 'Fix the node\'s secondary path, or remove the label yourself once the egress IPs it hosts (for example primary-network '
                  'ones) may move: oc label node <node> k8s.ovn.org/egress-assignable-.',
    },
    'egressip_remediation_refused': {
        'severity': 'error',
        'title': 'A node with a broken secondary path was not unlabelled: no capable replacement could take its egress IPs',
        'remedy': 'Fix the node\'s secondary path, or make another node capable first (NIC, address, label); removing the label '
                  'now would leave the IPs unassigned.',
    },
    'egressip_blackhole_remediated': {
        'severity': 'info',
        'title': 'A node with a broken secondary path was unlabelled and OVN-Kubernetes moved its egress IPs',
        'remedy': 'Fix the node\'s secondary path, then label it again (egress_nodes or the enable playbook); the IPs do not move '
                  'back (no failback).',
    },
    'egressip_wire_failed': {
        'severity': 'error',
        'title': 'The echo target off the cluster did not see an egress IP of the object as the source of a probe pod',
        'remedy': 'No answer: check the path of the node hosting the IP (vNIC, port group and VLAN, gateway route, IP forwarding, '
                  'firewall). Another source address: the EgressIP does not select the probe pod, or SNAT happens elsewhere.',
    },
    'egressip_wire_not_checked': {
        'severity': 'warning',
        'title': 'The wire check could not run for an EgressIP object (no namespace it selects, probe pod not run, check mode)',
        'remedy': 'Name a namespace the object selects in wire.namespaces, or set wire.create_namespace: true; check that the '
                  'probe image can be pulled and that the echo target answers.',
    },
    # failover drill: measured moves against the prediction, cordon and failback
    'egressip_drill_not_reassigned': {
        'severity': 'error',
        'title': 'An egress IP that left its node (failover drill, blackhole remediation) was not assigned to another node in time',
        'remedy': 'Check capacity (capable nodes >= IPs per object + 1), the Warning events of the EgressIP and the reachability '
                  'settings; raise the drill timeout on a slow cluster.',
    },
    'egressip_drill_prediction_mismatch': {
        'severity': 'error',
        'title': 'During the failover drill an egress IP landed outside the nodes the prediction allowed',
        'remedy': 'Keep the JSON report and compare its prediction with the cluster state: the placement model and the cluster '
                  'disagree (report it to the collection maintainers).',
    },
    'egressip_drill_wire_not_restored': {
        'severity': 'error',
        'title': 'After a failover the echo target did not see the egress IP again within the timeout',
        'remedy': 'Check the secondary path of the node that took the IP (vNIC, port group, address, forwarding) and stale ARP '
                  'entries for the IP on the gateway (ovn-kubernetes#6553).',
    },
    'egressip_drill_unexpected_move': {
        'severity': 'warning',
        'title': 'An egress IP moved when nothing should (cordon, or failback after the node was restored)',
        'remedy': 'The cluster does not behave as documented (cordon is ignored, no failback): keep the JSON report and check '
                  'the OpenShift version and the ovnkube-cluster-manager logs.',
    },
    'egressip_drill_nothing_to_move': {
        'severity': 'info',
        'title': 'A drilled node hosted no egress IP, so its failure moved nothing',
        'remedy': 'Nothing to do; choose nodes that host egress IPs (the default) to measure reassignment.',
    },
}


# --- lifecycle: migrate (adopting a hand-made setup), upgrade, before/after comparisons ---------
LIFECYCLE_CHECKS = {
    'migrate_vsphere_target_unknown': {
        'severity': 'error',
        'title': 'Migrate cannot tell which vCenter datacenter and vSphere cluster run the nodes',
        'remedy': 'Give migrate_hints.datacenter and migrate_hints.cluster (the Infrastructure object names none, or several).',
    },
    'migrate_no_secondary_network': {
        'severity': 'error',
        'title': 'Migrate found no secondary network on any node',
        'remedy': 'Nothing to adopt: no node has an address outside the primary network in k8s.ovn.org/host-cidrs. Use the enable playbook instead.',
    },
    'migrate_network_ambiguous': {
        'severity': 'error',
        'title': 'The nodes hold addresses in several secondary subnets and no egress IP tells which one is the egress network',
        'remedy': 'Give migrate_hints.cidr (the secondary egress subnet, for example 10.20.0.0/24).',
    },
    'migrate_portgroup_undetermined': {
        'severity': 'error',
        'title': 'Migrate cannot tell which port group carries the secondary NICs',
        'remedy': 'Give migrate_hints.portgroup (the port group name), or check that the node VMs and their NICs are in the vSphere cluster read.',
    },
    'migrate_gateway_unknown': {
        'severity': 'error',
        'title': 'No default route through the secondary NIC names the gateway of the secondary network',
        'remedy': 'Give migrate_hints.gateway; enable then adds the gateway route (metric above br-ex) that DOMAIN prerequisite 5 requires.',
    },
    'migrate_address_range_conflict': {
        'severity': 'error',
        'title': 'No single address range covers the node base addresses without also covering an egress IP or the gateway',
        'remedy': 'Give migrate_hints.node_address_range (first-last or a CIDR block holding every base address and no egress IP).',
    },
    'migrate_address_range_extended': {
        'severity': 'warning',
        'title': 'The node address range was extended beyond the addresses in use, for nodes that have no base address yet',
        'remedy': 'Check that the added addresses are free on the secondary network (migrate sees only node and EgressIP addresses).',
    },
    'migrate_node_incomplete': {
        'severity': 'warning',
        'title': 'A node has a secondary NIC without an address, or an address without a NIC on the port group',
        'remedy': 'Nothing to do if the node should be an egress node: enable adds what is missing. Otherwise take the NIC off first.',
    },
    'migrate_nic_disconnected': {
        'severity': 'warning',
        'title': 'A secondary NIC is not connected (now or at power-on); enable will connect it',
        'remedy': 'Find out why it was disconnected; while it is, egress IPs on that node are blackholed (DOMAIN section 6).',
    },
    'migrate_nic_not_adoptable': {
        'severity': 'error',
        'title': 'A secondary NIC is not what the vSphere step accepts (not vmxnet3, or two NICs on the port group)',
        'remedy': 'Replace the NIC by one vmxnet3 NIC on the port group in a maintenance window; migrate never changes NICs itself.',
    },
    'migrate_policy_duplicate': {
        'severity': 'warning',
        'title': 'A hand-made NMState policy configures the secondary NIC; after adoption two policies describe it',
        'remedy': 'After the adoption has been verified, set node_network_replace_hand_made: true in the variables file and run enable: '
                  'it deletes the hand-made policies that configure only that NIC once the collection\'s policy is Available there and '
                  'reports the others, which you delete or trim yourself (deleting a policy never changes the node).',
    },
    'migrate_object_name_taken': {
        'severity': 'error',
        'title': 'An object made by hand has the name the collection uses, without its ownership label',
        'remedy': 'Delete or rename that object (deleting an NMState policy never changes the node), then run migrate again.',
    },
    'migrate_address_not_from_nmstate': {
        'severity': 'warning',
        'title': 'A node base address does not come from any NMState policy',
        'remedy': 'The collection takes the NIC over with an NMState policy; NetworkManager may reactivate the NIC. Adopt in a maintenance window.',
    },
    'migrate_interface_names_differ': {
        'severity': 'warning',
        'title': 'The hand-made NMState policies give the secondary NIC different profile names',
        'remedy': 'The collection uses one name (node_network_interface_name); nodes with another name get a new NetworkManager profile.',
    },
    'migrate_forwarding_by_hand': {
        'severity': 'warning',
        'title': 'IP forwarding on the secondary NIC comes from a Tuned profile made by hand',
        'remedy': 'Read the message: either the collection takes over (then remove forwarding from your profile) or it stays yours (external).',
    },
    'migrate_labelled_outside_selection': {
        'severity': 'warning',
        'title': 'Nodes outside the discovered egress nodes carry the egress-assignable label',
        'remedy': 'Nothing to do: the variables file sets egress_nodes_exclusive: false so enable leaves their label alone.',
    },
    'migrate_label_would_be_removed': {
        'severity': 'error',
        'title': 'Enable would remove the egress-assignable label from a node that hosts egress IPs, moving them',
        'remedy': 'Make the node capable again (NIC connected and up, address in host-cidrs) before adopting; migrate never moves an egress IP.',
    },
    'migrate_selector_by_hostname': {
        'severity': 'info',
        'title': 'No node label selects exactly the egress nodes; the selector lists their hostnames',
        'remedy': 'Optionally label the egress nodes (for example node-role.kubernetes.io/egress) and use that label as egressip_nodes.selector.',
    },
    'migrate_egressip_not_adoptable': {
        'severity': 'warning',
        'title': 'An EgressIP object cannot be described by the variables file and is left as it is',
        'remedy': 'Read the reason; the object keeps working, but the collection neither checks nor changes it.',
    },
    'migrate_egressip_sdn_converted': {
        'severity': 'info',
        'title': 'An EgressIP object was created by the OpenShift SDN to OVN-Kubernetes migration',
        'remedy': 'Nothing to do; it keeps its name (renaming would move its IPs). On the primary network it stays outside the variables file.',
    },
    'migrate_adoption_plan': {
        'severity': 'info',
        'title': 'What running enable with the discovered variables changes (gaps it closes)',
        'remedy': 'Review, then run migrate with migrate_adopt: true (or enable with the variables file).',
    },
    'lifecycle_egress_ip_moved': {
        'severity': 'error',
        'title': 'An egress IP is on another node than before',
        'remedy': 'Read the message for the nodes; no failback exists, so the IP stays where it is until its node fails or loses its label.',
    },
    'lifecycle_egress_ip_unassigned': {
        'severity': 'error',
        'title': 'An egress IP that was assigned before is unassigned now',
        'remedy': 'Run the verify playbook; check the EgressIP events and that enough labelled, capable nodes are Ready.',
    },
    'lifecycle_egress_ip_removed': {
        'severity': 'error',
        'title': 'An egress IP or EgressIP object that existed before is gone',
        'remedy': 'Find who changed the EgressIP object (the variables file, GitOps, by hand) and restore it if that was not intended.',
    },
    'lifecycle_address_dropped': {
        'severity': 'error',
        'title': 'A node lost an address from k8s.ovn.org/host-cidrs',
        'remedy': 'Check the NMState policies and enactments of that node and its VM NIC; egress IPs of that subnet cannot stay on it.',
    },
    'lifecycle_label_removed': {
        'severity': 'warning',
        'title': 'A node lost the egress-assignable label',
        'remedy': 'Intended if the node left the egress nodes; otherwise run enable to label the capable nodes again.',
    },
    'lifecycle_baseline_invalid': {
        'severity': 'error',
        'title': 'The snapshot to compare with is missing, unreadable or from another cluster',
        'remedy': 'Run the upgrade playbook with upgrade_phase=pre first and keep its snapshot file; give its path as upgrade_snapshot_file.',
    },
    'upgrade_target_version_unsupported': {
        'severity': 'error',
        'title': 'The target OpenShift version is older than 4.14, older than the current one, or unreadable',
        'remedy': 'Upgrade to 4.14 or newer (secondary-interface EgressIP needs it); OpenShift does not support downgrades.',
    },
    'upgrade_target_version_unknown': {
        'severity': 'info',
        'title': 'No target version was given or requested in ClusterVersion; only the current version was checked',
        'remedy': 'Give upgrade_target_version to check it too.',
    },
    'upgrade_capacity_insufficient': {
        'severity': 'error',
        'title': 'During the rolling reboots too few capable egress nodes stay up for an EgressIP object',
        'remedy': 'Label more capable egress nodes, lower maxUnavailable of the MachineConfigPool, or give the object fewer IPs before upgrading.',
    },
    'upgrade_pools_not_read': {
        'severity': 'info',
        'title': 'MachineConfigPools could not be read; maxUnavailable was taken from upgrade_default_max_unavailable',
        'remedy': 'Give upgrade_max_unavailable if your pools roll more than one node at a time, or grant list on machineconfigpools.',
    },
    'upgrade_nmstate_not_ready': {
        'severity': 'error',
        'title': 'NMState is missing, or an egress node address policy is not Available',
        'remedy': 'Fix NMState first: after each reboot the node base address comes back only through its policy.',
    },
    'upgrade_address_not_persistent': {
        'severity': 'warning',
        'title': 'An egress node base address does not come from an NMState policy of the collection',
        'remedy': 'Confirm it survives a reboot (NetworkManager keyfile, MachineConfig), or adopt it with the migrate playbook.',
    },
    'upgrade_version_changed': {
        'severity': 'info',
        'title': 'The OpenShift version changed since the snapshot',
        'remedy': 'Nothing to do; recorded for the report.',
    },
    'upgrade_placement_skewed': {
        'severity': 'info',
        'title': 'After the rolling reboots the egress IPs are spread unevenly (OVN-Kubernetes has no failback)',
        'remedy': 'Nothing is broken; to spread them again, remove and re-add the label of a loaded node in a quiet period (this moves its IPs).',
    },
    'upgrade_marked_object_incomplete': {
        'severity': 'warning',
        'title': 'An object carries the collection label but lacks marks this version relies on',
        'remedy': 'Run the upgrade playbook with upgrade_phase=collection (enable converges it; addresses held are kept).',
    },
    'upgrade_managed_objects': {
        'severity': 'info',
        'title': 'The objects this collection manages, recognised by their ownership label',
        'remedy': 'Nothing to do; enable converges them to what this version of the collection writes.',
    },
}


# --- one writer per cluster: the lock Lease (cluster_lock module, every writing playbook) ---------
LOCK_CHECKS = {
    'cluster_lock_held': {
        'severity': 'error',
        'title': 'Another run holds the cluster lock (the Lease egressip-lock): one writer per cluster',
        'remedy': 'Wait until the run named ends (its Lease is released), or raise egressip_lock.wait_timeout; '
                  'a killed run\'s Lease expires by itself after leaseDurationSeconds once nothing of that run is left.',
    },
    'cluster_lock_lost': {
        'severity': 'warning',
        'title': 'The cluster lock of this run was taken by another holder before the run released it',
        'remedy': 'The renewal stopped (API unreachable longer than the lease duration, or the run was stopped): '
                  'run verify, then rerun the writing playbook once the other run has ended.',
    },
    'cluster_lock_owner_unknown': {
        'severity': 'error',
        'title': 'The cluster lock cannot tell which run it belongs to (no ansible-playbook process above the module)',
        'remedy': 'Run the playbooks with ansible-playbook on a Linux controller, or give the module a holder identity of your own.',
    },
}


def _merge(*areas):
    merged = {}
    for area in areas:
        for finding_id, entry in area.items():
            if finding_id in merged:
                raise ValueError('finding id %s is defined twice in the catalogue' % finding_id)
            merged[finding_id] = entry
    return merged


# --- permissions of the credentials (preflight, _permissions.py, docs/rbac.md) ---------------
PERMISSION_CHECKS = {
    'kube_permission_missing': {
        'severity': 'error',
        'title': 'The Kubernetes credentials lack a permission (verb and resource) the playbook uses',
        'remedy': 'Bind the ClusterRole of the playbook (rbac/<playbook>.yml, docs/rbac.md) to the user or service account that runs it.',
    },
    'kube_permission_unchecked': {
        'severity': 'warning',
        'title': 'The API refused the SelfSubjectAccessReviews, so the permissions of the credentials were not checked',
        'remedy': 'Allow create on selfsubjectaccessreviews.authorization.k8s.io (the system:basic-user ClusterRole does), or accept the gap.',
    },
    'vcenter_privilege_missing': {
        'severity': 'error',
        'title': 'The vCenter account lacks a privilege the playbook uses on the vSphere cluster, its hosts or VMs',
        'remedy': 'Give the account the vCenter role of the playbook (docs/rbac.md) on the datacenter, propagating to its children.',
    },
}

CATALOGUE = _merge(PLATFORM_CHECKS, VSPHERE_CHECKS, NODE_CHECKS, EGRESSIP_CHECKS, LIFECYCLE_CHECKS, LOCK_CHECKS, PERMISSION_CHECKS)


def catalogue_finding(finding_id, message, objects=None, severity=None, remedy=None):
    """A finding for a catalogued id; severity and remedy default to the catalogue's."""
    entry = CATALOGUE[finding_id]
    return finding(finding_id, severity or entry['severity'], message, remedy or entry['remedy'], objects)
