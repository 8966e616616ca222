package spec

import (
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

func TestUnits(t *testing.T) {
	bytesCases := []struct {
		in   string
		want Bytes
		ok   bool
	}{
		{"150KB", 150_000, true}, {"1.5MB", 1_500_000, true}, {"64MiB", 64 << 20, true}, {"9216", 9216, true},
		{"100 kb", 100_000, true}, {"1.5XB", 0, false}, {"KB", 0, false}, {"-1KB", 0, false},
	}
	for _, c := range bytesCases {
		got, err := ParseBytes(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseBytes(%q) = %v, %v", c.in, got, err)
		}
	}
	rates := map[string]BitRate{"400G": 400e9, "100Gbps": 100e9, "25GbE": 25e9, "1.6T": 1.6e12, "10M": 10e6}
	for in, want := range rates {
		if got, err := ParseBitRate(in); err != nil || got != want {
			t.Errorf("ParseBitRate(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"400", "400Q", "G"} {
		if _, err := ParseBitRate(bad); err == nil {
			t.Errorf("ParseBitRate(%q) accepted", bad)
		}
	}
	if l, err := ParseLength("150cm"); err != nil || l != 1.5 {
		t.Errorf("ParseLength: %v %v", l, err)
	}
	if _, err := ParseLength("3"); err == nil {
		t.Errorf("bare length accepted")
	}
	if d, err := ParseDuration("200ms"); err != nil || d != 200*time.Millisecond {
		t.Errorf("ParseDuration: %v %v", d, err)
	}
	if _, err := ParseDuration("200"); err == nil {
		t.Errorf("bare duration accepted")
	}
	if p, err := ParsePercent("90%"); err != nil || p != 90 {
		t.Errorf("ParsePercent: %v %v", p, err)
	}
	if v, err := ParseIntRanges("24-26,48", 0, 63); err != nil || len(v) != 4 || v[3] != 48 {
		t.Errorf("ParseIntRanges: %v %v", v, err)
	}
	for _, bad := range []string{"31-24", "64", "a", "1,,2"} {
		if _, err := ParseIntRanges(bad, 0, 63); err == nil {
			t.Errorf("ParseIntRanges(%q) accepted", bad)
		}
	}
	strs := map[Bytes]string{150_000: "150KB", 1_500_000: "1.5MB", 512: "512B", 64e9: "64GB"}
	for b, want := range strs {
		if b.String() != want {
			t.Errorf("%d.String() = %q, want %q", b, b.String(), want)
		}
	}
	if BitRate(400e9).String() != "400G" || Length(3).String() != "3m" {
		t.Errorf("String() forms")
	}
	if CPUSet([]int{0, 1, 2, 3, 8, 10, 11}).String() != "0-3,8,10-11" {
		t.Errorf("CPUSet string %q", CPUSet([]int{0, 1, 2, 3, 8, 10, 11}).String())
	}
}

func TestFunctions(t *testing.T) {
	ctx := &hcl.EvalContext{Functions: Functions()}
	cases := map[string]string{
		`cidrhost("10.0.0.0/24", 5)`:                      "10.0.0.5",
		`cidrhost("10.0.0.0/24", -1)`:                     "10.0.0.255",
		`cidrhost("2001:db8::/64", 17)`:                   "2001:db8::11",
		`cidrsubnet("10.0.0.0/16", 15, 3)`:                "10.0.0.6/31",
		`cidrsubnet("100.0.0.0/8", 23, 4099)`:             "100.0.32.6/31",
		`tostring(length(range(5000)))`:                   "5000",
		`"n${floor(7 / 2)}"`:                              "n3",
		`"n${ceil(7 / 2)}"`:                               "n4",
		`"n${floor(-1.5)}"`:                               "n-2",
		`"n${floor(10 / 3)}"`:                             "n3",
		`join(",", [for v in range(3, 0) : tostring(v)])`: "3,2,1",
	}
	for expr, want := range cases {
		e, d := hclsyntax.ParseExpression([]byte(expr), "t", hcl.InitialPos)
		if d.HasErrors() {
			t.Fatal(d)
		}
		v, d := e.Value(ctx)
		if d.HasErrors() {
			t.Errorf("%s: %v", expr, d)
			continue
		}
		if v.Type() != cty.String || v.AsString() != want {
			t.Errorf("%s = %#v, want %q", expr, v, want)
		}
	}
	for _, bad := range []string{`cidrhost("10.0.0.0/24", 256)`, `cidrsubnet("10.0.0.0/30", 1, 2)`, `range(0, 1, 0)`, `range(2000000)`, `cidrhost("nope", 1)`} {
		e, _ := hclsyntax.ParseExpression([]byte(bad), "t", hcl.InitialPos)
		if _, d := e.Value(ctx); !d.HasErrors() {
			t.Errorf("%s accepted", bad)
		}
	}
}
