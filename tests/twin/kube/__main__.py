"""python -m twin.kube: run the Kubernetes API emulator (tests/twin/README.md, "Process 2")."""

import argparse
import importlib
import importlib.util
import json
import logging
import os
import secrets
import signal
import sys
import tempfile
import threading

import yaml

from .server import KubeServer
from .store import Store
from .tls import make_certificates

LOG = logging.getLogger("twin.kube")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m twin.kube", description=__doc__)
    parser.add_argument("--listen", default="127.0.0.1:0", help="host:port (port 0 picks a free port)")
    parser.add_argument("--state-dir", default=".twin", help="where kube.json, kubeconfig and the certificates go")
    parser.add_argument("--vcsim-state", help="vcsim.json written by the vcsim twin (seed state mirrors it)")
    parser.add_argument("--probe-interval", type=float, default=1.0, help="egress IP reachability probe interval (s)")
    parser.add_argument("--token", help="bearer token clients must send (random by default)")
    parser.add_argument("--echo-target", default="192.0.2.10:8080", help="simulated echo service off the cluster")
    parser.add_argument("--no-controllers", action="store_true", help="serve the API only: no seed state, no controllers")
    parser.add_argument("--nmstate-version", default=None,
                        help="nmstate release of the NMState handler (default 2.2.38: routes must name kernel interfaces)")
    parser.add_argument("--nns-refresh", type=float, default=None,
                        help="seconds between NodeNetworkState refreshes (default 60, as kubernetes-nmstate)")
    parser.add_argument("--nmstate-retry-backoff", type=float, default=None,
                        help="first retry backoff of a failing enactment, newer handlers only (default 1 s)")
    parser.add_argument("--tuned-delay", type=float, default=None,
                        help="seconds before TuneD applies a changed Profile (default 3)")
    parser.add_argument("--carrier-loss", choices=["remove", "keep"], default="remove",
                        help="NetworkManager when a secondary vNIC loses its carrier: remove its address (default) or keep it "
                             "(ignore-carrier)")
    parser.add_argument("--carrier-loss-delay", type=float, default=4.0,
                        help="seconds before NetworkManager acts on a lost carrier (LINK_DISCONNECT_DELAY, default 4)")
    parser.add_argument("--dual-stack", action="store_true",
                        help="dual-stack cluster: nodes with IPv4 and IPv6 addresses, IPv6 cluster and service networks")
    parser.add_argument("--log-level", default="WARNING")
    return parser.parse_args(argv)


def write_atomic(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def kubeconfig(url, ca_file, token):
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "twin", "cluster": {"server": url, "certificate-authority": ca_file}}],
        "users": [{"name": "twin", "user": {"token": token}}],
        "contexts": [{"name": "twin", "context": {"cluster": "twin", "user": "twin", "namespace": "default"}}],
        "current-context": "twin",
        "preferences": {},
    }


def start_controllers(store, args):
    """Seed the store and start twin.controllers; None when the package does not exist."""
    if importlib.util.find_spec("twin.controllers") is None:
        LOG.warning("twin.controllers is not available: serving the API without seed state or controllers")
        return None
    controllers = importlib.import_module("twin.controllers")
    vcsim_state = {}
    if args.vcsim_state:
        with open(args.vcsim_state) as handle:
            vcsim_state = json.load(handle)
    vcsim_url = "https://%s:%s" % (vcsim_state["host"], vcsim_state["port"]) if vcsim_state.get("port") else None
    importlib.import_module("twin.controllers.hostnet").configure_stack(args.dual_stack)
    controllers.seed.seed(store, vcsim_state)
    importlib.import_module("twin.controllers.hostnet").configure_carrier(args.carrier_loss, args.carrier_loss_delay)
    nmstate = {key: value for key, value in (("version", args.nmstate_version), ("refresh", args.nns_refresh),
                                             ("retry_backoff", args.nmstate_retry_backoff)) if value is not None}
    return controllers.start(store, vcsim_url=vcsim_url, probe_interval=args.probe_interval, echo_target=args.echo_target,
                             nmstate=nmstate, tuned_options={} if args.tuned_delay is None else {"delay": args.tuned_delay})


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    os.makedirs(args.state_dir, exist_ok=True)
    state_dir = os.path.abspath(args.state_dir)
    token = args.token or secrets.token_urlsafe(32)
    certs = make_certificates(state_dir)
    store = Store()
    runner = None
    if not args.no_controllers:
        try:
            runner = start_controllers(store, args)
        except Exception as err:
            LOG.exception("twin.controllers failed to seed or start")
            print("twin.kube: twin.controllers failed to seed or start: %s: %s" % (type(err).__name__, err), file=sys.stderr)
            return 1
    host, port = args.listen.rsplit(":", 1) if ":" in args.listen else ("127.0.0.1", args.listen)
    server = KubeServer((host or "127.0.0.1", int(port)), store, token, certs["cert_file"], certs["key_file"], runner)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *args: stop.set())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="twin-kube-http", daemon=True)
    thread.start()
    publish(server, state_dir, certs["ca_file"], token)
    stop.wait()
    server.stop()
    if runner is not None:
        runner.stop()
    return 0


def publish(server, state_dir, ca_file, token):
    """Write kubeconfig then kube.json (atomically): kube.json appearing means the server is listening."""
    url = "https://127.0.0.1:%d" % server.port
    config_path = os.path.join(state_dir, "kubeconfig")
    write_atomic(config_path, yaml.safe_dump(kubeconfig(url, ca_file, token), default_flow_style=False))
    info = {"url": url, "host": "127.0.0.1", "port": server.port, "token": token, "ca_file": ca_file,
            "kubeconfig": config_path, "pid": os.getpid()}
    write_atomic(os.path.join(state_dir, "kube.json"), json.dumps(info, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
