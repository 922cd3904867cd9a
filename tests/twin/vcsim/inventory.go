package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

const (
	datacenterName = "DC0"
	vmNetwork      = "VM Network"
	secondVswitch  = "vSwitch1"
	dvsName        = "DSwitch1"
	dvpgName       = "ocp-primary-dpg"
	datastoreName  = "LocalDS_0"
	// vcsim 0.24 only accepts the guest ids it knows (up to rhel7_64Guest); RHCOS
	// templates use rhel8/rhel9 ids, which this version rejects as InvalidArgument.
	guestID = string(types.VirtualMachineGuestOsIdentifierOtherLinux64Guest)
)

// buildInventory creates the project's inventory with ordinary vSphere API calls,
// through an in-process client of the simulator (no HTTP, so none of it shows in
// the request log), before the server listens.
func buildInventory(ctx context.Context, svc *simulator.Service, cfg config) ([]stateVM, error) {
	c, err := vim25.NewClient(ctx, svc)
	if err != nil {
		return nil, err
	}

	finder := find.NewFinder(c, false)
	dc, err := finder.Datacenter(ctx, datacenterName)
	if err != nil {
		return nil, err
	}
	finder.SetDatacenter(dc)
	folders, err := dc.Folders(ctx)
	if err != nil {
		return nil, err
	}

	// The vSphere clusters DC0_C0, DC0_C1, ... (vcsim's VPX model names them so), each with cfg.hosts hosts.
	var clusterHosts [][]*object.HostSystem
	var pools []*object.ResourcePool
	var hosts []*object.HostSystem
	for ci := 0; ci < cfg.clusters; ci++ {
		name := clusterNameOf(ci)
		cluster, err := finder.ClusterComputeResource(ctx, name)
		if err != nil {
			return nil, err
		}
		members, err := cluster.Hosts(ctx)
		if err != nil {
			return nil, err
		}
		if len(members) != cfg.hosts {
			return nil, fmt.Errorf("cluster %s has %d hosts, expected %d", name, len(members), cfg.hosts)
		}
		pool, err := cluster.ResourcePool(ctx)
		if err != nil {
			return nil, err
		}
		clusterHosts = append(clusterHosts, members)
		pools = append(pools, pool)
		hosts = append(hosts, members...)
	}

	// Second standard vSwitch on every host, without port groups.
	for _, h := range hosts {
		ns, err := h.ConfigManager().NetworkSystem(ctx)
		if err != nil {
			return nil, err
		}
		err = ns.AddVirtualSwitch(ctx, secondVswitch, &types.HostVirtualSwitchSpec{NumPorts: 128, Mtu: 1500})
		if err != nil {
			return nil, fmt.Errorf("AddVirtualSwitch %s on %s: %w", secondVswitch, h.Name(), err)
		}
	}

	// Distributed switch with every host of every cluster as member, and one port group.
	task, err := folders.NetworkFolder.CreateDVS(ctx, types.DVSCreateSpec{
		ConfigSpec: &types.VMwareDVSConfigSpec{
			DVSConfigSpec: types.DVSConfigSpec{Name: dvsName},
		},
	})
	if err != nil {
		return nil, err
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("CreateDVS_Task: %w", err)
	}
	dvs := object.NewDistributedVirtualSwitch(c, info.Result.(types.ManagedObjectReference))

	var members []types.DistributedVirtualSwitchHostMemberConfigSpec
	for _, h := range hosts {
		members = append(members, types.DistributedVirtualSwitchHostMemberConfigSpec{
			Operation: string(types.ConfigSpecOperationAdd),
			Host:      h.Reference(),
		})
	}
	task, err = dvs.Reconfigure(ctx, &types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{Host: members}})
	if err != nil {
		return nil, err
	}
	if err = task.Wait(ctx); err != nil {
		return nil, fmt.Errorf("ReconfigureDvs_Task: %w", err)
	}

	task, err = dvs.AddPortgroup(ctx, []types.DVPortgroupConfigSpec{{
		Name:     dvpgName,
		Type:     string(types.DistributedVirtualPortgroupPortgroupTypeEarlyBinding),
		NumPorts: 8,
		DefaultPortConfig: &types.VMwareDVSPortSetting{
			Vlan: &types.VmwareDistributedVirtualSwitchVlanIdSpec{VlanId: 0},
		},
	}})
	if err != nil {
		return nil, err
	}
	if err = task.Wait(ctx); err != nil {
		return nil, fmt.Errorf("AddDVPortgroup_Task: %w", err)
	}

	// Node VMs: masters first, then workers, round-robin over the hosts.
	type plan struct{ name, role string }
	var plans []plan
	for i := 0; i < cfg.masters; i++ {
		plans = append(plans, plan{fmt.Sprintf("%s-master-%d", cfg.clusterName, i), "master"})
	}
	for i := 0; i < cfg.workers; i++ {
		plans = append(plans, plan{fmt.Sprintf("%s-worker-%d", cfg.clusterName, i), "worker"})
	}

	// With several clusters VM i goes to cluster i mod N, then round-robin over that cluster's hosts;
	// with one cluster this is round-robin over its hosts, as before.
	roles := map[string]string{}
	clusterOf := map[string]string{}
	var order []string
	for i, p := range plans {
		ci := i % cfg.clusters
		members := clusterHosts[ci]
		host := members[(i/cfg.clusters)%len(members)]
		if err := createVM(ctx, folders.VmFolder, pools[ci], host, p.name); err != nil {
			return nil, fmt.Errorf("creating %s: %w", p.name, err)
		}
		roles[p.name] = p.role
		if cfg.clusters > 1 {
			clusterOf[p.name] = clusterNameOf(ci)
		}
		order = append(order, p.name)
	}

	inv := snapshot()
	byName := map[string]invVM{}
	for _, vm := range inv.VMs {
		byName[vm.Name] = vm
	}
	uuids := map[string]string{}
	macs := map[string]string{}
	out := []stateVM{}
	for _, name := range order {
		vm, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("VM %s not found after creation", name)
		}
		if other, dup := uuids[vm.UUID]; dup {
			return nil, fmt.Errorf("VMs %s and %s share BIOS UUID %s", other, name, vm.UUID)
		}
		uuids[vm.UUID] = name
		svm := stateVM{Name: name, Moid: vm.Moid, UUID: vm.UUID, Role: roles[name], Host: vm.Host, Cluster: clusterOf[name], NICs: []stateNIC{}}
		for _, nic := range vm.NICs {
			if other, dup := macs[nic.MAC]; dup {
				return nil, fmt.Errorf("VMs %s and %s share MAC %s", other, name, nic.MAC)
			}
			macs[nic.MAC] = name
			network := ""
			if nic.Network != nil {
				network = *nic.Network
			}
			svm.NICs = append(svm.NICs, stateNIC{MAC: nic.MAC, Network: network})
		}
		out = append(out, svm)
	}
	return out, nil
}

// clusterNameOf is the name vcsim's VPX model gives the i-th cluster of DC0.
func clusterNameOf(i int) string {
	return fmt.Sprintf("%s_C%d", datacenterName, i)
}

func createVM(ctx context.Context, folder *object.Folder, pool *object.ResourcePool, host *object.HostSystem, name string) error {
	var devices object.VirtualDeviceList

	scsi, err := devices.CreateSCSIController("pvscsi")
	if err != nil {
		return err
	}
	devices = append(devices, scsi)
	disk := devices.CreateDisk(scsi.(types.BaseVirtualController), types.ManagedObjectReference{},
		fmt.Sprintf("[%s] %s/%s.vmdk", datastoreName, name, name))
	disk.CapacityInKB = 16 * 1024 * 1024
	devices = append(devices, disk)

	nic, err := devices.CreateEthernetCard("vmxnet3", &types.VirtualEthernetCardNetworkBackingInfo{
		VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: vmNetwork},
	})
	if err != nil {
		return err
	}
	card := nic.(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
	card.Key = 4000 // the key ESXi gives the first NIC
	card.AddressType = string(types.VirtualEthernetCardMacTypeAssigned)
	card.Connectable = &types.VirtualDeviceConnectInfo{StartConnected: true, Connected: true, AllowGuestControl: true}
	devices = append(devices, nic)

	changes, err := devices.ConfigSpec(types.VirtualDeviceConfigSpecOperationAdd)
	if err != nil {
		return err
	}
	// The NIC's MAC comes from the twin's vCenter-wide allocator (macs.go), as for the
	// CreateVM_Task calls of clients: this in-process call does not pass the HTTP wrapper.
	vcenterMACs.mu.Lock()
	defer vcenterMACs.mu.Unlock()
	if _, _, err := vcenterMACs.complete(nil, changes); err != nil {
		return err
	}
	spec := types.VirtualMachineConfigSpec{
		Name:         name,
		GuestId:      guestID,
		NumCPUs:      4,
		MemoryMB:     16384,
		Files:        &types.VirtualMachineFileInfo{VmPathName: "[" + datastoreName + "]"},
		DeviceChange: changes,
	}

	task, err := folder.CreateVM(ctx, spec, pool, host)
	if err != nil {
		return err
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		return fmt.Errorf("CreateVM_Task: %w", err)
	}
	vm := object.NewVirtualMachine(folder.Client(), info.Result.(types.ManagedObjectReference))
	task, err = vm.PowerOn(ctx)
	if err != nil {
		return err
	}
	if err = task.Wait(ctx); err != nil {
		return fmt.Errorf("PowerOnVM_Task: %w", err)
	}
	return nil
}

// Live inventory, read from the simulator's object map (GET /_twin/inventory).

type inventory struct {
	Hosts []invHost `json:"hosts"`
	DVS   []invDVS  `json:"dvs"`
	VMs   []invVM   `json:"vms"`
}

type invHost struct {
	Name       string              `json:"name"`
	Moid       string              `json:"moid"`
	Cluster    string              `json:"cluster"`
	Portgroups []invStdPG          `json:"portgroups"`
	Vswitches  []string            `json:"vswitches"`
	Uplinks    map[string][]string `json:"uplinks"`
	Pnics      []invPnic           `json:"pnics"`
	nsRef      *types.ManagedObjectReference
	parentRef  *types.ManagedObjectReference
}

// invPnic is a physical NIC of a host: link_up false when vCenter reports no linkSpeed (link down).
type invPnic struct {
	Device string `json:"device"`
	LinkUp bool   `json:"link_up"`
}

type invStdPG struct {
	Name    string `json:"name"`
	Vswitch string `json:"vswitch"`
	VLAN    int32  `json:"vlan"`
}

type invDVS struct {
	Name             string    `json:"name"`
	UUID             string    `json:"uuid"`
	Moid             string    `json:"moid"`
	Portgroups       []invDVPG `json:"portgroups"`
	UplinkPortgroups []string  `json:"uplink_portgroups"`
	Hosts            []string  `json:"hosts"`
	pgRefs           []types.ManagedObjectReference
	memberRefs       []types.ManagedObjectReference
}

type invDVPG struct {
	Name string `json:"name"`
	Key  string `json:"key"`
	VLAN *int32 `json:"vlan"`
	moid string
}

type invVM struct {
	Name       string   `json:"name"`
	Moid       string   `json:"moid"`
	UUID       string   `json:"uuid"`
	Host       string   `json:"host"`
	PowerState string   `json:"power_state"`
	NICs       []invNIC `json:"nics"`
	hostRef    *types.ManagedObjectReference
}

type invNIC struct {
	Key            int32   `json:"key"`
	MAC            string  `json:"mac"`
	Adapter        string  `json:"adapter"`
	Connected      bool    `json:"connected"`
	StartConnected bool    `json:"start_connected"`
	Network        *string `json:"network"`
	PortgroupKey   *string `json:"portgroup_key"`
	SwitchUUID     *string `json:"switch_uuid"`
}

type dvpgInfo struct {
	name   string
	key    string
	vlan   *int32
	uplink bool
}

// snapshot reads the live inventory. Like vcsim's PropertyCollector it holds the
// per-object lock (Registry.WithLock) of one object at a time while copying it,
// so it never observes a half-applied SOAP call on that object and cannot
// deadlock with a call holding several locks.
func snapshot() inventory {
	m := simulator.Map
	inv := inventory{Hosts: []invHost{}, DVS: []invDVS{}, VMs: []invVM{}}

	hostNames := map[types.ManagedObjectReference]string{}
	for _, h := range allOf[*simulator.HostSystem]("HostSystem") {
		var ih invHost
		m.WithLock(h, func() {
			ih.Name = h.Name
			ih.Moid = h.Self.Value
			if h.ConfigManager.NetworkSystem != nil {
				ref := *h.ConfigManager.NetworkSystem
				ih.nsRef = &ref
			}
			if h.Parent != nil {
				ref := *h.Parent
				ih.parentRef = &ref
			}
		})
		hostNames[h.Self] = ih.Name
		ih.Portgroups = []invStdPG{}
		ih.Vswitches = []string{}
		ih.Uplinks = map[string][]string{}
		ih.Pnics = []invPnic{}
		if ih.nsRef != nil {
			if obj := m.Get(*ih.nsRef); obj != nil {
				ns := networkSystemOf(obj)
				m.WithLock(obj, func() {
					if ns == nil {
						return
					}
					if ns.NetworkInfo == nil {
						return
					}
					for _, vs := range ns.NetworkInfo.Vswitch {
						ih.Vswitches = append(ih.Vswitches, vs.Name)
						ih.Uplinks[vs.Name] = append([]string{}, bridgeDevices(vs.Spec.Bridge)...)
					}
					for _, pnic := range ns.NetworkInfo.Pnic {
						ih.Pnics = append(ih.Pnics, invPnic{Device: pnic.Device, LinkUp: pnic.LinkSpeed != nil})
					}
					for _, pg := range ns.NetworkInfo.Portgroup {
						ih.Portgroups = append(ih.Portgroups, invStdPG{
							Name:    pg.Spec.Name,
							Vswitch: pg.Spec.VswitchName,
							VLAN:    pg.Spec.VlanId,
						})
					}
				})
			}
		}
		if ih.parentRef != nil {
			if p := m.Get(*ih.parentRef); p != nil {
				if me, ok := p.(mo.Entity); ok {
					m.WithLock(p, func() { ih.Cluster = me.Entity().Name })
				}
			}
		}
		inv.Hosts = append(inv.Hosts, ih)
	}
	sort.Slice(inv.Hosts, func(i, j int) bool { return naturalLess(inv.Hosts[i].Name, inv.Hosts[j].Name) })

	// Distributed port groups, by key and by moid.
	pgByKey := map[string]dvpgInfo{}
	pgByRef := map[types.ManagedObjectReference]dvpgInfo{}
	for _, pg := range allOf[*simulator.DistributedVirtualPortgroup]("DistributedVirtualPortgroup") {
		var info dvpgInfo
		m.WithLock(pg, func() {
			info.name = pg.Name
			info.key = pg.Key
			if info.key == "" {
				info.key = pg.Config.Key
			}
			if pg.Config.Uplink != nil && *pg.Config.Uplink {
				info.uplink = true
			}
			if s, ok := pg.Config.DefaultPortConfig.(*types.VMwareDVSPortSetting); ok && s != nil {
				if v, ok := s.Vlan.(*types.VmwareDistributedVirtualSwitchVlanIdSpec); ok && v != nil {
					id := v.VlanId
					info.vlan = &id
				}
			}
		})
		pgByKey[info.key] = info
		pgByRef[pg.Self] = info
	}

	for _, kind := range []string{"VmwareDistributedVirtualSwitch", "DistributedVirtualSwitch"} {
		for _, s := range allOf[*simulator.DistributedVirtualSwitch](kind) {
			var d invDVS
			var uplinkRefs []types.ManagedObjectReference
			m.WithLock(s, func() {
				d.Name = s.Name
				d.UUID = s.Uuid
				d.Moid = s.Self.Value
				d.pgRefs = append(d.pgRefs, s.Portgroup...)
				d.memberRefs = append(d.memberRefs, s.Summary.HostMember...)
				if s.Config != nil {
					uplinkRefs = append(uplinkRefs, s.Config.GetDVSConfigInfo().UplinkPortgroup...)
				}
			})
			d.Portgroups = []invDVPG{}
			d.UplinkPortgroups = []string{}
			d.Hosts = []string{}
			for _, ref := range d.pgRefs {
				info, ok := pgByRef[ref]
				if !ok {
					continue
				}
				// vcsim creates the uplink port group "<dvs>-DVUplinks-<n>" without
				// setting config.uplink or the switch's uplinkPortgroup.
				uplink := info.uplink || strings.HasPrefix(info.name, d.Name+"-DVUplinks")
				for _, u := range uplinkRefs {
					if u == ref {
						uplink = true
					}
				}
				if uplink {
					d.UplinkPortgroups = append(d.UplinkPortgroups, info.name)
					continue
				}
				d.Portgroups = append(d.Portgroups, invDVPG{Name: info.name, Key: info.key, VLAN: info.vlan})
			}
			for _, ref := range d.memberRefs {
				if name, ok := hostNames[ref]; ok {
					d.Hosts = append(d.Hosts, name)
				} else {
					d.Hosts = append(d.Hosts, ref.Value)
				}
			}
			sort.Slice(d.Hosts, func(i, j int) bool { return naturalLess(d.Hosts[i], d.Hosts[j]) })
			inv.DVS = append(inv.DVS, d)
		}
	}
	sort.Slice(inv.DVS, func(i, j int) bool { return inv.DVS[i].Name < inv.DVS[j].Name })

	for _, vm := range allOf[*simulator.VirtualMachine]("VirtualMachine") {
		var iv invVM
		m.WithLock(vm, func() {
			iv.Name = vm.Name
			iv.Moid = vm.Self.Value
			iv.PowerState = string(vm.Runtime.PowerState)
			if vm.Runtime.Host != nil {
				ref := *vm.Runtime.Host
				iv.hostRef = &ref
			}
			iv.NICs = []invNIC{}
			if vm.Config == nil {
				return
			}
			iv.UUID = vm.Config.Uuid
			for _, dev := range vm.Config.Hardware.Device {
				card, ok := dev.(types.BaseVirtualEthernetCard)
				if !ok {
					continue
				}
				c := card.GetVirtualEthernetCard()
				nic := invNIC{
					Key:     c.Key,
					MAC:     strings.ToLower(c.MacAddress),
					Adapter: adapterType(dev),
				}
				if c.Connectable != nil {
					nic.Connected = c.Connectable.Connected
					nic.StartConnected = c.Connectable.StartConnected
				}
				switch b := c.Backing.(type) {
				case *types.VirtualEthernetCardNetworkBackingInfo:
					name := b.DeviceName
					nic.Network = &name
				case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
					key := b.Port.PortgroupKey
					sw := b.Port.SwitchUuid
					nic.PortgroupKey = &key
					nic.SwitchUUID = &sw
				case *types.VirtualEthernetCardOpaqueNetworkBackingInfo:
					id := b.OpaqueNetworkId
					nic.Network = &id
				}
				iv.NICs = append(iv.NICs, nic)
			}
		})
		for i := range iv.NICs {
			nic := &iv.NICs[i]
			if nic.PortgroupKey != nil {
				if info, ok := pgByKey[*nic.PortgroupKey]; ok {
					name := info.name
					nic.Network = &name
				}
			}
		}
		if iv.hostRef != nil {
			if name, ok := hostNames[*iv.hostRef]; ok {
				iv.Host = name
			} else {
				iv.Host = iv.hostRef.Value
			}
		}
		inv.VMs = append(inv.VMs, iv)
	}
	sort.Slice(inv.VMs, func(i, j int) bool { return naturalLess(inv.VMs[i].Name, inv.VMs[j].Name) })

	return inv
}

// adapterTypes names the virtual NIC models the way vSphere clients do, by the device's own
// type (a VirtualVmxnet3Vrdma is "vmxnet3vrdma", not "vmxnet3").
var adapterTypes = map[reflect.Type]string{
	reflect.TypeOf(&types.VirtualVmxnet3Vrdma{}):      "vmxnet3vrdma",
	reflect.TypeOf(&types.VirtualVmxnet3{}):           "vmxnet3",
	reflect.TypeOf(&types.VirtualVmxnet2{}):           "vmxnet2",
	reflect.TypeOf(&types.VirtualVmxnet{}):            "vmxnet",
	reflect.TypeOf(&types.VirtualE1000e{}):            "e1000e",
	reflect.TypeOf(&types.VirtualE1000{}):             "e1000",
	reflect.TypeOf(&types.VirtualPCNet32{}):           "pcnet32",
	reflect.TypeOf(&types.VirtualSriovEthernetCard{}): "sriov",
}

// adapterType names the virtual NIC model of dev (adapterTypes), or "unknown".
func adapterType(dev types.BaseVirtualDevice) string {
	if name, ok := adapterTypes[reflect.TypeOf(dev)]; ok {
		return name
	}
	return "unknown"
}

// naturalLess orders "x-2" before "x-10".
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitPrefix(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
