package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

const base = `
fabric "t" {
  transport = "rocev2"
}
credentials "sw" {
  username = "admin"
  password = env("FAB_PW")
}
switch "leaf1" {
  platform    = "sonic"
  address     = "192.0.2.1"
  credentials = "sw"
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
`

// testPlatforms are the switch platforms the loader's tests pass (spec
// cannot import the drivers' descriptors; drivers/builtin's tests load
// every example with those).
var testPlatforms = []PlatformInfo{
	{Name: "sonic", Transport: "ssh"},
	{Name: "cumulus", Transport: "ssh"},
	{Name: "eos", Transport: "ssh"},
	{Name: "nxos", Transport: "ssh"},
	{Name: "srlinux", Title: "SR Linux", Transport: "gnmi", Limits: PlatformLimits{
		WatchdogDetect: Range[time.Duration]{Min: 10 * time.Millisecond, Max: 1500 * time.Millisecond, Setting: "detection-timer"}}},
	{Name: "openconfig", Transport: "gnmi", Limits: PlatformLimits{NoPFC: "no PFC leaves"}},
}

// TestLoadPlatforms: a switch's driver is its platform's transport, and
// the spec keeps what the loader was told of each platform; a spec with a
// switch does not load without a platform list.
func TestLoadPlatforms(t *testing.T) {
	src := "fabric \"x\" {}\nswitch \"s\" {\n  platform = \"srl\"\n  address = \"192.0.2.1\"\n}\n"
	srl := PlatformInfo{Name: "srl", Transport: "gnmi", Limits: PlatformLimits{NoPFC: "none"}}
	s, diags := load(t, src, LoadOptions{Platforms: []PlatformInfo{srl}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sw := s.Switch("s")
	if sw == nil || sw.Driver != "gnmi" {
		t.Fatalf("switch %+v: want driver gnmi", sw)
	}
	if got := s.PlatformOf(sw); !reflect.DeepEqual(got, srl) {
		t.Errorf("PlatformOf = %+v, want %+v", got, srl)
	}
	_, diags = load(t, src, LoadOptions{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "No switch platforms") {
		t.Errorf("loaded a switch without platforms: %v", diags)
	}
	if _, diags = load(t, "fabric \"x\" {}\n", LoadOptions{}); diags.HasErrors() {
		t.Errorf("a spec without switches needs no platforms: %v", diags)
	}
}

// TestSwitchDriverRemoved: the driver attribute is gone from the
// language (the platform picks the driver): a spec that still sets it
// gets an error at the attribute saying so.
func TestSwitchDriverRemoved(t *testing.T) {
	src := "fabric \"x\" {}\nswitch \"s\" {\n  platform = \"eos\"\n  address = \"192.0.2.1\"\n  driver = \"gnmi\"\n}\n"
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if !diags.HasErrors() {
		t.Fatal("a switch with a driver attribute loaded")
	}
	d := diags[0]
	if !strings.Contains(d.Detail, "driver is not an attribute: the platform picks the driver") || d.Subject == nil || d.Subject.Start.Line != 5 {
		t.Errorf("want the driver line (5) named, got %v at %v", d, d.Subject)
	}
	// The platforms and their transports are the ones the loader was
	// told of (the descriptors), in their order.
	if want := "(sonic, cumulus, eos and nxos over ssh, srlinux and openconfig over gnmi)"; !strings.Contains(d.Detail, want) {
		t.Errorf("want %q in %q", want, d.Detail)
	}
	ps := []PlatformInfo{{Name: "vendorx", Transport: "ssh"}, {Name: "ib", InfiniBand: true}, {Name: "vendory", Transport: "gnmi"}}
	src = "fabric \"x\" {}\nswitch \"s\" {\n  platform = \"vendorx\"\n  address = \"192.0.2.1\"\n  driver = \"ssh\"\n}\n"
	_, diags = load(t, src, LoadOptions{Platforms: ps})
	if want := "transport (vendorx over ssh, vendory over gnmi); remove the line"; len(diags) == 0 || !strings.Contains(diags[0].Detail, want) {
		t.Errorf("want %q, got %v", want, diags)
	}
}

// TestRange: a zero bound is no bound.
func TestRange(t *testing.T) {
	r := Range[int]{Min: 68, Max: 9216}
	for v, want := range map[int]bool{67: false, 68: true, 9216: true, 9217: false} {
		if r.Contains(v) != want {
			t.Errorf("%v contains %d = %v", r, v, !want)
		}
	}
	if (Range[int]{}).Bounded() || !(Range[int]{Max: 1}).Bounded() || !(Range[int]{Max: 1}).Contains(-5) {
		t.Error("a zero bound is no bound")
	}
}

func load(t *testing.T, src string, opts LoadOptions) (*Spec, hcl.Diagnostics) {
	t.Helper()
	return LoadFiles([]File{{Name: "t.fab.hcl", Data: []byte(src)}}, opts)
}

func TestLoadBase(t *testing.T) {
	s, diags := load(t, base, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s.Fabric.Name != "t" || s.Fabric.Transport != RoCEv2 || s.Fabric.MTU != 9000 || s.Fabric.RDMAMTU != 4096 ||
		s.Fabric.Trust != TrustDSCP || s.Fabric.CongestionControl != CCDCQCN {
		t.Errorf("fabric defaults: %+v", s.Fabric)
	}
	if w := s.Fabric.PFCWatchdog; !w.Enabled || w.Detect != 200*time.Millisecond || w.Restore != 400*time.Millisecond || w.Action != "drop" {
		t.Errorf("watchdog defaults: %+v", w)
	}
	if len(s.Classes) != 3 || s.Class("roce") == nil || s.Class("cnp") == nil || s.Class("default") == nil {
		t.Fatalf("default classes: %v", s.Classes)
	}
	if got := s.LosslessPriorities(); len(got) != 1 || got[0] != 3 {
		t.Errorf("lossless priorities %v", got)
	}
	m := s.DSCPMap()
	if m[26] != 3 || m[48] != 6 || m[0] != 0 || m[10] != 0 {
		t.Errorf("dscp map %v", m)
	}
	sw := s.Switch("leaf1")
	if sw.Driver != "ssh" || sw.Tier != 1 || sw.Forwarding != Routed || sw.Role != "leaf" {
		t.Errorf("switch defaults: %+v", sw)
	}
	p := sw.Port("Ethernet0")
	if p == nil || p.Speed != 100e9 {
		t.Fatalf("implicit port: %+v", p)
	}
	n := s.Host("h1").NIC("eth1")
	if n.Speed != 100e9 || len(n.Addresses) != 1 || !n.NUMA.Auto {
		t.Errorf("nic: %+v", n)
	}
	l := s.Links[0]
	if l.CableLength != 3 || l.A.Kind != KindSwitch || l.B.Kind != KindHost {
		t.Errorf("link: %+v", l)
	}
	if l.Address() != "link.leaf1:Ethernet0--h1:eth1" {
		t.Errorf("address %s", l.Address())
	}
	c := s.CredentialsByName("sw")
	if c.Password == nil || c.Password.Kind != "env" || c.Password.Name != "FAB_PW" || c.Password.String() != `env("FAB_PW")` {
		t.Errorf("secret ref: %+v", c.Password)
	}
	// Source ranges point at the attribute.
	r := sw.Src.Attr("platform")
	if r.Start.Line != 10 || r.Filename != "t.fab.hcl" {
		t.Errorf("platform range %v", r)
	}
	if sw.Src.Attr("mtu") != sw.Src.Block {
		t.Errorf("unset attribute must fall back to the block header")
	}
	if len(s.SourceHash) != 64 {
		t.Errorf("source hash %q", s.SourceHash)
	}
}

// TestLoadErrors checks each kind of bad input yields one error with the
// right summary, on the right line, with a useful detail.
func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(string) string
		summary string
		at      string // text on the line the error must point at
		detail  string
	}{
		{"unknown attribute", func(s string) string {
			return strings.Replace(s, `platform    = "sonic"`, `platfrom    = "sonic"`, 1)
		}, "Unsupported argument", `platfrom`, `Did you mean "platform"?`},
		{"bad enum", func(s string) string { return strings.Replace(s, `"sonic"`, `"sonik"`, 1) }, "Invalid value for platform", `sonik`, `Did you mean "sonic"?`},
		{"bad unit", func(s string) string { return strings.Replace(s, `"100G"`, `"100Q"`, 1) }, "Invalid speed", `100Q`, "unknown speed unit"},
		{"bare speed", func(s string) string { return strings.Replace(s, `"100G"`, `100`, 1) }, "Missing unit", `speed        = 100`, `"400G"`},
		{"bad length", func(s string) string { return strings.Replace(s, `"3m"`, `"3ft"`, 1) }, "Invalid length", `3ft`, "m, cm, mm or km"},
		{"wrong type", func(s string) string { return strings.Replace(s, `transport = "rocev2"`, `transport = ["rocev2"]`, 1) }, "Incorrect attribute value type", `["rocev2"]`, "must be string"},
		{"dangling switch", func(s string) string { return strings.Replace(s, `"leaf1:Ethernet0"`, `"leaf2:Ethernet0"`, 1) }, "Reference to undeclared device", `leaf2:Ethernet0`, `Did you mean "leaf1"?`},
		{"dangling nic", func(s string) string { return strings.Replace(s, `"h1:eth1"`, `"h1:eth2"`, 1) }, "Reference to undeclared nic", `h1:eth2`, `Did you mean "eth1"?`},
		{"dangling credentials", func(s string) string { return strings.Replace(s, `credentials = "sw"`, `credentials = "sx"`, 1) }, "Reference to undeclared credentials", `"sx"`, `Did you mean "sw"?`},
		{"duplicate device", func(s string) string { return strings.Replace(s, `host "h1"`, `host "leaf1"`, 1) + "" }, "Duplicate device name", `host "leaf1"`, "already declared"},
		{"literal secret", func(s string) string { return strings.Replace(s, `env("FAB_PW")`, `"hunter2"`, 1) }, "Secret must be a reference", `hunter2`, "env("},
		{"secret elsewhere", func(s string) string { return strings.Replace(s, `"192.0.2.1"`, `env("X")`, 1) }, "Secret reference not allowed here", `env("X")`, "only credentials blocks"},
		{"missing fabric", func(s string) string { return strings.Replace(s, "fabric \"t\" {\n  transport = \"rocev2\"\n}", "", 1) }, "Missing fabric block", ``, "needs one fabric block"},
		{"rdma mtu range", func(s string) string {
			return strings.Replace(s, `transport = "rocev2"`, "transport = \"rocev2\"\n  rdma_mtu = 8192", 1)
		}, "Value out of range", `8192`, "256..4096"},
		{"dscp range", func(s string) string {
			return s + "class \"x\" {\n  priority = 3\n  dscp = [\"24-70\"]\n}\n"
		}, "Invalid value for dscp", `24-70`, "outside 0..63"},
		{"priority range", func(s string) string {
			return s + "class \"x\" {\n  priority = 8\n}\n"
		}, "Value out of range", `priority = 8`, "0..7"},
		{"endpoint used twice", func(s string) string {
			return s + "host \"h2\" {\n  address = \"192.0.2.11\"\n  nic \"eth1\" {}\n}\nlink {\n  endpoints = [\"leaf1:Ethernet0\", \"h2:eth1\"]\n  speed = \"100G\"\n}\n"
		}, "Endpoint used twice", `"h2:eth1"`, "already an endpoint"},
		{"no speed", func(s string) string { return strings.Replace(s, `speed        = "100G"`, ``, 1) }, "Link speed unknown", `endpoints`, "set speed"},
		{"syntax", func(s string) string { return strings.Replace(s, `fabric "t" {`, `fabric "t" {{`, 1) }, "", `{{`, ""},
		{"lint ignore without reason", func(s string) string {
			return strings.Replace(s, `platform    = "sonic"`, "platform    = \"sonic\"\n  lint_ignore = { \"QOS-5\" = \"\" }", 1)
		}, "Lint ignore needs a reason", `lint_ignore`, "Say why"},
		{"unknown block", func(s string) string { return s + "swtich \"x\" {}\n" }, "Unsupported block type", `swtich`, `Did you mean "switch"?`},
		{"connect", func(s string) string { return strings.Replace(s, `address = "192.0.2.10"`, `connect = "telnet"`, 1) }, "Invalid value for connect", `telnet`, "netns:"},
		{"name without for_each", func(s string) string { return strings.Replace(s, `address     = "192.0.2.1"`, `name = "x"`, 1) }, "Unexpected name attribute", `name = "x"`, "for_each"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.edit(base)
			if src == base {
				t.Fatal("edit did not change the spec")
			}
			_, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
			if !diags.HasErrors() {
				t.Fatalf("no error")
			}
			var hit *hcl.Diagnostic
			for _, d := range diags {
				if d.Severity == hcl.DiagError && (tc.summary == "" || d.Summary == tc.summary) {
					hit = d
					break
				}
			}
			if hit == nil {
				t.Fatalf("no %q error in %v", tc.summary, diags)
			}
			line := 1
			if tc.at != "" {
				i := strings.Index(src, tc.at)
				if i < 0 {
					t.Fatalf("%q not in the spec", tc.at)
				}
				line = strings.Count(src[:i], "\n") + 1
			}
			if hit.Subject == nil || hit.Subject.Start.Line != line {
				t.Errorf("subject %v, want line %d (%s)", hit.Subject, line, hit.Detail)
			}
			if !strings.Contains(hit.Detail, tc.detail) {
				t.Errorf("detail %q lacks %q", hit.Detail, tc.detail)
			}
		})
	}
}

func TestVariables(t *testing.T) {
	src := `
variable "mtu" {
  type    = number
  default = 9000
  validation {
    condition     = var.mtu >= 1500
    error_message = "mtu must be at least 1500"
  }
}
variable "name" {
  type = string
}
locals {
  double = local.half * 2
  half   = var.mtu / 2
}
fabric "x" {
  transport = "rocev2"
  mtu       = local.double
}
`
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `Variable "name" has no default`) {
		t.Fatalf("want missing variable error, got %v", diags)
	}
	dir := t.TempDir()
	vf := filepath.Join(dir, "v.fabvars")
	if err := os.WriteFile(vf, []byte("mtu = 4200\nname = \"file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Precedence: default < env < var-file < -var.
	s, diags := load(t, src, LoadOptions{Platforms: testPlatforms, Env: []string{"FAB_VAR_name=env", "FAB_VAR_mtu=2000"}, VarFiles: []string{vf}, Vars: []string{"mtu=5000"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s.Fabric.MTU != 5000 {
		t.Errorf("mtu %d, want 5000 from -var", s.Fabric.MTU)
	}
	s, diags = load(t, src, LoadOptions{Platforms: testPlatforms, Env: []string{"FAB_VAR_name=env", "FAB_VAR_mtu=2000"}})
	if diags.HasErrors() || s.Fabric.MTU != 2000 {
		t.Errorf("env: mtu %v %v", s.Fabric, diags)
	}
	_, diags = load(t, src, LoadOptions{Platforms: testPlatforms, Vars: []string{"name=x", "mtu=1000"}})
	if !strings.Contains(diags.Error(), "mtu must be at least 1500") {
		t.Errorf("validation: %v", diags)
	}
	_, diags = load(t, src, LoadOptions{Platforms: testPlatforms, Vars: []string{"name=x", "mtuu=1"}})
	if !strings.Contains(diags.Error(), `Did you mean "mtu"?`) {
		t.Errorf("undeclared var suggestion: %v", diags)
	}
	_, diags = load(t, src, LoadOptions{Platforms: testPlatforms, Vars: []string{"name=x", "mtu=abc"}})
	if !diags.HasErrors() {
		t.Errorf("non-number -var accepted")
	}
	cyc := "locals {\n  a = local.b\n  b = local.a\n}\nfabric \"x\" {}\n"
	_, diags = load(t, cyc, LoadOptions{Platforms: testPlatforms})
	if !strings.Contains(diags.Error(), "Cycle in local values") {
		t.Errorf("cycle: %v", diags)
	}
}

func TestForEachAndDynamic(t *testing.T) {
	src := `
fabric "x" {}
locals {
  hosts = { for i in range(3) : format("gpu%02d", i + 1) => i }
}
switch "leaf" {
  for_each = toset(["1", "2"])
  name     = "leaf${each.key}"
  platform = "eos"
  address  = "192.0.2.${each.key}"
  dynamic "port" {
    for_each = range(4)
    labels   = ["Ethernet${port.value + 1}"]
    content {
      speed = "400G"
    }
  }
}
host "gpu" {
  for_each = local.hosts
  name     = each.key
  address  = cidrhost("10.1.0.0/24", each.value + 10)
  dynamic "nic" {
    for_each = range(2)
    labels   = ["rail${nic.value}"]
    content {
      device    = "mlx5_${nic.value}"
      addresses = [cidrsubnet("172.16.0.0/16", 15, each.value * 2 + nic.value)]
    }
  }
}
link {
  for_each  = local.hosts
  endpoints = ["leaf1:Ethernet${each.value + 1}", "${each.key}:rail0"]
}
host "plain" {
  for_each = ["a", "b"]
  address  = "192.0.2.200"
  nic "x" {}
}
`
	s, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(s.Switches) != 2 || s.Switch("leaf2") == nil || len(s.Switch("leaf2").Ports) != 4 {
		t.Fatalf("switches: %v", s.Switches)
	}
	h := s.Host("gpu03")
	if h == nil || h.Address != "10.1.0.12" || len(h.NICs) != 2 || h.NIC("rail1").Addresses[0].String() != "172.16.0.10/31" {
		t.Fatalf("gpu03: %+v", h)
	}
	if s.Host("plain-0") == nil || s.Host("plain-1") == nil {
		t.Errorf("list for_each names: %v", s.Hosts)
	}
	if len(s.Links) != 3 || s.Links[2].Speed != 400e9 {
		t.Errorf("links %v", s.Links)
	}
	// A port not declared on a switch that declares ports is a typo.
	_, diags = load(t, src+"link {\n  endpoints = [\"leaf1:Ethernet9\", \"plain-0:x\"]\n}\n", LoadOptions{Platforms: testPlatforms})
	if !strings.Contains(diags.Error(), "Reference to undeclared port") {
		t.Errorf("undeclared port: %v", diags)
	}
}

func TestMultiFileAndJSON(t *testing.T) {
	files := []File{
		{Name: "a.fab.hcl", Data: []byte("fabric \"x\" {\n  transport = \"iwarp\"\n}\n")},
		{Name: "b.fab.hcl.json", Data: []byte(`{"switch": {"s1": {"platform": "nxos", "address": "192.0.2.1"}}}`)},
	}
	s, diags := LoadFiles(files, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s.Switch("s1") == nil || s.Fabric.Transport != IWARP || s.Fabric.CongestionControl != CCECNOnly {
		t.Errorf("merged spec: %+v %+v", s.Switches, s.Fabric)
	}
	if len(s.Lossless()) != 0 {
		t.Errorf("iwarp default classes must be lossy")
	}
	files = append(files, File{Name: "c.fab.hcl", Data: []byte("fabric \"y\" {}\n")})
	_, diags = LoadFiles(files, LoadOptions{Platforms: testPlatforms})
	if !strings.Contains(diags.Error(), "Duplicate fabric block") {
		t.Errorf("duplicate fabric across files: %v", diags)
	}
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	if _, d := ReadFiles(dir); !d.HasErrors() || !strings.Contains(d.Error(), "no *.fab.hcl") {
		t.Errorf("empty dir: %v", d)
	}
	os.WriteFile(filepath.Join(dir, "b.fab.hcl"), []byte("fabric \"b\" {}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "a.fab.hcl"), []byte("\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.hcl"), []byte("garbage {"), 0o600)
	files, d := ReadFiles(dir)
	if d.HasErrors() || len(files) != 2 || filepath.Base(files[0].Name) != "a.fab.hcl" {
		t.Errorf("files %v %v", files, d)
	}
	if _, d := ReadFiles(filepath.Join(dir, "missing")); !d.HasErrors() {
		t.Errorf("missing path accepted")
	}
}

func TestSecretNeverInDiagnostics(t *testing.T) {
	t.Setenv("FAB_PW", "s3cr3t-value")
	src := strings.Replace(base, `address     = "192.0.2.1"`, `address     = format("%s", env("FAB_PW"))`, 1)
	_, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if !diags.HasErrors() {
		t.Fatal("secret used as address accepted")
	}
	if strings.Contains(diags.Error(), "s3cr3t") {
		t.Errorf("secret leaked: %v", diags)
	}
}

func TestLoaderEdges(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"for_each on fabric", "fabric \"x\" {\n  for_each = [1]\n}\n", "for_each not allowed here"},
		{"pkey zero", "fabric \"x\" { transport = \"infiniband\" }\ninfiniband {\n  partition \"p\" { pkey = \"0x8000\" }\n}\n", "base P_Key 0"},
	}
	for _, c := range cases {
		_, diags := load(t, c.src, LoadOptions{Platforms: testPlatforms})
		if !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, diags, c.want)
		}
	}
	// dynamic blocks inside infiniband expand.
	s, diags := load(t, `fabric "x" { transport = "infiniband" }
infiniband {
  dynamic "partition" {
    for_each = { a = "0x8001", b = "0x8002" }
    labels   = [partition.key]
    content {
      pkey = partition.value
    }
  }
}
class "c" {
  sl = 1
}
switch "s" {
  platform  = "nxos"
  address   = "a"
  acl "x" {
    dst_ports = ["22,4791", "5000-5010"]
  }
  buffer {
    total = null
  }
}
`, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(s.InfiniBand.Partitions) != 2 || s.InfiniBand.Partitions[1].PKey != 2 {
		t.Errorf("partitions %+v", s.InfiniBand.Partitions)
	}
	acl := s.Switch("s").ACLs[0]
	if len(acl.DstPorts) != 3 || acl.DstPorts[0] != (PortRange{22, 22}) || acl.DstPorts[1] != (PortRange{4791, 4791}) {
		t.Errorf("acl ports %+v", acl.DstPorts)
	}
	if s.Switch("s").Buffer.Src.Has("total") {
		t.Errorf("null attribute recorded as set")
	}
	if s.Fabric.Transport != InfiniBand || s.Class("c").Priority != 0 {
		t.Errorf("ib class priority")
	}
	s, diags = load(t, "fabric \"x\" { transport = \"rocev1\" }\n", LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() || s.Fabric.CongestionControl != CCPFCOnly || s.Class("cnp") != nil || s.Class("roce").ECN != nil {
		t.Errorf("rocev1 defaults: %+v %v", s.Fabric, s.Classes)
	}
}

// First run, defect 10: a speed without a unit is one "Missing unit" error
// per attribute, with no follow-on "Link speed unknown" about the same link
// (the user did set a speed), on the link or on the NIC at its end.
func TestBareSpeedOneError(t *testing.T) {
	for name, src := range map[string]string{
		"link": strings.Replace(base, `"100G"`, `100`, 1),
		"nic": strings.Replace(strings.Replace(base, `speed        = "100G"`, ``, 1),
			`nic "eth1" {`, "nic \"eth1\" {\n    speed = 100", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if src == base {
				t.Fatal("edit did not change the spec")
			}
			_, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
			var got []string
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					got = append(got, d.Summary)
				}
			}
			if len(got) != 1 || got[0] != "Missing unit" {
				t.Errorf("errors %q, want one Missing unit", got)
			}
		})
	}
}

// TestSwitchModel: a switch's model is kept as written and must be a
// model name (it is shown in plans and errors).
func TestSwitchModel(t *testing.T) {
	src := "fabric \"x\" {}\nswitch \"s\" {\n  platform = \"eos\"\n  model = %q\n  address = \"192.0.2.1\"\n}\n"
	s, diags := load(t, fmt.Sprintf(src, "DCS-7060X6-64PE-F"), LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() || s.Switches[0].Model != "DCS-7060X6-64PE-F" {
		t.Fatalf("%v %+v", diags, s.Switches)
	}
	_, diags = load(t, fmt.Sprintf(src, "DCS 7060;reload"), LoadOptions{Platforms: testPlatforms})
	if !diags.HasErrors() || !strings.Contains(diags[0].Detail, `model "DCS 7060;reload": a model name is`) || diags[0].Subject == nil || diags[0].Subject.Start.Line != 4 {
		t.Fatalf("invalid model accepted: %v", diags)
	}
}
