package spec

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseGUID(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"0x0c42a10300000b01", "0x0c42a10300000b01", ""},
		{"0X0C42A10300000B01", "0x0c42a10300000b01", ""},
		{"0c42:a103:0000:0b01", "0x0c42a10300000b01", ""},
		{" 2c90300000001 ", "0x0002c90300000001", ""},
		{"0x0", "", "zero"},
		{"0c42:a103:0b01", "", "four groups"},
		{"0c42:a103:00:0b01", "", "four hex digits"},
		{"0x10000000000000000", "", "64-bit"},
		{"cn01", "", "64-bit"},
		{"", "", "64-bit"},
	} {
		got, err := ParseGUID(c.in)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("ParseGUID(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseGUID(%q) = %q, %v; want an error about %q", c.in, got, err, c.err)
		}
	}
}

func TestNICGUID(t *testing.T) {
	s, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(`
fabric "t" {
  transport = "infiniband"
}
host "h1" {
  connect = "local"
  nic "ib0" {
    guid = "0c42:a103:0000:0b01"
  }
  nic "ib1" {
    guid = "zz"
  }
}
`)}}, LoadOptions{Platforms: testPlatforms})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `guid "zz" is not a 64-bit hex number`) || diags[0].Subject.Start.Line != 11 {
		t.Fatalf("diags: %v", diags)
	}
	if g := s.Host("h1").NIC("ib0").GUID; g != "0x0c42a10300000b01" {
		t.Errorf("guid %q", g)
	}
}

// TestIBLinks: the InfiniBand cabling the loader refuses, each error
// pinned to the spec: ends that disagree on the rate (the NIC's speed against width
// x lane rate), a width or speed InfiniBand has not, an adapter port
// cabled twice.
func TestIBLinks(t *testing.T) {
	const head = `
fabric "t" {
  transport = "infiniband"
}
switch "leaf1" {
  platform = "infiniband"
  ports    = 8
}
host "h1" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    speed  = "200G"
    guid   = "0x0c42a10300000b01"
  }
}
`
	link := func(port, speed, width string) string {
		return fmt.Sprintf("link {\n  endpoints = [\"leaf1:%s\", \"h1:ib0\"]\n  speed     = %q\n  width     = %q\n}\n", port, speed, width)
	}
	for _, c := range []struct {
		name, speed, width, want string
		twice                    bool // a second link from leaf1:2 to the same adapter port
	}{
		{name: "clean", speed: "HDR", width: "4x"},
		{name: "rate mismatch", speed: "NDR", width: "4x", want: "Speed mismatch"},
		{name: "width mismatch", speed: "HDR", width: "2x", want: "Speed mismatch"},
		{name: "no such width", speed: "HDR", width: "3x", want: "width"},
		{name: "no such speed", speed: "XDR2", width: "4x", want: "speed"},
		{name: "adapter port cabled twice", speed: "HDR", width: "4x", twice: true, want: "Endpoint used twice"},
	} {
		links := link("1", c.speed, c.width)
		if c.twice {
			links += link("2", c.speed, c.width)
		}
		t.Run(c.name, func(t *testing.T) {
			platforms := append(append([]PlatformInfo(nil), testPlatforms...), PlatformInfo{Name: "infiniband", InfiniBand: true})
			_, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(head + links)}}, LoadOptions{Platforms: platforms})
			if c.want == "" {
				if diags.HasErrors() {
					t.Fatalf("diags: %v", diags)
				}
				return
			}
			if !diags.HasErrors() {
				t.Fatalf("no error, want %q", c.want)
			}
			found := false
			for _, d := range diags {
				if strings.Contains(d.Summary+" "+d.Detail, c.want) && d.Subject != nil {
					found = true
				}
			}
			if !found {
				t.Errorf("diags %v, want one about %q pinned to the spec", diags, c.want)
			}
		})
	}
}
