package sysattr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("0,", 1500) + "1" // a long cpulist (sysfs attributes fill at most a page)
	for name, body := range map[string]string{"gid": "fe80:0000:0000:0000:5054:00ff:fe12:3456\n", "empty": "", "long": long + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, want string
		missing    bool
	}{
		{name: "gid", want: "fe80:0000:0000:0000:5054:00ff:fe12:3456"},
		{name: "empty", want: ""},
		{name: "long", want: long},
		{name: "absent", missing: true},
	} {
		got, err := Read(filepath.Join(dir, tc.name))
		if tc.missing {
			if !errors.Is(err, os.ErrNotExist) || !strings.Contains(fmt.Sprint(err), filepath.Join(dir, "absent")) {
				t.Errorf("%s: err = %v, want a not-exist error naming the path", tc.name, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
