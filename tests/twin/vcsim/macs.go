package main

// vCenter-generated MAC addresses of virtual NICs.
//
// vcsim 0.24 builds a NIC's MAC from its VM's BIOS UUID (generateMAC in
// simulator/virtual_machine.go: ESXi's OUI 00:0c:29, then the last characters of the UUID
// *string* with the NIC's unit number added to the first of them), so MACs repeat across
// VMs: with 46 or more workers two node VMs of the start-up inventory share a MAC, and a NIC
// hot-added later can get the MAC of another VM's NIC. vcsim also keeps whatever MAC a
// client sends, whatever its addressType.
//
// A real vCenter hands out MAC addresses from one allocator per vCenter Server:
//   - "VMware OUI allocation assigns MAC addresses based on the default VMware OUI 00:50:56
//     and the vCenter Server ID ... each vCenter Server can assign up to 64000 unique MAC
//     addresses ... a MAC address has the format 00:50:56:XX:YY:ZZ where 00:50:56 represents
//     the VMware OUI, XX is calculated as (128 + vCenter Server ID), and YY and ZZ are random
//     two-digit hexadecimal numbers. The addresses created through the VMware OUI allocation
//     are in the range 00:50:56:80:YY:ZZ - 00:50:56:BF:YY:ZZ" (vSphere 7.0 Networking,
//     "VMware OUI Allocation", docs.vmware.com GUID-1B6A280E-0C77-4775-8F84-4B3F40673178).
//     00:0c:29 is the OUI of the MACs an ESXi host generates itself, e.g. when "the host is
//     not connected to vCenter Server" (vSphere 8.0 Networking, "MAC Address Generation on
//     ESXi Hosts", GUID-DC7478FF-DC44-4625-9AD7-38208C56A552).
//   - VirtualEthernetCard.macAddress: "Clients can set this property to any of the allowed
//     address types. The server might override the specified value for "Generated" or
//     "Assigned" if it does not fall in the right ranges or is determined to be a
//     duplicate" (vSphere API reference, vim.vm.device.VirtualEthernetCard); addressType
//     "assigned" is "A MAC address assigned by VirtualCenter" (VirtualEthernetCardMacType).
//     A MAC sent without addressType "manual" does not make a static MAC: the adapter stays
//     automatic ("vpx"), and on vCenter 6 such a VM with a MAC outside the automatic range
//     then failed to power on (ansible/ansible issue #21161). The twin takes the API's
//     "might override" path at reconfiguration instead, which keeps every automatic MAC
//     valid and unique.
//   - An edit that sends a new device object without its macAddress gives the adapter a new
//     MAC on a real vCenter (vmware/pyvmomi issue #260).
//   - Manual (static) MACs are kept as given: "By default, VMware uses the OUI 00:50:56 for
//     manually generated addresses, but all unique manually generated addresses are
//     supported" (vSphere 6.5 Networking, "Assign a Static MAC Address"); the static range
//     00:50:56:00:00:00-00:50:56:3F:FF:FF is the recommendation for the VMware OUI ("the
//     value for XX must not be greater than 3F"), not a check vCenter makes, so the twin
//     does not validate it. The twin also keeps a manual MAC that another NIC has: the
//     server cannot pick another static MAC, and the API reports such a conflict as an
//     event (VmStaticMacConflictEvent), not as a fault of the reconfiguration.
//
// The twin is vCenter Server instance ID 0: every MAC it generates is 00:50:56:80:YY:ZZ.
// Instead of random YY:ZZ it takes the next address, in order, that no NIC of any VM in
// the simulator uses, so MACs are unique within the vCenter and repeatable for a given
// inventory and sequence of calls (the start-up VMs get 00:50:56:80:00:00, :01, ... in
// state-file order). For every NIC added or edited by CreateVM_Task or ReconfigVM_Task
// (NIC specs with operation add or edit):
//   - addressType manual with a macAddress: kept as given;
//   - any other addressType (generated, assigned, unset) with a macAddress in
//     00:50:56:80:00:00-00:50:56:BF:FF:FF that no other NIC uses (the NIC being edited
//     does not count): kept;
//   - otherwise (no macAddress, or out of range, or a duplicate): a new generated MAC;
//   - an unset addressType becomes "assigned".
// The requests are completed before vcsim sees them (vcsim keeps a MAC it is given), so
// vcsim's task, events and guest.net carry the twin's MAC from the start. CloneVM_Task is
// not covered (vcsim copies the source's NIC objects, MAC included, into the clone).

import (
	"bytes"
	stdxml "encoding/xml"
	"errors"
	"fmt"
	"io/ioutil"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// vcenterInstanceID is the twin's vCenter Server ID (0-63): generated MACs are
// 00:50:56:(0x80+ID):YY:ZZ.
const vcenterInstanceID = 0

// macAllocator is the vCenter-wide MAC allocator. mu is held across a whole
// CreateVM_Task/ReconfigVM_Task that adds or edits NICs, from the choice of the MACs until
// vcsim has applied them, so concurrent calls cannot pick the same address. It is always
// taken before any simulator object lock, never while holding one.
type macAllocator struct {
	mu   sync.Mutex
	next uint32 // YY:ZZ of the next candidate
}

var vcenterMACs = &macAllocator{}

var errNoFreeMAC = errors.New("no free MAC address in the vCenter's range")

func generatedMAC(offset uint32) string {
	return fmt.Sprintf("00:50:56:%02x:%02x:%02x", 0x80+vcenterInstanceID, (offset>>8)&0xff, offset&0xff)
}

// parseMAC returns a 6-octet MAC in lower-case colon form, or "" if mac is not one.
func parseMAC(mac string) string {
	hw, err := net.ParseMAC(strings.TrimSpace(mac))
	if err != nil || len(hw) != 6 {
		return ""
	}
	return hw.String()
}

// macKey is how MACs are compared: the canonical form, or the trimmed lower-case text of a
// MAC that does not parse (a manual MAC is kept as given).
func macKey(mac string) string {
	if m := parseMAC(mac); m != "" {
		return m
	}
	return strings.ToLower(strings.TrimSpace(mac))
}

// inGeneratedRange: 00:50:56:80:00:00-00:50:56:BF:FF:FF, the VMware OUI range of
// vCenter-generated addresses.
func inGeneratedRange(mac string) bool {
	hw, err := net.ParseMAC(strings.TrimSpace(mac))
	if err != nil || len(hw) != 6 {
		return false
	}
	return hw[0] == 0x00 && hw[1] == 0x50 && hw[2] == 0x56 && hw[3] >= 0x80 && hw[3] <= 0xbf
}

// usedMACs returns the MACs of every NIC of every VM in the simulator, except the NICs of
// vm (if not nil) whose device keys are in skip. Each VM is locked while it is read.
func usedMACs(vm *types.ManagedObjectReference, skip map[int32]bool) map[string]bool {
	used := map[string]bool{}
	for _, v := range allOf[*simulator.VirtualMachine]("VirtualMachine") {
		simulator.Map.WithLock(v, func() {
			if v.Config == nil {
				return
			}
			self := vm != nil && v.Self == *vm
			for _, dev := range v.Config.Hardware.Device {
				card, ok := dev.(types.BaseVirtualEthernetCard)
				if !ok {
					continue
				}
				c := card.GetVirtualEthernetCard()
				if c.MacAddress == "" || (self && skip[c.Key]) {
					continue
				}
				used[macKey(c.MacAddress)] = true
			}
		})
	}
	return used
}

// allocate returns the next generated MAC not in used and marks it used. Caller holds mu.
func (a *macAllocator) allocate(used map[string]bool) (string, error) {
	for i := uint32(0); i <= 0xffff; i++ {
		offset := (a.next + i) & 0xffff
		mac := generatedMAC(offset)
		if !used[mac] {
			a.next = (offset + 1) & 0xffff
			used[mac] = true
			return mac, nil
		}
	}
	return "", errNoFreeMAC
}

// nicCard returns the Ethernet card of a device spec that adds or edits a NIC, or nil.
func nicCard(change types.BaseVirtualDeviceConfigSpec) *types.VirtualEthernetCard {
	spec := change.GetVirtualDeviceConfigSpec()
	if spec == nil || spec.Device == nil {
		return nil
	}
	if spec.Operation != types.VirtualDeviceConfigSpecOperationAdd && spec.Operation != types.VirtualDeviceConfigSpecOperationEdit {
		return nil
	}
	card, ok := spec.Device.(types.BaseVirtualEthernetCard)
	if !ok {
		return nil
	}
	return card.GetVirtualEthernetCard()
}

// complete gives the NICs added or edited by changes (the deviceChange of a spec for vm,
// or of a new VM when vm is nil) their MAC and addressType, as vCenter does (see the top
// of this file). It changes the specs in place and returns the MACs it generated, and
// whether it changed anything. Caller holds mu.
func (a *macAllocator) complete(vm *types.ManagedObjectReference, changes []types.BaseVirtualDeviceConfigSpec) (generated []string, changed bool, err error) {
	skip := map[int32]bool{}
	for _, change := range changes {
		if card := nicCard(change); card != nil && change.GetVirtualDeviceConfigSpec().Operation == types.VirtualDeviceConfigSpecOperationEdit {
			skip[card.Key] = true
		}
	}
	used := usedMACs(vm, skip)
	for _, change := range changes {
		card := nicCard(change)
		if card == nil {
			continue
		}
		given := strings.TrimSpace(card.MacAddress)
		manual := strings.EqualFold(card.AddressType, string(types.VirtualEthernetCardMacTypeManual))
		switch {
		case given != "" && manual:
			used[macKey(given)] = true
		case given != "" && inGeneratedRange(given) && !used[macKey(given)]:
			used[macKey(given)] = true
		default:
			mac, err := a.allocate(used)
			if err != nil {
				return generated, changed, err
			}
			card.MacAddress = mac
			generated = append(generated, mac)
			changed = true
		}
		if card.AddressType == "" {
			card.AddressType = string(types.VirtualEthernetCardMacTypeAssigned)
			changed = true
		}
	}
	return generated, changed, nil
}

// --- CreateVM_Task and ReconfigVM_Task over SOAP ------------------------------------------

// nicMethods: SOAP methods whose NIC specs the twin completes before vcsim answers.
var nicMethods = map[string]bool{"CreateVM_Task": true, "ReconfigVM_Task": true}

// serveNICSpec handles a CreateVM_Task or ReconfigVM_Task that adds or edits NICs: under
// the allocator's lock it completes the NIC specs, hands vcsim the completed request and
// releases the lock once vcsim has answered. It returns false, having written nothing,
// when the call adds or edits no NIC, or vcsim is to answer it unchanged (a request it
// cannot decode, an unknown _this, no session: vcsim answers its own fault). If vcsim does
// not apply the change (the task fails), the generated MACs are given back.
func (t *twin) serveNICSpec(w http.ResponseWriter, r *http.Request, body []byte) bool {
	m, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if err != nil {
		return false
	}
	var vm *types.ManagedObjectReference
	var changes []types.BaseVirtualDeviceConfigSpec
	switch req := m.Body.(type) {
	case *types.ReconfigVM_Task:
		if _, ok := simulator.Map.Get(req.This).(*simulator.VirtualMachine); !ok {
			return false
		}
		ref := req.This
		vm = &ref
		changes = req.Spec.DeviceChange
	case *types.CreateVM_Task:
		if _, ok := simulator.Map.Get(req.This).(*simulator.Folder); !ok {
			return false
		}
		changes = req.Config.DeviceChange
	default:
		return false
	}
	nics := false
	for _, change := range changes {
		if nicCard(change) != nil {
			nics = true
		}
	}
	if !nics || !t.authenticated(r) {
		return false
	}

	a := vcenterMACs
	a.mu.Lock()
	saved := a.next
	var generated []string
	defer func() {
		// Also when vcsim panics on a malformed spec (net/http then drops the connection).
		if len(generated) > 0 {
			used := usedMACs(nil, nil)
			applied := false
			for _, mac := range generated {
				applied = applied || used[mac]
			}
			if !applied {
				a.next = saved
			}
		}
		a.mu.Unlock()
	}()
	generated, changed, err := a.complete(vm, changes)
	if err != nil {
		log.Printf("%s: %v; vcsim generates the MAC", m.Name, err)
		a.next, generated = saved, nil
		return false
	}
	if changed {
		rewritten, err := withSOAPBody(body, m)
		if err != nil {
			log.Printf("%s: re-encoding the request: %v", m.Name, err)
			a.next, generated = saved, nil
			return false
		}
		r.Body = ioutil.NopCloser(bytes.NewReader(rewritten))
		r.ContentLength = int64(len(rewritten))
	}
	t.inner.ServeHTTP(w, r)
	return true
}

// withSOAPBody returns the SOAP envelope with the content of its Body replaced by the
// method call m, encoded the way govmomi's own client encodes requests (the envelope and
// its Header are kept byte for byte).
func withSOAPBody(envelope []byte, m *simulator.Method) ([]byte, error) {
	var call bytes.Buffer
	enc := xml.NewEncoder(&call)
	if err := enc.EncodeElement(m.Body, xml.StartElement{Name: xml.Name{Space: "urn:vim25", Local: m.Name}}); err != nil {
		return nil, err
	}
	if err := enc.Flush(); err != nil {
		return nil, err
	}

	d := stdxml.NewDecoder(bytes.NewReader(envelope))
	depth, bodyDepth := 0, 0
	start := int64(-1)
	for {
		offset := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("no SOAP Body: %v", err)
		}
		switch el := tok.(type) {
		case stdxml.StartElement:
			depth++
			if start < 0 && depth == 2 && el.Name.Local == "Body" {
				bodyDepth = depth
				start = d.InputOffset()
			}
		case stdxml.EndElement:
			if start >= 0 && depth == bodyDepth {
				out := make([]byte, 0, len(envelope)+call.Len())
				out = append(out, envelope[:start]...)
				out = append(out, call.Bytes()...)
				return append(out, envelope[offset:]...), nil
			}
			depth--
		}
	}
}
