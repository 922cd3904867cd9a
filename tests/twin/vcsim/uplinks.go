package main

// Physical uplinks of the standard vSwitches (issue 12 section 3: a vSwitch without working uplinks).
//
// vcsim 0.24 reports no physical NIC in a host's networkInfo (networkInfo.pnic is unset, the
// vSwitches there carry no spec.bridge), ignores the spec of AddVirtualSwitch (vSwitch1 gets no
// bridge) and answers MethodNotFound to UpdateVirtualSwitch. A real host (vSphere API reference,
// HostNetworkInfo, HostVirtualSwitch, HostVirtualSwitchBondBridge, PhysicalNic):
//   - networkInfo.pnic lists the physical NICs (vmnic0, vmnic1 in vcsim's host template, which
//     config.network.pnic already has); PhysicalNic.linkSpeed is "the current link state of the
//     physical network adapter. If this object is not set, then the link is down".
//   - a vSwitch's uplinks are spec.bridge (HostVirtualSwitchBondBridge.nicDevice, the device
//     names) and pnic (the keys of those physical NICs).
//   - UpdateVirtualSwitch(vswitchName, spec) replaces the vSwitch's spec (numPorts, bridge,
//     policy, mtu); faults NotFound (no such vSwitch), ResourceInUse (a bridged NIC is an uplink
//     of another vSwitch), HostConfigFault (pyVmomi _typeinfo_vim.py fault list).
// The twin seeds vSwitch0 with vmnic0 (vcsim's template) and vSwitch1 with vmnic1, implements
// UpdateVirtualSwitch (no bridge in the spec = no uplink: an inference, see FIDELITY.md) and lets
// a test pull a cable: POST /_twin/pnic {"host", "device", "link_up"} sets linkSpeed unset (down)
// or back to the NIC's speed, in networkInfo.pnic and config.network.pnic.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const pnicKeyPrefix = "key-vim.host.PhysicalNic-"

// seedUplinks gives every host's networkInfo its physical NICs and each vSwitch its uplink
// (vSwitch0: vmnic0, vSwitch1: vmnic1). It runs once, after the inventory is built and before
// the server listens.
func seedUplinks() {
	uplink := map[string]string{"vSwitch0": "vmnic0", secondVswitch: "vmnic1"}
	for _, h := range networkHosts() {
		s := twinNetworkSystemOf(h)
		if s == nil || s.NetworkInfo == nil {
			continue
		}
		var pnics []types.PhysicalNic
		template := map[string]types.HostVirtualSwitch{}
		withHostNetwork(h, func(network *types.HostNetworkInfo) {
			pnics = append(pnics, network.Pnic...)
			for _, vs := range network.Vswitch {
				template[vs.Name] = vs
			}
		})
		simulator.Map.WithLock(s, func() {
			vswitches := append([]types.HostVirtualSwitch(nil), s.NetworkInfo.Vswitch...)
			for i := range vswitches {
				vs := &vswitches[i]
				if t, found := template[vs.Name]; found {
					vs.Key, vs.NumPorts, vs.NumPortsAvailable, vs.Mtu, vs.Spec = t.Key, t.NumPorts, t.NumPortsAvailable, t.Mtu, t.Spec
				} else {
					vs.Key = "key-vim.host.VirtualSwitch-" + vs.Name
					vs.NumPorts, vs.Mtu = 128, 1500
					vs.Spec = types.HostVirtualSwitchSpec{NumPorts: 128, Mtu: 1500}
				}
				if device, found := uplink[vs.Name]; found {
					vs.Spec.Bridge = &types.HostVirtualSwitchBondBridge{NicDevice: []string{device}}
				}
				vs.Pnic = bridgeKeys(vs.Spec.Bridge)
			}
			s.setUplinkState(vswitches, pnics)
		})
	}
}

func bridgeDevices(bridge types.BaseHostVirtualSwitchBridge) []string {
	if b, ok := bridge.(*types.HostVirtualSwitchBondBridge); ok && b != nil {
		return b.NicDevice
	}
	return nil
}

func bridgeKeys(bridge types.BaseHostVirtualSwitchBridge) []string {
	var keys []string
	for _, device := range bridgeDevices(bridge) {
		keys = append(keys, pnicKeyPrefix+device)
	}
	return keys
}

// setUplinkState stores the vSwitches and a copy of the physical NICs in networkInfo and mirrors
// them into the host's config.network (publishNetworkInfo), as a real host reports the same
// switches in both. Called with the network system's lock held.
func (s *twinNetworkSystem) setUplinkState(vswitches []types.HostVirtualSwitch, pnics []types.PhysicalNic) {
	s.publishNetworkInfo(vswitches, func(network *types.HostNetworkInfo) {
		network.Pnic = append([]types.PhysicalNic(nil), pnics...)
		network.Vswitch = vswitches // copied before the port group keys are set
	})
}

func (s *twinNetworkSystem) UpdateVirtualSwitch(ctx *simulator.Context, req *types.UpdateVirtualSwitch) soap.HasFault {
	body := &methods.UpdateVirtualSwitchBody{}
	i := s.vswitchIndex(req.VswitchName)
	if i < 0 {
		body.Fault_ = notFound("virtual switch", req.VswitchName)
		return body
	}
	known := map[string]bool{}
	for _, pnic := range s.NetworkInfo.Pnic {
		known[pnic.Device] = true
	}
	for _, device := range bridgeDevices(req.Spec.Bridge) {
		if !known[device] {
			body.Fault_ = notFound("physical NIC", device)
			return body
		}
		for j, other := range s.NetworkInfo.Vswitch {
			if j != i && contains(bridgeDevices(other.Spec.Bridge), device) {
				body.Fault_ = simulator.Fault(fmt.Sprintf("The resource '%s' is in use (uplink of %s).", device, other.Name),
					&types.ResourceInUse{Type: "PhysicalNic", Name: device})
				return body
			}
		}
	}
	vswitches := append([]types.HostVirtualSwitch(nil), s.NetworkInfo.Vswitch...)
	vs := &vswitches[i]
	vs.Spec = req.Spec
	vs.NumPorts = req.Spec.NumPorts
	if req.Spec.Mtu != 0 {
		vs.Mtu = req.Spec.Mtu
	}
	vs.Pnic = bridgeKeys(req.Spec.Bridge)
	s.setUplinkState(vswitches, s.NetworkInfo.Pnic)
	body.Res = &types.UpdateVirtualSwitchResponse{}
	return body
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// setLinkState pulls (or plugs back) the cable of one physical NIC of a host.
func setLinkState(hostName, device string, up bool) error {
	for _, h := range networkHosts() {
		if h.Name != hostName {
			continue
		}
		s := twinNetworkSystemOf(h)
		if s == nil {
			return fmt.Errorf("host %s has no network system", hostName)
		}
		var err error
		simulator.Map.WithLock(s, func() {
			pnics := append([]types.PhysicalNic(nil), s.NetworkInfo.Pnic...)
			for i := range pnics {
				if pnics[i].Device != device {
					continue
				}
				pnics[i].LinkSpeed = nil
				if up {
					pnics[i].LinkSpeed = pnics[i].Spec.LinkSpeed
					if pnics[i].LinkSpeed == nil {
						pnics[i].LinkSpeed = &types.PhysicalNicLinkInfo{SpeedMb: 10000, Duplex: true}
					}
				}
				s.setUplinkState(append([]types.HostVirtualSwitch(nil), s.NetworkInfo.Vswitch...), pnics)
				return
			}
			err = fmt.Errorf("host %s has no physical NIC %s", hostName, device)
		})
		return err
	}
	return fmt.Errorf("no host %s", hostName)
}

func (t *twin) servePnic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	var req struct {
		Host   string `json:"host"`
		Device string `json:"device"`
		LinkUp *bool  `json:"link_up"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Host == "" || req.Device == "" || req.LinkUp == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body {\"host\", \"device\", \"link_up\": bool} required"})
		return
	}
	t.gate.Lock()
	err := setLinkState(req.Host, req.Device, *req.LinkUp)
	t.gate.Unlock()
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]interface{}{"host": req.Host, "device": req.Device, "link_up": *req.LinkUp})
}
