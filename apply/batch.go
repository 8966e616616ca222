package apply

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BatchPolicy starts the hosts' wave in batches, as a DaemonSet rolls
// out (the Kubernetes engine's --canary and --max-unavailable): the
// first Canary hosts alone, the rest only once every canary finished;
// at most MaxUnavailable hosts in flight at once, a new one started as
// soon as one finishes. The failure budget is the run's --on-failure
// (stop: nothing new starts after the first failure). The zero policy
// starts every host at once, up to Parallelism.
type BatchPolicy struct {
	Canary         int
	MaxUnavailable MaxUnavailable
}

// IsZero reports the policy that starts every device at once.
func (b BatchPolicy) IsZero() bool { return b.Canary == 0 && b.MaxUnavailable.N == 0 }

// MaxUnavailable is --max-unavailable: a count, or a percentage of the
// hosts in the wave (rounded up, at least 1), as a DaemonSet's.
type MaxUnavailable struct {
	N       int
	Percent bool
}

// ParseMaxUnavailable reads "N" or "P%".
func ParseMaxUnavailable(s string) (MaxUnavailable, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 100 {
			return MaxUnavailable{}, fmt.Errorf("invalid --max-unavailable %q: want a count (2) or a percentage from 1%% to 100%% (10%%)", s)
		}
		return MaxUnavailable{N: n, Percent: true}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return MaxUnavailable{}, fmt.Errorf("invalid --max-unavailable %q: want a count of at least 1 (2) or a percentage (10%%)", s)
	}
	return MaxUnavailable{N: n}, nil
}

// Of is the count for a wave of total devices (0 when unset).
func (m MaxUnavailable) Of(total int) int {
	if !m.Percent {
		return m.N
	}
	return max(1, int(math.Ceil(float64(total)*float64(m.N)/100)))
}

func (m MaxUnavailable) String() string {
	if m.N == 0 {
		return ""
	}
	if m.Percent {
		return strconv.Itoa(m.N) + "%"
	}
	return strconv.Itoa(m.N)
}

// batches splits a wave of n devices by the policy: the canary's size
// (0: none) and how many devices the rest runs at once (0: parallelism).
func (b BatchPolicy) batches(n int) (canary, inFlight int) {
	inFlight = b.MaxUnavailable.Of(n)
	canary = b.Canary
	if inFlight > 0 {
		canary = min(canary, inFlight)
	}
	return min(canary, n), inFlight
}
