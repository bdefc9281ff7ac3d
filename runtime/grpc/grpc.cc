// runtime/grpc/grpc.cc - the frontend's gRPC server (runtime/grpc/grpc.h): Debian's gRPC with
// the callback API. Each call is queued for the frontend's loop and finished from there.
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/grpc/inference.grpc.pb.h"

extern "C" {
#include "runtime/grpc/grpc.h"
#include "runtime/tensor.h"
}

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;
using grpc::Status;
using grpc::StatusCode;

struct sym_grpc_call {
	enum sym_grpc_kind kind;
	CallbackServerContext *ctx;
	ServerUnaryReactor *reactor;
	const void *req; // the request message of its kind
	void *resp;      // the response message of its kind
	struct sym_grpc *g;
	std::string token;
	bool has_token;
};

class Service;

struct sym_grpc {
	std::mutex mu;
	std::deque<sym_grpc_call *> q; // calls waiting for the loop
	unsigned held = 0;             // calls taken and not finished (queued or with the loop)
	unsigned calls_max = 0;
	bool stopping = false;
	int efd = -1;
	std::unique_ptr<Service> svc;
	std::unique_ptr<grpc::Server> server;

	// Queues c for the loop; false (c finished here) when stopping or full.
	bool push(sym_grpc_call *c)
	{
		std::lock_guard<std::mutex> lk(mu);
		if (stopping || held >= calls_max)
			return false;
		q.push_back(c);
		held++;
		uint64_t one = 1;
		if (write(efd, &one, sizeof(one)) < 0)
			one = 0; // (full: the loop is woken already)
		return true;
	}
};

static void finish(sym_grpc_call *c, const Status &st)
{
	struct sym_grpc *g = c->g;
	c->reactor->Finish(st);
	delete c;
	std::lock_guard<std::mutex> lk(g->mu);
	g->held--;
}

class Service final : public inference::GRPCInferenceService::CallbackService {
public:
	explicit Service(struct sym_grpc *g) : g_(g) {}

	ServerUnaryReactor *ServerLive(CallbackServerContext *ctx, const inference::ServerLiveRequest *req,
				       inference::ServerLiveResponse *resp) override
	{
		return take(ctx, SYM_GRPC_SERVER_LIVE, req, resp);
	}
	ServerUnaryReactor *ServerReady(CallbackServerContext *ctx, const inference::ServerReadyRequest *req,
					inference::ServerReadyResponse *resp) override
	{
		return take(ctx, SYM_GRPC_SERVER_READY, req, resp);
	}
	ServerUnaryReactor *ModelReady(CallbackServerContext *ctx, const inference::ModelReadyRequest *req,
				       inference::ModelReadyResponse *resp) override
	{
		return take(ctx, SYM_GRPC_MODEL_READY, req, resp);
	}
	ServerUnaryReactor *ServerMetadata(CallbackServerContext *ctx, const inference::ServerMetadataRequest *req,
					   inference::ServerMetadataResponse *resp) override
	{
		return take(ctx, SYM_GRPC_SERVER_METADATA, req, resp);
	}
	ServerUnaryReactor *ModelMetadata(CallbackServerContext *ctx, const inference::ModelMetadataRequest *req,
					  inference::ModelMetadataResponse *resp) override
	{
		return take(ctx, SYM_GRPC_MODEL_METADATA, req, resp);
	}
	ServerUnaryReactor *ModelInfer(CallbackServerContext *ctx, const inference::ModelInferRequest *req,
				       inference::ModelInferResponse *resp) override
	{
		return take(ctx, SYM_GRPC_MODEL_INFER, req, resp);
	}
	ServerUnaryReactor *RepositoryIndex(CallbackServerContext *ctx, const inference::RepositoryIndexRequest *req,
					    inference::RepositoryIndexResponse *resp) override
	{
		return take(ctx, SYM_GRPC_REPOSITORY_INDEX, req, resp);
	}
	ServerUnaryReactor *RepositoryModelLoad(CallbackServerContext *ctx,
						const inference::RepositoryModelLoadRequest *req,
						inference::RepositoryModelLoadResponse *resp) override
	{
		return take(ctx, SYM_GRPC_REPOSITORY_LOAD, req, resp);
	}
	ServerUnaryReactor *RepositoryModelUnload(CallbackServerContext *ctx,
						  const inference::RepositoryModelUnloadRequest *req,
						  inference::RepositoryModelUnloadResponse *resp) override
	{
		return take(ctx, SYM_GRPC_REPOSITORY_UNLOAD, req, resp);
	}

private:
	struct sym_grpc *g_;

	ServerUnaryReactor *take(CallbackServerContext *ctx, enum sym_grpc_kind kind, const void *req, void *resp)
	{
		ServerUnaryReactor *r = ctx->DefaultReactor();
		sym_grpc_call *c = new (std::nothrow) sym_grpc_call{ kind, ctx, r, req, resp, g_, std::string(), false };
		if (!c) {
			r->Finish(Status(StatusCode::RESOURCE_EXHAUSTED, "out of memory"));
			return r;
		}
		const auto &md = ctx->client_metadata();
		auto it = md.find("authorization");
		if (it != md.end()) {
			std::string v(it->second.data(), it->second.size());
			if (v.compare(0, 7, "Bearer ") == 0) {
				c->token = v.substr(7);
				c->has_token = true;
			}
		}
		if (!g_->push(c)) {
			bool stopping;
			{
				std::lock_guard<std::mutex> lk(g_->mu);
				stopping = g_->stopping;
			}
			r->Finish(stopping ? Status(StatusCode::UNAVAILABLE, "the frontend is shutting down")
					   : Status(StatusCode::RESOURCE_EXHAUSTED,
						    "the frontend holds as many calls as it takes at once: retry later"));
			delete c;
		}
		return r;
	}
};

// The typed contents of an input into dst (n elements of type t), range-checked.
template <typename Src, typename Dst>
static int put_elems(const google::protobuf::RepeatedField<Src> &v, long long n, void *dst, double lo, double hi,
		     const char *field, char *err, size_t errlen)
{
	if ((long long)v.size() != n)
		return snprintf(err, errlen, "inputs[0].contents.%s: %d elements, the shape holds %lld", field, v.size(),
				n),
		       -EINVAL;
	Dst *out = static_cast<Dst *>(dst);
	for (long long i = 0; i < n; i++) {
		Src x = v.Get((int)i);
		if ((double)x < lo || (double)x > hi)
			return snprintf(err, errlen, "inputs[0].contents.%s[%lld]: %g is out of the datatype's range", field,
					i, (double)x),
			       -EINVAL;
		out[i] = (Dst)x;
	}
	return 0;
}

static int mod_start(struct sym_grpc **out, const struct sym_grpc_cfg *cfg, char *err, size_t errlen)
{
	*out = nullptr;
	std::unique_ptr<sym_grpc> g(new (std::nothrow) sym_grpc());
	if (!g)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	g->calls_max = cfg->calls_max ? cfg->calls_max : 1024;
	g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->efd < 0)
		return snprintf(err, errlen, "eventfd: %s", strerror(errno)), -errno;
	g->svc.reset(new Service(g.get()));
	std::shared_ptr<grpc::ServerCredentials> creds;
	if (cfg->tls_cert && cfg->tls_key) {
		grpc::SslServerCredentialsOptions so;
		so.pem_key_cert_pairs.push_back({ cfg->tls_key, cfg->tls_cert });
		creds = grpc::SslServerCredentials(so);
	} else {
		creds = grpc::InsecureServerCredentials();
	}
	std::string addr = strchr(cfg->host, ':') ? std::string("[") + cfg->host + "]:" + cfg->port
						    : std::string(cfg->host) + ":" + cfg->port;
	grpc::ServerBuilder b;
	int bound = 0;
	b.AddListeningPort(addr, creds, &bound);
	b.RegisterService(g->svc.get());
	b.SetMaxReceiveMessageSize(cfg->msg_max > INT_MAX ? INT_MAX : (int)cfg->msg_max);
	b.SetMaxSendMessageSize(INT_MAX);
	grpc::ResourceQuota quota("symphony-grpc");
	if (cfg->memory_max)
		quota.Resize(cfg->memory_max);
	quota.SetMaxThreads(16);
	b.SetResourceQuota(quota);
	b.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 128);
	g->server = b.BuildAndStart();
	if (!g->server || !bound) {
		close(g->efd);
		g->server.reset();
		return snprintf(err, errlen, "gRPC: cannot listen on %s", addr.c_str()), -EADDRINUSE;
	}
	*out = g.release();
	return 0;
}

static int mod_fd(const struct sym_grpc *g)
{
	return g->efd;
}

static struct sym_grpc_call *mod_next(struct sym_grpc *g)
{
	std::lock_guard<std::mutex> lk(g->mu);
	if (g->q.empty()) {
		uint64_t v;
		if (read(g->efd, &v, sizeof(v)) < 0)
			v = 0; // (drained already)
		return nullptr;
	}
	sym_grpc_call *c = g->q.front();
	g->q.pop_front();
	return c;
}

static void mod_stop(struct sym_grpc *g)
{
	if (!g)
		return;
	std::deque<sym_grpc_call *> left;
	{
		std::lock_guard<std::mutex> lk(g->mu);
		g->stopping = true;
		left.swap(g->q);
	}
	for (sym_grpc_call *c : left)
		finish(c, Status(StatusCode::UNAVAILABLE, "the frontend is shutting down"));
	g->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
	g->server->Wait();
	close(g->efd);
	delete g;
}

static enum sym_grpc_kind mod_call_kind(const struct sym_grpc_call *c)
{
	return c->kind;
}

static const char *mod_call_model(const struct sym_grpc_call *c)
{
	switch (c->kind) {
	case SYM_GRPC_MODEL_READY:
		return static_cast<const inference::ModelReadyRequest *>(c->req)->name().c_str();
	case SYM_GRPC_MODEL_METADATA:
		return static_cast<const inference::ModelMetadataRequest *>(c->req)->name().c_str();
	case SYM_GRPC_MODEL_INFER:
		return static_cast<const inference::ModelInferRequest *>(c->req)->model_name().c_str();
	case SYM_GRPC_REPOSITORY_LOAD:
		return static_cast<const inference::RepositoryModelLoadRequest *>(c->req)->model_name().c_str();
	case SYM_GRPC_REPOSITORY_UNLOAD:
		return static_cast<const inference::RepositoryModelUnloadRequest *>(c->req)->model_name().c_str();
	default:
		return "";
	}
}

static const char *mod_call_repository(const struct sym_grpc_call *c)
{
	switch (c->kind) {
	case SYM_GRPC_REPOSITORY_INDEX:
		return static_cast<const inference::RepositoryIndexRequest *>(c->req)->repository_name().c_str();
	case SYM_GRPC_REPOSITORY_LOAD:
		return static_cast<const inference::RepositoryModelLoadRequest *>(c->req)->repository_name().c_str();
	case SYM_GRPC_REPOSITORY_UNLOAD:
		return static_cast<const inference::RepositoryModelUnloadRequest *>(c->req)->repository_name().c_str();
	default:
		return "";
	}
}

static bool mod_call_ready_only(const struct sym_grpc_call *c)
{
	return c->kind == SYM_GRPC_REPOSITORY_INDEX &&
	       static_cast<const inference::RepositoryIndexRequest *>(c->req)->ready();
}

static int mod_code_of_http(unsigned status)
{
	switch (status) {
	case 400:
		return (int)StatusCode::INVALID_ARGUMENT;
	case 401:
		return (int)StatusCode::UNAUTHENTICATED;
	case 403:
		return (int)StatusCode::PERMISSION_DENIED;
	case 404:
		return (int)StatusCode::NOT_FOUND;
	case 409:
		return (int)StatusCode::FAILED_PRECONDITION;
	case 503:
		return (int)StatusCode::UNAVAILABLE;
	default:
		return (int)StatusCode::INTERNAL;
	}
}

static const char *mod_call_version(const struct sym_grpc_call *c)
{
	switch (c->kind) {
	case SYM_GRPC_MODEL_READY:
		return static_cast<const inference::ModelReadyRequest *>(c->req)->version().c_str();
	case SYM_GRPC_MODEL_METADATA:
		return static_cast<const inference::ModelMetadataRequest *>(c->req)->version().c_str();
	case SYM_GRPC_MODEL_INFER:
		return static_cast<const inference::ModelInferRequest *>(c->req)->model_version().c_str();
	default:
		return "";
	}
}

static const char *mod_call_token(const struct sym_grpc_call *c, size_t *len)
{
	*len = c->token.size();
	return c->has_token ? c->token.data() : nullptr;
}

static int64_t mod_call_deadline_ns(const struct sym_grpc_call *c)
{
	auto d = c->ctx->deadline();
	if (d == std::chrono::system_clock::time_point::max())
		return 0;
	auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(d - std::chrono::system_clock::now()).count();
	return left > 0 ? (int64_t)left : 1;
}

static bool mod_call_cancelled(const struct sym_grpc_call *c)
{
	return c->ctx->IsCancelled();
}

static int mod_call_input(const struct sym_grpc_call *c, const struct sym_model_desc *m, void *dst, double *deadline_ms,
			bool *batch_dim, char *err, size_t errlen)
{
	const auto *req = static_cast<const inference::ModelInferRequest *>(c->req);
	const struct sym_tensor_sig *sig = &m->input;
	*deadline_ms = 0;
	auto p = req->parameters().find("deadline_ms");
	if (p != req->parameters().end()) {
		const inference::InferParameter &v = p->second;
		double d = v.parameter_choice_case() == inference::InferParameter::kDoubleParam  ? v.double_param()
			   : v.parameter_choice_case() == inference::InferParameter::kInt64Param ? (double)v.int64_param()
			   : v.parameter_choice_case() == inference::InferParameter::kUint64Param
				   ? (double)v.uint64_param()
				   : -1;
		if (!(d > 0) || !std::isfinite(d))
			return snprintf(err, errlen, "parameters.deadline_ms: expected a positive number of milliseconds"),
			       -EINVAL;
		*deadline_ms = d;
	}
	if (req->inputs_size() != 1)
		return snprintf(err, errlen, "inputs: expected exactly one tensor (model '%s' takes %s), got %d",
				m->name, sig->name, req->inputs_size()),
		       -EINVAL;
	for (int i = 0; i < req->outputs_size(); i++)
		if (req->outputs(i).name() != m->output.name)
			return snprintf(err, errlen, "outputs[%d].name: model '%s' has no output '%s' (its output is '%s')",
					i, m->name, req->outputs(i).name().c_str(), m->output.name),
			       -EINVAL;
	const auto &in = req->inputs(0);
	int64_t dims[SYM_TENSOR_DIMS + 1];
	int nd = in.shape_size() <= SYM_TENSOR_DIMS + 1 ? in.shape_size() : -1;
	std::string got = "[";
	for (int i = 0; i < in.shape_size(); i++) {
		if (nd > 0)
			dims[i] = in.shape(i);
		got += (i ? ", " : "") + std::to_string(in.shape(i));
	}
	got += "]";
	int rc = sym_tensor_check_input(&m->input, m->name, in.name().c_str(), in.datatype().c_str(), dims, nd, got.c_str(),
					batch_dim, err, errlen);
	if (rc)
		return rc;
	size_t bytes = sym_tensor_bytes(sig);
	long long n = (long long)sym_tensor_elems(sig);
	if (req->raw_input_contents_size() > 0) {
		if (req->raw_input_contents_size() != 1)
			return snprintf(err, errlen, "raw_input_contents: %d entries, one per input (1)",
					req->raw_input_contents_size()),
			       -EINVAL;
		const std::string &raw = req->raw_input_contents(0);
		if (raw.size() != bytes)
			return snprintf(err, errlen, "raw_input_contents[0]: %zu bytes, expected %zu (%lld %s elements)",
					raw.size(), bytes, n, sym_dtype_name(sig->dtype)),
			       -EINVAL;
		memcpy(dst, raw.data(), bytes);
		return 0;
	}
	if (!in.has_contents())
		return snprintf(err, errlen, "inputs[0]: no data: give contents or raw_input_contents"), -EINVAL;
	const auto &t = in.contents();
	switch (sig->dtype) {
	case SYM_DT_BOOL:
		return put_elems<bool, uint8_t>(t.bool_contents(), n, dst, 0, 1, "bool_contents", err, errlen);
	case SYM_DT_UINT8:
		return put_elems<uint32_t, uint8_t>(t.uint_contents(), n, dst, 0, 255, "uint_contents", err, errlen);
	case SYM_DT_UINT16:
		return put_elems<uint32_t, uint16_t>(t.uint_contents(), n, dst, 0, 65535, "uint_contents", err, errlen);
	case SYM_DT_UINT32:
		return put_elems<uint32_t, uint32_t>(t.uint_contents(), n, dst, 0, 4294967295.0, "uint_contents", err,
						     errlen);
	case SYM_DT_UINT64:
		return put_elems<uint64_t, uint64_t>(t.uint64_contents(), n, dst, 0, 1.9e19, "uint64_contents", err,
						     errlen);
	case SYM_DT_INT8:
		return put_elems<int32_t, int8_t>(t.int_contents(), n, dst, -128, 127, "int_contents", err, errlen);
	case SYM_DT_INT16:
		return put_elems<int32_t, int16_t>(t.int_contents(), n, dst, -32768, 32767, "int_contents", err, errlen);
	case SYM_DT_INT32:
		return put_elems<int32_t, int32_t>(t.int_contents(), n, dst, -2147483648.0, 2147483647.0, "int_contents",
						   err, errlen);
	case SYM_DT_INT64:
		return put_elems<int64_t, int64_t>(t.int64_contents(), n, dst, -9.3e18, 9.3e18, "int64_contents", err,
						   errlen);
	case SYM_DT_FP32:
		return put_elems<float, float>(t.fp32_contents(), n, dst, -HUGE_VAL, HUGE_VAL, "fp32_contents", err,
					       errlen);
	case SYM_DT_FP64:
		return put_elems<double, double>(t.fp64_contents(), n, dst, -HUGE_VAL, HUGE_VAL, "fp64_contents", err,
						 errlen);
	default:
		return snprintf(err, errlen, "inputs[0]: %s data goes in raw_input_contents", sym_dtype_name(sig->dtype)),
		       -EINVAL;
	}
}

static void mod_finish_bool(struct sym_grpc_call *c, bool v)
{
	switch (c->kind) {
	case SYM_GRPC_SERVER_LIVE:
		static_cast<inference::ServerLiveResponse *>(c->resp)->set_live(v);
		break;
	case SYM_GRPC_SERVER_READY:
		static_cast<inference::ServerReadyResponse *>(c->resp)->set_ready(v);
		break;
	case SYM_GRPC_MODEL_READY:
		static_cast<inference::ModelReadyResponse *>(c->resp)->set_ready(v);
		break;
	default:
		finish(c, Status(StatusCode::INTERNAL, "not a yes-or-no call"));
		return;
	}
	finish(c, Status::OK);
}

static void mod_finish_server_metadata(struct sym_grpc_call *c, const char *name, const char *version,
				     const char *const *extensions, size_t n)
{
	auto *r = static_cast<inference::ServerMetadataResponse *>(c->resp);
	r->set_name(name);
	r->set_version(version);
	for (size_t i = 0; i < n; i++)
		r->add_extensions(extensions[i]);
	finish(c, Status::OK);
}

static void tensor_meta(inference::ModelMetadataResponse::TensorMetadata *t, const struct sym_tensor_sig *s)
{
	t->set_name(s->name);
	t->set_datatype(sym_dtype_name(s->dtype));
	for (int i = 0; i < s->ndim; i++)
		t->add_shape(s->shape[i]);
}

static void mod_finish_model_metadata(struct sym_grpc_call *c, const struct sym_model_desc *m, const char *platform)
{
	auto *r = static_cast<inference::ModelMetadataResponse *>(c->resp);
	r->set_name(m->name);
	r->add_versions(std::to_string(m->version));
	r->set_platform(platform);
	tensor_meta(r->add_inputs(), &m->input);
	tensor_meta(r->add_outputs(), &m->output);
	finish(c, Status::OK);
}

static void mod_finish_infer(struct sym_grpc_call *c, const struct sym_model_desc *m, bool batch_dim, const void *out,
			   size_t len)
{
	const auto *req = static_cast<const inference::ModelInferRequest *>(c->req);
	auto *r = static_cast<inference::ModelInferResponse *>(c->resp);
	r->set_model_name(m->name);
	r->set_model_version(std::to_string(m->version));
	r->set_id(req->id());
	auto *o = r->add_outputs();
	o->set_name(m->output.name);
	o->set_datatype(sym_dtype_name(m->output.dtype));
	if (batch_dim)
		o->add_shape(1);
	for (int i = 0; i < m->output.ndim; i++)
		o->add_shape(m->output.shape[i]);
	r->add_raw_output_contents(static_cast<const char *>(out), len);
	finish(c, Status::OK);
}

static void mod_add_index(struct sym_grpc_call *c, const char *name, const char *version, const char *state,
			const char *reason)
{
	auto *m = static_cast<inference::RepositoryIndexResponse *>(c->resp)->add_models();
	m->set_name(name);
	m->set_version(version);
	m->set_state(state);
	if (reason)
		m->set_reason(reason);
}

static void mod_finish_ok(struct sym_grpc_call *c)
{
	finish(c, Status::OK);
}

static void mod_finish_error_msg(struct sym_grpc_call *c, int code, const char *msg)
{
	finish(c, Status(static_cast<StatusCode>(code), msg));
}


// The module's one exported symbol: its functions, for runtime/grpc/load.c.
extern "C" __attribute__((visibility("default"))) const struct sym_grpc_api *sym_grpc_module_api(void)
{
	static const struct sym_grpc_api api = {
		SYM_GRPC_API_VERSION,
		mod_start,
		mod_fd,
		mod_next,
		mod_stop,
		mod_call_kind,
		mod_call_model,
		mod_call_version,
		mod_call_repository,
		mod_call_ready_only,
		mod_call_token,
		mod_call_deadline_ns,
		mod_call_cancelled,
		mod_call_input,
		mod_finish_bool,
		mod_finish_server_metadata,
		mod_finish_model_metadata,
		mod_add_index,
		mod_finish_ok,
		mod_finish_infer,
		mod_finish_error_msg,
		mod_code_of_http,
	};
	return &api;
}
