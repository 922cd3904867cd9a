"""Simulated Machine API on vSphere: seed MachineSet and Machines, nodelink, and the network count check.

Follows openshift/machine-api-operator (DOMAIN.md section 6):

- pkg/controller/vsphere/reconciler.go `reconcileNetwork`: the vSphere machine controller compares
  `len(providerSpec.network.devices)` with the number of virtual ethernet cards of the Machine's VM
  (`getNetworkStatusList` counts every card, connected or not) and fails the reconcile with
  `invalid network count: expected=N current=M`.
- pkg/controller/vsphere/actuator.go `Update` / `handleMachineError`: that error is recorded as a
  Warning event with reason `FailedUpdate` and message `<machine>: reconciler failed to Update
  machine: <error>` on the Machine; pkg/controller/machine/controller.go then only requeues: the
  Machine's phase and status are not changed by it.
- reconciler.go `findVM`: a Machine's VM is the VM whose instance UUID is the Machine's UID, else
  the VM named like the Machine. The twin's VMs exist before their Machines (vcsim builds them), so
  they are found by name; `reconcileProviderID` sets `spec.providerID` to `vsphere://<BIOS UUID>`.
- pkg/controller/nodelink: a Node whose providerID equals a Machine's gets the annotation
  `machine.openshift.io/machine: <namespace>/<name>`, and the Machine gets `status.nodeRef`.

Seed (an IPI cluster on vSphere): one worker MachineSet `<infrastructure name>-worker-0` owning a
Machine per worker VM, and a Machine per master VM owned by no MachineSet (the
ControlPlaneMachineSet, whose CRD the twin does not serve, manages them). Machines are named like
their VMs (on a real cluster both get the `<machineset>-<random>` name at clone time). The twin does
not clone or delete VMs, so MachineSet replicas are not acted upon.

Deliberate simplification: upstream requeues a failing Machine and records the event again on
every attempt (client-go counts it up); the twin records it once when a mismatch appears or
changes, so a quiet cluster writes nothing (Runner.settle) and the event still shows the fault.
"""

import hashlib
import time

from twin.kube.errors import ApiError

from . import k8s
from .writer import create_with_status

NAMESPACE = "openshift-machine-api"
MACHINES = "machines.machine.openshift.io"
MACHINESETS = "machinesets.machine.openshift.io"
API_VERSION = "machine.openshift.io/v1beta1"
NODE_ANNOTATION = "machine.openshift.io/machine"
CLUSTER_LABEL = "machine.openshift.io/cluster-api-cluster"
MACHINESET_LABEL = "machine.openshift.io/cluster-api-machineset"
ROLE_LABEL = "machine.openshift.io/cluster-api-machine-role"
TYPE_LABEL = "machine.openshift.io/cluster-api-machine-type"
COMPONENT = "vspherecontroller"
TIMESTAMP = "2024-11-20T10:00:00Z"


def infrastructure_name(name):
    """The infrastructure name seed.infrastructure gives the cluster (`<name>-<5 hex>`)."""
    return "%s-%s" % (name, hashlib.sha256(name.encode()).hexdigest()[:5])


def provider_spec(vcsim_state, vm, infra, role, domain=None):
    """The vSphere provider spec; with failure domains its workspace is the VM's domain (the installer's
    machines.go sets server, datacenter, folder and resourcePool from the failure domain's topology)."""
    datacenter = vcsim_state.get("datacenter") or "DC0"
    cluster = vm.get("cluster") or vcsim_state.get("cluster") or "DC0_C0"
    region, zone = (domain["region"], domain["zone"]) if domain else ("generated-region", "generated-zone")
    return {"value": {
        "apiVersion": API_VERSION, "kind": "VSphereMachineProviderSpec",
        "credentialsSecret": {"name": "vsphere-cloud-credentials"},
        "userDataSecret": {"name": "%s-user-data" % role},
        "template": "%s-rhcos-%s-%s" % (infra, region, zone),
        "numCPUs": 4, "numCoresPerSocket": 4, "memoryMiB": 16384, "diskGiB": 120,
        "network": {"devices": [{"networkName": nic["network"]} for nic in vm.get("nics") or []]},
        "workspace": {"server": vcsim_state.get("host") or "127.0.0.1", "datacenter": datacenter,
                      "datastore": "/%s/datastore/LocalDS_0" % datacenter, "folder": "/%s/vm/%s" % (datacenter, infra),
                      "resourcePool": "/%s/host/%s/Resources" % (datacenter, cluster)},
        "metadata": {"creationTimestamp": None},
    }}


def _labels(infra, role, machineset=None):
    labels = {CLUSTER_LABEL: infra, ROLE_LABEL: role, TYPE_LABEL: role}
    if machineset:
        labels[MACHINESET_LABEL] = machineset
    return labels


def machineset_object(vcsim_state, infra, workers, index=0, domain=None):
    name = "%s-worker-%d" % (infra, index)
    selector = {CLUSTER_LABEL: infra, MACHINESET_LABEL: name}
    template_vm = workers[0] if workers else {"nics": [{"network": "VM Network"}]}
    return {
        "apiVersion": API_VERSION, "kind": "MachineSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {CLUSTER_LABEL: infra},
                     "creationTimestamp": TIMESTAMP},
        "spec": {
            "replicas": len(workers),
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": _labels(infra, "worker", name)},
                         "spec": {"metadata": {}, "providerSpec": provider_spec(vcsim_state, template_vm, infra, "worker", domain)}},
        },
        "status": {"replicas": len(workers), "fullyLabeledReplicas": len(workers), "readyReplicas": len(workers),
                   "availableReplicas": len(workers), "observedGeneration": 1},
    }


def machine_object(vcsim_state, vm, infra, machineset=None, domain=None):
    role = "master" if vm.get("role") == "master" else "worker"
    meta = {"name": vm["name"], "namespace": NAMESPACE, "labels": _labels(infra, role, machineset and machineset["metadata"]["name"]),
            "annotations": {"machine.openshift.io/instance-state": "poweredOn"}}
    if machineset:
        meta["ownerReferences"] = [{"apiVersion": API_VERSION, "kind": "MachineSet", "name": machineset["metadata"]["name"],
                                    "uid": machineset["metadata"].get("uid", ""), "controller": True, "blockOwnerDeletion": True}]
    return {
        "apiVersion": API_VERSION, "kind": "Machine", "metadata": meta,
        "spec": {"metadata": {}, "providerSpec": provider_spec(vcsim_state, vm, infra, role, domain)},
        "status": {"phase": "Running", "lastUpdated": TIMESTAMP},
    }


def seed(store, vcsim_state, cluster_name, domains=()):
    """Create the MachineSet, then its Machines (they reference its UID) and the masters' Machines.

    With failure domains ([{name, region, zone, cluster}], seed.failure_domains) one worker MachineSet per domain
    (`<infra>-worker-<i>`, as the installer makes one compute MachineSet per failure domain) owns that domain's workers.
    Objects that already exist are left as they are; returns the objects created.
    """
    infra = infrastructure_name(cluster_name)
    vms = vcsim_state.get("vms") or []
    if not vms:
        return []
    created = []

    def create(resource, obj):
        try:
            created.append(create_with_status(store, resource, obj))
        except ApiError as error:
            if error.code != 409:
                raise
            return store.get(resource, obj["metadata"]["name"], namespace=NAMESPACE)
        return created[-1]

    groups = [(domain, [vm for vm in vms if vm.get("role") != "master" and vm.get("cluster") == domain["cluster"]])
              for domain in domains] or [(None, [vm for vm in vms if vm.get("role") != "master"])]
    owner, domain_of = {}, {}
    for index, (domain, workers) in enumerate(groups):
        machineset = create(MACHINESETS, machineset_object(vcsim_state, infra, workers, index, domain)) if workers else None
        owner.update((vm["name"], machineset) for vm in workers)
    for domain in domains:
        domain_of.update((vm["name"], domain) for vm in vms if vm.get("cluster") == domain["cluster"])
    for vm in vms:
        create(MACHINES, machine_object(vcsim_state, vm, infra, owner.get(vm["name"]), domain_of.get(vm["name"])))
    return created


class MachineAPI:
    """nodelink and the vSphere machine controller's network check, one round at a time."""

    def __init__(self):
        self._reported = {}  # machine name -> message of the event recorded for its current mismatch

    def reconcile(self, ctx):
        try:
            machines = ctx.store.list(MACHINES, namespace=NAMESPACE)
        except ApiError:
            return  # the Machine API CRDs are not served: a cluster without Machine API
        vms = {vm["name"]: vm for vm in ctx.inventory.vms}
        nodes = {k8s.provider_uuid(node): node for node in ctx.store.list("nodes") if k8s.provider_uuid(node)}
        for machine in machines:
            vm = vms.get(k8s.name_of(machine))  # findVM: by instance UUID = UID (never the case here), else by name
            if vm is None:
                continue
            machine = self._provider_id(ctx, machine, vm)
            self._nodelink(ctx, machine, nodes.get(str(vm.get("uuid", "")).lower()))
            self._network_count(ctx, machine, vm)

    def _provider_id(self, ctx, machine, vm):
        provider_id = "vsphere://%s" % vm["uuid"]
        if (machine.get("spec") or {}).get("providerID") == provider_id:
            return machine
        return ctx.writer.patch(MACHINES, machine, {"spec": {"providerID": provider_id}}) or machine

    def _nodelink(self, ctx, machine, node):
        if node is None:
            return
        key = "%s/%s" % (NAMESPACE, k8s.name_of(machine))
        if k8s.annotations_of(node).get(NODE_ANNOTATION) != key:
            ctx.writer.patch("nodes", node, {"metadata": {"annotations": {NODE_ANNOTATION: key}}})
        node_ref = {"kind": "Node", "name": k8s.name_of(node), "uid": node["metadata"].get("uid")}
        if (machine.get("status") or {}).get("nodeRef") != node_ref:
            ctx.writer.patch(MACHINES, machine, {"status": {"nodeRef": node_ref}}, subresource="status")

    def _network_count(self, ctx, machine, vm):
        name = k8s.name_of(machine)
        devices = (((machine.get("spec") or {}).get("providerSpec") or {}).get("value") or {}).get("network", {}).get("devices") or []
        expected, current = len(devices), len(vm.get("nics") or [])
        if expected == current:
            self._reported.pop(name, None)
            return
        message = "%s: reconciler failed to Update machine: invalid network count: expected=%d current=%d" % (name, expected, current)
        if self._reported.get(name) == message:
            return
        if ctx.writer.create("events", machine_event(machine, message, ctx.timestamp)) is not None:
            self._reported[name] = message


def machine_event(machine, message, timestamp):
    """The Warning event handleMachineError records (client-go: namespace of the object, named <object>.<hex ns>)."""
    meta = machine["metadata"]
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "%s.%x" % (meta["name"], time.time_ns()), "namespace": meta["namespace"]},
        "involvedObject": {"apiVersion": API_VERSION, "kind": "Machine", "name": meta["name"], "namespace": meta["namespace"],
                           "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")},
        "reason": "FailedUpdate", "message": message, "type": "Warning",
        "source": {"component": COMPONENT},
        "firstTimestamp": timestamp, "lastTimestamp": timestamp, "count": 1,
        "reportingComponent": COMPONENT, "reportingInstance": "",
    }
