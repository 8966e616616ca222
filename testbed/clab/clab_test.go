package clab_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/clab"
)

const examplesDir = "../../examples"

// clabSchema compiles containerlab's schema, or skips (fails under CI)
// when the shared directory is not there.
func clabSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	// containerlab's topology schema is kept outside the repo, in ../shared.
	f, err := os.Open(testutil.Shared(t, "schemas", "clab.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("clab.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("clab.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validateYAML reads a topology with yaml.v3 and validates its JSON form.
func validateYAML(sch *jsonschema.Schema, data []byte) error {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return err
	}
	js, err := json.Marshal(v) // yaml.v3 decodes string-keyed maps, JSON-compatible
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func load(t *testing.T, dir string) (*spec.Spec, *intent.Fabric, []spec.File) {
	t.Helper()
	files, diags := spec.ReadFiles(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	s, diags := spec.LoadFiles(files, spec.LoadOptions{Platforms: builtin.SpecPlatforms(), Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return s, intent.Compile(s), files
}

func exampleDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if files, err := spec.ReadFiles(filepath.Join(examplesDir, e.Name())); e.IsDir() && err == nil && len(files) > 0 {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	if len(out) < 4 {
		t.Fatalf("only %d examples found under %s", len(out), examplesDir)
	}
	return out
}

// expectedWarnings are the links each example cannot wire in containerlab,
// by the start of the warning (why: docs/testbed.md).
var expectedWarnings = map[string][]string{
	// leaf6 (OpenConfig, played by SR Linux) uses the emulator's port name Ethernet0.
	"testbed": {"1 link(s) left out of the lab, leaf6 (nokia_srlinux): SR Linux ports are"},
	// Breakout ports of the VM kinds; SONiC's 128 ports on a 32-port image.
	"ai-pod": {
		"128 link(s) left out of the lab, leaf2 (nvidia_cumulusvx): breakout lanes",
		"128 link(s) left out of the lab, leaf4 (cisco_n9kv): the Nexus 9000v has no breakout ports",
		"leaf1: the sonic-vs image has 32 data ports; 96 interface(s) are beyond them (eth33 ... eth128)",
	},
}

// expectedCounts are the examples' completeness lines (Lab.Counts).
var expectedCounts = map[string]string{
	"testbed": "9 of 10 links written, 1 left out",
	"ai-pod":  "256 of 512 links written, 256 left out, 96 port(s) beyond their images' data ports",
}

// checkNodes (issue 21): no node binds a path of the machine that may
// not exist there (Linux hosts used to bind /lib/modules for a modprobe;
// rdma link add loads the module), and every cisco_n9kv and arista_ceos
// node boots from its rendered configuration, a file of the lab.
func checkNodes(t *testing.T, lab *clab.Lab) {
	t.Helper()
	var topo struct {
		Topology struct {
			Nodes map[string]struct {
				Kind          string   `yaml:"kind"`
				StartupConfig string   `yaml:"startup-config"`
				Binds         []string `yaml:"binds"`
				Exec          []string `yaml:"exec"`
			} `yaml:"nodes"`
		} `yaml:"topology"`
	}
	if err := yaml.Unmarshal(lab.File(lab.TopologyFile()), &topo); err != nil {
		t.Fatal(err)
	}
	for name, n := range topo.Topology.Nodes {
		for _, b := range n.Binds {
			if src, _, _ := strings.Cut(b, ":"); filepath.IsAbs(src) {
				t.Errorf("node %s binds %s, a path of the deploying machine", name, b)
			}
		}
		for _, e := range n.Exec {
			if strings.HasPrefix(e, "modprobe") {
				t.Errorf("node %s runs %q (needs the machine's /lib/modules in the container)", name, e)
			}
		}
		switch n.Kind {
		case "cisco_n9kv", "arista_ceos":
			if n.StartupConfig == "" || lab.File(n.StartupConfig) == nil {
				t.Errorf("node %s (%s): startup-config %q is not a file of the lab", name, n.Kind, n.StartupConfig)
			}
		}
	}
}

// TestExamplesValidate generates the lab of every example and validates
// its topology against containerlab's schema; an InfiniBand example has
// no lab and says why. The generated spec directory loads, with every
// device pointed at its node.
func TestExamplesValidate(t *testing.T) {
	sch := clabSchema(t)
	for _, ex := range exampleDirs(t) {
		t.Run(ex, func(t *testing.T) {
			s, f, files := load(t, filepath.Join(examplesDir, ex))
			lab, err := clab.Generate(s, f, files, clab.Options{Renderers: builtin.Registry()})
			if s.Fabric.Transport == spec.InfiniBand {
				if err == nil || !strings.Contains(err.Error(), "InfiniBand") {
					t.Fatalf("InfiniBand example: want an error naming InfiniBand, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			topo := lab.File(lab.TopologyFile())
			if err := validateYAML(sch, topo); err != nil {
				t.Fatalf("%s does not validate against containerlab's schema: %v", lab.TopologyFile(), err)
			}
			checkTopology(t, lab, s, f)
			// The warnings are exactly the expected ones, and every node is there.
			if len(lab.Warnings) != len(expectedWarnings[ex]) {
				t.Errorf("warnings: %q, want %d", lab.Warnings, len(expectedWarnings[ex]))
			}
			for _, w := range lab.Warnings {
				if !hasPrefix(w, expectedWarnings[ex]) {
					t.Errorf("unexpected warning: %s", w)
				}
			}
			if got, want := len(lab.Nodes), len(f.Switches)+len(f.Hosts); got != want {
				t.Errorf("%d nodes, want %d (no device may be dropped)", got, want)
			}
			// Issue 21: the lab says how complete it is.
			if c, ok := expectedCounts[ex]; ok && lab.Counts() != c {
				t.Errorf("counts %q, want %q", lab.Counts(), c)
			}
			if lab.Incomplete() != (len(expectedWarnings[ex]) > 0) || lab.LinksWritten+lab.LinksLeftOut != len(s.Links) {
				t.Errorf("incomplete %v with warnings %q; %d+%d links of %d", lab.Incomplete(), lab.Warnings, lab.LinksWritten, lab.LinksLeftOut, len(s.Links))
			}
			checkNodes(t, lab)
			checkLabSpec(t, lab, f)
		})
	}
}

func hasPrefix(w string, pre []string) bool {
	for _, p := range pre {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// checkTopology checks what the schema cannot: every node has a static
// address in the management subnet and labels naming its device, every
// interface name fits Linux's 15 characters, every link has an MTU.
func checkTopology(t *testing.T, lab *clab.Lab, s *spec.Spec, f *intent.Fabric) {
	t.Helper()
	var topo struct {
		Mgmt struct {
			Subnet string `yaml:"ipv4-subnet"`
		} `yaml:"mgmt"`
		Topology struct {
			Nodes map[string]struct {
				Kind   string            `yaml:"kind"`
				Mgmt   string            `yaml:"mgmt-ipv4"`
				Labels map[string]string `yaml:"labels"`
			} `yaml:"nodes"`
			Links []struct {
				Endpoints []string `yaml:"endpoints"`
				MTU       int      `yaml:"mtu"`
			} `yaml:"links"`
		} `yaml:"topology"`
	}
	if err := yaml.Unmarshal(lab.File(lab.TopologyFile()), &topo); err != nil {
		t.Fatal(err)
	}
	if topo.Mgmt.Subnet != clab.DefaultMgmtSubnet {
		t.Errorf("mgmt subnet %q", topo.Mgmt.Subnet)
	}
	seen := map[string]bool{}
	for name, n := range topo.Topology.Nodes {
		if !strings.HasPrefix(n.Mgmt, "172.100.100.") || seen[n.Mgmt] {
			t.Errorf("node %s: management address %q", name, n.Mgmt)
		}
		seen[n.Mgmt] = true
		if n.Labels[clab.LabelFabric] != s.Fabric.Name || !strings.HasSuffix(n.Labels[clab.LabelDevice], "."+name) {
			t.Errorf("node %s: labels %v", name, n.Labels)
		}
	}
	for _, l := range topo.Topology.Links {
		if l.MTU < 576 || len(l.Endpoints) != 2 {
			t.Errorf("link %v: mtu %d", l.Endpoints, l.MTU)
		}
		for _, ep := range l.Endpoints {
			_, ifn, _ := strings.Cut(ep, ":")
			if len(ifn) > 15 || ifn == "" {
				t.Errorf("link endpoint %s: interface name longer than 15 characters", ep)
			}
		}
	}
}

// checkLabSpec writes the lab and loads DIR/spec: the spec's devices at
// their nodes' addresses with the lab's credentials.
func checkLabSpec(t *testing.T, lab *clab.Lab, f *intent.Fabric) {
	t.Helper()
	dir := t.TempDir()
	if err := lab.Write(dir); err != nil {
		t.Fatal(err)
	}
	s := testutil.Load(t, filepath.Join(dir, "spec"), spec.LoadOptions{Env: []string{}})
	lf := intent.Compile(s)
	for _, sw := range lf.Switches {
		want := lab.Nodes[sw.Addr()]
		if host, _, _ := strings.Cut(sw.Address, ":"); host != want || !strings.HasPrefix(sw.Credentials, "clab-") {
			t.Errorf("lab spec: %s at %q with %q, want %s", sw.Name, sw.Address, sw.Credentials, want)
		}
	}
	for _, h := range lf.Hosts {
		if h.Address != lab.Nodes[h.Addr()] || h.Connect.Kind != "ssh" || h.Connect.Netns != "" {
			t.Errorf("lab spec: host %s at %q (%+v)", h.Name, h.Address, h.Connect)
		}
		// The host image (ghcr.io/srl-labs/network-multitool) logs in
		// admin by password and gives it passwordless sudo: the agent runs
		// with sudo -n.
		if sh := s.Host(h.Name); !sh.Sudo || sh.Credentials != "clab-hosts" {
			t.Errorf("lab spec: host %s sudo %v credentials %q", h.Name, sh.Sudo, sh.Credentials)
		}
	}
	if c := s.CredentialsByName("clab-hosts"); len(lf.Hosts) > 0 && (c == nil || c.Username != "admin" || c.SSHAgent) {
		t.Errorf("lab spec: clab-hosts credentials %+v", c)
	}
	if st, err := os.Stat(filepath.Join(dir, "keyscan.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("keyscan.sh: %v", err)
	}
}

// TestGolden: the testbed example's lab, file by file.
func TestGolden(t *testing.T) {
	s, f, files := load(t, filepath.Join(examplesDir, "testbed"))
	lab, err := clab.Generate(s, f, files, clab.Options{Renderers: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{lab.TopologyFile(), "spec/fabctl-clab.fab.hcl", "spec/fabctl-clab_override.fab.hcl", "keyscan.sh",
		"configs/leaf2/eos.partial.cfg", "configs/leaf6/openconfig.partial.cli"} {
		got := lab.File(name)
		if got == nil {
			t.Fatalf("no %s in the lab", name)
		}
		testutil.Golden(t, filepath.Join("testdata", "testbed", filepath.FromSlash(name)+".golden"), got)
	}
	// Deterministic: a second generation is byte-identical.
	again, err := clab.Generate(s, f, files, clab.Options{Renderers: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	for i, fl := range lab.Files {
		if !bytes.Equal(fl.Data, again.Files[i].Data) {
			t.Errorf("%s differs between two generations", fl.Name)
		}
	}
}

func TestOptionsAndErrors(t *testing.T) {
	s, f, files := load(t, filepath.Join(examplesDir, "testbed"))
	// --strict: the link the testbed cannot wire is an error.
	if _, err := clab.Generate(s, f, files, clab.Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "leaf6:Ethernet0") {
		t.Fatalf("strict: %v", err)
	}
	// Another kind for OpenConfig and another image.
	lab, err := clab.Generate(s, f, files, clab.Options{Name: "lab1", MgmtSubnet: "10.9.0.0/24",
		Kinds: map[string]string{"openconfig": "arista_ceos"}, Images: map[string]string{"arista_ceos": "ceos:4.33.1F"}})
	if err != nil {
		t.Fatal(err)
	}
	topo := string(lab.File("lab1.clab.yml"))
	for _, want := range []string{"name: lab1\n", "ipv4-subnet: 10.9.0.0/24", "image: ceos:4.33.1F", "mgmt-ipv4: 10.9.0.16"} {
		if !strings.Contains(topo, want) {
			t.Errorf("topology lacks %q", want)
		}
	}
	for _, tt := range []struct {
		o    clab.Options
		want string
	}{
		{clab.Options{Name: "my-lab"}, `lab name "my-lab"`},
		{clab.Options{MgmtSubnet: "fe80::/64"}, "want an IPv4 prefix"},
		{clab.Options{MgmtSubnet: "10.0.0.0/29"}, "too few addresses"},
		{clab.Options{Kinds: map[string]string{"eos": "juniper_crpd"}}, `no containerlab kind for platform "eos"`},
	} {
		if _, err := clab.Generate(s, f, files, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: want error %q, got %v", tt.o, tt.want, err)
		}
	}
}

// TestSchemaRejects: the validation is real: an alias kind, a bad
// address or an unknown node attribute fail it.
func TestSchemaRejects(t *testing.T) {
	sch := clabSchema(t)
	s, f, files := load(t, filepath.Join(examplesDir, "testbed"))
	lab, err := clab.Generate(s, f, files, clab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	topo := string(lab.File(lab.TopologyFile()))
	for _, bad := range []struct{ from, to string }{
		{"kind: arista_ceos", "kind: ceos"},
		{"mgmt-ipv4: 172.100.100.11", "mgmt-ipv4: 172.100.100.311"},
		{"      mgmt-ipv4: 172.100.100.12\n", "      mgmt-ipv4: 172.100.100.12\n      flavour: vanilla\n"},
		{"type: ixr-d5", "type: ixr-d9"},
	} {
		mut := strings.Replace(topo, bad.from, bad.to, 1)
		if mut == topo {
			t.Fatalf("%q not in the topology", bad.from)
		}
		if err := validateYAML(sch, []byte(mut)); err == nil {
			t.Errorf("%q -> %q validates", bad.from, bad.to)
		}
	}
}
