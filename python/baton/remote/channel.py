"""Client connections: targets, TLS, keys, deadlines and errors of every call."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import grpc

from .errors import ConfigError, error_from_rpc
from .keys import AUTHORIZATION, BEARER, _check_key

__all__ = ["DEFAULT_TIMEOUT", "parse_target"]

#: The deadline of each call, in seconds, unless the caller gives another.
DEFAULT_TIMEOUT = 30.0


def parse_target(target: str) -> tuple[str, bool, str]:
    """Splits a target into the address to dial, whether it asks for TLS, and its path,
    as the Go side does (remote.ParseTarget): "grpc://host:port/NAME" is plaintext,
    "grpcs://host:port/NAME" TLS, the path optional; anything else ("host:port",
    "unix:/path", "dns:///host:port") is a gRPC target dialed as it is, with no path."""
    if not isinstance(target, str) or not target:
        raise ConfigError(f"target {target!r}: want HOST:PORT or grpc://HOST:PORT")
    scheme, sep, rest = target.partition("://")
    if not sep or scheme not in ("grpc", "grpcs"):
        return target, False, ""
    u = urlsplit(target)
    if not rest or not u.netloc or u.username or u.password or u.query or u.fragment:
        raise ConfigError(f"target {target!r}: want {scheme}://HOST:PORT or {scheme}://HOST:PORT/NAME")
    try:
        port = u.port
    except ValueError:
        port = None
    if port is None:
        raise ConfigError(f"target {target!r} has no port")
    path = u.path.strip("/")
    if "/" in path:
        raise ConfigError(f"target {target!r}: the path names one agent or environment")
    return u.netloc, scheme == "grpcs", path


def _read_pem(v: str | bytes | os.PathLike[str], what: str) -> bytes:
    if isinstance(v, bytes):
        return v
    try:
        with open(v, "rb") as f:
            return f.read()
    except OSError as e:
        raise ConfigError(f"{what}: {e}") from None


class Connection:
    """A channel to one server and what every call on it shares: the key's metadata,
    the deadline, and errors turned into RemoteError. Safe for concurrent use, as
    grpc channels are."""

    def __init__(
        self,
        target: str,
        *,
        key: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        tls: None | bool | str | bytes | os.PathLike[str] = None,
        server_name: str | None = None,
        max_message_bytes: int | None = None,
        wait_ready: bool = False,
        options: tuple[tuple[str, object], ...] = (),
    ):
        addr, want_tls, path = parse_target(target)
        if timeout is not None and not timeout > 0:
            raise ConfigError(f"timeout {timeout!r}: want a number of seconds > 0, or None for no deadline")
        if key is not None:
            err = _check_key(key)
            if err:
                raise ConfigError(f"the key {err}")
        self.addr = addr
        self.path = path
        self.timeout = timeout
        self.wait_ready = bool(wait_ready)
        self.metadata = ((AUTHORIZATION, BEARER + key),) if key is not None else ()
        opts = list(options)
        if max_message_bytes is not None:
            opts += [
                ("grpc.max_receive_message_length", int(max_message_bytes)),
                ("grpc.max_send_message_length", int(max_message_bytes)),
            ]
        if server_name is not None:
            opts.append(("grpc.ssl_target_name_override", server_name))
        if tls is None or tls is False:
            tls = want_tls or None
        if tls is not None:
            roots = None if tls is True else _read_pem(tls, "tls (the CA certificates)")
            self.channel = grpc.secure_channel(addr, grpc.ssl_channel_credentials(root_certificates=roots), options=opts)
        else:
            self.channel = grpc.insecure_channel(addr, options=opts)

    def call(self, rpc, request, method: str, target: str = "", *, opening: bool = False):
        """Calls a unary method (a stub's attribute) under the deadline; raises the
        RemoteError of a failure. The opening call of a client waits, within the
        deadline, for a server that is not up yet when the connection was made with
        ``wait_ready``; any other call fails at once (Unavailable) without a server."""
        try:
            wait = opening and self.wait_ready
            return rpc(request, timeout=self.timeout, metadata=self.metadata, wait_for_ready=wait)
        except grpc.RpcError as e:
            raise error_from_rpc(e, addr=self.addr, method=method, target=target) from None

    def close(self) -> None:
        """Closes the channel; calls in flight fail."""
        self.channel.close()
