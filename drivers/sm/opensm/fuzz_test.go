package opensm

import (
	"os"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// Seeds: the goldens plus the odd corners opensm's parsers accept.
func seedFile(f *testing.F, name string) {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
}

func FuzzParsePartitions(f *testing.F) {
	seedFile(f, "infiniband-sm01-partitions.conf.golden")
	f.Add("Default=0x7fff,ipoib:ALL=full;")
	f.Add("a=1,defmember=both:\n mgid=ff12::1,sl=1\n 0x1=f,NONE,SELF=b ; b : ;;;")
	f.Add("x:\n#;\n0x10")
	f.Add("=0x8001,=,mtu=:,=full,0x;")
	f.Fuzz(func(t *testing.T, s string) {
		st := parsePartitions(s)
		for k, v := range st {
			if !strings.HasPrefix(k, intent.PathPartitions) {
				t.Fatalf("key outside partitions/: %q", k)
			}
			if strings.Contains(k, "/member/") && v != "full" && v != "limited" && v != "both" {
				t.Fatalf("%s = %q", k, v)
			}
		}
	})
}

func FuzzParseQoSPolicy(f *testing.F) {
	seedFile(f, "infiniband-sm01-qos-policy.conf.golden")
	f.Add("qos-levels\nqos-level\nname: DEFAULT\nsl: 0\nend-qos-level\nend-qos-levels\n")
	f.Add("qos-match-rules\nqos-match-rule\npkey: 0x1-0x2,zz\nend-qos-match-rule\n")
	f.Add("qos-ulps\ndefault : 0\nend-qos-ulps\nqos-level\nend-qos-levels")
	f.Fuzz(func(t *testing.T, s string) {
		for k := range parseQoSPolicy(s) {
			if !strings.HasPrefix(k, intent.PathQoSPolicy) {
				t.Fatalf("key outside qos-policy/: %q", k)
			}
		}
	})
}

// FuzzEditOpenSMConf: whatever the live file holds, the edited file reads
// back as desired, keeps every line fabctl does not manage, and editing
// it again changes nothing.
func FuzzEditOpenSMConf(f *testing.F) {
	f.Add(siteConf)
	f.Add("qos TRUE\nqos TRUE\n# qos_sl2vl 1\nqos_sl2vl")
	f.Add("no newline at end qos_vlarb_low 0:1")
	f.Add("\n\n\tqos_vlarb_high\t0:4 trailing words\n")
	desired := intent.State{"opensm/qos": "TRUE", "opensm/qos_sl2vl": "0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0", "opensm/qos_vlarb_high": "1:64"}
	f.Fuzz(func(t *testing.T, live string) {
		out := editOpenSMConf(live, desired, "f")
		st := openSMState(parseOpenSMConf(out), managedOptions(desired))
		for k, v := range desired {
			if st[k] != v {
				t.Fatalf("%s reads back %q, want %q:\n%s", k, st[k], v, out)
			}
		}
		for k := range st {
			if _, ok := desired[k]; !ok {
				t.Fatalf("override %s survives:\n%s", k, out)
			}
		}
		if again := editOpenSMConf(out, desired, "f"); again != out {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
		managed := map[string]bool{}
		for _, o := range managedOptions(desired) {
			managed[o] = true
		}
		for _, l := range strings.Split(live, "\n") {
			if k, _, ok := optionLine(l); ok && managed[k] {
				continue
			}
			if strings.TrimSpace(l) != "" && !strings.Contains(out, l) {
				t.Fatalf("unmanaged line %q lost:\n%s", l, out)
			}
		}
	})
}
