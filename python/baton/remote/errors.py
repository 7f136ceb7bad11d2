"""Errors of baton.remote, and the google.rpc status details that name a bad field.

A failed call raises a RemoteError subclass chosen by its gRPC status code, as the Go
side's sentinels are (remote/errors.go): Unauthenticated (and PermissionDenied, one of
them), InvalidArgument, NotFound, Unavailable, DeadlineExceeded, and Rejected for the
other refusals. Each also derives
from the builtin exception a caller would catch without knowing gRPC (ValueError,
LookupError, ConnectionError, TimeoutError, PermissionError).

Servers of the contract send INVALID_ARGUMENT with a google.rpc.BadRequest detail that
names the field ("observation.data"); both sides of this package read and write it. The
google.rpc messages come from googleapis-common-protos when it is installed and are
otherwise built here from their descriptors (Debian packages no Python googleapis).
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

import grpc

__all__ = [
    "ConfigError",
    "DeadlineExceeded",
    "FieldError",
    "InvalidArgument",
    "Mismatch",
    "NotFound",
    "PermissionDenied",
    "Rejected",
    "RemoteError",
    "Unauthenticated",
    "Unavailable",
]

#: The trailing metadata that carries a google.rpc.Status, serialized.
STATUS_DETAILS_KEY = "grpc-status-details-bin"
_BAD_REQUEST_URL = "type.googleapis.com/google.rpc.BadRequest"


class ConfigError(ValueError):
    """An invalid argument of this package's own API: an address, a key, a space, a
    policy. Raised before anything goes on the wire."""


class FieldError(ValueError):
    """A malformed field of a message: ``field`` is its path as in the .proto
    ("observation.data"), ``reason`` says what is wrong and what was wanted."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class Mismatch(ValueError):
    """The remote end describes an agent or environment other than the caller expects,
    or answers with a message that does not fit it (an action outside the action space,
    an observation of the wrong length)."""


class RemoteError(Exception):
    """A call that failed with a gRPC status.

    ``code`` is the grpc.StatusCode, ``message`` the status message, ``addr`` the
    server's address, ``method`` the service method ("EnvService/Step"), ``target`` what
    the call addressed ("env maze", "agent strategy"; "" for nothing in particular), and
    ``field``/``reason`` the first field a BadRequest detail names (None without one).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        addr: str = "",
        method: str = "",
        target: str = "",
        field: str | None = None,
        reason: str | None = None,
    ):
        self.code = code
        self.message = message
        self.addr = addr
        self.method = method
        self.target = target
        self.field = field
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.target} at {self.addr}" if self.target else self.addr
        out = f"remote: {where}: {self.method}: {self.code.name}"
        return f"{out}: {self.message}" if self.message else out


class Unauthenticated(RemoteError, PermissionError):
    """The server refused the key: missing, wrong, or not granting what was called."""


class PermissionDenied(Unauthenticated):
    """The server knows the key, but it does not grant the agent or environment called;
    the message names those it grants."""


class InvalidArgument(RemoteError, ValueError):
    """The server rejected a request as malformed; ``field`` names the field."""


class NotFound(RemoteError, LookupError):
    """No such agent, environment, session or trial on the server."""


class Unavailable(RemoteError, ConnectionError):
    """The server cannot be reached, or went away during the call."""


class DeadlineExceeded(RemoteError, TimeoutError):
    """The server did not answer within the call's deadline."""


class Rejected(RemoteError):
    """The server refused the call for another reason (a step in the wrong state, too
    many sessions, a failing policy); the message says why."""


_BY_CODE = {
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.CANCELLED: RemoteError,
}


def error_from_rpc(err: grpc.RpcError, *, addr: str, method: str, target: str = "") -> RemoteError:
    """The RemoteError of a failed call (a grpc.RpcError that is also a grpc.Call)."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    message = err.details() if hasattr(err, "details") else str(err)
    field = reason = None
    if code == grpc.StatusCode.INVALID_ARGUMENT and hasattr(err, "trailing_metadata"):
        violation = _first_violation(err.trailing_metadata() or ())
        if violation is not None:
            field, reason = violation
    cls = _BY_CODE.get(code, Rejected)
    return cls(code, message or "", addr=addr, method=method, target=target, field=field, reason=reason)


# ---------------------------------------------------------------------------------
# google.rpc.Status and google.rpc.BadRequest.

_messages = None


def _rpc_messages():
    """(Status, BadRequest) message classes: googleapis-common-protos' when installed,
    else built in a private descriptor pool (so as not to clash with a later install)."""
    global _messages
    if _messages is not None:
        return _messages
    try:
        from google.rpc import error_details_pb2, status_pb2  # type: ignore

        _messages = (status_pb2.Status, error_details_pb2.BadRequest)
        return _messages
    except ImportError:
        pass
    from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    any_file = descriptor_pb2.FileDescriptorProto()
    any_pb2.DESCRIPTOR.CopyToProto(any_file)
    pool.Add(any_file)
    f = descriptor_pb2.FileDescriptorProto(
        name="google/rpc/baton_status_details.proto",
        package="google.rpc",
        syntax="proto3",
        dependency=["google/protobuf/any.proto"],
    )
    st = f.message_type.add(name="Status")
    st.field.add(name="code", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    st.field.add(name="message", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    st.field.add(
        name="details", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".google.protobuf.Any"
    )
    br = f.message_type.add(name="BadRequest")
    fv = br.nested_type.add(name="FieldViolation")
    fv.field.add(name="field", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    fv.field.add(name="description", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    br.field.add(
        name="field_violations",
        number=1,
        type=F.TYPE_MESSAGE,
        label=F.LABEL_REPEATED,
        type_name=".google.rpc.BadRequest.FieldViolation",
    )
    pool.Add(f)

    def cls(name):
        desc = pool.FindMessageTypeByName(name)
        get = getattr(message_factory, "GetMessageClass", None)
        return get(desc) if get is not None else message_factory.MessageFactory(pool).GetPrototype(desc)

    _messages = (cls("google.rpc.Status"), cls("google.rpc.BadRequest"))
    return _messages


def bad_request_details(code: grpc.StatusCode, message: str, violations: Sequence[tuple[str, str]]) -> bytes:
    """The serialized google.rpc.Status of an INVALID_ARGUMENT status with a
    BadRequest detail holding one FieldViolation per (field, description)."""
    Status, BadRequest = _rpc_messages()
    br = BadRequest()
    for field, description in violations:
        br.field_violations.add(field=field, description=description)
    st = Status(code=code.value[0], message=message)
    d = st.details.add()
    d.type_url = _BAD_REQUEST_URL
    d.value = br.SerializeToString()
    return st.SerializeToString()


def _first_violation(trailing_metadata) -> tuple[str, str] | None:
    for key, value in trailing_metadata:
        if key != STATUS_DETAILS_KEY:
            continue
        Status, BadRequest = _rpc_messages()
        try:
            st = Status.FromString(value)
            for d in st.details:
                if d.type_url == _BAD_REQUEST_URL:
                    br = BadRequest.FromString(d.value)
                    if br.field_violations:
                        v = br.field_violations[0]
                        return v.field, v.description
        except Exception:  # a malformed detail: the message still says what is wrong
            return None
    return None


class _Status(collections.namedtuple("_Status", ("code", "details", "trailing_metadata")), grpc.Status):
    """A grpc.Status for ServicerContext.abort_with_status."""


def abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> None:
    """Ends the call with a status; raises, as ServicerContext.abort does."""
    context.abort(code, message)


def abort_field(context: grpc.ServicerContext, fe: FieldError) -> None:
    """Ends the call with INVALID_ARGUMENT naming the field, with a BadRequest detail."""
    message = str(fe)
    details = bad_request_details(grpc.StatusCode.INVALID_ARGUMENT, message, [(fe.field, fe.reason)])
    context.abort_with_status(
        _Status(grpc.StatusCode.INVALID_ARGUMENT, message, ((STATUS_DETAILS_KEY, details),))
    )
