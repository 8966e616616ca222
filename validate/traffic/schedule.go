// Package traffic turns a spec's validate blocks into traffic tests
// between hosts, runs them in rounds of disjoint pairs with the verbs
// engine (validate/verbs), diffs counters around each test and judges the
// results against the spec's pass criteria.
package traffic

import "fmt"

// Pair is one directed test: client index -> server index into the
// endpoint list a schedule was made for.
type Pair struct{ Client, Server int }

// Patterns a validate block can name.
const (
	PatternRing     = "ring"
	PatternPairs    = "pairs"
	PatternAllPairs = "all-pairs"
)

// Rounds schedules n endpoints into rounds. Within a round every
// endpoint is a client at most once and a server at most once, so the
// tests of a round run at the same time without sharing a NIC direction:
//
//   - ring: one round, i -> i+1 (the last back to the first);
//   - pairs: one round, 0 -> 1, 2 -> 3, ... (an odd one out is left over);
//   - all-pairs: a round-robin tournament (the circle method): every
//     unordered pair exactly once, n-1 rounds of n/2 pairs (n rounds of
//     (n-1)/2 when n is odd: each round one endpoint sits out).
//
// The second result names the endpoints a pattern left out.
func Rounds(pattern string, n int) ([][]Pair, []int, error) {
	if n < 2 {
		return nil, seq(n), nil
	}
	switch pattern {
	case PatternRing:
		r := make([]Pair, n)
		for i := range r {
			r[i] = Pair{Client: i, Server: (i + 1) % n}
		}
		return [][]Pair{r}, nil, nil
	case PatternPairs:
		var r []Pair
		for i := 0; i+1 < n; i += 2 {
			r = append(r, Pair{Client: i, Server: i + 1})
		}
		var left []int
		if n%2 == 1 {
			left = []int{n - 1}
		}
		return [][]Pair{r}, left, nil
	case PatternAllPairs:
		return tournament(n), nil, nil
	}
	return nil, nil, fmt.Errorf("unknown pattern %q: want ring, pairs or all-pairs", pattern)
}

// tournament is the circle method: endpoint 0 stays fixed, the others
// rotate; with an odd count a dummy (-1) gives each round's bye.
func tournament(n int) [][]Pair {
	m := n
	if m%2 == 1 {
		m++
	}
	ring := make([]int, m)
	for i := range ring {
		ring[i] = i
		if i >= n {
			ring[i] = -1
		}
	}
	rounds := make([][]Pair, 0, m-1)
	for r := 0; r < m-1; r++ {
		var round []Pair
		for i := 0; i < m/2; i++ {
			a, b := ring[i], ring[m-1-i]
			if a < 0 || b < 0 {
				continue
			}
			round = append(round, orient(a, b, n))
		}
		rounds = append(rounds, round)
		// rotate all but the first
		last := ring[m-1]
		copy(ring[2:], ring[1:m-1])
		ring[1] = last
	}
	return rounds
}

// orient picks the client of a pair so that every endpoint is the client
// of about half its pairs (a regular tournament for odd n, within one for
// even n): a sends to b when b is less than half way round the circle.
func orient(a, b, n int) Pair {
	d := ((b-a)%n + n) % n
	if d < n-d || (d == n-d && a < b) {
		return Pair{Client: a, Server: b}
	}
	return Pair{Client: b, Server: a}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
