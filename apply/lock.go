package apply

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fabctl/fabctl/internal/safefile"
)

// LockInfo is what a lock file holds: who took the lock, for what and
// when. ID is a random nonce: `fabctl force-unlock ID` removes the lock
// only when it names this ID, so a user can never remove a lock they have
// not seen (as Terraform's force-unlock).
type LockInfo struct {
	ID        string    `json:"id"`
	Operation string    `json:"operation"` // "apply"
	Who       string    `json:"who"`       // user@host
	PID       int       `json:"pid"`
	Version   string    `json:"version"` // fabctl version
	Created   time.Time `json:"created"`
	// Path is the lock file (not stored in it).
	Path string `json:"-"`
}

func (i LockInfo) String() string {
	return fmt.Sprintf("ID %s, held by %s (pid %d) for %s since %s", i.ID, i.Who, i.PID, i.Operation, i.Created.UTC().Format(time.RFC3339))
}

// LockedError says the lock is held by someone else. The CLI maps it to
// exit code 4 and prints the holder.
type LockedError struct {
	Path string
	Info LockInfo
	// Unreadable is set when the lock file exists but could not be read
	// (the holder may be writing it right now, or the file is damaged).
	Unreadable error
}

func (e *LockedError) Error() string {
	if e.Unreadable != nil {
		return fmt.Sprintf("the fabric is locked: %s exists but cannot be read (%v); if no fabctl run is active, remove the file by hand", e.Path, e.Unreadable)
	}
	msg := fmt.Sprintf("the fabric is locked by another fabctl run: %s (lock file %s)", e.Info, e.Path)
	if host, err := os.Hostname(); err == nil && strings.HasSuffix(e.Info.Who, "@"+host) && !HolderAlive(e.Info) {
		msg += fmt.Sprintf("; pid %d is no longer running on this machine: that run ended without releasing the lock (a crash or a second Ctrl-C). Check the devices its journal lists as started but not finished, then run fabctl force-unlock %s", e.Info.PID, e.Info.ID)
	}
	return msg
}

// ErrNoLock is returned by ForceUnlock when no lock is held.
var ErrNoLock = errors.New("no lock is held")

// LockPath is where a fabric's lock lives: <state>/<fabric>.lock.
func LockPath(stateDir, fabric string) string {
	return filepath.Join(stateDir, SafeName(fabric)+".lock")
}

// SafeName turns a fabric name into a file-name component.
func SafeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 || strings.Trim(b.String(), ".") == "" {
		return "fabric"
	}
	return b.String()
}

// Lock is a held lock. Release it when the operation ends.
type Lock struct {
	Info LockInfo
}

// LockOptions tune Acquire.
type LockOptions struct {
	Operation string
	Version   string
	// Timeout > 0 waits for a held lock up to this long, polling.
	Timeout time.Duration
	// Poll is the polling interval while waiting (default 250 ms).
	Poll time.Duration
	Now  func() time.Time
}

// NewID returns a random identifier (32 hex digits in UUID layout).
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Holder returns "user@host" for this process.
func Holder() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return name + "@" + host
}

// Acquire takes the fabric lock: it creates <state>/<fabric>.lock with
// O_EXCL and writes the LockInfo into it. A held lock gives *LockedError
// (after waiting up to opts.Timeout). Stale locks are never broken
// automatically: only `fabctl force-unlock ID` removes someone else's lock.
func Acquire(ctx context.Context, stateDir, fabric string, opts LockOptions) (*Lock, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	path := LockPath(stateDir, fabric)
	info := LockInfo{ID: NewID(), Operation: opts.Operation, Who: Holder(), PID: os.Getpid(),
		Version: opts.Version, Created: opts.Now().UTC(), Path: path}
	deadline := time.Now().Add(opts.Timeout)
	// Every pass of the loop checks the context and the deadline and,
	// unless the lock was just released, waits a poll interval: no input
	// (a dangling link, a file that keeps vanishing) makes it spin or
	// outlive --lock-timeout and Ctrl-C.
	for vanished := 0; ; {
		err := create(path, info)
		if err == nil {
			return &Lock{Info: info}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create lock file: %w", err)
		}
		held, rerr := readLock(path)
		if errors.Is(rerr, fs.ErrNotExist) && vanished < 3 {
			vanished++
			continue // released between our create and read: try again at once, a few times
		}
		vanished = 0
		if time.Now().After(deadline) {
			return nil, &LockedError{Path: path, Info: held, Unreadable: rerr}
		}
		t := time.NewTimer(min(opts.Poll, time.Until(deadline)+time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &LockedError{Path: path, Info: held, Unreadable: rerr}
		case <-t.C:
		}
	}
}

// create makes the lock file with O_CREAT|O_EXCL (safefile: a link
// already at the path, even a dangling one, counts as a held lock and is
// never followed) and writes the holder into it.
func create(path string, info LockInfo) error {
	f, err := safefile.CreateExclusive(path, 0o600, safefile.Lock)
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(info, "", " ")
	_, werr := f.Write(append(b, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// readLock reads a lock file: a regular file, not a link (a planted
// link, FIFO or device is reported as unreadable, never followed or
// waited on), of at most 64 KiB. A holder creates the file and then
// writes it, so an empty or partial file is read again a few times
// before it is reported as unreadable.
func readLock(path string) (LockInfo, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 10 * time.Millisecond)
		}
		b, err := safefile.ReadFile(path, safefile.Lock)
		if err != nil {
			return LockInfo{Path: path}, err
		}
		var info LockInfo
		if err := json.Unmarshal(b, &info); err != nil {
			lastErr = fmt.Errorf("not a fabctl lock file: %v", err)
			continue
		}
		info.Path = path
		return info, nil
	}
	return LockInfo{Path: path}, lastErr
}

// ReadLock returns the lock currently held on a fabric, or ErrNoLock.
func ReadLock(stateDir, fabric string) (LockInfo, error) {
	info, err := readLock(LockPath(stateDir, fabric))
	if errors.Is(err, fs.ErrNotExist) {
		return info, ErrNoLock
	}
	return info, err
}

// Release removes the lock if it is still ours. A lock removed by
// force-unlock (and perhaps taken by another run since) is left alone.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	cur, err := readLock(l.Info.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lock %s was removed while this run held it (force-unlock?)", l.Info.ID)
	}
	if err != nil {
		return err
	}
	if cur.ID != l.Info.ID {
		return fmt.Errorf("lock %s was replaced while this run held it (now %s); left it in place", l.Info.ID, cur)
	}
	return os.Remove(l.Info.Path)
}

// MismatchError is returned by ForceUnlock when the ID given is not the
// held lock's.
type MismatchError struct {
	Given string
	Held  LockInfo
}

// Error never repeats the held lock's ID: force-unlock removes only a lock
// whose ID the user has seen (in a locked run's message), so a wrong
// guess must not hand them the right one.
func (e *MismatchError) Error() string {
	h := e.Held
	return fmt.Sprintf("lock ID %q does not match the held lock (held by %s, pid %d, for %s since %s); nothing removed: use the ID a locked run printed",
		e.Given, h.Who, h.PID, h.Operation, h.Created.UTC().Format(time.RFC3339))
}

// LiveHolderError refuses to remove the lock of a run that is still
// running on this machine.
type LiveHolderError struct{ Held LockInfo }

func (e *LiveHolderError) Error() string {
	return fmt.Sprintf("the run holding this lock (pid %d, %s, for %s) is still running on this machine: stop it (Ctrl-C) and let it release the lock; to remove the lock of a live run all the same, add --force",
		e.Held.PID, e.Held.Who, e.Held.Operation)
}

// HolderAlive reports whether the lock's holder is a process running on
// this machine (same host in Who, and its pid exists).
func HolderAlive(info LockInfo) bool {
	host, err := os.Hostname()
	if err != nil || info.PID <= 0 {
		return false
	}
	if _, h, ok := strings.Cut(info.Who, "@"); !ok || h != host {
		return false
	}
	err = syscall.Kill(info.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ForceUnlock removes the lock on a fabric when its ID is id, and returns
// what it removed. Use it only when the run that held the lock is gone.
func ForceUnlock(stateDir, fabric, id string) (LockInfo, error) {
	path := LockPath(stateDir, fabric)
	info, err := readLock(path)
	if errors.Is(err, fs.ErrNotExist) {
		return info, fmt.Errorf("%w on fabric %q (no %s)", ErrNoLock, fabric, path)
	}
	if err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	if strings.TrimSpace(id) != info.ID {
		return info, &MismatchError{Given: id, Held: info}
	}
	if err := os.Remove(path); err != nil {
		return info, err
	}
	return info, nil
}

// Locks lists the locks held in a state directory (one per fabric).
func Locks(stateDir string) ([]LockInfo, error) {
	paths, err := filepath.Glob(filepath.Join(stateDir, "*.lock"))
	if err != nil {
		return nil, err
	}
	var out []LockInfo
	for _, p := range paths {
		info, err := readLock(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, info)
	}
	return out, nil
}

// ForceUnlockID removes the lock with this ID from a state directory,
// whichever fabric holds it: force-unlock must work without loading the
// spec (it may be the spec that is broken). The lock of a run still
// alive on this machine is removed only with evenIfRunning
// (*LiveHolderError).
func ForceUnlockID(stateDir, id string, evenIfRunning bool) (LockInfo, error) {
	id = strings.TrimSpace(id)
	locks, err := Locks(stateDir)
	for _, l := range locks {
		if l.ID == id {
			if !evenIfRunning && HolderAlive(l) {
				return l, &LiveHolderError{Held: l}
			}
			if err := os.Remove(l.Path); err != nil {
				return l, err
			}
			return l, nil
		}
	}
	if err != nil {
		return LockInfo{}, err
	}
	switch len(locks) {
	case 0:
		return LockInfo{}, fmt.Errorf("%w in %s", ErrNoLock, stateDir)
	case 1:
		return LockInfo{}, &MismatchError{Given: id, Held: locks[0]}
	default:
		return LockInfo{}, fmt.Errorf("lock ID %q does not match any of the %d locks held in %s; nothing removed: use the ID a locked run printed", id, len(locks), stateDir)
	}
}
