#!/usr/bin/python3
"""tests/check_grpc.py - the frontends' gRPC API (KServe v2 over gRPC) with a real client.

usage: check_grpc.py SYMPHONY SOURCE_DIR GRPC_BUILT

Starts schedd, a frontend (HTTPS and gRPC over TLS with a certificate made here by openssl, bearer
tokens) and two emulated backends, and talks to the frontend with Python's grpcio (Debian's
python3-grpcio), the messages compiled from runtime/grpc/inference.proto with protoc here:
  - TLS: a client that checks the certificate gets through, a plaintext one does not;
  - ServerLive, ServerReady, ModelReady (and an unknown model's NOT_FOUND), ServerMetadata,
    ModelMetadata (the model's input and output as the REST API gives them);
  - ModelInfer with raw_input_contents and with typed contents, with and without the batch
    dimension: the output (raw_output_contents) is the emulated executor's, the same bytes the
    REST API answers for the same input, and the id is echoed;
  - errors: no token or a wrong one UNAUTHENTICATED; an unknown model or version NOT_FOUND; a wrong
    input name, datatype, shape, byte count, element count, value range, output name, or a
    deadline above deadline_max_ms INVALID_ARGUMENT, in the REST API's words; the cluster still
    serves after them;
  - the repository extension on schedd's gRPC address: RepositoryIndex (and ready-only), unload
    and load with a token of repository_token_file (a client token refused), an inference refused
    NOT_FOUND while the model is out and served after; inference on schedd and the repository on a
    frontend UNIMPLEMENTED, naming where they are;
  - concurrency: 200 calls in flight from 8 threads, each answered once with its own output.
Skips (77) where the build has no gRPC or /usr/bin/python3 cannot import grpc (python3-grpcio).
Every wait is on readiness, bounded.
"""
import concurrent.futures
import importlib
import json
import os
import shutil
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77
TOKEN = "grpc-client-token-0123456789"
ADMIN = "grpc-admin-token-0123456789"
N = 1000  # the model's input: UINT8 [N]


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xffffffffffffffff
    return h


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    symphony, src, built = sys.argv[1], sys.argv[2], sys.argv[3]
    if built != "true":
        print("no gRPC in this build: skipped")
        return SKIP
    try:
        import grpc  # noqa: F401
    except ImportError as e:
        print("%s cannot import grpc (Debian: python3-grpcio): %s" % (sys.executable, e))
        return SKIP
    d = tempfile.mkdtemp(prefix="symphony-grpc-")
    procs = []
    ok = False
    try:
        ok = run(symphony, src, d, procs)
    finally:
        for name, p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if ok:
            shutil.rmtree(d)
        else:
            print("logs kept in", d)
    return 0 if ok else 1


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def wait_ready(url, procs, ctx, limit_s=60):
    end = time.time() + limit_s
    while time.time() < end:
        for name, p in procs:
            check(p.poll() is None, "%s exited with %s while the cluster started" % (name, p.returncode))
        try:
            with urllib.request.urlopen(url, timeout=2, context=ctx) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise AssertionError("%s not ready within %d s" % (url, limit_s))


def run(symphony, src, d, procs):
    import grpc
    # the protocol's messages, compiled here
    r = subprocess.run(["protoc", "--proto_path=" + os.path.join(src, "runtime", "grpc"), "--python_out=" + d,
                        os.path.join(src, "runtime", "grpc", "inference.proto")], capture_output=True, text=True)
    check(r.returncode == 0, "protoc: " + r.stderr)
    sys.path.insert(0, d)
    pb = importlib.import_module("inference_pb2")

    keys = os.path.join(d, "keys")
    subprocess.run([symphony, "keygen", "cluster", keys, "--frontends", "1", "--backends", "2", "--quiet"], check=True)
    tok = os.path.join(d, "client.tokens")
    with open(tok, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(tok, 0o600)
    adm = os.path.join(d, "admin.tokens")
    with open(adm, "w") as f:
        f.write(ADMIN + "\n")
    os.chmod(adm, 0o600)
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    os.chmod(key, 0o600)
    ctx = ssl.create_default_context(cafile=cert)
    base = 24000 + (os.getpid() % 400) * 20
    cfg = {"models": [{"name": "m", "alpha_ms": 1, "beta_ms": 1}], "slo_ms": 200,
           "runtime": {"keys_dir": keys, "frontends": 1, "backends": 2, "port_base": base, "input_bytes": N,
                       "grpc_base": base + 900, "http_token_file": tok, "deadline_max_ms": 5000,
                       "http_tls_cert": cert, "http_tls_key": key, "repository_token_file": adm,
                       "failure_ms": 3000}}
    cpath = os.path.join(d, "cluster.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f)
    for name, args in (("schedd", ["schedd", cpath]), ("frontend", ["frontend", cpath, "--id", "0"]),
                       ("backend0", ["backend", cpath, "--id", "0"]), ("backend1", ["backend", cpath, "--id", "1"])):
        log = open(os.path.join(d, name + ".log"), "w")
        procs.append((name, subprocess.Popen([symphony] + args, stdout=log, stderr=subprocess.STDOUT)))
    http = "https://127.0.0.1:%d" % (base + 1001)
    wait_ready(http + "/v2/health/ready", procs, ctx)

    plain = grpc.insecure_channel("127.0.0.1:%d" % (base + 901))
    try:
        grpc.channel_ready_future(plain).result(timeout=3)
        raise AssertionError("a plaintext gRPC channel got through to a TLS frontend")
    except grpc.FutureTimeoutError:
        pass
    plain.close()
    with open(cert, "rb") as f:
        creds = grpc.ssl_channel_credentials(f.read())
    ch = grpc.secure_channel("localhost:%d" % (base + 901), creds)  # frontend 0
    grpc.channel_ready_future(ch).result(timeout=10)
    sch = grpc.secure_channel("localhost:%d" % (base + 900), creds)  # schedd: the repository extension
    grpc.channel_ready_future(sch).result(timeout=10)

    def rpc(name, req_cls, resp_cls):
        return ch.unary_unary("/inference.GRPCInferenceService/" + name, request_serializer=req_cls.SerializeToString,
                              response_deserializer=resp_cls.FromString)

    live = rpc("ServerLive", pb.ServerLiveRequest, pb.ServerLiveResponse)
    ready = rpc("ServerReady", pb.ServerReadyRequest, pb.ServerReadyResponse)
    mready = rpc("ModelReady", pb.ModelReadyRequest, pb.ModelReadyResponse)
    smeta = rpc("ServerMetadata", pb.ServerMetadataRequest, pb.ServerMetadataResponse)
    mmeta = rpc("ModelMetadata", pb.ModelMetadataRequest, pb.ModelMetadataResponse)
    infer = rpc("ModelInfer", pb.ModelInferRequest, pb.ModelInferResponse)
    auth = [("authorization", "Bearer " + TOKEN)]

    def code_of(fn, req, md=None, timeout=10):
        try:
            fn(req, metadata=md, timeout=timeout)
            return grpc.StatusCode.OK, ""
        except grpc.RpcError as e:
            return e.code(), e.details()

    check(live(pb.ServerLiveRequest(), timeout=5).live, "ServerLive")
    check(ready(pb.ServerReadyRequest(), timeout=5).ready, "ServerReady")
    check(mready(pb.ModelReadyRequest(name="m"), timeout=5).ready, "ModelReady m")
    check(mready(pb.ModelReadyRequest(name="m", version="1"), timeout=5).ready, "ModelReady m version 1")
    c, msg = code_of(mready, pb.ModelReadyRequest(name="nope"))
    check(c == grpc.StatusCode.NOT_FOUND and "unknown model 'nope'" in msg, "ModelReady nope: %s %s" % (c, msg))
    sm = smeta(pb.ServerMetadataRequest(), timeout=5)
    check(sm.name == "symphony" and sm.version and "binary_tensor_data" in sm.extensions, "ServerMetadata %s" % sm)
    mm = mmeta(pb.ModelMetadataRequest(name="m"), timeout=5)
    with urllib.request.urlopen(http + "/v2/models/m", timeout=5, context=ctx) as r:
        rest = json.load(r)
    check(mm.name == "m" and list(mm.versions) == ["1"] and mm.platform == rest["platform"], "ModelMetadata %s" % mm)
    check([(t.name, t.datatype, list(t.shape)) for t in mm.inputs] ==
          [(t["name"], t["datatype"], t["shape"]) for t in rest["inputs"]], "inputs as REST's: %s %s" % (mm, rest))
    check([(t.name, t.datatype, list(t.shape)) for t in mm.outputs] ==
          [(t["name"], t["datatype"], t["shape"]) for t in rest["outputs"]], "outputs as REST's")

    def request(data, raw=True, batch=True, rid="", **kw):
        t = pb.ModelInferRequest.InferInputTensor(name=kw.get("name", "INPUT0"), datatype=kw.get("datatype", "UINT8"),
                                                  shape=kw.get("shape", [1, N] if batch else [N]))
        q = pb.ModelInferRequest(model_name=kw.get("model", "m"), model_version=kw.get("version", ""), id=rid,
                                 inputs=[t])
        if raw:
            q.raw_input_contents.append(bytes(data))
        else:
            t = q.inputs[0]
            t.contents.uint_contents.extend(list(data))
        for o in kw.get("outputs", []):
            q.outputs.add(name=o)
        if "deadline_ms" in kw:
            q.parameters["deadline_ms"].double_param = kw["deadline_ms"]
        return q

    def expect_output(resp, data, batch=True, rid=""):
        check(resp.model_name == "m" and resp.model_version == "1" and resp.id == rid, "response header %s" % resp)
        check(len(resp.outputs) == 1 and resp.outputs[0].name == "OUTPUT0" and resp.outputs[0].datatype == "UINT64",
              "response output %s" % resp.outputs)
        check(list(resp.outputs[0].shape) == ([1, 1] if batch else [1]), "output shape %s" % resp.outputs[0].shape)
        check(len(resp.raw_output_contents) == 1, "raw_output_contents")
        (got,) = struct.unpack("<Q", resp.raw_output_contents[0])
        check(got == fnv1a(bytes(data)), "output %x, the input's FNV-1a digest is %x" % (got, fnv1a(bytes(data))))
        return resp.raw_output_contents[0]

    def served(q, attempts=3):
        # an inference whose answer (not timing) is under test: a lone request is deferred to its
        # latest start, and on a loaded machine (CI) schedd can wake too late for it and drop it to
        # protect the SLO (UNAVAILABLE); it is sent again, at most twice (test_runtime's curl_infer)
        for attempt in range(attempts):
            try:
                return infer(q, metadata=auth, timeout=10)
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or "protect the SLO" not in (e.details() or "") \
                        or attempt == attempts - 1:
                    raise
                print("a lone request dropped to protect the SLO (a late wake-up); sent again", file=sys.stderr)

    data = bytes((i * 7 + 3) % 256 for i in range(N))
    out_raw = expect_output(served(request(data, rid="g-1")), data, rid="g-1")
    expect_output(served(request(data, raw=False)), data)
    expect_output(served(request(data, batch=False, outputs=["OUTPUT0"], deadline_ms=300)), data, batch=False)
    # REST gives the same output for the same input
    body = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "UINT8", "shape": [1, N], "data": list(data)}]})
    req = urllib.request.Request(http + "/v2/models/m/infer", data=body.encode(), method="POST",
                                 headers={"Authorization": "Bearer " + TOKEN})
    for attempt in range(3):  # (dropped to protect the SLO on a loaded machine: served(), above)
        try:
            with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
                rest_out = json.load(r)["outputs"][0]["data"][0]
            break
        except urllib.error.HTTPError as e:
            if e.code != 503 or attempt == 2:
                raise
    check(struct.pack("<Q", rest_out) == out_raw, "REST %x, gRPC %s" % (rest_out, out_raw.hex()))

    # errors, each with its code and the REST API's words
    bad = [
        (request(data), None, grpc.StatusCode.UNAUTHENTICATED, "bearer token"),
        (request(data), [("authorization", "Bearer wrong-token-0123456789")], grpc.StatusCode.UNAUTHENTICATED,
         "bearer token"),
        (request(data, model="nope"), auth, grpc.StatusCode.NOT_FOUND, "unknown model 'nope'"),
        (request(data, version="2"), auth, grpc.StatusCode.NOT_FOUND, "serves version 1 only"),
        (request(data, name="X"), auth, grpc.StatusCode.INVALID_ARGUMENT, "has no input 'X'"),
        (request(data, datatype="FP32"), auth, grpc.StatusCode.INVALID_ARGUMENT,
         "inputs[0].datatype: expected \"UINT8\""),
        (request(data, shape=[2, N]), auth, grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].shape: expected [1000]"),
        (request(data[:-1]), auth, grpc.StatusCode.INVALID_ARGUMENT, "raw_input_contents[0]: 999 bytes"),
        (request(data[:-1], raw=False), auth, grpc.StatusCode.INVALID_ARGUMENT, "999 elements, the shape holds 1000"),
        (request(data, outputs=["Y"]), auth, grpc.StatusCode.INVALID_ARGUMENT, "has no output 'Y'"),
        (request(data, deadline_ms=9000), auth, grpc.StatusCode.INVALID_ARGUMENT, "above the limit of 5000 ms"),
    ]
    q = request(data, raw=False)
    q.inputs[0].contents.uint_contents[5] = 300
    bad.append((q, auth, grpc.StatusCode.INVALID_ARGUMENT, "uint_contents[5]: 300 is out of the datatype's range"))
    q = request(data)
    del q.raw_input_contents[:]
    bad.append((q, auth, grpc.StatusCode.INVALID_ARGUMENT, "no data"))
    for i, (q, md, want, words) in enumerate(bad):
        c, msg = code_of(infer, q, md)
        check(c == want and words in msg, "bad request %d: %s %r, expected %s with %r" % (i, c, msg, want, words))
    expect_output(served(request(data)), data)

    # the repository extension, on schedd: index, unload and load (bearer token of repository_token_file)
    def srpc(name, req_cls, resp_cls):
        return sch.unary_unary("/inference.GRPCInferenceService/" + name,
                               request_serializer=req_cls.SerializeToString, response_deserializer=resp_cls.FromString)
    index = srpc("RepositoryIndex", pb.RepositoryIndexRequest, pb.RepositoryIndexResponse)
    load = srpc("RepositoryModelLoad", pb.RepositoryModelLoadRequest, pb.RepositoryModelLoadResponse)
    unload = srpc("RepositoryModelUnload", pb.RepositoryModelUnloadRequest, pb.RepositoryModelUnloadResponse)
    admin = [("authorization", "Bearer " + ADMIN)]
    ix = index(pb.RepositoryIndexRequest(), timeout=5)
    check([(m.name, m.version, m.state) for m in ix.models] == [("m", "1", "READY")], "index %s" % ix)
    c, msg = code_of(unload, pb.RepositoryModelUnloadRequest(model_name="m"), auth)
    check(c == grpc.StatusCode.UNAUTHENTICATED and "repository_token_file" in msg, "unload with a client token: %s" % c)
    c, msg = code_of(unload, pb.RepositoryModelUnloadRequest(model_name="nope"), admin)
    check(c == grpc.StatusCode.NOT_FOUND and "unknown model 'nope'" in msg, "unload nope: %s %s" % (c, msg))
    c, msg = code_of(index, pb.RepositoryIndexRequest(repository_name="other"))
    check(c == grpc.StatusCode.NOT_FOUND and "one repository" in msg, "index of another repository: %s" % c)
    unload(pb.RepositoryModelUnloadRequest(model_name="m"), metadata=admin, timeout=20)
    ix = index(pb.RepositoryIndexRequest(), timeout=5)
    check([(m.name, m.state) for m in ix.models] == [("m", "UNAVAILABLE")] and ix.models[0].reason,
          "index after the unload %s" % ix)
    check(not index(pb.RepositoryIndexRequest(ready=True), timeout=5).models, "ready-only index after the unload")
    end = time.time() + 5
    while time.time() < end and mready(pb.ModelReadyRequest(name="m"), timeout=5).ready:
        time.sleep(0.05)  # (the frontends hear of it from schedd's status)
    c, msg = code_of(infer, request(data), auth)
    check(c == grpc.StatusCode.NOT_FOUND and "not loaded" in msg, "inference while unloaded: %s %s" % (c, msg))
    load(pb.RepositoryModelLoadRequest(model_name="m"), metadata=admin, timeout=20)
    check([(m.name, m.state) for m in index(pb.RepositoryIndexRequest(), timeout=5).models] == [("m", "READY")],
          "index after the load")
    c, msg = code_of(mmeta, pb.ModelMetadataRequest(name="m"), None)
    check(c == grpc.StatusCode.OK, "metadata after the load")
    c, msg = code_of(srpc("ModelInfer", pb.ModelInferRequest, pb.ModelInferResponse), request(data), auth)
    check(c == grpc.StatusCode.UNIMPLEMENTED and "frontends'" in msg, "inference on schedd: %s %s" % (c, msg))
    c, msg = code_of(rpc("RepositoryIndex", pb.RepositoryIndexRequest, pb.RepositoryIndexResponse),
                     pb.RepositoryIndexRequest())
    check(c == grpc.StatusCode.UNIMPLEMENTED and "schedd's" in msg, "repository on a frontend: %s %s" % (c, msg))
    end = time.time() + 5
    while time.time() < end and not mready(pb.ModelReadyRequest(name="m"), timeout=5).ready:
        time.sleep(0.05)
    expect_output(served(request(data)), data)  # served again
    sch.close()

    # 200 calls in flight from 8 threads: each answered once, with its own output
    def one(k):
        x = bytes((i * 13 + k) % 256 for i in range(N))
        for attempt in range(3):  # (an overloaded emulated cluster may drop one to protect its SLO)
            try:
                return expect_output(infer(request(x, rid="c%d" % k), metadata=auth, timeout=20), x, rid="c%d" % k)
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or attempt == 2:
                    raise
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        outs = list(pool.map(one, range(200)))
    check(len(outs) == 200, "200 answers")
    ch.close()
    for name, p in procs:
        p.terminate()
    for name, p in procs:
        check(p.wait(timeout=30) in (0,), "%s exited %s" % (name, p.returncode))
    print("check_grpc: TLS, health, metadata, inference (raw and typed, as REST answers), %d refusals, the "
          "repository extension on schedd (index, unload, load) and 200 concurrent calls over gRPC" % len(bad))
    return True


if __name__ == "__main__":
    sys.exit(main())
