package ibsim

import (
	"strings"
	"testing"
)

func TestDropMember(t *testing.T) {
	const conf = `# partition "storage"
storage=0x0002, mtu=4, sl=2 :
	0x0c42a10300000b01=full, # cn01:ib0
	0x0c42a10300000c01, # cn02:ib0
	0x0c42a10300000d01=full ; # cn03:ib0

compute=0x0001 :
	0x0c42a10300000b01=full ; # cn01:ib0
`
	for _, tc := range []struct {
		name, part string
		guid       uint64
		want, err  string
	}{
		{name: "middle", part: "storage", guid: 0x0c42a10300000c01, want: "\t0x0c42a10300000b01=full, # cn01:ib0\n\t0x0c42a10300000d01=full ; # cn03:ib0\n"},
		{name: "last", part: "storage", guid: 0x0c42a10300000d01, want: "\t0x0c42a10300000c01 ; # cn02:ib0\n\ncompute"},
		{name: "other partition untouched", part: "storage", guid: 0x0c42a10300000b01, want: "compute=0x0001 :\n\t0x0c42a10300000b01=full ; # cn01:ib0\n"},
		{name: "only member", part: "compute", guid: 0x0c42a10300000b01, err: "its only member"},
		{name: "no such member", part: "compute", guid: 0x0c42a10300000c01, err: "has no member 0x0c42a10300000c01"},
		{name: "no such partition", part: "x", guid: 1, err: `no partition "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dropMember(conf, tc.part, tc.guid)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got:\n%s\nwant it to contain:\n%s", got, tc.want)
			}
			if strings.Count(got, "\n") != strings.Count(conf, "\n")-1 {
				t.Errorf("not exactly one line removed:\n%s", got)
			}
		})
	}
}
