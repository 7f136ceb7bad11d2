"""The generated protobuf messages (``baton_pb2``) and gRPC stubs (``baton_pb2_grpc``)
of baton's wire contract, remote/proto/baton/v1/baton.proto.

scripts/genproto writes them (and the type stubs, ``baton_pb2.pyi``) with the
grpcio-tools that python/uv.lock pins at grpcio's version; they need grpcio and protobuf
at least as new as that generator's (the remote extra of pyproject.toml); do not
edit them by hand. ``baton.remote`` is the API to use; import these only to build
messages it does not cover.
"""
