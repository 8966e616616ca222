package apply

import (
	"sync"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
)

// Recorder keeps the applied record (plan.Applied, the baseline for drift)
// up to date during a run. Each verified device is added to the record in
// memory at once; a background writer saves the whole record whenever it
// changed, at most once per interval (100 ms, or 10x the last save's
// duration for large fabrics, so saving takes at most a tenth of a core
// away from the run), and Close writes the final state. A crash mid-run
// loses at most the devices verified in the last interval; the record
// never holds a device that was not verified.
type Recorder struct {
	stateDir string
	minGap   time.Duration

	mu    sync.Mutex
	rec   *plan.Applied
	orig  map[string]intent.State // entries before this run, for Revert
	dirty bool
	err   error

	kick    chan struct{}
	closing chan struct{}
	done    chan struct{}
	once    sync.Once
}

// OpenRecorder loads the fabric's record from the state directory.
func OpenRecorder(stateDir, fabric string) (*Recorder, error) {
	a, err := plan.LoadApplied(stateDir, fabric)
	if err != nil {
		return nil, err
	}
	r := &Recorder{stateDir: stateDir, minGap: 100 * time.Millisecond, rec: a, orig: map[string]intent.State{},
		kick: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	return r, nil
}

// Verified records a device's desired state as applied and verified.
func (r *Recorder) Verified(address string, st intent.State) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if _, seen := r.orig[address]; !seen {
		r.orig[address] = r.rec.Devices[address] // nil when new
	}
	r.rec.Devices[address] = st
	r.touch()
	r.mu.Unlock()
}

// Revert puts back a device's entry as it was before this run (after the
// device was rolled back).
func (r *Recorder) Revert(address string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if prev, ok := r.orig[address]; ok {
		if prev == nil {
			delete(r.rec.Devices, address)
		} else {
			r.rec.Devices[address] = prev
		}
		r.touch()
	}
	r.mu.Unlock()
}

// touch marks the record dirty and wakes the writer; r.mu is held.
func (r *Recorder) touch() {
	r.dirty = true
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *Recorder) loop() {
	defer close(r.done)
	var last time.Time
	for {
		select {
		case <-r.kick:
		case <-r.closing:
			r.save()
			return
		}
		if wait := r.minGap - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-r.closing:
				t.Stop()
				r.save()
				return
			}
		}
		last = time.Now()
		r.save()
		if took := time.Since(last); 10*took > r.minGap {
			r.minGap = 10 * took
		}
	}
}

// save writes the record if it changed since the last save.
func (r *Recorder) save() {
	r.mu.Lock()
	if !r.dirty {
		r.mu.Unlock()
		return
	}
	r.dirty = false
	snap := &plan.Applied{FormatVersion: r.rec.FormatVersion, Fabric: r.rec.Fabric,
		Devices: make(map[string]intent.State, len(r.rec.Devices))}
	for k, v := range r.rec.Devices {
		snap.Devices[k] = v
	}
	r.mu.Unlock()
	err := snap.Save(r.stateDir)
	r.mu.Lock()
	if err != nil && r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// Close writes the final record and returns the first save error.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.once.Do(func() { close(r.closing) })
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
