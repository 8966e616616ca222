package apply

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/safefile"
)

// Journal event types, in the order a run writes them.
const (
	EventRunStart       = "run_start"
	EventStale          = "stale"        // a device moved since the plan (nothing is applied)
	EventUnreachable    = "unreachable"  // a device could not be re-read for the staleness check
	EventDeviceStart    = "device_start" // the transaction begins
	EventDeviceApplied  = "device_applied"
	EventDeviceVerified = "device_verified"
	EventDeviceFailed   = "device_failed"
	EventRolledBack     = "device_rolled_back"
	EventRollbackFailed = "device_rollback_failed"
	EventSkipped        = "device_skipped"        // not attempted
	EventReleaseFailed  = "device_release_failed" // the run's rollback point could not be removed
	EventRunEnd         = "run_end"
)

// JournalFormatVersion versions the journal lines (minor = additive).
const JournalFormatVersion = "1.0"

// Entry is one journal line. Fields not relevant to an event are omitted.
// Entries never hold credentials or device payloads; driver error texts are
// passed through the journal's redactor.
type Entry struct {
	Time  time.Time `json:"time"`
	RunID string    `json:"run_id"`
	Event string    `json:"event"`

	// run_start
	FormatVersion string `json:"format_version,omitempty"`
	Fabric        string `json:"fabric,omitempty"`
	FabctlVersion string `json:"fabctl_version,omitempty"`
	SpecHash      string `json:"spec_hash,omitempty"`
	PlanHash      string `json:"plan_hash,omitempty"`
	PlanFile      string `json:"plan_file,omitempty"`
	Parallelism   int    `json:"parallelism,omitempty"`
	OnFailure     string `json:"on_failure,omitempty"`
	Order         string `json:"order,omitempty"`
	OrderReason   string `json:"order_reason,omitempty"`
	ConfirmTime   string `json:"confirm_timeout,omitempty"`
	Devices       int    `json:"devices,omitempty"`
	// The Kubernetes engine's run_start (format 1.0, additive): the
	// engine ("kubernetes"; absent: ssh), --max-unavailable and --canary.
	Engine         string `json:"engine,omitempty"`
	MaxUnavailable string `json:"max_unavailable,omitempty"`
	Canary         int    `json:"canary,omitempty"`

	// device events
	Device      string              `json:"device,omitempty"`
	Wave        int                 `json:"wave,omitempty"`
	Changes     int                 `json:"changes,omitempty"`
	Token       string              `json:"token,omitempty"`
	Pending     bool                `json:"pending,omitempty"`
	Confirmed   bool                `json:"confirmed,omitempty"`
	Saved       bool                `json:"saved,omitempty"`     // device_verified: the configuration was persisted
	NotSaved    bool                `json:"not_saved,omitempty"` // device_failed: applied and verified, the save failed
	Error       string              `json:"error,omitempty"`
	Restored    *bool               `json:"restored,omitempty"`
	Partial     bool                `json:"partial,omitempty"`
	Remaining   []intent.AttrChange `json:"remaining,omitempty"`
	Fingerprint string              `json:"fingerprint,omitempty"`
	Reason      string              `json:"reason,omitempty"`
	DurationMS  *int64              `json:"duration_ms,omitempty"`
	// A host under the Kubernetes engine (format 1.0, additive): the
	// FabricHostConfig's revision published (or published again by a
	// rollback) and the one it replaced, the generation the publish
	// stored, the generation the node's agent reported on
	// (status.observedGeneration), and the rollout batch (1 = canary).
	Revision           string `json:"revision,omitempty"`
	PreviousRevision   string `json:"previous_revision,omitempty"`
	Generation         int64  `json:"generation,omitempty"`
	ObservedGeneration int64  `json:"observed_generation,omitempty"`
	Batch              int    `json:"batch,omitempty"`

	// run_end
	Status string  `json:"status,omitempty"`
	Counts *Counts `json:"counts,omitempty"`
}

// Journal writes entries as JSON lines as the run goes. Entries are
// encoded by the goroutine that writes them, then handed to one writer
// goroutine that writes every line as soon as it arrives (lines that
// arrive together go out in one write): no line waits in a user-space
// buffer for more, and workers never queue on a lock around a system
// call. A crash leaves every line written so far. A nil *Journal discards
// everything.
type Journal struct {
	w       io.Writer
	closer  io.Closer
	path    string
	runID   string
	now     func() time.Time
	secrets []string

	lines   chan line
	pending sync.WaitGroup // lines handed over but not yet written
	done    chan struct{}
	closed  atomic.Bool

	mu  sync.Mutex
	err error
}

// NewJournal returns a journal writing to w. secrets are values that must
// never appear in it (resolved credentials): any occurrence in an error
// text is replaced by "***" where it stands as a whole token
// (drivers.RedactSecrets).
func NewJournal(w io.Writer, runID string, now func() time.Time, secrets []string) *Journal {
	if now == nil {
		now = time.Now
	}
	j := &Journal{w: w, runID: runID, now: now, lines: make(chan line, 4096), done: make(chan struct{})}
	for _, s := range secrets {
		if s != "" {
			j.secrets = append(j.secrets, s)
		}
	}
	// Longest first: a secret that contains another is masked whole.
	sort.Slice(j.secrets, func(a, b int) bool { return len(j.secrets[a]) > len(j.secrets[b]) })
	go j.writer()
	return j
}

// line is one encoded entry; ack, when set, is closed once the line was
// written (or failed to be).
type line struct {
	b   []byte
	ack chan struct{}
}

// writer writes lines as they come, batching those already queued.
func (j *Journal) writer() {
	defer close(j.done)
	var buf []byte
	var acks []chan struct{}
	for l := range j.lines {
		buf = append(buf[:0], l.b...)
		acks = append(acks[:0], l.ack)
		n := 1
	drain:
		for len(buf) < 256<<10 {
			select {
			case more, ok := <-j.lines:
				if !ok {
					break drain
				}
				buf = append(buf, more.b...)
				acks = append(acks, more.ack)
				n++
			default:
				break drain
			}
		}
		if j.Err() == nil {
			if _, err := j.w.Write(buf); err != nil {
				j.mu.Lock()
				j.err = fmt.Errorf("write journal: %w", err)
				j.mu.Unlock()
			}
		}
		for _, a := range acks {
			if a != nil {
				close(a)
			}
		}
		j.pending.Add(-n)
	}
}

// JournalPath is the default journal file of a run:
// <state>/journal/<fabric>-<runid>.jsonl.
func JournalPath(stateDir, fabric, runID string) string {
	return filepath.Join(stateDir, "journal", SafeName(fabric)+"-"+runID+".jsonl")
}

// CreateJournal creates the journal file at path (mode 0600, parent
// directories 0700) and returns a journal writing to it.
func CreateJournal(path, runID string, now func() time.Time, secrets []string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create journal directory: %w", err)
	}
	// A regular file only, never through a link (safefile): a FIFO or
	// device planted at the path is refused instead of blocking the run
	// or swallowing its record.
	f, err := safefile.OpenAppend(path, 0o600, safefile.Journal)
	if err != nil {
		return nil, fmt.Errorf("create journal: %w", err)
	}
	j := NewJournal(f, runID, now, secrets)
	j.closer = f
	j.path = path
	return j, nil
}

// Path is the journal file, or "" when it writes to a stream.
func (j *Journal) Path() string {
	if j == nil {
		return ""
	}
	return j.path
}

// RunID is the run the journal records.
func (j *Journal) RunID() string {
	if j == nil {
		return ""
	}
	return j.runID
}

// Redact masks secrets in s.
func (j *Journal) Redact(s string) string {
	if j == nil || len(j.secrets) == 0 {
		return s
	}
	return drivers.RedactSecrets(s, j.secrets, "***")
}

// Write appends one entry, filling in time and run id. The first write
// error is kept (Err) and later entries are dropped: the run goes on, and
// the CLI reports the journal as incomplete.
func (j *Journal) Write(e Entry) {
	if j == nil || j.closed.Load() {
		return
	}
	j.send(e, nil)
}

func (j *Journal) send(e Entry, ack chan struct{}) {
	e.RunID = j.runID
	e.Time = j.now().UTC()
	e.Error = j.Redact(e.Error)
	e.Reason = j.Redact(e.Reason)
	e.Token = j.Redact(e.Token)
	b := append(e.appendJSON(make([]byte, 0, 256)), '\n')
	j.pending.Add(1)
	j.lines <- line{b: b, ack: ack}
}

// WriteSync appends one entry as Write does and waits until it has been
// written; the error is the journal's first write error. The engine
// writes device_start this way: a device is touched only once the
// journal holds its start. Safe for concurrent use.
func (j *Journal) WriteSync(e Entry) error {
	if j == nil {
		return nil
	}
	if j.closed.Load() {
		return errors.New("journal closed")
	}
	ack := make(chan struct{})
	j.send(e, ack)
	<-ack
	return j.Err()
}

// Flush waits until every entry written so far has reached the writer.
func (j *Journal) Flush() error {
	if j == nil {
		return nil
	}
	j.pending.Wait()
	return j.Err()
}

// Sync writes what is pending and, for a journal file, syncs it to disk:
// the check that the journal can be written at all (a full disk, or
// /dev/full, accepts the open and fails the write or the sync).
func (j *Journal) Sync() error {
	if err := j.Flush(); err != nil || j == nil {
		return err
	}
	if f, ok := j.closer.(*os.File); ok {
		if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
			j.mu.Lock()
			if j.err == nil {
				j.err = fmt.Errorf("sync journal: %w", err)
			}
			j.mu.Unlock()
			return j.Err()
		}
	}
	return nil
}

// Err is the first write error, if any.
func (j *Journal) Err() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Close writes what is pending, stops the writer, and syncs and closes a
// journal file. The journal must not be written after Close.
func (j *Journal) Close() error {
	if j == nil || !j.closed.CompareAndSwap(false, true) {
		return j.Err()
	}
	close(j.lines)
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closer != nil {
		if f, ok := j.closer.(*os.File); ok {
			if err := f.Sync(); err != nil && j.err == nil {
				j.err = err
			}
		}
		if err := j.closer.Close(); err != nil && j.err == nil {
			j.err = err
		}
		j.closer = nil
	}
	return j.err
}

// appendJSON encodes e exactly as encoding/json does (same fields, order
// and omitempty rules; TestEntryEncoding checks it), without reflection:
// every device writes several entries, and a 10,000-device run should
// not spend its time in the encoder.
func (e *Entry) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","run_id":`...)
	b = appendString(b, e.RunID)
	b = append(b, `,"event":`...)
	b = appendString(b, e.Event)
	str := func(key, v string) {
		if v != "" {
			b = append(b, ',', '"')
			b = append(b, key...)
			b = append(b, '"', ':')
			b = appendString(b, v)
		}
	}
	num := func(key string, v int64) {
		if v != 0 {
			b = append(b, ',', '"')
			b = append(b, key...)
			b = append(b, '"', ':')
			b = strconv.AppendInt(b, v, 10)
		}
	}
	flag := func(key string, v bool) {
		if v {
			b = append(b, ',', '"')
			b = append(b, key...)
			b = append(b, `":true`...)
		}
	}
	raw := func(key string, v any) {
		enc, err := json.Marshal(v)
		if err != nil {
			enc = []byte("null")
		}
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b = append(b, enc...)
	}
	str("format_version", e.FormatVersion)
	str("fabric", e.Fabric)
	str("fabctl_version", e.FabctlVersion)
	str("spec_hash", e.SpecHash)
	str("plan_hash", e.PlanHash)
	str("plan_file", e.PlanFile)
	num("parallelism", int64(e.Parallelism))
	str("on_failure", e.OnFailure)
	str("order", e.Order)
	str("order_reason", e.OrderReason)
	str("confirm_timeout", e.ConfirmTime)
	num("devices", int64(e.Devices))
	str("engine", e.Engine)
	str("max_unavailable", e.MaxUnavailable)
	num("canary", int64(e.Canary))
	str("device", e.Device)
	num("wave", int64(e.Wave))
	num("changes", int64(e.Changes))
	str("token", e.Token)
	flag("pending", e.Pending)
	flag("confirmed", e.Confirmed)
	flag("saved", e.Saved)
	str("error", e.Error)
	if e.Restored != nil {
		b = append(b, `,"restored":`...)
		b = strconv.AppendBool(b, *e.Restored)
	}
	flag("partial", e.Partial)
	flag("not_saved", e.NotSaved)
	if len(e.Remaining) > 0 {
		raw("remaining", e.Remaining)
	}
	str("fingerprint", e.Fingerprint)
	str("reason", e.Reason)
	if e.DurationMS != nil {
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, *e.DurationMS, 10)
	}
	str("revision", e.Revision)
	str("previous_revision", e.PreviousRevision)
	num("generation", e.Generation)
	num("observed_generation", e.ObservedGeneration)
	num("batch", int64(e.Batch))
	str("status", e.Status)
	if e.Counts != nil {
		raw("counts", e.Counts)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
	simple := utf8.ValidString(s)
	for i := 0; simple && i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			simple = false
		}
	}
	if simple {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	enc, _ := json.Marshal(s)
	return append(b, enc...)
}

// ParseJournal reads a journal (JSON lines, one Entry each), for tools
// and tests that inspect a run; a line that is not an Entry is an error
// naming its number.
func ParseJournal(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("journal line %d: %w", n, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
