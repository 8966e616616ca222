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
