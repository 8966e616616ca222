package safefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzFileOps puts an arbitrary shape at a path (and a link planted at
// the old temporary names), then reads, replaces, appends to or creates
// it with an arbitrary kind, and checks the helper's promises: no call
// blocks; a read returns data only from a regular file within the limit
// (through a link only when the kind follows links); a write leaves a
// regular file holding exactly the data, or refuses; nothing a link
// points at is ever changed; no temporary file is left behind.
func FuzzFileOps(f *testing.F) {
	for s := shapeNone; s < nShapes; s++ {
		for op := range uint8(8) {
			f.Add(uint8(s), op, uint8(64), []byte("hello"))
		}
	}
	f.Add(uint8(shapeRegular), uint8(0), uint8(3), []byte("four"))
	f.Add(uint8(shapeRegular|0x80), uint8(2), uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, sh, op, limit uint8, data []byte) {
		s := shape(sh&0x7f) % nShapes
		if s == shapeDevZero {
			s = shapeLinkToDevZero // /dev/zero itself is not the test's to replace
		}
		k := Kind{Name: "fuzz file", Max: int64(limit), NoFollow: op&1 == 1}
		dir := t.TempDir()
		victim := filepath.Join(dir, "victim")
		if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "x")
		if s == shapeTooLarge {
			s = shapeRegular
			data = append(bytes.Repeat([]byte("y"), int(limit)+1), data...)
		}
		if !place(t, s, path, victim, data) {
			t.Skip()
		}
		if sh&0x80 != 0 {
			for _, tmp := range []string{path + ".tmp", filepath.Join(dir, ".x.tmp")} {
				if err := os.Symlink(victim, tmp); err != nil {
					t.Fatal(err)
				}
			}
		}
		// What the path resolves to, as the kind sees it.
		regular := s == shapeRegular || (s == shapeLinkToRegular && !k.NoFollow)
		var content []byte
		if s == shapeRegular {
			content = data
		} else if s == shapeLinkToRegular {
			content = []byte("secret")
		}
		switch (op >> 1) % 4 {
		case 0:
			var b []byte
			var err error
			within(t, "ReadFile", func() { b, err = ReadFile(path, k) })
			want := regular && int64(len(content)) <= k.Max
			if want != (err == nil) {
				t.Fatalf("ReadFile over %s (limit %d): %v", s, k.Max, err)
			}
			if err == nil && !bytes.Equal(b, content) {
				t.Fatalf("ReadFile returned %q, want %q", b, content)
			}
			if err != nil {
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("error %T %v is not a *safefile.Error", err, err)
				}
			}
		case 1:
			var err error
			within(t, "WriteFile", func() { err = WriteFile(path, data, 0o600, k) })
			want := s != shapeFIFO && s != shapeDir
			if want != (err == nil) {
				t.Fatalf("WriteFile over %s: %v", s, err)
			}
			if err == nil {
				st, lerr := os.Lstat(path)
				if lerr != nil || !st.Mode().IsRegular() {
					t.Fatalf("not a regular file after WriteFile: %v", lerr)
				}
				if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
					t.Fatalf("WriteFile wrote %q, want %q", b, data)
				}
			}
		case 2:
			var fh *os.File
			var err error
			within(t, "OpenAppend", func() { fh, err = OpenAppend(path, 0o600, k) })
			want := s == shapeNone || regular
			if want != (err == nil) {
				t.Fatalf("OpenAppend over %s: %v", s, err)
			}
			if fh != nil {
				if _, err := fh.Write(data); err != nil {
					t.Fatal(err)
				}
				fh.Close()
			}
		case 3:
			var fh *os.File
			var err error
			within(t, "CreateExclusive", func() { fh, err = CreateExclusive(path, 0o600, k) })
			if (s == shapeNone) != (err == nil) {
				t.Fatalf("CreateExclusive over %s: %v", s, err)
			}
			if err != nil && !errors.Is(err, fs.ErrExist) {
				t.Fatalf("CreateExclusive over %s: %v is not fs.ErrExist", s, err)
			}
			if fh != nil {
				fh.Close()
			}
		}
		// Appending through a followed link to the victim is the one
		// write allowed to reach it.
		appendedVictim := (op>>1)%4 == 2 && s == shapeLinkToRegular && !k.NoFollow
		if b, _ := os.ReadFile(victim); string(b) != "secret" && !appendedVictim {
			t.Fatalf("the victim a link points at changed: %q", b)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".x.") && strings.HasSuffix(e.Name(), ".tmp") && e.Name() != ".x.tmp" {
				t.Fatalf("temporary file left: %s", e.Name())
			}
		}
	})
}
