package intent

import (
	"math/rand/v2"
	"testing"
)

// dscpDefaultSpec is DSCPDefault as documented: the TC most code points
// map to, the lowest such TC on a tie (two passes, the plain way).
func dscpDefaultSpec(table *[64]int) int {
	n := map[int]int{}
	for _, tc := range table {
		if tc >= 0 && tc < 256 {
			n[tc]++
		}
	}
	best := 0
	for tc := 0; tc < 256; tc++ {
		if n[tc] > n[best] {
			best = tc
		}
	}
	return best
}

// TestDSCPDefaultOnePass: the one-pass default equals the documented one
// on random tables with few and many ties, for int and byte tables.
func TestDSCPDefaultOnePass(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var table [64]int
		var bytes [64]uint8
		span := 1 + r.IntN(8)
		for d := range table {
			table[d] = r.IntN(span)
			if i%7 == 0 {
				table[d] = r.IntN(300) - 20 // out of range entries are not counted
			}
			bytes[d] = uint8(table[d])
		}
		want := dscpDefaultSpec(&table)
		if got := DSCPDefault(&table); got != want {
			t.Fatalf("table %v: default %d, want %d", table, got, want)
		}
		if i%7 != 0 {
			if got := dscpDefault(&bytes); got != want {
				t.Fatalf("byte table %v: default %d, want %d", bytes, got, want)
			}
		}
	}
}

// TestIntsString: kept renderings are the plain ones, for lists in and
// out of the kept range, asked twice.
func TestIntsString(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""}, {[]int{}, ""}, {[]int{3}, "3"}, {[]int{0}, "0"}, {[]int{0, 0}, "0,0"},
		{[]int{3, 4}, "3,4"}, {[]int{0, 1, 2, 3, 4, 5, 6, 7}, "0,1,2,3,4,5,6,7"},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7, 7}, "0,1,2,3,4,5,6,7,7"}, {[]int{12}, "12"}, {[]int{1, 2}, "1,2"},
		{[]int{-1, 3}, "-1,3"}, {[]int{3, 8}, "3,8"},
	} {
		for i := 0; i < 2; i++ {
			if got := intsString(tc.in); got != tc.want {
				t.Errorf("intsString(%v) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}
