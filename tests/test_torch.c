/* tests/test_torch.c - the TorchScript executor (runtime/torch/).
 *
 * Skips (77) in a build without libtorch (after checking that opening it says
 * so) and where /usr/bin/python3 cannot import torch (Debian's python3-torch:
 * the models are made at test time). Else /usr/bin/python3 makes small
 * TorchScript models (seeded) in a temporary directory, with inputs and the
 * outputs PyTorch computes for them, and the tests check:
 *   - opening: the defaults, bad thread counts and devices, cuda refused
 *     clearly where this libtorch has none;
 *   - an MLP (FP32 [16] -> [4], with batch norm saved in training mode, so
 *     that eval mode matters): batches of 1, 3 and max_batch give PyTorch's
 *     outputs to 1e-5, and a batch's outputs equal its requests run one by
 *     one; began >= start, ended >= began; 2 intra-op threads give the same;
 *   - UINT8 in, INT64 out (a byte sum);
 *   - memory: static = the parameters' and buffers' bytes (as PyTorch counts
 *     them), dynamic measured, at least a batch's input and output, growing
 *     with the batch; the memory rule refuses a model that does not fit;
 *   - every refusal at load: no spec, bad spec keys, a missing file, a
 *     directory, a file that is not TorchScript (garbage; torch.save's state
 *     dict), datatypes libtorch lacks, a signature mismatch (output dtype,
 *     output elements, input dtype, a tuple output, a model that fails at
 *     max_batch), ids out of range;
 *   - runs: unknown model, after unload, unload twice, load twice (replaces),
 *     bad batch sizes, input lengths and output buffers, and a model that
 *     raises during a run (the error comes back, the model still runs);
 *   - loads and unloads on another thread while batches run;
 *   - `symphony profile --executor torch` on a cluster file naming the model
 *     (argv[1]: the symphony binary).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/executor.h"
#include "testutil.h"

#define PYTHON  "/usr/bin/python3" /* Debian's python3-torch imports only there */
#define MAXB    8
#define IN      16
#define OUT     4
#define MIB     (1024.0 * 1024.0)

static const char *symphony_bin;
static char dir[256];

/* Makes the models, inputs and PyTorch's outputs in argv[1]. */
static const char gen_py[] =
	"import os, struct, sys\n"
	"import torch\n"
	"d = sys.argv[1]\n"
	"def save(m, name):\n"
	"    torch.jit.save(torch.jit.script(m), os.path.join(d, name))\n"
	"def write(name, t, fmt='f'):\n"
	"    v = t.contiguous().view(-1).tolist()\n"
	"    with open(os.path.join(d, name), 'wb') as f:\n"
	"        f.write(struct.pack('<%d%s' % (len(v), fmt), *v))\n"
	"class MLP(torch.nn.Module):\n"
	"    def __init__(self):\n"
	"        super().__init__()\n"
	"        self.l1 = torch.nn.Linear(16, 32)\n"
	"        self.bn = torch.nn.BatchNorm1d(32)\n"
	"        self.l2 = torch.nn.Linear(32, 4)\n"
	"    def forward(self, x):\n"
	"        return self.l2(torch.relu(self.bn(self.l1(x))))\n"
	"def mlp(seed):\n"
	"    torch.manual_seed(seed)\n"
	"    m = MLP()\n"
	"    with torch.no_grad():\n"
	"        m.bn.running_mean.uniform_(-0.5, 0.5)\n"
	"        m.bn.running_var.uniform_(0.5, 1.5)\n"
	"        m.bn.weight.uniform_(0.5, 1.5)\n"
	"    return m\n"
	"torch.manual_seed(7)\n"
	"x = torch.rand(8, 16) * 2 - 1\n"
	"write('x.bin', x)\n"
	"for seed, name in ((1, 'mlp'), (2, 'mlp2')):\n"
	"    m = mlp(seed)\n"
	"    m.eval()\n"
	"    with torch.no_grad():\n"
	"        write(name + '.out', m(x))\n"
	"    m.train()  # saved in training mode: the executor must put it in eval mode\n"
	"    save(m, name + '.pt')\n"
	"    n = sum(t.numel() * t.element_size() for t in list(m.parameters()) + list(m.buffers()))\n"
	"    with open(os.path.join(d, name + '.bytes'), 'w') as f:\n"
	"        f.write(str(n))\n"
	"torch.save(mlp(1).state_dict(), os.path.join(d, 'state_dict.pt'))\n"
	"class Wide(torch.nn.Module):\n"
	"    def __init__(self):\n"
	"        super().__init__()\n"
	"        self.l = torch.nn.Linear(16, 5)\n"
	"    def forward(self, x):\n"
	"        return self.l(x)\n"
	"save(Wide(), 'wide.pt')\n"
	"class Pair(torch.nn.Module):\n"
	"    def forward(self, x):\n"
	"        return x[:, :4], x[:, 4:8]\n"
	"save(Pair(), 'pair.pt')\n"
	"class Fixed(torch.nn.Module):\n"
	"    def forward(self, x):\n"
	"        return x.reshape(1, 16)[:, :4]\n"
	"save(Fixed(), 'fixed.pt')\n"
	"class Picky(torch.nn.Module):\n"
	"    def forward(self, x):\n"
	"        if bool(x.abs().max() > 100.0):\n"
	"            raise RuntimeError('input out of range')\n"
	"        return x[:, :4] * 2\n"
	"save(Picky(), 'picky.pt')\n"
	"class ByteSum(torch.nn.Module):\n"
	"    def forward(self, x):\n"
	"        return x.to(torch.int64).sum(dim=1, keepdim=True)\n"
	"save(ByteSum(), 'bytesum.pt')\n";

static const char *at(const char *name)
{
	static char ring[8][400];
	static int next;
	char *p = ring[next++ % 8];
	snprintf(p, sizeof(ring[0]), "%s/%s", dir, name);
	return p;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static float xs[MAXB][IN], want1[MAXB][OUT], want2[MAXB][OUT];
static double mlp_bytes;

static int setup(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/symphony-test-torch-XXXXXX", t && t[0] ? t : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	FILE *f = fopen(at("gen.py"), "w");
	if (!f || fputs(gen_py, f) < 0 || fclose(f))
		return -1;
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "%s '%s' '%s'", PYTHON, at("gen.py"), dir);
	if (system(cmd)) {
		print_error("%s failed\n", cmd);
		return -1;
	}
	size_t n;
	void *b = slurp(at("x.bin"), &n);
	assert_int_equal(n, sizeof(xs));
	memcpy(xs, b, n);
	free(b);
	b = slurp(at("mlp.out"), &n);
	assert_int_equal(n, sizeof(want1));
	memcpy(want1, b, n);
	free(b);
	b = slurp(at("mlp2.out"), &n);
	assert_int_equal(n, sizeof(want2));
	memcpy(want2, b, n);
	free(b);
	char *text = slurp(at("mlp.bytes"), NULL);
	mlp_bytes = atof(text);
	free(text);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- models and batches ---- */

struct model {
	struct sym_profile p;
	cJSON *spec;
	struct sym_model_desc d;
};

/* Model name with max_batch, its spec (JSON text, or NULL: none) and signature. */
static struct model *model_new(const char *name, const char *spec, int max_batch, enum sym_dtype in_t, int64_t in_n,
			       enum sym_dtype out_t, int64_t out_n)
{
	struct model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(sym_profile_init_linear(&m->p, name, 0.1, 0.1, max_batch), 0);
	sym_model_desc_default(&m->d, m->p.name, &m->p, 16);
	if (spec) {
		m->spec = cJSON_Parse(spec);
		assert_non_null(m->spec);
		m->d.spec = m->spec;
	}
	sym_tensor_sig_set(&m->d.input, "INPUT0", in_t, 1, &in_n);
	sym_tensor_sig_set(&m->d.output, "OUTPUT0", out_t, 1, &out_n);
	return m;
}

/* A model of file f (in the temporary directory), FP32 [16] -> FP32 [4]. */
static struct model *model_file(const char *f, int max_batch)
{
	char spec[600];
	snprintf(spec, sizeof(spec), "{\"file\": \"%s\"}", at(f));
	return model_new(f, spec, max_batch, SYM_DT_FP32, IN, SYM_DT_FP32, OUT);
}

static void model_free(struct model *m)
{
	cJSON_Delete(m->spec);
	sym_profile_finish(&m->p);
	free(m);
}

static struct sym_executor *open_torch(int threads)
{
	struct sym_executor_opts o = { .torch_threads = threads };
	char err[512];
	struct sym_executor *x = sym_executor_open("torch", &o, err, sizeof(err));
	if (!x)
		print_error("%s\n", err);
	assert_non_null(x);
	assert_string_equal(x->ops->name, "torch");
	return x;
}

static void load_ok(struct sym_executor *x, int id, struct model *m)
{
	char err[512];
	int rc = x->ops->load(x, id, &m->d, err, sizeof(err));
	if (rc)
		print_error("load %s: %s\n", m->d.name, err);
	assert_int_equal(rc, 0);
}

/* Loading m as id fails with rc and a message containing each of the NULL-terminated words. */
static void load_refused(struct sym_executor *x, int id, struct model *m, int rc, ...)
{
	char err[1024] = "";
	assert_int_equal(x->ops->load(x, id, &m->d, err, sizeof(err)), rc);
	print_message("refused: %s\n", err);
	va_list ap;
	va_start(ap, rc);
	for (const char *w; (w = va_arg(ap, const char *));)
		assert_contains(err, w);
	va_end(ap);
	model_free(m);
}

/* Runs requests first..first+n-1 of xs (FP32 [16] each) as one batch of
 * model id, from 2 ms from now; outputs into out (FP32 [4] each). Returns
 * the run's status, its message in err. */
static int run_batch(struct sym_executor *x, int id, int first, int n, float out[][OUT], char *err, size_t errlen)
{
	const void *in[MAXB + 1];
	void *outs[MAXB + 1];
	uint32_t lens[MAXB + 1], olens[MAXB + 1];
	for (int i = 0; i < n; i++) {
		in[i] = xs[(first + i) % MAXB];
		outs[i] = out[i];
		lens[i] = IN * sizeof(float);
		olens[i] = 0;
	}
	struct sym_batch_io io = { n, in, lens, outs, OUT * sizeof(float), olens };
	sym_time start = sym_monotonic_ns() + 2 * SYM_MS, began = 0, ended = 0;
	int rc = x->ops->run(x, id, &io, start, &began, &ended, err, errlen);
	if (!rc) {
		assert_true(began >= start);
		assert_true(ended >= began);
		for (int i = 0; i < n; i++)
			assert_int_equal(olens[i], OUT * sizeof(float));
	}
	return rc;
}

static void run_ok(struct sym_executor *x, int id, int first, int n, float out[][OUT])
{
	char err[512];
	int rc = run_batch(x, id, first, n, out, err, sizeof(err));
	if (rc)
		print_error("run: %s\n", err);
	assert_int_equal(rc, 0);
}

/* out[i] against want[(first + i) % MAXB] (as run_batch takes them), to 1e-5 (relative above 1). */
static void check_outputs(float out[][OUT], float want[][OUT], int first, int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < OUT; k++) {
			double w = want[(first + i) % MAXB][k];
			if (!(fabs(out[i][k] - w) <= 1e-5 * (1 + fabs(w)))) {
				print_error("request %d, output %d: got %.9g, PyTorch %.9g\n", first + i, k, out[i][k], w);
				fail();
			}
		}
}

/* ---- the tests ---- */

static void test_open(void **state)
{
	(void)state;
	char err[512];
	struct sym_executor *x = sym_executor_open("torch", NULL, err, sizeof(err));
	assert_non_null(x);
	assert_string_equal(x->ops->name, "torch");
	x->ops->destroy(x);
	struct sym_executor_opts o = { .torch_threads = 257 };
	assert_null(sym_executor_open("torch", &o, err, sizeof(err)));
	assert_contains(err, "torch executor: torch_threads must be 1 to 256, got 257");
	o = (struct sym_executor_opts){ .torch_threads = -1 };
	assert_null(sym_executor_open("torch", &o, err, sizeof(err)));
	assert_contains(err, "got -1");
	o = (struct sym_executor_opts){ .torch_device = "tpu" };
	assert_null(sym_executor_open("torch", &o, err, sizeof(err)));
	assert_contains(err, "torch executor: torch_device must be cpu or cuda, got 'tpu'");
	o = (struct sym_executor_opts){ .torch_device = "cpu", .torch_threads = 2 };
	x = sym_executor_open("torch", &o, err, sizeof(err));
	assert_non_null(x);
	x->ops->destroy(x);
	/* cuda: refused clearly unless this libtorch has CUDA and a GPU */
	o = (struct sym_executor_opts){ .torch_device = "cuda" };
	x = sym_executor_open("torch", &o, err, sizeof(err));
	if (x) {
		print_message("this libtorch has CUDA and a device: torch on cuda:0 opens\n");
		x->ops->destroy(x);
		o.device = 1023;
		assert_null(sym_executor_open("torch", &o, err, sizeof(err)));
		assert_contains(err, "there is no CUDA device 1023");
	} else {
		print_message("cuda refused: %s\n", err);
		if (!strstr(err, "this libtorch has no CUDA"))
			assert_contains(err, "finds no CUDA device");
	}
}

static void test_mlp(void **state)
{
	(void)state;
	struct sym_executor *x = open_torch(1);
	struct model *m = model_file("mlp.pt", MAXB);
	load_ok(x, 3, m);
	float big[MAXB][OUT], one[MAXB][OUT], three[3][OUT];
	run_ok(x, 3, 0, MAXB, big);
	check_outputs(big, want1, 0, MAXB);
	run_ok(x, 3, 2, 3, three);
	check_outputs(three, want1, 2, 3);
	for (int i = 0; i < MAXB; i++) {
		run_ok(x, 3, i, 1, &one[i]);
		check_outputs(&one[i], want1, i, 1);
	}
	/* a batch gives what its requests give one by one (bit for bit with Debian's reference BLAS; to 1e-6
	 * here, as an optimized BLAS may block a batch differently) */
	for (int i = 0; i < MAXB; i++)
		for (int k = 0; k < OUT; k++)
			assert_near(big[i][k], one[i][k], 1e-6 * (1 + fabs(one[i][k])), "batch vs one by one");
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < OUT; k++)
			assert_near(three[i][k], one[2 + i][k], 1e-6 * (1 + fabs(one[2 + i][k])), "batch of 3 vs one by one");
	/* a start in the future is waited for */
	const void *in[1] = { xs[0] };
	void *outs[1] = { one[0] };
	uint32_t len = IN * sizeof(float), olen = 0;
	struct sym_batch_io io = { 1, in, &len, outs, OUT * sizeof(float), &olen };
	char err[512];
	sym_time start = sym_monotonic_ns() + 30 * SYM_MS, began, ended;
	assert_int_equal(x->ops->run(x, 3, &io, start, &began, &ended, err, sizeof(err)), 0);
	assert_true(began >= start && ended >= began);
	x->ops->destroy(x);
	/* 2 intra-op threads: the same outputs */
	x = open_torch(2);
	load_ok(x, 0, m);
	run_ok(x, 0, 0, MAXB, big);
	check_outputs(big, want1, 0, MAXB);
	x->ops->destroy(x);
	model_free(m);
}

static void test_bytes(void **state)
{
	(void)state;
	struct sym_executor *x = open_torch(1);
	char spec[600];
	snprintf(spec, sizeof(spec), "{\"file\": \"%s\"}", at("bytesum.pt"));
	struct model *m = model_new("bytesum", spec, 4, SYM_DT_UINT8, 16, SYM_DT_INT64, 1);
	load_ok(x, 0, m);
	unsigned char in[3][16];
	int64_t out[3], want[3] = { 0, 0, 0 };
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 16; k++) {
			in[i][k] = (unsigned char)(37 * i + 11 * k + 200);
			want[i] += in[i][k];
		}
	const void *ins[3] = { in[0], in[1], in[2] };
	void *outs[3] = { &out[0], &out[1], &out[2] };
	uint32_t lens[3] = { 16, 16, 16 }, olens[3];
	struct sym_batch_io io = { 3, ins, lens, outs, 8, olens };
	char err[512];
	sym_time began, ended;
	assert_int_equal(x->ops->run(x, 0, &io, sym_monotonic_ns(), &began, &ended, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(olens[i], 8);
		assert_int_equal(out[i], want[i]);
	}
	x->ops->destroy(x);
	model_free(m);
}

static void test_memory(void **state)
{
	(void)state;
	struct sym_executor *x = open_torch(1);
	struct model *m = model_file("mlp.pt", MAXB);
	load_ok(x, 5, m);
	struct sym_model_memory one, all;
	assert_int_equal(x->ops->memory(x, 5, 1, &one), 0);
	assert_int_equal(x->ops->memory(x, 5, MAXB, &all), 0);
	print_message("static %.0f bytes (PyTorch counts %.0f); dynamic %.0f bytes at batch 1, %.0f at %d\n",
		      one.static_mb * MIB, mlp_bytes, one.dynamic_mb * MIB, all.dynamic_mb * MIB, MAXB);
	assert_near(one.static_mb * MIB, mlp_bytes, 0.5, "static: the parameters' and buffers' bytes");
	assert_near(all.static_mb, one.static_mb, 0, "static whatever the batch");
	/* a batch holds at least its input and output */
	assert_true(one.dynamic_mb * MIB >= (IN + OUT) * sizeof(float));
	assert_true(all.dynamic_mb * MIB >= MAXB * (IN + OUT) * sizeof(float));
	assert_true(all.dynamic_mb > one.dynamic_mb);
	struct sym_model_memory mid;
	assert_int_equal(x->ops->memory(x, 5, 4, &mid), 0);
	assert_true(mid.dynamic_mb >= one.dynamic_mb && mid.dynamic_mb <= all.dynamic_mb);
	assert_int_equal(x->ops->memory(x, 5, 0, &mid), -EINVAL);
	assert_int_equal(x->ops->memory(x, 5, MAXB + 1, &mid), -EINVAL);
	assert_int_equal(x->ops->memory(x, 6, 1, &mid), -EINVAL);
	assert_int_equal(x->ops->memory(x, -1, 1, &mid), -EINVAL);
	x->ops->destroy(x);

	/* the memory rule (core/memory.h): a device of 4.2 KB holds the weights (about 3 KB), not them and a batch */
	struct sym_executor_opts o = { .memory_mb = 0.004 };
	char err[512];
	x = sym_executor_open("torch", &o, err, sizeof(err));
	assert_non_null(x);
	load_refused(x, 0, model_file("mlp.pt", MAXB), -ENOSPC, "torch executor: model 'mlp.pt' does not fit",
		     "by the memory rule", "the device has 0.004 MB", NULL);
	x->ops->destroy(x);
	/* two models: the sum of their static memory plus the larger dynamic one */
	double need1 = all.static_mb + all.dynamic_mb, need2 = 2 * all.static_mb + all.dynamic_mb;
	o.memory_mb = (need1 + need2) / 2;
	x = sym_executor_open("torch", &o, err, sizeof(err));
	assert_non_null(x);
	load_ok(x, 0, m);
	load_ok(x, 0, m); /* loaded again: it replaces itself, and fits */
	load_refused(x, 1, model_file("mlp.pt", MAXB), -ENOSPC, "does not fit", NULL);
	assert_int_equal(x->ops->unload(x, 0, err, sizeof(err)), 0);
	load_ok(x, 1, m);
	x->ops->destroy(x);
	model_free(m);
}

static void test_refusals(void **state)
{
	(void)state;
	struct sym_executor *x = open_torch(1);
	char spec[700];
	/* the spec */
	load_refused(x, 0, model_new("nospec", NULL, 4, SYM_DT_FP32, IN, SYM_DT_FP32, OUT), -EINVAL,
		     "torch executor: model 'nospec' has no executor spec",
		     "set runtime.models.nospec.executor to {\"file\": \"PATH.pt\"}", NULL);
	load_refused(x, 0, model_new("k", "{\"file\": \"a.pt\", \"builtin\": \"mlp\"}", 4, SYM_DT_FP32, IN, SYM_DT_FP32, OUT),
		     -EINVAL, "runtime.models.k.executor: unknown key 'builtin'", NULL);
	load_refused(x, 0, model_new("k", "{\"file\": 3}", 4, SYM_DT_FP32, IN, SYM_DT_FP32, OUT), -EINVAL,
		     "runtime.models.k.executor: key 'file': expected the path of a TorchScript file", NULL);
	load_refused(x, 0, model_new("k", "{\"file\": \"\"}", 4, SYM_DT_FP32, IN, SYM_DT_FP32, OUT), -EINVAL,
		     "key 'file'", NULL);
	load_refused(x, 0, model_new("k", "{}", 4, SYM_DT_FP32, IN, SYM_DT_FP32, OUT), -EINVAL, "key 'file'", NULL);
	/* the file */
	load_refused(x, 0, model_file("missing.pt", 4), -EINVAL, "torch executor: model 'missing.pt': cannot open",
		     "missing.pt': No such file or directory", NULL);
	snprintf(spec, sizeof(spec), "{\"file\": \"%s\"}", dir);
	load_refused(x, 0, model_new("d", spec, 4, SYM_DT_FP32, IN, SYM_DT_FP32, OUT), -EINVAL, "is not a file", NULL);
	FILE *f = fopen(at("garbage.pt"), "w");
	assert_non_null(f);
	fputs("this is not a model\n", f);
	fclose(f);
	load_refused(x, 0, model_file("garbage.pt", 4), -EINVAL, "torch executor: model 'garbage.pt'",
		     "is not a TorchScript file libtorch can load", NULL);
	load_refused(x, 0, model_file("state_dict.pt", 4), -EINVAL, "state_dict.pt' is not a TorchScript file",
		     "torch.save does not", NULL);
	/* datatypes libtorch has no tensors of */
	snprintf(spec, sizeof(spec), "{\"file\": \"%s\"}", at("mlp.pt"));
	load_refused(x, 0, model_new("u16", spec, 4, SYM_DT_UINT16, IN, SYM_DT_FP32, OUT), -EINVAL,
		     "libtorch has no UINT16 tensors (the input signature's datatype)", NULL);
	load_refused(x, 0, model_new("u64", spec, 4, SYM_DT_FP32, IN, SYM_DT_UINT64, 1), -EINVAL,
		     "libtorch has no UINT64 tensors (the output signature's datatype)", NULL);
	/* signature mismatches, found by the dry runs */
	load_refused(x, 0, model_new("fp64", spec, 4, SYM_DT_FP32, IN, SYM_DT_FP64, OUT), -EINVAL,
		     "model 'fp64'", "its output is FP32, the output signature says FP64", NULL);
	load_refused(x, 0, model_new("elems", spec, 4, SYM_DT_FP32, IN, SYM_DT_FP32, 10), -EINVAL,
		     "for a batch of 1 it gives an output of shape [1, 4] (4 elements per request), the output "
		     "signature has 10 per request", NULL);
	load_refused(x, 0, model_file("wide.pt", 4), -EINVAL, "model 'wide.pt'", "shape [1, 5] (5 elements per request)",
		     NULL);
	load_refused(x, 0, model_new("i64", spec, 4, SYM_DT_INT64, IN, SYM_DT_FP32, OUT), -EINVAL,
		     "it fails on a batch of 1 zero inputs of the input signature (INT64 [16])", NULL);
	load_refused(x, 0, model_new("shape", spec, 4, SYM_DT_FP32, 12, SYM_DT_FP32, OUT), -EINVAL,
		     "(FP32 [12])", "mat1 and mat2 shapes cannot be multiplied", NULL);
	load_refused(x, 0, model_file("pair.pt", 4), -EINVAL, "its forward returns Tuple, not one tensor", NULL);
	load_refused(x, 0, model_file("fixed.pt", 4), -EINVAL, "it fails on a batch of 4 zero inputs", NULL);
	struct model *m = model_file("fixed.pt", 1); /* at batch 1 it is fine */
	load_ok(x, 0, m);
	model_free(m);
	/* ids */
	load_refused(x, -1, model_file("mlp.pt", 4), -EINVAL, "model id -1 is not within 0..4095", NULL);
	load_refused(x, 4096, model_file("mlp.pt", 4), -EINVAL, "model id 4096 is not within 0..4095", NULL);
	x->ops->destroy(x);
}

static void test_runs(void **state)
{
	(void)state;
	struct sym_executor *x = open_torch(1);
	char err[512];
	float out[MAXB + 1][OUT];
	/* unknown model, never loaded */
	assert_int_equal(run_batch(x, 9, 0, 1, out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "torch executor: model 9 is not loaded");
	assert_int_equal(x->ops->unload(x, 9, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 9 is not loaded");
	/* load, run, unload, run, unload again */
	struct model *m = model_file("mlp.pt", MAXB), *m2 = model_file("mlp2.pt", MAXB);
	load_ok(x, 1, m);
	run_ok(x, 1, 0, 2, out);
	check_outputs(out, want1, 0, 2);
	assert_int_equal(x->ops->unload(x, 1, err, sizeof(err)), 0);
	assert_int_equal(run_batch(x, 1, 0, 1, out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 1 is not loaded");
	assert_int_equal(x->ops->unload(x, 1, err, sizeof(err)), -EINVAL);
	struct sym_model_memory mem;
	assert_int_equal(x->ops->memory(x, 1, 1, &mem), -EINVAL);
	/* load twice: the second replaces the first */
	load_ok(x, 1, m);
	load_ok(x, 1, m2);
	run_ok(x, 1, 0, MAXB, out);
	check_outputs(out, want2, 0, MAXB);
	/* bad batches */
	assert_int_equal(run_batch(x, 1, 0, 0, out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "batch of 0 for model 'mlp2.pt' (1..8)");
	assert_int_equal(run_batch(x, 1, 0, MAXB + 1, out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "batch of 9");
	const void *in[2] = { xs[0], xs[1] };
	void *outs[2] = { out[0], out[1] };
	uint32_t lens[2] = { IN * sizeof(float), IN * sizeof(float) - 4 }, olens[2];
	struct sym_batch_io io = { 2, in, lens, outs, OUT * sizeof(float), olens };
	sym_time began, ended;
	assert_int_equal(x->ops->run(x, 1, &io, 0, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 'mlp2.pt': input 1 has 60 bytes, its signature takes 64");
	lens[1] = IN * sizeof(float);
	io.out_cap = OUT * sizeof(float) - 1;
	assert_int_equal(x->ops->run(x, 1, &io, 0, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "output buffers of 15 bytes, it needs 16");
	io.out_cap = OUT * sizeof(float);
	assert_int_equal(x->ops->run(x, 1, &io, 0, &began, &ended, err, sizeof(err)), 0);
	/* an error inside forward comes back as -EINVAL with its message, and the model still runs */
	struct model *p = model_file("picky.pt", MAXB);
	load_ok(x, 2, p);
	float bad[IN];
	for (int k = 0; k < IN; k++)
		bad[k] = k == 3 ? 1000.0f : 1.0f;
	in[1] = bad;
	assert_int_equal(x->ops->run(x, 2, &io, 0, &began, &ended, err, sizeof(err)), -EINVAL);
	print_message("a failing batch: %s\n", err);
	assert_contains(err, "torch executor: model 'picky.pt': its batch of 2 failed:");
	assert_contains(err, "input out of range");
	in[1] = xs[1];
	assert_int_equal(x->ops->run(x, 2, &io, 0, &began, &ended, err, sizeof(err)), 0);
	for (int k = 0; k < OUT; k++)
		assert_near(out[1][k], 2 * xs[1][k], 0, "picky: 2x");
	x->ops->destroy(x);
	model_free(m);
	model_free(m2);
	model_free(p);
}

/* ---- loads on another thread while batches run ---- */

struct loader {
	struct sym_executor *x;
	struct model *m;
	int rounds, failures;
};

static void *loader_main(void *arg)
{
	struct loader *l = arg;
	char err[512];
	for (int i = 0; i < l->rounds; i++)
		if (l->x->ops->load(l->x, 7, &l->m->d, err, sizeof(err)) || l->x->ops->unload(l->x, 7, err, sizeof(err)))
			l->failures++;
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	struct sym_executor *x = open_torch(1);
	struct model *m = model_file("mlp.pt", MAXB), *m2 = model_file("mlp2.pt", MAXB);
	load_ok(x, 1, m);
	struct loader l = { x, m2, 10, 0 };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, loader_main, &l), 0);
	float out[MAXB][OUT];
	for (int i = 0; i < 40; i++) {
		run_ok(x, 1, i % MAXB, 1 + i % MAXB, out);
		check_outputs(out, want1, i % MAXB, 1 + i % MAXB);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(l.failures, 0);
	x->ops->destroy(x);
	model_free(m);
	model_free(m2);
}

/* ---- symphony profile --executor torch ---- */

/* Runs symphony with SYM_TORCH_MODULE set to `module`, or unset (NULL): then
 * the runtime finds symphony-torch.so beside symphony-runtime.so. */
static int run_symphony_with(const char *module, const char *const *argv, const char *out, const char *errf)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (module ? setenv("SYM_TORCH_MODULE", module, 1) : unsetenv("SYM_TORCH_MODULE"))
			_exit(126);
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		execv(symphony_bin, (char *const *)argv);
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int run_symphony(const char *const *argv, const char *out, const char *errf)
{
	return run_symphony_with(NULL, argv, out, errf);
}

static void test_profile_command(void **state)
{
	(void)state;
	if (!symphony_bin) {
		print_message("no symphony binary given: skipped\n");
		skip();
	}
	char cfg[1500], cfg_path[400];
	snprintf(cfg, sizeof(cfg),
		 "{\"models\": [{\"name\": \"mlp\", \"alpha_ms\": 0.1, \"beta_ms\": 1, \"max_batch\": 8}], \"slo_ms\": 50,\n"
		 " \"runtime\": {\"executor\": \"torch\", \"torch_threads\": 1, \"models\": {\"mlp\": {\n"
		 "  \"input\": {\"datatype\": \"FP32\", \"shape\": [16]}, \"output\": {\"datatype\": \"FP32\", \"shape\": [4]},\n"
		 "  \"executor\": {\"file\": \"%s\"}}}}}\n",
		 at("mlp.pt"));
	snprintf(cfg_path, sizeof(cfg_path), "%s", at("cluster.json"));
	FILE *f = fopen(cfg_path, "w");
	assert_non_null(f);
	fputs(cfg, f);
	fclose(f);
	char o[400], e[400];
	snprintf(o, sizeof(o), "%s", at("profile.out"));
	snprintf(e, sizeof(e), "%s", at("profile.err"));
	const char *argv[] = { symphony_bin, "profile", cfg_path, "--model", "mlp", "--batches", "1,8", "--repeats", "3",
			       "--warmup", "1", "--quiet", "--out", at("p.json"), "--json", "-", NULL };
	int rc = run_symphony(argv, o, e);
	char *out = slurp(o, NULL), *errs = slurp(e, NULL);
	if (rc)
		print_error("symphony profile: exit %d: %s\n", rc, errs);
	assert_int_equal(rc, 0);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	cJSON *rec = cJSON_GetObjectItemCaseSensitive(j, "record");
	if (!rec)
		rec = j;
	char *text = cJSON_PrintUnformatted(rec);
	print_message("profile record (start): %.300s\n", text);
	assert_contains(text, "\"executor\":\"torch\"");
	assert_contains(text, "\"device\":\"cpu (1 intra-op thread)\"");
	free(text);
	cJSON_Delete(j);
	free(out);
	free(errs);
	/* the flag overrides the file, and a missing model file is the executor's clear error (exit 2) */
	const char *argv2[] = { symphony_bin, "profile", cfg_path, "--model", "mlp", "--batches", "1,2", "--executor",
				"torch", "--torch-threads", "2", "--quiet", "--out", at("p.json"), "--json", "-", NULL };
	assert_int_equal(run_symphony(argv2, o, e), 0);
	out = slurp(o, NULL);
	assert_contains(out, "cpu (2 intra-op threads)");
	free(out);
	/* the module: named where it is not, or a library that is not it */
	assert_int_equal(run_symphony_with(at("nowhere.so"), argv2, o, e), 2);
	errs = slurp(e, NULL);
	print_message("refused: %s", errs);
	assert_contains(errs, "torch executor: cannot load its module: SYM_TORCH_MODULE=");
	assert_contains(errs, "nowhere.so does not exist");
	free(errs);
	char other[600];
	snprintf(other, sizeof(other), "%s", symphony_bin);
	snprintf(strrchr(other, '/') + 1, sizeof(other) - (size_t)(strrchr(other, '/') + 1 - other),
		 "symphony-runtime.so");
	assert_int_equal(run_symphony_with(other, argv2, o, e), 2);
	errs = slurp(e, NULL);
	print_message("refused: %s", errs);
	assert_contains(errs, "symphony-runtime.so: ");
	assert_contains(errs, "sym_torch_module_open");
	free(errs);
	assert_int_equal(rename(at("mlp.pt"), at("gone.pt")), 0);
	assert_int_equal(run_symphony(argv, o, e), 2);
	errs = slurp(e, NULL);
	print_message("refused: %s", errs);
	assert_contains(errs, "torch executor: model 'mlp': cannot open");
	free(errs);
}

int main(int argc, char **argv)
{
	symphony_bin = argc > 1 ? argv[1] : NULL;
	char err[512] = "";
	if (!sym_executor_torch_built()) {
		struct sym_executor *x = sym_executor_open("torch", NULL, err, sizeof(err));
		if (x || !strstr(err, "this build has no TorchScript support")) {
			fprintf(stderr, "a build without libtorch must say so: %s\n", err);
			return 1;
		}
		printf("no TorchScript in this build: %s\n", err);
		return 77;
	}
	if (system(PYTHON " -c 'import torch' >/dev/null 2>&1") != 0) {
		printf("%s cannot import torch (Debian: python3-torch): the models cannot be made here\n", PYTHON);
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_mlp),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_profile_command),
	};
	return cmocka_run_group_tests_name("torch", tests, setup, teardown);
}
