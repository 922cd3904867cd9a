"""Start/stop the emulator as a subprocess, for the self-tests and other fixtures."""

import json
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Emulator:
    """A running `python -m twin.kube`; `info` is its kube.json."""

    def __init__(self, state_dir, *extra_args, token=None, timeout=10.0):
        self.state_dir = str(state_dir)
        args = [sys.executable, "-m", "twin.kube", "--listen", "127.0.0.1:0", "--state-dir", self.state_dir]
        if token:
            args += ["--token", token]
        env = dict(os.environ, PYTHONPATH=TESTS_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
        os.makedirs(self.state_dir, exist_ok=True)
        # output goes to a file: an undrained pipe would block the server once it fills
        self.log_path = os.path.join(self.state_dir, "kube.log")
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(args + list(extra_args), env=env, stdout=log, stderr=subprocess.STDOUT)
        self.info = self._wait(os.path.join(self.state_dir, "kube.json"), timeout)

    def _wait(self, path, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if os.path.exists(path):
                with open(path) as handle:
                    info = json.load(handle)
                if info.get("pid") == self.process.pid:
                    return info
            if self.process.poll() is not None:
                with open(self.log_path) as log:
                    raise RuntimeError("twin.kube exited with status %s: %s" % (self.process.returncode, log.read()))
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("twin.kube did not write %s within %.0fs" % (path, timeout))

    @property
    def kubeconfig(self):
        return self.info["kubeconfig"]

    def ssl_context(self):
        return ssl.create_default_context(cafile=self.info["ca_file"])

    def raw(self, method, path, body=None, token=None, content_type="application/json", context=None):
        """One HTTPS request without the kubernetes client: (status, headers, body bytes)."""
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.info["url"] + path, data=data, method=method)
        if token is not False:
            request.add_header("Authorization", "Bearer " + (token if token is not None else self.info["token"]))
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, context=context or self.ssl_context(), timeout=30) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.headers, err.read()

    def raw_accept(self, path, accept):
        """GET with an Accept header: (status, headers, body bytes)."""
        request = urllib.request.Request(self.info["url"] + path, headers={"Authorization": "Bearer " + self.info["token"],
                                                                           "Accept": accept})
        try:
            with urllib.request.urlopen(request, context=self.ssl_context(), timeout=30) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.headers, err.read()

    def twin(self, method, path, body=None, token=None):
        """Call a /_twin/ endpoint; returns (status, parsed JSON)."""
        status, _headers, payload = self.raw(method, path, body, token)
        return status, json.loads(payload or b"null")

    def token_kubeconfig(self, path, **subject):
        """Mint a token for a user (user=, groups=) or a ServiceAccount (serviceaccount="ns/name") and write its kubeconfig."""
        return write_token_kubeconfig(path, self.info, self.twin("POST", "/_twin/tokens", subject)[1]["token"])

    def stop(self, timeout=5.0):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def write_token_kubeconfig(path, info, token):
    """A kubeconfig like the twin's own (info: kube.json) with another bearer token; returns its path."""
    from .__main__ import kubeconfig  # pylint: disable=import-outside-toplevel
    with open(str(path), "w") as handle:
        json.dump(kubeconfig(info["url"], info["ca_file"], token), handle)
    return str(path)
