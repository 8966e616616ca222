package plan

import "testing"

func TestDeviceList(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"switch.a"}, "switch.a"},
		{[]string{"switch.b", "switch.a", "switch.a"}, "switch.a and switch.b"},
		{[]string{"a", "b", "c", "d", "e"}, "5 devices (a, b, c, ...)"},
	} {
		if got := deviceList(c.in); got != c.want {
			t.Errorf("deviceList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
