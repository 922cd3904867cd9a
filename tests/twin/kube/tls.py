"""Self-signed CA and server certificate for the emulator, made with the `openssl` CLI.

EC P-256 keys: generated in milliseconds, so start-up stays fast. The server certificate
carries SAN IP:127.0.0.1 and DNS:localhost, so clients verify it against ca.crt.
"""

import os
import subprocess

_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certificates(state_dir, days=365, prefix="", ca_name="twin-kube-ca", server_name="twin-kube-apiserver"):
    """Write <prefix>ca.crt/ca.key/server.crt/server.key into state_dir; return their paths.

    The vCenter simulator gets a CA of its own (prefix "vcsim-"), as a real vCenter's certificate is signed by its VMCA.
    """
    paths = {name: os.path.join(state_dir, prefix + name) for name in ("ca.crt", "ca.key", "server.crt", "server.key", "server.csr")}
    ext = os.path.join(state_dir, prefix + "server.ext")
    with open(ext, "w") as handle:
        handle.write("basicConstraints=CA:FALSE\n"
                     "keyUsage=critical,digitalSignature,keyEncipherment\n"
                     "extendedKeyUsage=serverAuth\n"
                     "subjectKeyIdentifier=hash\n"
                     "authorityKeyIdentifier=keyid,issuer\n"
                     "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("req", "-x509", *_EC, "-keyout", paths["ca.key"], "-out", paths["ca.crt"], "-days", str(days),
             "-subj", "/CN=" + ca_name, "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _openssl("req", *_EC, "-keyout", paths["server.key"], "-out", paths["server.csr"], "-subj", "/CN=" + server_name)
    _openssl("x509", "-req", "-in", paths["server.csr"], "-CA", paths["ca.crt"], "-CAkey", paths["ca.key"],
             "-set_serial", str(int.from_bytes(os.urandom(8), "big")), "-out", paths["server.crt"], "-days", str(days),
             "-extfile", ext)
    for path in (paths["server.csr"], ext):
        os.unlink(path)
    for key in ("ca.key", "server.key"):
        os.chmod(paths[key], 0o600)
    return {"ca_file": paths["ca.crt"], "cert_file": paths["server.crt"], "key_file": paths["server.key"]}
