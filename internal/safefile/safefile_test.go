package safefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var testKind = Kind{Name: "test file", Max: 64}
var testNoFollow = Kind{Name: "test file", Max: 64, NoFollow: true}

// shape is what a test puts at a path.
type shape int

const (
	shapeNone shape = iota
	shapeRegular
	shapeLinkToRegular
	shapeDanglingLink
	shapeFIFO
	shapeDir
	shapeLinkToFIFO
	shapeDevZero
	shapeLinkToDevZero
	shapeTooLarge
	nShapes
)

func (s shape) String() string {
	return [...]string{"none", "regular", "link to regular", "dangling link", "FIFO", "directory",
		"link to FIFO", "/dev/zero", "link to /dev/zero", "too large"}[s]
}

// place puts shape s at path; victim is a regular file links point at.
// It reports false when the shape cannot be made here.
func place(t testing.TB, s shape, path, victim string, data []byte) bool {
	t.Helper()
	var err error
	switch s {
	case shapeNone:
	case shapeRegular:
		err = os.WriteFile(path, data, 0o600)
	case shapeTooLarge:
		err = os.WriteFile(path, bytes.Repeat([]byte("x"), 65), 0o600)
	case shapeLinkToRegular:
		err = os.Symlink(victim, path)
	case shapeDanglingLink:
		err = os.Symlink(filepath.Join(filepath.Dir(path), "nowhere", "x"), path)
	case shapeFIFO:
		err = syscall.Mkfifo(path, 0o600)
	case shapeLinkToFIFO:
		fifo := path + ".fifo"
		if err = syscall.Mkfifo(fifo, 0o600); err == nil {
			err = os.Symlink(fifo, path)
		}
	case shapeDir:
		err = os.Mkdir(path, 0o700)
	case shapeDevZero:
		if _, err := os.Stat("/dev/zero"); err != nil {
			return false
		}
		// A device node cannot be made without privileges; the path is
		// /dev/zero itself.
		return true
	case shapeLinkToDevZero:
		if _, err := os.Stat("/dev/zero"); err != nil {
			return false
		}
		err = os.Symlink("/dev/zero", path)
	}
	if err != nil {
		t.Skipf("cannot make %s: %v", s, err)
	}
	return true
}

// within runs f and fails the test if it does not return in time: no
// path may block a call.
func within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

func TestReadFile(t *testing.T) {
	for s := shapeNone; s < nShapes; s++ {
		for _, k := range []Kind{testKind, testNoFollow} {
			t.Run(s.String(), func(t *testing.T) {
				dir := t.TempDir()
				victim := filepath.Join(dir, "victim")
				if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "x")
				if !place(t, s, path, victim, []byte("hello")) {
					t.Skip("no /dev/zero")
				}
				if s == shapeDevZero {
					path = "/dev/zero"
				}
				var b []byte
				var err error
				within(t, "ReadFile", func() { b, err = ReadFile(path, k) })
				want := ""
				switch {
				case s == shapeRegular:
					want = "hello"
				case s == shapeLinkToRegular && !k.NoFollow:
					want = "secret"
				}
				if want != "" {
					if err != nil || string(b) != want {
						t.Fatalf("got %q, %v; want %q", b, err, want)
					}
					return
				}
				var se *Error
				if err == nil || !errors.As(err, &se) {
					t.Fatalf("got %q, %v; want a refusal", b, err)
				}
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "test file") {
					t.Errorf("error does not name the file and its kind: %v", err)
				}
				switch s {
				case shapeFIFO, shapeLinkToFIFO:
					if !k.NoFollow || s == shapeFIFO {
						mustContain(t, err, "FIFO")
					}
				case shapeDevZero:
					mustContain(t, err, "device")
				case shapeLinkToDevZero:
					if !k.NoFollow {
						mustContain(t, err, "device")
					}
				case shapeDir:
					mustContain(t, err, "directory")
				case shapeTooLarge:
					mustContain(t, err, "larger than 64 bytes")
				case shapeNone:
					if !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("a missing file is not fs.ErrNotExist: %v", err)
					}
				case shapeDanglingLink:
					if !k.NoFollow && !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("a dangling link is not fs.ErrNotExist: %v", err)
					}
					mustContain(t, err, "symbolic link")
				}
				if k.NoFollow && (s == shapeLinkToRegular || s == shapeLinkToFIFO || s == shapeLinkToDevZero) {
					mustContain(t, err, "symbolic link")
				}
			})
		}
	}
}

func mustContain(t *testing.T, err error, s string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), s) {
		t.Errorf("error %v does not say %q", err, s)
	}
}

// WriteFile never writes through a link, never follows a planted
// temporary name, refuses FIFOs, devices and directories, and leaves no
// temporary file behind.
func TestWriteFile(t *testing.T) {
	for s := shapeNone; s < nShapes; s++ {
		if s == shapeDevZero {
			continue // /dev/zero itself is not a test directory's file
		}
		t.Run(s.String(), func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "x")
			place(t, s, path, victim, []byte("hello"))
			// The planted temporary names of the old writers.
			for _, tmp := range []string{path + ".tmp", filepath.Join(dir, ".x.tmp")} {
				if err := os.Symlink(victim, tmp); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			within(t, "WriteFile", func() { err = WriteFile(path, []byte("new"), 0o600, testKind) })
			switch s {
			case shapeFIFO, shapeDir:
				if err == nil {
					t.Fatalf("wrote over %s", s)
				}
			default:
				if err != nil {
					t.Fatalf("WriteFile: %v", err)
				}
				st, err := os.Lstat(path)
				if err != nil || !st.Mode().IsRegular() {
					t.Fatalf("%s is not a regular file after the write: %v", path, err)
				}
				if b, _ := os.ReadFile(path); string(b) != "new" {
					t.Errorf("content %q", b)
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != "secret" {
				t.Errorf("the write went through a link: victim holds %q", b)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".x.") && e.Name() != ".x.tmp" {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
		})
	}
}

func TestOpenAppendAndCreateExclusive(t *testing.T) {
	for s := shapeNone; s < nShapes; s++ {
		if s == shapeDevZero {
			continue
		}
		for _, k := range []Kind{testKind, testNoFollow} {
			t.Run(s.String(), func(t *testing.T) {
				dir := t.TempDir()
				victim := filepath.Join(dir, "victim")
				if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "x")
				place(t, s, path, victim, []byte("hello"))
				var f *os.File
				var err error
				within(t, "OpenAppend", func() { f, err = OpenAppend(path, 0o600, k) })
				ok := s == shapeNone || s == shapeRegular || s == shapeTooLarge || (s == shapeLinkToRegular && !k.NoFollow)
				if ok != (err == nil) {
					t.Fatalf("OpenAppend: %v (want ok %v)", err, ok)
				}
				if f != nil {
					f.Close()
				}
				if b, _ := os.ReadFile(victim); string(b) != "secret" {
					t.Errorf("victim changed: %q", b)
				}
				os.Remove(path)
				os.RemoveAll(path)
				place(t, s, path, victim, []byte("hello"))
				within(t, "CreateExclusive", func() { f, err = CreateExclusive(path, 0o600, k) })
				if (s == shapeNone) != (err == nil) {
					t.Fatalf("CreateExclusive over %s: %v", s, err)
				}
				if s != shapeNone && !errors.Is(err, fs.ErrExist) {
					t.Errorf("CreateExclusive over %s: %v is not fs.ErrExist", s, err)
				}
				if f != nil {
					f.Close()
				}
			})
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 10: "64 KiB", 16 << 20: "16 MiB", 1 << 30: "1 GiB", 1000: "1000 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
