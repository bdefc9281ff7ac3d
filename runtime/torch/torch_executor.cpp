/* runtime/torch/torch_executor.cpp - the TorchScript executor (runtime/executor.h) on libtorch.
 *
 * The only C++ of the project, behind the C interface of runtime/executor.h:
 * every entry point catches every exception, so none crosses into C.
 *
 * Per model, load reads its TorchScript file (torch::jit::load, the spec's
 * "file"), puts it in eval mode and runs it on zero inputs: twice at batch 1
 * and twice at max_batch (the first run of a shape lets the graph executor
 * profile and optimize, so the first real batch does not pay for it). Those
 * dry runs check the model against its signature (the output must be one
 * tensor of the signature's datatype with as many elements per request) and
 * measure its memory. A run stacks the n inputs into one tensor [n, shape...]
 * (before waiting for its start), waits until its start, runs forward in
 * c10::InferenceMode, and copies each request's slice of the output out.
 *
 * Memory (MiB, as the cuda executor):
 *   - static: the bytes of the module's parameters and buffers (each storage
 *     counted once);
 *   - dynamic(b): the peak of bytes that c10's allocator held for the batch
 *     on the model's device during the last dry run (its input, the
 *     activations, its output), measured through c10's memory-reporting hook
 *     at batch 1 and at max_batch, and interpolated linearly in between.
 *     Memory that does not go through c10's allocator (scratch of BLAS or
 *     oneDNN, the interpreter's own) is not seen.
 *
 * Threads: `torch_threads` intra-op threads (default 1). libtorch keeps the
 * count per calling thread (OpenMP), so load and run each set it on theirs.
 * With one thread a batch never starts an OpenMP team; with more, idle
 * OpenMP threads spin (OMP_WAIT_POLICY, read when the process starts;
 * runtime/torch/README.md).
 *
 * Thread safety (executor.h): the model table is behind a mutex; a run holds
 * its model by a shared pointer, so even an unload racing a run could not
 * free the module under it.
 */
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

extern "C" {
#include "core/memory.h"
#include "runtime/executor.h"
}

namespace {

constexpr int kMaxModels = 4096;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr sym_time kDefaultSpin = 50 * SYM_US;

__attribute__((format(printf, 1, 2))) std::string fmt(const char *f, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return buf;
}

int fail(char *err, size_t errlen, int rc, const std::string &msg)
{
	snprintf(err, errlen, "%s", msg.c_str());
	return rc;
}

/* A libtorch error as one line: c10::Error without its C++ backtrace; a
 * TorchScript error is several lines (the interpreter's traceback, then the
 * error itself), of which the last that says something is kept. */
std::string what_of(const std::exception &e)
{
	const auto *ce = dynamic_cast<const c10::Error *>(&e);
	std::string s = ce ? ce->what_without_backtrace() : e.what();
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	size_t nl = s.rfind('\n');
	if (nl != std::string::npos)
		s = s.substr(nl + 1);
	size_t lead = s.find_first_not_of(' ');
	return lead == std::string::npos ? std::string("(no message)") : s.substr(lead);
}

bool scalar_of(sym_dtype t, c10::ScalarType *out)
{
	switch (t) {
	case SYM_DT_BOOL: *out = at::kBool; return true;
	case SYM_DT_UINT8: *out = at::kByte; return true;
	case SYM_DT_INT8: *out = at::kChar; return true;
	case SYM_DT_INT16: *out = at::kShort; return true;
	case SYM_DT_INT32: *out = at::kInt; return true;
	case SYM_DT_INT64: *out = at::kLong; return true;
	case SYM_DT_FP16: *out = at::kHalf; return true;
	case SYM_DT_FP32: *out = at::kFloat; return true;
	case SYM_DT_FP64: *out = at::kDouble; return true;
	default: return false;
	}
}

/* A scalar type by its KServe name where it has one ("FP32"), else libtorch's ("BFloat16"). */
std::string dtype_name(c10::ScalarType s)
{
	for (int t = SYM_DT_INVALID + 1; t < SYM_DT_COUNT; t++) {
		c10::ScalarType u;
		if (scalar_of(static_cast<sym_dtype>(t), &u) && u == s)
			return sym_dtype_name(static_cast<sym_dtype>(t));
	}
	return std::string("torch.") + c10::toString(s);
}

std::string shape_text(at::IntArrayRef sizes)
{
	std::string s = "[";
	for (size_t i = 0; i < sizes.size(); i++)
		s += (i ? ", " : "") + std::to_string(sizes[i]);
	return s + "]";
}

/* Counts, through c10's memory-reporting hook (what the autograd profiler
 * uses), the bytes that the allocator of one kind of device holds for what
 * runs on this thread while it is installed, and their peak. */
class peak_meter final : public c10::MemoryReportingInfoBase {
public:
	explicit peak_meter(c10::DeviceType type) : type_(type) {}
	void reportMemoryUsage(void *, int64_t alloc_size, int64_t, int64_t, c10::Device device) override
	{
		if (device.type() != type_)
			return;
		held_ += alloc_size;
		if (held_ > peak_)
			peak_ = held_;
	}
	bool memoryProfilingEnabled() const override { return true; }
	int64_t peak() const { return peak_; }

private:
	c10::DeviceType type_;
	int64_t held_ = 0, peak_ = 0;
};

struct tmodel {
	std::string name;
	std::string file;
	int max_batch = 0;
	c10::ScalarType in_type = at::kFloat, out_type = at::kFloat;
	sym_dtype out_dtype = SYM_DT_INVALID;
	std::vector<int64_t> shape; /* [batch, the input signature's shape...] */
	size_t in_bytes = 0, out_bytes = 0;
	int64_t out_elems = 0;
	torch::jit::Module mod;
	uint64_t static_bytes = 0;
	int64_t peak1 = 0, peakmax = 0; /* measured dynamic bytes at batch 1 and max_batch */

	double static_mb() const { return (double)static_bytes / kMiB; }
	double dynamic_mb(int b) const
	{
		double d = max_batch > 1 ? (double)peak1 + (double)(peakmax - peak1) * (b - 1) / (max_batch - 1)
					 : (double)peak1;
		return (d > 0 ? d : 0) / kMiB;
	}
};

struct torch_x : sym_executor {
	torch_x(int t, bool c, int d, sym_time s, double mem)
		: threads(t), cuda(c), device(c ? c10::Device(c10::kCUDA, (c10::DeviceIndex)d) : c10::Device(c10::kCPU)),
		  spin(s), memory_mb(mem)
	{
	}
	int threads;
	bool cuda;
	c10::Device device;
	sym_time spin;
	double memory_mb; /* > 0: loads are refused beyond it by the memory rule (core/memory.h) */
	std::mutex mu;     /* the table */
	std::unordered_map<int, std::shared_ptr<tmodel>> models;

	std::shared_ptr<tmodel> find(int id)
	{
		std::lock_guard<std::mutex> g(mu);
		auto it = models.find(id);
		return it == models.end() ? nullptr : it->second;
	}
};

torch_x *of(sym_executor *x)
{
	return static_cast<torch_x *>(x);
}

void set_threads(const torch_x *x)
{
	if (at::get_num_threads() != x->threads)
		at::set_num_threads(x->threads);
}

/* "" when v is what model m must give for a batch of b (out: the tensor),
 * else what is wrong with it. */
std::string check_output(const tmodel &m, const c10::IValue &v, int b, at::Tensor *out)
{
	if (!v.isTensor())
		return "its forward returns " + v.tagKind() + ", not one tensor";
	at::Tensor t = v.toTensor();
	if (t.scalar_type() != m.out_type)
		return "its output is " + dtype_name(t.scalar_type()) + ", the output signature says " +
		       sym_dtype_name(m.out_dtype);
	if (t.dim() < 1 || t.size(0) != b || t.numel() != (int64_t)b * m.out_elems)
		return fmt("for a batch of %d it gives an output of shape %s (%s elements per request), the output "
			   "signature has %lld per request",
			   b, shape_text(t.sizes()).c_str(),
			   t.dim() >= 1 && t.size(0) == b ? std::to_string(t.numel() / b).c_str() : "not the same",
			   (long long)m.out_elems);
	*out = t;
	return "";
}

/* Runs model m on a batch of b zero inputs on x's device; returns what is
 * wrong with its output ("" if nothing) and the peak of bytes the batch held
 * on the device. Throws what libtorch throws. */
std::string dry_run(torch_x *x, tmodel &m, int b, int64_t *peak)
{
	auto meter = std::make_shared<peak_meter>(x->device.type());
	std::string why;
	{
		c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, meter);
		c10::InferenceMode im;
		std::vector<int64_t> shape = m.shape;
		shape[0] = b;
		at::Tensor in = at::zeros(shape, at::TensorOptions().dtype(m.in_type).device(x->device));
		c10::IValue v = m.mod.forward({ in });
		at::Tensor out;
		why = check_output(m, v, b, &out);
	}
	*peak = meter->peak();
	return why;
}

int load(torch_x *x, int id, const sym_model_desc *d, char *err, size_t errlen)
{
	if (id < 0 || id >= kMaxModels || !d || !d->profile)
		return fail(err, errlen, -EINVAL,
			    fmt("torch executor: model id %d is not within 0..%d", id, kMaxModels - 1));
	auto m = std::make_shared<tmodel>();
	m->name = d->name ? d->name : d->profile->name;
	const char *name = m->name.c_str();
	std::string who = "torch executor: model '" + m->name + "'";
	/* the spec: {"file": "PATH"} */
	const cJSON *spec = d->spec;
	if (!spec)
		return fail(err, errlen, -EINVAL,
			    fmt("%s has no executor spec: set runtime.models.%s.executor to {\"file\": \"PATH.pt\"}, a "
				"file torch.jit.save wrote", who.c_str(), name));
	for (const cJSON *k = spec->child; k; k = k->next)
		if (strcmp(k->string, "file"))
			return fail(err, errlen, -EINVAL,
				    fmt("%s: runtime.models.%s.executor: unknown key '%s' (the torch executor takes "
					"{\"file\": \"PATH.pt\"})", who.c_str(), name, k->string));
	const cJSON *file = cJSON_GetObjectItemCaseSensitive(spec, "file");
	if (!cJSON_IsString(file) || !file->valuestring[0])
		return fail(err, errlen, -EINVAL,
			    fmt("%s: runtime.models.%s.executor: key 'file': expected the path of a TorchScript file",
				who.c_str(), name));
	m->file = file->valuestring;
	const char *path = m->file.c_str();
	/* the signature */
	m->max_batch = d->profile->max_batch;
	m->in_bytes = sym_tensor_bytes(&d->input);
	m->out_bytes = sym_tensor_bytes(&d->output);
	m->out_elems = sym_tensor_elems(&d->output);
	m->out_dtype = d->output.dtype;
	if (m->max_batch < 1 || m->in_bytes < 1 || m->out_bytes < 1 || m->in_bytes > UINT32_MAX ||
	    m->out_bytes > UINT32_MAX || d->input.ndim < 1 || d->input.ndim > SYM_TENSOR_DIMS)
		return fail(err, errlen, -EINVAL, who + ": its batch size or signature is empty or too large");
	if (!scalar_of(d->input.dtype, &m->in_type) || !scalar_of(d->output.dtype, &m->out_type))
		return fail(err, errlen, -EINVAL,
			    fmt("%s: libtorch has no %s tensors (the %s signature's datatype); it takes BOOL, UINT8, "
				"INT8, INT16, INT32, INT64, FP16, FP32 and FP64",
				who.c_str(), sym_dtype_name(scalar_of(d->input.dtype, &m->in_type) ? d->output.dtype
												: d->input.dtype),
				scalar_of(d->input.dtype, &m->in_type) ? "output" : "input"));
	m->shape.push_back(1);
	for (int i = 0; i < d->input.ndim; i++)
		m->shape.push_back(d->input.shape[i]);
	/* the file: our own words for the common mistakes, libtorch's for the rest */
	struct stat st;
	if (stat(path, &st))
		return fail(err, errlen, -EINVAL,
			    fmt("%s: cannot open '%s': %s (a relative path is from the working directory)", who.c_str(),
				path, strerror(errno)));
	if (!S_ISREG(st.st_mode))
		return fail(err, errlen, -EINVAL, fmt("%s: '%s' is not a file", who.c_str(), path));
	set_threads(x);
	try {
		m->mod = torch::jit::load(m->file, x->device);
	} catch (const std::exception &e) {
		return fail(err, errlen, -EINVAL,
			    fmt("%s: '%s' is not a TorchScript file libtorch can load (torch.jit.save writes them, "
				"torch.save does not): %s", who.c_str(), path, what_of(e).c_str()));
	}
	m->mod.eval();
	/* static memory: parameters and buffers, each storage once */
	std::unordered_set<const void *> seen;
	auto count = [&](const at::Tensor &t) {
		if (t.defined() && t.storage().nbytes() > 0 && seen.insert(t.storage().data()).second)
			m->static_bytes += t.storage().nbytes();
	};
	for (const at::Tensor &t : m->mod.parameters())
		count(t);
	for (const at::Tensor &t : m->mod.buffers())
		count(t);
	/* the dry runs: the signature, the memory, and the graph executor's warm-up */
	int sizes[4] = { 1, 1, m->max_batch, m->max_batch };
	for (int i = 0; i < (m->max_batch > 1 ? 4 : 2); i++) {
		int64_t peak = 0;
		std::string why;
		try {
			why = dry_run(x, *m, sizes[i], &peak);
		} catch (const std::exception &e) {
			why = fmt("it fails on a batch of %d zero inputs of the input signature (%s %s): %s", sizes[i],
				  sym_dtype_name(d->input.dtype),
				  shape_text(at::IntArrayRef(d->input.shape, (size_t)d->input.ndim)).c_str(),
				  what_of(e).c_str());
		}
		if (!why.empty())
			return fail(err, errlen, -EINVAL, fmt("%s ('%s'): %s", who.c_str(), path, why.c_str()));
		(sizes[i] == 1 ? m->peak1 : m->peakmax) = peak;
	}
	if (m->max_batch == 1)
		m->peakmax = m->peak1;
	/* the memory rule, then the table: a model loaded again replaces itself */
	std::shared_ptr<tmodel> old;
	{
		std::lock_guard<std::mutex> g(x->mu);
		if (x->memory_mb > 0) {
			sym_mem use = { 0, 0 };
			for (const auto &it : x->models)
				if (it.first != id)
					sym_mem_add(&use, it.second->static_mb(), it.second->dynamic_mb(it.second->max_batch));
			double need = sym_mem_need_with(&use, m->static_mb(), m->dynamic_mb(m->max_batch));
			if (need > x->memory_mb)
				return fail(err, errlen, -ENOSPC,
					    fmt("%s does not fit: the models loaded and it need %.3f MB by the memory rule "
						"(its own: %.3f MB static, %.3f MB for a batch of %d), the device has %g MB",
						who.c_str(), need, m->static_mb(), m->dynamic_mb(m->max_batch),
						m->max_batch, x->memory_mb));
		}
		auto it = x->models.find(id);
		if (it != x->models.end())
			old = it->second;
		x->models[id] = m;
	}
	return 0; /* `old` goes here, out of the lock */
}

int run(torch_x *x, int id, const sym_batch_io *io, sym_time start, sym_time *began, sym_time *ended, char *err,
	size_t errlen)
{
	std::shared_ptr<tmodel> m = x->find(id);
	if (!m)
		return fail(err, errlen, -EINVAL, fmt("torch executor: model %d is not loaded", id));
	const char *name = m->name.c_str();
	if (io->n < 1 || io->n > m->max_batch)
		return fail(err, errlen, -EINVAL,
			    fmt("torch executor: batch of %d for model '%s' (1..%d)", io->n, name, m->max_batch));
	for (int i = 0; i < io->n; i++)
		if (io->lens[i] != m->in_bytes)
			return fail(err, errlen, -EINVAL,
				    fmt("torch executor: model '%s': input %d has %u bytes, its signature takes %zu", name,
					i, io->lens[i], m->in_bytes));
	if (io->out_cap < m->out_bytes)
		return fail(err, errlen, -EINVAL,
			    fmt("torch executor: model '%s': output buffers of %u bytes, it needs %zu", name, io->out_cap,
				m->out_bytes));
	set_threads(x);
	c10::InferenceMode im;
	std::vector<int64_t> shape = m->shape;
	shape[0] = io->n;
	at::Tensor in = at::empty(shape, at::TensorOptions().dtype(m->in_type));
	char *p = static_cast<char *>(in.data_ptr());
	for (int i = 0; i < io->n; i++)
		memcpy(p + (size_t)i * m->in_bytes, io->inputs[i], m->in_bytes);
	sym_time b = sym_wait_until(start, x->spin);
	try {
		if (x->cuda)
			in = in.to(x->device);
		c10::IValue v = m->mod.forward({ in });
		at::Tensor out;
		std::string why = check_output(*m, v, io->n, &out);
		if (!why.empty())
			return fail(err, errlen, -EINVAL, fmt("torch executor: model '%s': %s", name, why.c_str()));
		out = out.to(at::kCPU).contiguous();
		const char *o = static_cast<const char *>(out.data_ptr());
		for (int i = 0; i < io->n; i++) {
			memcpy(io->outputs[i], o + (size_t)i * m->out_bytes, m->out_bytes);
			io->out_lens[i] = (uint32_t)m->out_bytes;
		}
	} catch (const std::exception &e) {
		return fail(err, errlen, -EINVAL,
			    fmt("torch executor: model '%s': its batch of %d failed: %s", name, io->n, what_of(e).c_str()));
	}
	*began = b;
	*ended = sym_monotonic_ns();
	return 0;
}

/* The executor's ops: the C entry points, each catching what is left. */

int tx_load(sym_executor *xe, int id, const sym_model_desc *m, char *err, size_t errlen) noexcept
{
	try {
		return load(of(xe), id, m, err, errlen);
	} catch (const std::bad_alloc &) {
		return fail(err, errlen, -ENOMEM, fmt("torch executor: model %d: out of memory", id));
	} catch (const std::exception &e) {
		return fail(err, errlen, -EINVAL, fmt("torch executor: model %d: %s", id, what_of(e).c_str()));
	} catch (...) {
		return fail(err, errlen, -EINVAL, fmt("torch executor: model %d: an unknown C++ exception", id));
	}
}

int tx_run(sym_executor *xe, int id, const sym_batch_io *io, sym_time start, sym_time *began, sym_time *ended,
	   char *err, size_t errlen) noexcept
{
	try {
		return run(of(xe), id, io, start, began, ended, err, errlen);
	} catch (const std::bad_alloc &) {
		return fail(err, errlen, -ENOMEM, fmt("torch executor: model %d: out of memory", id));
	} catch (const std::exception &e) {
		return fail(err, errlen, -EINVAL, fmt("torch executor: model %d: %s", id, what_of(e).c_str()));
	} catch (...) {
		return fail(err, errlen, -EINVAL, fmt("torch executor: model %d: an unknown C++ exception", id));
	}
}

int tx_unload(sym_executor *xe, int id, char *err, size_t errlen) noexcept
{
	torch_x *x = of(xe);
	std::shared_ptr<tmodel> m;
	try {
		{
			std::lock_guard<std::mutex> g(x->mu);
			auto it = x->models.find(id);
			if (it != x->models.end()) {
				m = std::move(it->second);
				x->models.erase(it);
			}
		}
		if (!m)
			return fail(err, errlen, -EINVAL, fmt("torch executor: model %d is not loaded", id));
		m.reset(); /* the module, its weights and its graphs go here */
		return 0;
	} catch (const std::exception &e) {
		return fail(err, errlen, -EINVAL, fmt("torch executor: model %d: %s", id, what_of(e).c_str()));
	}
}

int tx_memory(sym_executor *xe, int id, int b, sym_model_memory *out) noexcept
{
	try {
		std::shared_ptr<tmodel> m = of(xe)->find(id);
		if (!m || b < 1 || b > m->max_batch)
			return -EINVAL;
		out->static_mb = m->static_mb();
		out->dynamic_mb = m->dynamic_mb(b);
		return 0;
	} catch (...) {
		return -EINVAL;
	}
}

void tx_destroy(sym_executor *xe) noexcept
{
	try {
		delete of(xe);
	} catch (...) {
	}
}

const sym_executor_ops torch_ops = { "torch", tx_load, tx_run, tx_unload, tx_memory, tx_destroy };

} // namespace

// The module's one entry (runtime/executor.c loads this file's module and
// calls it): the executor, once the runtime and this module agree on the
// interface they share.
extern "C" __attribute__((visibility("default"))) struct sym_executor *
sym_torch_module_open(const struct sym_executor_abi *abi, const struct sym_executor_opts *o, char *err,
		      size_t errlen)
{
	try {
		sym_executor_abi mine = sym_executor_abi_here();
		if (!abi || memcmp(abi, &mine, sizeof(mine)))
			return fail(err, errlen, 0,
				    "torch executor: its module (symphony-torch.so) was built from another version "
				    "of symphony than the program loading it; rebuild or reinstall both together"),
			       nullptr;
		int threads = o && o->torch_threads ? o->torch_threads : 1;
		const char *dev = o && o->torch_device ? o->torch_device : "cpu";
		int device = o ? o->device : 0;
		if (threads < 1 || threads > 256)
			return fail(err, errlen, 0, fmt("torch executor: torch_threads must be 1 to 256, got %d", threads)),
			       nullptr;
		bool cuda = !strcmp(dev, "cuda");
		if (!cuda && strcmp(dev, "cpu"))
			return fail(err, errlen, 0, fmt("torch executor: torch_device must be cpu or cuda, got '%s'", dev)),
			       nullptr;
		if (cuda && !at::detail::getCUDAHooks().hasCUDART())
			return fail(err, errlen, 0,
				    "torch executor: torch_device cuda: this libtorch has no CUDA (Debian's libtorch-dev "
				    "is built for the CPU only); build against a libtorch with CUDA (-Dtorch_dir, "
				    "runtime/torch/README.md) or use torch_device cpu"),
			       nullptr;
		if (cuda && !torch::cuda::is_available())
			return fail(err, errlen, 0,
				    "torch executor: torch_device cuda: this libtorch has CUDA but finds no CUDA device "
				    "(no NVIDIA driver or GPU here?); use torch_device cpu"),
			       nullptr;
		if (cuda && (device < 0 || (size_t)device >= torch::cuda::device_count()))
			return fail(err, errlen, 0,
				    fmt("torch executor: there is no CUDA device %d (this machine has %zu)", device,
					torch::cuda::device_count())),
			       nullptr;
		sym_time spin = o && o->spin_ns > 0 ? o->spin_ns : kDefaultSpin;
		auto *x = new torch_x(threads, cuda, device, spin, o ? o->memory_mb : 0);
		x->ops = &torch_ops;
		return x;
	} catch (const std::exception &e) {
		return fail(err, errlen, 0, "torch executor: " + what_of(e)), nullptr;
	} catch (...) {
		return fail(err, errlen, 0, "torch executor: an unknown C++ exception"), nullptr;
	}
}
