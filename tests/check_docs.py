#!/usr/bin/env python3
"""tests/check_docs.py SOURCE_ROOT BUILD_ROOT [--list] [--only FILE[:LINE]] - documentation that runs.

Every fenced block of README.md and docs/*.md whose info string is empty, sh, bash, shell or
console is a command block and carries a marker, an HTML comment on the line before its fence
(invisible on GitHub):

    <!-- doc-test: run -->              run every command of the block, as written
    <!-- doc-test: skip: REASON -->     not run; the reason is required

A `run` marker may go on over several lines, one directive a line:

    timeout SECONDS                     the block's limit (default 120 s)
    skip `COMMAND`: REASON              a command of the block not run (COMMAND: the start of it)
    exit N `COMMAND`                    a command that must exit with status N (not 0)
    background `COMMAND` until "TEXT"   a command that runs until Ctrl-C (a server): it starts in
                                        the background, the next commands run once TEXT appears in
                                        its output, and it is stopped by SIGINT to its process group
                                        (Ctrl-C) before the next command running the same program,
                                        or at the end of the block; it must then exit 0 or 130 and
                                        leave no process behind

Other blocks (json, text, ...) are not commands; `<!-- doc-test: file NAME -->` on one writes it
as NAME into the page's working directory, for the page's later blocks. docs/cli.md is generated
from the command table (`symphony help --markdown`, kept equal by the cli-reference test) and is
not checked here.

A runnable block runs in one bash (so `S=build/symphony` carries to its later lines), command by
command, each with its own captured output; a command that fails stops it. Every page has a
fresh working directory in which the source tree's directories (scripts, experiments, profiles,
workloads, ...) are symbolic links and `build` links to BUILD_ROOT, so that what the commands
write stays out of the tree; SYM_SETUP_DONE=1 keeps scripts/setup from installing or rebuilding.
Each block runs in a network (and PID) namespace of its own where that is possible (root,
`unshare`), so the runtime's default ports (7100.., HTTP 8100..) never meet another test's;
elsewhere on the host's loopback, where no other test uses those ports. Outputs are checked: a
--json FILE is JSON; curl answers are HTTP 200, a JSON answer against the `# {...}` comment the
docs print after the command ([...] matches anything), KServe model metadata, an inference's
output (its shape, and the emulated executor's FNV-1a digest of the input), Prometheus text from
/metrics.

Exits 1 naming the file, line and command of each failure with its output; --list prints every
block and what happens to it, without running anything.
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

COMMAND_INFOS = {"", "sh", "bash", "shell", "console"}
GENERATED = {"docs/cli.md": "generated from the command table (symphony help --markdown)"}
DEFAULT_TIMEOUT = 120
READY_TIMEOUT = 60  # a background command's ready line (cluster-local waits 20 s itself, after its build check)
STOP_TIMEOUT = 20   # from SIGINT to its exit


class DocError(Exception):
    pass


class Command:
    def __init__(self, lines):
        self.lines = lines                   # [(doc line, text)]
        self.line = lines[0][0]
        self.text = "\n".join(t for _, t in lines)
        self.expected_json = None            # the '# {...}' skeleton the docs print after it
        self.expected_json_line = None
        self.exit = 0
        self.skip = None
        self.background = None               # the ready text

    def tokens(self):
        return words(self.text)


class Block:
    def __init__(self, path, line, info, body, marker, marker_line):
        self.path, self.line, self.info, self.body = path, line, info, body
        self.marker, self.marker_line = marker, marker_line
        self.kind = None         # run, skip, file, data, generated
        self.reason = None
        self.timeout = DEFAULT_TIMEOUT
        self.filename = None
        self.commands = []


def words(text):
    """The shell words of a command, comments left out: how markers name commands."""
    lex = shlex.shlex(text.replace("\\\n", " "), posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        return list(lex)
    except ValueError:
        return text.split()


def scan(text, state):
    """Walks one line of shell; returns (quote state at its end, whether the command goes on)."""
    i, n = 0, len(text)
    code_end = n
    while i < n:
        c = text[i]
        if state == "'":
            if c == "'":
                state = None
        elif state == '"':
            if c == "\\":
                i += 1
            elif c == '"':
                state = None
        elif c == "\\":
            if i == n - 1:
                return None, True
            i += 1
        elif c in "'\"":
            state = c
        elif c == "#" and (i == 0 or text[i - 1].isspace()):
            code_end = i
            break
        i += 1
    if state is not None:
        return state, True
    code = text[:code_end].rstrip()
    return None, code.endswith("|") or code.endswith("&&") or code.endswith("||")


def split_commands(body, console):
    """Splits a block's lines into commands (a quote or a backslash carries a command over lines);
    a comment line starting '# {' right after a command is the JSON it prints. In a console block,
    only lines starting '$ ' begin commands (the rest is their output)."""
    cmds, cur, state, cont = [], [], None, False
    skeleton = None
    for ln, text in body:
        if cur:
            cur.append((ln, text))
            state, cont = scan(text, state)
            if not cont:
                cmds.append(Command(cur))
                cur = []
            continue
        s = text.strip()
        if console:
            if not s.startswith("$ "):
                continue
            text = s[2:]
            s = text.strip()
        if not s:
            skeleton = None
            continue
        if s.startswith("#"):
            c = s.lstrip("#").strip()
            if skeleton is None and cmds and c.startswith("{") and cmds[-1].expected_json is None \
                    and cmds[-1].lines[-1][0] == ln - 1:
                skeleton = [ln, [c]]
                cmds[-1].expected_json = skeleton
            elif skeleton is not None and skeleton[0] + len(skeleton[1]) == ln:
                skeleton[1].append(c)
            else:
                skeleton = None
            continue
        skeleton = None
        cur = [(ln, text)]
        state, cont = scan(text, None)
        if not cont:
            cmds.append(Command(cur))
            cur = []
    if cur:
        raise DocError("line %d: the block ends inside a command (an open quote or a trailing \\)" % cur[0][0])
    for c in cmds:
        if c.expected_json:
            c.expected_json_line = c.expected_json[0]
            c.expected_json = " ".join(c.expected_json[1])
    return cmds


def parse_file(root, rel):
    lines = open(os.path.join(root, rel), encoding="utf-8").read().split("\n")
    blocks = []
    i = 0
    fence_re = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
    while i < len(lines):
        m = fence_re.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).lower()
        start = i + 1  # 1-based line of the fence
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), lines[i]):
            t = lines[i]
            # the fence's own indentation comes off each line (a fence in a list item), no more: a
            # file block's (YAML's) indentation is its meaning
            body.append((i + 1, t[indent:] if not t[:indent].strip() else t.lstrip()))
            i += 1
        if i == len(lines):
            raise DocError("%s:%d: a fence that is never closed" % (rel, start))
        i += 1
        # the marker: an HTML comment ending on the line before the fence
        marker, marker_line = None, None
        j = start - 2
        if j >= 0 and lines[j].strip().endswith("-->"):
            k = j
            while k >= 0 and "<!--" not in lines[k]:
                k -= 1
            if k >= 0:
                comment = "\n".join(lines[k:j + 1]).strip()
                mm = re.match(r"<!--\s*doc-test:(.*)-->$", comment, re.S)
                if mm:
                    marker, marker_line = mm.group(1), k + 1
        blocks.append(Block(rel, start, info, body, marker, marker_line))
    return blocks


def parse_marker(b):
    where = "%s:%d" % (b.path, b.marker_line)
    lines = [l.strip() for l in b.marker.strip().split("\n") if l.strip()]
    head = lines[0]
    if b.info not in COMMAND_INFOS:
        m = re.match(r"file\s+(\S+)$", head)
        if not m or len(lines) > 1:
            raise DocError("%s: a %s block is not a command block: its only marker is 'file NAME'" % (where, b.info))
        b.kind, b.filename = "file", m.group(1)
        return
    if head.startswith("skip"):
        m = re.match(r"skip\s*:\s*(\S.*)$", " ".join(lines), re.S)
        if not m:
            raise DocError("%s: 'skip' needs a reason: <!-- doc-test: skip: REASON -->" % where)
        b.kind, b.reason = "skip", m.group(1)
        return
    if head != "run":
        raise DocError("%s: the marker is 'run' or 'skip: REASON', not '%s'" % (where, head))
    b.kind = "run"
    b.commands = split_commands(b.body, b.info == "console")
    if not b.commands:
        raise DocError("%s: a runnable block without a command" % where)
    for d in lines[1:]:
        m = re.match(r"timeout\s+(\d+)$", d)
        if m:
            b.timeout = int(m.group(1))
            continue
        m = re.match(r"skip\s+`([^`]+)`\s*:\s*(\S.*)$", d)
        if m:
            for c in matching(b, m.group(1), d):
                c.skip = m.group(2)
            continue
        m = re.match(r"exit\s+(\d+)\s+`([^`]+)`$", d)
        if m:
            for c in matching(b, m.group(2), d):
                c.exit = int(m.group(1))
            continue
        m = re.match(r'background\s+`([^`]+)`\s+until\s+"([^"]+)"$', d)
        if m:
            want = words(m.group(1))
            found = [c for c in b.commands if c.tokens() == want]
            if len(found) != 1:
                raise DocError("%s: '%s': %d commands of the block are exactly `%s`" % (where, d, len(found), m.group(1)))
            found[0].background = m.group(2)
            continue
        raise DocError("%s: unknown directive '%s' (timeout N, skip `CMD`: REASON, exit N `CMD`, "
                       "background `CMD` until \"TEXT\")" % (where, d))


def matching(b, prefix, directive):
    want = words(prefix)
    found = [c for c in b.commands if c.tokens()[:len(want)] == want]
    if not found:
        raise DocError("%s:%d: '%s' names no command of the block (it must start one)" % (b.path, b.marker_line, directive))
    return found


def collect(root):
    files = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    blocks, errors = [], []
    for rel in files:
        try:
            fb = parse_file(root, rel)
        except DocError as e:
            errors.append(str(e))
            continue
        for b in fb:
            try:
                if rel in GENERATED:
                    b.kind, b.reason = "generated", GENERATED[rel]
                elif b.marker is not None:
                    parse_marker(b)
                elif b.info in COMMAND_INFOS:
                    raise DocError("%s:%d: a command block (```%s) without a marker: put <!-- doc-test: run --> or "
                                   "<!-- doc-test: skip: REASON --> on the line before its fence (or give an output "
                                   "block an info string such as text)" % (rel, b.line, b.info))
                else:
                    b.kind = "data"
            except DocError as e:
                if not str(e).startswith(rel):
                    e = DocError("%s:%d: %s" % (rel, b.line, e))
                errors.append(str(e))
            blocks.append(b)
    return blocks, errors


# ---- running --------------------------------------------------------------------------------

def netns_available():
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return False
    r = subprocess.run(["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc",
                        "sh", "-c", "ip link set lo up"], capture_output=True)
    return r.returncode == 0


def workdir_for(tmp, root, build, rel):
    d = os.path.join(tmp, re.sub(r"[^A-Za-z0-9]+", "-", rel))
    if os.path.isdir(d):
        return d
    os.makedirs(d)
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name)
        # directories only: a file linked here would be written through by a command's output
        if name.startswith(".") or not os.path.isdir(p) or name in ("results",) or name.startswith("sweep-"):
            continue
        if os.path.exists(os.path.join(p, "meson-private")):
            continue  # a build directory
        os.symlink(p, os.path.join(d, name))
    os.symlink(build, os.path.join(d, "build"))
    return d


PROLOGUE = r'''set -o pipefail
__d=%(dir)s
__bg=()
__doc_cleanup() { local p; for p in "${__bg[@]}"; do kill -KILL -- -"$p" 2>/dev/null; done; }
trap __doc_cleanup EXIT
__doc_ready() { # INDEX PID TEXT: waits for TEXT in its output, while it runs
	local end=$((SECONDS + %(ready)d))
	until grep -qF -- "$3" "$__d/out.$1" "$__d/err.$1" 2>/dev/null; do
		if ! kill -0 "$2" 2>/dev/null; then wait "$2"; echo $? >"$__d/rc.$1"; echo exited >"$__d/ready.$1"; return 1; fi
		if [ $SECONDS -ge $end ]; then echo timeout >"$__d/ready.$1"; return 1; fi
		sleep 0.1
	done
	echo ok >"$__d/ready.$1"
}
__doc_stop() { # INDEX PID: Ctrl-C (SIGINT to its process group), then its exit
	kill -INT -- -"$2" 2>/dev/null
	local end=$((SECONDS + %(stop)d))
	while kill -0 "$2" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
	if kill -0 "$2" 2>/dev/null; then echo timeout >"$__d/stop.$1"; kill -KILL -- -"$2"; wait "$2"; return 1; fi
	wait "$2"; local rc=$?
	echo $rc >"$__d/rc.$1"
	if kill -0 -- -"$2" 2>/dev/null; then echo left >"$__d/stop.$1"; kill -KILL -- -"$2"; return 1; fi
	echo ok >"$__d/stop.$1"
	[ $rc -eq 0 ] || [ $rc -eq 130 ]
}
'''


def program(c):
    t = [w for w in c.tokens() if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
    return t[0] if t else None


def script_for(b, d):
    s = [PROLOGUE % {"dir": shlex.quote(d), "ready": READY_TIMEOUT, "stop": STOP_TIMEOUT}]
    running = []  # [(index, program)]
    for i, c in enumerate(b.commands):
        if c.skip:
            continue
        for j, prog in list(running):
            if prog == program(c):
                s.append('__doc_stop %d "$__bg%d" || exit 1' % (j, j))
                running.remove((j, prog))
        io = '>"$__d/out.%d" 2>"$__d/err.%d" </dev/null' % (i, i)
        if c.background:
            s.append("set -m")
            s.append("{ %s\n} %s &" % (c.text, io))
            s.append("__bg%d=$!; __bg+=($!); echo $! >\"$__d/bg.%d\"; set +m" % (i, i))
            s.append('__doc_ready %d "$__bg%d" %s || exit 1' % (i, i, shlex.quote(c.background)))
            running.append((i, program(c)))
        else:
            s.append("echo started >\"$__d/start.%d\"" % i)
            s.append("{ %s\n} %s" % (c.text, io))
            s.append('__rc=$?; echo $__rc >"$__d/rc.%d"; [ $__rc -eq %d ] || exit 1' % (i, c.exit))
    for j, _ in running:
        s.append('__doc_stop %d "$__bg%d" || exit 1' % (j, j))
    s.append("exit 0")
    return "\n".join(s) + "\n"


def read(path, limit=None):
    try:
        with open(path, errors="replace") as f:
            t = f.read()
    except OSError:
        return ""
    if limit and len(t) > limit:
        t = "...\n" + t[-limit:]
    return t


def tail(text, n=30):
    ls = text.rstrip("\n").split("\n")
    return "\n".join(ls[-n:])


# ---- answers --------------------------------------------------------------------------------

ANY = "\x00any"


def skeleton(text):
    """The JSON object at the start of a '# {...}' comment, with [...] meaning anything."""
    start = text.index("{")
    depth, instr, esc = 0, False, False
    for k in range(start, len(text)):
        ch = text[k]
        if instr:
            esc = (ch == "\\" and not esc)
            if ch == '"' and not esc:
                instr = False
            continue
        if ch == '"':
            instr = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return json.loads(text[start:k + 1].replace("[...]", json.dumps(ANY)))
    raise ValueError("no complete JSON object")


def like(want, got, path="$"):
    if want == ANY:
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return "%s: an object expected, got %s" % (path, json.dumps(got)[:80])
        if set(want) != set(got):
            return "%s: keys %s, the docs show %s" % (path, sorted(got), sorted(want))
        for k in want:
            e = like(want[k], got[k], path + "." + k)
            if e:
                return e
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "%s: %s, the docs show %s" % (path, json.dumps(got)[:80], json.dumps(want)[:80])
        for k, (w, g) in enumerate(zip(want, got)):
            e = like(w, g, "%s[%d]" % (path, k))
            if e:
                return e
        return None
    return None if want == got else "%s: %s, the docs show %s" % (path, json.dumps(got), json.dumps(want))


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for x in data:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def flat(x):
    if isinstance(x, list):
        for y in x:
            yield from flat(y)
    else:
        yield x


def is_signature(t):
    return isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("datatype"), str) \
        and isinstance(t.get("shape"), list) and all(isinstance(v, int) for v in t["shape"])


PROM_SAMPLE = re.compile(r'^[A-Za-z_:][A-Za-z0-9_:]*(\{([A-Za-z_][A-Za-z0-9_]*="([^"\\]|\\.)*",?)*\})? '
                         r'([-+]?[0-9.]+([eE][-+]?[0-9]+)?|[-+]?Inf|NaN)( -?[0-9]+)?$')


def check_outputs(c, out, err, d):
    """What a command printed or wrote, where the docs say what it is: None when it is right, else
    why not. d: the page's working directory (the commands' own)."""
    w = c.tokens()
    if c.exit or not w:
        return None
    for k, x in enumerate(w[:-1]):
        if x == "--json" and w[k + 1] != "-" and not w[k + 1].startswith("$"):
            try:
                json.load(open(os.path.join(d, w[k + 1])))
            except (OSError, ValueError) as e:
                return "--json %s: not a JSON file: %s" % (w[k + 1], e)
    if w[0] != "curl":
        return None
    codes = re.findall(r"doc-test: HTTP (\d+)", err)
    if not codes:
        return "curl printed no HTTP status (the test's .curlrc writes it to stderr)"
    if any(x != "200" for x in codes):
        return "HTTP status %s, not 200" % ", ".join(codes)
    url = next((x for x in w[1:] if re.match(r"^(https?://)?[\w.\-\[\]:]+:\d+/", x)), None)
    path = re.sub(r"^(https?://)?[^/]+", "", url) if url else ""
    post = "POST" in w or any(x.startswith("--data") or x == "-d" for x in w)
    if c.expected_json:
        try:
            e = like(skeleton(c.expected_json), json.loads(out))
        except ValueError as ex:
            e = "not the JSON the docs show (line %d): %s" % (c.expected_json_line, ex)
        if e:
            return "the answer differs from the docs (line %d): %s" % (c.expected_json_line, e)
    m = re.match(r"^/v2/models/([^/]+)(/versions/[^/]+)?(/infer)?$", path)
    if m:
        what = "the inference's answer" if m.group(3) else "model metadata"
        try:
            ans = json.loads(out)
        except ValueError:
            return "%s is not JSON: %s" % (what, out[:200])
        named = ans.get("model_name" if m.group(3) else "name")
        if named != m.group(1):
            return "%s names model %r, not %r" % (what, named, m.group(1))
    if m and not m.group(3) and not post:
        for k in ("inputs", "outputs"):
            if not isinstance(ans.get(k), list) or not ans[k] or not all(is_signature(t) for t in ans[k]):
                return "model metadata: '%s' is not a list of {name, datatype, shape}: %s" % (k, out[:200])
    if m and m.group(3):
        outs = ans.get("outputs")
        if not isinstance(outs, list) or len(outs) != 1 or not is_signature(outs[0]) or "data" not in outs[0]:
            return "the answer has no output tensor: %s" % out[:200]
        o = outs[0]
        data = list(flat(o["data"]))
        n = 1
        for v in o["shape"]:
            n *= v
        if len(data) != n:
            return "output %s holds %d values, its shape %s holds %d" % (o["name"], len(data), o["shape"], n)
        body = next((x[1:] for x in w if x.startswith("@")), None)
        try:
            req = json.load(open(os.path.join(d, body))) if body else None
        except (OSError, ValueError):
            req = None
        if req and o["datatype"] == "UINT64" and len(req.get("inputs", [])) == 1 \
                and req["inputs"][0].get("datatype") == "UINT8" and "data" in req["inputs"][0]:
            digest = fnv1a64(bytes(flat(req["inputs"][0]["data"])))
            if any(v != digest for v in data):
                return "output %s is %s, not the emulated executor's FNV-1a 64 digest of the input, %d" % (
                    o["name"], data, digest)
    if path.endswith("/metrics"):
        samples = 0
        for k, line in enumerate(out.split("\n")):
            if not line or re.match(r"^# (HELP|TYPE) [A-Za-z_:][A-Za-z0-9_:]* ", line):
                continue
            if line.startswith("#"):
                continue
            if not PROM_SAMPLE.match(line):
                return "/metrics line %d is not Prometheus text: %s" % (k + 1, line)
            samples += 1
        if not samples:
            return "/metrics has no sample"
    return None


CURRENT = {}  # the block running: its shell, and the directory naming its background groups


def kill_block(p, bd):
    for f in glob.glob(os.path.join(bd, "bg.*")):
        try:
            os.killpg(int(read(f).strip()), signal.SIGKILL)
        except (ValueError, OSError):
            pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    p.wait()


def interrupted(sig, frame):
    """meson's timeout (SIGTERM) or Ctrl-C: the block runs in a session of its own, so stop it too."""
    if CURRENT:
        kill_block(CURRENT["p"], CURRENT["bd"])
        print("check_docs: %s while %s:%d ran" % (signal.Signals(sig).name, CURRENT["b"].path, CURRENT["b"].line), flush=True)
    sys.exit(128 + sig)


def run_block(b, d, env, netns):
    bd = tempfile.mkdtemp(prefix="block-%d-" % b.line, dir=os.path.dirname(d))
    script = os.path.join(bd, "block.sh")
    with open(script, "w") as f:
        f.write(script_for(b, bd))
    syn = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    if syn.returncode:
        return "%s:%d: the block is not valid shell: %s" % (b.path, b.line, syn.stderr.strip()), 0.0
    cmd = ["bash", script]
    if netns:
        cmd = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc",
               "bash", "-c", 'ip link set lo up && exec bash "$0"', script]
    benv = dict(env, SYM_LOG_DIR=os.path.join(bd, "cluster-logs"))
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=d, env=benv, stdin=subprocess.DEVNULL, stdout=open(os.path.join(bd, "stdout"), "w"),
                         stderr=open(os.path.join(bd, "stderr"), "w"), start_new_session=True)
    CURRENT.update(p=p, bd=bd, b=b)
    timed_out = False
    try:
        p.wait(timeout=b.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_block(p, bd)
    CURRENT.clear()
    wall = time.monotonic() - t0
    # the first command that did not do what the docs say (the block stops at it)
    problem = None
    for i, c in enumerate(b.commands):
        if c.skip:
            continue
        f = lambda name: os.path.join(bd, "%s.%d" % (name, i))
        out, err = read(f("out")), read(f("err"))
        rc = read(f("rc")).strip()
        why = None
        if c.background:
            if not os.path.exists(f("bg")):
                break  # not reached
            ready, stop = read(f("ready")).strip(), read(f("stop")).strip()
            if not ready:
                why = "still waiting for \"%s\" in its output when the block's limit of %d s passed" % (
                    c.background, b.timeout)
            elif ready == "timeout":
                why = "its output did not show \"%s\" within %d s" % (c.background, READY_TIMEOUT)
            elif ready == "exited":
                why = "it exited (status %s) before its output showed \"%s\"" % (rc, c.background)
            elif stop == "timeout":
                why = "it did not exit within %d s of SIGINT (Ctrl-C)" % STOP_TIMEOUT
            elif stop == "left":
                why = "stopped by SIGINT (Ctrl-C), it exited (status %s) but left processes of its group running" % rc
            elif stop == "ok" and rc not in ("0", "130"):
                why = "stopped by SIGINT (Ctrl-C), it exited with status %s, not 0 or 130" % rc
        else:
            if not os.path.exists(f("start")):
                break  # not reached
            if not rc:
                why = "still running when the block's limit of %d s passed" % b.timeout if timed_out else "it never finished"
            elif int(rc) != c.exit:
                why = "exit status %s, the docs expect %d" % (rc, c.exit)
            else:
                why = check_outputs(c, out, err, d)
        if why:
            problem = (c, why, out, err)
            break
    if not problem and timed_out:
        problem = (b.commands[0], "the block ran past its limit of %d s" % b.timeout, "", "")
    if not problem and p.returncode != 0:
        problem = (b.commands[0], "the block's shell exited %d: %s" % (
            p.returncode, tail(read(os.path.join(bd, "stderr")))), "", "")
    if not problem:
        return None, wall
    c, why, out, err = problem
    msg = ["%s:%d: %s" % (b.path, c.line, why), "  command: " + c.text.replace("\n", "\n           ")]
    if err.strip():
        msg.append("  its stderr (end):\n" + indent(tail(err)))
    if out.strip():
        msg.append("  its stdout (end):\n" + indent(tail(out, 15)))
    logs = sorted(glob.glob(os.path.join(bd, "cluster-logs", "*.log")))
    for lf in logs:
        t = read(lf)
        if t.strip():
            msg.append("  %s (end):\n%s" % (os.path.basename(lf), indent(tail(t, 8))))
    msg.append("  (the block's files: %s)" % bd)
    return "\n".join(msg), wall


def indent(t):
    return "\n".join("    " + l for l in t.split("\n"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("build")
    ap.add_argument("--list", action="store_true", help="print every block and what happens to it; run nothing")
    ap.add_argument("--only", help="FILE or FILE:LINE: run only these blocks (the markers are still checked)")
    ap.add_argument("--keep", action="store_true", help="keep the working directories")
    ap.add_argument("--no-netns", action="store_true", help="run on the host's network, as where unshare is refused")
    a = ap.parse_args()
    root, build = os.path.abspath(a.root), os.path.abspath(a.build)
    blocks, errors = collect(root)
    runnable = [b for b in blocks if b.kind == "run"]
    nrun_cmds = sum(1 for b in runnable for c in b.commands if not c.skip)
    if a.list:
        for b in blocks:
            if b.kind == "data":
                continue
            what = {"run": "run, %d command(s)%s" % (len([c for c in b.commands if not c.skip]),
                                                      "".join("; skips %s: %s" % (c.text.split("\n")[0][:50], c.skip)
                                                              for c in b.commands if c.skip)),
                    "skip": "skip: %s" % b.reason, "file": "file %s" % b.filename,
                    "generated": "not checked: %s" % b.reason}.get(b.kind, b.kind)
            print("%s:%d: %s" % (b.path, b.line, what))
        for e in errors:
            print("ERROR " + e)
        return 1 if errors else 0
    if errors:
        print("check_docs: %d marker error(s):" % len(errors))
        for e in errors:
            print("  " + e)
        return 1
    if not os.access(os.path.join(build, "cli", "symphony"), os.X_OK) and not os.access(os.path.join(build, "symphony"), os.X_OK):
        print("check_docs: no symphony in %s" % build)
        return 1
    netns = not a.no_netns and netns_available()
    print("check_docs: %d command blocks: %d run (%d commands), %d skipped; %s" % (
        sum(1 for b in blocks if b.kind in ("run", "skip")), len(runnable), nrun_cmds,
        sum(1 for b in blocks if b.kind == "skip"),
        "each in a network namespace of its own" if netns else
        "no network namespace (root and unshare needed): runtime blocks on the host's loopback"))
    sel = None
    if a.only:
        f, _, l = a.only.partition(":")
        sel = (os.path.normpath(f), int(l) if l else None)
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    tmp = tempfile.mkdtemp(prefix="symphony-docs-")
    # SYM_SETUP_DONE: scripts/setup (run by demo, cluster-local, ...) neither installs nor rebuilds
    # the build under test, which other tests use at the same time
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CURL_HOME=os.path.join(tmp, "curl"), SYM_SETUP_DONE="1")
    env.pop("MAKEFLAGS", None)
    os.makedirs(env["CURL_HOME"])
    with open(os.path.join(env["CURL_HOME"], ".curlrc"), "w") as f:
        # curl exits 22 on an HTTP error, and says the status on stderr (the answers are checked)
        f.write('fail-with-body\nwrite-out = "%{stderr}doc-test: HTTP %{http_code}\\n"\n')
    failures = []
    t0 = time.monotonic()
    for b in blocks:
        if sel and (b.path != sel[0] or (sel[1] and b.line != sel[1])):
            continue
        if b.kind not in ("run", "file"):
            continue
        d = workdir_for(tmp, root, build, b.path)
        if b.kind == "file":
            with open(os.path.join(d, b.filename), "w") as f:
                f.write("\n".join(t for _, t in b.body) + "\n")
            continue
        msg, wall = run_block(b, d, env, netns)
        print("%-28s %6.1f s  %s" % ("%s:%d" % (b.path, b.line), wall, "FAILED" if msg else "ok"), flush=True)
        if msg:
            failures.append(msg)
    print("check_docs: %.0f s" % (time.monotonic() - t0))
    if failures:
        print("\ncheck_docs: %d block(s) failed; the first command that did not run as the docs say:\n" % len(failures))
        print("\n\n".join(failures))
        return 1
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print("check_docs: every runnable command of README.md and docs/ ran as written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
