// Package safefile is how fabctl reads and writes every file a user, a
// spec, a saved plan or a shared state directory names. Those paths may be
// planted: a FIFO blocks a reader for ever, /dev/zero never ends, a
// symbolic link redirects a write, a predictable "X.tmp" lets another user
// choose what a rename overwrites. The rules, one place for all of them:
//
//   - only regular files are read or written: a FIFO, socket, device or
//     directory is refused before it is opened (and again after, on the
//     descriptor, so a swap in between is caught), and every open uses
//     O_NONBLOCK so even a race cannot block on a FIFO;
//   - each kind of file has a size limit (Kind.Max), checked on the
//     descriptor and while reading;
//   - a Kind with NoFollow refuses a symbolic link as the file itself
//     (O_NOFOLLOW): the files fabctl keeps in a state directory. Paths a
//     user or a spec names follow links (Kubernetes mounts secrets as
//     links);
//   - WriteFile replaces a file atomically through a temporary file with
//     an unpredictable name created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW)
//     beside it, then renamed over the target: nothing planted at a
//     temporary name is ever followed, and a link at the target is
//     replaced, never written through.
//
// The standard library has the pieces (os.OpenFile flags, os.CreateTemp);
// no well-kept module combines them with per-kind limits and the errors
// fabctl wants, so this package is written here.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Kind is what a file is for: its name in errors, the most a read
// accepts and whether a symbolic link may stand for it.
type Kind struct {
	// Name says what the file is ("known_hosts file", "lock file").
	Name string
	// Max is the largest size, in bytes, a read accepts (0: reads are
	// refused; a kind that is only written needs none).
	Max int64
	// NoFollow refuses a symbolic link as the file itself: files fabctl
	// keeps in a state directory, where anyone who can write the
	// directory could plant one.
	NoFollow bool
}

// The kinds of files fabctl reads and writes.
var (
	Spec       = Kind{Name: "spec file", Max: 64 << 20}
	VarFile    = Kind{Name: "variables file", Max: 16 << 20}
	Plan       = Kind{Name: "plan file", Max: 512 << 20}
	Record     = Kind{Name: "applied record", Max: 512 << 20, NoFollow: true}
	Lock       = Kind{Name: "lock file", Max: 64 << 10, NoFollow: true}
	Journal    = Kind{Name: "journal", Max: 1 << 30, NoFollow: true}
	Secret     = Kind{Name: "secret file", Max: 64 << 10}
	KnownHosts = Kind{Name: "known_hosts file", Max: 16 << 20}
	TLS        = Kind{Name: "TLS file", Max: 4 << 20}
	PlanKey    = Kind{Name: "plan key file", Max: 64 << 10}
	DebugLog   = Kind{Name: "debug file"}
	Report     = Kind{Name: "report file", Max: 64 << 20}
	Output     = Kind{Name: "output file", Max: 64 << 20}
	// Testbed is a file of the local testbed's state directory.
	Testbed = Kind{Name: "testbed file", Max: 16 << 20, NoFollow: true}
	// YANG is a YANG module read at run time.
	YANG = Kind{Name: "YANG module", Max: 16 << 20}
	// Agent is the host agent's saved desired state (root's state
	// directory on a host).
	Agent = Kind{Name: "agent state file", Max: 64 << 20, NoFollow: true}
	// Host is a configuration file the host driver owns on a host (the
	// NCCL environment file), written by the agent as root.
	Host = Kind{Name: "host file", Max: 1 << 20, NoFollow: true}
)

// Error is a refused path: what it is, which kind of file was expected
// and why it was refused. It never holds the file's content.
type Error struct {
	Path    string
	Kind    string
	Problem string
	Err     error // the system error, when there is one
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s %s", e.Kind, e.Path, e.Problem)
}

// Unwrap returns the system error (fs.ErrNotExist and the like).
func (e *Error) Unwrap() error { return e.Err }

func refuse(path string, k Kind, problem string, err error) *Error {
	name := k.Name
	if name == "" {
		name = "file"
	}
	return &Error{Path: path, Kind: name, Problem: problem, Err: err}
}

// describe says what a non-regular file is.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file (mode " + m.String() + ")"
}

func notRegular(path string, k Kind, m fs.FileMode) *Error {
	what := describe(m)
	if m&fs.ModeSymlink != 0 {
		return refuse(path, k, "is a symbolic link, and fabctl never follows one there: remove it", nil)
	}
	return refuse(path, k, "is "+what+", not a regular file", nil)
}

// openErr turns an open error into an *Error with a useful problem.
func openErr(path string, k Kind, op string, err error) error {
	var pe *fs.PathError
	errno := err
	if errors.As(err, &pe) {
		errno = pe.Err
	}
	switch {
	case errors.Is(errno, syscall.ELOOP) && k.NoFollow:
		return refuse(path, k, "is a symbolic link, and fabctl never follows one there: remove it", err)
	case errors.Is(errno, syscall.ENXIO):
		// O_WRONLY|O_NONBLOCK on a FIFO without a reader.
		return refuse(path, k, "is a FIFO (named pipe), not a regular file", err)
	case errors.Is(err, fs.ErrNotExist):
		return refuse(path, k, "does not exist", err)
	case errors.Is(err, fs.ErrPermission):
		return refuse(path, k, "cannot be "+op+": permission denied", err)
	}
	return refuse(path, k, "cannot be "+op+": "+errnoText(errno), err)
}

func errnoText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

func followFlag(k Kind) int {
	if k.NoFollow {
		return syscall.O_NOFOLLOW
	}
	return 0
}

// precheck refuses a path that exists and is not a regular file without
// opening it (opening some devices has side effects). A missing path is
// not an error here.
func precheck(path string, k Kind) error {
	stat := os.Stat
	if k.NoFollow {
		stat = os.Lstat
	}
	st, err := stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if k.NoFollow {
				return nil
			}
			// A dangling link: say so rather than "does not exist".
			if lst, lerr := os.Lstat(path); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
				return refuse(path, k, "is a symbolic link to a file that does not exist", err)
			}
			return nil
		}
		return nil // the open reports it
	}
	if !st.Mode().IsRegular() {
		return notRegular(path, k, st.Mode())
	}
	return nil
}

// Open opens a regular file for reading: a path that is not one is
// refused (*Error), and so is a file larger than k.Max. The caller reads
// at most k.Max bytes from it (ReadAll).
func Open(path string, k Kind) (*os.File, error) {
	if err := precheck(path, k); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|followFlag(k), 0)
	if err != nil {
		return nil, openErr(path, k, "read", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, refuse(path, k, "cannot be read: "+err.Error(), err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, k, st.Mode())
	}
	if st.Size() > k.Max {
		f.Close()
		return nil, tooLarge(path, k)
	}
	return f, nil
}

func tooLarge(path string, k Kind) *Error {
	return refuse(path, k, fmt.Sprintf("is larger than %s, the limit for a %s", Size(k.Max), k.Name), nil)
}

// ReadAll reads an opened file to its end, at most k.Max bytes (a file
// that grew past the limit since Open is refused).
func ReadAll(f *os.File, k Kind) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, k.Max+1))
	if err != nil {
		return nil, refuse(f.Name(), k, "cannot be read: "+err.Error(), err)
	}
	if int64(len(b)) > k.Max {
		return nil, tooLarge(f.Name(), k)
	}
	return b, nil
}

// ReadFile reads a regular file of kind k (Open, ReadAll, Close).
func ReadFile(path string, k Kind) ([]byte, error) {
	f, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, k)
}

// WriteFile replaces path with data atomically: the data goes to a new
// file with an unpredictable name created exclusively in the same
// directory, is synced, and is renamed over path. A path that exists and
// is neither a regular file nor a symbolic link (a FIFO, a device, a
// directory) is refused; a symbolic link at path is replaced by the
// file, never written through.
func WriteFile(path string, data []byte, perm fs.FileMode, k Kind) error {
	if st, err := os.Lstat(path); err == nil {
		if m := st.Mode(); !m.IsRegular() && m&fs.ModeSymlink == 0 {
			return notRegular(path, k, m)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return refuse(path, k, "cannot be written: "+err.Error(), err)
	}
	f, tmp, err := createTemp(path, perm, k)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return refuse(path, k, "cannot be written: "+werr.Error(), werr)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// createTemp creates ".<base>.<random>.tmp" beside path with
// O_CREAT|O_EXCL|O_NOFOLLOW: a name nobody can predict, and nothing
// already there (a planted link) is ever opened.
func createTemp(path string, perm fs.FileMode, k Kind) (*os.File, string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var lastErr error
	for range 8 {
		var r [12]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, "", refuse(path, k, "cannot be written: "+err.Error(), err)
		}
		tmp := filepath.Join(dir, "."+base+"."+hex.EncodeToString(r[:])+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
		if err == nil {
			return f, tmp, nil
		}
		lastErr = err
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return nil, "", openErr(path, k, "written", lastErr)
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // durability of the rename; best effort
		d.Close()
	}
}

// OpenAppend opens path for appending, creating it (with perm) when it
// does not exist: the file must be a regular file (a FIFO is refused
// without blocking, O_NONBLOCK), and with k.NoFollow not a symbolic link.
func OpenAppend(path string, perm fs.FileMode, k Kind) (*os.File, error) {
	return openWrite(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, perm, k)
}

// Create opens path for writing from its start (O_TRUNC), creating it
// with perm when it does not exist, under the same rules as OpenAppend.
func Create(path string, perm fs.FileMode, k Kind) (*os.File, error) {
	return openWrite(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm, k)
}

// CreateExclusive creates path, which must not exist (O_CREAT|O_EXCL: a
// link already there, even a dangling one, counts as existing and is
// never followed). The error wraps fs.ErrExist when it exists.
func CreateExclusive(path string, perm fs.FileMode, k Kind) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, refuse(path, k, "exists", err)
		}
		return nil, openErr(path, k, "created", err)
	}
	return f, nil
}

func openWrite(path string, flag int, perm fs.FileMode, k Kind) (*os.File, error) {
	if err := precheck(path, k); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_CLOEXEC|followFlag(k), perm)
	if err != nil {
		return nil, openErr(path, k, "written", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, refuse(path, k, "cannot be written: "+err.Error(), err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, k, st.Mode())
	}
	return f, nil
}

// Size renders a byte count as the limits are written (64 KiB, 16 MiB).
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
