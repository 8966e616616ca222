// Package memory is an in-memory driver: devices are States in a shared
// Store. It exists for tests of the plan/apply engine's pure logic
// (ordering, parallelism, failure policies, journals) and for benchmarks;
// real drivers are tested against real servers.
package memory

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// Store holds every device's state and the faults to inject.
type Store struct {
	mu      sync.Mutex
	devices map[string]intent.State
	snaps   map[string]intent.State
	seq     int

	// ReadLatency and ApplyLatency delay every Read and Apply.
	ReadLatency  time.Duration
	ApplyLatency time.Duration
	// FailRead and FailApply name devices whose Read / Apply fail.
	FailRead  map[string]error
	FailApply map[string]error
	// Partial names devices whose Apply fails after changing half the
	// settings and cannot restore them.
	Partial map[string]bool
	// Applied counts successful applies per device.
	Applied map[string]int
	// FailSave names devices whose Save fails (SavingDriver).
	FailSave map[string]error
	// Links is what ReadLinks reports per device (drivers.LinkReader);
	// a device without an entry reports nothing (link truth not read).
	Links map[string]*linktruth.DeviceLinks

	// startup is each device's saved configuration (SavingDriver): what
	// Reload brings back. Set records a state as both running and saved.
	startup map[string]intent.State
}

// NewStore returns an empty store: every device reads as empty state.
func NewStore() *Store {
	return &Store{devices: map[string]intent.State{}, snaps: map[string]intent.State{},
		FailRead: map[string]error{}, FailApply: map[string]error{}, Partial: map[string]bool{}, Applied: map[string]int{},
		FailSave: map[string]error{}, startup: map[string]intent.State{}, Links: map[string]*linktruth.DeviceLinks{}}
}

// Set replaces a device's state (to record a live state, or inject drift).
func (s *Store) Set(device string, st intent.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The stored States are never changed in place (Apply, Rollback,
	// Save and Reload replace them), so running and startup share one.
	c := copyState(st)
	s.devices[device] = c
	s.startup[device] = c
}

// SetRunning replaces a device's running state only: a change made on
// the device and not saved (SavingDriver reads config/saved false).
func (s *Store) SetRunning(device string, st intent.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.devices[device] = copyState(st)
}

// Reload replaces a device's running state with its saved one, as a
// reboot does.
func (s *Store) Reload(device string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.devices[device] = copyState(s.startup[device])
}

// Get returns a copy of a device's state.
func (s *Store) Get(device string) intent.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyState(s.devices[device])
}

func copyState(st intent.State) intent.State {
	if st == nil {
		return intent.State{}
	}
	return maps.Clone(st)
}

// Driver is the in-memory driver over a Store.
type Driver struct {
	Store     *Store
	FieldList []intent.Field
}

var _ drivers.Driver = (*Driver)(nil)

// Name is "memory".
func (d *Driver) Name() string { return "memory" }

// Capabilities: checkpoints and rollback.
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{Checkpoints: true, Rollback: true}
}

// Fields returns the configured fields.
func (d *Driver) Fields() []intent.Field { return d.FieldList }

func sleep(ctx context.Context, dl time.Duration) error {
	if dl <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(dl)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Read returns the stored state.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	if err := sleep(ctx, d.Store.ReadLatency); err != nil {
		return nil, err
	}
	d.Store.mu.Lock()
	err := d.Store.FailRead[t.Device.Name]
	d.Store.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return d.Store.Get(t.Device.Name), nil
}

// SetLinks replaces a device's link report (a test's cable coming up
// while a plan reads).
func (s *Store) SetLinks(name string, dl *linktruth.DeviceLinks) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Links[name] = dl
}

// ReadLinks returns the device's stored link report (nil: none, so the
// plan says its links were not read).
func (d *Driver) ReadLinks(_ context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	d.Store.mu.Lock()
	defer d.Store.mu.Unlock()
	return d.Store.Links[t.Device.Name], nil
}

// Changes makes one change per setting: "set path value" / "delete path".
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, _ intent.State) ([]drivers.Change, error) {
	out := make([]drivers.Change, 0, len(diff))
	for _, c := range diff {
		ch := drivers.Change{Paths: []string{c.Path}, Disruptive: c.Disruptive}
		if c.Action == intent.Delete {
			ch.Summary = "delete " + c.Path
			ch.Payload = []string{"delete " + c.Path}
		} else {
			ch.Summary = fmt.Sprintf("set %s = %s", c.Path, c.After)
			ch.Payload = []string{fmt.Sprintf("set %s %s", c.Path, strconv.Quote(c.After))}
		}
		out = append(out, ch)
	}
	return out, nil
}

func parse(payload string) (op, path, value string, err error) {
	var rest string
	switch {
	case len(payload) > 7 && payload[:7] == "delete ":
		return "delete", payload[7:], "", nil
	case len(payload) > 4 && payload[:4] == "set ":
		rest = payload[4:]
	default:
		return "", "", "", fmt.Errorf("bad payload %q", payload)
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == ' ' {
			v, err := strconv.Unquote(rest[i+1:])
			return "set", rest[:i], v, err
		}
	}
	return "", "", "", fmt.Errorf("bad payload %q", payload)
}

// Apply applies all changes at once, or none.
func (d *Driver) Apply(ctx context.Context, t drivers.Target, changes []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	if err := sleep(ctx, d.Store.ApplyLatency); err != nil {
		return drivers.Result{}, err
	}
	s := d.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	name := t.Device.Name
	cur := s.devices[name]
	next := copyState(cur)
	n := 0
	for _, c := range changes {
		for _, p := range c.Payload {
			op, path, val, err := parse(p)
			if err != nil {
				return drivers.Result{}, err
			}
			if op == "delete" {
				delete(next, path)
			} else {
				next[path] = val
			}
			n++
		}
	}
	if s.Partial[name] {
		half := copyState(cur)
		i := 0
		for k, v := range next {
			if i >= n/2 {
				break
			}
			half[k] = v
			i++
		}
		s.devices[name] = half
		return drivers.Result{}, &drivers.PartialError{Device: name, Err: fmt.Errorf("injected failure after %d of %d settings", i, n)}
	}
	if err := s.FailApply[name]; err != nil {
		return drivers.Result{}, err
	}
	s.seq++
	token := fmt.Sprintf("%s#%d", name, s.seq)
	s.snaps[token] = copyState(cur)
	s.devices[name] = next
	s.Applied[name]++
	return drivers.Result{Token: token}, nil
}

// Confirm is a no-op: the memory driver commits immediately.
func (d *Driver) Confirm(context.Context, drivers.Target, drivers.Result) error { return nil }

// Rollback restores the state before the transaction.
func (d *Driver) Rollback(_ context.Context, t drivers.Target, r drivers.Result) error {
	s := d.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.snaps[r.Token]
	if !ok {
		return fmt.Errorf("%s: no checkpoint %q", t.Device.Name, r.Token)
	}
	s.devices[t.Device.Name] = snap
	delete(s.snaps, r.Token)
	return nil
}

// SavingDriver is the memory driver of a platform with a startup
// configuration (drivers.Saver): Apply changes the running state only,
// Read reports drivers.PathSaved, Save copies running to startup (or fails
// as Store.FailSave says) and Store.Reload brings the startup back.
type SavingDriver struct{ Driver }

var _ drivers.Saver = (*SavingDriver)(nil)

// Name is "memory".
func (d *SavingDriver) Name() string { return "memory" }

// Read adds drivers.PathSaved to the stored state.
func (d *SavingDriver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	st, err := d.Driver.Read(ctx, t)
	if err != nil {
		return nil, err
	}
	s := d.Store
	s.mu.Lock()
	saved := st.Fingerprint() == intent.State(s.startup[t.Device.Name]).Fingerprint()
	s.mu.Unlock()
	st[drivers.PathSaved] = strconv.FormatBool(saved)
	return st, nil
}

// SaveSteps is the memory platform's save.
func (d *SavingDriver) SaveSteps() []string { return []string{"save"} }

// Save copies the running state to startup.
func (d *SavingDriver) Save(_ context.Context, t drivers.Target) error {
	s := d.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.FailSave[t.Device.Name]; err != nil {
		return err
	}
	s.startup[t.Device.Name] = copyState(s.devices[t.Device.Name])
	return nil
}
