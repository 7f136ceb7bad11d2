"""The generated protobuf messages (``baton_pb2``) and gRPC stubs (``baton_pb2_grpc``)
of baton's wire contract, remote/proto/baton/v1/baton.proto.

scripts/genproto writes them with Debian 12's protoc 3.21 and grpc_python_plugin 1.51,
the generators of the python3-protobuf and python3-grpcio runtimes they run on; do not
edit them by hand. ``baton.remote`` is the API to use; import these only to build
messages it does not cover.
"""
