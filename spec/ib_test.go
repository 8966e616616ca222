package spec

import (
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
	for _, c := range []struct {
		name, links, want string
	}{
		{name: "clean", links: `
link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "HDR"
  width     = "4x"
}`},
		{name: "rate mismatch", want: "Speed mismatch", links: `
link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "NDR"
  width     = "4x"
}`},
		{name: "width mismatch", want: "Speed mismatch", links: `
link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "HDR"
  width     = "2x"
}`},
		{name: "no such width", want: "width", links: `
link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "HDR"
  width     = "3x"
}`},
		{name: "no such speed", want: "speed", links: `
link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "XDR2"
  width     = "4x"
}`},
		{name: "adapter port cabled twice", want: "Endpoint used twice", links: `
link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "HDR"
  width     = "4x"
}
link {
  endpoints = ["leaf1:2", "h1:ib0"]
  speed     = "HDR"
  width     = "4x"
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			platforms := append(append([]PlatformInfo(nil), testPlatforms...), PlatformInfo{Name: "infiniband", InfiniBand: true})
			_, diags := LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(head + c.links)}}, LoadOptions{Platforms: platforms})
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
