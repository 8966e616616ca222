package opensm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// Import of the subnet manager: the opensm driver reads the files the
// subnet manager runs (over SSH, or on this machine with sm_connect =
// "local"), import writes the infiniband block from them, and plan of
// the written spec against the same files shows exactly what import
// listed as left out; a membership changed in the written spec plans as
// that one change.

// importDirSM imports the inventory in dir, reading the subnet manager
// through reg, and returns the result.
func importDirSM(t *testing.T, dir string, reg *drivers.Registry) *importer.Result {
	t.Helper()
	files, diags := spec.ReadFiles(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}})
	obs := map[string]*importer.Observed{}
	for _, o := range plan.Observe(context.Background(), intent.Compile(s), reg, plan.Options{Targets: []string{"sm.*"}, Credentials: s.CredentialsByName}) {
		obs[o.Address] = &importer.Observed{Live: o.Live, Err: o.Err, Fields: o.Fields, Unexpressible: o.Unexpressible, Read: o.Read}
	}
	res, err := importer.Import(files, obs, importer.Options{
		Name: filepath.Join(dir, "imported.fab.hcl"),
		Load: func(fs []spec.File) (*spec.Spec, hcl.Diagnostics) {
			return spec.LoadFiles(fs, spec.LoadOptions{Env: []string{}, Platforms: testutil.Platforms()})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.SubnetManager == nil {
		t.Fatalf("import did not read the subnet manager: %+v", res.Report)
	}
	return res
}

// planSMDir plans the spec in dir on its subnet manager and returns its
// changes as "action path".
func planSMDir(t *testing.T, dir string, reg *drivers.Registry) []string {
	t.Helper()
	var out []string
	for _, c := range planChanges(t, dir, reg) {
		out = append(out, string(c.Action)+" "+c.Path)
	}
	return out
}

// planPaths are the paths of planSMDir's changes, sorted.
func planPaths(t *testing.T, dir string, reg *drivers.Registry) []string {
	t.Helper()
	var out []string
	for _, c := range planChanges(t, dir, reg) {
		out = append(out, c.Path)
	}
	slices.Sort(out)
	return out
}

func planChanges(t *testing.T, dir string, reg *drivers.Registry) []intent.AttrChange {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}})
	p := plan.Make(context.Background(), s, intent.Compile(s), reg, plan.Options{Targets: []string{"sm.*"}, Credentials: s.CredentialsByName})
	if len(p.Devices) != 1 || p.Devices[0].Error != "" {
		t.Fatalf("plan of %s: %+v", dir, p.Devices)
	}
	return p.Devices[0].Changes
}

// writeSpec puts src in dir as the only spec file.
func writeSpec(t *testing.T, dir, src string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".fab.hcl") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "imported.fab.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// leftOutPaths are the report's left-out paths of the subnet manager.
func leftOutPaths(rep importer.Report) []string {
	var out []string
	for _, l := range rep.LeftOut {
		if strings.HasPrefix(l.Device, intent.KindSM+".") {
			out = append(out, l.Path)
		}
	}
	slices.Sort(out)
	return out
}

var ibQoSLines = regexp.MustCompile(`(?m)^  (sl2vl|max_vls|vl_arb_high|vl_arb_low) .*\n`)

// stripInfiniband returns the spec without the infiniband block's
// partitions and QoS attributes: the inventory.
func stripInfiniband(t *testing.T, src string) string {
	t.Helper()
	i := strings.Index(src, "\ninfiniband {")
	j := strings.Index(src[i:], "\n  partition ")
	if i < 0 || j < 0 {
		t.Fatal("no infiniband block with partitions")
	}
	head := ibQoSLines.ReplaceAllString(src[:i+j], "")
	return head + "\n}\n" + src[strings.LastIndex(src, "\n}\n")+3:]
}

// changeMembership moves member from the written partition's members to
// its limited_members.
func changeMembership(t *testing.T, src, partition, member string) string {
	t.Helper()
	f, diags := hclwrite.ParseConfig([]byte(src), "imported.fab.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	list := func(b *hclwrite.Body, attr string) []string {
		var out []string
		if a := b.GetAttribute(attr); a != nil {
			for _, m := range quoted.FindAllStringSubmatch(string(a.Expr().BuildTokens(nil).Bytes()), -1) {
				out = append(out, m[1])
			}
		}
		return out
	}
	strs := func(v []string) cty.Value {
		el := make([]cty.Value, len(v))
		for i, s := range v {
			el[i] = cty.StringVal(s)
		}
		return cty.TupleVal(el)
	}
	for _, ib := range f.Body().Blocks() {
		for _, p := range ib.Body().Blocks() {
			if ib.Type() != "infiniband" || p.Type() != "partition" || p.Labels()[0] != partition {
				continue
			}
			full := list(p.Body(), "members")
			i := slices.Index(full, member)
			if i < 0 {
				t.Fatalf("partition %q has no full member %q:\n%s", partition, member, src)
			}
			p.Body().SetAttributeValue("members", strs(slices.Delete(full, i, i+1)))
			p.Body().SetAttributeValue("limited_members", strs(append(list(p.Body(), "limited_members"), member)))
			return string(hclwrite.Format(f.Bytes()))
		}
	}
	t.Fatalf("no partition %q:\n%s", partition, src)
	return ""
}

// hasText says whether src has want, spaces aside (fmt aligns the = of
// a block's attributes).
func hasText(src, want string) bool {
	return strings.Contains(strings.Join(strings.Fields(src), " "), strings.Join(strings.Fields(want), " "))
}

var quoted = regexp.MustCompile(`"([^"]*)"`)

// TestImportExampleSubnetManager: the subnet manager of each InfiniBand
// example runs the files fabctl writes from the example (the opensm
// driver reads them with sm_connect = "local"); import from the example
// without its partitions and QoS writes them back, plan of the result
// is empty on the subnet manager, and compute's cn01 made a limited
// member plans as exactly that change.
func TestImportExampleSubnetManager(t *testing.T) {
	for _, tc := range []struct {
		example string
		// rewrite points the example's subnet manager at the test's
		// files: opensm.conf, the pid file (none), diags_dir (no diags:
		// the fabric is not read).
		rewrite func(t *testing.T, src, conf, pid, diags string) string
		want    []string // in the written spec
		parts   int      // partitions the report lists
	}{
		{
			example: "ib-testbed",
			rewrite: func(t *testing.T, src, conf, pid, diags string) string {
				for k, v := range map[string]string{
					`opensm_conf     = ".fabctl/testbed/ibsim/opensm/opensm.conf"`: fmt.Sprintf("opensm_conf     = %q", conf),
					`opensm_pid_file = ".fabctl/testbed/ibsim/opensm.pid"`:         fmt.Sprintf("opensm_pid_file = %q", pid),
					`diags_dir = ".fabctl/testbed/ibsim/bin"`:                      fmt.Sprintf("diags_dir = %q", diags),
				} {
					if !strings.Contains(src, k) {
						t.Fatalf("examples/ib-testbed no longer says %s", k)
					}
					src = strings.Replace(src, k, v, 1)
				}
				return src
			},
			want: []string{`partition "compute"`, `partition "storage"`, "sl2vl", "max_vls", "vl_arb_high", "vl_arb_low",
				`"cn03:ib0"`, `limited_members = ["cn01:ib0", "cn02:ib0"]`, `rate  = "200G"`, "sl    = 2"},
			parts: 3,
		},
		{
			// The example's subnet manager is reached over SSH with
			// opensm's default paths; here it is this machine's files.
			example: "infiniband",
			rewrite: func(t *testing.T, src, conf, pid, diags string) string {
				const k = `subnet_manager = "sm01"`
				if !strings.Contains(src, k) {
					t.Fatalf("examples/infiniband no longer says %s", k)
				}
				return strings.Replace(src, k, fmt.Sprintf("%s\n  sm_connect = \"local\"\n  opensm_conf = %q\n  opensm_pid_file = %q\n  diags_dir = %q", k, conf, pid, diags), 1)
			},
			// opensm uses a P_Key's low 15 bits (doc/partition-config.txt):
			// the example's 0x8002 runs, and is written back, as 0x0002.
			want: []string{`partition "compute"`, `partition "storage"`, "sl2vl", "vl_arb_high", "vl_arb_low",
				`"cn16:ib0"`, `"sm01:ib0"`, `"st04:ib1"`, `pkey            = "0x0002"`, `rate            = "400G"`},
			parts: 3,
		},
	} {
		t.Run(tc.example, func(t *testing.T) {
			importExampleSubnetManager(t, tc.example, tc.rewrite, tc.want, tc.parts)
		})
	}
}

func importExampleSubnetManager(t *testing.T, example string, rewrite func(t *testing.T, src, conf, pid, diags string) string, want []string, parts int) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", example, example+".fab.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	// The subnet manager's opensm.conf names its files; no opensm runs
	// (no pid file), and diags_dir has no diags: the fabric is not read.
	conf := filepath.Join(etc, "opensm.conf")
	confText := fmt.Sprintf("partition_config_file %s\nqos_policy_file %s\nqos FALSE\n", filepath.Join(etc, "partitions.conf"), filepath.Join(etc, "qos-policy.conf"))
	if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
		t.Fatal(err)
	}
	src := rewrite(t, string(b), conf, filepath.Join(dir, "opensm.pid"), etc)
	reg := drivers.NewRegistry()
	if err := reg.Register(Name, New); err != nil {
		t.Fatal(err)
	}

	// The files the example's subnet manager runs: what apply writes
	// (written here, not applied: apply would signal opensm).
	writeSpec(t, dir, src)
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}})
	sm := intent.Compile(s).SubnetManagers[0]
	live := &liveFiles{conf: remoteFile{Path: conf, Data: string(confText), Present: true},
		parts: remoteFile{Path: filepath.Join(etc, "partitions.conf")}, qos: remoteFile{Path: filepath.Join(etc, "qos-policy.conf")}}
	files, err := desiredFiles(sm, live, map[string]bool{filePartitions: true, fileQoSPolicy: true, fileOpenSM: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(f.Path, []byte(f.Data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := planSMDir(t, dir, reg); len(got) != 0 {
		t.Fatalf("the example's files do not plan clean: %v", got)
	}

	// Import from the example without its partitions and QoS.
	writeSpec(t, dir, stripInfiniband(t, src))
	res := importDirSM(t, dir, reg)
	if lo := leftOutPaths(res.Report); len(lo) != 0 {
		t.Errorf("left out from the example's own files: %+v", res.Report.LeftOut)
	}
	out := string(res.HCL)
	for _, w := range want {
		if !hasText(out, w) {
			t.Errorf("the written spec lacks %s:\n%s", w, out)
		}
	}
	if strings.Contains(out, `partition "Default"`) {
		t.Errorf("the default partition fabctl writes itself was written:\n%s", out)
	}
	if rep := res.Report.SubnetManager; !rep.QoS || len(rep.Partitions) != parts {
		t.Errorf("report: %+v", rep)
	}

	writeSpec(t, dir, out)
	if got := planSMDir(t, dir, reg); len(got) != 0 {
		t.Fatalf("plan of the imported spec is not empty: %v\n%s", got, out)
	}
	writeSpec(t, dir, changeMembership(t, out, "compute", "cn01:ib0"))
	if got := planSMDir(t, dir, reg); len(got) != 1 || !strings.HasPrefix(got[0], "~ partitions/compute/member/0x") {
		t.Fatalf("cn01 made a limited member of compute: plan %v", got)
	}
}

// vendorHosts name six of the ShareIO ports of opensm's example
// partitions.conf; the others, and NewPartition's, stay GUIDs the
// inventory cannot name.
const vendorHosts = `
host "io1" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0000000000123451"
  }
  nic "ib1" {
    device = "mlx5_1"
    guid   = "0x0000000000123452"
  }
}
host "io2" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0000000000123453"
  }
  nic "ib1" {
    device = "mlx5_1"
    guid   = "0x0000000000123455"
  }
}
host "io3" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0000000000123459"
  }
  nic "ib1" {
    device = "mlx5_1"
    guid   = "0x000000000012345c"
  }
}
`

// TestImportVendorSubnetManager: opensm's own example partitions.conf,
// full QoS policy and QoS options (testdata/vendor/opensm, cited there)
// booted on the SSH subnet manager. Import writes what the spec can say
// (ShareIO with the ports the inventory names, YetAnotherOne, the
// Default rule, the generic QoS options), lists the rest path by path
// with its reason, and plan of the written spec shows exactly that list;
// one ShareIO member made limited adds exactly that change.
func TestImportVendorSubnetManager(t *testing.T) {
	r := newSMRig(t)
	vendor := filepath.Join("..", "..", "..", "testdata", "vendor", "opensm")
	for file, to := range map[string]string{"partitions.conf": r.opts.PartitionsFile, "qos-policy.conf": r.opts.QoSPolicyFile, "opensm.conf": r.opts.ConfFile} {
		b, err := os.ReadFile(filepath.Join(vendor, file))
		if err != nil {
			t.Fatal(err)
		}
		r.write(to, string(b))
	}
	dir := t.TempDir()
	inv, _ := r.spec(vendorHosts + "infiniband {\n  subnet_manager = \"sm01\"\n}\n")
	var src []byte
	for name := range inv.Files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		src = b
	}
	writeSpec(t, dir, string(src))
	reg := r.registry()
	res := importDirSM(t, dir, reg)
	out := string(res.HCL)
	for _, want := range []string{
		`partition "ShareIO"`, `members         = ["io1:ib0", "io1:ib1", "io2:ib1", "io3:ib0"]`, `limited_members = ["io2:ib0", "io3:ib1"]`,
		`partition "YetAnotherOne"`, `members         = ["SELF"]`, `limited_members = ["ALL"]`, `mtu = 0`,
		`partition "Default"`, "sl2vl", `max_vls`, `vl_high_limit = 0`, `"14" = 4`,
	} {
		if !hasText(out, want) {
			t.Errorf("the written spec lacks %s:\n%s", want, out)
		}
	}
	// NewPartition and the GUID no NIC has are only named as unmanaged
	// keys, never written as a partition or a member.
	if strings.Contains(out, `partition "NewPartition"`) || regexp.MustCompile(`(?m)^\s*(limited_)?members\s*=.*0x`).MatchString(out) {
		t.Errorf("the written spec invents a P_Key or names a GUID the inventory does not:\n%s", out)
	}
	reasons := map[string]string{}
	for _, l := range res.Report.LeftOut {
		reasons[l.Path] = l.Reason
	}
	for path, why := range map[string]string{
		"partitions/NewPartition/pkey":                 "no P_Key",
		"partitions/ShareIO/member/0x0000000000123456": "no NIC of the inventory has port GUID 0x0000000000123456",
		"partitions/Default/mgid/ff12:401b::16":        "multicast group",
		"qos-policy/section/port-groups":               "port-groups section",
		"qos-policy/level/WholeSet/sl":                 "a QoS level",
		"qos-policy/match/1":                           "QoS match rule",
		"opensm/qos_ca_sl2vl":                          "per-port-type",
	} {
		if !strings.Contains(reasons[path], why) {
			t.Errorf("left out %s: reason %q, want it to say %q", path, reasons[path], why)
		}
	}

	// Every left-out setting is in the infiniband block's unmanaged map,
	// so plan of the imported spec is empty and lists them as unmanaged.
	for _, l := range res.Report.LeftOut {
		if strings.HasPrefix(l.Device, intent.KindSM+".") && !l.Unmanaged {
			t.Errorf("left out %s is not written unmanaged: %s", l.Path, l.Reason)
		}
	}
	if !strings.Contains(out, `"opensm/qos_ca_sl2vl"`) || !strings.Contains(out, `"qos-policy/section/port-groups"`) {
		t.Errorf("the infiniband block's unmanaged map lacks the per-CA SL2VL or the port-groups section:\n%s", out)
	}
	writeSpec(t, dir, out)
	if got := planPaths(t, dir, reg); len(got) > 0 {
		t.Fatalf("plan of the imported spec is not empty:\n%s", strings.Join(got, "\n"))
	}
	listed := unmanagedPaths(t, dir, reg)
	if want := leftOutPaths(res.Report); strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Fatalf("plan's unmanaged list is not what import left out:\nplan:\n%s\nleft out:\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"))
	}
	writeSpec(t, dir, changeMembership(t, out, "ShareIO", "io3:ib0"))
	if changed := planSMDir(t, dir, reg); strings.Join(changed, ", ") != "~ partitions/ShareIO/member/0x0000000000123459" {
		t.Fatalf("io3:ib0 made a limited member of ShareIO: plan %v", changed)
	}
}

// unmanagedPaths are the paths the subnet manager's plan lists as
// unmanaged, sorted.
func unmanagedPaths(t *testing.T, dir string, reg *drivers.Registry) []string {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}})
	p := plan.Make(context.Background(), s, intent.Compile(s), reg, plan.Options{Targets: []string{"sm.*"}, Credentials: s.CredentialsByName})
	if len(p.Devices) != 1 || p.Devices[0].Error != "" {
		t.Fatalf("plan of %s: %+v", dir, p.Devices)
	}
	var out []string
	for _, u := range p.Devices[0].Unmanaged {
		out = append(out, u.Path)
	}
	slices.Sort(out)
	return out
}

// fuzzInventory names two ports of opensm's example partitions.conf.
const fuzzInventory = `fabric "f" {
  transport = "infiniband"
  rdma_mtu  = 2048
}
class "default" {
  role     = "other"
  priority = 0
  default  = true
}
host "sm01" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0000000000123451"
  }
}
host "cn01" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0000000000123452"
  }
}
infiniband {
  subnet_manager = "sm01"
}
`

// FuzzImportFiles: whatever partitions.conf, QoS policy and opensm.conf
// the subnet manager has, import (from what the driver's parsers read of
// them) writes a spec that loads, and the spec flattens to the files'
// state except what import lists, left out or untouched.
func FuzzImportFiles(f *testing.F) {
	vendor := filepath.Join("..", "..", "..", "testdata", "vendor", "opensm")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(vendor, name))
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	f.Add(read("partitions.conf"), read("qos-policy.conf"), read("opensm.conf"))
	f.Add("Default=0x7fff,ipoib,mtu=4:ALL=full;\nc=0x8001,sl=3,rate=21:0x123451=full,0x123452;", "", "qos TRUE\nqos_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7\n")
	f.Add("x=0x0:0x1=both,ALL_CAS;\n=0x8002:SELF;", "qos-levels\nqos-level\nname: DEFAULT\nsl: 99\nend-qos-level\nend-qos-levels\n", "qos TRUE\nqos_vlarb_low 0:1,0:2\nqos_max_vls 3\n")
	load := func(fs []spec.File) (*spec.Spec, hcl.Diagnostics) {
		return spec.LoadFiles(fs, spec.LoadOptions{Env: []string{}, Platforms: testutil.Platforms()})
	}
	f.Fuzz(func(t *testing.T, parts, qos, conf string) {
		live := parsePartitions(parts)
		for k, v := range parseQoSPolicy(qos) {
			live[k] = v
		}
		all := managedOptions(intent.State{"opensm/qos": "", "opensm/qos_sl2vl": "", "opensm/qos_vlarb_high": "", "opensm/qos_vlarb_low": "", "opensm/qos_max_vls": "", "opensm/qos_high_limit": ""})
		for k, v := range openSMState(parseOpenSMConf(conf), all) {
			live[k] = v
		}
		res, err := importer.Import([]spec.File{{Name: "inv.fab.hcl", Data: []byte(fuzzInventory)}},
			map[string]*importer.Observed{"sm.sm01": {Live: live, Fields: (&Driver{}).Fields()}}, importer.Options{Load: load, Name: "imported.fab.hcl"})
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		s, diags := load([]spec.File{{Name: "imported.fab.hcl", Data: res.HCL}})
		if diags.HasErrors() {
			t.Fatalf("the written spec does not load: %v\n%s", diags, res.HCL)
		}
		listed := map[string]bool{}
		for _, l := range append(res.Report.LeftOut, res.Report.SubnetManager.Untouched...) {
			listed[l.Path] = true
		}
		desired := intent.Compile(s).SubnetManagers[0].Flatten()
		for k, v := range live {
			if desired[k] != v && !listed[k] && (desired[intent.PathOpenSM+"qos"] == "TRUE" || strings.HasPrefix(k, intent.PathPartitions)) {
				t.Errorf("%s = %q on the subnet manager, %q in the written spec, and import does not list it", k, v, desired[k])
			}
		}
	})
}
