package intent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// fingerprintSpec is Fingerprint as plans since format 1.0 record it,
// written the plain way: SHA-256 over "%d:%s=%d:%s\n" per setting in key
// order. Saved plans compare live devices against it, so it must not move.
func fingerprintSpec(s State) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s=%d:%s\n", len(k), k, len(s[k]), s[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hostLike is a state of n NICs with ~20 settings each, like a pod host's.
func hostLike(nics int, value string) State {
	st := State{"irqbalance": "off"}
	for i := 0; i < nics; i++ {
		p := "nic/ens" + strconv.Itoa(i) + "np0/"
		for _, k := range []string{"mtu", "pfc", "trust", "pause", "ecn", "roce_mode", "tos", "irq_cpus", "dscp/default", "dscp/48", "cnp_dscp"} {
			st[p+k] = value
		}
		for tc := 0; tc < 8; tc++ {
			st[p+"tc/"+strconv.Itoa(tc)+"/sched"] = value
		}
	}
	return st
}

// TestFingerprintStable: the fingerprint is the documented hash, pinned
// to the value plans recorded before key orders were cached (a saved
// plan's fingerprints must still match), and it stays right when states
// of the same size and of the same key set come and go: the cached order
// of one key set is never used for another.
func TestFingerprintStable(t *testing.T) {
	// The values main's Fingerprint (sort.Strings over the keys each
	// call) gave for these states.
	small := State{"trust": "dscp", "port/E1/mtu": "9000", "port/E1/pfc": "3", "tc/3/ecn/min": "150000"}
	a := hostLike(8, "1")
	for _, pin := range []struct {
		st   State
		want string
	}{
		{small, "bca452101de6e1f7bdf37f87b679b6a19aea168fa36be8ba007e1cd97f180bb6"},
		{a, "819ddf145ab1c3c49de503b423236e18b966fbfe5752428ab356632a63b72279"},
	} {
		for i := 0; i < 2; i++ { // the second time from the cached order
			if got := pin.st.Fingerprint(); got != pin.want {
				t.Fatalf("fingerprint %s, want %s (pinned)", got, pin.want)
			}
		}
	}
	b := hostLike(8, "2")
	// Same size as a, one path renamed: must not reuse a's order.
	c := hostLike(8, "1")
	delete(c, "nic/ens3np0/tos")
	c["nic/ens3np0/zzz"] = "1"
	d := State{}
	for k, v := range a {
		d[k+"/x"] = v // same count, no path in common
	}
	// A signature collision: c's signature finds a's order, which has c's
	// length but not its paths. The check must refuse it.
	orders.Store(c.keySig(), a.sortedKeys())
	for round := 0; round < 3; round++ {
		for name, st := range map[string]State{"a": a, "b": b, "c": c, "d": d, "small": small, "empty": {}} {
			if got, want := st.Fingerprint(), fingerprintSpec(st); got != want {
				t.Errorf("round %d: %s: fingerprint %s, want %s", round, name, got, want)
			}
			keys := st.Keys()
			if !sort.StringsAreSorted(keys) || len(keys) != len(st) {
				t.Errorf("round %d: %s: keys not the sorted paths", round, name)
			}
			// Keys returns the caller's own slice: changing it changes no cached order.
			slices.Reverse(keys)
		}
	}
}
