package ci_test

// The pipeline examples, run for real: both files are parsed, every `make build` and `fabctl`
// line of each job is extracted in order, and the jobs run as the pipelines would (merge
// request, then main, then the scheduled drift check) against the local testbed.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/internal/testutil"
	"gopkg.in/yaml.v3"
)

// The spec the pipelines manage in the test (their SPEC variable), relative to the workspace.
const testSpec = "examples/testbed"

// A job's commands: the lines the test runs and the env the pipeline file gives the job.
type job struct {
	name  string
	lines []string
	env   map[string]string
}

// commandLines returns the lines of a shell script that the test runs, in order: those that
// start with fabctl, make build or go build (backslash continuations joined). Everything else
// (PATH set-up, summaries, comments, curl) is CI-platform plumbing and is left out.
func commandLines(script string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(script, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, `\`) {
			cur.WriteString(strings.TrimSuffix(l, `\`) + " ")
			continue
		}
		cur.WriteString(l)
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if strings.HasPrefix(line, "fabctl ") || line == "make build" || strings.HasPrefix(line, "make build ") || strings.HasPrefix(line, "go build ") {
			out = append(out, line)
		}
	}
	return out
}

func stringEnv(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// --- GitHub Actions

type ghStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

type ghJob struct {
	If          string            `yaml:"if"`
	Env         map[string]string `yaml:"env"`
	Concurrency map[string]any    `yaml:"concurrency"`
	Steps       []ghStep          `yaml:"steps"`
}

type ghWorkflow struct {
	On   map[string]any    `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ghJob  `yaml:"jobs"`
}

func githubJobs(t *testing.T, path string) (map[string]job, ghWorkflow) {
	t.Helper()
	var wf ghWorkflow
	decode(t, path, &wf)
	jobs := map[string]job{}
	for name, j := range wf.Jobs {
		jb := job{name: name, env: map[string]string{}}
		for k, v := range wf.Env {
			jb.env[k] = v
		}
		for k, v := range j.Env {
			jb.env[k] = v
		}
		for _, s := range j.Steps {
			jb.lines = append(jb.lines, commandLines(s.Run)...)
		}
		jobs[name] = jb
	}
	return jobs, wf
}

// --- GitLab CI

type glJob struct {
	Stage         string           `yaml:"stage"`
	Rules         []map[string]any `yaml:"rules"`
	ResourceGroup string           `yaml:"resource_group"`
	BeforeScript  []string         `yaml:"before_script"`
	Script        []string         `yaml:"script"`
	Variables     map[string]any   `yaml:"variables"`
	Artifacts     struct {
		Paths   []string          `yaml:"paths"`
		Reports map[string]string `yaml:"reports"`
	} `yaml:"artifacts"`
}

var glReserved = map[string]bool{"workflow": true, "stages": true, "variables": true, "default": true, "include": true, "image": true, "services": true, "cache": true, "before_script": true, "after_script": true}

func gitlabJobs(t *testing.T, path string) (map[string]job, map[string]glJob) {
	t.Helper()
	var top map[string]yaml.Node
	decode(t, path, &top)
	var vars map[string]any
	if n, ok := top["variables"]; ok {
		if err := n.Decode(&vars); err != nil {
			t.Fatalf("%s: variables: %v", path, err)
		}
	}
	var def glJob
	if n, ok := top["default"]; ok {
		if err := n.Decode(&def); err != nil {
			t.Fatalf("%s: default: %v", path, err)
		}
	}
	jobs, raw := map[string]job{}, map[string]glJob{}
	for name, n := range top {
		if glReserved[name] || strings.HasPrefix(name, ".") {
			continue
		}
		var j glJob
		if err := n.Decode(&j); err != nil {
			t.Fatalf("%s: job %s: %v", path, name, err)
		}
		raw[name] = j
		jb := job{name: name, env: stringEnv(vars)}
		for k, v := range stringEnv(j.Variables) {
			jb.env[k] = v
		}
		before := j.BeforeScript
		if before == nil {
			before = def.BeforeScript // a job's own before_script replaces default's
		}
		for _, s := range append(append([]string{}, before...), j.Script...) {
			jb.lines = append(jb.lines, commandLines(s)...)
		}
		jobs[name] = jb
	}
	return jobs, raw
}

func decode(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func hasLine(lines []string, substrs ...string) bool {
	for _, l := range lines {
		all := true
		for _, s := range substrs {
			all = all && strings.Contains(l, s)
		}
		if all {
			return true
		}
	}
	return false
}

// TestPipelinesShape checks, without running anything, that each pipeline has the jobs and
// commands the README describes. It runs everywhere.
func TestPipelinesShape(t *testing.T) {
	gh, wf := githubJobs(t, "github-actions.yml")
	for _, ev := range []string{"pull_request", "push", "schedule"} {
		if _, ok := wf.On[ev]; !ok {
			t.Errorf("github-actions.yml: no %s trigger", ev)
		}
	}
	gl, raw := gitlabJobs(t, "gitlab-ci.yml")
	for file, p := range map[string]struct {
		jobs       map[string]job
		pr, main   []string
		drift      string
		triggerFor func(name string) string
	}{
		"github-actions.yml": {gh, []string{"pr"}, []string{"apply"}, "drift", func(n string) string { return wf.Jobs[n].If }},
		"gitlab-ci.yml": {gl, []string{"validate", "plan"}, []string{"apply"}, "drift", func(n string) string {
			var b strings.Builder
			for _, r := range raw[n].Rules {
				b.WriteString(" " + r["if"].(string))
			}
			return b.String()
		}},
	} {
		var pr []string
		for _, n := range p.pr {
			if !strings.Contains(p.triggerFor(n), "merge_request_event") && !strings.Contains(p.triggerFor(n), "pull_request") {
				t.Errorf("%s: job %s does not run on change requests (%q)", file, n, p.triggerFor(n))
			}
			pr = append(pr, p.jobs[n].lines...)
		}
		main := p.jobs[p.main[0]].lines
		if !strings.Contains(p.triggerFor(p.main[0]), "main") {
			t.Errorf("%s: job %s does not run on main (%q)", file, p.main[0], p.triggerFor(p.main[0]))
		}
		if !strings.Contains(p.triggerFor(p.drift), "schedule") {
			t.Errorf("%s: job %s does not run on schedule (%q)", file, p.drift, p.triggerFor(p.drift))
		}
		for _, c := range []struct {
			lines []string
			what  []string
		}{
			{pr, []string{"fabctl validate", "--static", "--junit"}},
			{pr, []string{"fabctl fmt", "-check", "$SPEC"}},
			{pr, []string{"fabctl plan", "--format markdown", "--detailed-exitcode", "-out plan.fab", "> plan.md", "|| test $? -eq 2"}},
			{main, []string{"fabctl plan", "--check-on-device", "-out plan.fab", "$SPEC"}},
			{main, []string{"fabctl apply", "-auto-approve", "--lock-timeout", "plan.fab"}},
			{main, []string{"fabctl validate", "$SPEC"}},
			{main, []string{"fabctl drift", "$SPEC"}},
			{p.jobs[p.drift].lines, []string{"fabctl drift", "$SPEC"}},
		} {
			if !hasLine(c.lines, c.what...) {
				t.Errorf("%s: no line with %q in %q", file, c.what, c.lines)
			}
		}
		for name, j := range p.jobs {
			if len(j.lines) > 0 && j.lines[0] != "make build" {
				t.Errorf("%s: job %s: the first command is %q, want make build (the test redirects its BIN)", file, name, j.lines[0])
			}
			if j.env["SPEC"] == "" {
				t.Errorf("%s: job %s: no SPEC variable", file, name)
			}
		}
	}
	if raw["apply"].ResourceGroup == "" {
		t.Error("gitlab-ci.yml: apply has no resource_group")
	}
	if raw["validate"].Artifacts.Reports["junit"] != "junit.xml" {
		t.Errorf("gitlab-ci.yml: validate's junit report is %q, want junit.xml", raw["validate"].Artifacts.Reports["junit"])
	}
	if wf.Jobs["apply"].Concurrency == nil {
		t.Error("github-actions.yml: apply has no concurrency group")
	}
	for file, jobs := range map[string]map[string]job{"github-actions.yml": gh, "gitlab-ci.yml": gl} {
		for name, j := range jobs {
			for _, l := range j.lines {
				if strings.Contains(l, "PASSWORD") {
					t.Errorf("%s: job %s: a command mentions the password variable: %q", file, name, l)
				}
			}
		}
	}
}

// TestPipelinesAgainstTestbed runs both pipelines' commands against the local testbed, one
// pipeline after the other, each on a fresh testbed: the change-request jobs (validate,
// fmt -check, plan with changes), the main job (plan -out, apply of the saved plan, validate,
// drift: exit 0), and the scheduled drift job (exit 0: nothing changed the fabric since).
func TestPipelinesAgainstTestbed(t *testing.T) {
	testutil.RequireRoot(t, "the testbed creates network namespaces and veth pairs")
	if testing.Short() {
		t.Skip("-short: brings up the local testbed")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gh, _ := githubJobs(t, "github-actions.yml")
	gl, _ := gitlabJobs(t, "gitlab-ci.yml")
	for _, pl := range []struct {
		file             string
		jobs             map[string]job
		pr, main, drifts []string
	}{
		{"github-actions.yml", gh, []string{"pr"}, []string{"apply"}, []string{"drift"}},
		{"gitlab-ci.yml", gl, []string{"validate", "plan"}, []string{"apply"}, []string{"drift"}},
	} {
		t.Run(strings.TrimSuffix(pl.file, ".yml"), func(t *testing.T) {
			r := newRun(t, repo)
			junit := false
			for _, n := range pl.pr {
				r.job(pl.jobs[n])
				junit = r.checkJUnit() || junit
			}
			if !junit {
				t.Error("no change-request job wrote junit.xml")
			}
			r.checkPlanMarkdown()
			for _, n := range pl.main {
				r.job(pl.jobs[n])
			}
			// Nothing is injected between the main job and the scheduled check: it must be clean.
			for _, n := range pl.drifts {
				r.job(pl.jobs[n])
			}
			r.checkNoSecret()
		})
	}
}

type run struct {
	t        *testing.T
	repo     string
	bin      string // directory holding fabctl, first on PATH
	ws       string // the checkout the jobs run in: a copy of the repo's specs
	state    string // STATE_DIR, shared by the jobs as on a persistent runner
	password string
	outputs  bytes.Buffer // every command's output, to check the secret never shows
}

func newRun(t *testing.T, repo string) *run {
	tmp := t.TempDir()
	buf := make([]byte, 12)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	r := &run{t: t, repo: repo, bin: filepath.Join(tmp, "bin"), ws: filepath.Join(tmp, "ws"),
		state: filepath.Join(tmp, "state"), password: "tb-" + hex.EncodeToString(buf)}
	for _, d := range []string{r.bin, r.ws, r.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace is a copy of the repo's spec files, not the repo itself: the pipelines
	// write junit.xml, plan.md and plan.fab to the working directory, and the testbed's
	// known_hosts goes where the spec's credentials point (.fabctl/testbed beside the spec),
	// so nothing lands in the checkout and a `make demo` there is not disturbed.
	copySpecs(t, filepath.Join(repo, "examples"), filepath.Join(r.ws, "examples"))
	// The copy gets namespaces and loopback addresses of its own, so the test runs beside a
	// `fabctl testbed up examples/testbed` the user has up (whose names are fixed by the spec).
	fabricNS := isolateTestbed(t, filepath.Join(r.ws, testSpec), hex.EncodeToString(buf[:2]))
	r.mustRun(repo, 0, "make build")
	tbDir := filepath.Join(r.ws, testSpec, ".fabctl", "testbed")
	r.mustRun(r.ws, 0, "fabctl testbed up --no-color --fabric-netns "+fabricNS+" --dir "+tbDir+" "+testSpec)
	t.Cleanup(func() {
		if out, err := r.cmd(r.ws, "fabctl testbed down --no-color --dir "+tbDir+" "+testSpec).CombinedOutput(); err != nil {
			t.Errorf("testbed down: %v\n%s", err, out)
		}
	})
	return r
}

// isolateTestbed rewrites the testbed spec files in dir so that nothing the testbed makes
// shares a name with the example's: namespaces fab-NAME become fci<tag>-NAME and switch
// addresses 127.0.0.N become 127.<a>.<b>.N (all of 127.0.0.0/8 is loopback). It returns the
// fabric namespace to pass to testbed up (--fabric-netns).
func isolateTestbed(t *testing.T, dir, tag string) string {
	t.Helper()
	b, err := hex.DecodeString(tag)
	if err != nil || len(b) != 2 {
		t.Fatalf("tag %q: want 4 hex digits", tag)
	}
	// 127.0.x.x stays the example's; the second octet is 100..227, never 0.
	addr := fmt.Sprintf(`"127.%d.%d.`, 100+int(b[0]&0x7f), b[1])
	files, err := filepath.Glob(filepath.Join(dir, "*.fab.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no spec files in %s (%v)", dir, err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(string(src), `"netns:fab-`, `"netns:fci`+tag+`-`)
		out = strings.ReplaceAll(out, `"127.0.0.`, addr)
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "fci" + tag + "-fabric"
}

func copySpecs(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() || !(strings.HasSuffix(name, ".fab.hcl") || strings.HasSuffix(name, ".fab.hcl.json") || strings.HasSuffix(name, ".fabvars")) {
			return nil
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *run) cmd(dir, line string, env ...map[string]string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	r.t.Cleanup(cancel)
	c := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", line)
	c.Dir = dir
	c.Env = os.Environ()
	for _, e := range env {
		for k, v := range e {
			if !strings.Contains(v, "${{") { // a GitHub expression: the test sets what it needs
				c.Env = append(c.Env, k+"="+v)
			}
		}
	}
	c.Env = append(c.Env,
		"PATH="+r.bin+string(os.PathListSeparator)+"/usr/local/go/bin"+string(os.PathListSeparator)+os.Getenv("PATH"),
		"BIN="+filepath.Join(r.bin, "fabctl"), // make build writes here, not to the checkout's bin/
		"SPEC="+testSpec,
		"STATE_DIR="+r.state,
		"FABCTL_TESTBED_PASSWORD="+r.password,
		"NO_COLOR=1",
		// The testbed's hosts are network namespaces on veths: no RDMA device, so the traffic
		// stage could not run (validate would say "not proven", exit 5). It is skipped by name;
		// the VM testbed (make e2e-vm) is where traffic runs.
		"VALIDATE_FLAGS=--skip-traffic",
	)
	return c
}

func (r *run) mustRun(dir string, want int, line string, env ...map[string]string) {
	r.t.Helper()
	start := time.Now()
	out, err := r.cmd(dir, line, env...).CombinedOutput()
	r.outputs.Write(out)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("%s: %v", line, err)
	}
	if code != want {
		r.t.Fatalf("%s: exit %d, want %d\n%s", line, code, want, out)
	}
	r.t.Logf("ok %5.1fs  %s", time.Since(start).Seconds(), line)
}

// job runs a job's lines in a fresh checkout state (the previous job's output files removed),
// each in its own bash -eo pipefail like a step: every one must exit 0.
func (r *run) job(j job) {
	r.t.Helper()
	if len(j.lines) == 0 {
		r.t.Fatalf("job %s has no commands", j.name)
	}
	ents, err := os.ReadDir(r.ws)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "examples" {
			os.RemoveAll(filepath.Join(r.ws, e.Name()))
		}
	}
	r.t.Logf("== job %s", j.name)
	for _, l := range j.lines {
		dir := r.ws
		if strings.HasPrefix(l, "make build") {
			dir = r.repo
		} else if strings.HasPrefix(l, "go build") {
			r.t.Fatalf("job %s: %q: build with make build (BIN= redirects it) so the test does not write to the checkout", j.name, l)
		}
		r.mustRun(dir, 0, l, j.env)
	}
}

// checkPlanMarkdown: the plan the change-request job uploads and comments is a markdown plan.
func (r *run) checkPlanMarkdown() {
	r.t.Helper()
	md, err := os.ReadFile(filepath.Join(r.ws, "plan.md"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.outputs.Write(md)
	// A fresh testbed is not configured yet: the plan has changes (the step saw exit 2).
	if !bytes.HasPrefix(md, []byte("### fabctl plan: `testbed`")) || !bytes.Contains(md, []byte("to add")) {
		r.t.Errorf("plan.md is not a markdown plan with changes:\n%.600s", md)
	}
	fab, err := os.ReadFile(filepath.Join(r.ws, "plan.fab"))
	if err != nil {
		r.t.Error(err)
	}
	r.outputs.Write(fab) // the saved plan is an artifact too: it must not hold the password
}

// checkJUnit checks the JUnit report a job left, if any: well-formed, with tests, no failures.
func (r *run) checkJUnit() bool {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.ws, "junit.xml"))
	if err != nil {
		return false
	}
	var suites struct {
		Failures int `xml:"failures,attr"`
		Tests    int `xml:"tests,attr"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil || suites.Tests == 0 || suites.Failures != 0 {
		r.t.Errorf("junit.xml: %v, %d tests, %d failures", err, suites.Tests, suites.Failures)
	}
	return true
}

func (r *run) checkNoSecret() {
	r.t.Helper()
	if bytes.Contains(r.outputs.Bytes(), []byte(r.password)) {
		r.t.Error("the switch password appears in a command's output")
	}
}
