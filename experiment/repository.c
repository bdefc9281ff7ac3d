#include "experiment/repository.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/grow.h"
#include "profiles/zoo.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)
#define NAME_MAX_LEN 40 /* the experiment's model names (profiles/zoo.h) */

bool sym_repo_name_ok(const char *s, size_t n)
{
	if (!s || !n || n > NAME_MAX_LEN || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return false;
	return true;
}

static bool name_ok(const char *s)
{
	return sym_repo_name_ok(s, strlen(s));
}

/* A tensor entry of config.json's "input" or "output" (Triton's names, or
 * KServe's) as runtime/tensor.h's signature object. */
static int tensor(const cJSON *list, const char *file, const char *key, cJSON **out, char *err, size_t errlen)
{
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != 1 || !cJSON_IsObject(list->child))
		return ERR("%s: key '%s': expected an array of one tensor {\"name\", \"data_type\", \"dims\"} (a model "
			   "takes one input and gives one output)", file, key);
	const cJSON *t = list->child;
	for (const cJSON *k = t->child; k; k = k->next)
		if (strcmp(k->string, "name") && strcmp(k->string, "data_type") && strcmp(k->string, "datatype") &&
		    strcmp(k->string, "dims") && strcmp(k->string, "shape"))
			return ERR("%s: key '%s[0].%s': unknown (expected name, data_type, dims)", file, key, k->string);
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "data_type");
	if (!dt)
		dt = cJSON_GetObjectItemCaseSensitive(t, "datatype");
	const cJSON *dims = cJSON_GetObjectItemCaseSensitive(t, "dims");
	if (!dims)
		dims = cJSON_GetObjectItemCaseSensitive(t, "shape");
	if (!cJSON_IsString(dt))
		return ERR("%s: key '%s[0].data_type': expected a type such as TYPE_FP32 or FP32", file, key);
	const char *type = dt->valuestring;
	if (!strncmp(type, "TYPE_", 5))
		type += 5;
	if (!strcmp(type, "STRING") || !strcmp(type, "BYTES"))
		return ERR("%s: key '%s[0].data_type': %s tensors are not supported (fixed-size types only)", file, key,
			   dt->valuestring);
	cJSON *o = cJSON_CreateObject();
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
	if (!o || (name && !cJSON_AddItemToObject(o, "name", cJSON_Duplicate(name, 1))) ||
	    !cJSON_AddStringToObject(o, "datatype", type) ||
	    (dims && !cJSON_AddItemToObject(o, "shape", cJSON_Duplicate(dims, 1)))) {
		cJSON_Delete(o);
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	*out = o;
	return 0;
}

/* The version to serve: "version" if given (its model.pt must exist), else
 * the highest numbered directory holding a model.pt. */
static int pick_version(const char *mdir, const char *file, const cJSON *want, int *version, char *path,
			size_t plen, char *err, size_t errlen)
{
	struct stat st;
	if (want) {
		if (!cJSON_IsNumber(want) || want->valuedouble != floor(want->valuedouble) || want->valuedouble < 1 ||
		    want->valuedouble > INT_MAX)
			return ERR("%s: key 'version': expected a positive integer", file);
		*version = (int)want->valuedouble;
		snprintf(path, plen, "%s/%d/model.pt", mdir, *version);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			return snprintf(err, errlen, "%s: version %d has no model file: %s is missing", file, *version, path),
			       -ENOENT;
		return 0;
	}
	DIR *d = opendir(mdir);
	if (!d)
		return snprintf(err, errlen, "%s: %s", mdir, strerror(errno)), -errno;
	int best = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		errno = 0;
		long v = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || v < 1 || v > INT_MAX || errno || de->d_name[0] == '0' ||
		    de->d_name[0] == '+' || de->d_name[0] == '-')
			continue;
		char p[PATH_MAX];
		if (snprintf(p, sizeof(p), "%s/%ld/model.pt", mdir, v) >= (int)sizeof(p))
			continue;
		if (!stat(p, &st) && S_ISREG(st.st_mode) && v > best)
			best = (int)v;
	}
	closedir(d);
	if (!best)
		return snprintf(err, errlen, "%s: no version to serve: no %s/VERSION/model.pt (VERSION a positive integer)",
				file, mdir), -ENOENT;
	*version = best;
	snprintf(path, plen, "%s/%d/model.pt", mdir, best);
	return 0;
}

static const char *const config_keys[] = { "name", "platform", "max_batch_size", "input", "output", "slo_ms",
					    "version", "profile", NULL };
/* What a profile gives the experiment's model object; the rest of it (the fit's figures) is kept, not read. */
static const char *const profile_keys[] = { "alpha_ms", "beta_ms", "latency_ms", "static_mb", "dynamic_mb", NULL };

int sym_repo_read_model(const char *dir, const char *name, bool unprofiled_ok, cJSON **model, cJSON **rt,
			int *version, bool *profiled, char *err, size_t errlen)
{
	*model = *rt = NULL;
	if (!name_ok(name))
		return ERR("model repository %s: '%s' is not a model name (1 to %d of A-Z a-z 0-9 _ . -, not starting "
			   "with a dot)", dir, name, NAME_MAX_LEN);
	char mdir[PATH_MAX], file[PATH_MAX + 16];
	if ((size_t)snprintf(mdir, sizeof(mdir), "%s/%s", dir, name) >= sizeof(mdir))
		return ERR("model repository %s: path too long", dir);
	snprintf(file, sizeof(file), "%s/config.json", mdir);
	char *text = NULL;
	int rc = sym_read_file(file, &text);
	if (rc == -ENOENT)
		return snprintf(err, errlen, "model '%s' is not in repository %s (%s: no such file)", name, dir, file), rc;
	if (rc)
		return snprintf(err, errlen, "%s: %s", file, strerror(-rc)), rc;
	char msg[400] = "";
	cJSON *cfg = sym_json_parse(text, file, msg, sizeof(msg));
	free(text);
	if (!cfg)
		return ERR("%s", msg);
	cJSON *mo = NULL, *ro = NULL, *in = NULL, *out = NULL;
	rc = 0;
	if (!cJSON_IsObject(cfg))
		rc = ERR("%s: expected an object", file);
	for (const cJSON *k = cfg->child; !rc && k; k = k->next) {
		bool known = false;
		for (int i = 0; config_keys[i]; i++)
			known |= !strcmp(k->string, config_keys[i]);
		if (!known)
			rc = ERR("%s: unknown key '%s' (expected name, platform, max_batch_size, input, output, slo_ms, "
				 "version, profile)", file, k->string);
	}
	const cJSON *v;
	if (!rc && (v = cJSON_GetObjectItemCaseSensitive(cfg, "name")) &&
	    (!cJSON_IsString(v) || strcmp(v->valuestring, name)))
		rc = ERR("%s: key 'name' must be the directory's name, '%s'", file, name);
	if (!rc && (v = cJSON_GetObjectItemCaseSensitive(cfg, "platform")) &&
	    (!cJSON_IsString(v) || (strcmp(v->valuestring, "pytorch_libtorch") && strcmp(v->valuestring, "torchscript"))))
		rc = ERR("%s: key 'platform': only pytorch_libtorch (TorchScript files) is served", file);
	const cJSON *mb = cJSON_GetObjectItemCaseSensitive(cfg, "max_batch_size");
	if (!rc && (!cJSON_IsNumber(mb) || mb->valuedouble != floor(mb->valuedouble) || mb->valuedouble < 1 ||
		    mb->valuedouble > SYM_PROFILE_BATCH_LIMIT))
		rc = ERR("%s: key 'max_batch_size': expected an integer from 1 to %d", file, SYM_PROFILE_BATCH_LIMIT);
	if (!rc)
		rc = tensor(cJSON_GetObjectItemCaseSensitive(cfg, "input"), file, "input", &in, err, errlen);
	if (!rc)
		rc = tensor(cJSON_GetObjectItemCaseSensitive(cfg, "output"), file, "output", &out, err, errlen);
	char path[PATH_MAX + 64];
	if (!rc)
		rc = pick_version(mdir, file, cJSON_GetObjectItemCaseSensitive(cfg, "version"), version, path,
				  sizeof(path), err, errlen);
	const cJSON *prof = rc ? NULL : cJSON_GetObjectItemCaseSensitive(cfg, "profile");
	if (!rc && prof && !cJSON_IsObject(prof))
		rc = ERR("%s: key 'profile': expected an object (alpha_ms, beta_ms, static_mb, dynamic_mb)", file);
	if (!rc && !prof && !unprofiled_ok)
		rc = ERR("%s: no 'profile': measure it with `symphony profile --executor torch --model-repository %s "
			 "--model %s --write`", file, dir, name);
	if (!rc && !(mo = cJSON_CreateObject()))
		rc = -ENOMEM;
	if (!rc) {
		cJSON_AddStringToObject(mo, "name", name);
		if (prof) {
			for (int i = 0; profile_keys[i]; i++)
				if ((v = cJSON_GetObjectItemCaseSensitive(prof, profile_keys[i])))
					cJSON_AddItemToObject(mo, profile_keys[i], cJSON_Duplicate(v, 1));
		} else {
			cJSON_AddNumberToObject(mo, "alpha_ms", 1);
			cJSON_AddNumberToObject(mo, "beta_ms", 0);
		}
		if (!cJSON_GetObjectItemCaseSensitive(mo, "latency_ms"))
			cJSON_AddNumberToObject(mo, "max_batch", mb->valuedouble);
		else if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(mo, "latency_ms")) > (int)mb->valuedouble)
			rc = ERR("%s: key 'profile.latency_ms': %d entries, more than max_batch_size (%g): one latency per "
				 "batch size up to it", file, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(mo, "latency_ms")),
				 mb->valuedouble);
		if ((v = cJSON_GetObjectItemCaseSensitive(cfg, "slo_ms")))
			cJSON_AddItemToObject(mo, "slo_ms", cJSON_Duplicate(v, 1));
		struct stat st;
		if (!stat(path, &st))
			cJSON_AddNumberToObject(mo, "file_mb", (double)st.st_size / (1024.0 * 1024.0));
	}
	if (!rc) { /* the experiment's own check of the model object, with the file's name in the message */
		struct sym_model_spec tmp;
		rc = sym_model_spec_from_json(mo, file, &tmp, err, errlen);
		sym_model_spec_finish(&tmp);
	}
	if (!rc && !(ro = cJSON_CreateObject()))
		rc = -ENOMEM;
	if (!rc) {
		cJSON_AddItemToObject(ro, "input", in);
		cJSON_AddItemToObject(ro, "output", out);
		in = out = NULL;
		cJSON_AddNumberToObject(ro, "version", *version);
		cJSON *x = cJSON_AddObjectToObject(ro, "executor");
		if (!x || !cJSON_AddStringToObject(x, "file", path))
			rc = -ENOMEM;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	cJSON_Delete(cfg);
	cJSON_Delete(in);
	cJSON_Delete(out);
	if (rc) {
		cJSON_Delete(mo);
		cJSON_Delete(ro);
		return rc;
	}
	if (profiled)
		*profiled = prof != NULL;
	*model = mo;
	*rt = ro;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sym_repo_read(const char *dir, bool unprofiled_ok, cJSON *models, cJSON *rt, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d)
		return snprintf(err, errlen, "model repository %s: %s", dir, strerror(errno)), -errno;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while (!rc && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s/config.json", dir, de->d_name);
		if (stat(p, &st))
			continue; /* not a model */
		if (sym_grow(&names, &cap, n + 1, sizeof(*names), 16)) {
			rc = -ENOMEM;
			break;
		}
		if (!(names[n] = strdup(de->d_name)))
			rc = -ENOMEM;
		else
			n++;
	}
	closedir(d);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (!rc && !n)
		rc = ERR("model repository %s: no model in it (a model is a directory NAME holding config.json and "
			 "VERSION/model.pt)", dir);
	if (!rc)
		qsort(names, n, sizeof(*names), cmp_names);
	/* read all, then add all: a repository with a bad model adds nothing */
	cJSON *mos = cJSON_CreateArray(), *ros = cJSON_CreateObject();
	if (!rc && (!mos || !ros))
		rc = ERR("out of memory");
	for (size_t i = 0; !rc && i < n; i++) {
		cJSON *mo, *ro;
		int version;
		if ((rc = sym_repo_read_model(dir, names[i], unprofiled_ok, &mo, &ro, &version, NULL, err, errlen)))
			break;
		cJSON_AddItemToArray(mos, mo);
		cJSON_AddItemToObject(ros, names[i], ro);
	}
	while (!rc && mos->child) {
		cJSON *mo = cJSON_DetachItemViaPointer(mos, mos->child);
		if (models)
			cJSON_AddItemToArray(models, mo);
		else
			cJSON_Delete(mo);
	}
	while (!rc && ros->child) {
		cJSON *ro = cJSON_DetachItemViaPointer(ros, ros->child);
		if (rt)
			cJSON_AddItemToObject(rt, ro->string, ro);
		else
			cJSON_Delete(ro);
	}
	cJSON_Delete(mos);
	cJSON_Delete(ros);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc ? rc : (int)n;
}

int sym_repo_write_profile(const char *dir, const char *name, const cJSON *profile, char *err, size_t errlen)
{
	if (!name_ok(name))
		return ERR("model repository %s: '%s' is not a model name", dir, name);
	char file[PATH_MAX + 16], tmp[PATH_MAX + 32];
	snprintf(file, sizeof(file), "%s/%s/config.json", dir, name);
	char *text = NULL;
	int rc = sym_read_file(file, &text);
	if (rc)
		return snprintf(err, errlen, "%s: %s", file, strerror(-rc)), rc;
	char msg[400] = "";
	cJSON *cfg = sym_json_parse(text, file, msg, sizeof(msg));
	free(text);
	if (!cfg || !cJSON_IsObject(cfg)) {
		cJSON_Delete(cfg);
		return ERR("%s", msg[0] ? msg : "config.json: expected an object");
	}
	cJSON *dup = cJSON_Duplicate(profile, 1);
	if (!dup || (cJSON_GetObjectItemCaseSensitive(cfg, "profile") ? !cJSON_ReplaceItemInObjectCaseSensitive(cfg, "profile", dup)
									  : !cJSON_AddItemToObject(cfg, "profile", dup))) {
		cJSON_Delete(cfg);
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	char *out = cJSON_Print(cfg);
	cJSON_Delete(cfg);
	if (!out)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", file, (long)getpid());
	FILE *f = fopen(tmp, "w");
	rc = 0;
	if (!f || fputs(out, f) < 0 || fputc('\n', f) < 0 || fflush(f) || fsync(fileno(f)))
		rc = errno ? -errno : -EIO;
	if (f && fclose(f) && !rc)
		rc = -errno;
	free(out);
	if (!rc && rename(tmp, file))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return snprintf(err, errlen, "%s: cannot write it: %s", file, strerror(-rc)), rc;
	}
	return 0;
}
