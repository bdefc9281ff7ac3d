/* tests/test_cluster.c - the cluster configuration (runtime/cluster.h).
 *
 *   - defaults: addresses laid out from port_base, HTTP ports from http_base, the tcp planning
 *     delays, the default signature UINT8 [input_bytes] -> UINT64 [1];
 *   - a file's runtime keys, flags overriding them, listed frontends;
 *   - model signatures: given in the file, or a built-in executor spec's by default; the largest
 *     input and output; the resolved configuration echoes them;
 *   - every bad key, value and combination is refused with a message naming it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cluster.h"
#include "runtime/wire.h"
#include "testutil.h"

#define MODELS "\"slo_ms\": 30, \"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2}, {\"name\": \"b\", \"alpha_ms\": 2, \"beta_ms\": 1}]"

/* Loads the file text into c (initialized here) and resolves it unless the load failed;
 * returns the first nonzero status, with its message in err. */
static int load(struct sym_cluster *c, const char *text, char *err, size_t errlen)
{
	char path[256];
	write_temp_bytes("cluster", text, strlen(text), path, sizeof(path));
	assert_int_equal(sym_cluster_init(c), 0);
	int rc = sym_cluster_load_file(c, path, err, errlen);
	unlink(path);
	return rc ? rc : sym_cluster_resolve(c, err, errlen);
}

static void test_defaults(void **state)
{
	(void)state;
	struct sym_cluster c;
	char err[512], buf[16];
	assert_int_equal(load(&c, "{" MODELS "}", err, sizeof(err)), 0);
	assert_string_equal(c.schedd.host, "127.0.0.1");
	assert_string_equal(c.schedd.port, "7100");
	assert_int_equal(c.nfrontends, 1);
	assert_string_equal(c.frontends[0].fabric.port, "7101");
	assert_string_equal(c.frontends[0].clients.port, "7102");
	assert_string_equal(c.frontends[0].http.port, "8101");
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_SCHEDD, 0, buf, sizeof(buf)), "8100");
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_BACKEND, 1, buf, sizeof(buf)), "8613");
	assert_int_equal(c.exp.gpus, 2); /* one per backend */
	assert_near(c.exp.ctrl_ms, 0.3, 1e-12, "tcp ctrl_ms");
	assert_near(c.exp.resp_ms, 1.0, 1e-12, "tcp resp_ms");
	assert_near(c.exp.done_ms, 0.2, 1e-12, "tcp done_ms");
	for (int m = 0; m < 2; m++) {
		assert_int_equal(c.models[m].input.dtype, SYM_DT_UINT8);
		assert_int_equal(sym_tensor_bytes(&c.models[m].input), 1024);
		assert_int_equal(c.models[m].output.dtype, SYM_DT_UINT64);
		assert_int_equal(sym_tensor_bytes(&c.models[m].output), 8);
		assert_int_equal(sym_cluster_input_bytes(&c, (size_t)m), 1024);
	}
	assert_int_equal(c.input_bytes_max, 1024);
	assert_int_equal(c.output_bytes_max, 8);
	/* the client-facing bounds that hold one host's flood (docs/runtime.md) */
	assert_int_equal(c.http_per_ip_max, 64);
	assert_int_equal(c.clients_per_ip_max, 64);
	assert_true(c.http_body_budget == 64u << 20);
	assert_near(c.client_min_rate, 32768, 1e-9, "client_min_rate");
	assert_near(c.clients_timeout_s, 10, 1e-9, "clients_timeout_s");
	assert_string_equal(c.executor, "emulated");
	assert_int_equal(c.torch_threads, 1);
	assert_string_equal(c.torch_device, "cpu");
	sym_cluster_finish(&c);
}

/* Processes on hosts of their own (pods): listed by DNS name, each listener binds
 * listen_host, every HTTP port is http_port (the flag overrides the file). */
static void test_pods(void **state)
{
	(void)state;
	struct sym_cluster c;
	char err[512], buf[16];
	assert_int_equal(load(&c, "{" MODELS ", \"runtime\": {\"schedd\": [\"schedd-0.schedd-peers:7100\", "
			 "\"schedd-1.schedd-peers:7100\"], \"frontends\": [{\"fabric\": \"frontend-0.frontend-peers:7101\", "
			 "\"clients\": \"frontend-0.frontend-peers:7102\"}, {\"fabric\": \"frontend-1.frontend-peers:7101\", "
			 "\"clients\": \"frontend-1.frontend-peers:7102\", \"http\": \"frontend-1.frontend-peers:9000\"}], "
			 "\"backends\": 2, \"backends_max\": 8, \"http_port\": 8080, \"listen_host\": \"0.0.0.0\"}}",
			 err, sizeof(err)),
			 0);
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_SCHEDD, 0, buf, sizeof(buf)), "8080");
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_SCHEDD, 1, buf, sizeof(buf)), "8080");
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_BACKEND, 7, buf, sizeof(buf)), "8080");
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_FRONTEND, 0, buf, sizeof(buf)), "8080");
	assert_string_equal(c.frontends[0].http.host, "frontend-0.frontend-peers");
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_FRONTEND, 1, buf, sizeof(buf)), "9000"); /* listed */
	assert_string_equal(sym_cluster_bind_host(&c, c.schedd.host), "0.0.0.0");
	cJSON *rt = sym_cluster_runtime_json(&c);
	assert_int_equal(cJSON_GetObjectItem(rt, "http_port")->valueint, 8080);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(rt, "listen_host")), "0.0.0.0");
	cJSON_Delete(rt);
	sym_cluster_finish(&c);
	/* without them: the listed host, and the layout */
	assert_int_equal(load(&c, "{" MODELS ", \"runtime\": {\"host\": \"10.0.0.5\"}}", err, sizeof(err)), 0);
	assert_string_equal(sym_cluster_bind_host(&c, c.schedd.host), "10.0.0.5");
	assert_string_equal(sym_cluster_http_port(&c, SYM_ROLE_BACKEND, 1, buf, sizeof(buf)), "8613");
	assert_int_equal(sym_cluster_apply_flag(&c, "listen-host", "::", err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "http-port", "70000", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--http-port"));
	assert_string_equal(sym_cluster_bind_host(&c, c.schedd.host), "::");
	sym_cluster_finish(&c);
}

/* A reload: the live keys and the SLOs are taken on and listed; anything
 * else refuses the whole reload, naming it, with nothing changed. */
static void test_reload(void **state)
{
	(void)state;
	struct sym_cluster c, f;
	char err[1500], done[1500];
	const char *base = "{" MODELS ", \"runtime\": {\"backends\": 2, \"deadline_max_ms\": 5000}}";
	assert_int_equal(load(&c, base, err, sizeof(err)), 0);
	/* the same file: no change */
	assert_int_equal(load(&f, base, err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_reload(&c, &f, done, sizeof(done), err, sizeof(err)), 0);
	assert_string_equal(done, "");
	sym_cluster_finish(&f);
	/* live: deadlines, limits, an SLO */
	assert_int_equal(load(&f, "{\"slo_ms\": 30, \"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2}, "
			 "{\"name\": \"b\", \"alpha_ms\": 2, \"beta_ms\": 1, \"slo_ms\": 45}], \"slo_mode\": \"at-least\", "
			 "\"runtime\": {\"backends\": 2, \"deadline_max_ms\": 1000, \"clients_max\": 9, \"late_status\": 504}}",
			 err, sizeof(err)),
			 0);
	assert_int_equal(sym_cluster_reload(&c, &f, done, sizeof(done), err, sizeof(err)), 4);
	assert_non_null(strstr(done, "deadline_max_ms 5000 -> 1000"));
	assert_non_null(strstr(done, "clients_max 256 -> 9"));
	assert_non_null(strstr(done, "late_status 200 -> 504"));
	assert_non_null(strstr(done, "slo_ms of b 30 -> 45"));
	assert_near(c.deadline_max_ms, 1000, 0, "deadline_max_ms");
	assert_int_equal(c.clients_max, 9);
	assert_int_equal(c.late_status, 504);
	assert_near(c.exp.model_slo_ms[1], 45, 0, "b's SLO");
	assert_near(c.exp.model_slo_ms[0], 30, 0, "a's SLO");
	sym_cluster_finish(&f);
	/* a membership list, a model's profile and the policy need a restart: nothing changes */
	assert_int_equal(load(&f, "{\"slo_ms\": 30, \"models\": [{\"name\": \"a\", \"alpha_ms\": 1.5, \"beta_ms\": 2}, "
			 "{\"name\": \"b\", \"alpha_ms\": 2, \"beta_ms\": 1}], \"policy\": \"eager\", \"runtime\": "
			 "{\"backends\": 2, \"backends_max\": 4, \"frontends\": 2, \"deadline_max_ms\": 700}}",
			 err, sizeof(err)),
			 0);
	assert_int_equal(sym_cluster_reload(&c, &f, done, sizeof(done), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "restart"));
	assert_non_null(strstr(err, "backends_max 2 -> 4"));
	assert_non_null(strstr(err, "frontends"));
	assert_non_null(strstr(err, "the experiment's models"));
	assert_non_null(strstr(err, "the experiment's policy"));
	assert_null(strstr(err, "deadline_max_ms")); /* (live: not among the refusals) */
	assert_near(c.deadline_max_ms, 1000, 0, "unchanged");
	assert_near(c.exp.model_slo_ms[1], 45, 0, "unchanged");
	assert_int_equal(c.backends_max, 2);
	sym_cluster_finish(&f);
	sym_cluster_finish(&c);
}

static void test_keys_and_flags(void **state)
{
	(void)state;
	struct sym_cluster c;
	char err[512];
	const char *text =
		"{" MODELS ", \"network\": {\"ctrl_ms\": 2, \"data_ms\": 0.1, \"resp_ms\": 3},\n"
		" \"runtime\": {\"port_base\": 9000, \"frontends\": 3, \"backends\": 5, \"threads\": 2,\n"
		"  \"heartbeat_ms\": 5, \"failure_ms\": 20, \"input_max\": 4096, \"pool_slots\": 64, \"input_bytes\": 100,\n"
		"  \"http_base\": 0, \"late_status\": 504, \"deadline_max_ms\": 500, \"executor\": \"emulated\",\n"
		"  \"http_body_budget\": 20000000, \"client_min_rate\": 1000, \"clients_per_ip_max\": 0,\n"
		"  \"clients_timeout_s\": 2.5}}";
	assert_int_equal(load(&c, text, err, sizeof(err)), 0);
	assert_true(c.http_body_budget == 20000000);
	assert_near(c.client_min_rate, 1000, 1e-9, "client_min_rate");
	assert_int_equal(c.clients_per_ip_max, 0);
	assert_near(c.clients_timeout_s, 2.5, 1e-9, "clients_timeout_s");
	assert_string_equal(c.schedd.port, "9000");
	assert_int_equal(c.nfrontends, 3);
	assert_string_equal(c.frontends[2].fabric.port, "9005");
	assert_string_equal(c.frontends[2].clients.port, "9006");
	assert_string_equal(c.frontends[2].http.port, ""); /* http_base 0: no HTTP */
	assert_int_equal(c.exp.gpus, 5);
	assert_int_equal(c.threads, 2);
	assert_int_equal(c.late_status, 504);
	assert_near(c.exp.ctrl_ms, 2, 1e-12, "the file's network delays are kept");
	assert_int_equal(sym_cluster_input_bytes(&c, 1), 100);
	sym_cluster_finish(&c);

	/* flags override the file */
	char path[256];
	write_temp_bytes("cluster", text, strlen(text), path, sizeof(path));
	assert_int_equal(sym_cluster_init(&c), 0);
	assert_int_equal(sym_cluster_load_file(&c, path, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(sym_cluster_apply_flag(&c, "port-base", "9100", err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "backends", "3", err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "http-base", "12000", err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "no-such-flag", "1", err, sizeof(err)), 1);
	assert_int_equal(sym_cluster_apply_flag(&c, "executor", "torch", err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "torch-threads", "4", err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "torch-device", "cuda", err, sizeof(err)), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "torch-device", "tpu", err, sizeof(err)), -EINVAL);
	assert_contains(err, "option --torch-device: expected cpu or cuda, got 'tpu'");
	assert_int_equal(sym_cluster_resolve(&c, err, sizeof(err)), 0);
	assert_string_equal(c.schedd.port, "9100");
	assert_string_equal(c.frontends[0].http.port, "12001");
	assert_int_equal(c.exp.gpus, 3);
	assert_string_equal(c.executor, "torch");
	assert_int_equal(c.torch_threads, 4);
	assert_string_equal(c.torch_device, "cuda");
	sym_cluster_finish(&c);

	/* the torch executor's keys in the file */
	assert_int_equal(load(&c,
			      "{" MODELS ", \"runtime\": {\"executor\": \"torch\", \"torch_threads\": 2, "
			      "\"torch_device\": \"cpu\", \"models\": {\"a\": {\"input\": {\"datatype\": \"FP32\", "
			      "\"shape\": [16]}, \"output\": {\"datatype\": \"FP32\", \"shape\": [4]}, "
			      "\"executor\": {\"file\": \"mlp.pt\"}}}}}",
			      err, sizeof(err)),
			 0);
	assert_string_equal(c.executor, "torch");
	assert_int_equal(c.torch_threads, 2);
	assert_string_equal(c.torch_device, "cpu");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c.models[0].spec, "file")->valuestring, "mlp.pt");
	sym_cluster_finish(&c);

	/* listed frontends, an explicit schedd */
	assert_int_equal(load(&c,
			      "{" MODELS ", \"runtime\": {\"schedd\": \"[::1]:7000\", \"frontends\": ["
			      "{\"fabric\": \"10.0.0.1:7001\", \"clients\": \"10.0.0.1:7002\", \"http\": \"10.0.0.1:80\"},"
			      "{\"fabric\": \"10.0.0.2:7001\", \"clients\": \"10.0.0.2:7002\"}]}}",
			      err, sizeof(err)),
			 0);
	assert_string_equal(c.schedd.host, "::1");
	assert_int_equal(c.nfrontends, 2);
	assert_string_equal(c.frontends[0].http.port, "80");
	assert_string_equal(c.frontends[1].fabric.host, "10.0.0.2");
	assert_string_equal(c.frontends[1].http.host, "10.0.0.2"); /* from http_base: its client host */
	assert_string_equal(c.frontends[1].http.port, "8102");
	sym_cluster_finish(&c);
}

static void test_model_signatures(void **state)
{
	(void)state;
	struct sym_cluster c;
	char err[512];
	/* a: a built-in's signature by default; b: given in the file */
	assert_int_equal(load(&c,
			      "{" MODELS ", \"runtime\": {\"models\": {"
			      "\"a\": {\"executor\": {\"builtin\": \"mlp\", \"layers\": [8, 16, 4]}},"
			      "\"b\": {\"input\": {\"datatype\": \"FP16\", \"shape\": [2, 3]},"
			      "       \"output\": {\"name\": \"Y\", \"datatype\": \"INT32\", \"shape\": [5]}}}}}",
			      err, sizeof(err)),
			 0);
	assert_int_equal(c.models[0].input.dtype, SYM_DT_FP32);
	assert_int_equal(sym_cluster_input_bytes(&c, 0), 32);
	assert_int_equal(sym_tensor_bytes(&c.models[0].output), 16);
	assert_string_equal(c.models[0].input.name, "INPUT0");
	assert_non_null(c.models[0].spec);
	assert_int_equal(c.models[1].input.dtype, SYM_DT_FP16);
	assert_int_equal(sym_cluster_input_bytes(&c, 1), 12);
	assert_string_equal(c.models[1].output.name, "Y");
	assert_int_equal(sym_tensor_bytes(&c.models[1].output), 20);
	assert_int_equal(c.input_bytes_max, 32);
	assert_int_equal(c.output_bytes_max, 20);
	/* the echo carries the models object, so a result file reproduces them */
	cJSON *o = sym_cluster_runtime_json(&c);
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "models");
	assert_non_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ms, "a"), "executor"));
	cJSON_Delete(o);
	sym_cluster_finish(&c);

	/* an explicit signature wins over the built-in's (the cuda executor then refuses a mismatch) */
	assert_int_equal(load(&c,
			      "{" MODELS ", \"runtime\": {\"models\": {\"a\": {\"executor\": {\"builtin\": \"mlp\", "
			      "\"layers\": [8, 4]}, \"input\": {\"datatype\": \"UINT8\", \"shape\": [7]}}}}}",
			      err, sizeof(err)),
			 0);
	assert_int_equal(c.models[0].input.dtype, SYM_DT_UINT8);
	assert_int_equal(sym_tensor_bytes(&c.models[0].output), 16); /* still the built-in's FP32 [4] */
	sym_cluster_finish(&c);
}

static void test_bad(void **state)
{
	(void)state;
	const struct {
		const char *runtime, *want;
	} bad[] = {
		{ "\"port_base\": 0", "key 'runtime.port_base': expected a port from 1" },
		{ "\"port_base\": \"x\"", "key 'runtime.port_base'" },
		{ "\"frontends\": 0", "key 'runtime.frontends': expected a count from 1 to 1024" },
		{ "\"frontends\": [{\"fabric\": \"h:1\"}]", "frontend 0: expected {\"fabric\"" },
		{ "\"frontends\": [{\"fabric\": \"h:1\", \"clients\": \"nohost\"}]", "frontend 0" },
		{ "\"backends\": -1", "key 'runtime.backends'" },
		{ "\"threads\": 300", "key 'runtime.threads': expected 1 to 256" },
		{ "\"heartbeat_ms\": 0", "key 'runtime.heartbeat_ms'" },
		{ "\"failure_ms\": 1e9", "key 'runtime.failure_ms'" },
		{ "\"input_max\": 4", "key 'runtime.input_max': expected 8 to" },
		{ "\"pool_slots\": 0", "key 'runtime.pool_slots'" },
		{ "\"input_bytes\": 0", "key 'runtime.input_bytes'" },
		{ "\"poll_us\": -1", "key 'runtime.poll_us'" },
		{ "\"executor\": \"tpu\"", "key 'runtime.executor': expected emulated, cuda or torch, got 'tpu'" },
		{ "\"device\": -1", "key 'runtime.device'" },
		{ "\"torch_threads\": 0", "key 'runtime.torch_threads': expected 1 to 256 intra-op threads, got '0'" },
		{ "\"torch_threads\": 257", "key 'runtime.torch_threads': expected 1 to 256" },
		{ "\"torch_device\": \"gpu\"", "key 'runtime.torch_device': expected cpu or cuda, got 'gpu'" },
		{ "\"http_base\": 70000", "key 'runtime.http_base'" },
		{ "\"http_body_max\": 10", "key 'runtime.http_body_max'" },
		{ "\"deadline_max_ms\": 0", "key 'runtime.deadline_max_ms'" },
		{ "\"late_status\": 302", "key 'runtime.late_status': expected 200 or 504" },
		{ "\"schedd\": \"nohostport\"", "key 'runtime.schedd': expected HOST:PORT" },
		{ "\"provider\": [1]", "key 'runtime.provider': expected a number, a string or true/false" },
		{ "\"bogus\": 1", "key 'runtime.bogus': unknown key (expected provider," },
		{ "\"models\": [1]", "key 'runtime.models': expected an object of model names" },
		/* combinations, found by resolve */
		{ "\"heartbeat_ms\": 30, \"failure_ms\": 50", "failure_ms (50) must be at least twice heartbeat_ms (30)" },
		{ "\"suspect_ms\": 15", "suspect_ms (15) must be at least twice heartbeat_ms (10)" },
		{ "\"suspect_ms\": 2000", "suspect_ms (2000) is above failure_ms (1000)" },
		{ "\"backends\": 4, \"backends_max\": 3", "backends_max (3) is below backends (4)" },
		{ "\"http_tls_cert\": \"c.pem\"", "http_tls_cert and runtime.http_tls_key go together" },
		{ "\"clients_max\": 0", "key 'runtime.clients_max'" },
		{ "\"http_conn_max\": 0", "key 'runtime.http_conn_max'" },
		{ "\"http_timeout_s\": 0.5", "key 'runtime.http_timeout_s'" },
		{ "\"http_per_ip_max\": -1", "key 'runtime.http_per_ip_max': expected 0 (no limit of its own) to 100000" },
		{ "\"http_body_budget\": 100", "key 'runtime.http_body_budget': expected bytes in 1024..1e12" },
		{ "\"http_body_budget\": 4096.5", "key 'runtime.http_body_budget': expected bytes" },
		{ "\"http_body_budget\": \"lots\"", "got 'lots'" },
		{ "\"http_body_budget\": 1048576", "http_body_budget (1048576) is below http_body_max (8388608)" },
		{ "\"client_min_rate\": 0", "key 'runtime.client_min_rate': expected bytes per second in 1..1e10, got '0'" },
		{ "\"client_min_rate\": -5", "key 'runtime.client_min_rate'" },
		{ "\"clients_per_ip_max\": 100001", "key 'runtime.clients_per_ip_max': expected 0 (no limit of its own)" },
		{ "\"clients_timeout_s\": 0", "key 'runtime.clients_timeout_s': expected 1 to 3600 seconds, got '0'" },
		{ "\"clients_timeout_s\": \"1h\"", "key 'runtime.clients_timeout_s'" },
		{ "\"secret_file\": \"\"", "key 'runtime.secret_file'" },
		{ "\"schedd\": [\"h:1\", \"h:2\", \"h:3\"]", "the active scheduler, then its standby" },
		{ "\"schedd\": \"h:1,nohostport\"", "got 'nohostport'" },
		{ "\"input_bytes\": 5000, \"input_max\": 4096", "input_bytes (5000) is larger than input_max (4096)" },
		{ "\"port_base\": 7100, \"http_base\": 7100", "HTTP ports from http_base 7100 overlap" },
		{ "\"frontends\": 600", "at most 510 frontends" },
		/* models */
		{ "\"models\": {\"zz\": {}}", "runtime.models: 'zz' is not a model of this experiment" },
		{ "\"models\": {\"a\": 3}", "runtime.models.a: expected an object" },
		{ "\"models\": {\"a\": {\"inputs\": {}}}", "runtime.models.a: unknown key 'inputs'" },
		{ "\"models\": {\"a\": {\"executor\": 1}}", "runtime.models.a.executor: expected an object" },
		{ "\"models\": {\"a\": {\"executor\": {\"builtin\": \"rnn\"}}}", "runtime.models.a.executor: " },
		{ "\"models\": {\"a\": {\"executor\": {\"builtin\": \"mlp\", \"layers\": [8, 20000]}}}",
		  "model 'a' gives 80000-byte outputs, more than the 61440" },
		{ "\"models\": {\"a\": {\"executor\": {\"builtin\": \"mlp\", \"layers\": [300000, 2]}}}",
		  "model 'a' takes 1200000-byte inputs, more than input_max (262144)" },
		{ "\"models\": {\"a\": {\"input\": {\"datatype\": \"FP64\", \"shape\": [40000]}}}",
		  "model 'a' takes 320000-byte inputs, more than input_max (262144): raise it (runtime.input_max" },
		{ "\"models\": {\"a\": {\"input\": {\"datatype\": \"FP64\", \"shape\": [400000]}}}",
		  "runtime.models.a.input" },
		{ "\"models\": {\"a\": {\"output\": {\"datatype\": \"FP32\", \"shape\": [0]}}}",
		  "runtime.models.a.output" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024], err[1024] = "";
		snprintf(text, sizeof(text), "{" MODELS ", \"runtime\": {%s}}", bad[i].runtime);
		struct sym_cluster c;
		int rc = load(&c, text, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].want))
			fail_msg("case %zu (%s): status %d, message '%s', expected '%s'", i, bad[i].runtime, rc, err,
				 bad[i].want);
		sym_cluster_finish(&c);
	}
	/* the runtime key itself, and flags */
	struct sym_cluster c;
	char err[512];
	assert_int_equal(load(&c, "{" MODELS ", \"runtime\": 3}", err, sizeof(err)), -EINVAL);
	assert_contains(err, "key 'runtime': expected an object");
	sym_cluster_finish(&c);
	assert_int_equal(sym_cluster_init(&c), 0);
	assert_int_equal(sym_cluster_apply_flag(&c, "threads", "0", err, sizeof(err)), -EINVAL);
	assert_contains(err, "option --threads: expected 1 to 256 scheduler threads, got '0'");
	assert_int_equal(sym_cluster_apply_flag(&c, "frontends", NULL, err, sizeof(err)), -EINVAL);
	assert_contains(err, "option --frontends needs a value");
	sym_cluster_finish(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_keys_and_flags),
		cmocka_unit_test(test_pods),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_model_signatures),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
