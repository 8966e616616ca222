package traffic

import (
	"fmt"
	"testing"
)

// checkDisjoint fails when an endpoint is a client or a server twice in
// one round.
func checkDisjoint(t *testing.T, rounds [][]Pair) {
	t.Helper()
	for ri, r := range rounds {
		cli, srv := map[int]bool{}, map[int]bool{}
		for _, p := range r {
			if p.Client == p.Server || cli[p.Client] || srv[p.Server] {
				t.Fatalf("round %d not disjoint: %v", ri, r)
			}
			cli[p.Client], srv[p.Server] = true, true
		}
	}
}

func TestRing(t *testing.T) {
	for n := 2; n <= 9; n++ {
		rounds, left, err := Rounds(PatternRing, n)
		if err != nil || len(rounds) != 1 || len(rounds[0]) != n || left != nil {
			t.Fatalf("n=%d: %v %v %v", n, rounds, left, err)
		}
		checkDisjoint(t, rounds)
		for i, p := range rounds[0] {
			if p.Client != i || p.Server != (i+1)%n {
				t.Errorf("n=%d: pair %d is %v", n, i, p)
			}
		}
	}
}

func TestPairs(t *testing.T) {
	rounds, left, _ := Rounds(PatternPairs, 5)
	if fmt.Sprint(rounds) != "[[{0 1} {2 3}]]" || fmt.Sprint(left) != "[4]" {
		t.Errorf("%v left %v", rounds, left)
	}
}

// All-pairs is a round-robin tournament: every unordered pair exactly
// once, N-1 rounds of N/2 disjoint pairs (N rounds when N is odd).
func TestAllPairs(t *testing.T) {
	for n := 2; n <= 17; n++ {
		rounds, _, err := Rounds(PatternAllPairs, n)
		if err != nil {
			t.Fatal(err)
		}
		wantRounds, perRound := n-1, n/2
		if n%2 == 1 {
			wantRounds, perRound = n, (n-1)/2
		}
		if len(rounds) != wantRounds {
			t.Fatalf("n=%d: %d rounds, want %d", n, len(rounds), wantRounds)
		}
		checkDisjoint(t, rounds)
		seen := map[[2]int]int{}
		sends := make([]int, n)
		for _, r := range rounds {
			if len(r) != perRound {
				t.Fatalf("n=%d: round of %d pairs, want %d", n, len(r), perRound)
			}
			hosts := map[int]bool{}
			for _, p := range r {
				if hosts[p.Client] || hosts[p.Server] {
					t.Fatalf("n=%d: endpoint twice in round %v", n, r)
				}
				hosts[p.Client], hosts[p.Server] = true, true
				a, b := min(p.Client, p.Server), max(p.Client, p.Server)
				seen[[2]int{a, b}]++
				sends[p.Client]++
			}
		}
		if len(seen) != n*(n-1)/2 {
			t.Fatalf("n=%d: %d distinct pairs, want %d", n, len(seen), n*(n-1)/2)
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: pair %v %d times", n, k, c)
			}
		}
		for i, s := range sends {
			if d := s - (n-1)/2; d < -1 || d > 1 {
				t.Errorf("n=%d: endpoint %d is the client %d times (unbalanced)", n, i, s)
			}
		}
	}
}

func TestRoundsEdge(t *testing.T) {
	if r, left, err := Rounds(PatternRing, 1); r != nil || len(left) != 1 || err != nil {
		t.Errorf("one endpoint: %v %v %v", r, left, err)
	}
	if _, _, err := Rounds("star", 4); err == nil {
		t.Error("unknown pattern accepted")
	}
}
