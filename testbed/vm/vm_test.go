package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestVMHarness proves the runner itself in the VM (make e2e-vm runs it
// before TestVM, so a failed section's digest ends the output CI keeps): the reset between sections, skip, failure and timeout
// reporting, the section environment, artifacts written to the share.
func TestVMHarness(t *testing.T) {
	if os.Getenv("FABCTL_E2E_VM") != "1" {
		t.Skip("the VM testbed runs only under `make e2e-vm` (FABCTL_E2E_VM=1)")
	}
	dir, err := filepath.Abs("testdata/harness")
	if err != nil {
		t.Fatal(err)
	}
	share := t.TempDir()
	res, err := Run(context.Background(), Options{
		SectionsDir: dir, Share: share, Log: os.Stderr, Verbose: os.Getenv("FABTB_VERBOSE") == "1",
	})
	fmt.Print("\n" + res.Summary())
	if err != nil {
		t.Fatalf("VM run: %v", err)
	}
	want := []struct {
		name   string
		st     Status
		reason string
	}{
		{"a-leave", Pass, ""},
		{"b-clean", Pass, ""},
		{"c-skip", Skip, "harness: a deliberate skip"},
		{"d-fail", Fail, "exit 1: harness: a deliberate failure"},
		{"e-timeout", Fail, "killed by its 5s timeout (exit 124)"},
		{"f-after", Pass, ""},
	}
	if len(res.Sections) != len(want) {
		t.Fatalf("got %d sections, want %d", len(res.Sections), len(want))
	}
	for i, w := range want {
		g := res.Sections[i]
		if g.Name != w.name || g.Status != w.st || g.Reason != w.reason {
			t.Errorf("section %s: got %s %q, want %s %s %q\n%s", g.Name, g.Status, g.Reason, w.name, w.st, w.reason, g.Log)
		}
	}
	if !strings.Contains(res.Sections[3].Log, "some output") {
		t.Errorf("d-fail's log lacks its output: %q", res.Sections[3].Log)
	}
	if b, err := os.ReadFile(filepath.Join(share, "results", "f-after", "artifact.txt")); err != nil || string(b) != "artifact\n" {
		t.Errorf("artifact written by f-after: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(share, "serial.log")); err != nil || !strings.Contains(string(b), "FABTB-TIMEOUT section e-timeout") {
		t.Errorf("serial.log lacks the timeout marker (%v)", err)
	}
}

// TestVM boots the VM testbed and runs its sections, one subtest each. It is
// the body of `make e2e-vm` (FABCTL_E2E_VM=1); `make test` never boots a VM,
// so there it skips. Inside e2e-vm anything that stops the run is a failure,
// and under CI=true so is a skipped section.
func TestVM(t *testing.T) {
	if os.Getenv("FABCTL_E2E_VM") != "1" {
		t.Skip("the VM testbed runs only under `make e2e-vm` or testbed/vm/run.sh (FABCTL_E2E_VM=1)")
	}
	ci := os.Getenv("CI") == "true"
	o := Options{
		Sections: SplitNames(os.Getenv("FABTB_SECTIONS")),
		Keep:     os.Getenv("FABTB_KEEP") == "1",
		CI:       ci,
		Log:      os.Stderr,
		Verbose:  os.Getenv("FABTB_VERBOSE") == "1",
	}
	for _, v := range []struct {
		env, want string
		dst       *int
	}{{"FABTB_DUR", "a number of seconds", &o.Dur}, {"FABTB_PERF_PAIRS", "a number of rounds", &o.PerfPairs}, {"FABTB_RETRIES", "a number of attempts", &o.Retries}, {"FABTB_DEMO_RUNS", "a number of runs", &o.DemoRuns}} {
		if d := os.Getenv(v.env); d != "" {
			n, err := strconv.Atoi(d)
			if err != nil || n <= 0 {
				t.Fatalf("%s=%q: want %s", v.env, d, v.want)
			}
			*v.dst = n
		}
	}
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-30*time.Second))
		defer cancel()
	}
	res, err := Run(ctx, o)
	if os.Getenv("FABTB_SHOW_LOG") == "1" { // make demo-vm: the narrated run is the point
		for _, s := range res.Sections {
			fmt.Printf("\n----- section %s -----\n%s", s.Name, s.Log)
		}
	}
	fmt.Print("\n" + res.Summary())
	if res.Share != "" {
		fmt.Printf("  share kept: %s\n", res.Share)
	}
	if err != nil {
		t.Errorf("VM run: %v", err)
		if len(res.Sections) == 0 {
			return
		}
	}
	// CI keeps only the end of a run's output: a failed section's reason and
	// the end of its log come again last, after every section's own output.
	defer func() { fmt.Print(failureDigest(res, 40)) }()
	for _, s := range res.Sections {
		t.Run(s.Name, func(t *testing.T) {
			switch s.Status {
			case Pass:
				t.Logf("passed in %s", s.Duration.Round(100*time.Millisecond))
			case Skip:
				if ci {
					t.Fatalf("section skipped under CI=true: %s\n%s", s.Reason, s.Log)
				}
				t.Skip(s.Reason)
			default:
				t.Errorf("section %s failed: %s\n----- %s output -----\n%s", s.Name, s.Reason, s.Name, s.Log)
			}
		})
	}
}

func TestParseSection(t *testing.T) {
	tests := []struct {
		name, body string
		want       Section
		wantErr    string
	}{
		{
			name: "defaults",
			body: "#!/bin/bash\n# plain section\necho hi\n",
			want: Section{Timeout: DefaultSectionTimeout},
		},
		{
			name: "all headers",
			body: "#!/bin/bash\n# fabtb-timeout: 600\n# fabtb-gotest: ./validate/verbs verbs\n# fabtb-gotest: ./drivers/host\n" +
				"# fabtb-file: examples/testbed\n# fabtb-needs: fabctl-verbs\n",
			want: Section{
				Timeout: 600 * time.Second,
				GoTests: []GoTest{{Pkg: "./validate/verbs", Tags: "verbs"}, {Pkg: "./drivers/host"}},
				Files:   []string{"examples/testbed"},
				Needs:   []string{"fabctl-verbs"},
			},
		},
		{name: "bad timeout", body: "# fabtb-timeout: soon\n", wantErr: ":1: fabtb-timeout: want a number of seconds"},
		{name: "gotest not relative", body: "#\n# fabtb-gotest: github.com/x/y\n", wantErr: ":2: fabtb-gotest: want ./pkg/path"},
		{name: "file outside repo", body: "# fabtb-file: ../shared/yang\n", wantErr: "want one path inside the repository"},
		{name: "unknown need", body: "# fabtb-needs: gpu\n", wantErr: `unknown "gpu"`},
		{name: "unknown header", body: "# fabtb-timout: 5\n", wantErr: "unknown header"},
		{name: "empty value", body: "# fabtb-file:\n", wantErr: "no value"},
		{name: "header below a long description", body: "#!/bin/bash\n" + strings.Repeat("# about it\n\n", 40) + "# fabtb-timeout: 9\n. lib.sh\n", want: Section{Timeout: 9 * time.Second}},
		{name: "error line in a long block", body: strings.Repeat("#\n", 40) + "# fabtb-timeout: x\n", wantErr: ":41: fabtb-timeout"},
		{name: "comment after the first command ignored", body: "#!/bin/bash\n. lib.sh\n# fabtb-timeout: 9\n", want: Section{Timeout: DefaultSectionTimeout}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.sh")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ParseSection(p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Name, tc.want.Path = "s", p
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSelectSections(t *testing.T) {
	all := []Section{{Name: "fabctl"}, {Name: "info"}, {Name: "rxe"}}
	got, err := selectSections(all, SplitNames("rxe, info rxe"))
	if err != nil || len(got) != 2 || got[0].Name != "rxe" || got[1].Name != "info" {
		t.Fatalf("got %v, %v; want [rxe info] in the order given, once each", got, err)
	}
	if got, _ := selectSections(all, nil); len(got) != 3 {
		t.Fatalf("no names: got %d sections, want all 3", len(got))
	}
	if _, err := selectSections(all, []string{"dcb"}); err == nil || !strings.Contains(err.Error(), "known: fabctl, info, rxe") {
		t.Fatalf("unknown section: err = %v", err)
	}
}

func TestCollect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.rc", "0\n")
	write("ok.log", "ok: fine\nFABTB-FIGURE rxe write_bw_gbps=0.27\n")
	write("sk.rc", "77\n")
	write("sk.log", "SKIP: no fabdcb module\n")
	write("bad.rc", "1\n")
	write("bad.log", "FAIL: first\nmore\nFAIL: ToS 0x68 packets counted (0)\n")
	write("slow.rc", "124\n")
	secs := []Section{{Name: "ok"}, {Name: "sk"}, {Name: "bad"}, {Name: "slow", Timeout: time.Minute}, {Name: "lost"}}
	serial := "===== FABTB-END ok rc=0 secs=12.5 =====\r\n===== FABTB-END bad rc=1 secs=3.0 =====\n"
	got, figs := collect(dir, secs, serial)
	want := []struct {
		st     Status
		rc     int
		reason string
		dur    time.Duration
	}{
		{Pass, 0, "", 12500 * time.Millisecond},
		{Skip, 77, "no fabdcb module", 0},
		{Fail, 1, "exit 1: ToS 0x68 packets counted (0)", 3 * time.Second},
		{Fail, 124, "killed by its 1m0s timeout (exit 124)", 0},
		{Fail, -1, "no result: the VM stopped before this section finished (see the serial log)", 0},
	}
	for i, w := range want {
		g := got[i]
		if g.Status != w.st || g.RC != w.rc || g.Reason != w.reason || g.Duration != w.dur {
			t.Errorf("%s: got %s rc=%d %q %s, want %s rc=%d %q %s", g.Name, g.Status, g.RC, g.Reason, g.Duration, w.st, w.rc, w.reason, w.dur)
		}
	}
	if len(figs) != 1 || figs[0] != "FABTB-FIGURE rxe write_bw_gbps=0.27" {
		t.Errorf("figures = %q", figs)
	}
	r := Results{Sections: got, Figures: figs}
	if !r.Failed() {
		t.Error("Failed() = false with failed sections")
	}
	s := r.Summary()
	for _, w := range []string{"PASS  ok", "SKIP  sk", "FAIL  lost", "FABTB-FIGURE rxe"} {
		if !strings.Contains(s, w) {
			t.Errorf("summary lacks %q:\n%s", w, s)
		}
	}
}

func TestKernelCmdline(t *testing.T) {
	got := kernelCmdline([]Section{{Name: "info"}, {Name: "rxe"}}, true, 3, Options{})
	for _, w := range []string{"init=/fabtb/init", "console=ttyS0", "panic=-1", "fabtb_sections=info,rxe", "fabtb_ci=1", "fabtb_dur=3"} {
		if !strings.Contains(" "+got+" ", " "+w+" ") {
			t.Errorf("cmdline %q lacks %q", got, w)
		}
	}
	if strings.Contains(got, "fabtb_perf_pairs") || strings.Contains(got, "fabtb_retries") || strings.Contains(got, "fabtb_demo_runs") {
		t.Errorf("cmdline %q sets knobs nobody asked for", got)
	}
	if c := kernelCmdline([]Section{{Name: "verbs-perf"}}, false, 5, Options{PerfPairs: 7, Retries: 2, DemoRuns: 4}); !strings.Contains(c+" ", " fabtb_perf_pairs=7 ") || !strings.Contains(c+" ", " fabtb_retries=2 ") || !strings.Contains(c+" ", " fabtb_demo_runs=4 ") {
		t.Errorf("cmdline %q lacks fabtb_perf_pairs=7, fabtb_retries=2 or fabtb_demo_runs=4", c)
	}
	args := strings.Join(qemuArgs("/img", "/share", got), " ")
	for _, w := range []string{"-nic none", "-no-reboot", "snapshot=on", "mount_tag=fab", "-numa node,nodeid=1,cpus=1"} {
		if !strings.Contains(args, w) {
			t.Errorf("qemu args lack %q: %s", w, args)
		}
	}
}

// TestScripts checks every shell script of the testbed with bash -n, that the
// real sections parse, and that every lib.sh function is in the README
// contract (other helpers code against that document).
func TestScripts(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	scripts, _ := filepath.Glob("sections/*.sh")
	harness, _ := filepath.Glob("testdata/harness/*.sh")
	scripts = append(scripts, harness...)
	scripts = append(scripts, "build.sh", "run.sh", "image/base.sh", "image/image.sh", "guest/runner.sh")
	for _, s := range scripts {
		if out, err := exec.Command(bash, "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", s, err, out)
		}
	}
	if out, err := exec.Command("sh", "-n", "image/init").CombinedOutput(); err != nil {
		t.Errorf("sh -n image/init: %v\n%s", err, out)
	}
	for _, d := range []string{"sections", "testdata/harness"} {
		if _, err := ListSections(d); err != nil {
			t.Error(err)
		}
	}
	lib, err := os.ReadFile("sections/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^(fab_[a-z0-9_]+)\(\)`).FindAllStringSubmatch(string(lib), -1) {
		if m[1] == "fab_policy_routing" || m[1] == "fab_rdma_pair" {
			continue // internal helpers
		}
		if !strings.Contains(string(readme), "`"+m[1]) {
			t.Errorf("lib.sh function %s is not documented in README.md", m[1])
		}
	}
}

// TestRunnerHeaders keeps the guest runner's header reader (it applies a
// section's timeout inside the VM) in step with ParseSection: for every
// real and harness section, and for a long comment block, both find the
// same timeout.
func TestRunnerHeaders(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	runner, err := os.ReadFile("guest/runner.sh")
	if err != nil {
		t.Fatal(err)
	}
	def := regexp.MustCompile(`(?ms)^header\(\) \{.*?^\}`).Find(runner)
	if def == nil {
		t.Fatal("guest/runner.sh has no header() function")
	}
	runnerDefault := regexp.MustCompile(`(?m)^\s*t=\$\{t:-(\d+)\}`).FindStringSubmatch(string(runner))
	if runnerDefault == nil || runnerDefault[1] != strconv.Itoa(int(DefaultSectionTimeout/time.Second)) {
		t.Fatalf("the runner's default section timeout %v differs from DefaultSectionTimeout %s", runnerDefault, DefaultSectionTimeout)
	}
	files, _ := filepath.Glob("sections/*.sh")
	harness, _ := filepath.Glob("testdata/harness/*.sh")
	files = append(files, harness...)
	long := filepath.Join(t.TempDir(), "long.sh")
	body := "#!/bin/bash\n" + strings.Repeat("# a description line\n#\n", 30) + "  # fabtb-timeout: 1234\n. lib.sh\n# fabtb-timeout: 5\n"
	if err := os.WriteFile(long, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, long)
	for _, f := range files {
		if filepath.Base(f) == "lib.sh" {
			continue
		}
		s, err := ParseSection(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bash, "-c", string(def)+"\nheader timeout \"$1\"", "bash", f).Output()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got := strings.TrimSpace(string(out))
		if got == "" {
			got = runnerDefault[1] // no header: the runner's default
		}
		if want := strconv.Itoa(int(s.Timeout / time.Second)); got != want {
			t.Errorf("%s: the guest runner reads timeout %s s, ParseSection %s s", f, got, want)
		}
	}
}

// failureDigest repeats, for each failed section, its reason and the last
// n lines of its log, so the end of a long run names what failed and why.
func failureDigest(res Results, n int) string {
	var b strings.Builder
	for _, s := range res.Sections {
		if s.Status != Fail {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n===== failed VM sections (each section's full output is above) =====\n")
		}
		fmt.Fprintf(&b, "--- %s: %s (the end of its log)\n%s\n", s.Name, s.Reason, tail(s.Log, n))
	}
	return b.String()
}

func TestFailureDigest(t *testing.T) {
	res := Results{Sections: []SectionResult{
		{Name: "ok", Status: Pass, Log: "fine\n"},
		{Name: "bad", Status: Fail, Reason: "exit 1: the demo passed 9 of 10 runs in a row", Log: "one\ntwo\nthree\nfour\n"},
		{Name: "skipped", Status: Skip, Reason: "no verbs"},
	}}
	got := failureDigest(res, 2)
	want := "\n===== failed VM sections (each section's full output is above) =====\n" +
		"--- bad: exit 1: the demo passed 9 of 10 runs in a row (the end of its log)\nthree\nfour\n"
	if got != want {
		t.Errorf("digest:\n%q\nwant\n%q", got, want)
	}
	if d := failureDigest(Results{Sections: res.Sections[:1]}, 2); d != "" {
		t.Errorf("digest of a passing run: %q", d)
	}
}
