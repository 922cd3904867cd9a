package main

// Standard port groups: the twin's HostNetworkSystem.
//
// vcsim 0.24 treats a standard port group as a datacenter-wide object: AddPortGroup
// answers DuplicateName as soon as a Network of that name exists in the datacenter (so
// the same port group cannot be added to a second host), UpdatePortGroup is not
// implemented (MethodNotFound), and RemovePortGroup removes the datacenter's Network even
// while other hosts still have the port group. On a real vCenter a standard port group is
// per host: every host of a cluster carries its own port group of the same name, and the
// datacenter's Network object of that name lists the hosts that have it (Network.host).
//
// twinNetworkSystem embeds vcsim's HostNetworkSystem by value and replaces it in
// simulator.Map under the same reference, so vcsim still decodes, authenticates, locks
// (the call holds this object's lock) and encodes every call, and every method not
// overridden here is vcsim's own. Nothing in vcsim 0.24 type-asserts *HostNetworkSystem,
// and the property collector finds the embedded mo.HostNetworkSystem through the first
// field (simulator.getManagedObject), as it does for vcsim's own wrapper types.
//
// Faults follow the vSphere Web Services API reference for HostNetworkSystem (pyVmomi's
// docs/vim/host/NetworkSystem.rst and _typeinfo_vim.py fault lists):
//   - AddPortGroup: AlreadyExists "if the port group already exists" (on this host),
//     NotFound "if the virtual switch does not exist", InvalidArgument "if the PortGroup
//     vlanId is invalid. Valid vlanIds range from [0,4095]".
//   - UpdatePortGroup: AlreadyExists "if the update causes the port group to conflict with
//     an existing port group", NotFound "if the port group or virtual switch does not
//     exist", InvalidArgument for an invalid vlanId.
//   - RemovePortGroup: NotFound "if the port group or virtual switch does not exist",
//     ResourceInUse "if the port group can not be removed because there are virtual
//     network adapters associated with it".

import (
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// netMu serialises the bookkeeping of the datacenter Network objects that stand for
// standard port groups (find-or-create on add, leave-and-maybe-destroy on remove), so
// two hosts adding and removing the same port group at once cannot race. It is only
// taken by the methods below, while they hold their own HostNetworkSystem lock; the
// object locks taken under it (folder, datacenter, network, host, cluster, VM) are each
// held briefly and never wait for a HostNetworkSystem or for netMu.
var netMu sync.Mutex

type twinNetworkSystem struct {
	simulator.HostNetworkSystem
}

// networkSystemOf returns the vcsim HostNetworkSystem inside a registry object.
func networkSystemOf(obj mo.Reference) *simulator.HostNetworkSystem {
	switch ns := obj.(type) {
	case *twinNetworkSystem:
		return &ns.HostNetworkSystem
	case *simulator.HostNetworkSystem:
		return ns
	}
	return nil
}

// networkHosts lists the hosts that have a HostNetworkSystem, in no particular order.
func networkHosts() []*simulator.HostSystem {
	var hosts []*simulator.HostSystem
	for _, h := range allOf[*simulator.HostSystem]("HostSystem") {
		if h.ConfigManager.NetworkSystem != nil {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// twinNetworkSystemOf returns the twin's HostNetworkSystem of a host from networkHosts, or
// nil before installNetworkSystems has replaced vcsim's.
func twinNetworkSystemOf(h *simulator.HostSystem) *twinNetworkSystem {
	s, _ := simulator.Map.Get(*h.ConfigManager.NetworkSystem).(*twinNetworkSystem)
	return s
}

// installNetworkSystems replaces every host's HostNetworkSystem with the twin's. It runs
// once at start-up, before the inventory is built and before the server listens.
func installNetworkSystems() {
	for _, h := range networkHosts() {
		ns, ok := simulator.Map.Get(*h.ConfigManager.NetworkSystem).(*simulator.HostNetworkSystem)
		if !ok {
			continue
		}
		// Same Self, so Put replaces the object under the same key (and the same lock).
		simulator.Map.Put(&twinNetworkSystem{HostNetworkSystem: *ns})
	}
}

// syncStandardNetworks fills Network.host for the standard networks that exist at
// start-up ("VM Network"): vcsim 0.24 leaves it empty, a real vCenter lists the hosts
// that have a port group of that name. It runs once, before the server listens.
func syncStandardNetworks() {
	hosts := networkHosts()
	sort.Slice(hosts, func(i, j int) bool { return naturalLess(hosts[i].Name, hosts[j].Name) })
	for _, h := range hosts {
		ns := networkSystemOf(simulator.Map.Get(*h.ConfigManager.NetworkSystem))
		if ns == nil || ns.NetworkInfo == nil {
			continue
		}
		dc := datacenterOf(h)
		if dc == nil {
			continue
		}
		for _, pg := range ns.NetworkInfo.Portgroup {
			if n := findStandardNetwork(dc, pg.Spec.Name); n != nil {
				addHostToNetwork(n, h.Self)
			}
		}
	}
}

// --- AddPortGroup / UpdatePortGroup / RemovePortGroup ------------------------------------

func (s *twinNetworkSystem) AddPortGroup(ctx *simulator.Context, req *types.AddPortGroup) soap.HasFault {
	body := &methods.AddPortGroupBody{}
	spec := req.Portgrp

	vs, f := s.checkPortGroupSpec(spec, true)
	if f != nil {
		body.Fault_ = f
		return body
	}

	info := s.NetworkInfo
	portgroups := append(append([]types.HostPortGroup(nil), info.Portgroup...), s.hostPortGroup(spec))
	vswitches := append([]types.HostVirtualSwitch(nil), info.Vswitch...)
	vswitches[vs].Portgroup = append(append([]string(nil), vswitches[vs].Portgroup...), spec.Name)
	s.setNetworkInfo(vswitches, portgroups)

	if h := s.hostSystem(); h != nil {
		joinStandardNetwork(h, spec.Name)
	}

	body.Res = &types.AddPortGroupResponse{}
	return body
}

func (s *twinNetworkSystem) UpdatePortGroup(ctx *simulator.Context, req *types.UpdatePortGroup) soap.HasFault {
	body := &methods.UpdatePortGroupBody{}
	spec := req.Portgrp

	i := s.portgroupIndex(req.PgName)
	if i < 0 {
		body.Fault_ = notFound("port group", req.PgName)
		return body
	}
	renamed := spec.Name != req.PgName
	vs, f := s.checkPortGroupSpec(spec, renamed)
	if f != nil {
		body.Fault_ = f
		return body
	}

	// The spec replaces the port group's spec (HostPortGroupSpec has no optional
	// top-level fields; unset sub-policies in spec.policy mean "inherit from the vSwitch").
	info := s.NetworkInfo
	portgroups := append([]types.HostPortGroup(nil), info.Portgroup...)
	old := portgroups[i].Spec
	portgroups[i] = s.hostPortGroup(spec)
	vswitches := append([]types.HostVirtualSwitch(nil), info.Vswitch...)
	for j := range vswitches {
		vswitches[j].Portgroup = removeString(vswitches[j].Portgroup, old.Name)
	}
	vswitches[vs].Portgroup = append(vswitches[vs].Portgroup, spec.Name)
	s.setNetworkInfo(vswitches, portgroups)

	if h := s.hostSystem(); h != nil && renamed {
		leaveStandardNetwork(h, old.Name)
		joinStandardNetwork(h, spec.Name)
	}

	body.Res = &types.UpdatePortGroupResponse{}
	return body
}

func (s *twinNetworkSystem) RemovePortGroup(ctx *simulator.Context, req *types.RemovePortGroup) soap.HasFault {
	body := &methods.RemovePortGroupBody{}

	i := s.portgroupIndex(req.PgName)
	if i < 0 {
		body.Fault_ = notFound("port group", req.PgName)
		return body
	}
	h := s.hostSystem()
	if h != nil {
		if user := portgroupUser(h, req.PgName); user != "" {
			body.Fault_ = simulator.Fault(fmt.Sprintf("The resource '%s' is in use (%s).", req.PgName, user),
				&types.ResourceInUse{Type: "Network", Name: req.PgName})
			return body
		}
	}

	info := s.NetworkInfo
	portgroups := append([]types.HostPortGroup(nil), info.Portgroup[:i]...)
	portgroups = append(portgroups, info.Portgroup[i+1:]...)
	vswitches := append([]types.HostVirtualSwitch(nil), info.Vswitch...)
	for j := range vswitches {
		vswitches[j].Portgroup = removeString(vswitches[j].Portgroup, req.PgName)
	}
	s.setNetworkInfo(vswitches, portgroups)

	if h != nil {
		leaveStandardNetwork(h, req.PgName)
	}

	body.Res = &types.RemovePortGroupResponse{}
	return body
}

// --- helpers on the network system (called with its lock held) -------------------------

// checkPortGroupSpec makes the checks AddPortGroup and UpdatePortGroup share, in this order: a
// name (InvalidArgument, as vcsim), a VLAN ID in 0-4095 (InvalidArgument), a name no port group of
// this host has yet (AlreadyExists; only when isNew: adding, or renaming), and an existing vSwitch
// (NotFound). It returns the vSwitch's index in networkInfo.vswitch.
func (s *twinNetworkSystem) checkPortGroupSpec(spec types.HostPortGroupSpec, isNew bool) (int, *soap.Fault) {
	if spec.Name == "" {
		return -1, simulator.Fault("", &types.InvalidArgument{InvalidProperty: "name"}) // as vcsim
	}
	if f := checkVlanID(spec.VlanId); f != nil {
		return -1, f
	}
	if isNew && s.portgroupIndex(spec.Name) >= 0 {
		return -1, simulator.Fault(fmt.Sprintf("The specified key, name, or identifier '%s' already exists.", spec.Name),
			&types.AlreadyExists{Name: spec.Name})
	}
	vs := s.vswitchIndex(spec.VswitchName)
	if vs < 0 {
		return -1, notFound("virtual switch", spec.VswitchName)
	}
	return vs, nil
}

// notFound is the host's NotFound fault for a missing item: kind is "port group", "virtual switch"
// or "physical NIC".
func notFound(kind, name string) *soap.Fault {
	return simulator.Fault(fmt.Sprintf("The object or item referred to could not be found: %s '%s'.", kind, name), &types.NotFound{})
}

func checkVlanID(id int32) *soap.Fault {
	if id < 0 || id > 4095 {
		return simulator.Fault(fmt.Sprintf("A specified parameter was not correct: vlanId %d (valid: 0 to 4095)", id),
			&types.InvalidArgument{InvalidProperty: "portgrp.vlanId"})
	}
	return nil
}

func (s *twinNetworkSystem) portgroupIndex(name string) int {
	for i, pg := range s.NetworkInfo.Portgroup {
		if pg.Spec.Name == name {
			return i
		}
	}
	return -1
}

func (s *twinNetworkSystem) vswitchIndex(name string) int {
	for i, vs := range s.NetworkInfo.Vswitch {
		if vs.Name == name {
			return i
		}
	}
	return -1
}

func (s *twinNetworkSystem) hostSystem() *simulator.HostSystem {
	if s.Host == nil {
		return nil
	}
	h, _ := simulator.Map.Get(s.Host.Self).(*simulator.HostSystem)
	return h
}

// hostPortGroup builds the HostPortGroup the way ESXi reports it: key, the key of its
// vSwitch, the spec as given, and computedPolicy (the spec's policy over the vSwitch's:
// "Computed network policies that are applicable for a port group", HostPortGroup).
func (s *twinNetworkSystem) hostPortGroup(spec types.HostPortGroupSpec) types.HostPortGroup {
	computed := types.HostNetworkPolicy{}
	if p := s.vswitchPolicy(spec.VswitchName); p != nil {
		computed = *p
	}
	overlay(reflect.ValueOf(&computed).Elem(), reflect.ValueOf(spec.Policy))
	return types.HostPortGroup{
		Key:            "key-vim.host.PortGroup-" + spec.Name,
		Vswitch:        "key-vim.host.VirtualSwitch-" + spec.VswitchName,
		ComputedPolicy: computed,
		Spec:           spec,
	}
}

// vswitchPolicy is the vSwitch's own policy where vcsim knows it: vcsim 0.24 keeps no
// spec for switches added by AddVirtualSwitch (nothing is inherited then), and the
// host's config template has the spec of vSwitch0.
func (s *twinNetworkSystem) vswitchPolicy(name string) *types.HostNetworkPolicy {
	for _, vs := range s.NetworkInfo.Vswitch {
		if vs.Name == name && vs.Spec.Policy != nil {
			return vs.Spec.Policy
		}
	}
	h := s.hostSystem()
	if h == nil {
		return nil
	}
	var policy *types.HostNetworkPolicy
	withHostNetwork(h, func(network *types.HostNetworkInfo) {
		for _, vs := range network.Vswitch {
			if vs.Name == name && vs.Spec.Policy != nil {
				policy = vs.Spec.Policy
			}
		}
	})
	return policy
}

// setNetworkInfo stores the new switch and port group lists (fresh slices: vcsim's
// initial networkInfo.portgroup shares its array with host.config.network.portgroup) and
// mirrors the port groups into the host's config.network (publishNetworkInfo).
func (s *twinNetworkSystem) setNetworkInfo(vswitches []types.HostVirtualSwitch, portgroups []types.HostPortGroup) {
	s.publishNetworkInfo(vswitches, func(network *types.HostNetworkInfo) {
		network.Portgroup = append([]types.HostPortGroup(nil), portgroups...)
	})
}

// publishNetworkInfo stores a copy of networkInfo with vswitches and the lists that mirrored
// sets, tells property collectors, and mirrors the change into the host's config.network, which
// on a real host reports the same switches, port groups and physical NICs: mirrored sets its
// lists on a copy of config.network too (whose vSwitches stay unless mirrored sets them), then
// the port group keys of the vSwitches listed there follow its port groups. Called with the
// network system's lock held.
func (s *twinNetworkSystem) publishNetworkInfo(vswitches []types.HostVirtualSwitch, mirrored func(network *types.HostNetworkInfo)) {
	info := *s.NetworkInfo
	info.Vswitch = vswitches
	mirrored(&info)
	s.NetworkInfo = &info
	simulator.Map.Update(s, []types.PropertyChange{{Name: "networkInfo", Val: s.NetworkInfo}})

	h := s.hostSystem()
	if h == nil {
		return
	}
	withHostNetwork(h, func(current *types.HostNetworkInfo) {
		network := *current
		mirrored(&network)
		network.Vswitch = append([]types.HostVirtualSwitch(nil), network.Vswitch...)
		for i := range network.Vswitch {
			var keys []string
			for _, pg := range network.Portgroup {
				if pg.Spec.VswitchName == network.Vswitch[i].Name {
					keys = append(keys, "key-vim.host.PortGroup-"+pg.Spec.Name)
				}
			}
			network.Vswitch[i].Portgroup = keys
		}
		simulator.Map.Update(h, []types.PropertyChange{{Name: "config.network", Val: &network}})
	})
}

// portgroupUser names what keeps a port group of host h in use, or "": a VMkernel NIC on
// it, or a NIC of a VM registered on h whose backing is that network. Powered-off VMs
// count too (the twin is conservative: their NIC backing still names the port group).
func portgroupUser(h *simulator.HostSystem, name string) string {
	user := ""
	withHostNetwork(h, func(network *types.HostNetworkInfo) {
		for _, vnic := range network.Vnic {
			if vnic.Portgroup == name {
				user = "VMkernel NIC " + vnic.Device
				return
			}
		}
	})
	if user != "" {
		return user
	}
	for _, vm := range allOf[*simulator.VirtualMachine]("VirtualMachine") {
		simulator.Map.WithLock(vm, func() {
			if vm.Runtime.Host == nil || *vm.Runtime.Host != h.Self || vm.Config == nil {
				return
			}
			for _, dev := range vm.Config.Hardware.Device {
				card, ok := dev.(types.BaseVirtualEthernetCard)
				if !ok {
					continue
				}
				if b, ok := card.GetVirtualEthernetCard().Backing.(*types.VirtualEthernetCardNetworkBackingInfo); ok && b.DeviceName == name {
					user = fmt.Sprintf("VM %s", vm.Name)
					return
				}
			}
		})
		if user != "" {
			return user
		}
	}
	return ""
}

// --- datacenter Network objects ----------------------------------------------------------

// joinStandardNetwork adds host h to the datacenter Network named after its new port
// group, creating the Network if no host had that port group yet, and adds the network
// to host.network and to the host's compute resource (cluster) network list.
func joinStandardNetwork(h *simulator.HostSystem, name string) {
	withStandardNetwork(h, name, func(dc *simulator.Datacenter, n *mo.Network) {
		if n == nil {
			if n = createStandardNetwork(dc, name); n == nil {
				return
			}
		}
		addHostToNetwork(n, h.Self)
		simulator.Map.WithLock(h, func() {
			setMembership(h, "network", &h.Network, n.Self, true)
		})
		withComputeResource(h, func(parent mo.Reference, cr *mo.ComputeResource) {
			setMembership(parent, "network", &cr.Network, n.Self, true)
		})
	})
}

// leaveStandardNetwork removes host h from the Network named after the port group it no
// longer has. The compute resource keeps the network while another of its hosts has it;
// the Network itself is destroyed only when no host has the port group and no VM
// references it any more (a real vCenter keeps a network that a VM still uses).
func leaveStandardNetwork(h *simulator.HostSystem, name string) {
	withStandardNetwork(h, name, func(dc *simulator.Datacenter, n *mo.Network) {
		if n == nil {
			return
		}
		var remaining []types.ManagedObjectReference
		simulator.Map.WithLock(n, func() {
			remaining = withoutRef(n.Host, h.Self)
			simulator.Map.Update(n, []types.PropertyChange{{Name: "host", Val: remaining}})
		})
		simulator.Map.WithLock(h, func() {
			setMembership(h, "network", &h.Network, n.Self, false)
		})
		withComputeResource(h, func(parent mo.Reference, cr *mo.ComputeResource) {
			for _, other := range cr.Host {
				if simulator.FindReference(remaining, other) != nil {
					return // another host of this compute resource still has it
				}
			}
			setMembership(parent, "network", &cr.Network, n.Self, false)
		})
		if len(remaining) == 0 && !networkUsedByVM(n.Self) {
			destroyStandardNetwork(dc, n)
		}
	})
}

// withStandardNetwork calls f, holding netMu, with host h's datacenter and the datacenter's
// standard Network named name (nil: none); it does nothing when h has no datacenter.
func withStandardNetwork(h *simulator.HostSystem, name string, f func(dc *simulator.Datacenter, n *mo.Network)) {
	netMu.Lock()
	defer netMu.Unlock()

	dc := datacenterOf(h)
	if dc == nil {
		return
	}
	f(dc, findStandardNetwork(dc, name))
}

// withHostNetwork calls f with host h locked and its config.network, if it has one.
func withHostNetwork(h *simulator.HostSystem, f func(network *types.HostNetworkInfo)) {
	simulator.Map.WithLock(h, func() {
		if h.Config != nil && h.Config.Network != nil {
			f(h.Config.Network)
		}
	})
}

// withComputeResource calls f with host h's compute resource (its cluster) locked, if it has one.
func withComputeResource(h *simulator.HostSystem, f func(parent mo.Reference, cr *mo.ComputeResource)) {
	if h.Parent == nil {
		return
	}
	parent := simulator.Map.Get(*h.Parent)
	if cr := computeResourceOf(parent); cr != nil {
		simulator.Map.WithLock(parent, func() { f(parent, cr) })
	}
}

func addHostToNetwork(n *mo.Network, host types.ManagedObjectReference) {
	simulator.Map.WithLock(n, func() {
		setMembership(n, "host", &n.Host, host, true)
	})
}

func networkUsedByVM(ref types.ManagedObjectReference) bool {
	used := false
	for _, vm := range allOf[*simulator.VirtualMachine]("VirtualMachine") {
		simulator.Map.WithLock(vm, func() {
			used = simulator.FindReference(vm.Network, ref) != nil
		})
		if used {
			return true
		}
	}
	return false
}

// findStandardNetwork returns the datacenter's standard Network (type Network, not a
// distributed or opaque one) of that name.
func findStandardNetwork(dc *simulator.Datacenter, name string) *mo.Network {
	var refs []types.ManagedObjectReference
	simulator.Map.WithLock(dc, func() {
		refs = append(refs, dc.Network...)
	})
	for _, ref := range refs {
		if ref.Type != "Network" {
			continue
		}
		if n, ok := simulator.Map.Get(ref).(*mo.Network); ok && n.Name == name {
			return n
		}
	}
	return nil
}

// createStandardNetwork puts a new Network in the datacenter's network folder the way
// vcsim's folderPutChild does (child list first, then the registry, then datacenter.network).
func createStandardNetwork(dc *simulator.Datacenter, name string) *mo.Network {
	folder, ok := simulator.Map.Get(dc.NetworkFolder).(*simulator.Folder)
	if !ok {
		return nil
	}
	n := &mo.Network{Name: name}
	n.Entity().Name = name
	simulator.Map.NewEntity(n)
	n.Summary = &types.NetworkSummary{Network: &n.Self, Name: name, Accessible: true}
	simulator.Map.WithLock(folder, func() {
		folder.ChildEntity = append(folder.ChildEntity, n.Self)
		simulator.Map.PutEntity(folder, n)
		simulator.Map.AddReference(dc, &dc.Network, n.Self)
	})
	return n
}

// destroyStandardNetwork removes a Network the way vcsim's folderRemoveChild does.
func destroyStandardNetwork(dc *simulator.Datacenter, n *mo.Network) {
	simulator.Map.Remove(n.Self)
	if n.Parent == nil {
		return
	}
	folder, ok := simulator.Map.Get(*n.Parent).(*simulator.Folder)
	if !ok {
		return
	}
	simulator.Map.WithLock(folder, func() {
		simulator.RemoveReference(&folder.ChildEntity, n.Self)
		simulator.Map.RemoveReference(dc, &dc.Network, n.Self)
	})
}

// --- generic helpers ---------------------------------------------------------------------

// allOf returns the registry's objects of kind (simulator.Map.All) that are of vcsim type T.
func allOf[T mo.Reference](kind string) []T {
	var objs []T
	for _, e := range simulator.Map.All(kind) {
		if obj, ok := e.(T); ok {
			objs = append(objs, obj)
		}
	}
	return objs
}

func datacenterOf(e mo.Entity) *simulator.Datacenter {
	for e != nil && e.Entity().Parent != nil {
		parent := simulator.Map.Get(*e.Entity().Parent)
		if dc, ok := parent.(*simulator.Datacenter); ok {
			return dc
		}
		e, _ = parent.(mo.Entity)
	}
	return nil
}

func computeResourceOf(obj mo.Reference) *mo.ComputeResource {
	switch cr := obj.(type) {
	case *simulator.ClusterComputeResource:
		return &cr.ComputeResource
	case *mo.ComputeResource:
		return cr
	}
	return nil
}

func withoutRef(refs []types.ManagedObjectReference, ref types.ManagedObjectReference) []types.ManagedObjectReference {
	out := []types.ManagedObjectReference{}
	for _, r := range refs {
		if r != ref {
			out = append(out, r)
		}
	}
	return out
}

func removeString(list []string, s string) []string {
	var out []string
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}
