// Command vcsim-twin runs govmomi's vCenter simulator (vcsim, from Debian's
// golang-github-vmware-govmomi-dev) with the project's inventory, a SOAP request
// log and SOAP fault injection. The interface is described in tests/twin/README.md.
//
// Build (offline):
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go build -o .twin/bin/vcsim-twin ./tests/twin/vcsim
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"log"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/vmware/govmomi/simulator"
)

type config struct {
	listen      string
	hosts       int
	clusters    int
	masters     int
	workers     int
	clusterName string
	username    string
	password    string
	state       string
	maxObjects  int
	tlsCert     string
	tlsKey      string
}

// stateFile is what the twin writes once it listens (README, "Process 1: vcsim").
type stateFile struct {
	URL        string `json:"url"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	Datacenter string `json:"datacenter"`
	Cluster    string `json:"cluster"`
	// Clusters lists every vSphere cluster when -vsphere-clusters is above 1 (absent otherwise, as before).
	Clusters []string  `json:"clusters,omitempty"`
	VMs      []stateVM `json:"vms"`
}

type stateVM struct {
	Name string `json:"name"`
	Moid string `json:"moid"`
	UUID string `json:"uuid"`
	Role string `json:"role"`
	Host string `json:"host"`
	// Cluster is the VM's vSphere cluster, only with -vsphere-clusters above 1.
	Cluster string     `json:"cluster,omitempty"`
	NICs    []stateNIC `json:"nics"`
}

type stateNIC struct {
	MAC     string `json:"mac"`
	Network string `json:"network"`
}

func parseFlags() config {
	var c config
	flag.StringVar(&c.listen, "listen", "127.0.0.1:0", "address to listen on (host:port, port 0 picks a free port)")
	flag.IntVar(&c.hosts, "hosts", 3, "number of ESXi hosts in each vSphere cluster (DC0_C0, ...)")
	flag.IntVar(&c.clusters, "vsphere-clusters", 1, "number of vSphere clusters DC0_C0, DC0_C1, ... (the node VMs spread round-robin over them)")
	flag.IntVar(&c.masters, "masters", 3, "number of control plane VMs")
	flag.IntVar(&c.workers, "workers", 3, "number of compute VMs")
	flag.StringVar(&c.clusterName, "cluster-name", "ocp1", "OpenShift cluster name, prefix of the VM names")
	flag.StringVar(&c.username, "username", "administrator@vsphere.local", "the only user name accepted by Login")
	flag.StringVar(&c.password, "password", "", "the only password accepted by Login (required)")
	flag.StringVar(&c.state, "state", "", "path of the JSON state file written (atomically) once listening")
	flag.IntVar(&c.maxObjects, "max-objects", 0, "PropertyCollector policy: at most N objects per RetrievePropertiesEx page (0: no limit)")
	flag.StringVar(&c.tlsCert, "tlscert", "", "PEM certificate the server presents (with -tlskey); default govmomi's built-in test certificate")
	flag.StringVar(&c.tlsKey, "tlskey", "", "PEM key of -tlscert")
	flag.Parse()

	if flag.NArg() != 0 {
		log.Fatalf("unexpected arguments: %v", flag.Args())
	}
	if c.hosts < 1 {
		log.Fatal("-hosts must be at least 1")
	}
	if c.clusters < 1 {
		log.Fatal("-vsphere-clusters must be at least 1")
	}
	if c.masters < 0 || c.workers < 0 {
		log.Fatal("-masters and -workers must not be negative")
	}
	if c.maxObjects < 0 {
		log.Fatal("-max-objects must not be negative")
	}
	if c.clusterName == "" {
		log.Fatal("-cluster-name must not be empty")
	}
	if c.username == "" || c.password == "" {
		log.Fatal("-username and -password must not be empty (credentials are enforced)")
	}
	return c
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("vcsim-twin: ")
	cfg := parseFlags()
	serverMaxObjects = int32(cfg.maxObjects)

	model := simulator.VPX()
	model.Datacenter = 1
	model.Cluster = cfg.clusters
	model.ClusterHost = cfg.hosts
	model.Host = 0      // no standalone host
	model.Machine = 0   // no DC0_C0_RP0_VM* VMs
	model.Portgroup = 0 // no DVS0 / DC0_DVPG0: the project's DVS is created below
	model.Datastore = 1 // LocalDS_0, needed to create the VMs
	model.Pool = 0
	model.App = 0
	model.Pod = 0
	model.Folder = 0

	if err := model.Create(); err != nil {
		log.Fatalf("creating the model: %v", err)
	}
	defer model.Remove()

	// The twin's corrections of vcsim 0.24 (README, "Deviations from vcsim 0.24 that the
	// twin corrects"): per-host standard port groups, before the inventory uses them.
	installNetworkSystems()

	ctx := context.Background()
	vms, err := buildInventory(ctx, model.Service, cfg)
	if err != nil {
		model.Remove()
		log.Fatalf("building the inventory: %v", err)
	}

	tw := newTwin()
	syncStandardNetworks()
	seedUplinks()
	tw.versionNewPortgroups()
	versionVMs()

	// Credentials are enforced by SessionManager.Login against Service.Listen.User.
	model.Service.Listen = &url.URL{
		Host: cfg.listen,
		User: url.UserPassword(cfg.username, cfg.password),
	}
	// No certificate given: the server uses govmomi's built-in self-signed test
	// certificate (httptest's localhost certificate, SANs 127.0.0.1, ::1, example.com;
	// a 1024-bit key that OpenSSL's default security level refuses to verify). ctl.py gives
	// one signed by a CA of the twin's own, as a real vCenter presents one signed by its VMCA.
	model.Service.TLS = new(tls.Config)
	if cfg.tlsCert != "" {
		pair, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			log.Fatalf("loading -tlscert/-tlskey: %v", err)
		}
		model.Service.TLS.Certificates = []tls.Certificate{pair}
	}

	server := model.Service.NewServer()

	// NewServer has already started serving, but nobody knows the port before the
	// state file is written below, so no request can race with this assignment.
	tw.inner = server.Config.Handler
	server.Config.Handler = tw

	addr := server.Listener.Addr().(*net.TCPAddr)
	host := server.URL.Hostname()
	port := addr.Port
	sdkURL := url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: "/sdk"}

	st := stateFile{
		URL:        sdkURL.String(),
		Host:       host,
		Port:       port,
		Username:   cfg.username,
		Password:   cfg.password,
		Datacenter: "DC0",
		Cluster:    "DC0_C0",
		VMs:        vms,
	}
	if cfg.clusters > 1 {
		for i := 0; i < cfg.clusters; i++ {
			st.Clusters = append(st.Clusters, clusterNameOf(i))
		}
	}

	if cfg.state != "" {
		if err := writeAtomically(cfg.state, st); err != nil {
			server.Close()
			model.Remove()
			log.Fatalf("writing state file: %v", err)
		}
	}
	log.Printf("listening on %s (%d cluster(s) of %d hosts, %d VMs)", sdkURL.String(), cfg.clusters, cfg.hosts, len(vms))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	s := <-sig
	log.Printf("%s received, stopping", s)

	server.Close()
	if cfg.state != "" {
		_ = os.Remove(cfg.state)
	}
}

// writeAtomically writes v as JSON to a temporary file next to path and renames it.
func writeAtomically(path string, v interface{}) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')

	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := ioutil.TempFile(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// The state file holds the password: keep it private to the user.
	if err := os.Chmod(tmp, 0o600); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}
