package sonic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// corpusBody is a corpus file without its "#" header.
func corpusBody(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	return []byte(strings.Join(body, "\n"))
}

// TestReadVendorConfigDB: the readers turn real device CONFIG_DBs kept as
// sonic-utilities test fixtures (testdata/vendor/sonic/configdb-sample-*.txt)
// into the expected state: IP MTU 9100 as is, the template's range keys
// "<port>|3-4" as lossless classes 3 and 4 (pg_lossless_* profiles with
// xoff), PG 0's ingress_lossy_profile as lossy, both reference styles
// ("AZURE" and "[DSCP_TO_TC_MAP|AZURE]"), and the buffer model.
func TestReadVendorConfigDB(t *testing.T) {
	for _, name := range []string{"configdb-sample-counterpoll.txt", "configdb-sample-reference-format.txt"} {
		t.Run(name, func(t *testing.T) {
			b := corpusBody(t, name)
			sw := &intent.Switch{Ports: []intent.Port{{Name: "Ethernet0"}, {Name: "Ethernet4"}}}
			db, err := ParseConfigDB(b)
			if err != nil {
				t.Fatal(err)
			}
			st := db.State(sw)
			st["buffer_model (DEVICE_METADATA)"] = db.BufferModel()
			got, _ := json.MarshalIndent(st, "", "  ")
			testutil.Golden(t, filepath.Join("testdata", strings.TrimSuffix(name, ".txt")+".state.golden"), append(got, '\n'))
			for _, tc := range []string{"3", "4"} {
				if st["tc/"+tc+"/lossless"] != "true" {
					t.Errorf("tc %s not lossless from the <port>|3-4 key", tc)
				}
			}
			if st["tc/0/lossless"] != "false" || st["port/Ethernet4/mtu"] != "9100" || st["port/Ethernet4/pfc"] != "3,4" {
				t.Errorf("tc0 lossless %q, mtu %q, trust %q", st["tc/0/lossless"], st["port/Ethernet4/mtu"], st["trust"])
			}
		})
	}
}
