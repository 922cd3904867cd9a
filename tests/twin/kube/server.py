"""HTTPS server of the emulator: stdlib ThreadingHTTPServer, TLS, bearer token, request log, faults."""

import json
import logging
import socket
import ssl
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from . import authz, routing
from .api import Response, ResourceApi
from .errors import ApiError, internal, unauthorized
from .requestlog import Faults, RequestLog
from .twin_api import TwinApi

LOG = logging.getLogger(__name__)


class KubeServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, store, token, cert_file, key_file, runner=None):
        super().__init__(address, Handler)
        self.store = store
        self.token = token
        self.tokens = authz.Tokens(token)
        self.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ssl_context.load_cert_chain(cert_file, key_file)
        self.request_log = RequestLog()
        self.faults = Faults()
        self.shutting_down = threading.Event()
        self.api = ResourceApi(store, lambda: "%s:%d" % self.server_address[:2])
        self.api.shutting_down = self.shutting_down
        self.twin = TwinApi(store, self.request_log, self.faults, runner, self.tokens)

    @property
    def port(self):
        return self.server_address[1]

    def set_runner(self, runner):
        self.twin.runner = runner

    def stop(self):
        self.shutting_down.set()
        self.shutdown()
        self.server_close()

    def handle_error(self, request, client_address):
        # clients that hang up or refuse our certificate are not server errors
        LOG.debug("connection from %s ended with an error", client_address, exc_info=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out as separate TLS records: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per request
    disable_nagle_algorithm = True
    server_version = "twin-kube-apiserver"
    sys_version = ""

    def setup(self):
        # the TLS handshake runs here, in the request's thread, so one slow client cannot stall accept()
        self.request = self.server.ssl_context.wrap_socket(self.request, server_side=True)
        super().setup()

    def log_message(self, format, *args):
        LOG.debug("%s %s", self.address_string(), format % args)

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_DELETE(self):
        self._handle("DELETE")

    # ------------------------------------------------------------------ request flow

    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()  # kubectl streams `replace --raw -f` bodies without a Content-Length
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self):
        body = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    def _identity(self):
        return self.server.tokens.identity(self.headers.get("Authorization"))

    def _authorized(self):
        """The twin-only endpoints take the admin token only."""
        identity = self._identity()
        return identity is not None and identity.admin

    def _handle(self, method):
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        body = self._read_body()
        twin_path = url.path.startswith("/_twin/")
        if twin_path:
            if not self._authorized():
                self._send(Response(401, unauthorized().status()))
            else:
                self._send(self.server.twin.handle(method, url.path, query, body))
            return
        entry = {"verb": method.lower(), "method": method, "path": url.path, "resource": None, "namespace": None,
                 "name": None, "subresource": None, "dry_run": "All" in query.get("dryRun", [])}
        response = self._api_response(method, url.path, query, body, entry)
        entry["code"] = response.code
        self.server.request_log.record(entry)
        self._send(response)

    def _api_response(self, method, path, query, body, entry):
        try:
            target = routing.resolve(self.server.store.registry, method, path, query)
        except ApiError as err:
            target, route_error = None, err
        else:
            route_error = None
            entry.update(target.log_fields())
            entry["verb"] = "discovery" if target.discovery else target.verb
        identity = self._identity()
        if identity is None:
            return Response(401, unauthorized().status())
        try:
            # Impersonate-* headers (kubectl --as): the acting identity must be allowed to impersonate each part
            identity = authz.impersonate(self.server.store, identity, self.headers)
        except ApiError as err:
            return Response(err.code, err.status())
        if not identity.admin:
            entry["user"] = identity.name
        if getattr(identity, "impersonated_by", None):
            entry["impersonated_by"] = identity.impersonated_by
        try:
            if route_error is not None:
                if not identity.admin and not path.startswith(("/api/", "/apis/")):
                    authz.check_path(self.server.store, identity, method, path)
                raise route_error
            # the authorizer runs before the handler, so a 404 of a path that names nothing served stays a 404
            authz.check(self.server.store, identity, target, method, query)
            target.identity = identity
            return self._run(target, method, path, query, body, entry)
        except ApiError as err:
            body, content_type, headers = err.response_parts()
            return Response(err.code, body, content_type=content_type, headers=headers)
        except Exception as err:
            LOG.exception("internal error on %s %s", method, path)
            return Response(500, internal(str(err)).status())

    def _run(self, target, method, path, query, body, entry):
        fault = self.server.faults.take(entry["verb"], path)
        if fault is not None:
            if fault.code == "timeout":
                time.sleep(fault.seconds)
            raise fault.error(target.rtype, target.name)
        if target.discovery:
            return self.server.api.discovery(target, query, self.headers)
        if target.verb == "delete" and body:
            entry["dry_run"] = entry["dry_run"] or "All" in (_json_or_empty(body).get("dryRun") or [])
        return self.server.api.handle(target, method, query, self.headers, body)

    # ------------------------------------------------------------------ responses

    def _headers(self, response):
        self.send_header("Content-Type", response.content_type)
        if "Cache-Control" not in response.headers:
            self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Audit-Id", str(uuid.uuid4()))
        for name, value in response.headers.items():
            self.send_header(name, value)

    def _send(self, response):
        if response.stream is not None:
            self._send_stream(response)
            return
        if isinstance(response.body, bytes):
            payload = response.body
        elif isinstance(response.body, (dict, list)):
            payload = json.dumps(response.body).encode("utf-8")
        else:
            payload = (response.body or "").encode("utf-8")
        self.send_response(response.code)
        self._headers(response)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_stream(self, response):
        """Chunked transfer of a watch; ends with the last chunk when the stream ends."""
        self.send_response(response.code)
        self._headers(response)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        try:
            for chunk in response.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            self.close_connection = True
        finally:
            close = getattr(response.stream, "close", None)
            if close:
                close()


def _json_or_empty(body):
    try:
        value = json.loads(body)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
