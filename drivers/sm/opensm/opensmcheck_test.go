package opensm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// The real check: Debian's opensm (3.3.23) parses what fabctl renders.
//
// opensm cannot be pointed at the files without InfiniBand hardware: it
// reads partitions.conf and the QoS policy in its first heavy sweep, after
// binding a port, and on a machine without one stops first. Observed
// (opensm -P partitions.conf -Q -Y qos-policy.conf -o -f stdout):
//
//	osm_vendor_init: 1000 pending umads specified
//	No local ports detected!
//
// and with a port GUID given (-g 0x0002c90300000001):
//
//	osm_vendor_open_port: ERR 5421: Unable to get CA mthca0 port guids (Unknown error -1)
//	osm_sm_bind: ERR 2E10: SM MAD Controller bind failed (IB_ERROR)
//	Error from osm_opensm_bind (0x2A)
//
// So the test runs opensm's own parsers inside the real binary instead
// (testdata/opensmcheck.c, LD_PRELOAD: see its comment). opensm.conf
// options are checked with opensm itself: `opensm -F FILE -c OUT` parses
// the file and warns about every option it cannot take ("Warning: Cached
// Option qos_vlarb_high:weight=300 out of range", "Unrecognized token").

var (
	shimOnce sync.Once
	shimPath string
	shimErr  string
)

// requireOpenSM builds the LD_PRELOAD checker, or skips (fails under
// CI=true) when opensm, gcc or the opensm headers are missing.
func requireOpenSM(t *testing.T) string {
	t.Helper()
	shimOnce.Do(func() {
		var missing []string
		if _, err := exec.LookPath("opensm"); err != nil {
			if _, err := os.Stat("/usr/sbin/opensm"); err != nil {
				missing = append(missing, "opensm (apt-get install opensm)")
			}
		}
		if _, err := exec.LookPath("gcc"); err != nil {
			missing = append(missing, "gcc")
		}
		for _, h := range []string{"/usr/include/infiniband/opensm/osm_opensm.h", "/usr/include/infiniband/umad.h"} {
			if _, err := os.Stat(h); err != nil {
				missing = append(missing, h+" (apt-get install libopensm-dev libibumad-dev)")
			}
		}
		if len(missing) > 0 {
			shimErr = "the opensm parser check needs " + strings.Join(missing, ", ")
			return
		}
		dir, err := os.MkdirTemp("", "fabctl-opensmcheck")
		if err != nil {
			shimErr = err.Error()
			return
		}
		so := filepath.Join(dir, "check.so")
		out, err := exec.Command("gcc", "-Wall", "-Werror", "-shared", "-fPIC", "-I/usr/include/infiniband",
			"-o", so, "testdata/opensmcheck.c").CombinedOutput()
		if err != nil {
			shimErr = "building testdata/opensmcheck.c: " + err.Error() + "\n" + string(out)
			return
		}
		shimPath = so
	})
	if shimPath == "" {
		testutil.SkipOrFail(t, shimErr)
	}
	return shimPath
}

func opensmBin() string {
	if p, err := exec.LookPath("opensm"); err == nil {
		return p
	}
	return "/usr/sbin/opensm"
}

// opensmParse runs opensm's parsers on the two files ("" to skip one).
func opensmParse(t *testing.T, shim, partitions, qos string) (string, int) {
	t.Helper()
	cmd := exec.Command(opensmBin())
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+shim)
	if partitions != "" {
		cmd.Env = append(cmd.Env, "FABCTL_PARTITIONS="+partitions)
	}
	if qos != "" {
		cmd.Env = append(cmd.Env, "FABCTL_QOS_POLICY="+qos)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

var (
	partLineRE   = regexp.MustCompile(`(?m)^FABCTL partition name=(\S*) pkey=(0x[0-9a-f]{4}) sl=(\d+)((?: mgroup=mtu:\d+,rate:\d+)*)$`)
	levelLineRE  = regexp.MustCompile(`(?m)^FABCTL level name=(.*)$`)
	memberLineRE = regexp.MustCompile(`osm_prtn_add_port: port 0x([0-9a-f]+) not found`)
	problemRE    = regexp.MustCompile(`(?m)^.*(PARSE ERROR|PARSE WARN|ERR [0-9A-F]{4}|Syntax error|FABCTL .*failed|FABCTL cannot).*$`)
)

func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenSMParsesRendering: opensm takes every rendered file without a
// parse error or warning and understands what fabctl meant: partitions
// with their P_Keys, SLs, IPoIB group MTU and rate, every member GUID,
// the QoS levels and match rules, the opensm.conf options.
func TestOpenSMParsesRendering(t *testing.T) {
	shim := requireOpenSM(t)
	for _, c := range []struct {
		name string
		sm   *intent.SubnetManager
	}{
		{"example", loadSM(t, "../../../examples/infiniband")},
		{"no-qos", smFromSrc(t, noQoSSpec)},
		{"default-declared", smFromSrc(t, defaultDeclaredSpec)},
		// max_vls and vl_high_limit: qos_max_vls and qos_high_limit.
		{"vls", smFromSrc(t, strings.Replace(noQoSSpec, "  subnet_manager = \"h1\"\n",
			"  subnet_manager = \"h1\"\n  max_vls = 4\n  vl_high_limit = 16\n  sl2vl = [0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n", 1))},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := renderAll(t, c.sm)
			pf := writeTemp(t, "partitions.conf", files["partitions.conf"])
			qf := ""
			if c.sm.QoS {
				qf = writeTemp(t, "qos-policy.conf", files["qos-policy.conf"])
			}
			out, code := opensmParse(t, shim, pf, qf)
			if code != 0 {
				t.Fatalf("opensm's parsers failed (exit %d):\n%s", code, out)
			}
			if p := problemRE.FindAllString(out, -1); len(p) > 0 {
				t.Fatalf("opensm reported problems:\n%s\n\nfull output:\n%s", strings.Join(p, "\n"), out)
			}
			var want, got []string
			var wantGUIDs, gotGUIDs []string
			for _, p := range c.sm.Partitions {
				w := fmt.Sprintf("%s %s %d", p.Name, intent.PKeyString(p.PKey), p.SL)
				if p.IPoIB {
					mtu, rate := 4, 3 // opensm's defaults (2048, 10 Gb/s)
					if p.MTU > 0 {
						mtu, _ = intent.IBMTUCode(p.MTU)
					}
					if p.Rate > 0 {
						rate, _ = intent.IBRateCode(p.Rate)
					}
					w += fmt.Sprintf(" mgroup=mtu:%d,rate:%d", mtu, rate)
				}
				want = append(want, w)
				for _, m := range p.Members {
					switch {
					case strings.HasPrefix(m.ID, "0x"):
						wantGUIDs = append(wantGUIDs, m.ID)
					case m.ID == "SELF":
						// The SM's own port: 0 in the checker, which binds none.
						wantGUIDs = append(wantGUIDs, "0x0000000000000000")
					}
				}
			}
			for _, m := range partLineRE.FindAllStringSubmatch(out, -1) {
				got = append(got, strings.TrimSpace(m[1]+" "+m[2]+" "+m[3]+m[4]))
			}
			for _, m := range memberLineRE.FindAllStringSubmatch(out, -1) {
				v, _ := strconv.ParseUint(m[1], 16, 64)
				gotGUIDs = append(gotGUIDs, fmt.Sprintf("0x%016x", v))
			}
			sort.Strings(want)
			sort.Strings(got)
			sort.Strings(wantGUIDs)
			sort.Strings(gotGUIDs)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("opensm's partitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if strings.Join(gotGUIDs, " ") != strings.Join(wantGUIDs, " ") {
				t.Errorf("opensm's member GUIDs:\n%v\nwant:\n%v", gotGUIDs, wantGUIDs)
			}
			if !c.sm.QoS {
				return
			}
			var levels []string
			for _, m := range levelLineRE.FindAllStringSubmatch(out, -1) {
				levels = append(levels, m[1])
			}
			wantLevels := []string{fmt.Sprintf("DEFAULT sl=%d", c.sm.DefaultSL)}
			rules := 0
			for _, p := range c.sm.Partitions {
				if p.Implicit {
					continue
				}
				rules++
				l := fmt.Sprintf("%s sl=%d", intent.QoSLevelName(p), p.SL)
				if p.MTU > 0 {
					code, _ := intent.IBMTUCode(p.MTU)
					l += fmt.Sprintf(" mtu=%d", code)
				}
				if p.Rate > 0 {
					code, _ := intent.IBRateCode(p.Rate)
					l += fmt.Sprintf(" rate=%d", code)
				}
				l += fmt.Sprintf(" pkey=%s-%s", intent.PKeyString(p.PKey), intent.PKeyString(p.PKey))
				wantLevels = append(wantLevels, l)
			}
			sort.Strings(levels)
			sort.Strings(wantLevels)
			if strings.Join(levels, "\n") != strings.Join(wantLevels, "\n") {
				t.Errorf("opensm's QoS levels:\n%s\nwant:\n%s", strings.Join(levels, "\n"), strings.Join(wantLevels, "\n"))
			}
			if !strings.Contains(out, fmt.Sprintf("FABCTL rules=%d\n", rules)) {
				t.Errorf("opensm did not read %d match rules:\n%s", rules, out)
			}

			// opensm.conf: opensm takes the lines without a warning and
			// keeps the values (its -c dump of the parsed options).
			conf := writeTemp(t, "opensm.conf", files["opensm.conf"])
			dump := filepath.Join(t.TempDir(), "dump.conf")
			cout, err := exec.Command(opensmBin(), "-F", conf, "-c", dump).CombinedOutput()
			if err != nil {
				t.Fatalf("opensm -F %s -c: %v\n%s", conf, err, cout)
			}
			if strings.Contains(string(cout), "Warning") || strings.Contains(string(cout), "Unrecognized") {
				t.Errorf("opensm warns about the opensm.conf lines:\n%s", cout)
			}
			dumped, err := os.ReadFile(dump)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(strings.TrimSpace(files["opensm.conf"]), "\n") {
				if l != "" && !strings.HasPrefix(l, "#") && !strings.Contains("\n"+string(dumped), "\n"+l+"\n") {
					t.Errorf("opensm's dump of the parsed options lacks %q", l)
				}
			}
		})
	}
}

// TestOpenSMCheckCatchesErrors keeps the check honest: broken files make
// it fail.
func TestOpenSMCheckCatchesErrors(t *testing.T) {
	shim := requireOpenSM(t)
	pf := writeTemp(t, "partitions.conf", "compute=0x0001, ipoib : 0xzz=full ;\n")
	qf := writeTemp(t, "qos-policy.conf", "qos-levels\n qos-level\n  name: DEFAULT\n end-qos-level\nend-qos-levels\nbogus\n")
	out, code := opensmParse(t, shim, pf, qf)
	if code == 0 {
		t.Errorf("a broken QoS policy parsed:\n%s", out)
	}
	if !strings.Contains(out, "PARSE ERROR: line 1: bad PortGUID") {
		t.Errorf("a bad member GUID was not reported:\n%s", out)
	}
	// opensm checks the qos_* values only with qos TRUE (osm_subn_verify_config).
	conf := writeTemp(t, "opensm.conf", "qos TRUE\nqos_vlarb_high 0:4,1:300\nqos_sl2vl 0,1,2\n")
	cout, _ := exec.Command(opensmBin(), "-F", conf, "-c", filepath.Join(t.TempDir(), "d")).CombinedOutput()
	if !strings.Contains(string(cout), "out of range") || !strings.Contains(string(cout), "< 16 VLs listed") {
		t.Errorf("opensm took bad opensm.conf QoS lines:\n%s", cout)
	}
}
