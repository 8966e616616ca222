package clicore

import (
	"reflect"
	"testing"
)

func TestTables(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Table
	}{
		{"right-aligned, header with a blank (tabulate simple)",
			"  Port Rx    PFC0\n---------  ------\nEthernet0   1,200\nEthernet4     401\n\n  Port Tx    PFC0\n---------  ------\nEthernet0   1,210\n",
			[]Table{{Header: []string{"Port Rx", "PFC0"}, Rows: [][]string{{"Ethernet0", "1,200"}, {"Ethernet4", "401"}}},
				{Header: []string{"Port Tx", "PFC0"}, Rows: [][]string{{"Ethernet0", "1,210"}}}}},
		{"left-aligned cells with blanks (NVUE)",
			"Title\n=====\n    traffic-class  tx-bytes  wred-discards\n    -------------  --------  -------------\n    0              0 Bytes   7            \n",
			[]Table{{Header: []string{"traffic-class", "tx-bytes", "wred-discards"}, Rows: [][]string{{"0", "0 Bytes", "7"}}}}},
		{"a blank line under the rule, tables back to back",
			"  A    B\n---  ---\n\n  1    2\n  C    D\n---  ---\n  3    4\n",
			[]Table{{Header: []string{"A", "B"}, Rows: [][]string{{"1", "2"}}}, {Header: []string{"C", "D"}, Rows: [][]string{{"3", "4"}}}}},
		{"no table", "Error: No such command 'pfc'.\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tables(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[string]float64{"0": 0, "1,200": 1200, "18446744073709551615": 18446744073709551615} {
		if v, ok := Count(in); !ok || v != want {
			t.Errorf("Count(%q) = %v, %v", in, v, ok)
		}
	}
	for _, in := range []string{"N/A", "n/a", "", "-1", "1.5"} {
		if _, ok := Count(in); ok {
			t.Errorf("Count(%q) accepted", in)
		}
	}
}

func FuzzTables(f *testing.F) {
	f.Add("  Port Rx    PFC0\n---------  ------\nEthernet0   1,200\n")
	f.Add("    a  b\n    -  --\n    x  y z\n\n")
	f.Add("--\n--\n--\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, tb := range Tables(s) {
			for _, r := range tb.Rows {
				if len(r) != len(tb.Header) {
					t.Fatalf("row %q has %d cells, header %d", r, len(r), len(tb.Header))
				}
			}
		}
	})
}
