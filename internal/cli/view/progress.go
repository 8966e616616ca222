package view

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/internal/iostreams"
)

// PlanProgress shows device reads on stderr while a plan runs, when
// stderr is a terminal: a totals line and one line per device in flight,
// redrawn in place. Elsewhere (CI logs, files, tests) it writes nothing,
// so plan output stays byte-for-byte deterministic.
type PlanProgress struct {
	ios     *iostreams.IOStreams
	now     func() time.Time
	enabled bool

	mu       sync.Mutex
	started  time.Time
	inflight []planFlight
	done     int
	total    int
	drawn    int // lines on screen

	stop chan struct{}
	wg   sync.WaitGroup
}

type planFlight struct {
	device string
	since  time.Time
}

// progressMaxLines bounds the in-flight lines drawn.
const progressMaxLines = 10

// NewPlanProgress returns the progress view of a plan's reads on ios's
// stderr.
func NewPlanProgress(ios *iostreams.IOStreams, now func() time.Time) *PlanProgress {
	if now == nil {
		now = time.Now
	}
	return &PlanProgress{ios: ios, now: now, enabled: ios.IsStderrTTY()}
}

// Start begins redrawing (every 100 ms) when enabled.
func (p *PlanProgress) Start(total int) {
	if !p.enabled {
		return
	}
	p.started = p.now()
	p.total = total
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
}

// Started records a device read beginning (plan.Options.Started).
func (p *PlanProgress) Started(device string) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	p.inflight = append(p.inflight, planFlight{device: device, since: p.now()})
	p.mu.Unlock()
}

// Done records a device finished (plan.Options.Progress).
func (p *PlanProgress) Done(done, total int, device string) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	p.done, p.total = done, total
	for i, f := range p.inflight {
		if f.device == device {
			p.inflight = append(p.inflight[:i], p.inflight[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
}

// Stop erases the progress lines and prints the totals once.
func (p *PlanProgress) Stop(devices int) {
	if !p.enabled {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	st := iostreams.NewStyles(p.ios.ErrOut, p.ios.ErrColorEnabled())
	fmt.Fprintln(p.ios.ErrOut, st.Faint.Render(fmt.Sprintf("Read %s in %s.", plural(devices, "device", "devices"), p.now().Sub(p.started).Round(10*time.Millisecond))))
}

func (p *PlanProgress) erase() {
	if p.drawn > 0 {
		p.ios.EraseErrLines(p.drawn)
		p.drawn = 0
	}
}

func (p *PlanProgress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	var b strings.Builder
	lines := 1
	fmt.Fprintf(&b, "Reading devices: %d of %d done, %d in flight\n", p.done, p.total, len(p.inflight))
	for i, f := range p.inflight {
		if i == progressMaxLines {
			fmt.Fprintf(&b, "  … and %d more\n", len(p.inflight)-i)
			lines++
			break
		}
		fmt.Fprintf(&b, "  %s (%s)\n", f.device, now.Sub(f.since).Round(100*time.Millisecond))
		lines++
	}
	p.erase()
	fmt.Fprint(p.ios.ErrOut, b.String())
	p.drawn = lines
}
