"""An S3 endpoint on 127.0.0.1 (moto's server, in a thread) for the object-store tests."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest


@pytest.fixture()
def s3_bucket() -> Iterator[tuple[str, dict[str, str]]]:
    """A fresh bucket on a private moto S3 server: yields (``s3://bucket``, storage options).

    The options are Lance's key names, which is what a user passes to ``Index.open``; they carry
    the endpoint, so no AWS configuration of the machine is read or needed.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "install moto[server]": moto[s3] + flask is enough
        server_mod = pytest.importorskip("moto.server", reason="moto[s3] and flask not installed")
    from pyarrow import fs

    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        opts = {
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "aws_region": "us-east-1",
            "aws_endpoint": f"http://{host}:{port}",
            "allow_http": "true",
        }
        s3 = fs.S3FileSystem(
            access_key="testing",
            secret_key="testing",
            region="us-east-1",
            endpoint_override=f"{host}:{port}",
            scheme="http",
            allow_bucket_creation=True,
        )
        s3.create_dir("ragsieve-test")
        yield "s3://ragsieve-test", opts
    finally:
        server.stop()
