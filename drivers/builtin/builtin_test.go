package builtin

import "testing"

func TestRegistry(t *testing.T) {
	r := Registry()
	for _, name := range []string{"host", "opensm", "srlinux", "openconfig"} {
		d, err := r.New(name)
		if err != nil || d.Name() == "" {
			t.Errorf("driver %s: %v", name, err)
		}
	}
	if _, err := r.New("nope"); err == nil {
		t.Errorf("unknown driver accepted")
	}
}
