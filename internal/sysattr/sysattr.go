// Package sysattr reads small sysfs attributes (one value per file), the
// way the host driver and the verbs engine both need them.
package sysattr

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Read returns a sysfs attribute's content, trimmed. It opens, reads and
// closes the file with plain system calls rather than os.ReadFile: sysfs
// files are pollable, so os.ReadFile also registers each one with the
// runtime's poller (fcntl, epoll_ctl add and delete, fstat), about twice
// the system calls. A GID table scan reads one file per slot, 1024 on
// rxe, and under emulation the difference was about a second per test.
// Errors are *os.PathError, so errors.Is(err, os.ErrNotExist) works.
func Read(p string) (string, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var buf [4096]byte // a sysfs attribute is at most a page
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", &os.PathError{Op: "read", Path: p, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	return strings.TrimSpace(string(buf[:n])), nil
}
