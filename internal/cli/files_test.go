package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Planted paths, issue 37: every kind of path fabctl reads or writes is
// tried with a FIFO, /dev/zero, a dangling link and (for writes) a link
// planted at the old temporary name. No command blocks or eats memory;
// each refuses with an error naming the file, or (a planted temporary
// link) writes its file and leaves the link's target alone. No device is
// changed by a refused run.

type planted int

const (
	plantFIFO planted = iota
	plantDevZero
	plantDangling
	plantTmpLink
)

func (p planted) String() string {
	return [...]string{"FIFO", "/dev/zero", "dangling link", "planted temporary link"}[p]
}

// plant puts p at path (for /dev/zero, a link to it: the path of a test
// directory cannot be a device node without privileges, and a link is
// how one would be planted). victim is what the temporary link targets.
func plant(t *testing.T, p planted, path, victim string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	var err error
	switch p {
	case plantFIFO:
		err = syscall.Mkfifo(path, 0o600)
	case plantDevZero:
		err = os.Symlink("/dev/zero", path)
	case plantDangling:
		err = os.Symlink(filepath.Join(filepath.Dir(path), "gone", "nowhere"), path)
	case plantTmpLink:
		err = os.Symlink(victim, path+".tmp")
	}
	if err != nil {
		t.Skipf("cannot plant %s: %v", p, err)
	}
}

// runWithin runs a command line and fails the test when it blocks.
func runWithin(t *testing.T, f *Factory, args ...string) ExitCode {
	t.Helper()
	done := make(chan ExitCode, 1)
	go func() { done <- runCLI(f, args...) }()
	select {
	case code := <-done:
		return code
	case <-time.After(20 * time.Second):
		t.Fatalf("fabctl %s blocked", strings.Join(args, " "))
	}
	return 0
}

func TestPlantedPaths(t *testing.T) {
	type pathCase struct {
		name string
		// path is where the plant goes (e: the env).
		path func(e *applyEnv) string
		// args is the command line.
		args func(e *applyEnv, path string) []string
		// write: the path is written (a planted temporary link must not
		// be followed; the run may succeed).
		write bool
		// follows: the kind follows a link the operator or spec names, so
		// a link to /dev/zero reads as a device, not as a link.
		follows bool
		says    string // what the error names besides the path
	}
	cases := []pathCase{
		{name: "lock file", path: func(e *applyEnv) string { return filepath.Join(e.stateDir(), "t.lock") },
			args: func(e *applyEnv, _ string) []string {
				return []string{"apply", "--auto-approve", "--lock-timeout", "300ms", e.spec}
			},
			write: true, says: "lock"},
		{name: "applied record", path: func(e *applyEnv) string { return filepath.Join(e.stateDir(), "t.applied.json") },
			args:  func(e *applyEnv, _ string) []string { return []string{"apply", "--auto-approve", e.spec} },
			write: true, says: "applied record"},
		{name: "--journal", path: func(e *applyEnv) string { return filepath.Join(e.dir, "run.jsonl") },
			args: func(e *applyEnv, p string) []string {
				return []string{"apply", "--auto-approve", "--journal", p, e.spec}
			},
			write: true, says: "journal"},
		{name: "--debug-file", path: func(e *applyEnv) string { return filepath.Join(e.dir, "debug.log") },
			args:  func(e *applyEnv, p string) []string { return []string{"plan", "--debug-file", p, e.spec} },
			write: true, follows: true, says: "debug file"},
		{name: "--var-file", path: func(e *applyEnv) string { return filepath.Join(e.dir, "vars.fabvars") },
			args:    func(e *applyEnv, p string) []string { return []string{"plan", "--var-file", p, e.spec} },
			follows: true, says: "variables file"},
		{name: "--junit", path: func(e *applyEnv) string { return filepath.Join(e.dir, "junit.xml") },
			args:  func(e *applyEnv, p string) []string { return []string{"validate", "--static", "--junit", p, e.spec} },
			write: true, follows: true, says: "report file"},
		{name: "plan -out", path: func(e *applyEnv) string { return filepath.Join(e.dir, "plan.fab") },
			args:  func(e *applyEnv, p string) []string { return []string{"plan", "-out", p, e.spec} },
			write: true, follows: true, says: "plan file"},
		{name: "file() secret", path: func(e *applyEnv) string { return filepath.Join(e.dir, "secret") },
			args:    func(e *applyEnv, _ string) []string { return []string{"apply", "--auto-approve", e.spec} },
			follows: true, says: "secret"},
	}
	for _, c := range cases {
		for _, p := range []planted{plantFIFO, plantDevZero, plantDangling, plantTmpLink} {
			if p == plantTmpLink && !c.write {
				continue
			}
			t.Run(c.name+"/"+p.String(), func(t *testing.T) {
				e := newApplyEnv(t)
				e.converge()
				path := c.path(e)
				if c.name == "file() secret" {
					src, err := os.ReadFile(filepath.Join(e.spec, "ten.fab.hcl"))
					if err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(e.spec, "ten.fab.hcl"), strings.Replace(string(src),
						`password = env("FAB_TEST_PASSWORD")`, `password = file("../secret")`, 1))
				}
				victim := filepath.Join(e.dir, "victim")
				writeFile(t, victim, "do not touch\n")
				plant(t, p, path, victim)
				f, _, stdout, stderr := e.factory()
				code := runWithin(t, f, c.args(e, path)...)
				out := stdout.String() + stderr.String()
				if b, _ := os.ReadFile(victim); string(b) != "do not touch\n" {
					t.Fatalf("the file a planted link points at was written: %q", b)
				}
				if p == plantTmpLink {
					if code != ExitOK && code != ExitChanges {
						t.Fatalf("exit %d with a link planted at %s.tmp\n%s", code, path, out)
					}
					return
				}
				if code == ExitOK {
					if c.write && (c.follows || p == plantDangling) {
						// A link the operator named is replaced by the
						// file written, never written through.
						if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && p != plantFIFO {
							return
						}
					}
					t.Fatalf("exit 0 with a %s at %s\n%s", p, path, out)
				}
				if !strings.Contains(out, path) && !strings.Contains(out, filepath.Base(path)) {
					t.Errorf("the error does not name %s:\n%s", path, out)
				}
				if !strings.Contains(strings.ToLower(out), c.says) {
					t.Errorf("the error does not say %q:\n%s", c.says, out)
				}
				want := map[planted]string{plantFIFO: "FIFO", plantDevZero: "symbolic link", plantDangling: "symbolic link"}[p]
				if c.follows && p == plantDevZero {
					want = "device"
				}
				if !strings.Contains(out, want) {
					t.Errorf("the error does not say %q:\n%s", want, out)
				}
				if len(e.store.Applied) != 0 {
					t.Errorf("devices were changed by a refused run: %v", e.store.Applied)
				}
			})
		}
	}
}
